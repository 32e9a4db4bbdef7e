// One walker of a swarm: runs the walks whose index is its own modulo the number of walkers.
import { workerData } from 'node:worker_threads';
import { randomSearch } from '../random.ts';
import type { Result } from '../search.ts';
import { type Reply, answerRequests } from './handle.ts';
import { buildModel } from './recipe.ts';
import type { SwarmSetup } from './swarm.ts';

const setup = workerData as SwarmSetup;
const model = await buildModel(setup.recipe);
const stopAt = new Int32Array(setup.stopAt);

answerRequests((): Reply => {
  const { walks, workers, me } = setup;
  const result: Result = randomSearch(model, {
    ...setup.options,
    firstWalk: me,
    stride: workers,
    walks: Math.ceil((walks - me) / workers),
    stopAt: () => Atomics.load(stopAt, 0),
  });
  const walk = result.violation?.walk;
  if (walk !== undefined) {
    // Walks from here on need not run anywhere: a lesser index wins.
    for (let seen = Atomics.load(stopAt, 0); walk < seen; seen = Atomics.load(stopAt, 0)) {
      if (Atomics.compareExchange(stopAt, 0, seen, walk) === seen) break;
    }
  }
  return { message: result };
});
