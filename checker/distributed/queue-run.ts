// What the coordinator of any distributed run does with the queue: adds the run's jobs, hears
// their answers and failures, watches the stop flag, the clock, the connection to Redis, the
// run's keys on each of its servers (epoch.ts) and whether any worker takes the jobs, and when
// the run ends takes its jobs off the queue. The coordinator of each kind of run decides which
// jobs to add and what their answers mean.
import { randomUUID } from 'node:crypto';
import { Queue, QueueEvents } from 'bullmq';
import { type ChainableCommander, Redis } from 'ioredis';
import { InputError } from '../engine/input.ts';
import type { Limit, Progress } from '../engine/search.ts';
import { KEPT, epochKey, execMarked, markOver, markServer, whereOf } from './epoch.ts';
import { LOST, QUEUE, REFUSED, RUN_KEY_SECONDS, jobId, jobIndex } from './jobs.ts';
import {
  ANSWER_WITHIN_MS,
  CONNECT_TIMEOUT_MS,
  LOST_AFTER_MS,
  type RedisAddress,
  RedisLost,
  answerFrom,
  connectionOf,
  settlesWithin,
} from './redis.ts';

export interface QueueRunOptions {
  readonly maxSeconds?: number;
  /** Non-zero asks the run to stop. */
  readonly stop?: Int32Array;
  readonly onProgress?: (p: Progress) => void;
  readonly progressEveryMs?: number;
  /** A line of news for the user: that no worker takes the jobs. */
  readonly say?: (line: string) => void;
  /** How long jobs may wait, none of them taken by a worker, before `say` tells so. */
  readonly idleWarningMs?: number;
  /** How long a round trip to Redis may take before the run stops (default ANSWER_WITHIN_MS). */
  readonly answerWithinMs?: number;
}

export interface QueueRunKind<A> {
  /** Further servers the run keeps keys on, besides the queue's (the shards of a breadth-first run's visited set): marked and watched as the queue's. */
  readonly others?: readonly RedisAddress[];
  /** The job's answer, once, for a job still open. */
  answered(index: number, answer: A): void;
  /** The job, for a message about its failure. */
  describe(index: number): string;
  /** The figures of the run so far, for progress lines. */
  progress(): Omit<Progress, 'seconds' | 'statesPerSecond'>;
  /** Called with a client of each of the run's servers (the queue's first) as the run ends, before its jobs are taken off the queue. */
  cleanUp(clients: readonly Redis[]): Promise<void>;
}

const CHECK_EVERY_MS = 100;
const IDLE_WARNING_MS = 10_000;
/** How often the run looks at its mark on each server, between its own round trips. */
const MARK_EVERY_MS = 1000;

/** One run's jobs on the queue, from the first added to the clean-up. */
export class QueueRun<J, A> {
  readonly id = randomUUID();
  /** A client of the queue's Redis, for the run's own keys. */
  readonly redis: Redis;
  /** A client of each of the run's servers, the queue's first. */
  readonly clients: readonly Redis[];
  readonly start = performance.now();
  private readonly queue: Queue;
  /** Made once the run knows where the queue's events stream stands. */
  private events: QueueEvents | undefined;
  private readonly answerWithinMs: number;
  private added = 0;
  /** Jobs added and not answered yet. */
  private readonly open = new Set<number>();
  /** Jobs a worker holds (active, not answered, stalled or sent back). */
  private readonly taken = new Set<string>();
  private over = false;
  /** The run is taking its leave of Redis: no client is made any more. */
  private closing = false;
  private lostSince: number | undefined;
  private lost = '';
  private adding = Promise.resolve();
  private readonly timers: NodeJS.Timeout[] = [];
  private settle!: { resolve(ended: 'done' | Limit): void; reject(e: unknown): void };
  private readonly outcome: Promise<'done' | Limit>;
  /** The run's servers carry its mark: no round trip looks at it before. */
  private readonly marked: Promise<unknown>;
  private readonly ready: Promise<void>;

