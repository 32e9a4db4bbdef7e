// The work of a breadth-first run's jobs on a walker thread (see bfs-coordinator.ts).
//
// An expand job, in two steps around the worker's look at the visited set. expand: the job's
// states, gathered from the shards group by group and put in key order, which is their order on
// one machine; then each one's successors in action order, the order one machine meets them. A
// successor met before in this job (or one of the job's own states) is dropped here, so that each
// fingerprint the job keeps has its least key in the job (parent position, action index). settle:
// the successors the visited set did not hold are packed per owning shard, and the first of them
// that breaks an invariant is noted.
//
// An own job: the successors a shard received for a level, taken in job order, each fingerprint
// kept at its first sight. Jobs hold consecutive positions and each job's successors are in key
// order, so the first sight of a fingerprint is its least key over the whole level.
import { IntList, eachPacked } from '../engine/int-list.ts';
import type { Model } from '../engine/model.ts';
import { PACK_WORDS } from '../engine/model.ts';
import { type Emit, brokenInvariant, stateFingerprint, successorsOf } from '../engine/search.ts';
import { VisitedSet } from '../engine/visited.ts';
import { groupOf, levelSuccessors, successorParts } from './jobs.ts';
import { shardOf } from './visited-shards.ts';

export interface ExpandRequest {
  readonly deadlockAllowed: boolean;
  /** Level -1: the job discovers the initial states. */
  readonly init: boolean;
  readonly firstPosition: number;
  /** How many states the pieces hold. */
  readonly states: number;
  readonly cut: boolean;
  readonly shards: number;
  /** Per group of the job in order, per shard: the shard's states of the group (levelSuccessors), or null when it has none. */
  readonly pieces: readonly (Int32Array | null)[];
  /** One Int32: non-zero asks the expansion to stop (the process got a signal). */
  readonly stop: SharedArrayBuffer;
}

export interface Expanded {
  /** The expansion stopped on a signal: nothing else is set. */
  readonly stopped: boolean;
  /** Per state of the job in position order: its parent's position and its action index. */
  readonly trail: Int32Array;
  /** The successors' fingerprints, one per fingerprint, in key order. */
  readonly candidates: Int32Array;
  readonly statesGenerated: number;
  /** Successors per action kind. */
  readonly fired: Readonly<Record<string, number>>;
  readonly deadlock: number;
  readonly cutOff: boolean;
}

export interface Settled {
  /** Per shard: the successors it owns, as levelSuccessors joins them (empty when none). */
  readonly batches: Int32Array[];
  readonly sent: number[];
  readonly violation?: { readonly parent: number; readonly action: number; readonly property: string };
}

/** States between two looks at the stop flag. */
const STOP_EVERY = 64;

/** One thread's expand job under way: what `expand` found, for `settle`. */
export class ExpandChunk<S> {
  private readonly fingerprintOf: (s: S, out: Int32Array) => void;
  private readonly successors: (s: S, emit: Emit<S>) => void;
  private readonly fingerprint = new Int32Array(2);
  private readonly words = new Int32Array(PACK_WORDS);
  private candidates: S[] = [];
  private keys = new IntList();
  private fingerprints = new IntList();

  constructor(private readonly model: Model<S, unknown>) {
    this.fingerprintOf = stateFingerprint(model);
    this.successors = successorsOf(model);
  }

  expand(request: ExpandRequest): Expanded {
    const { model, fingerprint } = this;
    this.candidates = [];
    this.keys = new IntList();
    this.fingerprints = new IntList();
    const fired = model.actionKinds.map(() => 0);
    const firedByKind = () => Object.fromEntries(model.actionKinds.map((kind, k) => [kind, fired[k]!]));
    const met = new VisitedSet(Math.max(request.states, 16) * 4);
    const keep = (t: S, parent: number, action: number): void => {
      this.fingerprintOf(t, fingerprint);
      if (!met.add(fingerprint[0]!, fingerprint[1]!)) return;
      this.candidates.push(t);
      this.keys.push(parent);
      this.keys.push(action);
      this.fingerprints.push(fingerprint[0]!);
      this.fingerprints.push(fingerprint[1]!);
    };
    if (request.init) {
      const initial = model.init();
      initial.forEach((s, i) => keep(s, -1, i));
      return {
        stopped: false,
        trail: new Int32Array(0),
        candidates: this.fingerprints.take(),
        statesGenerated: initial.length,
        fired: firedByKind(),
        deadlock: -1,
        cutOff: false,
      };
    }
    const { states, trail } = gathered(model, request, met);
    if (states.length !== request.states)
      throw new Error(
        `the shards hold ${states.length} of the job's ${request.states} states: its level is gone from Redis`,
      );
    const stop = new Int32Array(request.stop);
    let statesGenerated = 0;
    let deadlock = -1;
    let cutOff = false;
    let emitted = 0;
    let parent = 0;
    const emit = (t: S, action: number, kind: number): void => {
      emitted++;
      fired[kind]!++;
      keep(t, parent, action);
    };
    const countOnly = (): void => void emitted++;
    for (let i = 0; i < states.length; i++) {
      if (i % STOP_EVERY === 0 && Atomics.load(stop, 0) !== 0)
        return {
          stopped: true,
          trail: new Int32Array(0),
          candidates: new Int32Array(0),
          statesGenerated: 0,
          fired: {},
          deadlock,
          cutOff,
        };
      parent = request.firstPosition + i;
      emitted = 0;
      this.successors(states[i]!, request.cut ? countOnly : emit);
      if (emitted === 0 && !request.deadlockAllowed && deadlock === -1) deadlock = parent;
      cutOff ||= request.cut && emitted > 0;
      if (!request.cut) statesGenerated += emitted;
    }
    return {
      stopped: false,
      trail,
      candidates: this.fingerprints.take(),
      statesGenerated,
      fired: firedByKind(),
      deadlock,
      cutOff,
    };
  }

