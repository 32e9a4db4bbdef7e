import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Model } from './model.ts';
import { DEADLOCK } from './search.ts';
import { execute, shrink, violates } from './shrink.ts';

/** Three counters; the property fails once c reaches 2 while b is at least 1. */
type S = { readonly a: number; readonly b: number; readonly c: number };
const labels = ['incA', 'incB', 'decA', 'moveAtoC', 'resetB'] as const;
const toy: Model<S, string> = {
  init: () => [{ a: 0, b: 0, c: 0 }],
  actions: (s) =>
    labels.filter((l) =>
      l === 'incA' ? s.a < 3 : l === 'decA' || l === 'moveAtoC' ? s.a > 0 : l === 'incB' ? s.b < 3 : s.b > 0,
    ),
  next: (s, l) =>
    l === 'incA'
      ? { ...s, a: s.a + 1 }
      : l === 'incB'
        ? { ...s, b: s.b + 1 }
        : l === 'decA'
          ? { ...s, a: s.a - 1 }
          : l === 'moveAtoC'
            ? { ...s, a: s.a - 1, c: s.c + 1 }
            : { ...s, b: 0 },
  label: (l) => l,
  kind: (l) => l,
  actionKinds: labels,
  invariants: [{ name: 'CBelowTwo', description: 'c stays below 2', holds: (s) => s.c < 2 }],
};
const violated = (s: S) => s.c >= 2 && s.b >= 1;
const init = toy.init()[0]!;

/** `noise` with the disabled steps left out, then the steps that make the property fail. */
function violatingRun(noise: readonly string[]): string[] {
  const run: string[] = [];
  let s = init;
  const take = (l: string) => {
    run.push(l);
    s = toy.next(s, l);
  };
  for (const l of noise) if (toy.actions(s).includes(l)) take(l);
  while (!violated(s)) take(s.b === 0 ? 'incB' : s.a === 0 ? 'incA' : 'moveAtoC');
  return run;
}

describe('shrink', () => {
  it('finds the shortest violating run of a padded one', () => {
    const padded = [
      'incB',
      'incA',
      'decA',
      'incA',
      'incA',
      'resetB',
      'incB',
      'moveAtoC',
      'incA',
      'decA',
      'moveAtoC',
      'incA',
    ];
    const { trace } = shrink(toy, init, padded, violated);
    expect([...trace.actions].sort()).toEqual(['incA', 'incA', 'incB', 'moveAtoC', 'moveAtoC']);
    expect(violated(trace.states[trace.states.length - 1] as S)).toBe(true);
  });

  it('never lengthens, always replays by its labels and still violates (any violating run)', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...labels), { maxLength: 40 }), (noise) => {
        const run = violatingRun(noise);
        const original = execute(toy, init, run, violated);
        const { trace } = shrink(toy, init, run, violated);
        expect(trace.actions.length).toBeLessThanOrEqual(original!.actions.length);
        const again = execute(toy, init, trace.actions, violated)!;
        expect(again.actions).toEqual(trace.actions);
        expect(again.states).toEqual(trace.states);
        expect(violated(trace.states[trace.states.length - 1] as S)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('refuses a run that does not violate the property', () => {
    expect(() => shrink(toy, init, ['incA'], violated)).toThrow(/does not violate/);
  });

  it('gives back a run that is 1-minimal and has no droppable pair, starting at the initial state, after trying each step of it', () => {
    const dropsTo = (run: readonly string[], keep: (k: number) => boolean) =>
      execute(
        toy,
        init,
        run.filter((_, k) => keep(k)),
        violated,
      );
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...labels), { maxLength: 30 }), (noise) => {
        const { trace, tried } = shrink(toy, init, violatingRun(noise), violated);
        const n = trace.actions.length;
        for (let i = 0; i < n; i++) expect(dropsTo(trace.actions, (k) => k !== i)).toBeUndefined();
        for (let i = 0; i < n; i++)
          for (let j = i + 2; j < n; j++)
            expect(dropsTo(trace.actions, (k) => k !== i && k !== j)).toBeUndefined();
        expect(trace.states).toHaveLength(n + 1);
        expect(trace.states[0]).toEqual(init);
        // The run itself, then at least one candidate per step of the result (ddmin at its finest).
        expect(tried).toBeGreaterThanOrEqual(1 + n);
      }),
      { numRuns: 100 },
    );
  });

  it('shrinks a run of two steps where one is enough to one step', () => {
    const oneStep = (s: S) => s.a >= 1;
    expect(shrink(toy, init, ['incB', 'incA'], oneStep).trace.actions).toEqual(['incA']);
  });

  it('cuts a run at its first violating state, the initial one included', () => {
    expect(execute(toy, init, ['incA', 'incB'], () => true)).toEqual({ states: [init], actions: [] });
    expect(execute(toy, init, ['incA', 'incB', 'incA'], (s) => s.b === 1)?.actions).toEqual(['incA', 'incB']);
  });
});

describe('violates', () => {
  it('reads DEADLOCK as a state without actions and an invariant by its name, and refuses an unknown name', () => {
    const stuck: S = { a: 0, b: 0, c: 0 };
    const deadlock = violates(toy, DEADLOCK);
    expect(deadlock(stuck)).toBe(false);
    expect(violates({ ...toy, actions: () => [] }, DEADLOCK)(stuck)).toBe(true);
    const cBelowTwo = violates(toy, 'CBelowTwo');
    expect([cBelowTwo({ a: 0, b: 0, c: 1 }), cBelowTwo({ a: 0, b: 0, c: 2 })]).toEqual([false, true]);
    expect(() => violates(toy, 'NoSuchProperty')).toThrow('shrink: the model has no property NoSuchProperty');
  });
});

// Dropping steps can rename the steps after them (a label that counts retries, say): a label not
// enabled is matched to the enabled action of its kind with the closest label.
describe('matching a label that is no longer enabled', () => {
  type N = { readonly step: number };
  /** Enabled, in this order: a 'noise' action labelled like a send, then 'send' actions. */
  const enabled = ['send@5x', 'send@10', 'send@0', 'send@1'];
  const kindOf = (l: string) => (l.endsWith('x') ? 'noise' : 'send');
  const renamed: Model<N, string> = {
    init: () => [{ step: 0 }],
    actions: (s) => (s.step === 0 ? enabled : []),
    next: (s, l) => ({ step: s.step + 1 + enabled.indexOf(l) * 10 }),
    label: (l) => l,
    kind: kindOf,
    actionKinds: ['noise', 'send'],
    invariants: [],
  };
  const start = renamed.init()[0]!;
  const taken = (label: string, kinds: Map<string, string>) =>
    execute(renamed, start, [label], (s) => s.step > 0, kinds);

  it('takes the exact label when it is enabled', () => {
    expect(taken('send@10', new Map())?.actions).toEqual(['send@10']);
  });

  it('takes the first enabled action of the same kind at the least edit distance, never one of another kind', () => {
    // send@0 and send@1 are one edit from send@5, send@10 two, send@5x one but of another kind;
    // send@10 and send@1 are one edit from send@15.
    expect(taken('send@5', new Map([['send@5', 'send']]))?.actions).toEqual(['send@0']);
    expect(taken('send@15', new Map([['send@15', 'send']]))?.actions).toEqual(['send@10']);
  });

  it('takes nothing for a label whose kind it has not learnt', () => {
    expect(taken('send@5', new Map())).toBeUndefined();
  });
});
