// What the spec layer needs from each model it can load. `models.ts` lists the entries.
import type { Model } from '../checker/model.ts';
import type { Fields } from './fields.ts';

export interface PropertyInfo {
  readonly name: string;
  readonly description: string;
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
  /** Builds the model with the chosen properties as its invariants. */
  build(params: P, properties: readonly string[]): Model<unknown, unknown>;
}
