// A worker process of distributed runs: takes jobs from the queue, runs each on one of its walker
// threads, and answers. A random run's job is a range of walks, answered with the walks' figures
// and fingerprints; a breadth-first run's expands states of a level and sends their successors
// that the visited set does not hold to the shards that own them, or decides a shard's part of a
// level (see bfs-coordinator.ts, expand.ts and visited-shards.ts); an own job is made in one
// transaction, so that a retry of a job whose writes were made returns the answer they saved. A
// job whose spec or code digest is not this worker's is refused, not run; one whose run's keys are gone from Redis
// (epoch.ts) is failed as lost, for its coordinator to stop on. On a signal the job under way
// goes back to the queue for another worker; a worker that dies leaves its job locked until the
// lock expires, when BullMQ's stalled-job check gives it to another worker.
import { hostname } from 'node:os';
import { type Job, UnrecoverableError, WaitingError, Worker } from 'bullmq';
import { type ChainableCommander, Redis } from 'ioredis';
import { InputError } from '../engine/input.ts';
import { WorkerHandle } from '../engine/parallel/handle.ts';
import type { ModelRecipe } from '../engine/parallel/recipe.ts';
import { specDigest, specFiles } from './digest.ts';
import { RUN_OVER, execMarked } from './epoch.ts';
import {
  EXPAND_JOB,
  type ExpandAnswer,
  type ExpandJob,
  OWN_JOB,
  type OwnAnswer,
  type OwnJob,
  inboxKey,
  jobTrailKey,
  levelKey,
  ownedKey,
  shardVisitedKey,
  wordsKey,
  LOST,
  QUEUE,
  REFUSED,
  RUN_KEY_SECONDS,
  type WalkJob,
  type WalkJobAnswer,
  base64Of,
  bytesOf,
  int32sOfBytes,
  stopAtKey,
} from './jobs.ts';
import type { Expanded, Owned, Settled } from './expand.ts';
import { CONNECT_TIMEOUT_MS, type RedisAddress, RedisLost, connectionOf, settlesWithin } from './redis.ts';
import { ShardClients, addMembers, serverOf, unvisited } from './visited-shards.ts';
import type { WalkReply, WalkerRequest } from './walker.ts';

export interface WorkerSetup {
  readonly address: RedisAddress;
  /** Walker threads, hence jobs run at once. */
  readonly threads: number;
  /** How long a job stays locked by a worker that stopped renewing the lock (it died) before another takes it. */
  readonly lockMs: number;
  /** This worker's digest of the model and engine sources (RunDigest.model). */
  readonly modelDigest: string;
  /** How a walker builds the model of a spec; throws InputError for a spec this worker cannot load. */
  recipeOf(file: string, raw: unknown): ModelRecipe;
  /** The files besides itself that a spec makes the model read, as it names them. */
  filesReadBy(raw: unknown): readonly string[];
  /** Non-zero asks the worker to stop. */
  readonly stop: Int32Array;
  /** A line of news (a refused job); and progress, redrawn in place. */
  say(line: string): void;
  onProgress?(p: WorkerProgress): void;
}

export interface WorkerProgress {
  readonly jobs: number;
  readonly walks: number;
  readonly statesGenerated: number;
  readonly refused: number;
  readonly seconds: number;
}

/** How often a job under way looks whether its run found a violation before its walks, or is over. */
const STOP_AT_EVERY_MS = 250;
const STOP_EVERY_MS = 100;
const PROGRESS_EVERY_MS = 1000;
const NO_STOP = 2 ** 31 - 1;

const walkerEntry = new URL('./walker.ts', import.meta.url);

