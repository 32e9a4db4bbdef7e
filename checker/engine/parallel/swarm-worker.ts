// One walker of a swarm: runs the walks whose index is its own modulo the number of walkers.
import { workerData } from 'node:worker_threads';
import { randomSearch } from '../random.ts';
import { VisitedSet } from '../visited.ts';
import type { Result } from '../search.ts';
import { type Reply, answerRequests } from './handle.ts';
import { buildModel } from './recipe.ts';
import { PROGRESS_EVERY_MS, PROGRESS_FIELDS, type SwarmSetup } from './swarm.ts';

const setup = workerData as SwarmSetup;
const model = await buildModel(setup.recipe);
const stopAt = new Int32Array(setup.stopAt);

const progress = new Float64Array(setup.progress);

answerRequests((): Reply => {
  const { walks, workers, me } = setup;
  const visited = new VisitedSet();
  const result: Result = randomSearch(model, {
    ...setup.options,
    firstWalk: me,
    stride: workers,
    walks: Math.ceil((walks - me) / workers),
    stopAt: () => Atomics.load(stopAt, 0),
    visited,
    onProgress: (p) => progress.set([p.distinctStates, p.statesGenerated, p.depth], me * PROGRESS_FIELDS),
    progressEveryMs: PROGRESS_EVERY_MS,
  });
  const walk = result.violation?.walk;
  if (walk !== undefined) {
    // Walks from here on need not run anywhere: a lesser index wins.
    for (let seen = Atomics.load(stopAt, 0); walk < seen; seen = Atomics.load(stopAt, 0)) {
      if (Atomics.compareExchange(stopAt, 0, seen, walk) === seen) break;
    }
  }
  // The coordinator counts each state once, whichever walkers saw it.
  const fingerprints = visited.fingerprints();
  return { message: { result, fingerprints }, transfer: [fingerprints] };
});
