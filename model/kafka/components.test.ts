// The named parts of a Kafka state: together they determine the state, so the profile reads
// every part of it, and the profile counts exactly the reviewed states.
import { describe, expect, it } from 'vitest';
import { bfs } from '../../checker/engine/bfs.ts';
import { profileModel } from '../../checker/engine/profile.ts';
import { modelOf } from '../../specs/build.ts';
import { loadSpecFile } from '../../specs/load.ts';
import { readCounts } from '../../checker/counts.ts';
import type { State } from './state.ts';

const file = 'specs/kafka/transform-crash.json';

describe('stateComponents', () => {
  it('tells apart every two reachable states', () => {
    const spec = loadSpecFile(file);
    const model = modelOf(spec);
    const seen: unknown[] = [];
    bfs(
      { ...model, invariants: [{ name: 'All', description: '', holds: (s) => seen.push(s) > 0 }] },
      {
        deadlockAllowed: true,
        maxStates: 3000,
      },
    );
    const states = new Set(seen.map((s) => JSON.stringify(s)));
    const parts = new Set(seen.map((s) => JSON.stringify(model.components!(s as State))));
    expect(states.size).toBe(seen.length);
    expect(parts.size).toBe(states.size);
  });

  it('names the actors of the state', () => {
    const model = modelOf(loadSpecFile(file));
    const names = Object.keys(model.components!(model.init()[0] as State));
    expect(names).toEqual(
      expect.arrayContaining(['coordinator', 'group', 'leader L0', 'leader GC', 'history', 'faults']),
    );
    expect(names.some((n) => n.startsWith('producer P0.'))).toBe(true);
  });

  it('profiles the reviewed number of states', () => {
    const spec = loadSpecFile('specs/kafka/commit-abort.json');
    const variant = (spec.raw as { variant: string }).variant;
    const profile = profileModel(modelOf(spec), { deadlockAllowed: spec.deadlockAllowed });
    expect(profile.states).toBe(readCounts()['specs/kafka/commit-abort.json']![variant]!.distinctStates);
    // The read_committed consumer's position multiplies the states most.
    expect(profile.components[0]!.name).toBe('consumer C0');
  });
});
