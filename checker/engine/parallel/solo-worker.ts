// The worker of a search run off the calling thread (see solo.ts).
import { workerData } from 'node:worker_threads';
import { answerRequests } from './handle.ts';
import { buildModel } from './recipe.ts';
import { type SoloSetup, runSearch } from './solo.ts';

const setup = workerData as SoloSetup;
const model = await buildModel(setup.recipe);

answerRequests(async () => ({ message: await runSearch(model, setup) }));
