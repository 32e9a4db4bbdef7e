// The work of a breadth-first run's jobs on a walker thread (see bfs-coordinator.ts).
//
// An expand job, in two steps around the worker's look at the visited set. expand: the job's
// states, gathered from the shards group by group and put in key order, which is their order on
// one machine; then each one's successors in action order, the order one machine meets them. A
// successor met before in this job is dropped here, so that each fingerprint the job keeps has
// its least key in the job (parent position, action index); its invariants are checked then, and
// only its packed words are kept, so that the states die young, as on one machine. settle: the
// successors the visited set did not hold are split by owning shard, their fingerprints and keys
// for its inbox and their words per group beside it, and the first of them that breaks an
// invariant is noted.
//
// An own job: the successors a shard received for a level, taken in job order, each fingerprint
// kept at its first sight. Jobs hold consecutive positions and each job's successors are in key
// order, so the first sight of a fingerprint is its least key over the whole level. The winners
// are kept per group as indices into the words their jobs sent, which stay where they are.
import { IntList } from '../engine/int-list.ts';
import type { Model } from '../engine/model.ts';
import { PACK_WORDS } from '../engine/model.ts';
import {
  type Emit,
  type PackedWords,
  brokenInvariant,
  stateFingerprint,
  successorsOf,
} from '../engine/search.ts';
import { VisitedSet } from '../engine/visited.ts';
import { GROUPS_PER_JOB, groupOf, inboxParts, parentsPerBlock, winnersOf, winnersParts } from './jobs.ts';
import { shardOf } from './visited-shards.ts';

export interface ExpandRequest {
  readonly deadlockAllowed: boolean;
  /** Level -1: the job discovers the initial states. */
  readonly init: boolean;
  readonly job: number;
  readonly firstPosition: number;
  /** How many states the groups hold. */
  readonly states: number;
  readonly cut: boolean;
  readonly shards: number;
  /** Per group of the job in order, per shard: the shard's winnersOf of the group, or null when it has none. */
  readonly winners: readonly (Int32Array | null)[];
  /** The same for the words of the group's successors sent to the shard. */
  readonly words: readonly (Int32Array | null)[];
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
  /** Per shard: what the job sends its inbox (inboxParts; empty when nothing). */
  readonly inboxes: Int32Array[];
  /** The words of each group's successors sent to each shard, in key order, where there are some. */
  readonly words: { readonly shard: number; readonly group: number; readonly states: Int32Array }[];
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
  /** The words the fingerprint packed a state into: its own, or length 0 when they were another representative's. */
  private readonly packed: PackedWords = { words: new Int32Array(PACK_WORDS), length: 0 };
  private request: ExpandRequest | undefined;
  // Kept from job to job: a new list per job would be collected as often as the jobs come.
  private readonly keys = new IntList();
  private readonly fingerprints = new IntList();
  /** Each candidate's packed words, its length first. */
  private readonly words = new IntList(1 << 16);
  /** The candidates that break an invariant, with the first they break. */
  private broken = new Map<number, string>();

  constructor(private readonly model: Model<S, unknown>) {
    this.fingerprintOf = stateFingerprint(model, this.packed);
    this.successors = successorsOf(model);
  }

