// A map from 64-bit fingerprints to non-negative integers (state ids, list indices): open
// addressing over (high, low, value + 1) triples, at most half full; 0 marks a free slot.

export class FingerprintMap {
  private table = new Int32Array(3 << 10);
  private mask = (1 << 10) - 1;
  size = 0;

  get bytes(): number {
    return this.table.byteLength;
  }

  /** The value stored for (high, low), or -1. */
  get(high: number, low: number): number {
    return this.table[this.probe(high, low) + 2]! - 1;
  }

  /** Stores `value` for (high, low), which must not be in the map yet. */
  set(high: number, low: number, value: number): void {
    if (++this.size * 2 > this.mask) this.grow();
    const at = this.probe(high, low);
    this.table[at] = high;
    this.table[at + 1] = low;
    this.table[at + 2] = value + 1;
  }

  /** The value of (high, low); when absent, stores and returns the next id (the size before). */
  idOf(high: number, low: number): number {
    const id = this.get(high, low);
    if (id !== -1) return id;
    this.set(high, low, this.size);
    return this.size - 1;
  }

  clear(): void {
    if (this.size > 0) this.table.fill(0);
    this.size = 0;
  }

  private probe(high: number, low: number): number {
    const table = this.table;
    let slot = (low ^ Math.imul(high, 0x9e3779b1)) & this.mask;
    for (;;) {
      const at = slot * 3;
      if (table[at + 2] === 0 || (table[at] === high && table[at + 1] === low)) return at;
      slot = (slot + 1) & this.mask;
    }
  }

  private grow(): void {
    const old = this.table;
    this.mask = this.mask * 2 + 1;
    this.table = new Int32Array(3 * (this.mask + 1));
    for (let at = 0; at < old.length; at += 3) {
      if (old[at + 2] !== 0) this.table.set(old.subarray(at, at + 3), this.probe(old[at]!, old[at + 1]!));
    }
  }
}
