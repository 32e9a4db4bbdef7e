// Sleep sets (Godefroid) for breadth-first search: fewer transitions, the same states. When a
// state s has explored action a and then explores an action b independent of a, the state s·b
// need not take a, since s·b·a = s·a·b is reached from s·a. So each state waits with a sleep
// set: actions it need not take, each independent of the step that reached it. A state reached
// several times in its level keeps the intersection of the sets it was reached with; reaching it
// again from a deeper level changes nothing. Then every state is still discovered, at its
// breadth-first depth: the distinct states, the depth, the invariants' verdicts and the length of
// the shortest counterexample are those of the full search, with fewer successors computed.
// (Why a deeper arrival can be ignored: a slept action a of x entered some ancestor r's set as
// an action r explored before the step towards x; from r·a the same steps lead to x·a, and each
// such step either wakes at its state or was slept there by an action that entered later, so by
// induction on where the sleeping entered every state at depth d is made at level d.)
//
// Action identity across states comes from the model (`Independence.key`); two actions of one
// class are taken as dependent, as the independence relation only speaks of distinct classes.
import { FingerprintMap } from './fingerprint-map.ts';
import type { Model } from './model.ts';
import { type Emit, kindIndexOf } from './search.ts';

/** Sleep sets by index (of one level's states, say): keys in one growing list. */
export class SetList {
  private keys = new Float64Array(1 << 12);
  private used = 0;
  private start: Int32Array = new Int32Array(1 << 10);
  private size: Int32Array = new Int32Array(1 << 10);
  length = 0;

  clear(): void {
    this.used = 0;
    this.length = 0;
  }

  push(keys: Float64Array, n: number): void {
    if (this.length === this.start.length) {
      this.start = grown(this.start, this.length + 1);
      this.size = grown(this.size, this.length + 1);
    }
    if (this.used + n > this.keys.length) {
      const bigger = new Float64Array(Math.max(this.used + n, 2 * this.keys.length));
      bigger.set(this.keys.subarray(0, this.used));
      this.keys = bigger;
    }
    // A loop, not set(subarray): most sets hold a few keys, and a view per state is garbage.
    for (let k = 0; k < n; k++) this.keys[this.used + k] = keys[k]!;
    this.start[this.length] = this.used;
    this.size[this.length++] = n;
    this.used += n;
  }

  /** How many keys set i holds. */
  sizeOf(i: number): number {
    return this.size[i]!;
  }

  /** The k-th key of set i. */
  keyOf(i: number, k: number): number {
    return this.keys[this.start[i]! + k]!;
  }

  /** Set i keeps only the keys that are also among the first `n` of `keys`. */
  intersect(i: number, keys: Float64Array, n: number): void {
    const from = this.start[i]!;
    let kept = 0;
    for (let k = 0; k < this.size[i]!; k++) {
      const key = this.keys[from + k]!;
      for (let j = 0; j < n; j++)
        if (keys[j] === key) {
          this.keys[from + kept++] = key;
          break;
        }
    }
    this.size[i] = kept;
  }

  /** Appends a copy of set j of `from`. */
  pushSet(from: SetList, j: number): void {
    this.push(from.keys.subarray(from.start[j]!), from.size[j]!);
  }

  /** Set i keeps only the keys also in set j of `from`. */
  intersectSet(i: number, from: SetList, j: number): void {
    this.intersect(i, from.keys.subarray(from.start[j]!), from.size[j]!);
  }

  /** The sets `indices` names (all, in order, when none), as one list of size, then keys, per set: for another thread. */
  flatten(indices?: ArrayLike<number>): Float64Array {
    const count = indices?.length ?? this.length;
    const at = (x: number): number => (indices === undefined ? x : indices[x]!);
    let words = count;
    for (let x = 0; x < count; x++) words += this.size[at(x)]!;
    const flat = new Float64Array(words);
    let w = 0;
    for (let x = 0; x < count; x++) {
      const i = at(x);
      flat[w++] = this.size[i]!;
      for (let k = 0; k < this.size[i]!; k++) flat[w++] = this.keys[this.start[i]! + k]!;
    }
    return flat;
  }

  /** The sets of a list `flatten` made, in order. */
  static unflatten(flat: Float64Array): SetList {
    const list = new SetList();
    for (let w = 0; w < flat.length; w += 1 + flat[w]!) list.push(flat.subarray(w + 1), flat[w]!);
    return list;
  }
}

function grown(a: Int32Array, atLeast: number): Int32Array {
  const bigger = new Int32Array(Math.max(atLeast, 2 * a.length));
  bigger.set(a);
  return bigger;
}

/**
 * Expands a state by the actions its sleep set lets it take, and gives the set each successor
 * waits with (`pushPending`, `intersectPending`, right after the successor is emitted).
 */
export class SleepExpander<S, A> {
  /** independent[c * classes + d] = 1: distinct classes c and d commute and never disable each other. */
  private readonly independent: Uint8Array;
  private readonly classes: number;
  private readonly classOf: (a: A) => number;
  private readonly keyOf: (a: A) => number;
  private readonly kindOf: (a: A) => number;
  /** The set the successor just emitted would wait with. */
  private pending = new Float64Array(64);
  private pendingLength = 0;
  // Per enabled action of the state being expanded: its key, its class, whether it sleeps, and
  // the order the taken ones were taken in. Kept from state to state.
  private keys = new Float64Array(64);
  private actionClasses = new Int32Array(64);
  private asleep = new Uint8Array(64);
  private taken = new Int32Array(64);

