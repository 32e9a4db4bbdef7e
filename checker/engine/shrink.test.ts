import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Model } from './model.ts';
import { execute, shrink } from './shrink.ts';

/** Three counters; the property fails once c reaches 2 while b is at least 1. */
type S = { readonly a: number; readonly b: number; readonly c: number };
const labels = ['incA', 'incB', 'decA', 'moveAtoC', 'resetB'] as const;
const toy: Model<S, string> = {
  init: () => [{ a: 0, b: 0, c: 0 }],
  actions: (s) =>
    labels.filter((l) => (l === 'incA' ? s.a < 3 : l === 'decA' || l === 'moveAtoC' ? s.a > 0 : l === 'incB' ? s.b < 3 : s.b > 0)),
  next: (s, l) =>
    l === 'incA' ? { ...s, a: s.a + 1 } : l === 'incB' ? { ...s, b: s.b + 1 } : l === 'decA' ? { ...s, a: s.a - 1 } : l === 'moveAtoC' ? { ...s, a: s.a - 1, c: s.c + 1 } : { ...s, b: 0 },
  label: (l) => l,
  kind: (l) => l,
  actionKinds: labels,
  invariants: [],
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
    const padded = ['incB', 'incA', 'decA', 'incA', 'incA', 'resetB', 'incB', 'moveAtoC', 'incA', 'decA', 'moveAtoC', 'incA'];
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
});
