// The states of one breadth-first level waiting to be expanded, as packed words in memory or,
// past a size, in a temporary file.
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pieces } from './checkpoint.ts';
import { IntList } from './int-list.ts';
import { PACK_WORDS, type Model } from './model.ts';

interface SpillFile {
  readonly path: string;
  readonly fd: number;
}

export class Spill {
  private folder: string | undefined;
  private files = 0;
  private readonly open = new Set<SpillFile>();

  /** `under`: the folder to make this spill's own in (the system's temporary folder by default). */
  constructor(
    readonly bytes: number,
    private readonly under = tmpdir(),
  ) {}

  newFile(): SpillFile {
    this.folder ??= mkdtempSync(join(this.under, 'txcheck-frontier-'));
    const path = join(this.folder, `level-${this.files++}.bin`);
    const file = { path, fd: openSync(path, 'w+') };
    this.open.add(file);
    return file;
  }

  close(file: SpillFile): void {
    closeSync(file.fd);
    rmSync(file.path, { force: true });
    this.open.delete(file);
  }

  remove(): void {
    for (const file of this.open) closeSync(file.fd);
    this.open.clear();
    if (this.folder !== undefined) rmSync(this.folder, { recursive: true, force: true });
    this.folder = undefined;
  }
}

/**
 * Where each state's words end in its level: a growing list of doubles, as a level on disk can
 * pass 2^31 words (8 GB), which 32-bit ends would wrap.
 */
export class Ends {
  private items = new Float64Array(1 << 10);
  length = 0;

  push(x: number): void {
    if (this.length === this.items.length) {
      const bigger = new Float64Array(this.items.length * 2);
      bigger.set(this.items);
      this.items = bigger;
    }
    this.items[this.length++] = x;
  }

  get(i: number): number {
    return this.items[i]!;
  }

  get bytes(): number {
    return this.items.byteLength;
  }

  /** Bytes the next growth allocates. */
  get growthBytes(): number {
    return this.items.byteLength * 2;
  }

  clear(): void {
    this.length = 0;
  }

  /** The ends as a checkpoint saves them, which holds a level of fewer than 2^31 words. */
  toInt32(): Int32Array {
    const last = this.length === 0 ? 0 : this.items[this.length - 1]!;
    if (last > 0x7fffffff)
      throw new RangeError(`a level of ${last} words is past what a checkpoint holds (2^31 - 1)`);
    return Int32Array.from(this.items.subarray(0, this.length));
  }
}

/** The most a spilled level reads back from its file at a time. */
const READ_BYTES = 16 * 2 ** 20;

/**
 * The states of one level waiting to be expanded. When the model packs and unpacks its states they
 * wait as words in one growing list (a few bytes a field instead of an object each), else as the
 * objects themselves. With a `Spill`, the list never grows past the spill's size: when it is full
 * its words go to the end of a file, which is read back in order a window at a time.
 */
export class Frontier<S> {
  private readonly objects: (S | undefined)[] = [];
  private readonly words: IntList;
  /** Where each packed state's words end, counted from the level's first word (on disk or not). */
  private readonly ends = new Ends();
  private readonly scratch: Int32Array | undefined;
  /** Words written to the file so far; the ones in memory follow them. */
  private flushed = 0;
  private file: SpillFile | undefined;
  /** The words of the file last read back, and where they start. */
  private read: { start: number; words: Int32Array } = { start: 0, words: new Int32Array(0) };

  constructor(
    private readonly model: Model<S, unknown>,
    private readonly spill?: Spill,
  ) {
    this.scratch =
      model.pack !== undefined && model.unpack !== undefined ? new Int32Array(PACK_WORDS) : undefined;
    this.words = new IntList(
      1 << 12,
      spill === undefined ? Infinity : Math.max(1, Math.floor(spill.bytes / 4)),
    );
  }

  get length(): number {
    return this.scratch === undefined ? this.objects.length : this.ends.length;
  }

  /** Bytes the waiting states take in memory (the packed lists; objects are not counted). */
  get bytes(): number {
    return this.scratch === undefined ? 0 : this.words.bytes + this.ends.bytes + this.read.words.byteLength;
  }

  /** The most the lists can take at once on their next growth (the new lists, while the old ones are copied). */
  get growthBytes(): number {
    return this.scratch === undefined
      ? 0
      : this.words.growthBytes + this.ends.growthBytes + (this.flushed > 0 ? this.readWords * 4 : 0);
  }

  /** Bytes the waiting states take on disk. */
  get spilledBytes(): number {
    return this.flushed * 4;
  }

