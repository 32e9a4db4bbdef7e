// The coordinator of a distributed random run: puts the run's walks on the queue as jobs of
// WALKS_PER_JOB walk indices, a window at a time, and merges the answers in job order. Walk i
// depends on (seed, i) alone, so the walks are those of one machine whoever runs them. Once a
// job reports a violation, jobs past it are not worth running (their walks are told to stop); the
// run ends when every job up to it has answered, and the violation reported is the least
// violating walk, rerun here for its trace. Only the jobs up to that walk are counted, each
// state once by its fingerprint, so the counts are those of the same walks on one thread.
import { randomUUID } from 'node:crypto';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { InputError } from '../engine/input.ts';
import type { Model } from '../engine/model.ts';
import { randomSearch } from '../engine/random.ts';
import type { Limit, Progress, Result } from '../engine/search.ts';
import { VisitedSet } from '../engine/visited.ts';
import type { RunDigest } from './digest.ts';
import { QUEUE, REFUSED, RUN_KEY_SECONDS, WALKS_PER_JOB, type WalkJob, type WalkJobAnswer, type WalkOptions, jobId, jobIndex, stopAtKey } from './jobs.ts';
import { CONNECT_TIMEOUT_MS, LOST_AFTER_MS, type RedisAddress, RedisLost, connectionOf, settlesWithin } from './redis.ts';

export interface DistributedOptions extends WalkOptions {
  readonly walks: number;
  readonly maxSeconds?: number;
  readonly onProgress?: (p: Progress) => void;
  readonly progressEveryMs?: number;
  /** Non-zero asks the run to stop. */
  readonly stop?: Int32Array;
}

export interface DistributedRun {
  readonly result: Result;
  /** How many walker threads ran the jobs counted. */
  readonly workers: number;
}

/** Jobs on the queue at once: enough to keep many machines busy, few enough that a violation leaves little work to drop. */
const WINDOW = 256;
const CHECK_EVERY_MS = 100;