  /** The candidates `fresh` marks (1: not in the visited set), packed per owning shard, with the first that breaks an invariant. */
  settle(fresh: Uint8Array, shards: number): Settled {
    const lists = Array.from({ length: shards }, () => ({
      fingerprints: new IntList(16),
      keys: new IntList(16),
      states: new IntList(16),
    }));
    let violation: Settled['violation'];
    for (let c = 0; c < this.candidates.length; c++) {
      if (fresh[c] === 0) continue;
      const t = this.candidates[c]!;
      const high = this.fingerprints.get(2 * c);
      const parent = this.keys.get(2 * c);
      const action = this.keys.get(2 * c + 1);
      if (violation === undefined) {
        const broken = brokenInvariant(this.model, t);
        if (broken !== undefined) violation = { parent, action, property: broken };
      }
      const to = lists[shardOf(high, shards)]!;
      to.fingerprints.push(high);
      to.fingerprints.push(this.fingerprints.get(2 * c + 1));
      to.keys.push(parent);
      to.keys.push(action);
      to.states.pushPacked(this.words, this.model.pack!(t, this.words));
    }
    this.candidates = [];
    return {
      batches: lists.map((l) =>
        l.keys.length === 0
          ? new Int32Array(0)
          : levelSuccessors(l.fingerprints.take(), l.keys.take(), l.states.take()),
      ),
      sent: lists.map((l) => l.keys.length / 2),
      ...(violation === undefined ? {} : { violation }),
    };
  }
}

/** The job's states in key order (their order on one machine), each one's fingerprint added to `met`, and their keys. */
function gathered<S>(
  model: Model<S, unknown>,
  request: ExpandRequest,
  met: VisitedSet,
): { states: S[]; trail: Int32Array } {
  const states: S[] = [];
  const trail = new IntList(request.states * 2);
  for (let g = 0; g < request.pieces.length; g += request.shards) {
    const parts = request.pieces.slice(g, g + request.shards).flatMap((piece) => {
      if (piece === null) return [];
      const { fingerprints, keys, states: words } = successorParts(piece);
      const starts: number[] = [];
      for (let at = 0; at < words.length; at += 1 + words[at]!) starts.push(at);
      return [{ fingerprints, keys, words, starts }];
    });
    const order = parts.flatMap((part, p) => part.starts.map((_, i) => [p, i] as const));
    const keyOf = ([p, i]: readonly [number, number], k: number) => parts[p]!.keys[2 * i + k]!;
    order.sort((a, b) => keyOf(a, 0) - keyOf(b, 0) || keyOf(a, 1) - keyOf(b, 1));
    for (const [p, i] of order) {
      const { fingerprints, keys, words, starts } = parts[p]!;
      met.add(fingerprints[2 * i]!, fingerprints[2 * i + 1]!);
      trail.push(keys[2 * i]!);
      trail.push(keys[2 * i + 1]!);
      const at = starts[i]!;
      states.push(model.unpack!(words.subarray(at + 1, at + 1 + words[at]!)));
    }
  }
  return { states, trail: trail.take() };
}

export interface Owned {
  /** The fingerprints of the shard's new states: they enter its part of the visited set. */
  readonly winners: Int32Array;
  /** The shard's new states per group, in key order (levelSuccessors), groups ascending. */
  readonly pieces: readonly { readonly group: number; readonly states: Int32Array }[];
  /** (group, count) pairs, as OwnAnswer.groups. */
  readonly groups: number[];
}

/** Of the successors a shard received, in job order, each fingerprint at its first sight, grouped by its parent's block. */
export function own(batches: readonly Int32Array[], parentsPerBlock: number): Owned {
  let total = 0;
  for (const batch of batches) total += batch[0]!;
  const seen = new VisitedSet(Math.max(total, 16) * 2);
  const winners = new IntList(total * 2);
  const pieces: { group: number; states: Int32Array }[] = [];
  const groups: number[] = [];
  let group = -1;
  let fingerprints = new IntList(16);
  let keys = new IntList(16);
  let words = new IntList(16);
  const flush = (): void => {
    if (keys.length === 0) return;
    pieces.push({ group, states: levelSuccessors(fingerprints.take(), keys.take(), words.take()) });
    groups.push(group, keys.length / 2);
    fingerprints = new IntList(16);
    keys = new IntList(16);
    words = new IntList(16);
  };
  for (const batch of batches) {
    const parts = successorParts(batch);
    let c = 0;
    eachPacked(parts.states, (state) => {
      const high = parts.fingerprints[2 * c]!;
      const low = parts.fingerprints[2 * c + 1]!;
      const parent = parts.keys[2 * c]!;
      const action = parts.keys[2 * c + 1]!;
      c++;
      if (!seen.add(high, low)) return;
      const g = groupOf(parent, parentsPerBlock);
      if (g !== group) {
        flush();
        group = g;
      }
      winners.push(high);
      winners.push(low);
      fingerprints.push(high);
      fingerprints.push(low);
      keys.push(parent);
      keys.push(action);
      words.pushPacked(state, state.length);
    });
  }
  flush();
  return { winners: winners.take(), pieces, groups };
}
