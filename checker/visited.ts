// The set of states seen so far, as 64-bit fingerprints only: memory per state stays at a
// few bytes whatever the size of the states. Open addressing with linear probing over
// interleaved (high, low) words; (0, 0) marks an empty slot.

const MAX_LOAD = 0.5;

export class VisitedSet {
  private table: Uint32Array;
  private mask: number;
  private count = 0;

  constructor(initialCapacity = 1 << 16) {
    let capacity = 16;
    while (capacity < initialCapacity) capacity *= 2;
    this.table = new Uint32Array(capacity * 2);
    this.mask = capacity - 1;
  }

  get size(): number {
    return this.count;
  }

  get bytes(): number {
    return this.table.byteLength;
  }

  /** Adds the fingerprint (high, low); true when it was not there before. */
  add(high: number, low: number): boolean {
    if (this.count + 1 > (this.mask + 1) * MAX_LOAD) this.grow();
    // The one fingerprint that looks like an empty slot is folded onto a neighbour.
    if (high === 0 && low === 0) low = 1;
    const at = this.probe(high, low);
    if (this.table[at] !== 0 || this.table[at + 1] !== 0) return false;
    this.table[at] = high;
    this.table[at + 1] = low;
    this.count++;
    return true;
  }

  has(high: number, low: number): boolean {
    if (high === 0 && low === 0) low = 1;
    const at = this.probe(high, low);
    return this.table[at] !== 0 || this.table[at + 1] !== 0;
  }

  /** The table index of (high, low), or of the empty slot where it belongs. */
  private probe(high: number, low: number): number {
    const table = this.table;
    const mask = this.mask;
    let slot = (low ^ Math.imul(high, 0x9e3779b1)) & mask;
    for (;;) {
      const at = slot * 2;
      const h = table[at]!;
      const l = table[at + 1]!;
      if ((h === high && l === low) || (h === 0 && l === 0)) return at;
      slot = (slot + 1) & mask;
    }
  }

  private grow(): void {
    const old = this.table;
    this.table = new Uint32Array(old.length * 2);
    this.mask = old.length - 1;
    this.count = 0;
    for (let at = 0; at < old.length; at += 2) {
      if (old[at] !== 0 || old[at + 1] !== 0) this.add(old[at]!, old[at + 1]!);
    }
  }
}
