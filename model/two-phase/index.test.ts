import { describe, expect, it } from 'vitest';
import { bfs } from '../../checker/bfs.ts';
import { twoPhaseEntry } from '../../specs/two-phase/entry.ts';

const allProperties = twoPhaseEntry.properties.map((p) => p.name);

describe('two-phase commit', () => {
  it("matches TLC's published counts for 3 resource managers: 288 distinct, 1,146 generated", () => {
    const result = bfs(twoPhaseEntry.build({ resourceManagers: 3 }, allProperties), { deadlockAllowed: false });
    expect(result.status).toBe('ok');
    expect(result.distinctStates).toBe(288);
    expect(result.statesGenerated).toBe(1146);
  });
});
