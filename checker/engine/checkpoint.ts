// A breadth-first search saved between two states: the visited fingerprints, what rebuilds traces,
// the level being expanded and the next one (as packed words), how far the level got, and the
// counters. A search resumed from it goes on as if it had never stopped: same counts, same
// verdict, same trace. The file is written whole to a temporary name and renamed over the old
// one, so an interrupted write never leaves half a checkpoint.
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { InputError } from './input.ts';

const MAGIC = 'TXCHECK-CHECKPOINT\n';
const FORMAT_VERSION = 1;

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

export function writeCheckpoint(file: string, cp: Checkpoint<Int32Array | Pieces>): void {
  const header = {
    format: 'txcheck checkpoint',
    version: FORMAT_VERSION,
    identity: cp.identity,
    counters: cp.counters,
    nextLevelSeenCount: cp.nextLevelSeenCount,
    lengths: SECTIONS.map((s) => cp[s].length),
  };
  const text = Buffer.from(`${MAGIC}${JSON.stringify(header)}\n`, 'utf8');
  // The sections start on a 4-byte boundary so they can be read back as Int32 views.
  const padding = (4 - ((text.length + 4) % 4)) % 4;
  const size = Buffer.alloc(4);
  size.writeUInt32LE(text.length + padding);
  const temporary = `${file}.${process.pid}.tmp`;
  const fd = openSync(temporary, 'w');
  try {
    writeSync(fd, size);
    writeSync(fd, text);
    writeSync(fd, Buffer.alloc(padding, ' '));
    for (const s of SECTIONS) {
      const section = cp[s];
      for (const piece of section instanceof Int32Array ? [section] : section.pieces())
        writeSync(fd, new Uint8Array(piece.buffer, piece.byteOffset, piece.byteLength));
    }
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

/** Reads a checkpoint; anything else (another file, a truncated one, another version) is an InputError naming what is wrong. */
export function readCheckpoint(file: string): Checkpoint {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    throw new InputError(
      file,
      '',
      'a checkpoint file written by --checkpoint',
      `an unreadable file (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  const fail = (what: string, got: string): never => {
    throw new InputError(file, what, 'a checkpoint file written by --checkpoint', got);
  };
  if (bytes.length < 4 + MAGIC.length || bytes.subarray(4, 4 + MAGIC.length).toString('utf8') !== MAGIC)
    fail('', 'a file of another kind');
  const headerLength = bytes.readUInt32LE(0);
  if (4 + headerLength > bytes.length) fail('header', 'a truncated file');
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(bytes.subarray(4 + MAGIC.length, 4 + headerLength).toString('utf8')) as Record<
      string,
      unknown
    >;
  } catch {
    return fail('header', 'a damaged header');
  }
  if (header.version !== FORMAT_VERSION)
    fail(
      'version',
      `version ${JSON.stringify(header.version)} (this txcheck reads version ${FORMAT_VERSION})`,
    );
  const lengths = header.lengths;
  if (
    !Array.isArray(lengths) ||
    lengths.length !== SECTIONS.length ||
    !lengths.every((n) => Number.isInteger(n) && n >= 0)
  )
    return fail('lengths', 'a damaged header');
  if (!validCounters(header.counters) || !isCount(header.nextLevelSeenCount))
    return fail('counters', 'a damaged header');
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
    sections[s] = words.subarray(at, at + (lengths as number[])[k]!);
    at += (lengths as number[])[k]!;
  });
  return {
    identity: String(header.identity),
    counters: header.counters,
    nextLevelSeenCount: header.nextLevelSeenCount,
    ...(sections as Record<(typeof SECTIONS)[number], Int32Array>),
  };
}
