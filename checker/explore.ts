// Picks the search a run asks for: breadth-first in this thread or on workers, random walks in
// this thread or as a swarm. Shared by the command line and the benchmark.
import { modelRecipe } from '../specs/build.ts';
import type { RunOptions, Spec } from '../specs/load.ts';
import { bfs } from './engine/bfs.ts';
import type { Model } from './engine/model.ts';
import { parallelBfs } from './engine/parallel/bfs.ts';
import { swarmSearch } from './engine/parallel/swarm.ts';
import { randomSearch } from './engine/random.ts';
import type { Progress, Result } from './engine/search.ts';

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
