// A chunk of a breadth-first level on a walker thread, in two steps around the worker's look at
// the visited set in Redis. expand: the chunk's states in position order, each one's successors
// in action order, which is the order one machine meets them; a successor met before in this
// chunk (or one of the chunk's own states) is dropped here, so that each fingerprint keeps its
// least key (parent position, action index). settle: of the successors the visited set did not
// hold, the invariants are checked and the states packed for the answer (jobs.ts).
import type { Model } from '../engine/model.ts';
import { PACK_WORDS } from '../engine/model.ts';
import { IntList, eachPacked } from '../engine/int-list.ts';
import { type Emit, brokenInvariant, stateFingerprint, successorsOf } from '../engine/search.ts';
import { VisitedSet } from '../engine/visited.ts';
import { levelSuccessors } from './jobs.ts';

export interface ExpandRequest {
  readonly deadlockAllowed: boolean;
  readonly firstPosition: number;
  readonly cut: boolean;
  /** Packed words, each state's preceded by its length. */
  readonly states: Int32Array;
  /** One Int32: non-zero asks the expansion to stop (the process got a signal). */
  readonly stop: SharedArrayBuffer;
}

export interface Expanded {
  /** The expansion stopped on a signal: nothing else is set. */
  readonly stopped: boolean;
  /** The chunk's own states' fingerprints, (high, low) pairs: they enter the visited set. */
  readonly own: Int32Array;
  /** The successors' fingerprints, one per fingerprint, in key order. */
  readonly candidates: Int32Array;
  readonly statesGenerated: number;
  /** Successors per action kind. */
  readonly fired: Readonly<Record<string, number>>;
  readonly deadlock: number;
  readonly cutOff: boolean;
}

export interface Settled {
  /** As levelSuccessors joins them. */
  readonly successors: Int32Array;
  readonly violation?: { readonly index: number; readonly property: string };
}

/** States between two looks at the stop flag. */
const STOP_EVERY = 64;

/** One thread's chunk under way: what `expand` found, for `settle`. */
export class LevelChunk<S> {
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
    const stop = new Int32Array(request.stop);
    const states = unpacked(model, request.states);
    this.candidates = [];
    this.keys = new IntList();
    this.fingerprints = new IntList();
    const met = new VisitedSet(states.length * 4);
    const own = new IntList(states.length * 2);
    for (const s of states) {
      this.fingerprintOf(s, fingerprint);
      met.add(fingerprint[0]!, fingerprint[1]!);
      own.push(fingerprint[0]!);
      own.push(fingerprint[1]!);
    }
    const fired = model.actionKinds.map(() => 0);
    const firedByKind = () => Object.fromEntries(model.actionKinds.map((kind, k) => [kind, fired[k]!]));
    let statesGenerated = 0;
    let deadlock = -1;
    let cutOff = false;
    let emitted = 0;
    let parent = 0;
    const emit = (t: S, action: number, kind: number): void => {
      emitted++;
      fired[kind]!++;
      this.fingerprintOf(t, fingerprint);
      if (!met.add(fingerprint[0]!, fingerprint[1]!)) return;
      this.candidates.push(t);
      this.keys.push(parent);
      this.keys.push(action);
      this.fingerprints.push(fingerprint[0]!);
      this.fingerprints.push(fingerprint[1]!);
    };
    const countOnly = (): void => void emitted++;
    for (let i = 0; i < states.length; i++) {
      if (i % STOP_EVERY === 0 && Atomics.load(stop, 0) !== 0)
        return {
          stopped: true,
          own: new Int32Array(0),
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
      own: own.take(),
      candidates: this.fingerprints.take(),
      statesGenerated,
      fired: firedByKind(),
      deadlock,
      cutOff,
    };
  }

  /** The candidates `fresh` marks (1: not in the visited set), packed, with the first that breaks an invariant. */
  settle(fresh: Uint8Array): Settled {
    const fingerprints = new IntList();
    const keys = new IntList();
    const states = new IntList();
    let violation: Settled['violation'];
    let kept = 0;
    for (let c = 0; c < this.candidates.length; c++) {
      if (fresh[c] === 0) continue;
      const t = this.candidates[c]!;
      if (violation === undefined) {
        const broken = brokenInvariant(this.model, t);
        if (broken !== undefined) violation = { index: kept, property: broken };
      }
      fingerprints.push(this.fingerprints.get(2 * c));
      fingerprints.push(this.fingerprints.get(2 * c + 1));
      keys.push(this.keys.get(2 * c));
      keys.push(this.keys.get(2 * c + 1));
      states.pushPacked(this.words, this.model.pack!(t, this.words));
      kept++;
    }
    this.candidates = [];
    return {
      successors: levelSuccessors(fingerprints.take(), keys.take(), states.take()),
      ...(violation === undefined ? {} : { violation }),
    };
  }
}

/** The states of packed words, each state's preceded by its length. */
export function unpacked<S>(model: Model<S, unknown>, words: Int32Array): S[] {
  const states: S[] = [];
  eachPacked(words, (state) => states.push(model.unpack!(state)));
  return states;
}
