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

  it("merges another set's fingerprints, given in slot order, in any number", () => {
    for (const n of [0, 1, 2, 6, 200_000]) {
      const source = new VisitedSet();
      for (let i = 0; i < n; i++) source.add(Math.imul(i, 0x9e3779b1), i);
      const merged = new VisitedSet();
      merged.add(1, 2);
      expect(merged.addAll(source.fingerprints())).toBe(n);
      expect(merged.size).toBe(n + 1);
      expect(merged.addAll(source.fingerprints())).toBe(0);
      for (let i = 0; i < n; i++) expect(merged.has(Math.imul(i, 0x9e3779b1), i)).toBe(true);
    }
  });

  it('stores the all-zero fingerprint, which marks empty slots', () => {
    const set = new VisitedSet();
    expect(set.has(0, 0)).toBe(false);
    expect(set.add(0, 0)).toBe(true);
    expect(set.has(0, 0)).toBe(true);
    expect(set.add(0, 0)).toBe(false);
  });

  it('folds only the all-zero fingerprint onto its neighbour (0, 1), not every fingerprint with a zero word', () => {
    const set = new VisitedSet();
    set.add(0, 0);
    expect(set.has(0, 1)).toBe(true);
    const other = new VisitedSet();
    other.add(0, 5);
    other.add(7, 0);
    expect([other.has(0, 1), other.has(0, 5), other.has(7, 0), other.has(7, 1)]).toEqual([
      false,
      true,
      true,
      false,
    ]);
  });

  it('says what its next growth allocates, and lists every fingerprint it holds', () => {
    const set = new VisitedSet(16);
    const growth = set.growthBytes;
    const pairs: number[] = [];
    for (let i = 1; set.bytes === 16 * 8; i++) {
      set.add(i, -i);
      pairs.push(i, -i);
    }
    expect(set.bytes).toBe(growth);
    const listed = [...set.fingerprints()];
    const asKeys = (words: number[]) =>
      Array.from({ length: words.length / 2 }, (_, k) => `${words[2 * k]},${words[2 * k + 1]}`).sort();
    expect(asKeys(listed)).toEqual(asKeys(pairs));
  });

  it('is rebuilt from a snapshot with every fingerprint, apart from the set it came from', () => {
    const set = new VisitedSet(16);
    for (let i = 1; i <= 10; i++) set.add(i, i);
    const { table, count } = set.snapshot();
    const again = VisitedSet.restore(table, count);
    set.add(99, 99);
    expect(again.size).toBe(10);
    expect([again.has(5, 5), again.has(99, 99)]).toEqual([true, false]);
  });
});
