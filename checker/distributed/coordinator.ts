// The coordinator of a distributed random run: puts the run's walks on the queue as jobs of
// WALKS_PER_JOB walk indices, a window at a time, and merges the answers in job order. Walk i
// depends on (seed, i) alone, so the walks are those of one machine whoever runs them. Once a
// job reports a violation, jobs past it are not worth running (their walks are told to stop); the
// run ends when every job up to it has answered, and the violation reported is the least
// violating walk, rerun here for its trace. Only the jobs up to that walk are counted, each
// state once by its fingerprint, so the counts are those of the same walks on one thread.
import type { Model } from '../engine/model.ts';
import { randomSearch } from '../engine/random.ts';
import type { Limit, Result } from '../engine/search.ts';
import { VisitedSet } from '../engine/visited.ts';
import type { RunDigest } from './digest.ts';
import {
  RUN_KEY_SECONDS,
  WALKS_PER_JOB,
  type WalkJob,
  type WalkJobAnswer,
  type WalkOptions,
  int32sOf,
  stopAtKey,
} from './jobs.ts';
import { QueueRun, type QueueRunOptions } from './queue-run.ts';
import type { RedisAddress } from './redis.ts';

export interface DistributedOptions extends WalkOptions, QueueRunOptions {
  readonly walks: number;
}

export interface DistributedRun {
  readonly result: Result;
  /** How many walker threads ran the jobs counted. */
  readonly workers: number;
  /** Jobs put on the queue. */
  readonly jobs: number;
  /** Breadth-first: the states of each level decided. */
  readonly levels?: readonly number[];
  /** Breadth-first: the seconds the expand steps and the own steps took, each from its jobs' adding to its last answer. */
  readonly steps?: { readonly expand: number; readonly own: number };
}

/** Jobs on the queue at once: enough to keep many machines busy, few enough that a violation leaves little work to drop. */
const WINDOW = 256;

export async function distributedSwarm<S, A>(
  model: Model<S, A>,
  spec: WalkJob['spec'],
  digest: RunDigest,
  address: RedisAddress,
  options: DistributedOptions,
): Promise<DistributedRun> {
  const { seed, maxDepth, deadlockAllowed, walks } = options;
  const walkOptions: WalkOptions = { seed, maxDepth, deadlockAllowed };
  const jobs = Math.ceil(walks / WALKS_PER_JOB);

  let least = walks;
  /** Jobs 0 to needed - 1 hold every walk up to the least violating one. */
  const needed = () => Math.ceil(Math.min(least + 1, walks) / WALKS_PER_JOB);
  const answers = new Map<number, WalkJobAnswer>();
  // Merged in job order, so that a violation found later in a lesser job cannot undo a merge.
  let merged = 0;
  const seen = new VisitedSet();
  const fired: Record<string, number> = Object.fromEntries(model.actionKinds.map((k) => [k, 0]));
  const walkers = new Set<string>();
  let statesGenerated = 0;
  let depth = 0;
  let stoppedBy: Limit = 'walks';
  let generatedSoFar = 0;

  const merge = (): void => {
    for (
      let answer = answers.get(merged);
      answer !== undefined && merged < needed();
      answer = answers.get(merged)
    ) {
      answers.delete(merged++);
      seen.addAll(int32sOf(answer.fingerprints));
      statesGenerated += answer.statesGenerated;
      depth = Math.max(depth, answer.depth);
      for (const kind of model.actionKinds) fired[kind]! += answer.fired[kind] ?? 0;
      walkers.add(answer.walker);
      if (answer.stoppedBy !== undefined && answer.stoppedBy !== 'walks') stoppedBy = answer.stoppedBy;
    }
  };

  const queued: QueueRun<WalkJob, WalkJobAnswer> = new QueueRun(address, options, {
    answered(index, answer) {
      generatedSoFar += answer.statesGenerated;
      answers.set(index, answer);
      if (answer.violation !== undefined && answer.violation.walk < least) {
        least = answer.violation.walk;
        // Walks past it need not run anywhere; a worker looks before and during each job.
        queued.redis
          .set(stopAtKey(queued.id), least, 'EX', RUN_KEY_SECONDS)
          .catch((e: unknown) => queued.fail(e));
      }
      merge();
      if (merged >= needed()) queued.done();
      else addJobs();
    },
    describe: (index) =>
      `job ${index} (walks ${index * WALKS_PER_JOB} to ${Math.min((index + 1) * WALKS_PER_JOB, walks) - 1})`,
    progress: () => ({
      distinctStates: seen.size,
      statesGenerated: generatedSoFar,
      queue: queued.waiting,
      depth,
    }),
    // Tells workers still on the run's jobs that it is over: their walks stop at once.
    cleanUp: async ([redis]) => void (await redis!.set(stopAtKey(queued.id), 0, 'EX', RUN_KEY_SECONDS)),
  });

  let added = 0;
  const addJobs = (): void => {
    const batch: WalkJob[] = [];
    for (; added < jobs && added < needed() && added < merged + WINDOW; added++) {
      const firstWalk = added * WALKS_PER_JOB;
      batch.push({
        run: queued.id,
        spec,
        digest,
        options: walkOptions,
        firstWalk,
        walks: Math.min(WALKS_PER_JOB, walks - firstWalk),
      });
    }
    if (batch.length > 0) queued.add('walks', batch);
  };
  addJobs();
  const { ended, seconds } = await queued.ended();
  if (ended !== 'done') stoppedBy = ended;

  const counted = {
    distinctStates: seen.size,
    statesGenerated,
    depth,
    seconds,
    coverage: { fired, neverFired: model.actionKinds.filter((kind) => fired[kind] === 0) },
  };
  if (least < walks && merged >= needed()) {
    const alone = randomSearch(model, { ...walkOptions, firstWalk: least, walks: 1 });
    return {
      result: { ...counted, status: 'violation', violation: alone.violation! },
      workers: walkers.size,
      jobs: queued.jobs,
    };
  }
  return {
    result: { ...counted, status: 'incomplete', stoppedBy },
    workers: walkers.size,
    jobs: queued.jobs,
  };
}
