// Swarm random search: the walks of one seed spread over worker threads, walk i on worker
// i mod N. A walker that finds a violation tells the others, through shared memory, to skip
// the walks after it; the one reported is the violating walk of least index, which does not
// depend on the scheduling, and the coordinator reruns it alone for its trace. Each walker
// sends back the fingerprints it saw, so a state counts once however many walkers met it; the
// generated counts add up what each walker did, so with a violation they may vary from run to run.
import type { Model } from '../model.ts';
import { randomSearch, type RandomOptions } from '../random.ts';
import type { Result } from '../search.ts';
import { VisitedSet } from '../visited.ts';
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
  /** Per walker, its last progress: PROGRESS_FIELDS numbers (distinct, generated, depth). */
  readonly progress: SharedArrayBuffer;
}

export const PROGRESS_FIELDS = 3;
export const PROGRESS_EVERY_MS = 250;

const walker = new URL('./swarm-worker.ts', import.meta.url);

export async function swarmSearch<S, A>(
  model: Model<S, A>,
  recipe: ModelRecipe,
  options: RandomOptions & { readonly workers: number },
): Promise<Result> {
  const { onProgress, workers: n, now: _now, ...plain } = options;
  const stopAt = new SharedArrayBuffer(4);
  new Int32Array(stopAt)[0] = options.walks;
  const progress = new SharedArrayBuffer(n * PROGRESS_FIELDS * Float64Array.BYTES_PER_ELEMENT);
  const start = performance.now();
  const walkers = Array.from(
    { length: n },
    (_, me) =>
      new WorkerHandle(walker, {
        recipe,
        options: plain,
        walks: options.walks,
        workers: n,
        me,
        stopAt,
        progress,
      } satisfies SwarmSetup),
  );
  // While the walkers run, the figures are their own, added up: a state two walkers saw counts twice until the end.
  const counts = new Float64Array(progress);
  const timer = setInterval(() => {
    const seconds = (performance.now() - start) / 1000;
    const sum = (field: number) => walkers.reduce((k, _, w) => k + counts[w * PROGRESS_FIELDS + field]!, 0);
    const depth = Math.max(...walkers.map((_, w) => counts[w * PROGRESS_FIELDS + 2]!));
    onProgress?.({
      distinctStates: sum(0),
      statesGenerated: sum(1),
      queue: 0,
      depth,
      seconds,
      statesPerSecond: sum(1) / seconds,
    });
  }, options.progressEveryMs ?? 1000);
  try {
    const answers = await Promise.all(
      walkers.map((w) => w.request<{ result: Result; fingerprints: Int32Array }>('run')),
    );
    const results = answers.map((a) => a.result);
    const seen = new VisitedSet();
    for (const { fingerprints } of answers) seen.addAll(fingerprints);
    const seconds = (performance.now() - start) / 1000;
    const violating = results
      .filter((r) => r.violation !== undefined)
      .sort((a, b) => a.violation!.walk! - b.violation!.walk!)[0];
    const fired: Record<string, number> = {};
    for (const kind of model.actionKinds)
      fired[kind] = results.reduce((k, r) => k + (r.coverage.fired[kind] ?? 0), 0);
    const summed = {
      distinctStates: seen.size,
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
    clearInterval(timer);
    await Promise.all(walkers.map((w) => w.terminate()));
  }
}