  constructor(
    private readonly address: RedisAddress,
    private readonly options: QueueRunOptions,
    private readonly kind: QueueRunKind<A>,
  ) {
    const connection = connectionOf(address);
    this.answerWithinMs = options.answerWithinMs ?? ANSWER_WITHIN_MS;
    this.queue = new Queue(QUEUE, { connection });
    this.redis = new Redis(connection);
    this.clients = [this.redis, ...(kind.others ?? []).map((other) => new Redis(connectionOf(other)))];
    this.queue.on('error', this.onError);
    for (const client of this.clients) {
      client.on('error', this.onError);
      client.on('ready', () => (this.lostSince = undefined));
    }
    // Once the run has ended, answers that still come in are not the run's.
    this.outcome = new Promise((resolve, reject) => {
      this.settle = {
        resolve: (ended) => {
          this.over = true;
          resolve(ended);
        },
        reject: (e) => {
          this.over = true;
          reject(e);
        },
      };
    });
    // Whichever of the start and the outcome settles second is awaited by nobody: its rejection must not be unhandled.
    this.outcome.catch(() => {});
    this.watch();
    this.marked = Promise.all(this.clients.map((client) => markServer(client, this.id, this.answerWithinMs)));
    this.marked.catch(() => {});
    this.ready = this.begin();
    this.ready.catch(() => {});
  }

  // The clients retry a lost connection; the run waits LOST_AFTER_MS for it to come back.
  private readonly onError = (e: NodeJS.ErrnoException): void => {
    this.lostSince ??= performance.now();
    this.lost = `${e.code ?? e.message} at ${this.address.host}:${this.address.port}`;
  };

  /** Marks the run's servers, then hears the queue's events from where their stream stands now, before any job is added. */
  private async begin(): Promise<void> {
    await this.marked;
    // Read from the stream's last event rather than from whatever comes once the reader starts
    // (BullMQ's default), which would miss the answers of jobs done before it does.
    const last = (await answerFrom(
      this.redis.xrevrange(this.queue.keys.events!, '+', '-', 'COUNT', 1),
      whereOf(this.redis),
      this.answerWithinMs,
    )) as [string, string[]][];
    // A run that ended meanwhile (a violation among the initial states, a signal) hears nothing more.
    if (this.closing) return;
    const events = new QueueEvents(QUEUE, {
      connection: connectionOf(this.address),
      lastEventId: last[0]?.[0] ?? '0-0',
    });
    this.events = events;
    events.on('error', this.onError);
    this.hear(events);
    await answerFrom(events.waitUntilReady(), whereOf(this.redis), this.answerWithinMs);
  }

  /**
   * Runs the commands `build` adds to a pipeline on the server of `client` (the queue's by
   * default), then a look at the run's mark there; resolves with their replies, or rejects with
   * a RedisLost when the mark is not the run's or no answer comes in time.
   */
  async roundTrip(
    build: (pipeline: ChainableCommander) => void,
    client: Redis = this.redis,
  ): Promise<[Error | null, unknown][]> {
    await this.marked;
    const pipeline = client.pipeline();
    build(pipeline);
    return execMarked(client, pipeline, this.id, this.answerWithinMs);
  }

  /** Puts jobs on the queue, numbered on from the last; resolves with the first one's index. */
  add(name: string, jobs: readonly J[]): number {
    const first = this.added;
    this.added += jobs.length;
    jobs.forEach((_, i) => this.open.add(first + i));
    const batch = jobs.map((data, i) => ({
      name,
      data,
      opts: {
        jobId: jobId(this.id, first + i),
        removeOnComplete: true,
        removeOnFail: { age: RUN_KEY_SECONDS },
      },
    }));
    this.adding = this.adding.then(() => this.ready).then(() => this.queue.addBulk(batch).then(() => {}));
    this.adding.catch((e: unknown) => this.settle.reject(e));
    return first;
  }

  /** Jobs added so far. */
  get jobs(): number {
    return this.added;
  }

  /** Jobs added and not answered. */
  get waiting(): number {
    return this.open.size;
  }

  /** Ends the run with its search done, once a last look finds the run's keys still on every server. */
  done(): void {
    this.over = true;
    Promise.all(this.clients.map((client) => this.roundTrip(() => {}, client))).then(
      () => this.settle.resolve('done'),
      (e: unknown) => this.settle.reject(e),
    );
  }

  /** Fails the run. */
  fail(e: unknown): void {
    this.settle.reject(e);
  }

  /** Waits for the run to end: the search done (`done`), a limit, or a failure; then takes its jobs off the queue. */
  async ended(): Promise<{ ended: 'done' | Limit; seconds: number }> {
    try {
      const ended = await Promise.race([this.outcome, this.ready.then(() => this.outcome)]);
      // As for a thread swarm, the time of the search, without the clean-up after it.
      return { ended, seconds: (performance.now() - this.start) / 1000 };
    } finally {
      this.closing = true;
      for (const timer of this.timers) clearInterval(timer);
      // Closing waits for Redis to answer; without Redis, only disconnecting ends the clients.
      const events = this.events;
      const closed =
        this.lostSince === undefined &&
        (await settlesWithin(this.cleanUp(), CONNECT_TIMEOUT_MS)) &&
        (await settlesWithin(Promise.all([events?.close(), this.queue.close()]), CONNECT_TIMEOUT_MS));
      if (!closed) void Promise.all([events?.disconnect(), this.queue.disconnect()]);
      for (const client of this.clients) client.disconnect();
    }
  }

