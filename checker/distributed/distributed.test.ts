// Random walks and breadth-first search spread over worker processes through Redis: a
// coordinator (`check --redis`, run in this process) and `txcheck worker` processes on a
// redis-server of the test's own, on 127.0.0.1. Every result is compared with the same run on
// one machine.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../cli.ts';
import { modelSourceDigest } from './commands.ts';
import { specDigest } from './digest.ts';
import { modelOf } from '../../specs/build.ts';
import { loadSpecFile } from '../../specs/load.ts';
import { distributedBfs } from './bfs-coordinator.ts';
import { distributedSwarm } from './coordinator.ts';
import {
  EXPAND_JOB,
  type ExpandJob,
  OWN_JOB,
  type OwnJob,
  QUEUE,
  inboxKey,
  ownedKey,
  REFUSED,
  WALKS_PER_JOB,
  type WalkJob,
} from './jobs.ts';
import { type LocalRedis, freePort, startLocalRedis } from './local-redis.ts';
import { redisAddress } from './redis.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'txcheck-distributed-'));
const haveRedis = spawnSync('redis-server', ['--version']).status === 0;
const requireRedis = process.env.TXCHECK_REQUIRE_REDIS === '1';
const skipped = !haveRedis && !requireRedis;
const why = 'redis-server is not on PATH';
if (skipped)
  console.warn(`The tests on Redis are skipped: ${why} (TXCHECK_REQUIRE_REDIS=1 makes that a failure).`);

/** How long a dead worker's job stays locked in these tests. */
const LOCK_SECONDS = 1;

async function txcheck(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => (out += t), err: (t) => (err += t), errIsTTY: false });
  return { code, out, err };
}

/** What a run reports that must not depend on where it ran. */
function verdict(out: string): unknown {
  // One machine's breadth-first search reports its memory too.
  const { seconds: _seconds, workers: _workers, memory: _memory, violation, ...rest } = JSON.parse(out);
  const { traceFile: _traceFile, ...where } = violation ?? {};
  return violation === undefined ? rest : { ...rest, violation: where };
}

class WorkerProcess {
  readonly child: ChildProcess;
  out = '';
  err = '';
  readonly exited: Promise<number | null>;

  constructor(url: string) {
    this.child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'checker/cli.ts',
        'worker',
        '--redis',
        url,
        '--workers',
        '1',
        '--lock-seconds',
        String(LOCK_SECONDS),
      ],
      {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    this.child.stdout!.on('data', (d) => (this.out += d));
    this.child.stderr!.on('data', (d) => (this.err += d));
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
  }

  /** The name BullMQ records as a job's processedBy. */
  get name(): string {
    return `${hostname()}/${this.child.pid}`;
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    return this.exited;
  }
}

