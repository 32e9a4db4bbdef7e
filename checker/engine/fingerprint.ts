// 64-bit structural fingerprints of plain data (objects, arrays, numbers, strings, booleans,
// null), computed as two 32-bit lanes so no BigInt or string is built on the hot path.
// Each value starts with a type tag, so [1], {"0": 1}, "1" and 1 all differ; object keys are
// hashed with their names in sorted order, so key order never matters.
import type { FingerprintSummary } from './model.ts';

const enum Tag {
  Null = 1,
  False,
  True,
  Int,
  Float,
  String,
  Array,
  Object,
}

let lane1 = 0;
let lane2 = 0;

const floatView = new Float64Array(1);
const floatWords = new Uint32Array(floatView.buffer);

// Murmur3-style block mixing, with different constants and rotations per lane.
function mixLane1(lane: number, word: number): number {
  let k = Math.imul(word, 0xcc9e2d51);
  k = Math.imul((k << 15) | (k >>> 17), 0x1b873593);
  lane ^= k;
  return (Math.imul((lane << 13) | (lane >>> 19), 5) + 0xe6546b64) | 0;
}

function mixLane2(lane: number, word: number): number {
  let j = Math.imul(word, 0x85ebca6b);
  j = Math.imul((j << 16) | (j >>> 16), 0xc2b2ae35);
  lane ^= j;
  return (Math.imul((lane << 17) | (lane >>> 15), 9) + 0x38495ab5) | 0;
}

function mix(word: number): void {
  lane1 = mixLane1(lane1, word);
  lane2 = mixLane2(lane2, word);
}

function finalMix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

function hashString(s: string): void {
  mix(Tag.String);
  mix(s.length);
  for (let i = 0; i < s.length; i++) mix(s.charCodeAt(i));
}

function hashNumber(n: number): void {
  if (n === (n | 0)) {
    mix(Tag.Int);
    mix(n);
  } else {
    // NaN has many bit patterns; hash them all alike.
    floatView[0] = n === n ? n : Number.NaN;
    mix(Tag.Float);
    mix(floatWords[0]!);
    mix(floatWords[1]!);
  }
}

function hashValue(v: unknown): void {
  switch (typeof v) {
    case 'number':
      hashNumber(v);
      return;
    case 'string':
      hashString(v);
      return;
    case 'boolean':
      mix(v ? Tag.True : Tag.False);
      return;
    case 'object':
      if (v === null) {
        mix(Tag.Null);
      } else if (Array.isArray(v)) {
        mix(Tag.Array);
        mix(v.length);
        for (let i = 0; i < v.length; i++) hashValue(v[i]);
      } else {
        hashObject(v as Record<string, unknown>);
      }
      return;
    default:
      throw new TypeError(`fingerprint: not plain data: ${typeof v}`);
  }
}

// States repeat a few object shapes (key lists) over and over: each shape's key order and key
// hashes are worked out once. What is cached depends on the key names alone, so every thread
// computes the same fingerprints.
interface Shape {
  readonly keys: readonly string[];
  /** Indices into `keys`, in sorted key order. */
  readonly order: Int32Array;
  /** The hash of each key name, in sorted key order. */
  readonly hashes: Int32Array;
}

const shapesByFirstKey = new Map<string, Shape[]>();
/** Objects used as maps could have endless shapes: past this many per first key, none is kept. */
const MAX_SHAPES = 64;

function shapeOf(keys: readonly string[]): Shape {
  let shapes = shapesByFirstKey.get(keys[0]!);
  if (shapes === undefined) shapesByFirstKey.set(keys[0]!, (shapes = []));
  search: for (const shape of shapes) {
    if (shape.keys.length !== keys.length) continue;
    for (let i = 1; i < keys.length; i++) if (shape.keys[i] !== keys[i]) continue search;
    return shape;
  }
  const order = Int32Array.from(keys.map((_, i) => i).sort((a, b) => (keys[a]! < keys[b]! ? -1 : 1)));
  const outer1 = lane1;
  const outer2 = lane2;
  const hashes = order.map((i) => {
    lane1 = 0x3c6ef372;
    lane2 = 0;
    hashString(keys[i]!);
    return finalMix(lane1);
  });
  lane1 = outer1;
  lane2 = outer2;
  const shape = { keys: [...keys], order, hashes };
  if (shapes.length < MAX_SHAPES) shapes.push(shape);
  return shape;
}

