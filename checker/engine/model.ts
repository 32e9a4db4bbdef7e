// The engine's view of a system to check. The engine knows nothing else about a model.
//
// States are plain readonly data: objects, arrays, numbers, strings, booleans. No Map, Set,
// class instance, undefined field or function inside a state, so one fingerprint, one
// deep-equal and one ITF encoder serve every model.

/** The most words `Model.pack` may write (a Kafka state with a busy network takes a few hundred). */
export const PACK_WORDS = 1 << 14;

export interface Property<S> {
  readonly name: string;
  readonly description: string;
  holds(s: S): boolean;
  /**
   * True when a state that breaks it has only successors that break it too (a record committed
   * twice stays in the log). Partial-order reduction then needs no step to be visible for it:
   * a postponed step leads from a broken state to a broken state.
   */
  readonly stable?: boolean;
}

/** A temporal goal: `<>q` (eventually), or `p ~> q` (whenever p holds, q holds then or later). */
export type Goal<S> =
  | { readonly kind: 'eventually'; readonly label: string; readonly q: (s: S) => boolean }
  | {
      readonly kind: 'leadsTo';
      readonly label: string;
      readonly p: (s: S) => boolean;
      readonly q: (s: S) => boolean;
    };

/**
 * For partial-order reduction: the model's steps in a fixed, finite set of transition classes and
 * how the classes interact. Every action belongs to one class; the engine keeps or postpones a
 * class as a whole. The relations must over-approximate: claiming too much dependence costs states,
 * claiming too little loses them.
 */
export interface Independence<A, S = never> {
  readonly classes: number;
  /** The class of an action. */
  classOf(a: A): number;
  /**
   * Per class, the classes that may not commute with it: two independent actions enabled together
   * lead to the same state in either order, and neither disables the other.
   */
  readonly dependent: readonly (readonly number[])[];
  /** Per class, a necessary enabling set: while the class is disabled, none of it can be enabled but by one of these. */
  readonly enablers: readonly (readonly number[])[];
  /**
   * Optional, for sleep sets: an action's identity from state to state. The action that an
   * independent step commutes with has the same key before and after it; two actions enabled
   * together have different keys. A number below 2^53.
   */
  key?(a: A): number;
  /** Per class, whether one of its steps may change what a checked invariant reads (stable ones aside). */
  readonly visible: readonly boolean[];
  /**
   * Optional: narrower necessary enabling sets that hold in some states (Valmari lets D2 pick,
   * per state, one reason a class is disabled). A fault step whose budget is spent can never be
   * enabled again; a response can only follow a request. Without them, every disabled class
   * drags in everything that could enable it in some other state.
   */
  readonly narrowed?: {
    /** Names the narrowed sets that hold in `s`: equal keys, equal sets. */
    key(s: S): string;
    /** Per class, for states with this key, a necessary enabling set narrower than `enablers`, or undefined. */
    enablers(key: string): readonly (readonly number[] | undefined)[];
  };
}

export interface Model<S, A> {
  /** Initial states, in a fixed order. */
  init(): readonly S[];
  /** The enabled actions of `s`, in a fixed order. Labels must be distinct among them. */
  actions(s: S): readonly A[];
  /** The successor of `s` under the enabled action `a`. Pure and deterministic. */
  next(s: S, a: A): S;
  /** A short, human-readable name of `a` with its parameters; replay finds an action by its label. */
  label(a: A): string;
  /** The name of `a` without parameters (one of `actionKinds`), for coverage counts. */
  kind(a: A): string;
  /** Every action kind the model has, so coverage can name the ones that never fired. */
  readonly actionKinds: readonly string[];
  /** Safety properties checked on every reachable state. */
  readonly invariants: readonly Property<S>[];
  /**
   * Optional fast path for `actions` + `next`: calls `emit(t, i, kind)` for the successor `t` by
   * the i-th enabled action, in the order of `actions(s)`, where `kind` indexes `actionKinds`.
   */
  successors?(s: S, emit: (t: S, action: number, kind: number) => void): void;
  /**
   * Optional fast path for fingerprints: writes `s` as 32-bit integers into `words` (room for
   * PACK_WORDS) and returns how many it wrote. Equal words must mean equal states.
   */
  pack?(s: S, words: Int32Array): number;
  /**
   * Optional fast path, with `pack`: describes `s` to `summary` as a few words and the packed
   * words of its parts, whose fingerprints the model may keep and give again for a part a step
   * left alone. The state's fingerprint is the summary's, and the search packs only the states it
   * keeps. Equal packed words must give equal summaries. Not used under symmetry, where the
   * representative's packed words are fingerprinted. Since no fingerprint is then read from
   * packed words, `pack` may write after a state just summarized its parts' fingerprints, for
   * `unpack` to take up.
   */
  fingerprint?(s: S, summary: FingerprintSummary): void;
  /** Optional, with `pack`: the state whose packed words are `words`; lets states cross threads as integers. */
  unpack?(words: Int32Array): S;
  /** Partial-order reduction (used when a search asks for it). */
  readonly independence?: Independence<A, S>;
  /** Symmetry reduction: a representative of the class of `s`. */
  canonical?(s: S): S;
  /**
   * Optional fast path for symmetry, with `pack` and `canonical`: writes the packed words of
   * `canonical(s)` into `words` without building it, and returns how many it wrote; the negated
   * count when they are also the words of `s` itself (its representative is `s`).
   */
  packCanonical?(s: S, words: Int32Array): number;
  /**
   * The readable form of `s` for traces and reports (names where the state holds enum
   * numbers): a plain object whose fields are the trace's variables. Default: `s` itself.
   * Lists that are sets and records that are maps say so with `asSet` and `asMap`.
   */
  view?(s: S): Readonly<Record<string, unknown>>;
  /**
   * Optional, for the state profile: `s` as named parts (its actors, channels, bookkeeping), so
   * that the profile can tell which part multiplies the states. Default: its top-level fields.
   */
  components?(s: S): Readonly<Record<string, unknown>>;
}

/** What Model.fingerprint writes a state's summary into. */
export interface FingerprintSummary {
  /** Adds a word of the state's own. */
  word(v: number): void;
  /** Adds the fingerprint of the part `words[from .. to)`, and writes it into `out[at]` and `out[at + 1]`. */
  part(words: Int32Array, from: number, to: number, out: Int32Array, at: number): void;
  /** Adds a part's fingerprint that `part` wrote before. */
  known(high: number, low: number): void;
}

/** What a list or record of a view is in the protocol's terms, for the trace files. */
export type ItfKind = 'set' | 'map';

// A non-enumerable mark: reports, the explorer and deep equality see the plain list or record.
const itfKind = Symbol('itfKind');

function marked<T extends object>(value: T, kind: ItfKind): T {
  return Object.defineProperty(value, itfKind, { value: kind });
}

/** A list of a view that is a set: a trace writes it as {"#set": [...]}, its items in the order given. */
export function asSet<T>(items: readonly T[]): T[] {
  return marked([...items], 'set');
}

/** A record of a view that is a map from its keys (a function, in TLA+): a trace writes it as {"#map": [[key, value], ...]}. */
export function asMap<T>(record: Readonly<Record<string, T>>): Record<string, T> {
  return marked({ ...record }, 'map');
}

/** How `asSet` or `asMap` marked `v`, if they did. */
export function itfKindOf(v: unknown): ItfKind | undefined {
  return typeof v === 'object' && v !== null ? (v as { [itfKind]?: ItfKind })[itfKind] : undefined;
}