  /** Adds `s`; `packed` holds its first `length` words when the caller has packed it already. */
  push(s: S, packed?: Int32Array, length = 0): void {
    if (this.scratch === undefined) {
      this.objects.push(s);
      return;
    }
    if (packed === undefined || length === 0) {
      packed = this.scratch;
      length = this.model.pack!(s, packed);
    }
    this.pushWords(packed, length);
  }

  /** Whether the states wait as packed words (the model packs and unpacks) rather than as objects. */
  get packs(): boolean {
    return this.scratch !== undefined;
  }

  /** Adds the state whose packed words are the first `length` of `packed`. */
  pushWords(packed: Int32Array, length: number): void {
    if (
      this.spill !== undefined &&
      this.words.length > 0 &&
      (this.words.length + length) * 4 > this.spill.bytes
    )
      this.flush();
    this.words.pushAll(packed, length);
    this.ends.push(this.flushed + this.words.length);
  }

  /** Moves the words in memory to the end of the file; the list keeps its room for the words to come. */
  private flush(): void {
    this.file ??= this.spill!.newFile();
    const words = this.words.subarray(0, this.words.length);
    writeSync(
      this.file.fd,
      new Uint8Array(words.buffer, words.byteOffset, words.byteLength),
      0,
      words.byteLength,
      this.flushed * 4,
    );
    this.flushed += words.length;
    this.words.clear();
  }

  /** Words a spilled level reads back at a time. */
  private get readWords(): number {
    return Math.max(1, Math.floor(Math.min(READ_BYTES, this.spill?.bytes ?? 0) / 4));
  }

  /** Words `from` to `to` of the file. */
  private readFile(from: number, to: number): Int32Array {
    const words = new Int32Array(to - from);
    readSync(this.file!.fd, new Uint8Array(words.buffer), 0, words.byteLength, from * 4);
    return words;
  }

  /** Words `from` to `to` of the level, from memory or from the file. */
  private wordsOf(from: number, to: number): Int32Array {
    if (from >= this.flushed) return this.words.subarray(from - this.flushed, to - this.flushed);
    const r = this.read;
    if (from < r.start || to > r.start + r.words.length) {
      // A window from `from` on: states are taken in order. A fresh array, so views handed out stay whole.
      this.read = {
        start: from,
        words: this.readFile(from, Math.min(this.flushed, from + Math.max(to - from, this.readWords))),
      };
    }
    return this.read.words.subarray(from - this.read.start, to - this.read.start);
  }

  /** The packed words and where each state's end, for a checkpoint (a model that packs only): words on disk are read a window at a time. */
  saved(): { words: Pieces; ends: Int32Array } {
    return {
      words: { length: this.flushed + this.words.length, pieces: () => this.pieces() },
      ends: this.ends.toInt32(),
    };
  }

  private *pieces(): Iterable<Int32Array> {
    const window = this.readWords;
    for (let from = 0; from < this.flushed; from += window)
      yield this.readFile(from, Math.min(this.flushed, from + window));
    yield this.words.subarray(0, this.words.length);
  }

  /** A frontier holding the states a checkpoint saved. */
  static restore<S>(
    model: Model<S, unknown>,
    words: Int32Array,
    ends: Int32Array,
    spill?: Spill,
  ): Frontier<S> {
    const frontier = new Frontier(model, spill);
    let from = 0;
    for (const end of ends) {
      frontier.pushWords(words.subarray(from, end), end - from);
      from = end;
    }
    return frontier;
  }

  /** The i-th state; an object is let go once taken. */
  take(i: number): S {
    if (this.scratch === undefined) {
      const s = this.objects[i]!;
      this.objects[i] = undefined;
      return s;
    }
    return this.model.unpack!(this.wordsAt(i));
  }

  /** The packed words of the i-th state (a frontier that packs). */
  wordsAt(i: number): Int32Array {
    return this.wordsOf(i === 0 ? 0 : this.ends.get(i - 1), this.ends.get(i));
  }

  /** Adds the i-th state of `from`: its words, or the object itself (let go there). */
  pushFrom(from: Frontier<S>, i: number): void {
    if (this.scratch === undefined) this.objects.push(from.take(i));
    else {
      const words = from.wordsAt(i);
      this.pushWords(words, words.length);
    }
  }

  /**
   * Empties the frontier for another level. Its lists keep their room: growing them again each
   * level would cost the page faults of fresh memory.
   */
  clear(): void {
    this.dispose();
    this.objects.length = 0;
    this.words.clear();
    this.ends.clear();
    this.flushed = 0;
    this.read = { start: 0, words: new Int32Array(0) };
  }

  /** Lets the file go. */
  dispose(): void {
    if (this.file === undefined) return;
    this.spill!.close(this.file);
    this.file = undefined;
  }
}
