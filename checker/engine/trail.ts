// The trail of a breadth-first search: for each state id, the parent it was first reached from
// and the action that reached it, from which a counterexample is rebuilt.
import type { Pieces } from './checkpoint.ts';

/** Entries of one piece of the trail: 8 MB a piece. */
const TRAIL_CHUNK_BITS = 20;
const TRAIL_CHUNK = 1 << TRAIL_CHUNK_BITS;

/**
 * Per state id: the parent id (-1 for an initial state) and the action index (for an initial
 * state, its index in init()). Kept in pieces of a fixed size, so growing never copies and never
 * holds twice the memory at once.
 */
export class Trail {
  private readonly parents: Int32Array[] = [];
  private readonly actions: Int32Array[] = [];
  /** Entries the first piece holds; the small searches of tests and examples need no 8 MB. */
  private firstChunk = 1 << 12;

  set(id: number, parent: number, action: number): void {
    const chunk = id >>> TRAIL_CHUNK_BITS;
    while (chunk >= this.parents.length) this.addChunk();
    const at = id & (TRAIL_CHUNK - 1);
    if (chunk === 0 && at >= this.firstChunk) this.growFirst(at + 1);
    this.parents[chunk]![at] = parent;
    this.actions[chunk]![at] = action;
  }

  parentOf(id: number): number {
    return this.parents[id >>> TRAIL_CHUNK_BITS]![id & (TRAIL_CHUNK - 1)]!;
  }

  private actionOf(id: number): number {
    return this.actions[id >>> TRAIL_CHUNK_BITS]![id & (TRAIL_CHUNK - 1)]!;
  }

  private addChunk(): void {
    if (this.parents.length === 1) this.growFirst(TRAIL_CHUNK);
    const size = this.parents.length === 0 ? this.firstChunk : TRAIL_CHUNK;
    this.parents.push(new Int32Array(size));
    this.actions.push(new Int32Array(size));
  }

  /** The first piece grows by doubling up to a whole piece. */
  private growFirst(atLeast: number): void {
    if (atLeast <= this.firstChunk) return;
    const size = Math.min(TRAIL_CHUNK, Math.max(atLeast, this.firstChunk * 2));
    for (const list of [this.parents, this.actions]) {
      const bigger = new Int32Array(size);
      bigger.set(list[0]!);
      list[0] = bigger;
    }
    this.firstChunk = size;
  }

  get bytes(): number {
    return this.parents.reduce((sum, p) => sum + p.byteLength * 2, 0);
  }

  /** Bytes its next growth takes: one more piece for each of the two lists (or a bigger first piece). */
  get growthBytes(): number {
    return 2 * 4 * (this.parents.length > 1 ? TRAIL_CHUNK : Math.min(TRAIL_CHUNK, this.firstChunk * 2));
  }

  /** The first `n` entries, for a checkpoint. */
  saved(n: number): { parents: Pieces; actions: Pieces } {
    return { parents: firstOf(this.parents, n), actions: firstOf(this.actions, n) };
  }

  static restore(parents: Int32Array, actions: Int32Array): Trail {
    const trail = new Trail();
    for (let id = 0; id < parents.length; id++) trail.set(id, parents[id]!, actions[id]!);
    return trail;
  }

  /** The initial state index and the action indices that lead to `id`. */
  path(id: number): { init: number; actions: number[] } {
    const actions: number[] = [];
    for (; this.parentOf(id) !== -1; id = this.parentOf(id)) actions.push(this.actionOf(id));
    return { init: this.actionOf(id), actions: actions.reverse() };
  }
}

/** The first `n` entries of a list kept in pieces. */
function firstOf(pieces: readonly Int32Array[], n: number): Pieces {
  return {
    length: n,
    pieces: function* () {
      let at = 0;
      for (const piece of pieces) {
        if (at >= n) return;
        yield piece.subarray(0, Math.min(piece.length, n - at));
        at += piece.length;
      }
    },
  };
}