function hashObject(o: Record<string, unknown>): void {
  const keys = Object.keys(o);
  mix(Tag.Object);
  mix(keys.length);
  if (keys.length === 0) return;
  const { order, hashes } = shapeOf(keys);
  for (let i = 0; i < keys.length; i++) {
    mix(hashes[i]!);
    hashValue(o[keys[order[i]!]!]);
  }
}

/**
 * Writes the fingerprint of `value` into `out[0]` (high word) and `out[1]` (low word).
 * Allocation-free apart from `Object.keys`.
 */
export function fingerprintInto(value: unknown, out: Int32Array | Uint32Array): void {
  lane1 = 0x9747b28c;
  lane2 = 0x1b873593;
  hashValue(value);
  finish(out);
}

/** The fingerprint of `words[0 .. length)`, a model's packed state (see Model.pack). */
export function fingerprintWords(words: Int32Array, length: number, out: Int32Array | Uint32Array): void {
  hashWords(words, 0, length, out, 0);
}

/**
 * The fingerprint of `words[from .. to)`, its length first, into `out[at]` (high) and
 * `out[at + 1]` (low): mix() over locals, so the lanes stay in registers through the loop, which
 * takes a fifth less time than going through the module's lanes.
 */
function hashWords(
  words: Int32Array,
  from: number,
  to: number,
  out: Int32Array | Uint32Array,
  at: number,
): void {
  let a = 0x2545f491;
  let b = 0x7f4a7c15;
  for (let i = from - 1; i < to; i++) {
    const word = i < from ? to - from : words[i]!;
    a = mixLane1(a, word);
    b = mixLane2(b, word);
  }
  const high = finalMix(a);
  out[at] = high;
  out[at + 1] = finalMix(b ^ high);
}

/**
 * A state's summary, for a model that fingerprints its states from their parts
 * (Model.fingerprint): the state's fingerprint is that of the summary's words.
 */
export class Summary implements FingerprintSummary {
  private words = new Int32Array(256);
  private length = 0;

  /** Empties the summary for the next state. */
  clear(): void {
    this.length = 0;
  }

  word(v: number): void {
    if (this.length === this.words.length) {
      const longer = new Int32Array(this.words.length * 2);
      longer.set(this.words);
      this.words = longer;
    }
    this.words[this.length++] = v;
  }

  part(words: Int32Array, from: number, to: number, out: Int32Array, at: number): void {
    hashWords(words, from, to, out, at);
    const high = out[at]!;
    const low = out[at + 1]!;
    this.word(high);
    this.word(low);
  }

  known(high: number, low: number): void {
    this.word(high);
    this.word(low);
  }

  /** The summary's fingerprint into `out`. */
  fingerprint(out: Int32Array | Uint32Array): void {
    fingerprintWords(this.words, this.length, out);
  }
}

function finish(out: Int32Array | Uint32Array): void {
  const high = finalMix(lane1);
  out[0] = high;
  out[1] = finalMix(lane2 ^ high);
}

const scratch = new Uint32Array(2);

/** The fingerprint as 16 hex digits, for tests and diagnostics. */
export function fingerprintHex(value: unknown): string {
  fingerprintInto(value, scratch);
  return scratch[0]!.toString(16).padStart(8, '0') + scratch[1]!.toString(16).padStart(8, '0');
}

/** Structural equality of plain data; object key order does not matter. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'number') return a !== a && b !== b;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = Object.keys(ao);
  if (keys.length !== Object.keys(bo).length) return false;
  for (const key of keys) {
    if (!Object.prototype.hasOwnProperty.call(bo, key) || !deepEqual(ao[key], bo[key])) return false;
  }
  return true;
}
