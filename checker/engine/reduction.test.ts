import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bfs } from './bfs.ts';
import type { Independence, Model, Property } from './model.ts';
import { StubbornSets } from './reduction.ts';
import { rebuildTrace } from './search.ts';

/**
 * Processes that each count up to their own limit (steps of process p are class p), plus, when
 * `looping` is set, a toggle that flips a bit forever (the last class). Process p's steps read
 * process `reads[p]`'s counter when it is given (so the two are dependent).
 */
interface Counters {
  readonly counts: readonly number[];
  readonly bit: number;
}

function countersModel(
  limits: readonly number[],
  options: {
    looping?: boolean;
    reads?: readonly (number | undefined)[];
    invariants?: Property<Counters>[];
    visible?: readonly boolean[];
  } = {},
): Model<Counters, number> {
  const n = limits.length;
  const classes = n + (options.looping ? 1 : 0);
  const reads = options.reads ?? [];
  const dependent = Array.from({ length: classes }, (_, c) =>
    Array.from({ length: classes }, (_, d) => d).filter((d) => d !== c && (reads[c] === d || reads[d] === c)),
  );
  const independence: Independence<number> = {
    classes,
    classOf: (p) => p,
    dependent,
    enablers: Array.from({ length: classes }, () => []),
    visible: options.visible ?? Array.from({ length: classes }, (_, c) => c < n),
  };
  function enabled(s: Counters): number[] {
    const out: number[] = [];
    for (let p = 0; p < n; p++) if (s.counts[p]! < limits[p]!) out.push(p);
    if (options.looping) out.push(n);
    return out;
  }
  return {
    init: () => [{ counts: limits.map(() => 0), bit: 0 }],
    actions: enabled,
    next: (s, p) => {
      if (p === n) return { ...s, bit: 1 - s.bit };
      const r = reads[p];
      // A dependent step copies the other counter's parity into its own steps.
      const by = r === undefined ? 1 : 1 + (s.counts[r]! % 2);
      return { ...s, counts: s.counts.map((c, q) => (q === p ? Math.min(limits[p]!, c + by) : c)) };
    },
    label: (p) => (p === n ? 'toggle' : `count${p}`),
    kind: (p) => (p === n ? 'toggle' : 'count'),
    actionKinds: ['count', 'toggle'],
    invariants: options.invariants ?? [],
    independence,
  };
}

const options = { deadlockAllowed: true };

