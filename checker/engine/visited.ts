// The set of states seen so far, as 64-bit fingerprints only: memory per state stays at a
// few bytes whatever the size of the states. Open addressing with linear probing over
// interleaved (high, low) words; (0, 0) marks an empty slot. The capacity need not be a power
// of two, so the table can grow by half and stay between 10 and 15 bytes per fingerprint.

const MAX_LOAD = 0.8;
const GROWTH = 1.5;

export class VisitedSet {
  private table: Int32Array;
  private capacity: number;
  private limit: number;
  private count = 0;

  constructor(initialCapacity = 1 << 16) {
    this.capacity = Math.max(16, Math.ceil(initialCapacity));
    this.table = new Int32Array(this.capacity * 2);
    this.limit = Math.floor(this.capacity * MAX_LOAD);
  }

  /** The set rebuilt from the table and count `snapshot` gave. */
  static restore(table: Int32Array, count: number): VisitedSet {
    const set = new VisitedSet(table.length / 2);
    set.table = table.slice();
    set.count = count;
    return set;
  }

  /** The table itself (slots in place) and the count, for a checkpoint. */
  snapshot(): { table: Int32Array; count: number } {
    return { table: this.table, count: this.count };
  }

  get size(): number {
    return this.count;
  }

  get bytes(): number {
    return this.table.byteLength;
  }

  /** Bytes its next growth allocates, while the old table is still held. */
  get growthBytes(): number {
    return Math.ceil(this.capacity * GROWTH) * 2 * 4;
  }

  /** Adds the fingerprint (high, low); true when it was not there before. */
  add(high: number, low: number): boolean {
    if (this.count >= this.limit) this.grow();
    high |= 0;
    low |= 0;
    // The one fingerprint that looks like an empty slot is folded onto a neighbour.
    if (high === 0 && low === 0) low = 1;
    const at = this.probe(high, low);
    const table = this.table;
    if (table[at] !== 0 || table[at + 1] !== 0) return false;
    table[at] = high;
    table[at + 1] = low;
    this.count++;
    return true;
  }

  /**
   * Adds (high, low) pairs, as `fingerprints()` gives them; returns how many were new. They come
   * in slot order, and added in that order to a smaller table they all map onto one narrow run of
   * it, where each probes past all the others: so they are added in a coprime stride through them.
   */
  addAll(pairs: Int32Array): number {
    const n = pairs.length / 2;
    let stride = Math.max(1, Math.floor(n * 0.618));
    while (gcd(stride, n) !== 1) stride++;
    let added = 0;
    for (let i = 0, at = 0; i < n; i++, at = (at + stride) % n)
      if (this.add(pairs[2 * at]!, pairs[2 * at + 1]!)) added++;
    return added;
  }

  /** Every fingerprint in the set, as (high, low) pairs. */
  fingerprints(): Int32Array {
    const out = new Int32Array(this.count * 2);
    let n = 0;
    for (let at = 0; at < this.table.length; at += 2) {
      if (this.table[at] !== 0 || this.table[at + 1] !== 0) {
        out[n++] = this.table[at]!;
        out[n++] = this.table[at + 1]!;
      }
    }
    return out;
  }

  has(high: number, low: number): boolean {
    high |= 0;
    low |= 0;
    if (high === 0 && low === 0) low = 1;
    const at = this.probe(high, low);
    return this.table[at] !== 0 || this.table[at + 1] !== 0;
  }

  /** The table index of (high, low), or of the empty slot where it belongs. */
  private probe(high: number, low: number): number {
    const table = this.table;
    const capacity = this.capacity;
    // Maps the 32 mixed bits onto [0, capacity) by multiplication (exact below 2^53).
    let slot = Math.floor((((low ^ Math.imul(high, 0x9e3779b1)) >>> 0) * capacity) / 4294967296);
    for (;;) {
      const at = slot * 2;
      const h = table[at]!;
      const l = table[at + 1]!;
      if ((h === high && l === low) || (h === 0 && l === 0)) return at;
      if (++slot === capacity) slot = 0;
    }
  }

  private grow(): void {
    const old = this.table;
    this.capacity = Math.ceil(this.capacity * GROWTH);
    this.table = new Int32Array(this.capacity * 2);
    this.limit = Math.floor(this.capacity * MAX_LOAD);
    for (let at = 0; at < old.length; at += 2) {
      const high = old[at]!;
      const low = old[at + 1]!;
      if (high !== 0 || low !== 0) {
        const to = this.probe(high, low);
        this.table[to] = high;
        this.table[to + 1] = low;
      }
    }
  }
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}
