// Sleep sets keep every state: on random models of shared variables, whose independence is true
// by construction (two actions commute when neither writes what the other reads or writes), the
// search with sleep sets meets the same distinct states at the same depth as the full search,
// gives the same verdict, and its counterexample is as short and ends where the full search's
// does. Where every step is independent it reaches each state once. The lists that hold the sets
// grow and cross threads whole.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bfs } from './bfs.ts';
import type { Independence, Model } from './model.ts';
import { SetList } from './sleep.ts';

interface Step {
  /** The variable that must hold `guardValue` for the step to be enabled (-1: always enabled). */
  readonly guard: number;
  readonly guardValue: number;
  readonly reads: number;
  readonly writes: number;
}

interface Shape {
  readonly variables: number;
  readonly domain: number;
  readonly steps: readonly Step[];
  /** Steps of one class share it: class = step index modulo `classes`. */
  readonly classes: number;
  /** The state the invariant forbids, if any. */
  readonly bad: readonly number[] | null;
}

function variablesModel(shape: Shape): Model<readonly number[], number> {
  const { variables, domain, steps, classes } = shape;
  const touches = (s: Step): number[] => [s.reads, s.writes, ...(s.guard >= 0 ? [s.guard] : [])];
  const stepsDependent = (a: Step, b: Step): boolean =>
    touches(b).includes(a.writes) || touches(a).includes(b.writes);
  const dependent = Array.from({ length: classes }, (_, c) =>
    Array.from({ length: classes }, (_, d) => d).filter(
      (d) =>
        d !== c &&
        steps.some(
          (a, i) => i % classes === c && steps.some((b, j) => j % classes === d && stepsDependent(a, b)),
        ),
    ),
  );
  const independence: Independence<number> = {
    classes,
    classOf: (i) => i % classes,
    key: (i) => i,
    dependent,
    enablers: Array.from({ length: classes }, (_, c) =>
      Array.from({ length: classes }, (_, d) => d).filter((d) => d !== c),
    ),
    visible: Array.from({ length: classes }, () => true),
  };
  return {
    init: () => [Array.from({ length: variables }, () => 0)],
    actions: (s) =>
      steps.flatMap((step, i) => (step.guard < 0 || s[step.guard] === step.guardValue ? [i] : [])),
    next: (s, i) => {
      const step = steps[i]!;
      const t = [...s];
      t[step.writes] = (s[step.writes]! + s[step.reads]! + 1) % domain;
      return t;
    },
    label: (i) => `step${i}`,
    kind: () => 'step',
    actionKinds: ['step'],
    invariants:
      shape.bad === null
        ? []
        : [
            {
              name: 'NotBad',
              description: 'the forbidden state is never reached',
              holds: (s) => s.some((v, i) => v !== shape.bad![i]),
            },
          ],
    independence,
  };
}

const shapes = fc
  .record({ variables: fc.integer({ min: 2, max: 4 }), domain: fc.integer({ min: 2, max: 3 }) })
  .chain(({ variables, domain }) =>
    fc.record({
      variables: fc.constant(variables),
      domain: fc.constant(domain),
      steps: fc.array(
        fc.record({
          guard: fc.integer({ min: -1, max: variables - 1 }),
          guardValue: fc.integer({ min: 0, max: domain - 1 }),
          reads: fc.integer({ min: 0, max: variables - 1 }),
          writes: fc.integer({ min: 0, max: variables - 1 }),
        }),
        { minLength: 2, maxLength: 8 },
      ),
      classes: fc.integer({ min: 1, max: 8 }),
      bad: fc.option(
        fc.array(fc.integer({ min: 0, max: domain - 1 }), { minLength: variables, maxLength: variables }),
      ),
    }),
  )
  .map((s) => ({ ...s, classes: Math.min(s.classes, s.steps.length) }));

