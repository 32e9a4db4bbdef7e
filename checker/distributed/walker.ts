// One walker thread of a worker process: runs one job at a time, off the process's main thread,
// which meanwhile renews the job's lock in Redis and answers signals. A random run's job is one
// request (its walks); a breadth-first run's expand job is two (expand.ts), around the main
// thread's look at the visited set, and its own job one.
import { randomSearch } from '../engine/random.ts';
import type { Model } from '../engine/model.ts';
import { answerRequests } from '../engine/parallel/handle.ts';
import { type ModelRecipe, buildModel } from '../engine/parallel/recipe.ts';
import type { Result } from '../engine/search.ts';
import { VisitedSet } from '../engine/visited.ts';
import type { WalkOptions } from './jobs.ts';
import { ExpandChunk, type ExpandRequest, own } from './expand.ts';

export type WalkerRequest =
  | WalkRequest
  | (ExpandRequest & { readonly kind: 'expand'; readonly recipe: ModelRecipe })
  | { readonly kind: 'settle'; readonly fresh: Uint8Array }
  | { readonly kind: 'own'; readonly batches: Int32Array[][] };

export interface WalkRequest {
  readonly kind: 'walks';
  readonly recipe: ModelRecipe;
  readonly options: WalkOptions;
  readonly firstWalk: number;
  readonly walks: number;
  /** One Int32: the least walk index still worth running. */
  readonly stopAt: SharedArrayBuffer;
  /** One Int32: non-zero asks the walks to stop (the process got a signal). */
  readonly stop: SharedArrayBuffer;
}

export interface WalkReply {
  /** The result without its trace: the coordinator reruns the walk it reports. */
  readonly result: Omit<Result, 'violation'> & {
    readonly violation?: { readonly property: string; readonly walk: number };
  };
  readonly fingerprints: Int32Array;
}

const JOB_VISITED_CAPACITY = 1 << 12;

// Jobs of one run come one after another: the model of the last recipe is kept, with its chunk under way.
let built: { key: string; model: Model<unknown, unknown>; chunk: ExpandChunk<unknown> } | undefined;

async function modelOf(recipe: ModelRecipe): Promise<NonNullable<typeof built>> {
  const key = JSON.stringify(recipe);
  if (built?.key !== key) {
    const model = await buildModel(recipe);
    built = { key, model, chunk: new ExpandChunk(model) };
  }
  return built;
}

answerRequests(async (request: WalkerRequest) => {
  if (request.kind === 'expand') {
    const expanded = (await modelOf(request.recipe)).chunk.expand(request);
    return { message: expanded, transfer: [expanded.trail, expanded.candidates] };
  }
  if (request.kind === 'settle') {
    const settled = built!.chunk.settle(request.fresh);
    return { message: settled, transfer: [...settled.inboxes, ...settled.words.map((w) => w.states)] };
  }
  if (request.kind === 'own') {
    const owned = request.batches.map(own);
    return {
      message: owned,
      transfer: owned.flatMap((o) => [o.fingerprints, ...o.pieces.map((p) => p.winners)]),
    };
  }
  const { model } = await modelOf(request.recipe);
  const stopAt = new Int32Array(request.stopAt);
  // A job meets a few thousand states: a small table that grows spares the collector a large one per job.
  const visited = new VisitedSet(JOB_VISITED_CAPACITY);
  const { violation, ...result } = randomSearch(model, {
    ...request.options,
    firstWalk: request.firstWalk,
    walks: request.walks,
    stopAt: () => Atomics.load(stopAt, 0),
    stop: new Int32Array(request.stop),
    visited,
  });
  const fingerprints = visited.fingerprints();
  const reply: WalkReply = {
    result: {
      ...result,
      ...(violation === undefined
        ? {}
        : { violation: { property: violation.property, walk: violation.walk! } }),
    },
    fingerprints,
  };
  return { message: reply, transfer: [fingerprints] };
});
