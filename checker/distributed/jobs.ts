// What travels on the queue between the coordinator of a distributed random run and its workers.
// A job is a range of walk indices; its answer holds the figures of those walks and the
// fingerprints of the states they met, so that the coordinator can merge them as one machine
// would have counted them.
import type { Limit } from '../engine/search.ts';
import type { RunDigest } from './digest.ts';

/** The one queue every coordinator and worker uses; jobs of different runs are told apart by `run`. */
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
