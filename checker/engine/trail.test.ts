import { describe, expect, it } from 'vitest';
import type { Pieces } from './checkpoint.ts';
import { Trail } from './trail.ts';

/** A checkpoint section written in pieces, as one array. */
function whole(section: Pieces): Int32Array {
  const all = new Int32Array(section.length);
  let at = 0;
  for (const piece of section.pieces()) {
    all.set(piece, at);
    at += piece.length;
  }
  return all;
}

describe('the trail', () => {
  it('keeps parents and actions across its pieces and gives the path back', () => {
    const trail = new Trail();
    const n = (1 << 20) * 2 + 5;
    trail.set(0, -1, 3);
    for (let id = 1; id < n; id++) trail.set(id, id - 1, id % 7);
    expect(trail.bytes).toBe(3 * (1 << 20) * 8);
    const { init, actions } = trail.path(n - 1);
    expect(init).toBe(3);
    expect(actions.length).toBe(n - 1);
    expect(actions.slice(0, 8)).toEqual([1, 2, 3, 4, 5, 6, 0, 1]);
    expect(actions.at(-1)).toBe((n - 1) % 7);
    const savedParents = whole(trail.saved(n).parents);
    const savedActions = whole(trail.saved(n).actions);
    expect([savedParents.length, savedParents[n - 1], savedActions[1 << 20]]).toEqual([
      n,
      n - 2,
      (1 << 20) % 7,
    ]);
    const again = Trail.restore(savedParents, savedActions);
    const bytes = (a: Int32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
    expect(bytes(whole(again.saved(n).parents)).equals(bytes(savedParents))).toBe(true);
    expect(bytes(whole(again.saved(5).actions)).equals(bytes(savedActions.subarray(0, 5)))).toBe(true);
  });

  it('grows its first piece by doubling, so a small search takes little', () => {
    const trail = new Trail();
    for (let id = 0; id < 5000; id++) trail.set(id, id - 1, 0);
    expect(trail.bytes).toBe(8192 * 8);
    expect(trail.growthBytes).toBe(16384 * 8);
  });
});
