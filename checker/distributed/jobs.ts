// What travels on the queue between the coordinator of a distributed run and its workers. A
// random run's job is a range of walk indices; its answer holds the figures of those walks and the
// fingerprints of the states they met, so that the coordinator can merge them as one machine
// would have counted them. A breadth-first run's jobs expand a part of a level or decide a
// shard's part of the next (ExpandJob, OwnJob).
import type { Limit } from '../engine/search.ts';
import type { RunDigest } from './digest.ts';
import type { RedisAddress } from './redis.ts';

/** The one queue every coordinator and worker uses; jobs of different runs are told apart by `run`, their kinds by their names. */
export const QUEUE = 'txcheck-walks';

/** Enough walks for a job to outweigh its round trip through Redis, few enough to spread a small run. */
export const WALKS_PER_JOB = 64;

/** What a walk depends on besides its index; plain data. */
export interface WalkOptions {
  readonly seed: number;
  readonly maxDepth: number;
  readonly deadlockAllowed: boolean;
}

export interface WalkJob {
  /** The run's id: a job id is `${run}-${index}`. */
  readonly run: string;
  /** The spec as the coordinator loaded it: its file name (for messages) and its JSON. */
  readonly spec: { readonly file: string; readonly raw: unknown };
  readonly digest: RunDigest;
  readonly options: WalkOptions;
  readonly firstWalk: number;
  readonly walks: number;
}

export interface WalkJobAnswer {
  /** Which walker ran it: host/pid/thread. */
  readonly walker: string;
  readonly statesGenerated: number;
  readonly depth: number;
  /** Successors per action kind. */
  readonly fired: Readonly<Record<string, number>>;
  /** Why the walks stopped when not at a violation: 'walks' when they all ran. */
  readonly stoppedBy?: Limit;
  readonly violation?: { readonly property: string; readonly walk: number };
  /** The fingerprints of the states met, (high, low) pairs of an Int32Array, in base64. */
  readonly fingerprints: string;
}

export const jobId = (run: string, index: number): string => `${run}-${index}`;

/** The job's index when `id` is a job of `run`. */
export function jobIndex(run: string, id: string): number | undefined {
  return id.startsWith(`${run}-`) ? Number(id.slice(run.length + 1)) : undefined;
}

/** Where a run keeps the least walk index still worth running (a lesser one violates). */
export const stopAtKey = (run: string): string => `txcheck:run:${run}:stop-at`;

/** How long a run's key outlives it: long enough for workers still on its jobs to see it is over. */
export const RUN_KEY_SECONDS = 3600;

/** Marks a job's failure as a refusal (a job this worker must not run), not a fault. */
export const REFUSED = 'refused: ';

/** Marks a job's failure as the run's Redis failing it (keys gone, no answer): the run cannot go on. */
export const LOST = 'lost: ';

/** Packed integers in a job or an answer: base64 of their bytes, in the byte order of x86 and ARM (little-endian), which every side must share. */
export function base64Of(words: Int32Array): string {
  return bytesOf(words).toString('base64');
}

/** The integers `base64Of` wrote, in an array of their own (the decoded bytes need not be aligned). */
export function int32sOf(base64: string): Int32Array {
  return int32sOfBytes(Buffer.from(base64, 'base64'));
}

/** The bytes of `words`, as a Redis value: no copy. */
export function bytesOf(words: Int32Array): Buffer {
  return Buffer.from(words.buffer, words.byteOffset, words.byteLength);
}

/** The integers of bytes from Redis, copied into an array of their own (aligned). */
export function int32sOfBytes(bytes: Buffer): Int32Array {
  return new Int32Array(new Uint8Array(bytes).buffer);
}

/**
 * The two kinds of job of a breadth-first run. Every fingerprint has an owner, one of the run's
 * `shards` (shardOf in visited-shards.ts), each shard's keys on one server. An expand job takes
 * consecutive states of level d and sends its successors not in the visited set to their owners
 * for level d + 1: their fingerprints and keys to the owner's inbox, their words beside them,
 * where they stay. Once every expand job of the level is done, one own job per server decides its
 * shards' parts of level d + 1, each from its inbox. Their data in Redis are binary values: through a
 * job, BullMQ would copy them as JSON into the job, its answer and its event stream.
 */
export const EXPAND_JOB = 'expand';
export const OWN_JOB = 'own';

/**
 * An expand job's successors are grouped by the block of positions their parent is in, a few
 * blocks to a job: the next level's jobs are cut on group boundaries. Group g is block
 * g % GROUPS_PER_JOB of job g / GROUPS_PER_JOB.
 */
export const GROUPS_PER_JOB = 4;

/** The group of a successor of the state at `parent` (-1 for an initial state) in job `job`, which starts at `firstPosition`. */
export function groupOf(job: number, firstPosition: number, parentsPerBlock: number, parent: number): number {
  return job * GROUPS_PER_JOB + (parent < 0 ? 0 : Math.floor((parent - firstPosition) / parentsPerBlock));
}

/** Positions per block of a job of `states` states. */
export const parentsPerBlock = (states: number): number => Math.max(1, Math.ceil(states / GROUPS_PER_JOB));