  expand(request: ExpandRequest): Expanded {
    const { model, fingerprint, packed } = this;
    this.request = request;
    this.keys.clear();
    this.fingerprints.clear();
    this.words.clear();
    this.broken = new Map();
    const words = new Int32Array(PACK_WORDS);
    const fired = model.actionKinds.map(() => 0);
    const firedByKind = () => Object.fromEntries(model.actionKinds.map((kind, k) => [kind, fired[k]!]));
    const met = new VisitedSet(Math.max(request.states, 16) * 4);
    const keep = (t: S, parent: number, action: number): void => {
      this.fingerprintOf(t, fingerprint);
      if (!met.add(fingerprint[0]!, fingerprint[1]!)) return;
      const broken = brokenInvariant(model, t);
      if (broken !== undefined) this.broken.set(this.keys.length / 2, broken);
      this.keys.push(parent);
      this.keys.push(action);
      this.fingerprints.push(fingerprint[0]!);
      this.fingerprints.push(fingerprint[1]!);
      if (packed.length > 0) this.words.pushPacked(packed.words, packed.length);
      else this.words.pushPacked(words, model.pack!(t, words));
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
    const { states, trail } = gathered(request);
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
      this.successors(model.unpack!(states[i]!), request.cut ? countOnly : emit);
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

  /** The candidates `fresh` marks (1: not in the visited set), split by owning shard, with the first that breaks an invariant. */
  settle(fresh: Uint8Array): Settled {
    const { job, firstPosition, shards, states } = this.request!;
    const perBlock = parentsPerBlock(states);
    const { keys, fingerprints, words } = this;
    // Where each candidate's words start, its shard and block (-1 when not fresh); then each
    // list's size, so that each is made once at its size.
    const starts = new Int32Array(fresh.length);
    const lists = new Int32Array(fresh.length);
    const sent = new Array<number>(shards).fill(0);
    const sizes = new Int32Array(shards * GROUPS_PER_JOB);
    let violation: Settled['violation'];
    for (let c = 0, at = 0; c < fresh.length; c++) {
      const length = words.get(at);
      starts[c] = at;
      at += 1 + length;
      if (fresh[c] === 0) {
        lists[c] = -1;
        continue;
      }
      const parent = keys.get(2 * c);
      const broken = this.broken.get(c);
      if (violation === undefined && broken !== undefined)
        violation = { parent, action: keys.get(2 * c + 1), property: broken };
      const shard = shardOf(fingerprints.get(2 * c), shards);
      const list =
        shard * GROUPS_PER_JOB + groupOf(job, firstPosition, perBlock, parent) - job * GROUPS_PER_JOB;
      lists[c] = list;
      sent[shard]!++;
      sizes[list] = sizes[list]! + 1 + length;
    }
    const inboxes = sent.map((n) => {
      const batch = new Int32Array(n === 0 ? 0 : 4 + 4 * n);
      if (n > 0) batch.set([n, job, firstPosition, perBlock]);
      return batch;
    });
    const sentWords = Array.from(sizes, (size) => new Int32Array(size));
    const filled = new Int32Array(shards);
    const used = new Int32Array(sizes.length);
    for (let c = 0; c < fresh.length; c++) {
      const list = lists[c]!;
      if (list < 0) continue;
      const shard = Math.floor(list / GROUPS_PER_JOB);
      const batch = inboxes[shard]!;
      const n = batch[0]!;
      const i = filled[shard]!++;
      batch[4 + 2 * i] = fingerprints.get(2 * c);
      batch[4 + 2 * i + 1] = fingerprints.get(2 * c + 1);
      batch[4 + 2 * n + 2 * i] = keys.get(2 * c);
      batch[4 + 2 * n + 2 * i + 1] = keys.get(2 * c + 1);
      const from = starts[c]!;
      const length = 1 + words.get(from);
      sentWords[list]!.set(words.subarray(from, from + length), used[list]!);
      used[list] = used[list]! + length;
    }
    this.broken = new Map();
    return {
      inboxes,
      words: sentWords.flatMap((states, list) =>
        states.length === 0
          ? []
          : [
              {
                shard: Math.floor(list / GROUPS_PER_JOB),
                group: job * GROUPS_PER_JOB + (list % GROUPS_PER_JOB),
                states,
              },
            ],
      ),
      sent,
      ...(violation === undefined ? {} : { violation }),
    };
  }
}

/** The packed words of the job's states in key order (their order on one machine), and their keys. */
function gathered(request: ExpandRequest): { states: Int32Array[]; trail: Int32Array } {
  const states: Int32Array[] = [];
  const trail = new Int32Array(request.states * 2);
  const { shards } = request;
  for (let g = 0; g < request.winners.length; g += shards) {
    const parts: { keys: Int32Array; indices: Int32Array; words: Int32Array; starts: number[] }[] = [];
    for (let shard = 0; shard < shards; shard++) {
      const winners = request.winners[g + shard];
      if (winners === null || winners === undefined) continue;
      const words = request.words[g + shard];
      if (words === null || words === undefined)
        throw new Error(`the words of a group are gone from Redis: its level is gone`);
      const starts: number[] = [];
      for (let at = 0; at < words.length; at += 1 + words[at]!) starts.push(at);
      parts.push({ ...winnersParts(winners), words, starts });
    }
    const order = parts.flatMap((part, p) => Array.from(part.indices, (_, i) => [p, i] as const));
    const keyOf = ([p, i]: readonly [number, number], k: number) => parts[p]!.keys[2 * i + k]!;
    order.sort((a, b) => keyOf(a, 0) - keyOf(b, 0) || keyOf(a, 1) - keyOf(b, 1));
    for (const [p, i] of order) {
      const { keys, indices, words, starts } = parts[p]!;
      trail[2 * states.length] = keys[2 * i]!;
      trail[2 * states.length + 1] = keys[2 * i + 1]!;
      const at = starts[indices[i]!]!;
      states.push(words.subarray(at + 1, at + 1 + words[at]!));
    }
  }
  return { states, trail: trail.subarray(0, 2 * states.length) };
}

export interface Owned {
  /** The fingerprints of the shard's new states: they enter its part of the visited set. */
  readonly fingerprints: Int32Array;
  /** The shard's winnersOf per group, groups ascending. */
  readonly pieces: readonly { readonly group: number; readonly winners: Int32Array }[];
  /** (group, count) pairs, as OwnAnswer.groups. */
  readonly groups: number[];
}

/** Of what a shard's inbox received (inboxParts), in job order, each fingerprint at its first sight, per group. */
export function own(batches: readonly Int32Array[]): Owned {
  let total = 0;
  for (const batch of batches) total += batch[0]!;
  const seen = new VisitedSet(Math.max(total, 16) * 2);
  const fingerprints = new IntList(Math.max(total, 16) * 2);
  const pieces: { group: number; winners: Int32Array }[] = [];
  const groups: number[] = [];
  let group = -1;
  /** The index of the next successor of `group` among those sent. */
  let index = 0;
  let indices = new IntList(16);
  let keys = new IntList(16);
  const flush = (): void => {
    if (indices.length > 0) {
      pieces.push({ group, winners: winnersOf(indices.take(), keys.take()) });
      groups.push(group, indices.length);
    }
    indices = new IntList(16);
    keys = new IntList(16);
  };
  for (const batch of batches) {
    const { job, firstPosition, perBlock, fingerprints: sent, keys: sentKeys } = inboxParts(batch);
    for (let c = 0; c < sent.length / 2; c++) {
      const parent = sentKeys[2 * c]!;
      const g = groupOf(job, firstPosition, perBlock, parent);
      if (g !== group) {
        flush();
        group = g;
        index = 0;
      }
      const high = sent[2 * c]!;
      const low = sent[2 * c + 1]!;
      if (seen.add(high, low)) {
        fingerprints.push(high);
        fingerprints.push(low);
        indices.push(index);
        keys.push(parent);
        keys.push(sentKeys[2 * c + 1]!);
      }
      index++;
    }
  }
  flush();
  return { fingerprints: fingerprints.take(), pieces, groups };
}
