// What every search strategy shares: options, the result, coverage counts, the clock that
// enforces the time limit and paces progress reports, the visited set, and the trace rebuild.
import { freemem } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { Summary, fingerprintInto, fingerprintWords } from './fingerprint.ts';
import { PACK_WORDS, type Model } from './model.ts';
import { VisitedSet } from './visited.ts';

/** The name under which a reachable state without enabled actions is reported. */
export const DEADLOCK = 'Deadlock';

export type Status = 'ok' | 'violation' | 'incomplete';
/** What stopped a search before it could claim anything: a bound, (random) the walk count, or a request to stop. */
export type Limit = 'maxStates' | 'maxDepth' | 'maxSeconds' | 'maxMemory' | 'walks' | 'signal';

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
  /**
   * Bytes of the visited set, of what is kept per state to rebuild traces, and (breadth-first on
   * one thread, for a model that packs its states) the most the waiting levels took.
   */
  readonly memory?: {
    readonly visitedBytes: number;
    readonly traceBytes: number;
    readonly queueBytes?: number;
    readonly spilledBytes?: number;
    /** The most resident memory the process held: every thread and every list included. */
    readonly peakResidentBytes?: number;
  };
  /** With partial-order reduction: how many states expanded only a stubborn set of their actions. */
  readonly reducedStates?: number;
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
  /**
   * Megabytes of resident memory the process may use, every thread and the visited set included.
   * Whatever it says, a search stops before its heap is nearly full.
   */
  readonly maxMemory?: number;
  /** Memory in use and the heap's limit, in bytes (default: V8's and the process's figures); a test can pass its own. */
  readonly memory?: () => MemoryUse;
  /** A flag, shared across threads (Int32Array over a SharedArrayBuffer): non-zero asks the search to stop. */
  readonly stop?: Int32Array;
  /**
   * Breadth-first on one thread: write the search to `file` every `everySeconds` and when it stops
   * early (time, memory, a signal); `identity` names the spec and options, for the resume.
   */
  readonly checkpoint?: { readonly file: string; readonly everySeconds: number; readonly identity: string };
  /** Breadth-first on one thread: go on from the checkpoint in `file`, which must carry `identity`. */
  readonly resume?: { readonly file: string; readonly identity: string };
  /** Breadth-first on one thread: the waiting levels' packed words past this many bytes go to temporary files. */
  readonly spillBytes?: number;
  /** Breadth-first only: partial-order reduction with the model's `independence` (see reduction.ts). */
  readonly reduction?: boolean;
  /**
   * Breadth-first only: sleep sets (see sleep.ts) with the model's `independence` and its action
   * keys: the same states, fewer transitions. Not with `reduction`, a checkpoint or a resume.
   */
  readonly sleep?: boolean;
  /** The set to record visited states in (default: a new one); a swarm walker reads it back. */
  readonly visited?: VisitedSet;
}

class CoverageCounter<A> {
  private readonly counts: number[];
  private readonly kindOf: (a: A) => number;

  constructor(private readonly model: Model<unknown, A>) {
    this.kindOf = kindIndexOf(model);
    this.counts = model.actionKinds.map(() => 0);
  }

