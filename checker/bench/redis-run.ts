// A distributed breadth-first run on this machine, measured for the bench: redis-servers and
// worker processes of its own, warmed up by a run of the spec, then the run itself in this
// process as its coordinator. What it measures: the bytes each server receives and sends, the CPU of the
// coordinator (this process), of the workers and of the servers, and the jobs and levels, so
// that each can be put per state, per job or per level. Worker processes may each be limited to
// a share of a core (a cgroup's CPU quota, Linux and root only). Everything it starts is stopped
// at the end, however the run ends.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { modelOf } from '../../specs/build.ts';
import { loadSpecFile } from '../../specs/load.ts';
import type { Result } from '../engine/search.ts';
import { distributedBfs } from '../distributed/bfs-coordinator.ts';
import { modelSourceDigest } from '../distributed/commands.ts';
import { specDigest } from '../distributed/digest.ts';
import { type LocalRedis, startLocalRedis } from '../distributed/local-redis.ts';
import { redisAddress } from '../distributed/redis.ts';

export interface RedisSetup {
  readonly spec: string;
  /** Worker processes, each with one walker thread. */
  readonly workers: number;
  readonly servers: number;
  /** Each worker process limited to this share of one core. */
  readonly cpuShare?: number;
}

/** What a distributed run costs, per state, job and level; `seconds` and `cpuSeconds` are then the coordinator's and the run's. */
export interface RedisFigures {
  readonly servers: number;
  readonly cpuShare?: number;
  readonly jobs: number;
  /** The states of each level, for the simulation. */
  readonly levels: readonly number[];
  /** Per server: bytes it received, and sent, per distinct state. */
  readonly serverInBytesPerState: readonly number[];
  readonly serverOutBytesPerState: readonly number[];
  readonly coordinatorBytesPerState: number;
  readonly coordinatorBytesPerJob: number;
  readonly coordinatorCpuUsPerState: number;
  readonly coordinatorCpuMsPerLevel: number;
  /** From a small run's CPU and this one's: per job, and per run whatever its jobs. */
  readonly coordinatorCpuMsPerJob: number;
  readonly coordinatorCpuMsPerRun: number;
  readonly workersCpuUsPerState: number;
  /** The same on the workers' first run of the spec, fresh processes. */
  readonly workersFirstRunCpuUsPerState: number;
  /** Per server. */
  readonly serversCpuUsPerState: readonly number[];
  /** The share of the run's time its own steps took (the rest, its expand steps). */
  readonly ownStepShare: number;
  /** The workers' share of the CPU the run took (workers, servers and coordinator). */
  readonly workersShare: number;
}

export interface RedisMeasure {
  readonly result: Result;
  readonly seconds: number;
  readonly jobs: number;
  readonly levels: readonly number[];
  /** Per server: bytes received and sent. */
  readonly serverIn: readonly number[];
  readonly serverOut: readonly number[];
  /** Bytes this process, the coordinator, read and wrote (all of them Redis's). */
  readonly coordinatorIn: number;
  readonly coordinatorOut: number;
  readonly coordinatorCpu: number;
  /** The coordinator's CPU per job, and per run whatever its jobs, from a small run's and this one's. */
  readonly coordinatorCpuPerJob: number;
  readonly coordinatorCpuPerRun: number;
  readonly workersCpu: number;
  /** The workers' CPU seconds on their first run of the spec, fresh processes. */
  readonly workersCpuFirstRun: number;
  /** Per server: its CPU seconds. */
  readonly serversCpu: readonly number[];
  /** The seconds the expand steps and the own steps took. */
  readonly steps: { readonly expand: number; readonly own: number };
}

const root = fileURLToPath(new URL('../..', import.meta.url));
const TICKS_PER_SECOND = 100;
/** A small run: with the measured one, it parts the coordinator's CPU per job from its CPU per run. */
const SMALL = 'specs/kafka/commit-abort.json';

/** Waits for `child` to print `line` on stdout. */
function printed(child: ChildProcess, line: string, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes(line)) resolve();
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`${what} exited with code ${code}: ${out}`)));
  });
}

function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  child.kill('SIGTERM');
  return exited;
}

/** CPU seconds of process `pid`, every thread of it (Linux's /proc). */
function cpuOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

const cpuSeconds = (usage: NodeJS.CpuUsage): number => (usage.user + usage.system) / 1e6;

/** Bytes this process read and wrote through system calls (Linux's /proc). */
function ioOf(): { read: number; written: number } {
  const io = readFileSync('/proc/self/io', 'utf8');
  return { read: Number(/^rchar: (\d+)/m.exec(io)![1]), written: Number(/^wchar: (\d+)/m.exec(io)![1]) };
}

async function serverFigures(client: Redis): Promise<{ in: number; out: number; cpu: number }> {
  const info = await client.info();
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)![1]);
  return {
    in: field('total_net_input_bytes'),
    out: field('total_net_output_bytes'),
    cpu: field('used_cpu_user') + field('used_cpu_sys'),
  };
}