interface RunJob {
  readonly run: string;
  readonly spec: WalkJob['spec'];
  readonly digest: RunDigest;
  /** The servers the shards sit on: shard s on server s modulo their number; the first holds the queue. */
  readonly servers: readonly RedisAddress[];
  readonly shards: number;
}

/**
 * States of level `level` from position `firstPosition` on: those the shards hold in groups
 * `groups[0]` to `groups[1] - 1`; or, at level -1, the initial states.
 */
export interface ExpandJob extends RunJob {
  readonly deadlockAllowed: boolean;
  readonly level: number;
  /** The job's index in its level: its field in each inbox, and its trail key. */
  readonly job: number;
  readonly groups: readonly [number, number];
  readonly firstPosition: number;
  /** How many states the groups hold. */
  readonly states: number;
  /** At the depth bound: the states are only looked at for successors, none is sent. */
  readonly cut: boolean;
}

export interface ExpandAnswer {
  readonly walker: string;
  /** Successors computed, duplicates included (none at the depth bound); the initial states at level -1. */
  readonly statesGenerated: number;
  /** Successors per action kind. */
  readonly fired: Readonly<Record<string, number>>;
  /** The least position of a state without successors, or -1. */
  readonly deadlock: number;
  /** At the depth bound: some state has successors. */
  readonly cutOff: boolean;
  /** Of the successors sent, the first (by key) that breaks an invariant, and the first invariant it breaks. */
  readonly violation?: { readonly parent: number; readonly action: number; readonly property: string };
  /** Successors sent to each shard. */
  readonly sent: readonly number[];
}

/** Decides the parts of level `level` of the shards `owned` of server `server`, each from its inbox. */
export interface OwnJob extends RunJob {
  readonly level: number;
  readonly server: number;
  readonly owned: readonly number[];
}

export interface OwnAnswer {
  readonly walker: string;
  /** The shards' new states per group: (group, count) pairs. */
  readonly groups: readonly number[];
}

/**
 * What an expand job sends a shard's inbox: in key order, the successors the shard owns, as one
 * Int32Array: their count n, the job's index, its first position and its positions per block
 * (which give each successor's group), then n (high, low) fingerprints and n (parent position,
 * action index) keys.
 */
export function inboxBatch(
  job: number,
  firstPosition: number,
  perBlock: number,
  fingerprints: Int32Array,
  keys: Int32Array,
): Int32Array {
  const n = fingerprints.length / 2;
  const all = new Int32Array(4 + 4 * n);
  all.set([n, job, firstPosition, perBlock]);
  all.set(fingerprints, 4);
  all.set(keys, 4 + 2 * n);
  return all;
}

/** The parts `inboxBatch` joined. */
export function inboxParts(all: Int32Array): {
  job: number;
  firstPosition: number;
  perBlock: number;
  fingerprints: Int32Array;
  keys: Int32Array;
} {
  const n = all[0]!;
  return {
    job: all[1]!,
    firstPosition: all[2]!,
    perBlock: all[3]!,
    fingerprints: all.subarray(4, 4 + 2 * n),
    keys: all.subarray(4 + 2 * n, 4 + 4 * n),
  };
}

/**
 * What an own job keeps of a group: the successors that won, in key order, as one Int32Array:
 * their count m, their m indices among the group's successors sent to the shard (whose words are
 * under wordsKey), and their m keys.
 */
export function winnersOf(indices: Int32Array, keys: Int32Array): Int32Array {
  const m = indices.length;
  const all = new Int32Array(1 + 3 * m);
  all[0] = m;
  all.set(indices, 1);
  all.set(keys, 1 + m);
  return all;
}

/** The parts `winnersOf` joined. */
export function winnersParts(all: Int32Array): { indices: Int32Array; keys: Int32Array } {
  const m = all[0]!;
  return { indices: all.subarray(1, 1 + m), keys: all.subarray(1 + m, 1 + 3 * m) };
}

/**
 * A key of shard `shard` of a run: its hash tag keeps each shard's keys in one slot of a Redis
 * Cluster, so that a shard's transaction touches one node.
 */
const shardKey = (run: string, shard: number, rest: string): string =>
  `txcheck:run:{${run}.${shard}}:${rest}`;

/** The shard's part of the visited set. */
export const shardVisitedKey = (run: string, shard: number): string => shardKey(run, shard, 'visited');
/** The shard's inbox for level `level`: a hash from expand job to its inboxBatch. */
export const inboxKey = (run: string, shard: number, level: number): string =>
  shardKey(run, shard, `inbox:${level}`);
/** The words of the shard's successors for level `level`: a hash from group to their packed words, in key order, each state's preceded by its length. */
export const wordsKey = (run: string, shard: number, level: number): string =>
  shardKey(run, shard, `words:${level}`);
/** The shard's states of level `level`: a hash from group to its winnersOf. */
export const levelKey = (run: string, shard: number, level: number): string =>
  shardKey(run, shard, `level:${level}`);
/** What the shard's transaction of level `level` kept per group (OwnAnswer.groups), for a retry after it. */
export const ownedKey = (run: string, shard: number, level: number): string =>
  shardKey(run, shard, `owned:${level}`);
/** The trail of expand job `job` of level `level` (kept on shard `job` modulo the shards). */
export const jobTrailKey = (run: string, shards: number, level: number, job: number): string =>
  shardKey(run, job % shards, `trail:${level}:${job}`);
