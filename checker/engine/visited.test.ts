import { describe, expect, it } from 'vitest';
import { VisitedSet } from './visited.ts';

describe('VisitedSet', () => {
  it('grows by rehashing and keeps every fingerprint', () => {
    const set = new VisitedSet(16);
    const startBytes = set.bytes;
    const n = 100_000;
    let added = 0;
    for (let i = 0; i < n; i++) if (set.add(Math.imul(i, 0x9e3779b1) >>> 0, i)) added++;
    expect(added).toBe(n);
    expect(set.size).toBe(n);
    expect(set.bytes).toBeGreaterThan(startBytes);
    expect(set.bytes / set.size).toBeLessThanOrEqual(16);
    let addedAgain = 0;
    for (let i = 0; i < n; i++) if (set.add(Math.imul(i, 0x9e3779b1) >>> 0, i)) addedAgain++;
    expect(addedAgain).toBe(0);
    expect(set.size).toBe(n);
    expect(set.has(1, n + 1)).toBe(false);
  });

  it('stores the all-zero fingerprint, which marks empty slots', () => {
    const set = new VisitedSet();
    expect(set.has(0, 0)).toBe(false);
    expect(set.add(0, 0)).toBe(true);
    expect(set.has(0, 0)).toBe(true);
    expect(set.add(0, 0)).toBe(false);
  });
});
