// Partial-order reduction for breadth-first safety checking: stubborn sets (Valmari) over the
// model's transition classes. A state expands only the enabled actions of a stubborn set T:
//   D1  an enabled class in T takes every class dependent on it into T, so nothing outside T
//       can fail to commute with it;
//   D2  a disabled class in T takes its necessary enabling set into T, so nothing outside T can
//       enable it (the model may name a narrower set that holds in the state);
//   V   an enabled visible class in T takes every visible class into T, so the steps left out
//       never change what an invariant reads (the reduced graph is stuttering equivalent to the
//       full one for the invariants, and it keeps every deadlock); a stable invariant needs no
//       visible class, since a step put off leads from a state that breaks it to one that does;
//   C3  breadth-first proviso: a reduced state whose kept successors include one already seen at
//       its own depth or before is expanded in full, so every cycle of the reduced graph passes a
//       fully expanded state and no action is postponed forever.
// The search checks C3 (it knows depths); this module builds T, which depends only on the set of
// enabled classes and the model's key for its narrowed enabling sets, so it is computed once per such pair.
import type { Independence, Model } from './model.ts';
import { type Emit, kindIndexOf, stateFingerprint } from './search.ts';
import { VisitedSet } from './visited.ts';

/** Distinct enabled-class sets remembered before the memo starts again. */
const MEMO_LIMIT = 1 << 16;

export class StubbornSets {
  private readonly memo = new Map<string, Uint8Array | null>();
  private readonly visibleClasses: readonly number[];

  constructor(private readonly independence: Independence<never, never>) {
    const { classes, dependent, enablers, visible } = independence;
    if (dependent.length !== classes || enablers.length !== classes || visible.length !== classes) {
      throw new Error(`independence: expected ${classes} entries in dependent, enablers and visible`);
    }
    for (const list of [...dependent, ...enablers]) {
      for (const c of list)
        if (!Number.isInteger(c) || c < 0 || c >= classes)
          throw new Error(`independence: class ${c} out of range 0..${classes - 1}`);
    }
    this.visibleClasses = visible.flatMap((v, c) => (v ? [c] : []));
  }

  /**
   * Per class, 1 when its enabled actions are to be expanded; null when the stubborn set holds
   * every enabled action, so there is nothing to postpone. `enabled` lists the class of each enabled
   * action; `narrowKey` names the narrowed enabling sets of the state (`Independence.narrowed`).
   */
  choose(enabled: ArrayLike<number>, narrowKey = ''): Uint8Array | null {
    // The distinct classes in order, one character each: the memo's key is built on every state.
    const sorted = Array.from(enabled).sort((a, b) => a - b);
    const distinct = sorted.filter((c, i) => i === 0 || c !== sorted[i - 1]);
    const key = `${narrowKey}|${String.fromCharCode(...distinct)}`;
    const known = this.memo.get(key);
    if (known !== undefined) return known;
    if (this.memo.size >= MEMO_LIMIT) this.memo.clear();
    const chosen = this.smallest(distinct, narrowKey);
    this.memo.set(key, chosen);
    return chosen;
  }

  /** The stubborn set with the fewest enabled classes over every enabled seed (the first such seed on ties). */
  private smallest(enabledClasses: readonly number[], narrowKey: string): Uint8Array | null {
    const { classes, dependent, visible, narrowed } = this.independence;
    const narrowedEnablers = narrowed?.enablers(narrowKey);
    const enablers = (c: number): readonly number[] =>
      narrowedEnablers?.[c] ?? this.independence.enablers[c]!;
    const isEnabled = new Uint8Array(classes);
    for (const c of enabledClasses) isEnabled[c] = 1;
    let best: Uint8Array | null = null;
    let bestCount = enabledClasses.length;
    for (const seed of enabledClasses) {
      const inSet = new Uint8Array(classes);
      const work = [seed];
      inSet[seed] = 1;
      let count = 0;
      let visibleTaken = false;
      const take = (c: number): void => {
        if (inSet[c] === 0) {
          inSet[c] = 1;
          work.push(c);
        }
      };
      while (work.length > 0 && count < bestCount) {
        const c = work.pop()!;
        if (isEnabled[c] === 0) {
          for (const e of enablers(c)) take(e);
          continue;
        }
        count++;
        for (const d of dependent[c]!) take(d);
        if (visible[c] && !visibleTaken) {
          visibleTaken = true;
          for (const v of this.visibleClasses) take(v);
        }
      }
      if (count < bestCount) {
        bestCount = count;
        best = inSet;
      }
    }
    return best;
  }
}

/**
 * The stubborn-set half of a reduced breadth-first search: which successors a state keeps, and the
 * proviso, which needs to know whether a successor was first seen in the level being built.
 */
export class Reducer<S, A> {
  reducedStates = 0;
  private readonly sets: StubbornSets;
  private readonly fingerprintOf: (s: S, out: Int32Array) => void;
  private readonly probe = new Int32Array(2);
  private readonly kindOf: (a: A) => number;
  private nextLevel = new VisitedSet();

  constructor(private readonly model: Model<S, A>) {
    if (model.independence === undefined)
      throw new Error('partial-order reduction needs the model to describe its independence');
    this.sets = new StubbornSets(model.independence as never);
    this.fingerprintOf = stateFingerprint(model);
    this.kindOf = kindIndexOf(model);
  }

  startLevel(): void {
    this.nextLevel = new VisitedSet();
  }

  snapshot(): { table: Int32Array; count: number } {
    return this.nextLevel.snapshot();
  }

  restore(table: Int32Array, count: number, reducedStates: number): void {
    if (table.length > 0) this.nextLevel = VisitedSet.restore(table, count);
    this.reducedStates = reducedStates;
  }

  seenInNextLevel(fingerprint: Int32Array): void {
    this.nextLevel.add(fingerprint[0]!, fingerprint[1]!);
  }

  /** Emits the successors a stubborn set of `s` keeps; false, having emitted nothing, when `s` must be expanded in full. */
  expand(s: S, visited: VisitedSet, emit: Emit<S>): boolean {
    const kept = this.keptSuccessors(s, visited);
    if (kept === undefined) return false;
    for (const { state, action, kind } of kept) emit(state, action, kind);
    return true;
  }

  /**
   * The successors by the actions of a stubborn set of `s`, or undefined when `s` must be
   * expanded in full: the set holds every enabled action, or (C3) one of its successors was seen
   * at the depth of `s` or before.
   */
  keptSuccessors(s: S, visited: VisitedSet): { state: S; action: number; kind: number }[] | undefined {
    const actions = this.model.actions(s);
    const independence = this.model.independence!;
    const classes = actions.map((a) => independence.classOf(a));
    const chosen = this.sets.choose(classes, independence.narrowed?.key(s));
    if (chosen === null) return undefined;
    const kept: { state: S; action: number; kind: number }[] = [];
    for (let i = 0; i < actions.length; i++) {
      if (chosen[classes[i]!] === 0) continue;
      const t = this.model.next(s, actions[i]!);
      this.fingerprintOf(t, this.probe);
      if (visited.has(this.probe[0]!, this.probe[1]!) && !this.nextLevel.has(this.probe[0]!, this.probe[1]!))
        return undefined;
      kept.push({ state: t, action: i, kind: this.kindOf(actions[i]!) });
    }
    this.reducedStates++;
    return kept;
  }
}
