// The states of one breadth-first level waiting to be expanded, as packed words in memory or,
// past a size, in a temporary file.
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pieces } from './checkpoint.ts';
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

/** Words in a chunk of a frontier: a megabyte, room for thousands of packed states. */
const CHUNK_WORDS = 1 << 18;

/**
 * The chunks that cleared frontiers gave back, for the next levels to fill. A level's words reuse
 * memory already touched instead of growing a list by doubling and copying it: fresh pages cost a
 * fault each, and on some virtual machines that was most of what storing a level cost.
 */
export class ChunkPool {
  private readonly free: Int32Array[] = [];
  /** Words per chunk: at most the spill's size, so a spilling level keeps no more in memory. */
  readonly chunkWords: number;

  constructor(spill?: Spill) {
    this.chunkWords =
      spill === undefined ? CHUNK_WORDS : Math.max(1, Math.min(CHUNK_WORDS, Math.floor(spill.bytes / 4)));
  }

  /** A chunk with room for `words` at least. */
  take(words: number): Int32Array {
    if (words > this.chunkWords) return new Int32Array(words);
    return this.free.pop() ?? new Int32Array(this.chunkWords);
  }

  give(chunk: Int32Array): void {
    if (chunk.length === this.chunkWords) this.free.push(chunk);
  }

  /** The chunks given back and not taken again. */
  get idleChunks(): number {
    return this.free.length;
  }
}

/**
 * The states of one level waiting to be expanded. When the model packs and unpacks its states they
 * wait as words in chunks taken from a pool (a few bytes a field instead of an object each), else
 * as the objects themselves. With a `Spill`, the words in memory never pass the spill's size: when
 * they would, they go to the end of a file, which is read back in order a window at a time.
 */
export class Frontier<S> {
  private readonly objects: (S | undefined)[] = [];
  /** The words in memory: chunk c holds words chunkStarts[c] .. chunkStarts[c + 1] of the level, the last up to `total`. */
  private chunks: Int32Array[] = [];
  private chunkStarts: number[] = [];
  /** The level's words so far, on disk and in memory. */
  private total = 0;
  /** Where each packed state's words end, counted from the level's first word (on disk or not). */
  private readonly ends = new Ends();
  private readonly scratch: Int32Array | undefined;
  /** Words written to the file so far; the ones in memory follow them. */
  private flushed = 0;
  private file: SpillFile | undefined;
  /** The words of the file last read back, and where they start. */
  private read: { start: number; words: Int32Array } = { start: 0, words: new Int32Array(0) };

  /** `pool`: shared by the frontiers of one search, so that a cleared level's chunks hold the next. */
  constructor(
    private readonly model: Model<S, unknown>,
    private readonly spill?: Spill,
    private readonly pool = new ChunkPool(spill),
  ) {
    this.scratch =
      model.pack !== undefined && model.unpack !== undefined ? new Int32Array(PACK_WORDS) : undefined;
  }

  get length(): number {
    return this.scratch === undefined ? this.objects.length : this.ends.length;
  }

  /** Bytes the waiting states take in memory (the packed words' chunks; objects are not counted). */
  get bytes(): number {
    if (this.scratch === undefined) return 0;
    let chunkBytes = 0;
    for (const chunk of this.chunks) chunkBytes += chunk.byteLength;
    return chunkBytes + this.ends.bytes + this.read.words.byteLength;
  }

  /** The most the lists can take at once on their next growth: a chunk, the ends while copied, a read window. */
  get growthBytes(): number {
    return this.scratch === undefined
      ? 0
      : this.pool.chunkWords * 4 + this.ends.growthBytes + (this.flushed > 0 ? this.readWords * 4 : 0);
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
    const inMemory = this.total - this.flushed;
    if (this.spill !== undefined && inMemory > 0 && (inMemory + length) * 4 > this.spill.bytes) this.flush();
    const last = this.chunks.length - 1;
    let chunk = this.chunks[last];
    let at = last < 0 ? 0 : this.total - this.chunkStarts[last]!;
    if (chunk === undefined || at + length > chunk.length) {
      chunk = this.pool.take(length);
      this.chunks.push(chunk);
      this.chunkStarts.push(this.total);
      at = 0;
    }
    // A loop, not set(subarray): a packed state is a few dozen words, and a view per state is garbage.
    for (let k = 0; k < length; k++) chunk[at + k] = packed[k]!;
    this.total += length;
    this.ends.push(this.total);
  }

  /** Moves the words in memory to the end of the file, and their chunks back to the pool. */
  private flush(): void {
    this.file ??= this.spill!.newFile();
    for (let c = 0; c < this.chunks.length; c++) {
      const words = this.usedWords(c);
      writeSync(
        this.file.fd,
        new Uint8Array(words.buffer, words.byteOffset, words.byteLength),
        0,
        words.byteLength,
        this.chunkStarts[c]! * 4,
      );
    }
    this.flushed = this.total;
    this.releaseChunks();
  }

  private releaseChunks(): void {
    for (const chunk of this.chunks) this.pool.give(chunk);
    this.chunks = [];
    this.chunkStarts = [];
  }

  /** The words chunk `c` holds, from its first to the level's word it ends before. */
  private usedWords(c: number): Int32Array {
    const end = c + 1 < this.chunks.length ? this.chunkStarts[c + 1]! : this.total;
    return this.chunks[c]!.subarray(0, end - this.chunkStarts[c]!);
  }

  /** The chunk holding the word `at` of the level (one in memory): the last that starts at or before it. */
  private chunkOf(at: number): number {
    const starts = this.chunkStarts;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= at) lo = mid;
      else hi = mid - 1;
    }
    return lo;
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
    if (from >= this.flushed) {
      const c = this.chunkOf(from);
      const start = this.chunkStarts[c]!;
      return this.chunks[c]!.subarray(from - start, to - start);
    }
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
      words: { length: this.total, pieces: () => this.pieces() },
      ends: this.ends.toInt32(),
    };
  }

  private *pieces(): Iterable<Int32Array> {
    const window = this.readWords;
    for (let from = 0; from < this.flushed; from += window)
      yield this.readFile(from, Math.min(this.flushed, from + window));
    for (let c = 0; c < this.chunks.length; c++) yield this.usedWords(c);
  }

  /** A frontier holding the states a checkpoint saved. */
  static restore<S>(
    model: Model<S, unknown>,
    words: Int32Array,
    ends: Int32Array,
    spill?: Spill,
    pool?: ChunkPool,
  ): Frontier<S> {
    const frontier = new Frontier(model, spill, pool);
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
   * Empties the frontier for another level: its chunks go back to the pool, and its ends list keeps
   * its room, so the next levels fill memory already touched.
   */
  clear(): void {
    this.dispose();
    this.objects.length = 0;
    this.releaseChunks();
    this.ends.clear();
    this.total = 0;
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
