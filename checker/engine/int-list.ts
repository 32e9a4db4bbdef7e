// A growable list of 32-bit integers in a typed array.

export class IntList {
  private items: Int32Array;
  length = 0;

  constructor(capacity = 1024) {
    this.items = new Int32Array(capacity);
  }

  push(x: number): void {
    if (this.length === this.items.length) {
      const bigger = new Int32Array(this.items.length * 2);
      bigger.set(this.items);
      this.items = bigger;
    }
    this.items[this.length++] = x;
  }

  get(i: number): number {
    return this.items[i]!;
  }

  /** Sets item `i`, or appends when `i` is the length. */
  set(i: number, x: number): void {
    if (i === this.length) this.push(x);
    else this.items[i] = x;
  }

  clear(): void {
    this.length = 0;
  }

  /** The items as an array of their own, trimmed to the length (and free to hand to another thread). */
  take(): Int32Array {
    return this.items.slice(0, this.length);
  }
}
