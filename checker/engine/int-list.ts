// A growable list of 32-bit integers in a typed array.

export class IntList {
  private items: Int32Array;
  length = 0;

  /** `most`: the room it grows to at most by doubling (past it, only as far as one push needs). */
  constructor(
    capacity = 1024,
    private readonly most = Infinity,
  ) {
    this.items = new Int32Array(Math.min(capacity, most));
  }

  push(x: number): void {
    if (this.length === this.items.length) this.grow(this.length + 1);
    this.items[this.length++] = x;
  }

  /** Appends the first `n` items of `from`. */
  pushAll(from: Int32Array, n: number): void {
    if (this.length + n > this.items.length) this.grow(this.length + n);
    // A loop, not set(subarray): a packed state is a few dozen words, and a view per state is garbage.
    const items = this.items;
    const at = this.length;
    for (let k = 0; k < n; k++) items[at + k] = from[k]!;
    this.length = at + n;
  }

  /** Appends a packed state as its length, then its first `n` words (read back by eachPacked). */
  pushPacked(words: Int32Array, n: number): void {
    this.push(n);
    this.pushAll(words, n);
  }

  private grow(atLeast: number): void {
    const bigger = new Int32Array(Math.max(atLeast, this.nextCapacity));
    bigger.set(this.items);
    this.items = bigger;
  }

  private get nextCapacity(): number {
    return Math.min(this.items.length * 2, Math.max(this.most, this.items.length));
  }

  /** Bytes the next growth would allocate (0 at its most): the old items stay until it has copied them. */
  get growthBytes(): number {
    const next = this.nextCapacity;
    return next > this.items.length ? next * 4 : 0;
  }

  /** Items `from` to `to` (exclusive), as a view that a later push may leave behind. */
  subarray(from: number, to: number): Int32Array {
    return this.items.subarray(from, to);
  }

  /** Bytes the list holds, its spare room included. */
  get bytes(): number {
    return this.items.byteLength;
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

/** Calls `visit` with the words of each state of a list of packed states (IntList.pushPacked). */
export function eachPacked(list: Int32Array, visit: (words: Int32Array) => void): void {
  for (let at = 0; at < list.length; at += 1 + list[at]!) visit(list.subarray(at + 1, at + 1 + list[at]!));
}
