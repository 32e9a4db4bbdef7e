// The messages between the parallel BFS coordinator and its workers.
//
// Every level takes four rounds. expand: each worker expands the states it holds, in order of
// their global rank, keeps one candidate per successor fingerprint, checks its invariants, and
// sends each candidate's (fingerprint, key) to the fingerprint's owner, key = (parent rank,
// action index). decide:
// each owner drops what it has visited and chooses, per fingerprint, the candidate with the
// least key, as a one-thread search would have discovered it first, and tells each worker
// which of its candidates were chosen. release: each worker keeps its chosen candidates, but
// for the few it hands to a worker with less work (states cross threads encoded, so only these
// few, with their invariants' results). hold: each worker takes its states in key order and
// reports their keys and the first that breaks an invariant, from which the coordinator merges
// the global ranks of the new level. Which worker
// holds a state changes the speed only: keys, choices and ranks do not depend on it.

import type { ModelRecipe } from './recipe.ts';

export interface WorkerSetup {
  readonly recipe: ModelRecipe;
  readonly workers: number;
  readonly me: number;
  readonly deadlockAllowed: boolean;
  /** Sleep sets (sleep.ts): each state waits with one, final once its owner has met every arrival. */
  readonly sleep?: boolean;
  /**
   * Each of the worker's two lists of states (its candidates and the states it holds) keeps up
   * to `bytes` in memory and the rest in files under `folder`, which the search removes when it
   * ends, however it ends (a terminated worker cleans up nothing).
   */
  readonly spill?: { readonly bytes: number; readonly folder: string };
}

/** Fields of one record sent to an owner. */
export const RECORD = { high: 0, low: 1, parentRank: 2, action: 3, candidate: 4, size: 5 } as const;

export type Command =
  /** Make candidates of the initial states this worker owns. */
  | { readonly type: 'seed' }
  /** Expand the held states, whose global ranks are given; with `cut`, only look whether they have successors. */
  | { readonly type: 'expand'; readonly ranks: Int32Array; readonly cut: boolean }
  /** Records from the other workers (index: sender; null for this worker itself). */
  | {
      readonly type: 'decide';
      readonly inboxes: readonly (Int32Array | null)[];
      /** With sleep sets: each record's set, from each sender (SetList.flatten), in record order. */
      readonly inboxSets?: readonly (Float64Array | null)[];
    }
  /**
   * The indices of this worker's chosen candidates, from each owner (null for this worker
   * itself), and how many of them to hand to each worker.
   */
  | {
      readonly type: 'release';
      readonly winners: readonly (Int32Array | null)[];
      /** With sleep sets: the final set of each chosen candidate, from each owner, in winner order. */
      readonly winnerSets?: readonly (Float64Array | null)[];
      readonly give: readonly number[];
    }
  /** What the other workers handed to this one (null: nothing, or this worker itself). */
  | { readonly type: 'hold'; readonly given: readonly (Handed | null)[] };

/** States handed from one worker to another, encoded, with their keys. */
export interface Handed {
  readonly states: Uint8Array;
  readonly parentRanks: Int32Array;
  readonly actions: Int32Array;
  /** Per state, the index in the model's invariants of the first it breaks, or -1. */
  readonly broken: Int32Array;
  /** With sleep sets: each state's final set (SetList.flatten). */
  readonly sets?: Float64Array;
}

export interface Expanded {
  /** Records per owner; null for this worker itself, which keeps its own. */
  readonly outboxes: readonly (Int32Array | null)[];
  /** With sleep sets: each record's candidate's set as the level left it, per owner. */
  readonly outboxSets?: readonly (Float64Array | null)[];
  /** The least rank of a held state without successors, or -1. */
  readonly deadlock: number;
  /** Some held state has successors beyond the depth bound. */
  readonly cutOff: boolean;
  readonly statesGenerated: number;
  /** Successors per action kind since the last report. */
  readonly coverage: readonly number[];
}

export interface Decided {
  /** Chosen candidate indices per holder; null for this worker itself. */
  readonly winners: readonly (Int32Array | null)[];
  /** How many candidates of each holder were chosen. */
  readonly counts: readonly number[];
  /** With sleep sets: the final set of each chosen candidate, per holder, in winner order. */
  readonly winnerSets?: readonly (Float64Array | null)[];
}

export interface Released {
  /** Per worker, the states handed to it; null when none. */
  readonly given: readonly (Handed | null)[];
}

export interface Held {
  /** The keys of the states now held, in key order. */
  readonly parentRanks: Int32Array;
  readonly actions: Int32Array;
  /** The first held state, in key order, that breaks an invariant. */
  readonly violation: { readonly index: number; readonly property: string } | null;
  readonly visitedBytes: number;
  /** The most bytes of states the worker has had on disk at once so far. */
  readonly spilledBytes: number;
}