export async function distributedSwarm<S, A>(model: Model<S, A>, spec: WalkJob['spec'], digest: RunDigest, address: RedisAddress, options: DistributedOptions): Promise<DistributedRun> {
  const { seed, maxDepth, deadlockAllowed, walks } = options;
  const walkOptions: WalkOptions = { seed, maxDepth, deadlockAllowed };
  const run = randomUUID();
  const connection = connectionOf(address);
  const queue = new Queue<WalkJob, WalkJobAnswer>(QUEUE, { connection });
  const events = new QueueEvents(QUEUE, { connection });
  const redis = new Redis(connection);
  // The clients retry a lost connection; the run waits LOST_AFTER_MS for it to come back.
  let lostSince: number | undefined;
  let lost = '';
  const onError = (e: NodeJS.ErrnoException): void => {
    lostSince ??= performance.now();
    lost = `${e.code ?? e.message} at ${address.host}:${address.port}`;
  };
  queue.on('error', onError);
  events.on('error', onError);
  redis.on('error', onError);
  redis.on('ready', () => (lostSince = undefined));
  const start = performance.now();
  const jobs = Math.ceil(walks / WALKS_PER_JOB);

  let least = walks;
  /** Jobs 0 to needed - 1 hold every walk up to the least violating one. */
  const needed = () => Math.ceil(Math.min(least + 1, walks) / WALKS_PER_JOB);
  let added = 0;
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
    for (let answer = answers.get(merged); answer !== undefined && merged < needed(); answer = answers.get(merged)) {
      answers.delete(merged++);
      const fingerprints = new Int32Array(new Uint8Array(Buffer.from(answer.fingerprints, 'base64')).buffer);
      for (let i = 0; i < fingerprints.length; i += 2) seen.add(fingerprints[i]!, fingerprints[i + 1]!);
      statesGenerated += answer.statesGenerated;
      depth = Math.max(depth, answer.depth);
      for (const kind of model.actionKinds) fired[kind]! += answer.fired[kind] ?? 0;
      walkers.add(answer.walker);
      if (answer.stoppedBy !== undefined && answer.stoppedBy !== 'walks') stoppedBy = answer.stoppedBy;
    }
  };

  const addJobs = async (): Promise<void> => {
    const batch: { name: string; data: WalkJob; opts: { jobId: string; removeOnComplete: true; removeOnFail: { age: number } } }[] = [];
    for (; added < jobs && added < needed() && added < merged + WINDOW; added++) {
      const firstWalk = added * WALKS_PER_JOB;
      const data: WalkJob = { run, spec, digest, options: walkOptions, firstWalk, walks: Math.min(WALKS_PER_JOB, walks - firstWalk) };
      batch.push({ name: 'walks', data, opts: { jobId: jobId(run, added), removeOnComplete: true, removeOnFail: { age: RUN_KEY_SECONDS } } });
    }
    if (batch.length > 0) await queue.addBulk(batch);
  };

  let adding = Promise.resolve();
  const timers: NodeJS.Timeout[] = [];
  const outcome = new Promise<'done' | Limit>((resolve, reject) => {
    events.on('completed', ({ jobId: id, returnvalue }) => {
      const index = jobIndex(run, id);
      if (index === undefined || index < merged || answers.has(index)) return;
      const answer = returnvalue as unknown as WalkJobAnswer;
      generatedSoFar += answer.statesGenerated;
      answers.set(index, answer);
      if (answer.violation !== undefined && answer.violation.walk < least) {
        least = answer.violation.walk;
        // Walks past it need not run anywhere; a worker looks before and during each job.
        redis.set(stopAtKey(run), least, 'EX', RUN_KEY_SECONDS).catch(reject);
      }
      merge();
      if (merged >= needed()) resolve('done');
      else adding = adding.then(addJobs).catch(reject);
    });
    events.on('failed', ({ jobId: id, failedReason }) => {
      const index = jobIndex(run, id);
      if (index === undefined) return;
      const where = `job ${index} (walks ${index * WALKS_PER_JOB} to ${Math.min((index + 1) * WALKS_PER_JOB, walks) - 1})`;
      if (failedReason.startsWith(REFUSED)) reject(new InputError(address.url, where, 'a job the workers take', failedReason));
      else reject(new Error(`distributed run: ${where} failed on a worker: ${failedReason}`));
    });
    timers.push(
      setInterval(() => {
        const seconds = (performance.now() - start) / 1000;
        if (lostSince !== undefined && performance.now() - lostSince > LOST_AFTER_MS) reject(new RedisLost(`${lost} for ${LOST_AFTER_MS / 1000} s`));
        else if (options.stop !== undefined && Atomics.load(options.stop, 0) !== 0) resolve('signal');
        else if (options.maxSeconds !== undefined && seconds >= options.maxSeconds) resolve('maxSeconds');
      }, CHECK_EVERY_MS),
      setInterval(() => {
        const seconds = (performance.now() - start) / 1000;
        const queued = added - merged - answers.size;
        options.onProgress?.({ distinctStates: seen.size, statesGenerated: generatedSoFar, queue: queued, depth, seconds, statesPerSecond: generatedSoFar / seconds });
      }, options.progressEveryMs ?? 1000),
    );
  });

  // Events of jobs added before the subscription would be lost.
  const started = events.waitUntilReady().then(addJobs);
  // Whichever settles second is awaited by nobody: its rejection must not be unhandled.
  for (const p of [started, outcome]) p.catch(() => {});
  let seconds: number;
  try {
    const ended = await Promise.race([outcome, started.then(() => outcome)]);
    // As for a thread swarm, the time of the search, without the clean-up after it.
    seconds = (performance.now() - start) / 1000;
    if (ended !== 'done') stoppedBy = ended;
  } finally {
    for (const timer of timers) clearInterval(timer);
    // Closing waits for Redis to answer; without Redis, only disconnecting ends the clients.
    const closed = lostSince === undefined && (await settlesWithin(cleanUp(queue, redis, run, added, merged), CONNECT_TIMEOUT_MS)) && (await settlesWithin(Promise.all([events.close(), queue.close()]), CONNECT_TIMEOUT_MS));
    if (!closed) void Promise.all([events.disconnect(), queue.disconnect()]);
    redis.disconnect();
  }

  const counted = {
    distinctStates: seen.size,
    statesGenerated,
    depth,
    seconds,
    coverage: { fired, neverFired: model.actionKinds.filter((kind) => fired[kind] === 0) },
  };
  if (least < walks && merged >= needed()) {
    const alone = randomSearch(model, { ...walkOptions, firstWalk: least, walks: 1 });
    return { result: { ...counted, status: 'violation', violation: alone.violation! }, workers: walkers.size };
  }
  return { result: { ...counted, status: 'incomplete', stoppedBy }, workers: walkers.size };
}

/** Tells workers still on the run's jobs that it is over, and takes its waiting jobs off the queue. */
async function cleanUp(queue: Queue<WalkJob, WalkJobAnswer>, redis: Redis, run: string, added: number, merged: number): Promise<void> {
  await redis.set(stopAtKey(run), 0, 'EX', RUN_KEY_SECONDS);
  // A job a worker holds stays (its walks stop at once and its answer is dropped); the others go.
  for (let index = merged; index < added; index++) await queue.remove(jobId(run, index)).catch(() => 0);
}
