// What every search strategy shares: options, the result, coverage counts, the clock that
// enforces the time limit and paces progress reports, the visited set, and the trace rebuild.
import { fingerprintInto, fingerprintWords } from './fingerprint.ts';
import { PACK_WORDS, type Model } from './model.ts';
import { VisitedSet } from './visited.ts';

/** The name under which a reachable state without enabled actions is reported. */
export const DEADLOCK = 'Deadlock';

export type Status = 'ok' | 'violation' | 'incomplete';
/** What stopped a search before it could claim anything: a bound, (random) the walk count, or a request to stop. */
export type Limit = 'maxStates' | 'maxDepth' | 'maxSeconds' | 'walks' | 'signal';

export interface Trace {
  /** The states from an initial state to the last one, in the model's own representation. */
  readonly states: readonly unknown[];
  /** The label of the action between `states[i]` and `states[i + 1]`. */
  readonly actions: readonly string[];
}

export interface Violation {
  /** An invariant's name, or DEADLOCK. */
  readonly property: string;
  readonly trace: Trace;
  /** Random search only: the walk that found it. */
  readonly walk?: number;
}

export interface Coverage {
  /** Per action kind, how many successors it produced. */
  readonly fired: Readonly<Record<string, number>>;
  readonly neverFired: readonly string[];
}

export interface Result {
  readonly status: Status;
  readonly distinctStates: number;
  /** Initial states plus every successor computed, duplicates included (as TLC counts). */
  readonly statesGenerated: number;
  /** The most actions from an initial state to a reached state. */
  readonly depth: number;
  readonly seconds: number;
  readonly coverage: Coverage;
  readonly violation?: Violation;
  /** Set when status is incomplete. */
  readonly stoppedBy?: Limit;
  /** Bytes of the visited set, and of what is kept per state to rebuild traces. */
  readonly memory?: { readonly visitedBytes: number; readonly traceBytes: number };
}

export interface Progress {
  readonly distinctStates: number;
  readonly statesGenerated: number;
  readonly queue: number;
  readonly depth: number;
  readonly seconds: number;
  readonly statesPerSecond: number;
}

export interface SearchOptions {
  /** True when a state without enabled actions is fine. */
  readonly deadlockAllowed: boolean;
  readonly maxStates?: number;
  readonly maxDepth?: number;
  readonly maxSeconds?: number;
  readonly onProgress?: (p: Progress) => void;
  /** The least time between two progress reports. */
  readonly progressEveryMs?: number;
  /** The clock, in milliseconds (default performance.now); a test can pass a simulated one. */
  readonly now?: () => number;
  /** A flag, shared across threads (Int32Array over a SharedArrayBuffer): non-zero asks the search to stop. */
  readonly stop?: Int32Array;
  /** The set to record visited states in (default: a new one); a swarm walker reads it back. */
  readonly visited?: VisitedSet;
}

class CoverageCounter<A> {
  private readonly counts: number[];
  private readonly indexOfKind = new Map<string, number>();

  constructor(private readonly model: Model<unknown, A>) {
    model.actionKinds.forEach((kind, i) => this.indexOfKind.set(kind, i));
    this.counts = model.actionKinds.map(() => 0);
  }

  fired(action: A): void {
    const kind = this.model.kind(action);
    const i = this.indexOfKind.get(kind);
    if (i === undefined) throw new Error(`action kind ${JSON.stringify(kind)} is not among the model's actionKinds`);
    this.counts[i]!++;
  }

  /** Counts one successor of the kind `actionKinds[kind]`. */
  firedKind(kind: number): void {
    this.counts[kind]!++;
  }

  /** Adds counts made elsewhere, in the order of actionKinds. */
  add(counts: readonly number[]): void {
    counts.forEach((n, i) => (this.counts[i]! += n));
  }

  get raw(): readonly number[] {
    return this.counts;
  }

  result(): Coverage {
    const fired: Record<string, number> = {};
    this.model.actionKinds.forEach((kind, i) => (fired[kind] = this.counts[i]!));
    return { fired, neverFired: this.model.actionKinds.filter((_, i) => this.counts[i] === 0) };
  }
}

class Clock {
  private readonly now: () => number;
  private readonly start: number;
  private lastProgress: number;

  constructor(private readonly options: SearchOptions) {
    this.now = options.now ?? (() => performance.now());
    this.start = this.now();
    this.lastProgress = this.start;
  }

  get seconds(): number {
    return (this.now() - this.start) / 1000;
  }

  /** What stops the search now (the time limit, or a request to stop), if anything; reports progress when it is due. */
  check(progress: () => Omit<Progress, 'seconds' | 'statesPerSecond'>): 'maxSeconds' | 'signal' | undefined {
    const now = this.now();
    const { onProgress, progressEveryMs = 1000, maxSeconds, stop } = this.options;
    if (onProgress !== undefined && now - this.lastProgress >= progressEveryMs) {
      this.lastProgress = now;
      const p = progress();
      const seconds = (now - this.start) / 1000;
      onProgress({ ...p, seconds, statesPerSecond: seconds > 0 ? p.statesGenerated / seconds : 0 });
    }
    if (stop !== undefined && Atomics.load(stop, 0) !== 0) return 'signal';
    return maxSeconds !== undefined && now - this.start >= maxSeconds * 1000 ? 'maxSeconds' : undefined;
  }
}

