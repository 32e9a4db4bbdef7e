// Swarm random search: the walks of one seed spread over worker threads, walk i on worker
// i mod N. A walker that finds a violation tells the others, through shared memory, to skip
// the walks after it; the one reported is the violating walk of least index, which does not
// depend on the scheduling, and the coordinator reruns it alone for its trace. The counts add
// up what each walker did, so with a violation they may vary from run to run.
import type { Model } from '../model.ts';
import { randomSearch, type RandomOptions } from '../random.ts';
import type { Result } from '../search.ts';
import { WorkerHandle } from './handle.ts';
import type { ModelRecipe } from './recipe.ts';

/** What a walker is started with; options hold plain data only. */
export interface SwarmSetup {
  readonly recipe: ModelRecipe;
  readonly options: Omit<RandomOptions, 'onProgress' | 'stopAt' | 'firstWalk' | 'stride'>;
  readonly walks: number;
  readonly workers: number;
  readonly me: number;
  /** One Int32: the least walk index known to violate (initially `walks`). */
  readonly stopAt: SharedArrayBuffer;
}

const walker = new URL('./swarm-worker.ts', import.meta.url);

export async function swarmSearch<S, A>(model: Model<S, A>, recipe: ModelRecipe, options: RandomOptions & { readonly workers: number }): Promise<Result> {
  const { onProgress: _progress, workers: n, ...plain } = options;
  const stopAt = new SharedArrayBuffer(4);
  new Int32Array(stopAt)[0] = options.walks;
  const start = performance.now();
  const walkers = Array.from({ length: n }, (_, me) => new WorkerHandle(walker, { recipe, options: plain, walks: options.walks, workers: n, me, stopAt } satisfies SwarmSetup));
  try {
    const results = await Promise.all(walkers.map((w) => w.request<Result>('run')));
    const seconds = (performance.now() - start) / 1000;
    const violating = results.filter((r) => r.violation !== undefined).sort((a, b) => a.violation!.walk! - b.violation!.walk!)[0];
    const fired: Record<string, number> = {};
    for (const kind of model.actionKinds) fired[kind] = results.reduce((k, r) => k + (r.coverage.fired[kind] ?? 0), 0);
    const summed = {
      distinctStates: results.reduce((k, r) => k + r.distinctStates, 0),
      statesGenerated: results.reduce((k, r) => k + r.statesGenerated, 0),
      depth: Math.max(...results.map((r) => r.depth)),
      seconds,
      coverage: { fired, neverFired: model.actionKinds.filter((kind) => fired[kind] === 0) },
    };
    if (violating !== undefined) {
      const alone = randomSearch(model, { ...plain, firstWalk: violating.violation!.walk!, walks: 1 });
      return { ...summed, status: 'violation', violation: alone.violation! };
    }
    const stopped = results.find((r) => r.stoppedBy !== 'walks') ?? results[0]!;
    return { ...summed, status: 'incomplete', stoppedBy: stopped.stoppedBy! };
  } finally {
    await Promise.all(walkers.map((w) => w.terminate()));
  }
}
