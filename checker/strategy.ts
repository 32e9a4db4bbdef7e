// Picks the search a run asks for: breadth-first in this thread or on workers, random walks in
// this thread or as a swarm. Shared by the command line and the benchmark.
import { totalmem } from 'node:os';
import { modelRecipe } from '../specs/build.ts';
import type { RunOptions, Spec } from '../specs/load.ts';
import { bfs } from './engine/bfs.ts';
import type { Model } from './engine/model.ts';
import { parallelBfs } from './engine/parallel/bfs.ts';
import { swarmSearch } from './engine/parallel/swarm.ts';
import { searchOffThread } from './engine/parallel/solo.ts';
import { randomSearch } from './engine/random.ts';
import type { Progress, Result, SearchOptions } from './engine/search.ts';

export const DEFAULT_WALK_DEPTH = 100;

/**
 * The one-thread search keeps its two waiting levels in memory up to a quarter of --max-memory
 * together (an eighth of the machine's memory without it), and the words past that on disk.
 */
function spillBytes(maxMemory: number | undefined): number {
  return maxMemory === undefined ? Math.floor(totalmem() / 16) : Math.floor((maxMemory * 2 ** 20) / 8);
}

/**
 * The search `options` ask for. With a `stop` flag (the command line sets it on a signal) the
 * search runs off this thread, so that this thread can answer the signal at once.
 */
export async function runSearch(
  spec: Spec,
  model: Model<unknown, unknown>,
  options: RunOptions,
  workers: number,
  onProgress?: (p: Progress) => void,
  stop?: Int32Array,
  saving: Pick<SearchOptions, 'checkpoint' | 'resume'> = {},
): Promise<Result> {
  const searchOptions = {
    ...options,
    deadlockAllowed: spec.deadlockAllowed,
    onProgress,
    ...(stop === undefined ? {} : { stop }),
    ...(spec.reduction ? { reduction: true } : {}),
    ...(spec.sleep ? { sleep: true } : {}),
    ...saving,
    spillBytes: spillBytes(options.maxMemory),
  };
  const randomOptions = { ...searchOptions, maxDepth: options.maxDepth ?? DEFAULT_WALK_DEPTH };
  if (stop !== undefined)
    return searchOffThread(
      modelRecipe(spec),
      options.strategy,
      workers,
      options.strategy === 'bfs' ? searchOptions : randomOptions,
    );
  if (options.strategy === 'bfs') {
    return workers === 1
      ? bfs(model, searchOptions)
      : parallelBfs(model, modelRecipe(spec), { ...searchOptions, workers });
  }
  return workers === 1
    ? randomSearch(model, randomOptions)
    : swarmSearch(model, modelRecipe(spec), { ...randomOptions, workers });
}
