// A breadth-first search saved between two states: the visited fingerprints, what rebuilds traces,
// the level being expanded and the next one (as packed words), how far the level got, and the
// counters. A search resumed from it goes on as if it had never stopped: same counts, same
// verdict, same trace. The file is written whole to a temporary name and renamed over the old
// one, so an interrupted write never leaves half a checkpoint. The header carries the sha256 of
// each section and is followed by its own, so that a damaged or edited file is refused, never
// resumed into a wrong answer.
import { createHash } from 'node:crypto';
import {
  type Stats,
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { InputError, describeValue, isPlainObject } from './input.ts';

const MAGIC = 'TXCHECK-CHECKPOINT\n';
/** Version 2 added the checksums. */
const FORMAT_VERSION = 2;
const EXPECTED = 'a checkpoint file written by --checkpoint';
/** The line after the header: the sha256 of the header's JSON, in hex. */
const HEADER_SUM = 'sha256 ';
const SUM_LENGTH = 64;

/** The numbers of a saved search. */
export interface CheckpointCounters {
  readonly distinctStates: number;
  readonly statesGenerated: number;
  readonly depth: number;
  /** The id of the level's first state, and the index in the level of the next state to expand. */
  readonly levelStartId: number;
  readonly nextIndex: number;
  readonly queueBytes: number;
  readonly seconds: number;
  /** Successors per action kind, in the order of the model's actionKinds. */
  readonly coverage: readonly number[];
  /** The first violation found in the level, if any: its property and state id. */
  readonly found: { readonly property: string; readonly id: number } | null;
  readonly overLimit: boolean;
  readonly cutOffByDepth: boolean;
  readonly reducedStates: number;
}

/** A section written piece by piece, so that a large one (a spilled level) is never copied whole into memory. */
export interface Pieces {
  readonly length: number;
  readonly pieces: () => Iterable<Int32Array>;
}

/** A checkpoint as read (each section one array), or as written (`Section` may be `Pieces`). */
export interface Checkpoint<Section = Int32Array> {
  /** What the search was of (the spec and the options that shape it), compared on resume. */
  readonly identity: string;
  readonly counters: CheckpointCounters;
  /** The visited set's table, slots in place; it holds `counters.distinctStates` fingerprints. */
  readonly visited: Section;
  readonly parents: Section;
  readonly actions: Section;
  readonly levelWords: Section;
  readonly levelEnds: Section;
  readonly nextWords: Section;
  readonly nextEnds: Section;
  /** Partial-order reduction: the fingerprints first seen in the next level. */
  readonly nextLevelSeen: Section;
  readonly nextLevelSeenCount: number;
}

const SECTIONS = [
  'visited',
  'parents',
  'actions',
  'levelWords',
  'levelEnds',
  'nextWords',
  'nextEnds',
  'nextLevelSeen',
] as const;

const sha256 = () => createHash('sha256');
const bytesOf = (words: Int32Array) => new Uint8Array(words.buffer, words.byteOffset, words.byteLength);

/** The header as bytes: its size, the magic line, its JSON, the JSON's sha256 and a padding to a 4-byte boundary. */
function headerBytes(header: object): Buffer {
  const json = JSON.stringify(header);
  const text = `${MAGIC}${json}\n${HEADER_SUM}${sha256().update(json).digest('hex')}\n`;
  // The sections start on a 4-byte boundary so they can be read back as Int32 views.
  const padding = (4 - ((Buffer.byteLength(text) + 4) % 4)) % 4;
  const bytes = Buffer.from(`    ${text}${' '.repeat(padding)}`, 'utf8');
  bytes.writeUInt32LE(bytes.length - 4);
  return bytes;
}

export function writeCheckpoint(file: string, cp: Checkpoint<Int32Array | Pieces>): void {
  const header = (sums: readonly string[]) => ({
    format: 'txcheck checkpoint',
    version: FORMAT_VERSION,
    identity: cp.identity,
    counters: cp.counters,
    nextLevelSeenCount: cp.nextLevelSeenCount,
    lengths: SECTIONS.map((s) => cp[s].length),
    sha256: sums,
  });
  // The sections' sums are known once they are written: the header goes first with sums of the
  // same length, and is written again over them at the end, so that no section is read twice.
  const placeholder = headerBytes(header(SECTIONS.map(() => '0'.repeat(SUM_LENGTH))));
  const temporary = `${file}.${process.pid}.tmp`;
  const fd = openSync(temporary, 'w');
  try {
    writeSync(fd, placeholder);
    const sums = SECTIONS.map((s) => {
      const section = cp[s];
      const sum = sha256();
      for (const piece of section instanceof Int32Array ? [section] : section.pieces()) {
        const bytes = bytesOf(piece);
        sum.update(bytes);
        writeSync(fd, bytes);
      }
      return sum.digest('hex');
    });
    const final = headerBytes(header(sums));
    if (final.length !== placeholder.length) throw new Error('checkpoint: the header changed length');
    writeSync(fd, final, 0, final.length, 0);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(temporary, { force: true });
    throw e;
  }
  closeSync(fd);
  renameSync(temporary, file);
}

const isCount = (n: unknown): n is number => Number.isInteger(n) && (n as number) >= 0;

/** The counters have every field, of its type: a header edited by hand is refused, not misread. */
function validCounters(c: unknown): c is CheckpointCounters {
  if (typeof c !== 'object' || c === null) return false;
  const k = c as Record<keyof CheckpointCounters, unknown>;
  const counts = [
    k.distinctStates,
    k.statesGenerated,
    k.depth,
    k.levelStartId,
    k.nextIndex,
    k.queueBytes,
    k.reducedStates,
  ];
  const found =
    k.found === null ||
    (typeof k.found === 'object' &&
      typeof (k.found as { property?: unknown }).property === 'string' &&
      isCount((k.found as { id?: unknown }).id));
  return (
    counts.every(isCount) &&
    typeof k.seconds === 'number' &&
    k.seconds >= 0 &&
    Array.isArray(k.coverage) &&
    k.coverage.every(isCount) &&
    found &&
    typeof k.overLimit === 'boolean' &&
    typeof k.cutOffByDepth === 'boolean'
  );
}

/** Whether `ends` cut `words` into states: never falling, the last at the end. */
function endsOf(words: Int32Array, ends: Int32Array): boolean {
  let from = 0;
  for (const end of ends) {
    if (end < from) return false;
    from = end;
  }
  return from === words.length;
}

/** What a path that is not a regular file is, for the refusal. */
function kindOf(stat: Stats): string {
  if (stat.isDirectory()) return 'a directory';
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  if (stat.isSocket()) return 'a socket';
  return 'a special file';
}

/**
 * The bytes of `file`, a regular file: a FIFO or a device would block or never end. It is opened
 * without blocking and looked at before it is read, so that no other file can take its place.
 */
function readRegularFile(file: string): Buffer {
  const fail = (got: string): never => {
    throw new InputError(file, '', EXPECTED, got);
  };
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (e) {
    return fail(`an unreadable file (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) fail(`${kindOf(stat)}, not a regular file`);
    let bytes: Buffer;
    try {
      bytes = Buffer.allocUnsafe(stat.size);
    } catch {
      return fail(`a file of ${stat.size} bytes, too large to read`);
    }
    let read = 0;
    for (let n = 1; read < bytes.length && n > 0; read += n)
      n = readSync(fd, bytes, read, bytes.length - read, read);
    return bytes.subarray(0, read);
  } catch (e) {
    if (e instanceof InputError) throw e;
    return fail(`an unreadable file (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  } finally {
    closeSync(fd);
  }
}

/** A short rendering of a value of an identity, for the message: a digest by its first 12 digits. */
const shown = (v: unknown): string =>
  typeof v === 'string' && /^[0-9a-f]{40,}$/.test(v) ? `${v.slice(0, 12)}...` : describeValue(v);

/** The fields in which two identities differ (as JSON objects, field by field), up to `max`. */
function differences(saved: unknown, wanted: unknown, path = '', max = 3): string[] {
  if (isPlainObject(saved) && isPlainObject(wanted)) {
    const found: string[] = [];
    for (const key of new Set([...Object.keys(saved), ...Object.keys(wanted)])) {
      if (found.length >= max) break;
      found.push(
        ...differences(saved[key], wanted[key], path === '' ? key : `${path}.${key}`, max - found.length),
      );
    }
    return found;
  }
  if (JSON.stringify(saved) === JSON.stringify(wanted)) return [];
  return [`${path}: ${shown(saved)} in the checkpoint, ${shown(wanted)} here`];
}

/** Why a checkpoint of `saved` is not one of the search `wanted`: its first fields that differ. */
function whyAnotherSearch(saved: string, wanted: string): string {
  const parsed = (text: string): unknown => {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  };
  const found = differences(parsed(saved), parsed(wanted));
  return found.length === 0 ? 'one of another search' : `one of another search (${found.join('; ')})`;
}

/**
 * Reads a checkpoint; anything else (another file, a truncated or damaged one, another version,
 * one of another search than `identity` when it is given) is an InputError naming what is wrong.
 */
export function readCheckpoint(file: string, identity?: string): Checkpoint {
  const bytes = readRegularFile(file);
  const fail = (what: string, got: string): never => {
    throw new InputError(file, what, EXPECTED, got);
  };
  if (bytes.length < 4 + MAGIC.length || bytes.subarray(4, 4 + MAGIC.length).toString('utf8') !== MAGIC)
    fail('', 'a file of another kind');
  const headerLength = bytes.readUInt32LE(0);
  if (4 + headerLength > bytes.length) fail('header', 'a truncated file');
  const text = bytes.subarray(4 + MAGIC.length, 4 + headerLength).toString('utf8');
  const [json = '', sumLine = '', ...after] = text.split('\n');
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return fail('header', 'a damaged header');
  }
  if (!isPlainObject(header)) return fail('header', 'a damaged header');
  // The version first: an older file has no sums to check.
  if (header.version !== FORMAT_VERSION)
    fail(
      'version',
      typeof header.version === 'number' && header.version < FORMAT_VERSION
        ? `version ${header.version}, written by an older txcheck (this one reads version ${FORMAT_VERSION}; run the search again from the start)`
        : `version ${describeValue(header.version)} (this txcheck reads version ${FORMAT_VERSION})`,
    );
  if (
    sumLine !== `${HEADER_SUM}${sha256().update(json).digest('hex')}` ||
    after.length !== 1 ||
    !/^ {0,3}$/.test(after[0]!)
  )
    fail('header', 'a header that does not match its sha256 (edited or damaged)');
  const lengths = header.lengths;
  if (
    !Array.isArray(lengths) ||
    lengths.length !== SECTIONS.length ||
    !lengths.every((n) => Number.isInteger(n) && n >= 0)
  )
    return fail('lengths', 'a damaged header');
  const sums = header.sha256;
  if (!Array.isArray(sums) || sums.length !== SECTIONS.length || !sums.every((s) => typeof s === 'string'))
    return fail('sha256', 'a damaged header');
  if (!validCounters(header.counters) || !isCount(header.nextLevelSeenCount))
    return fail('counters', 'a damaged header');
  if (identity !== undefined && header.identity !== identity)
    throw new InputError(
      file,
      'identity',
      'a checkpoint of this spec with these options',
      whyAnotherSearch(String(header.identity), identity),
    );
  const total = (lengths as number[]).reduce((a, b) => a + b, 0);
  if (4 + headerLength + total * 4 !== bytes.length)
    fail('', `a file of ${bytes.length} bytes where its header promises ${4 + headerLength + total * 4}`);
  // A view where the sections fall on a 4-byte boundary of the buffer (they do for a file read whole), else a copy.
  const start = bytes.byteOffset + 4 + headerLength;
  const words =
    start % 4 === 0
      ? new Int32Array(bytes.buffer, start, total)
      : new Int32Array(bytes.buffer.slice(start, start + total * 4));
  const sections: Record<string, Int32Array> = {};
  let at = 0;
  SECTIONS.forEach((s, k) => {
    const section = words.subarray(at, at + (lengths as number[])[k]!);
    if (sha256().update(bytesOf(section)).digest('hex') !== sums[k])
      fail(s, 'bytes that do not match their sha256 (a damaged file)');
    sections[s] = section;
    at += (lengths as number[])[k]!;
  });
  const read = sections as Record<(typeof SECTIONS)[number], Int32Array>;
  const counters = header.counters;
  // Beyond the sums: a header edited and summed again must still agree with its sections.
  const inconsistent = (field: string, got: string): never => fail(`counters.${field}`, got);
  if (read.parents.length !== counters.distinctStates || read.actions.length !== counters.distinctStates)
    inconsistent('distinctStates', "a count of states unlike the trail's");
  if (!endsOf(read.levelWords, read.levelEnds) || !endsOf(read.nextWords, read.nextEnds))
    fail('levelEnds', 'the ends of states unlike their words');
  if (counters.nextIndex > read.levelEnds.length) inconsistent('nextIndex', "an index past the level's end");
  if (counters.levelStartId + read.levelEnds.length > counters.distinctStates)
    inconsistent('levelStartId', 'a level past the states counted');
  if (counters.found !== null && counters.found.id >= counters.distinctStates)
    inconsistent('found', 'a state past the states counted');
  return {
    identity: String(header.identity),
    counters,
    nextLevelSeenCount: header.nextLevelSeenCount,
    ...read,
  };
}