describe('stubborn sets', () => {
  it('expands one process at a time when the processes are independent and invisible', () => {
    const model = countersModel([2, 2, 2], { visible: [false, false, false] });
    const full = bfs(model, options);
    const reduced = bfs(model, { ...options, reduction: true });
    expect(full.distinctStates).toBe(27);
    // One interleaving: the states along it, 3 * 2 steps after the initial state.
    expect(reduced.distinctStates).toBe(7);
    expect(reduced.status).toBe('ok');
  });

  it('keeps every order of visible steps, so an invariant over them sees every combination', () => {
    const onlyBoth = {
      name: 'NotOneAndTwo',
      description: '',
      holds: (s: Counters) => !(s.counts[0] === 1 && s.counts[1] === 0 && s.counts[2] === 1),
    };
    const model = countersModel([1, 1, 1], { invariants: [onlyBoth] });
    const reduced = bfs(model, { ...options, reduction: true });
    expect(reduced.status).toBe('violation');
    expect(reduced.violation!.property).toBe('NotOneAndTwo');
  });

  it('takes dependent classes along (D1): dependent steps still run in both orders', () => {
    // count0 steps by 1 + (count1 mod 2): the state count0 = 2 needs count1 odd first.
    const twoAfterOne = { name: 'NeverTwo', description: '', holds: (s: Counters) => s.counts[0] !== 2 };
    const model = countersModel([2, 1], {
      reads: [1, undefined],
      visible: [false, false],
      invariants: [twoAfterOne],
    });
    // NeverTwo reads count0, which only class 0 writes: class 0 is the only visible one for it.
    const reduced = bfs(
      { ...model, independence: { ...model.independence!, visible: [true, false] } },
      { ...options, reduction: true },
    );
    expect(bfs(model, options).status).toBe('violation');
    expect(reduced.status).toBe('violation');
  });

  it('fully expands a state whose postponed step would be ignored forever on a cycle (C3)', () => {
    // The toggle loops without end and is independent of everything; expanding only it would
    // never let count0 reach 1. The proviso expands the state that closes the toggle's cycle.
    const notOne = { name: 'NotOne', description: '', holds: (s: Counters) => s.counts[0] !== 1 };
    // count0 and count1 depend on each other, so the toggle alone is the smallest stubborn set.
    const model = countersModel([1, 1], {
      looping: true,
      reads: [1],
      visible: [true, false, false],
      invariants: [notOne],
    });
    const sets = new StubbornSets(model.independence!);
    expect(Array.from(sets.choose([0, 1, 2])!)).toEqual([0, 0, 1]);
    const reduced = bfs(model, { ...options, reduction: true });
    expect(reduced.status).toBe('violation');
    const trace = reduced.violation!.trace;
    expect((trace.states.at(-1) as Counters).counts[0]).toBe(1);
  });

  it('needs no visible step for a stable invariant: a postponed step keeps it broken', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 2, maxLength: 3 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 3 }),
        (limits, looping, x, y) => {
          // Counters only grow, so once both are reached they stay reached.
          const reached = {
            name: 'NotBothReached',
            description: '',
            stable: true,
            holds: (s: Counters) => !(s.counts[0]! >= x && s.counts[1]! >= y),
          };
          const model = countersModel(limits, {
            looping,
            invariants: [reached],
            visible: Array.from({ length: limits.length + (looping ? 1 : 0) }, () => false),
          });
          const full = bfs(model, options);
          const reduced = bfs(model, { ...options, reduction: true });
          expect(reduced.status).toBe(full.status);
          if (reduced.violation !== undefined)
            expect(reached.holds(reduced.violation.trace.states.at(-1) as Counters)).toBe(false);
        },
      ),
      { seed: 7, numRuns: 200 },
    );
  });

  it('takes a narrowed enabling set where the model names one for the state', () => {
    // Class 2 is disabled and dependent on class 0; it could be enabled by class 1 in general,
    // and by nothing in states whose key is 'never'.
    const sets = new StubbornSets({
      classes: 3,
      classOf: () => 0,
      dependent: [[2], [], [0]],
      enablers: [[], [], [1]],
      visible: [false, false, false],
      narrowed: { key: () => '', enablers: (key) => (key === 'never' ? [undefined, undefined, []] : []) },
    });
    expect(Array.from(sets.choose([0, 1], '')!)).toEqual([0, 1, 0]);
    expect(Array.from(sets.choose([0, 1], 'never')!)).toEqual([1, 0, 1]);
  });

  it('finds the same verdict as the full search, and a trace that replays, on random counter systems', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        fc.array(fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }), { maxLength: 3 }),
        fc.integer({ min: 0, max: 3 }),
        (limits, looping, rawReads, badSum) => {
          const reads = rawReads.map((r, p) =>
            r === undefined || r >= limits.length || r === p ? undefined : r,
          );
          const bad = {
            name: 'SumNot',
            description: '',
            holds: (s: Counters) => s.counts.reduce((a, b) => a + b, 0) !== badSum + 2 || s.bit !== 1,
          };
          const visible = [...limits.map(() => true), true];
          const model = countersModel(limits, {
            looping,
            reads,
            invariants: [bad],
            visible: visible.slice(0, limits.length + (looping ? 1 : 0)),
          });
          const full = bfs(model, options);
          const reduced = bfs(model, { ...options, reduction: true });
          expect(reduced.status).toBe(full.status);
          expect(reduced.distinctStates).toBeLessThanOrEqual(full.distinctStates);
          if (reduced.violation !== undefined) {
            const labels = reduced.violation.trace.actions;
            const replayed = rebuildTrace(
              model,
              0,
              labels.map((_, k) =>
                model
                  .actions(reduced.violation!.trace.states[k] as Counters)
                  .map(model.label)
                  .indexOf(labels[k]!),
              ),
            );
            expect(bad.holds(replayed.states.at(-1) as Counters)).toBe(false);
          }
        },
      ),
      { seed: 20261202, numRuns: 200 },
    );
  });

  it('refuses relations that name a class out of range', () => {
    const model = countersModel([1, 1]);
    expect(() => new StubbornSets({ ...model.independence!, dependent: [[5], []] })).toThrow(
      /class 5 out of range/,
    );
    for (const bad of [2, -1, 0.5]) {
      expect(() => new StubbornSets({ ...model.independence!, dependent: [[bad], []] })).toThrow(
        `independence: class ${bad} out of range 0..1`,
      );
      expect(() => new StubbornSets({ ...model.independence!, enablers: [[], [bad]] })).toThrow(
        `independence: class ${bad} out of range 0..1`,
      );
    }
    expect(() => new StubbornSets(model.independence!)).not.toThrow();
  });

  it('refuses relations without one entry per class', () => {
    const model = countersModel([1, 1]);
    const { dependent, enablers, visible } = model.independence!;
    const expected = 'independence: expected 2 entries in dependent, enablers and visible';
    expect(() => new StubbornSets({ ...model.independence!, dependent: [...dependent, []] })).toThrow(
      expected,
    );
    expect(() => new StubbornSets({ ...model.independence!, enablers: enablers.slice(1) })).toThrow(expected);
    expect(() => new StubbornSets({ ...model.independence!, visible: [...visible, false] })).toThrow(
      expected,
    );
  });
});