/**
 * Limits process `pid` to `share` of a core in a cgroup of its own; returns how to remove the
 * cgroup once the process has exited. Throws where cgroups cannot be written.
 */
function capCpu(pid: number, share: number, name: string): () => void {
  const period = 100_000;
  const quota = Math.round(share * period);
  const v2 = '/sys/fs/cgroup/cgroup.controllers';
  if (existsSync(v2) && readFileSync(v2, 'utf8').split(/\s+/).includes('cpu')) {
    const dir = `/sys/fs/cgroup/${name}`;
    mkdirSync(dir);
    writeFileSync(`${dir}/cpu.max`, `${quota} ${period}`);
    writeFileSync(`${dir}/cgroup.procs`, String(pid));
    return () => rmdirSync(dir);
  }
  const dir = `/sys/fs/cgroup/cpu/${name}`;
  mkdirSync(dir);
  writeFileSync(`${dir}/cpu.cfs_period_us`, String(period));
  writeFileSync(`${dir}/cpu.cfs_quota_us`, String(quota));
  writeFileSync(`${dir}/cgroup.procs`, String(pid));
  return () => rmdirSync(dir);
}

export async function measureRedisRun(setup: RedisSetup): Promise<RedisMeasure> {
  const servers: LocalRedis[] = [];
  const workers: ChildProcess[] = [];
  const clients: Redis[] = [];
  const uncap: (() => void)[] = [];
  try {
    for (let i = 0; i < setup.servers; i++) {
      const redis = await startLocalRedis();
      servers.push(redis);
      clients.push(new Redis(redis.port, '127.0.0.1'));
    }
    const urls = servers.map((redis) => redis.url);
    for (let i = 0; i < setup.workers; i++) {
      const worker = spawn(
        process.execPath,
        ['--import', 'tsx', 'checker/cli.ts', 'worker', '--redis', urls[0]!, '--workers', '1'],
        { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
      );
      workers.push(worker);
      if (setup.cpuShare !== undefined)
        uncap.push(capCpu(worker.pid!, setup.cpuShare, `txcheck-bench-${process.pid}-${i}`));
    }
    await Promise.all(workers.map((w) => printed(w, 'taking jobs', 'txcheck worker')));
    const addresses = urls.map((url) => redisAddress(url, 'bench', 'url'));
    const run = (file: string) => {
      const spec = loadSpecFile(file);
      return distributedBfs(
        modelOf(spec),
        { file: spec.file, raw: spec.raw },
        { spec: specDigest(spec.raw, []), model: modelSourceDigest() },
        addresses,
        { deadlockAllowed: spec.deadlockAllowed },
      );
    };
    // Fresh worker processes spend more on their first run of a spec (compiling its code, growing
    // their heaps): the run is measured on workers that ran it once, as long-lived ones have.
    const fresh = workers.map((w) => cpuOf(w.pid!));
    await run(setup.spec);
    const firstRun = workers.reduce((sum, w, i) => sum + cpuOf(w.pid!) - fresh[i]!, 0);
    const small = process.cpuUsage();
    const { jobs: smallJobs } = await run(SMALL);
    const smallCpu = cpuSeconds(process.cpuUsage(small));
    const before = {
      servers: await Promise.all(clients.map(serverFigures)),
      workers: workers.map((w) => cpuOf(w.pid!)),
      cpu: process.cpuUsage(),
      io: ioOf(),
    };
    const start = performance.now();
    const done = await run(setup.spec);
    const seconds = (performance.now() - start) / 1000;
    const cpu = cpuSeconds(process.cpuUsage(before.cpu));
    const perJob = Math.max(0, (cpu - smallCpu) / (done.jobs - smallJobs));
    const io = ioOf();
    const after = await Promise.all(clients.map(serverFigures));
    const workersCpu = workers.reduce((sum, w, i) => sum + cpuOf(w.pid!) - before.workers[i]!, 0);
    return {
      result: done.result,
      seconds,
      jobs: done.jobs,
      levels: done.levels ?? [],
      serverIn: after.map((a, i) => a.in - before.servers[i]!.in),
      serverOut: after.map((a, i) => a.out - before.servers[i]!.out),
      coordinatorIn: io.read - before.io.read,
      coordinatorOut: io.written - before.io.written,
      coordinatorCpu: cpu,
      coordinatorCpuPerJob: perJob,
      coordinatorCpuPerRun: Math.max(0, smallCpu - perJob * smallJobs),
      workersCpu,
      workersCpuFirstRun: firstRun,
      serversCpu: after.map((a, i) => a.cpu - before.servers[i]!.cpu),
      steps: done.steps ?? { expand: 0, own: 0 },
    };
  } finally {
    for (const client of clients) client.disconnect();
    await Promise.all(workers.map(stopped));
    for (const remove of uncap) remove();
    await Promise.all(servers.map((redis) => redis.stop()));
  }
}
