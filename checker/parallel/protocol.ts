// The messages between the parallel BFS coordinator and its workers.
//
// Every level takes four rounds. expand: each worker expands the states it holds, in order of
// their global rank, keeps one candidate per successor fingerprint and sends each candidate's
// (fingerprint, key) to the fingerprint's owner, key = (parent rank, action index). decide:
// each owner drops what it has visited and chooses, per fingerprint, the candidate with the
// least key, as a one-thread search would have discovered it first. release: each worker sends
// the chosen candidates it made to their owners (states cross threads serialized, so only
// these). hold: each owner takes its chosen states in key order, checks their invariants
// and reports their keys, from which the coordinator merges the global ranks of the new level.

import type { ModelRecipe } from './recipe.ts';

export interface WorkerSetup {
  readonly recipe: ModelRecipe;
  readonly workers: number;
  readonly me: number;
  readonly deadlockAllowed: boolean;
}

/** Fields of one record sent to an owner. */
export const RECORD = { high: 0, low: 1, parentRank: 2, action: 3, candidate: 4, size: 5 } as const;

export type Command =
  /** Make candidates of the initial states this worker owns. */
  | { readonly type: 'seed' }
  /** Expand the held states, whose global ranks are given; with `cut`, only look whether they have successors. */
  | { readonly type: 'expand'; readonly ranks: Int32Array; readonly cut: boolean }
  /** Records from the other workers (index: sender; null for this worker itself). */
  | { readonly type: 'decide'; readonly inboxes: readonly (Int32Array | null)[] }
  /** The indices of this worker's chosen candidates, from each owner (null for this worker itself). */
  | { readonly type: 'release'; readonly winners: readonly (Int32Array | null)[] }
  /** The chosen states from each holder, serialized, in the order of the lists sent to it (null for this worker itself). */
  | { readonly type: 'hold'; readonly states: readonly (Uint8Array | null)[] };

export interface Expanded {
  /** Records per owner; null for this worker itself, which keeps its own. */
  readonly outboxes: readonly (Int32Array | null)[];
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
}

export interface Released {
  /** Per owner, the states it chose, serialized (node:v8); null for this worker itself. */
  readonly states: readonly (Uint8Array | null)[];
}

export interface Held {
  /** The keys of the states now held, in key order. */
  readonly parentRanks: Int32Array;
  readonly actions: Int32Array;
  /** The first held state, in key order, that breaks an invariant. */
  readonly violation: { readonly index: number; readonly property: string } | null;
  readonly visitedBytes: number;
}