  constructor(private readonly model: Model<S, A>) {
    const independence = model.independence;
    if (independence?.key === undefined)
      throw new Error('sleep sets need the model to describe its independence and action keys');
    const n = independence.classes;
    this.classes = n;
    this.independent = new Uint8Array(n * n).fill(1);
    for (let c = 0; c < n; c++) {
      this.independent[c * n + c] = 0;
      for (const d of independence.dependent[c]!) {
        this.independent[c * n + d] = 0;
        this.independent[d * n + c] = 0;
      }
    }
    this.classOf = (a) => independence.classOf(a);
    this.keyOf = (a) => independence.key!(a);
    this.kindOf = kindIndexOf(model);
  }

  /** The next successor emitted waits with an empty set (an initial state). */
  startEmpty(): void {
    this.pendingLength = 0;
  }

  /**
   * Emits the successors of `s`, whose sleep set is set `i` of `sets`, by the actions the set
   * lets it take, in the model's order. Returns how many enabled actions slept.
   */
  expand(s: S, sets: SetList, i: number, emit: Emit<S>): number {
    const { model, independent, classes: n } = this;
    const actions = model.actions(s);
    const count = actions.length;
    if (count > this.keys.length) this.makeRoom(count);
    const { keys, actionClasses: classes, asleep, taken } = this;
    for (let j = 0; j < count; j++) {
      keys[j] = this.keyOf(actions[j]!);
      classes[j] = this.classOf(actions[j]!);
      asleep[j] = 0;
    }
    // The enabled actions that sleep; a key no action has any more is dropped.
    for (let k = 0; k < sets.sizeOf(i); k++) {
      const key = sets.keyOf(i, k);
      for (let j = 0; j < count; j++)
        if (keys[j] === key) {
          asleep[j] = 1;
          break;
        }
    }
    let slept = 0;
    let takenCount = 0;
    for (let j = 0; j < count; j++) {
      if (asleep[j] === 1) {
        slept++;
        continue;
      }
      const c = classes[j]!;
      this.pendingLength = 0;
      for (let k = 0; k < count; k++)
        if (asleep[k] === 1 && independent[classes[k]! * n + c] === 1) this.addPending(keys[k]!);
      for (let t = 0; t < takenCount; t++) {
        const k = taken[t]!;
        if (independent[classes[k]! * n + c] === 1) this.addPending(keys[k]!);
      }
      taken[takenCount++] = j;
      emit(model.next(s, actions[j]!), j, this.kindOf(actions[j]!));
    }
    return slept;
  }

  /** Appends the set of the successor just emitted to `sets`. */
  pushPending(sets: SetList): void {
    sets.push(this.pending, this.pendingLength);
  }

  /** Set i of `sets` keeps only what the set of the successor just emitted holds too. */
  intersectPending(sets: SetList, i: number): void {
    sets.intersect(i, this.pending, this.pendingLength);
  }

  private makeRoom(count: number): void {
    this.keys = new Float64Array(count);
    this.actionClasses = new Int32Array(count);
    this.asleep = new Uint8Array(count);
    this.taken = new Int32Array(count);
  }

  private addPending(key: number): void {
    if (this.pendingLength === this.pending.length) {
      const bigger = new Float64Array(2 * this.pending.length);
      bigger.set(this.pending);
      this.pending = bigger;
    }
    this.pending[this.pendingLength++] = key;
  }
}

/** Sleep sets in the one-thread breadth-first search: a level's sets, and the next level's. */
export class SleepSets<S, A> {
  /** The sets of the level being expanded, and of the next level (aligned with its states). */
  private current = new SetList();
  private next = new SetList();
  /** Where each state of the next level is in it, to intersect its set when it is reached again. */
  private readonly nextIndex = new FingerprintMap();
  private readonly expander: SleepExpander<S, A>;

  constructor(model: Model<S, A>) {
    this.expander = new SleepExpander(model);
  }

  /** The initial states wait with empty sets; call once per initial state kept, in order. */
  keepInitial(): void {
    this.expander.startEmpty();
    this.expander.pushPending(this.current);
  }

  /** The next level becomes the current one. */
  advance(): void {
    [this.current, this.next] = [this.next, this.current];
    this.next.clear();
    this.nextIndex.clear();
  }

  /**
   * Emits the successors of `s`, the level's `i`-th state, by the actions its set lets it take,
   * in the model's order; after each, `keep` or `reachedAgain` says what became of it. Returns
   * how many enabled actions slept.
   */
  expand(s: S, i: number, emit: Emit<S>): number {
    return this.expander.expand(s, this.current, i, emit);
  }

  /** The successor just emitted is new: it waits in the next level with its set. */
  keep(fingerprint: Int32Array): void {
    this.nextIndex.set(fingerprint[0]!, fingerprint[1]!, this.next.length);
    this.expander.pushPending(this.next);
  }

  /** The successor just emitted was seen before: if it waits in the next level, its set shrinks to what both allow. */
  reachedAgain(fingerprint: Int32Array): void {
    const at = this.nextIndex.get(fingerprint[0]!, fingerprint[1]!);
    if (at !== -1) this.expander.intersectPending(this.next, at);
  }
}