/** Runs until `setup.stop` is set; resolves with the work done. */
export async function runWorker(setup: WorkerSetup): Promise<WorkerProgress> {
  const name = `${hostname()}/${process.pid}`;
  const connection = connectionOf(setup.address);
  const redis = new Redis(connection);
  // A lost connection is retried for as long as the worker runs; say so once per kind of failure rather than per attempt.
  const reported = new Set<string>();
  const report = (e: Error): void => {
    if (reported.has(e.message)) return;
    reported.add(e.message);
    setup.say(`queue at ${setup.address.url}: ${e.message.split('\n')[0]} (the worker carries on)`);
  };
  redis.on('error', report);
  const shards = new ShardClients(report);
  const walkers = Array.from({ length: setup.threads }, (_, i) => ({
    thread: i,
    handle: new WorkerHandle(walkerEntry, {}),
  }));
  const idle = [...walkers];
  const stop = new SharedArrayBuffer(4);
  const start = performance.now();
  const done = { jobs: 0, walks: 0, statesGenerated: 0, refused: 0 };
  const progress = (): WorkerProgress => ({ ...done, seconds: (performance.now() - start) / 1000 });

  /** What the processor throws to fail a job without a retry: no worker of this version would run it either. */
  const refusal = (job: Job, why: string): UnrecoverableError => {
    done.refused++;
    setup.say(`job ${job.id} refused: ${why}`);
    return new UnrecoverableError(`${REFUSED}${why} (worker ${name})`);
  };

  /** Refuses a job whose model or spec digest is not this worker's. */
  const checkDigests = (job: Job<WalkJob | ExpandJob | OwnJob>): void => {
    const data = job.data;
    if (data.digest.model !== setup.modelDigest) {
      throw refusal(
        job,
        `its model digest ${data.digest.model.slice(0, 12)} is not this worker's ${setup.modelDigest.slice(0, 12)} (another version of txcheck or of the model)`,
      );
    }
    const files = specFiles(setup.filesReadBy(data.spec.raw));
    if (data.digest.spec !== specDigest(data.spec.raw, files)) {
      const read =
        files.length === 0
          ? ''
          : ` and the files it names as this worker has them (${files.map((f) => f.path).join(', ')})`;
      throw refusal(
        job,
        `its spec digest ${data.digest.spec.slice(0, 12)} does not match the spec it carries${read}`,
      );
    }
  };

  /** How a walker builds the job's model, once the job's digests are found to be this worker's. */
  const recipeOf = (job: Job<WalkJob | ExpandJob>): ModelRecipe => {
    checkDigests(job);
    try {
      return setup.recipeOf(job.data.spec.file, job.data.spec.raw);
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      throw refusal(job, e.message);
    }
  };

  type Walker = (typeof walkers)[number];
  /** A request to the job's walker thread; a thread that fails is replaced for the next job. */
  const ask = async <T>(
    job: Job,
    walker: Walker,
    request: WalkerRequest,
    transfer: readonly (Int32Array | Uint8Array | null)[] = [],
  ): Promise<T> => {
    try {
      return await walker.handle.request<T>(request, transfer);
    } catch (e) {
      if (e instanceof InputError) throw refusal(job, e.message);
      void walker.handle.terminate();
      walker.handle = new WorkerHandle(walkerEntry, {});
      throw e;
    }
  };

  /** On a signal: back to the queue, for this worker's successor or another worker. */
  const backToQueue = async (job: Job, token: string | undefined): Promise<never> => {
    await job.moveToWait(token);
    throw new WaitingError();
  };

  const walkJob = async (
    job: Job<WalkJob>,
    token: string | undefined,
    walker: Walker,
  ): Promise<WalkJobAnswer> => {
    const data = job.data;
    const recipe = recipeOf(job);
    const stopAt = new SharedArrayBuffer(4);
    const storeStopAt = (least: unknown): void =>
      void Atomics.store(new Int32Array(stopAt), 0, least === null ? NO_STOP : Number(least));
    const watchStopAt = async (): Promise<void> => storeStopAt(await redis.get(stopAtKey(data.run)));
    // The first look also finds whether the run's keys are still there.
    const [[error, least]] = (await execMarked(
      redis,
      redis.pipeline().get(stopAtKey(data.run)),
      data.run,
    )) as [[Error | null, unknown]];
    if (error !== null) throw error;
    storeStopAt(least);
    const timer = setInterval(() => void watchStopAt().catch(() => {}), STOP_AT_EVERY_MS);
    let reply: WalkReply;
    try {
      reply = await ask<WalkReply>(job, walker, {
        kind: 'walks',
        recipe,
        options: data.options,
        firstWalk: data.firstWalk,
        walks: data.walks,
        stopAt,
        stop,
      });
    } finally {
      clearInterval(timer);
    }
    const { result, fingerprints } = reply;
    if (result.stoppedBy === 'signal') return backToQueue(job, token);
    done.jobs++;
    done.walks += data.walks;
    done.statesGenerated += result.statesGenerated;
    return {
      walker: `${name}/${walker.thread}`,
      statesGenerated: result.statesGenerated,
      depth: result.depth,
      fired: result.coverage.fired,
      ...(result.stoppedBy === undefined ? {} : { stoppedBy: result.stoppedBy }),
      ...(result.violation === undefined ? {} : { violation: result.violation }),
      fingerprints: base64Of(fingerprints),
    };
  };

  /** Runs `pipeline` on `client` with a look at the run's mark; throws the first command's error. */
  const run = async (client: Redis, pipeline: ChainableCommander, id: string) => {
    const replies = await execMarked(client, pipeline, id);
    for (const [e] of replies) if (e !== null) throw e;
    return replies.map(([, reply]) => reply);
  };

  const expandJob = async (
    job: Job<ExpandJob>,
    token: string | undefined,
    walker: Walker,
  ): Promise<ExpandAnswer> => {
    const data = job.data;
    const recipe = recipeOf(job);
    const init = data.level < 0;
    const clients = data.servers.map((address) => shards.of(address));
    const [g0, g1] = data.groups;
    const fields = Array.from({ length: g1 - g0 }, (_, g) => String(g0 + g));
    // Per group, per shard: the shard's winners of the group, and the words they are among.
    const winners: (Int32Array | null)[] = new Array((g1 - g0) * data.shards).fill(null);
    const words: (Int32Array | null)[] = new Array((g1 - g0) * data.shards).fill(null);
    if (!init)
      await Promise.all(
        clients.map(async (client, server) => {
          const pipeline = client.pipeline();
          const asked: number[] = [];
          for (let shard = server; shard < data.shards; shard += clients.length) {
            asked.push(shard);
            pipeline.hmgetBuffer(levelKey(data.run, shard, data.level), ...fields);
            pipeline.hmgetBuffer(wordsKey(data.run, shard, data.level), ...fields);
          }
          const replies = await run(client, pipeline, data.run);
          asked.forEach((shard, i) => {
            const sentWords = replies[2 * i + 1] as (Buffer | null)[];
            (replies[2 * i] as (Buffer | null)[]).forEach((bytes, g) => {
              if (bytes === null) return;
              winners[g * data.shards + shard] = int32sOfBytes(bytes);
              const sent = sentWords[g];
              if (sent !== null && sent !== undefined) words[g * data.shards + shard] = int32sOfBytes(sent);
            });
          });
        }),
      );
    const request = {
      kind: 'expand',
      recipe,
      deadlockAllowed: data.deadlockAllowed,
      init,
      job: data.job,
      firstPosition: data.firstPosition,
      states: data.states,
      cut: data.cut,
      shards: data.shards,
      winners,
      words,
      stop,
    } as const;
    const expanded = await ask<Expanded>(job, walker, request, [...winners, ...words]);
    if (expanded.stopped) return backToQueue(job, token);
    const trailShard = data.job % data.shards;
    const trailServer = serverOf(trailShard, clients.length);
    const saveTrail = (pipeline: ChainableCommander): void =>
      void pipeline.set(
        jobTrailKey(data.run, data.shards, data.level, data.job),
        bytesOf(expanded.trail),
        'EX',
        RUN_KEY_SECONDS,
      );
    const answer = {
      walker: `${name}/${walker.thread}`,
      statesGenerated: expanded.statesGenerated,
      fired: expanded.fired,
      deadlock: expanded.deadlock,
      cutOff: expanded.cutOff,
    };
    if (data.cut) {
      const pipeline = clients[trailServer]!.pipeline();
      saveTrail(pipeline);
      await run(clients[trailServer]!, pipeline, data.run);
      done.jobs++;
      return { ...answer, sent: [] };
    }
    const fresh = await unvisited(clients, data.run, data.shards, expanded.candidates);
    const settled = await ask<Settled>(job, walker, { kind: 'settle', fresh }, [fresh]);
    await Promise.all(
      clients.map(async (client, server) => {
        const pipeline = client.pipeline();
        if (server === trailServer && !init) saveTrail(pipeline);
        for (let shard = server; shard < data.shards; shard += clients.length) {
          if (settled.sent[shard] === 0) continue;
          const inbox = inboxKey(data.run, shard, data.level + 1);
          const words = wordsKey(data.run, shard, data.level + 1);
          pipeline.hset(inbox, String(data.job), bytesOf(settled.inboxes[shard]!));
          for (const sent of settled.words)
            if (sent.shard === shard) pipeline.hset(words, String(sent.group), bytesOf(sent.states));
          pipeline.expire(inbox, RUN_KEY_SECONDS).expire(words, RUN_KEY_SECONDS);
        }
        if (pipeline.length > 0) await run(client, pipeline, data.run);
      }),
    );
    done.jobs++;
    done.statesGenerated += expanded.statesGenerated;
    return {
      ...answer,
      sent: settled.sent,
      ...(settled.violation === undefined ? {} : { violation: settled.violation }),
    };
  };

  const ownJob = async (job: Job<OwnJob>, walker: Walker): Promise<OwnAnswer> => {
    const data = job.data;
    checkDigests(job);
    const client = shards.of(data.servers[data.server]!);
    const read = client.pipeline();
    for (const shard of data.owned)
      read.get(ownedKey(data.run, shard, data.level)).hgetallBuffer(inboxKey(data.run, shard, data.level));
    const replies = await run(client, read, data.run);
    // Per shard, the groups it keeps; a retry of a job whose transaction on a shard was made finds them saved there.
    const kept = new Map<number, number[]>();
    const batches: Int32Array[][] = [];
    const deciding: number[] = [];
    data.owned.forEach((shard, i) => {
      const saved = replies[2 * i] as string | null;
      if (saved !== null) return void kept.set(shard, JSON.parse(saved) as number[]);
      deciding.push(shard);
      batches.push(
        Object.entries(replies[2 * i + 1] as Record<string, Buffer>)
          .sort(([a], [b]) => Number(a) - Number(b))
          .map(([, bytes]) => int32sOfBytes(bytes)),
      );
    });
    const decided = await ask<Owned[]>(job, walker, { kind: 'own', batches }, batches.flat());
    // Per shard, one transaction: its new states, its visited set and its groups are all written, or none.
    const write = client.pipeline();
    deciding.forEach((shard, i) => {
      const { fingerprints, pieces, groups } = decided[i]!;
      kept.set(shard, groups);
      const visited = shardVisitedKey(data.run, shard);
      const level = levelKey(data.run, shard, data.level);
      write.call('MULTI');
      addMembers(write, visited, fingerprints);
      for (const { group, winners } of pieces) write.hset(level, String(group), bytesOf(winners));
      write
        .set(ownedKey(data.run, shard, data.level), JSON.stringify(groups), 'EX', RUN_KEY_SECONDS)
        .del(inboxKey(data.run, shard, data.level))
        .expire(visited, RUN_KEY_SECONDS)
        .expire(level, RUN_KEY_SECONDS)
        .call('EXEC');
    });
    if (deciding.length > 0) {
      const results = await run(client, write, data.run);
      if (results.some((reply) => reply === null))
        throw new Error(`a transaction of ${job.id} was discarded`);
    }
    done.jobs++;
    return { walker: `${name}/${walker.thread}`, groups: [...kept.values()].flat() };
  };

  const processor = async (job: Job, token?: string): Promise<WalkJobAnswer | ExpandAnswer | OwnAnswer> => {
    // The worker's concurrency is the number of walkers, so one is idle.
    const walker = idle.pop()!;
    try {
      switch (job.name) {
        case EXPAND_JOB:
          return await expandJob(job, token, walker);
        case OWN_JOB:
          return await ownJob(job, walker);
        default:
          return await walkJob(job, token, walker);
      }
    } catch (e) {
      // No worker could run it on: its run is over, or the server lost it.
      if (!(e instanceof RedisLost)) throw e;
      if (e.why !== RUN_OVER) report(new Error(`${e.why}: the jobs of its run are dropped`));
      throw new UnrecoverableError(`${LOST}${e.why}; found by worker ${name}`);
    } finally {
      idle.push(walker);
    }
  };

  const worker = new Worker(QUEUE, processor, {
    connection,
    name,
    concurrency: setup.threads,
    lockDuration: setup.lockMs,
    stalledInterval: setup.lockMs,
  });
  worker.on('error', report);

  const shown = setInterval(() => setup.onProgress?.(progress()), PROGRESS_EVERY_MS);
  try {
    await new Promise<void>((resolve) => {
      const watch = setInterval(() => {
        if (Atomics.load(setup.stop, 0) === 0) return;
        clearInterval(watch);
        resolve();
      }, STOP_EVERY_MS);
    });
    // Walks under way stop within one walk, and pausing waits for their jobs to go back to the
    // queue; a forced close then does not wait for a Redis that is gone.
    Atomics.store(new Int32Array(stop), 0, 1);
    if (!(await settlesWithin(worker.pause(), CONNECT_TIMEOUT_MS))) {
      setup.say('Redis did not answer: the job under way goes back to the queue when its lock expires');
    }
    await settlesWithin(worker.close(true), CONNECT_TIMEOUT_MS);
  } finally {
    clearInterval(shown);
    await Promise.all(walkers.map((w) => w.handle.terminate()));
    redis.disconnect();
    shards.disconnect();
  }
  return progress();
}
