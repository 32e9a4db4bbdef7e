// Picks the search a run asks for: breadth-first in this thread or on workers, random walks in
// this thread or as a swarm. Shared by the command line and the benchmark.
import { modelRecipe } from '../specs/build.ts';
import type { RunOptions, Spec } from '../specs/load.ts';
import { bfs } from './bfs.ts';
import type { Model } from './model.ts';
import { parallelBfs } from './parallel/bfs.ts';
import { swarmSearch } from './parallel/swarm.ts';
import { randomSearch } from './random.ts';
import type { Progress, Result } from './search.ts';

export const DEFAULT_WALK_DEPTH = 100;

export async function explore(
  spec: Spec,
  model: Model<unknown, unknown>,
  options: RunOptions,
  workers: number,
  onProgress?: (p: Progress) => void,
): Promise<Result> {
  const searchOptions = { ...options, deadlockAllowed: spec.deadlockAllowed, onProgress };
  if (options.strategy === 'bfs') {
    return workers === 1 ? bfs(model, searchOptions) : parallelBfs(model, modelRecipe(spec), { ...searchOptions, workers });
  }
  const randomOptions = { ...searchOptions, maxDepth: options.maxDepth ?? DEFAULT_WALK_DEPTH };
  return workers === 1 ? randomSearch(model, randomOptions) : swarmSearch(model, modelRecipe(spec), { ...randomOptions, workers });
}