async function until(condition: () => Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const end = performance.now() + ms;
  while (!(await condition())) {
    if (performance.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(skipped)(`runs on Redis${skipped ? ` (skipped: ${why})` : ''}`, { timeout: 60_000 }, () => {
  let redis: LocalRedis | undefined;
  let url = '';
  let queue: Queue<WalkJob>;
  let events: QueueEvents;
  let client: Redis;

  beforeAll(async () => {
    if (!haveRedis) throw new Error(`TXCHECK_REQUIRE_REDIS=1, but ${why}`);
    redis = await startLocalRedis();
    url = redis.url;
    const port = redis.port;
    queue = new Queue(QUEUE, { connection: { host: '127.0.0.1', port } });
    events = new QueueEvents(QUEUE, { connection: { host: '127.0.0.1', port } });
    client = new Redis(port, '127.0.0.1');
    await events.waitUntilReady();
  });

  afterAll(async () => {
    client?.disconnect();
    await Promise.all([queue?.close(), events?.close()]);
    await redis?.stop();
  });

  describe('a coordinator and two workers', () => {
    const workers: WorkerProcess[] = [];
    beforeAll(() => {
      workers.push(new WorkerProcess(url), new WorkerProcess(url));
    });
    afterAll(async () => {
      const codes = await Promise.all(workers.map((w) => w.stop()));
      expect(codes).toEqual([0, 0]);
      for (const w of workers) expect(w.out).toMatch(/^txcheck worker: stopped by SIGTERM: \d+ jobs, /m);
    });

    it.each([
      ['TwoPhase', 'specs/two-phase/tp3-commit-early.json', ['--seed', '8', '--max-depth', '3']],
      ['Kafka', 'specs/kafka/hanging-transaction.json', ['--seed', '28']],
    ])(
      '%s with a violation: the violating walk, trace and counts of one machine',
      async (name, spec, flags) => {
        const args = ['check', spec, '--strategy', 'random', '--walks', '1000', ...flags, '--json'];
        const one = await txcheck(...args, '--workers', '1', '-o', join(dir, `${name}-one.itf.json`));
        const many = await txcheck(...args, '--redis', url, '-o', join(dir, `${name}-many.itf.json`));
        expect(one.code).toBe(1);
        // The seed puts the violation past the first job, so that several jobs run before it.
        expect(JSON.parse(one.out).violation.walk).toBeGreaterThanOrEqual(WALKS_PER_JOB);
        expect(many.err).toBe('');
        expect(many.code).toBe(1);
        expect(verdict(many.out)).toEqual(verdict(one.out));
        expect(readFileSync(join(dir, `${name}-many.itf.json`), 'utf8')).toBe(
          readFileSync(join(dir, `${name}-one.itf.json`), 'utf8'),
        );
      },
    );

    it.each([
      ['TwoPhase', 'specs/two-phase/tp5.json'],
      ['Kafka', 'specs/kafka/commit-abort.json'],
    ])(
      '%s without a violation: the distinct and generated counts of the thread swarm',
      async (_name, spec) => {
        const args = ['check', spec, '--strategy', 'random', '--walks', '700', '--json'];
        const swarm = await txcheck(...args, '--workers', '2');
        const many = await txcheck(...args, '--redis', url);
        expect(many.code).toBe(3);
        expect(verdict(many.out)).toEqual(verdict(swarm.out));
        expect(JSON.parse(many.out)).toMatchObject({ status: 'incomplete', stoppedBy: 'walks' });
      },
    );

    it.each([
      ['TwoPhase, holds', 'specs/two-phase/tp5.json', []],
      ['TwoPhase, violated', 'specs/two-phase/tp3-commit-early.json', []],
      ['Kafka, holds', 'specs/kafka/commit-abort.json', []],
      ['Kafka, violated', 'specs/kafka/delayed-produce.json', []],
      ['Kafka, a depth bound', 'specs/kafka/commit-abort.json', ['--max-depth', '12']],
    ])('breadth-first, %s: the counts, verdict and trace of one machine', async (name, spec, flags) => {
      const args = ['check', spec, '--strategy', 'bfs', ...flags, '--json'];
      const one = await txcheck(...args, '--workers', '1', '-o', join(dir, `bfs-${name}-one.itf.json`));
      const many = await txcheck(...args, '--redis', url, '-o', join(dir, `bfs-${name}-many.itf.json`));
      expect(many.err).toBe('');
      expect(many.code).toBe(one.code);
      expect(verdict(many.out)).toEqual(verdict(one.out));
      if (one.code === 1)
        expect(readFileSync(join(dir, `bfs-${name}-many.itf.json`), 'utf8')).toBe(
          readFileSync(join(dir, `bfs-${name}-one.itf.json`), 'utf8'),
        );
      // The run's keys are gone: the queue's are BullMQ's; a random run's stop-at key and a run's
      // mark, which tells workers that it is over, expire by themselves.
      expect(
        (await client.keys('txcheck:run:*')).filter(
          (key) => !key.endsWith(':stop-at') && !key.endsWith(':epoch'),
        ),
      ).toEqual([]);
    });

    it('breadth-first with the visited set sharded over two Redis servers: the result of one machine', async () => {
      const second = await startLocalRedis();
      const other = new Redis(second.port, '127.0.0.1');
      try {
        const args = ['check', 'specs/two-phase/tp5.json', '--json'];
        const one = await txcheck(...args, '--workers', '1');
        const many = await txcheck(...args, '--redis', `${url},${second.url}`);
        expect(many.err).toBe('');
        expect(verdict(many.out)).toEqual(verdict(one.out));
        // Both shards were asked, and both were cleaned up.
        for (const server of [client, other]) {
          expect(await server.info('commandstats')).toMatch(/cmdstat_smismember:calls=[1-9]/);
          expect(await server.keys('txcheck:run:*:visited')).toEqual([]);
        }
      } finally {
        other.disconnect();
        await second.stop();
      }
    });

    it('refuses a job whose model, spec or variant file digest is not its own, without a retry', async () => {
      const specOf = (file: string) => ({ file, raw: JSON.parse(readFileSync(join(root, file), 'utf8')) });
      const tp3 = specOf('specs/two-phase/tp3.json');
      // A variant file the worker reads at the path the spec names: its contents on the coordinator's machine differ.
      const lenient = specOf('specs/kafka/examples/lenient-produce.json');
      const job = (spec: WalkJob['spec'], model: string, digest: string): WalkJob => ({
        run: 'refused',
        spec,
        digest: { model, spec: digest },
        options: { seed: 0, maxDepth: 10, deadlockAllowed: false },
        firstWalk: 0,
        walks: WALKS_PER_JOB,
      });
      const refused = {
        'refused-model': job(tp3, '0'.repeat(64), specDigest(tp3.raw, [])),
        'refused-spec': job(tp3, modelSourceDigest(), specDigest({ ...tp3.raw, resourceManagers: 4 }, [])),
        'refused-variant': job(
          lenient,
          modelSourceDigest(),
          specDigest(lenient.raw, [
            { path: lenient.raw.variant.overrides, content: Buffer.from('export const overrides = {};\n') },
          ]),
        ),
      };
      for (const [id, data] of Object.entries(refused))
        await queue.add('walks', data, { jobId: id, attempts: 3 });
      for (const id of Object.keys(refused))
        await until(async () => (await queue.getJobState(id)) === 'failed', `job ${id} to fail`);
      const failed = await Promise.all(Object.keys(refused).map((id) => queue.getJob(id)));
      for (const j of failed) {
        expect(j!.failedReason.startsWith(REFUSED)).toBe(true);
        expect(j!.attemptsMade).toBe(1);
      }
      expect(failed[0]!.failedReason).toMatch(
        /its model digest 000000000000 is not this worker's [0-9a-f]{12} \(another version of txcheck or of the model\)/,
      );
      expect(failed[1]!.failedReason).toMatch(
        /its spec digest [0-9a-f]{12} does not match the spec it carries \(worker /,
      );
      expect(failed[2]!.failedReason).toMatch(
        /its spec digest [0-9a-f]{12} does not match the spec it carries and the files it names as this worker has them \(specs\/kafka\/examples\/lenient-produce\.ts\)/,
      );
      const lines = workers.map((w) => w.err).join('');
      expect(lines).toMatch(/^txcheck worker: job refused-model refused: its model digest 000000000000 /m);
    });
  });

  // Long enough walks that a worker is sure to be inside a job when it is stopped.
  const long = [
    'check',
    'specs/two-phase/tp5.json',
    '--strategy',
    'random',
    '--walks',
    String(30 * WALKS_PER_JOB),
    '--max-depth',
    '2000',
    '--json',
  ];

  it('a worker killed mid-job leaves the job to another: the result of one machine', async () => {
    const one = await txcheck(...long, '--workers', '1');
    const [a, b] = [new WorkerProcess(url), new WorkerProcess(url)];
    try {
      const stalled: string[] = [];
      events.on('stalled', ({ jobId }) => stalled.push(jobId));
      const many = txcheck(...long, '--redis', url);
      let held = '';
      await until(async () => {
        const active = await queue.getActive();
        held = active.find((j) => j.processedBy === a.name && j.data.firstWalk > 0)?.id ?? '';
        return held !== '';
      }, 'worker a to hold a job past the first');
      a.child.kill('SIGKILL');
      expect(await a.exited).toBe(null);
      const run = await many;
      expect(run.code).toBe(3);
      expect(verdict(run.out)).toEqual(verdict(one.out));
      // BullMQ's stalled-job check gave the dead worker's job back to the queue.
      expect(stalled).toContain(held);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it.each([
    ['Kafka, violated', 'specs/kafka/stale-end-txn.json'],
    ['TwoPhase, holds', 'specs/two-phase/tp5.json'],
  ])(
    'breadth-first, %s: a worker killed holding a job leaves the job to another: the result of one machine',
    async (_name, spec) => {
      const args = ['check', spec, '--json'];
      const one = await txcheck(...args, '--workers', '1', '-o', join(dir, 'killed-one.itf.json'));
      const [a, b] = [new WorkerProcess(url), new WorkerProcess(url)];
      try {
        const stalled: string[] = [];
        events.on('stalled', ({ jobId }) => stalled.push(jobId));
        const many = txcheck(...args, '--redis', url, '-o', join(dir, 'killed-many.itf.json'));
        // Frozen, worker a can neither finish the job it holds nor take another: the one it holds is the one it dies with.
        let held = '';
        await until(async () => {
          a.child.kill('SIGSTOP');
          held =
            (await queue.getActive()).find(
              (j) =>
                j.processedBy === a.name &&
                j.name === EXPAND_JOB &&
                (j.data as unknown as ExpandJob).level > 0,
            )?.id ?? '';
          if (held === '') a.child.kill('SIGCONT');
          return held !== '';
        }, 'worker a to hold a job past the first level');
        a.child.kill('SIGKILL');
        expect(await a.exited).toBe(null);
        const run = await many;
        expect(run.err).toBe('');
        expect(verdict(run.out)).toEqual(verdict(one.out));
        if (one.code === 1)
          expect(readFileSync(join(dir, 'killed-many.itf.json'), 'utf8')).toBe(
            readFileSync(join(dir, 'killed-one.itf.json'), 'utf8'),
          );
        expect(stalled).toContain(held);
      } finally {
        await Promise.all([a.stop(), b.stop()]);
      }
    },
  );

  it("breadth-first: a worker killed after its shard's writes, before its answer: the retry does not decide twice", async () => {
    const args = ['check', 'specs/kafka/stale-end-txn.json', '--json'];
    const one = await txcheck(...args, '--workers', '1', '-o', join(dir, 'owned-one.itf.json'));
    const second = await startLocalRedis();
    const shardServer = new Redis(second.port, '127.0.0.1');
    const [a, b] = [new WorkerProcess(url), new WorkerProcess(url)];
    try {
      const stalled: string[] = [];
      events.on('stalled', ({ jobId }) => stalled.push(jobId));
      const many = txcheck(
        ...args,
        '--redis',
        `${url},${second.url}`,
        '-o',
        join(dir, 'owned-many.itf.json'),
      );
      // Worker a frozen holding the own job of the second server, before its transactions.
      let held: OwnJob | undefined;
      let heldId = '';
      // Its shards that have something to decide: the ones its transactions write.
      let deciding: number[] = [];
      await until(async () => {
        a.child.kill('SIGSTOP');
        const job = (await queue.getActive()).find(
          (j) => j.processedBy === a.name && j.name === OWN_JOB && (j.data as unknown as OwnJob).server === 1,
        );
        const data = job?.data as unknown as OwnJob | undefined;
        if (data !== undefined) {
          const inboxes = await Promise.all(
            data.owned.map((shard) => shardServer.exists(inboxKey(data.run, shard, data.level))),
          );
          deciding = data.owned.filter((_, i) => inboxes[i] === 1);
        }
        if (data !== undefined && deciding.length > 0) {
          held = data;
          heldId = job!.id!;
        } else a.child.kill('SIGCONT');
        return held !== undefined;
      }, 'worker a to hold an own job on the second server');
      // Writes paused on the queue's server, a makes its writes on the second and cannot answer; then it dies.
      await client.call('CLIENT', 'PAUSE', '10000', 'WRITE');
      a.child.kill('SIGCONT');
      try {
        await until(
          async () =>
            (await shardServer.exists(
              ...deciding.map((shard) => ownedKey(held!.run, shard, held!.level)),
            )) === deciding.length,
          "worker a's transaction",
        );
        a.child.kill('SIGKILL');
        expect(await a.exited).toBe(null);
      } finally {
        await client.call('CLIENT', 'UNPAUSE');
      }
      const run = await many;
      expect(run.err).toBe('');
      expect(verdict(run.out)).toEqual(verdict(one.out));
      expect(readFileSync(join(dir, 'owned-many.itf.json'), 'utf8')).toBe(
        readFileSync(join(dir, 'owned-one.itf.json'), 'utf8'),
      );
      expect(stalled).toContain(heldId);
    } finally {
      shardServer.disconnect();
      await Promise.all([a.stop(), b.stop()]);
      await second.stop();
    }
  });

  it('a worker stopped by SIGTERM mid-job puts the job back on the queue and exits 0', async () => {
    const one = await txcheck(...long, '--workers', '1');
    const a = new WorkerProcess(url);
    let b: WorkerProcess | undefined;
    try {
      const many = txcheck(...long, '--redis', url);
      await until(
        async () => (await queue.getActive()).some((j) => j.processedBy === a.name && j.data.firstWalk > 0),
        'worker a to hold a job past the first',
      );
      expect(await a.stop()).toBe(0);
      expect(a.out).toMatch(/^txcheck worker: stopped by SIGTERM: \d+ jobs, /m);
      // Its job is waiting again at once: with no other worker, a job left locked would stay active.
      expect(await queue.getActiveCount()).toBe(0);
      expect(await queue.getWaitingCount()).toBeGreaterThan(0);
      b = new WorkerProcess(url);
      const run = await many;
      expect(verdict(run.out)).toEqual(verdict(one.out));
    } finally {
      await Promise.all([a.stop(), b?.stop()]);
    }
  });

  it('a coordinator with no worker says so once and keeps waiting, for either kind of run', async () => {
    const own = await startLocalRedis();
    try {
      const spec = loadSpecFile('specs/two-phase/tp3.json');
      const model = modelOf(spec);
      const job = { file: spec.file, raw: spec.raw };
      const digest = { spec: specDigest(spec.raw, []), model: modelSourceDigest() };
      const address = redisAddress(own.url, 'test', 'url');
      const stop = new Int32Array(new SharedArrayBuffer(4));
      const lines: string[] = [];
      const waiting = {
        say: (line: string) => lines.push(line),
        idleWarningMs: 1000,
        stop,
        deadlockAllowed: false,
      };
      const runs = [
        distributedBfs(model, job, digest, [address], waiting),
        distributedSwarm(model, job, digest, address, { ...waiting, seed: 0, walks: 100, maxDepth: 10 }),
      ];
      await new Promise((resolve) => setTimeout(resolve, 2500));
      const line = `waiting for a worker on ${own.url}: none has taken a job for 1 s`;
      expect(lines).toEqual([line, line]);
      Atomics.store(stop, 0, 1);
      for (const { result } of await Promise.all(runs))
        expect(result).toMatchObject({
          status: 'incomplete',
          stoppedBy: 'signal',
          distinctStates: expect.any(Number),
        });
    } finally {
      await own.stop();
    }
  });

  // A breadth-first run of some seconds on one worker, and a random one: a fault is injected once the run is under way.
  const midRun = {
    bfs: ['check', 'specs/kafka/coordinator-failover.json', '--json', '--max-seconds', '50'],
    random: [...long.slice(0, -1), '--max-seconds', '50', '--json'],
  };
  // Seen by the coordinator itself, or by a worker on a job: gone, or (from a snapshot) older than the run.
  const keysLost = (port: number, older: boolean) =>
    new RegExp(
      `^command line: --redis: expected a Redis server that keeps the run's keys until the run ends, got ` +
        (older
          ? `127\\.0\\.0\\.1:${port} restarted during the run \\(its run_id \\w+ is not the run's \\w+; what it holds may be older than the run\\)`
          : `the run's keys gone from 127\\.0\\.0\\.1:${port} \\(flushed, or the server restarted\\)`) +
        `(; found by worker [^ ]+ on job \\d+ [^\\n]*)?\\n$`,
    );

  // A restart loses the keys, unless the server saved them: then it brings back older ones.
  describe.each(['flushall', 'restart', 'restart from a snapshot'] as const)(
    "Redis loses the run's keys mid-run (%s): one line and a non-zero exit, never an answer, never a hang",
    (fault) => {
      it.each([
        ['bfs', 1],
        ['bfs', 2],
        ['bfs', 3],
        ['random', 1],
      ] as const)('%s, round %i', async (kind, _round) => {
        const saved = ['--dir', mkdtempSync(join(tmpdir(), 'txcheck-redis-'))];
        let own = await startLocalRedis(undefined, ...saved);
        const watcher = new Redis(own.port, '127.0.0.1', { maxRetriesPerRequest: null });
        watcher.on('error', () => {});
        const worker = new WorkerProcess(own.url);
        try {
          const run = txcheck(...midRun[kind], '--redis', own.url);
          // Under way: a few levels saved, or some walks answered.
          await until(
            async () =>
              (await watcher.keys(kind === 'bfs' ? 'txcheck:run:*:trail:6:*' : 'bull:txcheck-walks:*'))
                .length > (kind === 'bfs' ? 0 : 8),
            'the run to get under way',
          );
          const injected = performance.now();
          if (fault === 'flushall') await watcher.flushall();
          else {
            if (fault === 'restart from a snapshot') await watcher.save();
            own.server.kill('SIGKILL');
            await own.stop();
            own = await startLocalRedis(own.port, ...saved);
          }
          const { code, out, err } = await run;
          expect(err).toMatch(keysLost(own.port, fault === 'restart from a snapshot'));
          expect(code).toBe(2);
          expect(JSON.parse(out)).toMatchObject({ status: 'error' });
          expect(performance.now() - injected).toBeLessThan(20_000);
        } finally {
          watcher.disconnect();
          await worker.stop();
          await own.stop();
        }
      });
    },
  );

  it('two runs at once on one Redis, three times: each the result of one machine', async () => {
    const one = await txcheck('check', 'specs/kafka/commit-abort.json', '--json', '--workers', '1');
    const worker = new WorkerProcess(url);
    try {
      for (let round = 0; round < 3; round++) {
        const runs = await Promise.all(
          [0, 1].map(() =>
            txcheck(
              'check',
              'specs/kafka/commit-abort.json',
              '--json',
              '--max-seconds',
              '30',
              '--redis',
              url,
            ),
          ),
        );
        for (const run of runs) {
          expect(run.err).toBe('');
          expect(verdict(run.out)).toEqual(verdict(one.out));
        }
      }
    } finally {
      await worker.stop();
    }
  });

  it("a coordinator whose reader of the queue's events starts late still hears the answers given before", async () => {
    const one = await txcheck('check', 'specs/kafka/commit-abort.json', '--json', '--workers', '1');
    const worker = new WorkerProcess(url);
    // The events of the first jobs come before the reader's first look at the stream.
    const startReading = QueueEvents.prototype.run;
    QueueEvents.prototype.run = async function (this: QueueEvents) {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      return startReading.call(this);
    };
    try {
      await until(async () => worker.out.includes('taking jobs'), 'the worker to start');
      const run = await txcheck(
        'check',
        'specs/kafka/commit-abort.json',
        '--json',
        '--max-seconds',
        '20',
        '--redis',
        url,
      );
      expect(run.err).toBe('');
      expect(verdict(run.out)).toEqual(verdict(one.out));
    } finally {
      QueueEvents.prototype.run = startReading;
      await worker.stop();
    }
  });

  it('a password-protected Redis: one line saying so, exit 2, for check and worker', async () => {
    const locked = await startLocalRedis(undefined, '--requirepass', 'secret');
    try {
      for (const argv of [
        ['check', 'specs/two-phase/tp3.json', '--redis', locked.url],
        ['worker', '--redis', locked.url],
      ]) {
        const run = await txcheck(...argv);
        expect(run.code).toBe(2);
        expect(run.err).toBe(
          `command line: --redis: expected a Redis server that takes commands without a password (a --redis URL carries none), got NOAUTH at 127.0.0.1:${locked.port}\n`,
        );
      }
    } finally {
      await locked.stop();
    }
  });

  it('a Redis that may evict keys when its memory is full: one line, exit 2', async () => {
    const evicting = await startLocalRedis(
      undefined,
      '--maxmemory',
      '100mb',
      '--maxmemory-policy',
      'allkeys-lru',
    );
    try {
      const run = await txcheck('check', 'specs/two-phase/tp3.json', '--redis', evicting.url);
      expect(run.code).toBe(2);
      expect(run.err).toBe(
        `command line: --redis: expected a Redis server that never evicts keys (no maxmemory, or maxmemory-policy noeviction), got maxmemory-policy allkeys-lru with maxmemory 104857600 at 127.0.0.1:${evicting.port}\n`,
      );
    } finally {
      await evicting.stop();
    }
  });

  it('a Redis that stops answering mid-run: one line within the bound, not a hang', async () => {
    const own = await startLocalRedis();
    const worker = new WorkerProcess(own.url);
    try {
      await until(async () => worker.out.includes('taking jobs'), 'the worker to start');
      const spec = loadSpecFile('specs/kafka/coordinator-failover.json');
      const model = modelOf(spec);
      const run = distributedBfs(
        model,
        { file: spec.file, raw: spec.raw },
        { spec: specDigest(spec.raw, []), model: modelSourceDigest() },
        [redisAddress(own.url, 'test', 'url')],
        { deadlockAllowed: spec.deadlockAllowed, answerWithinMs: 2000 },
      );
      // However it ends, it is heard: a run that fails before the fault fails the test, not the file.
      const outcome = run.then(
        ({ result }) => result.status,
        (e: Error) => e.message,
      );
      const watcher = new Redis(own.port, '127.0.0.1');
      await until(
        async () => (await watcher.keys('txcheck:run:*:trail:4:*')).length > 0,
        'the run to get under way',
      );
      watcher.disconnect();
      own.server.kill('SIGSTOP');
      const stopped = performance.now();
      expect(await outcome).toBe(`lost Redis: no answer from 127.0.0.1:${own.port} for 2 s`);
      expect(performance.now() - stopped).toBeLessThan(12_000);
    } finally {
      own.server.kill('SIGCONT');
      await worker.stop();
      await own.stop();
    }
  });

  it('a Redis that goes away: the coordinator says so in one line, exit 2; a worker still stops on SIGTERM', async () => {
    const own = await startLocalRedis();
    const worker = new WorkerProcess(own.url);
    try {
      const many = txcheck(...long, '--redis', own.url);
      await until(async () => worker.out.includes('taking jobs'), 'the worker to start');
      await own.stop();
      const [run, code] = await Promise.all([many, worker.stop()]);
      expect(run.code).toBe(2);
      expect(run.err).toMatch(
        new RegExp(
          `^command line: --redis: expected a Redis server that stays reachable for the whole run, got ECONNREFUSED at 127\\.0\\.0\\.1:${own.port} for \\d+ s\\n$`,
        ),
      );
      expect(code).toBe(0);
      expect(worker.out).toMatch(/^txcheck worker: stopped by SIGTERM: /m);
    } finally {
      await Promise.all([worker.stop(), own.stop()]);
    }
  });
});

/** A port on 127.0.0.1 where nothing listens. */
const closed = await freePort();

/** A server on 127.0.0.1 that takes connections and `answer`s whatever it is sent (or says nothing); its port. */
function fakeServer(answer?: string): Promise<number> {
  const server = createServer((socket) => {
    socket.on('error', () => {});
    if (answer !== undefined) socket.on('data', () => socket.write(answer));
  });
  server.unref();
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
  );
}
const silent = await fakeServer();
const notRedis = await fakeServer('HTTP/1.1 400 Bad Request\r\n\r\n');

describe('check --redis and worker refuse bad input in one line', () => {
  const check = (...flags: string[]) => ['check', 'specs/two-phase/tp3.json', ...flags, '--json'];
  const elsewhere = 'redis://127.0.0.1:6379';
  it.each([
    [
      'a URL of another scheme',
      () => check('--strategy', 'random', '--redis', 'http://127.0.0.1:6379'),
      '--redis: expected a redis://host:port URL, got "http://127.0.0.1:6379"',
    ],
    [
      'no URL',
      () => check('--strategy', 'random', '--redis', '127.0.0.1'),
      '--redis: expected a redis://host:port URL, got "127.0.0.1"',
    ],
    [
      'a database in the URL',
      () => check('--strategy', 'random', '--redis', `${elsewhere}/2`),
      '--redis: expected a redis://host:port URL, with no user, password, database or parameters',
    ],
    [
      'a list of URLs for random walks',
      () => check('--strategy', 'random', '--redis', `${elsewhere},redis://127.0.0.1:6380`),
      '--redis: expected one redis://host:port URL with --strategy random',
    ],
    [
      'a server twice in the list',
      () => check('--redis', `${elsewhere},redis://127.0.0.1:6379/`),
      '--redis: expected each Redis server once in the list, got 127.0.0.1:6379 twice',
    ],
    [
      'a bad URL in the list',
      () => check('--redis', `${elsewhere},127.0.0.1:6380`),
      '--redis: expected a redis://host:port URL, got "127.0.0.1:6380"',
    ],
    [
      '--max-states with breadth-first search',
      () => check('--max-states', '9', '--redis', elsewhere),
      '--max-states: expected no --max-states (or spec maxStates) with --redis: bound a distributed run by --max-depth or --max-seconds',
    ],
    [
      '--checkpoint with --redis',
      () => check('--checkpoint', join(dir, 'never.ckpt'), '--redis', elsewhere),
      '--checkpoint: expected no --checkpoint with --redis: a checkpoint saves the search of one machine',
    ],
    [
      '--workers with --redis',
      () => check('--strategy', 'random', '--workers', '2', '--redis', elsewhere),
      '--workers: expected no --workers with --redis',
    ],
    [
      '--max-states with --redis',
      () => check('--strategy', 'random', '--max-states', '9', '--redis', elsewhere),
      '--max-states: expected no --max-states',
    ],
    [
      'a Redis that is not there',
      () => check('--strategy', 'random', '--redis', `redis://127.0.0.1:${closed}`),
      `--redis: expected a Redis server that answers within 3 s, got ECONNREFUSED at 127.0.0.1:${closed}`,
    ],
    [
      'a worker without --redis',
      () => ['worker'],
      '--redis: expected the redis://host:port URL of the queue to take jobs from',
    ],
    [
      'a worker with a file',
      () => ['worker', 'specs/two-phase/tp3.json', '--redis', elsewhere],
      'specs/two-phase/tp3.json: expected nothing after worker',
    ],
    [
      'a worker with a check option',
      () => ['worker', '--redis', elsewhere, '--seed', '1'],
      '--seed: expected no such option for worker',
    ],
    [
      'a worker with a bad lock time',
      () => ['worker', '--redis', elsewhere, '--lock-seconds', '0'],
      '--lock-seconds: expected an integer from 1 to 3600, got 0',
    ],
    [
      'a worker on a Redis that is not there',
      () => ['worker', '--redis', `redis://127.0.0.1:${closed}`],
      `--redis: expected a Redis server that answers within 3 s, got ECONNREFUSED at 127.0.0.1:${closed}`,
    ],
    [
      'a server that takes the connection and never answers',
      () => check('--redis', `redis://127.0.0.1:${silent}`),
      `--redis: expected a Redis server that answers within 3 s, got no answer at 127.0.0.1:${silent} (it took the connection and said nothing)`,
    ],
    [
      'a worker on a server that never answers',
      () => ['worker', '--redis', `redis://127.0.0.1:${silent}`],
      `--redis: expected a Redis server that answers within 3 s, got no answer at 127.0.0.1:${silent} (it took the connection and said nothing)`,
    ],
    [
      'a server that is not Redis',
      () => check('--redis', `redis://127.0.0.1:${notRedis}`),
      `--redis: expected a Redis server that answers within 3 s, got a server that does not speak Redis's protocol at 127.0.0.1:${notRedis}`,
    ],
    [
      'a worker on a server that is not Redis',
      () => ['worker', '--redis', `redis://127.0.0.1:${notRedis}`],
      `--redis: expected a Redis server that answers within 3 s, got a server that does not speak Redis's protocol at 127.0.0.1:${notRedis}`,
    ],
  ])('%s', async (_name, argv, message) => {
    const args = argv();
    const start = performance.now();
    const run = await txcheck(...args);
    expect(performance.now() - start).toBeLessThan(4500);
    expect(run.code).toBe(2);
    const line = `command line: ${message}`;
    expect(run.err.slice(0, line.length)).toBe(line);
    expect(run.err).toMatch(/^[^\n]+\n$/);
    if (args.includes('--json')) expect(JSON.parse(run.out)).toMatchObject({ status: 'error' });
  });

  it('a spec that checks liveness, which needs the state graph on one machine', async () => {
    const run = await txcheck(
      'check',
      'specs/kafka/commit-abort-liveness.json',
      '--redis',
      'redis://127.0.0.1:6379',
    );
    expect(run.code).toBe(2);
    expect(run.err).toMatch(
      /^specs\/kafka\/commit-abort-liveness\.json: liveness: expected no liveness properties with --redis \(liveness is checked on the state graph of one machine\), got [^\n]+\n$/,
    );
  });
});