  fired(action: A): void {
    this.counts[this.kindOf(action)]!++;
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

export interface MemoryUse {
  /** The JS heap of this thread in use, and the size V8 lets it grow to. */
  readonly heapUsed: number;
  readonly heapLimit: number;
  /** The resident memory of the process: every thread, typed arrays (visited sets, trails, packed frontiers) included. */
  readonly rss: number;
}

/**
 * V8's heap_size_limit counts the young generation's reservation too (three 16 MB semi-spaces on
 * 64-bit); the old generation, where a search's data lives, gets the rest (--max-old-space-size).
 */
const YOUNG_GENERATION_BYTES = 48 * 2 ** 20;

/** The most resident memory the process has held so far. */
export function peakResident(): number {
  return process.resourceUsage().maxRSS * 1024;
}

export function memoryInUse(): MemoryUse {
  const heap = getHeapStatistics();
  const heapLimit = Math.max(heap.heap_size_limit / 2, heap.heap_size_limit - YOUNG_GENERATION_BYTES);
  return { heapUsed: heap.used_heap_size, heapLimit, rss: process.memoryUsage.rss() };
}

/** The share of the heap limit a search stops at on its own, well before V8 would abort. */
export const HEAP_SHARE = 0.85;

export function heapNearlyFull(m: MemoryUse): boolean {
  return m.heapUsed > HEAP_SHARE * m.heapLimit;
}
/**
 * Of the memory the machine has available when a search starts, the share a search without
 * --max-memory may add to what the process already holds: it then stops with its summary before
 * the kernel's out-of-memory killer ends it without a word.
 */
export const MACHINE_SHARE = 0.85;

/** The resident bytes a search stops at: --max-memory, or what the machine can give it. */
export function memoryBound(maxMemory: number | undefined, memory: () => MemoryUse): number {
  return maxMemory !== undefined ? maxMemory * 2 ** 20 : memory().rss + MACHINE_SHARE * freemem();
}

/** The least time between two looks at the memory in use. */
const MEMORY_EVERY_MS = 100;

class Clock {
  private readonly now: () => number;
  private readonly start: number;
  private lastProgress: number;
  private lastMemory: number;
  private readonly memory: () => MemoryUse;
  private readonly maxBytes: number;

  constructor(private readonly options: SearchOptions) {
    this.now = options.now ?? (() => performance.now());
    this.start = this.now();
    this.lastProgress = this.start;
    this.lastMemory = this.start - MEMORY_EVERY_MS;
    this.memory = options.memory ?? memoryInUse;
    this.maxBytes = memoryBound(options.maxMemory, this.memory);
  }

  /**
   * Whether the search is at its memory: the safe share of its heap, or its bound (--max-memory,
   * or the machine's) once `reserve` (what its lists may take at their next growth) is added.
   */
  private overMemory(now: number, reserve: () => number): boolean {
    if (now - this.lastMemory < MEMORY_EVERY_MS) return false;
    this.lastMemory = now;
    const m = this.memory();
    return heapNearlyFull(m) || m.rss + reserve() > this.maxBytes;
  }

  get seconds(): number {
    return (this.now() - this.start) / 1000;
  }

  /**
   * What stops the search now (the time limit, its memory, or a request to stop), if anything;
   * reports progress when it is due. `reserve`: the bytes the search may allocate at once next.
   */
  check(
    progress: () => Omit<Progress, 'seconds' | 'statesPerSecond'>,
    reserve: () => number = () => 0,
  ): 'maxSeconds' | 'maxMemory' | 'signal' | undefined {
    const now = this.now();
    const { onProgress, progressEveryMs = 1000, maxSeconds, stop } = this.options;
    if (onProgress !== undefined && now - this.lastProgress >= progressEveryMs) {
      this.lastProgress = now;
      const p = progress();
      const seconds = (now - this.start) / 1000;
      onProgress({ ...p, seconds, statesPerSecond: seconds > 0 ? p.statesGenerated / seconds : 0 });
    }
    if (stop !== undefined && Atomics.load(stop, 0) !== 0) return 'signal';
    if (this.overMemory(now, reserve)) return 'maxMemory';
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
    this.fingerprintOf = stateFingerprint(model, this.packed);
  }

  /** The words `discover` packed the state into, when the model packs (length 0 when it packed another representative). */
  readonly packed: PackedWords = { words: new Int32Array(PACK_WORDS), length: 0 };

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
    return {
      distinctStates: this.distinctStates,
      statesGenerated: this.statesGenerated,
      queue,
      depth: this.depth,
    };
  }

  finish(
    status: Status,
    extra: Pick<Result, 'violation' | 'stoppedBy' | 'memory' | 'reducedStates'> = {},
  ): Result {
    return {
      status,
      distinctStates: this.distinctStates,
      statesGenerated: this.statesGenerated,
      depth: this.depth,
      seconds: this.clock.seconds,
      coverage: this.coverage.result(),
      ...extra,
      ...(extra.memory === undefined
        ? {}
        : { memory: { ...extra.memory, peakResidentBytes: peakResident() } }),
    };
  }
}

/** A state's packed words, kept for a caller that would otherwise pack the same state again. */
export interface PackedWords {
  readonly words: Int32Array;
  length: number;
}

/**
 * The fingerprint function of `model`'s states: of the canonical representative under symmetry,
 * over the packed words when the model packs its states. `keep` (when given) holds the state's
 * own words after each call, or length 0 when the words packed were another representative's.
 */
export function stateFingerprint<S>(
  model: Model<S, unknown>,
  keep?: PackedWords,
): (s: S, out: Int32Array) => void {
  const m = model as Required<Model<S, unknown>>;
  if (model.pack !== undefined) {
    const words = keep?.words ?? new Int32Array(PACK_WORDS);
    if (model.canonical !== undefined) {
      const packCanonical =
        model.packCanonical ??
        ((s: S, w: Int32Array) => {
          const c = m.canonical(s);
          const n = m.pack(c, w);
          return c === s ? -n : n;
        });
      return (s, out) => {
        const n = packCanonical(s, words);
        if (keep !== undefined) keep.length = n < 0 ? -n : 0;
        fingerprintWords(words, n < 0 ? -n : n, out);
      };
    }
    if (model.fingerprint !== undefined) {
      const summary = new Summary();
      return (s, out) => {
        // The state is packed later, if it is kept: length 0 says so.
        if (keep !== undefined) keep.length = 0;
        summary.clear();
        m.fingerprint(s, summary);
        summary.fingerprint(out);
      };
    }
    if (keep === undefined) return (s, out) => fingerprintWords(words, m.pack(s, words), out);
    return (s, out) => fingerprintWords(words, (keep.length = m.pack(s, words)), out);
  }
  return model.canonical === undefined
    ? (s, out) => fingerprintInto(s, out)
    : (s, out) => fingerprintInto(m.canonical(s), out);
}

export type Emit<S> = (t: S, action: number, kind: number) => void;

/** An action's kind as its index in `model.actionKinds`; a kind not listed there is a bug of the model. */
export function kindIndexOf<A>(model: Model<unknown, A>): (a: A) => number {
  const indexOfKind = new Map(model.actionKinds.map((kind, i) => [kind, i]));
  return (a) => {
    const kind = indexOfKind.get(model.kind(a));
    if (kind === undefined)
      throw new Error(`action kind ${JSON.stringify(model.kind(a))} is not among the model's actionKinds`);
    return kind;
  };
}

/** `model.successors`, or the same built from `actions` and `next` when the model has no fast path. */
export function successorsOf<S, A>(model: Model<S, A>): (s: S, emit: Emit<S>) => void {
  if (model.successors !== undefined) return (s, emit) => model.successors!(s, emit);
  const kindOf = kindIndexOf(model);
  return (s, emit) => {
    const actions = model.actions(s);
    for (let j = 0; j < actions.length; j++) emit(model.next(s, actions[j]!), j, kindOf(actions[j]!));
  };
}

/** The name of the first invariant `s` breaks, if any. */
export function brokenInvariant<S>(model: Model<S, unknown>, s: S): string | undefined {
  const i = brokenInvariantIndex(model, s);
  return i === -1 ? undefined : model.invariants[i]!.name;
}

/** The index in `model.invariants` of the first invariant `s` breaks, or -1. */
export function brokenInvariantIndex<S>(model: Model<S, unknown>, s: S): number {
  const invariants = model.invariants;
  for (let i = 0; i < invariants.length; i++) if (!invariants[i]!.holds(s)) return i;
  return -1;
}

/** Re-runs recorded action indices from the initial state `initIndex`. */
export function rebuildTrace<S, A>(
  model: Model<S, A>,
  initIndex: number,
  actionIndices: readonly number[],
): Trace {
  let s: S = model.init()[initIndex]!;
  const states: S[] = [s];
  const actions: string[] = [];
  for (const index of actionIndices) {
    const action = model.actions(s)[index];
    if (action === undefined)
      throw new Error(`trace rebuild: action ${index} is not enabled; is the model deterministic?`);
    actions.push(model.label(action));
    s = model.next(s, action);
    states.push(s);
  }
  return { states, actions };
}