export const Discovery = { Seen: 0, New: 1, OverLimit: 2 } as const;
export type Discovery = (typeof Discovery)[keyof typeof Discovery];

/** The bookkeeping of one search: visited fingerprints, counts, coverage and the clock. */
export class SearchRun<S, A> {
  readonly clock: Clock;
  readonly coverage: CoverageCounter<A>;
  readonly visited: VisitedSet;
  statesGenerated = 0;
  depth = 0;
  /** The last fingerprint `discover` computed: (high, low). */
  readonly fingerprint = new Int32Array(2);
  private readonly fingerprintOf: (s: S, out: Int32Array) => void;
  private readonly maxStates: number;

  constructor(
    readonly model: Model<S, A>,
    options: SearchOptions,
  ) {
    this.clock = new Clock(options);
    this.visited = options.visited ?? new VisitedSet();
    this.coverage = new CoverageCounter(model);
    this.maxStates = options.maxStates ?? Infinity;
    this.fingerprintOf = stateFingerprint(model);
  }

  get distinctStates(): number {
    return this.visited.size;
  }

  /** Records `s` as visited when it is new, unless the distinct-state limit is reached. */
  discover(s: S): Discovery {
    const fingerprint = this.fingerprint;
    this.fingerprintOf(s, fingerprint);
    if (this.visited.size >= this.maxStates) {
      return this.visited.has(fingerprint[0]!, fingerprint[1]!) ? Discovery.Seen : Discovery.OverLimit;
    }
    return this.visited.add(fingerprint[0]!, fingerprint[1]!) ? Discovery.New : Discovery.Seen;
  }

  progress(queue: number): Omit<Progress, 'seconds' | 'statesPerSecond'> {
    return { distinctStates: this.distinctStates, statesGenerated: this.statesGenerated, queue, depth: this.depth };
  }

  finish(status: Status, extra: Pick<Result, 'violation' | 'stoppedBy' | 'memory'> = {}): Result {
    return {
      status,
      distinctStates: this.distinctStates,
      statesGenerated: this.statesGenerated,
      depth: this.depth,
      seconds: this.clock.seconds,
      coverage: this.coverage.result(),
      ...extra,
    };
  }
}

/**
 * The fingerprint function of `model`'s states: of the canonical representative under symmetry,
 * over the packed words when the model packs its states.
 */
export function stateFingerprint<S>(model: Model<S, unknown>): (s: S, out: Int32Array) => void {
  const m = model as Required<Model<S, unknown>>;
  if (model.pack !== undefined) {
    const words = new Int32Array(PACK_WORDS);
    return model.canonical === undefined
      ? (s, out) => fingerprintWords(words, m.pack(s, words), out)
      : (s, out) => fingerprintWords(words, m.pack(m.canonical(s), words), out);
  }
  return model.canonical === undefined ? (s, out) => fingerprintInto(s, out) : (s, out) => fingerprintInto(m.canonical(s), out);
}

export type Emit<S> = (t: S, action: number, kind: number) => void;

/** `model.successors`, or the same built from `actions` and `next` when the model has no fast path. */
export function successorsOf<S, A>(model: Model<S, A>): (s: S, emit: Emit<S>) => void {
  if (model.successors !== undefined) return (s, emit) => model.successors!(s, emit);
  const indexOfKind = new Map(model.actionKinds.map((kind, i) => [kind, i]));
  return (s, emit) => {
    const actions = model.actions(s);
    for (let j = 0; j < actions.length; j++) {
      const kind = indexOfKind.get(model.kind(actions[j]!));
      if (kind === undefined) throw new Error(`action kind ${JSON.stringify(model.kind(actions[j]!))} is not among the model's actionKinds`);
      emit(model.next(s, actions[j]!), j, kind);
    }
  };
}

/** The name of the first invariant `s` breaks, if any. */
export function brokenInvariant<S>(model: Model<S, unknown>, s: S): string | undefined {
  for (const p of model.invariants) if (!p.holds(s)) return p.name;
  return undefined;
}

/** Re-runs recorded action indices from the initial state `initIndex`. */
export function rebuildTrace<S, A>(model: Model<S, A>, initIndex: number, actionIndices: readonly number[]): Trace {
  let s: S = model.init()[initIndex]!;
  const states: S[] = [s];
  const actions: string[] = [];
  for (const index of actionIndices) {
    const action = model.actions(s)[index];
    if (action === undefined) throw new Error(`trace rebuild: action ${index} is not enabled; is the model deterministic?`);
    actions.push(model.label(action));
    s = model.next(s, action);
    states.push(s);
  }
  return { states, actions };
}

