// A search run off the calling thread, on a worker thread of its own (which starts the search's
// own workers, if any), so that the calling thread stays free while it runs: a signal is
// answered at once whatever the search is doing (growing its visited set, merging a level,
// collecting garbage), and progress is read from shared memory.
import { bfs } from '../bfs.ts';
import type { Model } from '../model.ts';
import { type RandomOptions, randomSearch } from '../random.ts';
import type { Progress, Result, SearchOptions } from '../search.ts';
import { parallelBfs } from './bfs.ts';
import { WorkerHandle } from './handle.ts';
import type { ModelRecipe } from './recipe.ts';
import { swarmSearch } from './swarm.ts';

type Options = Omit<SearchOptions, 'onProgress' | 'now'> & Partial<Pick<RandomOptions, 'seed' | 'walks'>>;

/** What the worker is started with: plain data, and shared memory for the stop flag and progress. */
export interface SoloSetup {
  readonly recipe: ModelRecipe;
  readonly strategy: 'bfs' | 'random';
  readonly workers: number;
  readonly options: Options;
  /** The last progress report: a flag (1 once there is one), then the Progress fields in order. */
  readonly progress: SharedArrayBuffer;
}

const PROGRESS_FIELDS = 6;

/**
 * How long past its time limit, or past a request to stop, a search may take to answer (a
 * checkpoint of a large search takes seconds to write) before it is ended without a result: a
 * step that never returns (a variant's handler that loops) must not outlive --max-seconds.
 */
export const STUCK_GRACE_MS = 30_000;
const soloWorker = new URL('./solo-worker.ts', import.meta.url);

export async function searchOffThread(
  recipe: ModelRecipe,
  strategy: 'bfs' | 'random',
  workers: number,
  options: Options & {
    readonly onProgress?: (p: Progress) => void;
    readonly now?: () => number;
    readonly graceMs?: number;
  },
): Promise<Result> {
  const { onProgress, now: _now, graceMs = STUCK_GRACE_MS, ...plain } = options;
  const progress = new SharedArrayBuffer(PROGRESS_FIELDS * Float64Array.BYTES_PER_ELEMENT);
  const worker = new WorkerHandle(soloWorker, {
    recipe,
    strategy,
    workers,
    options: plain,
    progress,
  } satisfies SoloSetup);
  const shown = new Float64Array(progress);
  let last = 0;
  const timer = setInterval(() => {
    const [reported, distinctStates, statesGenerated, queue, depth, seconds] = shown as unknown as number[];
    if (reported === 0 || seconds === last) return;
    last = seconds!;
    onProgress?.({
      distinctStates: distinctStates!,
      statesGenerated: statesGenerated!,
      queue: queue!,
      depth: depth!,
      seconds: seconds!,
      statesPerSecond: statesGenerated! / seconds!,
    });
  }, options.progressEveryMs ?? 1000);
  const started = performance.now();
  let stopSeen: number | undefined;
  let watchdog: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    watchdog = setInterval(() => {
      const now = performance.now();
      if (plain.stop !== undefined && Atomics.load(plain.stop, 0) !== 0) stopSeen ??= now;
      const limit = plain.maxSeconds === undefined ? Infinity : started + plain.maxSeconds * 1000;
      if (now > Math.min(limit, stopSeen ?? Infinity) + graceMs)
        reject(
          new Error(
            `a step of the model did not return within ${graceMs / 1000} s of the ${stopSeen === undefined ? 'time limit' : 'request to stop'}, so the search was ended without a result (a variant's handler that never returns?)`,
          ),
        );
    }, 100);
  });
  try {
    return await Promise.race([worker.request<Result>('run'), stuck]);
  } finally {
    clearInterval(timer);
    clearInterval(watchdog);
    await worker.terminate();
  }
}

/** In the worker: the search `setup` asks for, reporting progress into `setup.progress`. */
export function runSearch(model: Model<unknown, unknown>, setup: SoloSetup): Result | Promise<Result> {
  const shown = new Float64Array(setup.progress);
  const onProgress = (p: Progress) =>
    shown.set([1, p.distinctStates, p.statesGenerated, p.queue, p.depth, p.seconds]);
  const { strategy, workers, recipe } = setup;
  if (strategy === 'bfs') {
    const options = { ...setup.options, onProgress };
    return workers === 1 ? bfs(model, options) : parallelBfs(model, recipe, { ...options, workers });
  }
  const options = { ...(setup.options as RandomOptions), onProgress };
  return workers === 1 ? randomSearch(model, options) : swarmSearch(model, recipe, { ...options, workers });
}