  private async cleanUp(): Promise<void> {
    await this.kind.cleanUp(this.clients);
    await Promise.all(this.clients.map((client) => markOver(client, this.id)));
    // A job a worker holds stays (its answer is dropped); the others go.
    for (const index of this.open) await this.queue.remove(jobId(this.id, index)).catch(() => 0);
  }

  /** Hears the answers and failures of the run's jobs, and which a worker holds. */
  private hear(events: QueueEvents): void {
    const ours = (id: string): number | undefined => jobIndex(this.id, id);
    events.on('active', ({ jobId: id }) => {
      if (ours(id) !== undefined) this.taken.add(id);
    });
    events.on('waiting', ({ jobId: id }) => this.taken.delete(id));
    events.on('stalled', ({ jobId: id }) => this.taken.delete(id));
    events.on('completed', ({ jobId: id, returnvalue }) => {
      this.taken.delete(id);
      const index = ours(id);
      if (index === undefined || !this.open.delete(index) || this.over) return;
      try {
        this.kind.answered(index, returnvalue as unknown as A);
      } catch (e) {
        this.settle.reject(e);
      }
    });
    events.on('failed', ({ jobId: id, failedReason }) => {
      this.taken.delete(id);
      const index = ours(id);
      if (index === undefined || this.over) return;
      const where = this.kind.describe(index);
      if (failedReason.startsWith(REFUSED))
        this.settle.reject(new InputError(this.address.url, where, 'a job the workers take', failedReason));
      else if (failedReason.startsWith(LOST))
        this.settle.reject(new RedisLost(`${failedReason.slice(LOST.length)} on ${where}`, KEPT));
      else this.settle.reject(new Error(`distributed run: ${where} failed on a worker: ${failedReason}`));
    });
  }

  /** Watches the stop flag, the clock, the connection, the run's mark on each server, and whether any worker takes the jobs. */
  private watch(): void {
    const { stop, maxSeconds, say } = this.options;
    const idleWarningMs = this.options.idleWarningMs ?? IDLE_WARNING_MS;
    // Since when jobs have been waiting with none of them held by a worker, and whether that was said.
    let idleSince = performance.now();
    let told = false;
    this.timers.push(
      setInterval(() => {
        const now = performance.now();
        const seconds = (now - this.start) / 1000;
        if (this.lostSince !== undefined && now - this.lostSince > LOST_AFTER_MS)
          this.settle.reject(new RedisLost(`${this.lost} for ${LOST_AFTER_MS / 1000} s`));
        else if (stop !== undefined && Atomics.load(stop, 0) !== 0) this.settle.resolve('signal');
        else if (maxSeconds !== undefined && seconds >= maxSeconds) this.settle.resolve('maxSeconds');
        if (this.taken.size > 0 || this.open.size === 0) {
          idleSince = now;
          told = false;
        } else if (!told && now - idleSince >= idleWarningMs) {
          told = true;
          say?.(
            `waiting for a worker on ${this.address.url}: none has taken a job for ${Math.round(idleWarningMs / 1000)} s`,
          );
        }
      }, CHECK_EVERY_MS),
      setInterval(() => {
        const seconds = (performance.now() - this.start) / 1000;
        const p = this.kind.progress();
        this.options.onProgress?.({ ...p, seconds, statesPerSecond: p.statesGenerated / seconds });
      }, this.options.progressEveryMs ?? 1000),
    );
    // Between the run's own round trips, a look at its mark on each server, one at a time: a
    // server that lost the keys (the jobs with them) would leave the run waiting for ever.
    let looking = false;
    this.timers.push(
      setInterval(() => {
        if (looking || this.over) return;
        looking = true;
        this.ready
          .then(() =>
            Promise.all(
              this.clients.map((client) =>
                this.roundTrip((p) => void p.expire(epochKey(this.id), RUN_KEY_SECONDS), client),
              ),
            ),
          )
          .then(
            () => (looking = false),
            (e: unknown) => this.settle.reject(e),
          );
      }, MARK_EVERY_MS),
    );
  }
}
