// The state profile: distinct values and multipliers per component, on states whose answer is
// worked out by hand, and on a search's reachable states.
import { describe, expect, it } from 'vitest';
import type { Model } from './model.ts';
import { fieldComponents, profileModel, profileStates, splitFields } from './profile.ts';

describe('profileStates', () => {
  it('a free component multiplies by its values, a derived one by 1', () => {
    // x in 0..2 and y in 0..1 vary freely; z = 2x is fixed by x, so forgetting it merges nothing.
    const states = [0, 1, 2].flatMap((x) => [0, 1].map((y) => ({ x, y, z: 2 * x })));
    const p = profileStates(states);
    expect(p.states).toBe(6);
    expect(p.components).toEqual([
      { name: 'y', values: 2, multiplier: 2 },
      // Forgetting x merges nothing: z still tells the states apart. Ties go by name.
      { name: 'x', values: 3, multiplier: 1 },
      { name: 'z', values: 3, multiplier: 1 },
    ]);
  });

  it('a list field is split into its items, and an item some states lack counts absent as a value', () => {
    const states = [{ q: [] }, { q: [1] }, { q: [2] }, { q: [1, 1] }];
    expect(fieldComponents(states[3])).toEqual({ 'q[0]': 1, 'q[1]': 1 });
    const p = profileStates(states);
    expect(p.states).toBe(4);
    expect(p.components).toEqual([
      // Forgetting q[0] leaves absent, absent, absent, 1: two classes of four states.
      { name: 'q[0]', values: 3, multiplier: 2 },
      // Forgetting q[1] leaves absent, 1, 2, 1: three classes.
      { name: 'q[1]', values: 2, multiplier: 4 / 3 },
    ]);
  });

  it('names components as the model asks', () => {
    const p = profileStates([{ a: 1 }, { a: 2 }], (s) => ({ parity: s.a % 2, a: s.a }));
    expect(p.components.map((c) => c.name)).toEqual(['a', 'parity']);
  });

  it('splits an actor into its fields, so the field that tells states apart shows', () => {
    // The actor's clock is free beside its status; the status follows from `done`.
    const states = [0, 1, 2].flatMap((clock) =>
      [false, true].map((done) => ({ actor: { clock, status: done ? 'end' : 'run' }, done })),
    );
    const whole = profileStates(states);
    expect(whole.components.map((c) => c.name)).toEqual(['actor', 'done']);
    const split = profileStates(states, splitFields(fieldComponents));
    expect(split.components).toEqual([
      { name: 'actor.clock', values: 3, multiplier: 3 },
      { name: 'actor.status', values: 2, multiplier: 1 },
      { name: 'done', values: 2, multiplier: 1 },
    ]);
  });
});

describe('profileModel', () => {
  // Two counters: x counts to 3, y toggles; every pair is reachable.
  const counters: Model<{ x: number; y: number }, string> = {
    init: () => [{ x: 0, y: 0 }],
    actions: (s) => [...(s.x < 3 ? ['inc'] : []), 'flip'],
    next: (s, a) => (a === 'inc' ? { ...s, x: s.x + 1 } : { ...s, y: 1 - s.y }),
    label: (a) => a,
    kind: (a) => a,
    actionKinds: ['inc', 'flip'],
    invariants: [],
  };

  it('profiles each reachable state once', () => {
    const p = profileModel(counters, { deadlockAllowed: true });
    expect(p.status).toBe('ok');
    expect(p.states).toBe(8);
    expect(p.components).toEqual([
      { name: 'x', values: 4, multiplier: 4 },
      { name: 'y', values: 2, multiplier: 2 },
    ]);
  });

  it('profiles what a bound lets it reach', () => {
    expect(profileModel(counters, { deadlockAllowed: true, maxDepth: 1 }).states).toBe(3);
  });
});