describe('sleep sets', () => {
  it('meet every state at its depth, with the full search verdict, in fewer transitions', () => {
    let saved = 0;
    fc.assert(
      fc.property(shapes, (shape) => {
        const model = variablesModel(shape);
        const full = bfs(model, { deadlockAllowed: false });
        const sleep = bfs(model, { deadlockAllowed: false, sleep: true });
        expect(sleep.distinctStates).toBe(full.distinctStates);
        expect(sleep.depth).toBe(full.depth);
        expect(sleep.status).toBe(full.status);
        expect(sleep.violation?.property).toBe(full.violation?.property);
        expect(sleep.statesGenerated).toBeLessThanOrEqual(full.statesGenerated);
        saved += full.statesGenerated - sleep.statesGenerated;
        if (sleep.violation !== undefined) {
          const { states, actions } = sleep.violation.trace;
          expect(actions.length).toBe(full.violation!.trace.actions.length);
          // The trace ends where the full search's does: in the forbidden state, or a deadlock.
          const last = states.at(-1) as readonly number[];
          if (sleep.violation.property === 'Deadlock') expect(model.actions(last)).toEqual([]);
          else expect(model.invariants[0]!.holds(last)).toBe(false);
        }
      }),
      { numRuns: 300, seed: 20261204 },
    );
    // Independent steps are common in these models: the sets must leave some transitions out.
    expect(saved).toBeGreaterThan(0);
  });

  it('reach each state once when every step is independent of every other', () => {
    // n steps that each fire once and touch a variable of their own: 2^n states, each reached
    // from every state with one step fewer by the full search (n * 2^(n - 1) transitions), and
    // exactly once with sleep sets (2^n - 1); both counts add the initial state.
    for (const n of [3, 5]) {
      const model = variablesModel({
        variables: n,
        domain: 2,
        steps: Array.from({ length: n }, (_, i) => ({ guard: i, guardValue: 0, reads: i, writes: i })),
        classes: n,
        bad: null,
      });
      const full = bfs(model, { deadlockAllowed: true });
      const sleep = bfs(model, { deadlockAllowed: true, sleep: true });
      expect(full.distinctStates).toBe(2 ** n);
      expect(full.statesGenerated).toBe(n * 2 ** (n - 1) + 1);
      expect(sleep.distinctStates).toBe(2 ** n);
      expect(sleep.statesGenerated).toBe(2 ** n);
    }
  });

  it('take a state with more enabled actions than their first room', () => {
    // Seventy steps, all enabled at first and all writing one variable, so all dependent.
    const model = variablesModel({
      variables: 4,
      domain: 3,
      steps: Array.from({ length: 70 }, (_, i) => ({ guard: 0, guardValue: 0, reads: i % 4, writes: i % 2 })),
      classes: 70,
      bad: null,
    });
    const full = bfs(model, { deadlockAllowed: true });
    const sleep = bfs(model, { deadlockAllowed: true, sleep: true });
    expect(sleep.distinctStates).toBe(full.distinctStates);
    expect(sleep.depth).toBe(full.depth);
    expect(sleep.statesGenerated).toBeLessThanOrEqual(full.statesGenerated);
  });

  it('count a state whose every action sleeps as no deadlock', () => {
    // Two independent steps, each enabled once: the state after both has none enabled (a
    // deadlock the full search reports), while the states after one have their other step asleep
    // on one path only.
    const model = variablesModel({
      variables: 2,
      domain: 2,
      steps: [
        { guard: 0, guardValue: 0, reads: 0, writes: 0 },
        { guard: 1, guardValue: 0, reads: 1, writes: 1 },
      ],
      classes: 2,
      bad: null,
    });
    const full = bfs(model, { deadlockAllowed: false });
    const sleep = bfs(model, { deadlockAllowed: false, sleep: true });
    expect(full.violation?.property).toBe('Deadlock');
    expect(sleep.violation?.property).toBe('Deadlock');
    expect(sleep.violation!.trace.actions).toHaveLength(2);
    expect(sleep.statesGenerated).toBe(full.statesGenerated - 1);
  });
});

describe('sleep set lists', () => {
  const contents = (list: SetList, i: number): number[] =>
    Array.from({ length: list.sizeOf(i) }, (_, k) => list.keyOf(i, k));

  it('grow past their first room', () => {
    const list = new SetList();
    for (let i = 0; i < 5000; i++) list.push(Float64Array.of(i, i + 1, i + 2), 3);
    expect(list.length).toBe(5000);
    expect([0, 1023, 1024, 4999].map((i) => [list.keyOf(i, 0), list.keyOf(i, 2)])).toEqual([
      [0, 2],
      [1023, 1025],
      [1024, 1026],
      [4999, 5001],
    ]);
  });

  it('keep sets past their first room, cross threads flat, copy and intersect', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.integer({ min: 0, max: 2 ** 40 }), { maxLength: 9 }), {
          minLength: 1,
          maxLength: 3000,
        }),
        (sets) => {
          const list = new SetList();
          for (const set of sets) list.push(Float64Array.from(set), set.length);
          expect(list.length).toBe(sets.length);
          sets.forEach((set, i) => expect(contents(list, i)).toEqual(set));
          const back = SetList.unflatten(list.flatten());
          sets.forEach((set, i) => expect(contents(back, i)).toEqual(set));
          const last = sets.length - 1;
          const some = SetList.unflatten(list.flatten([last, 0]));
          expect(contents(some, 0)).toEqual(sets[last]);
          expect(contents(some, 1)).toEqual(sets[0]);
          const copy = new SetList();
          copy.pushSet(list, last);
          copy.intersectSet(0, list, 0);
          expect(contents(copy, 0)).toEqual(sets[last]!.filter((k) => sets[0]!.includes(k)));
        },
      ),
      { numRuns: 30, seed: 20261204 },
    );
  });
});
