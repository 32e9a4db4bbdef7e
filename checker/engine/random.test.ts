import { describe, expect, it } from 'vitest';
import type { Model, Property } from './model.ts';
import { randomSearch } from './random.ts';
import { DEADLOCK } from './search.ts';

interface Point {
  readonly x: number;
  readonly y: number;
}

/** A walker on a 20x20 grid moving one step in one of four directions; (13, 7) is bad. */
const notBad: Property<Point> = { name: 'NotBad', description: '', holds: (p) => !(p.x === 13 && p.y === 7) };
const moves = [
  [1, 0],
  [-1, 0],
  [0, 1],
  [0, -1],
] as const;
const grid: Model<Point, readonly [number, number]> = {
  init: () => [{ x: 0, y: 0 }],
  actions: (p) =>
    moves.filter(([dx, dy]) => p.x + dx >= 0 && p.x + dx < 20 && p.y + dy >= 0 && p.y + dy < 20),
  next: (p, [dx, dy]) => ({ x: p.x + dx, y: p.y + dy }),
  label: ([dx, dy]) => `move(${dx},${dy})`,
  kind: () => 'move',
  actionKinds: ['move'],
  invariants: [notBad],
};

describe('random walks', () => {
  const options = { deadlockAllowed: false, seed: 3, walks: 2000, maxDepth: 40 };

  it('finds the violation and gives the same result for the same seed', () => {
    const first = randomSearch(grid, options);
    const again = randomSearch(grid, options);
    expect(first.status).toBe('violation');
    expect(first.violation?.property).toBe('NotBad');
    const last = first.violation!.trace.states.at(-1);
    expect(last).toEqual({ x: 13, y: 7 });
    expect({ ...again, seconds: 0 }).toEqual({ ...first, seconds: 0 });
  });

  it('runs every stride-th walk from firstWalk, and stops before the walk stopAt gives', () => {
    const all = randomSearch(grid, options);
    const walk = all.violation!.walk!;
    const evens = randomSearch(grid, {
      ...options,
      firstWalk: walk % 2,
      stride: 2,
      walks: options.walks / 2,
    });
    expect(evens.violation).toEqual(all.violation);
    const before = randomSearch(grid, { ...options, stopAt: () => walk });
    expect(before).toMatchObject({ status: 'incomplete', stoppedBy: 'walks' });
  });

  it('reruns the violating walk alone, with the same trace', () => {
    const first = randomSearch(grid, options);
    const walk = first.violation!.walk!;
    expect(walk).toBeGreaterThan(0);
    const alone = randomSearch(grid, { ...options, firstWalk: walk, walks: 1 });
    expect(alone.violation).toEqual(first.violation);
  });

  it('takes other walks with another seed', () => {
    const a = randomSearch(grid, { ...options, walks: 5 });
    const b = randomSearch(grid, { ...options, walks: 5, seed: 4 });
    expect(a.statesGenerated === b.statesGenerated && a.distinctStates === b.distinctStates).toBe(false);
  });

  it('reports deadlock, and honours the walk length, maxStates and maxSeconds', () => {
    const stuck: Model<Point, number> = {
      ...grid,
      independence: undefined,
      actions: (p) => (p.x < 3 ? [1] : []),
      next: (p) => ({ ...p, x: p.x + 1 }),
      label: () => 'right',
      kind: () => 'move',
    };
    const deadlock = randomSearch(stuck, { ...options, walks: 1 });
    expect(deadlock.violation?.property).toBe(DEADLOCK);
    expect(deadlock.violation?.trace.actions).toEqual(['right', 'right', 'right']);
    expect(randomSearch(stuck, { ...options, deadlockAllowed: true, walks: 1 })).toMatchObject({
      status: 'incomplete',
      stoppedBy: 'walks',
    });

    const short = randomSearch({ ...grid, invariants: [] }, { ...options, walks: 10, maxDepth: 5 });
    expect(short).toMatchObject({ status: 'incomplete', stoppedBy: 'walks', depth: 5, statesGenerated: 60 });

    const capped = randomSearch({ ...grid, invariants: [] }, { ...options, maxStates: 30 });
    expect(capped).toMatchObject({ status: 'incomplete', stoppedBy: 'maxStates', distinctStates: 30 });

    const timed = randomSearch({ ...grid, invariants: [] }, { ...options, walks: 1e9, maxSeconds: 0.1 });
    expect(timed).toMatchObject({ status: 'incomplete', stoppedBy: 'maxSeconds' });
  });
});
