// Builds the model a spec describes, from the spec's file name and JSON value alone, so a worker
// thread can build the same model as the thread that loaded the spec.
import type { Model } from '../checker/engine/model.ts';
import type { ModelRecipe } from '../checker/engine/parallel/recipe.ts';
import { parseSpec, type Spec } from './load.ts';

/** The model `spec` describes, with its symmetry reduction when the spec asks for it. */
export function modelOf(spec: Spec): Model<unknown, unknown> {
  const model = spec.entry.build(spec.params, spec.properties);
  if (!spec.symmetry) return model;
  const canonical = spec.entry.canonical!(spec.params) as (s: unknown) => unknown;
  const packCanonical = spec.entry.packCanonical?.(spec.params) as
    ((s: unknown, words: Int32Array) => number) | undefined;
  return packCanonical === undefined ? { ...model, canonical } : { ...model, canonical, packCanonical };
}

export function buildModel(file: string, raw: unknown): Model<unknown, unknown> {
  return modelOf(parseSpec(file, raw, ''));
}

/** How another thread builds the model of `spec`. */
export function modelRecipe(spec: Spec): ModelRecipe {
  return { module: import.meta.url, name: buildModel.name, args: [spec.file, spec.raw] };
}
