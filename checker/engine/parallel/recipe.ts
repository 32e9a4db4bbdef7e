// How a worker thread builds the same model as the thread that started it: models hold
// functions, which cannot cross threads, so the worker imports and calls their builder.
import type { Model } from '../model.ts';

/** `(await import(module))[name](...args)` builds the model; args must be plain data. */
export interface ModelRecipe {
  readonly module: string;
  readonly name: string;
  readonly args: readonly unknown[];
}

export async function buildModel(recipe: ModelRecipe): Promise<Model<unknown, unknown>> {
  const builder = (await import(recipe.module))[recipe.name] as (
    ...args: readonly unknown[]
  ) => Model<unknown, unknown>;
  return builder(...recipe.args);
}
