// What the spec layer needs from each model it can load. `models.ts` lists the entries.
import type { Goal } from '../checker/engine/model.ts';
import type { Model } from '../checker/engine/model.ts';
import type { TraceRenderer } from '../checker/report/renderer.ts';
import type { Fields } from '../checker/engine/input.ts';

export interface PropertyInfo {
  readonly name: string;
  readonly description: string;
  /** Once broken, broken in every successor: partial-order reduction makes no step visible for it. */
  readonly stable?: boolean;
}

/** A liveness property a spec can name: its goals (one per parameter value) for given parameters. */
export interface LivenessInfo<P = unknown> extends PropertyInfo {
  goals(params: P): readonly Goal<unknown>[];
  /** What the property needs that these parameters leave out of the model, if anything. */
  unavailable?(params: P): string | undefined;
}

export interface ModelEntry<P = unknown> {
  /** The value of a spec's "model" field. */
  readonly name: string;
  readonly description: string;
  /** Every property the model can check; a spec picks some by name (default: all). */
  readonly properties: readonly PropertyInfo[];
  /**
   * Reads the model's own parameters from the spec's top-level object. Fields the spec layer
   * owns (model, properties, deadlock, strategy, limits...) are already consumed.
   * Throws InputError on bad input.
   */
  readParams(fields: Fields): P;
  /** The temporal properties a spec may list under "liveness". */
  readonly liveness?: readonly LivenessInfo<P>[];
  /** Builds the model with the chosen properties as its invariants. */
  build(params: P, properties: readonly string[]): Model<unknown, unknown>;
  /** Protocol generations a spec's "variant" can name (for `list` and `compare`). */
  readonly variants?: readonly PropertyInfo[];
  /** Named protocol switches a variant can turn on or off (for `list`). */
  readonly switches?: readonly PropertyInfo[];
  /** Rules broken on purpose, each meant to be caught by some property (for `list` and `mutants`). */
  readonly mutants?: readonly PropertyInfo[];
  /** The spec object under another of `variants`, keeping its other choices. */
  withVariant?(spec: Readonly<Record<string, unknown>>, variant: string): Record<string, unknown>;
  /** The spec object with one of `mutants` applied. */
  withMutant?(spec: Readonly<Record<string, unknown>>, mutant: string): Record<string, unknown>;
  /** The files besides itself that the spec object makes the model read (a variant's code), as the spec names them. */
  filesRead?(spec: Readonly<Record<string, unknown>>): readonly string[];
  /** Reads the model's traces in its own terms for show and report; without it they are generic. */
  readonly render?: TraceRenderer;
  /**
   * For models with interchangeable parts: a representative of a state's class, which a spec
   * with "symmetry": true uses as the model's `canonical`. The invariants must not tell the
   * members of a class apart. With partial-order reduction too, the renamings must treat the
   * parts' transition classes alike.
   */
  canonical?(params: P): (s: never) => unknown;
  /** With `canonical`: its representative's packed words, written without building it (Model.packCanonical). */
  packCanonical?(params: P): (s: never, words: Int32Array) => number;
}
