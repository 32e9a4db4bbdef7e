// npm run bench: the reference workloads, each in a fresh process so its peak memory is its
// own. Prints a table and writes the same rows as JSON. The bench measures; it never fails.
//
//   npm run bench -- [--only NAME[,NAME...]] [--out FILE]
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runSearch } from '../strategy.ts';
import { modelOf } from '../../specs/build.ts';
import { loadSpecFile, type RunOptions } from '../../specs/load.ts';
import { measureRedisRun, type RedisFigures } from './redis-run.ts';

interface Workload {
  readonly name: string;
  readonly spec: string;
  readonly workers: number;
  readonly options?: Partial<RunOptions>;
  /** The workload whose seconds the speed-up divides. */
  readonly baseline?: string;
  /** Run with partial-order reduction or sleep sets, whatever the spec says. */
  readonly reduction?: 'por' | 'sleep';
  /** A distributed breadth-first run on this machine: `workers` is then the worker processes. */
  readonly redis?: { readonly servers: number; readonly cpuShare?: number };
}

const SWARM = { strategy: 'random', walks: 500_000, maxDepth: 20, seed: 1 } as const;
/** The share of a core each capped worker process gets. */
const CAPPED_SHARE = 0.1;

const workloads: readonly Workload[] = [
  { name: 'tp8-bfs-1', spec: 'specs/two-phase/tp8.json', workers: 1 },
  { name: 'tp8-bfs-2', spec: 'specs/two-phase/tp8.json', workers: 2, baseline: 'tp8-bfs-1' },
  { name: 'tp3-swarm-1', spec: 'specs/two-phase/tp3.json', workers: 1, options: SWARM },
  {
    name: 'tp3-swarm-2',
    spec: 'specs/two-phase/tp3.json',
    workers: 2,
    options: SWARM,
    baseline: 'tp3-swarm-1',
  },
  { name: 'kafka-bfs-1', spec: 'specs/kafka/bench.json', workers: 1 },
  { name: 'kafka-bfs-2', spec: 'specs/kafka/bench.json', workers: 2, baseline: 'kafka-bfs-1' },
  {
    name: 'kafka-bfs-symmetry-1',
    spec: 'specs/kafka/bench-symmetry.json',
    workers: 1,
    baseline: 'kafka-bfs-1',
  },
  {
    name: 'kafka-bfs-por-1',
    spec: 'specs/kafka/bench.json',
    workers: 1,
    baseline: 'kafka-bfs-1',
    reduction: 'por',
  },
  {
    name: 'kafka-bfs-sleep-1',
    spec: 'specs/kafka/bench.json',
    workers: 1,
    baseline: 'kafka-bfs-1',
    reduction: 'sleep',
  },
  { name: 'kafka-large-1', spec: 'specs/kafka/bench-large.json', workers: 1 },
  { name: 'kafka-large-2', spec: 'specs/kafka/bench-large.json', workers: 2, baseline: 'kafka-large-1' },
  {
    name: 'kafka-large-sleep-2',
    spec: 'specs/kafka/bench-large.json',
    workers: 2,
    baseline: 'kafka-large-2',
    reduction: 'sleep',
  },
  {
    name: 'kafka-redis-1',
    spec: 'specs/kafka/bench.json',
    workers: 1,
    baseline: 'kafka-bfs-1',
    redis: { servers: 1 },
  },
  {
    name: 'kafka-redis-2',
    spec: 'specs/kafka/bench.json',
    workers: 2,
    baseline: 'kafka-bfs-1',
    redis: { servers: 1 },
  },
  {
    name: 'kafka-redis-2x2',
    spec: 'specs/kafka/bench.json',
    workers: 2,
    baseline: 'kafka-bfs-1',
    redis: { servers: 2 },
  },
  // Worker processes of a tenth of a core each, as small machines: the shape of more machines,
  // for the simulation (eight of them take 0.8 of this machine's cores).
  ...[1, 2, 4, 8].map((n) => ({
    name: `zombie-redis-capped-${n}`,
    spec: 'specs/kafka/zombie-fencing.json',
    workers: n,
    ...(n === 1 ? {} : { baseline: 'zombie-redis-capped-1' }),
    redis: { servers: 1, cpuShare: CAPPED_SHARE },
  })),
  { name: 'tp3-first-cex-1', spec: 'specs/two-phase/tp3-commit-early.json', workers: 1 },
  { name: 'tp3-first-cex-2', spec: 'specs/two-phase/tp3-commit-early.json', workers: 2 },
  { name: 'kafka-first-cex-1', spec: 'specs/kafka/stale-end-txn.json', workers: 1 },
  { name: 'kafka-first-cex-2', spec: 'specs/kafka/stale-end-txn.json', workers: 2 },
];

interface Row {
  readonly workload: string;
  readonly workers: number;
  readonly status: string;
  readonly distinct: number;
  readonly generated: number;
  readonly seconds: number;
  /** CPU time of every thread of the process: what the run cost, whatever else the machine ran. */
  readonly cpuSeconds: number;
  readonly statesPerSecond: number;
  readonly visitedBytesPerState?: number;
  readonly traceBytesPerState?: number;
  /** The most the breadth-first queue took, per distinct state (one thread, packed states). */
  readonly queueBytesPerState?: number;
  readonly peakRssMB: number;
  readonly redis?: RedisFigures;
  speedUp?: number;
}

async function measureRedis(w: Workload, redis: NonNullable<Workload['redis']>): Promise<Row> {
  const m = await measureRedisRun({ spec: w.spec, workers: w.workers, ...redis });
  const distinct = m.result.distinctStates;
  const levels = m.levels.length;
  const serversCpu = m.serversCpu.reduce((a, b) => a + b, 0);
  const total = m.workersCpu + serversCpu + m.coordinatorCpu;
  return {
    workload: w.name,
    workers: w.workers,
    status: m.result.status,
    distinct,
    generated: m.result.statesGenerated,
    seconds: round(m.seconds),
    cpuSeconds: round(total),
    statesPerSecond: Math.round(m.result.statesGenerated / m.seconds),
    peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
    redis: {
      servers: redis.servers,
      ...(redis.cpuShare === undefined ? {} : { cpuShare: redis.cpuShare }),
      jobs: m.jobs,
      levels: m.levels,
      serverInBytesPerState: m.serverIn.map((b) => round(b / distinct)),
      serverOutBytesPerState: m.serverOut.map((b) => round(b / distinct)),
      coordinatorBytesPerState: round((m.coordinatorIn + m.coordinatorOut) / distinct),
      coordinatorBytesPerJob: Math.round((m.coordinatorIn + m.coordinatorOut) / m.jobs),
      coordinatorCpuUsPerState: round((m.coordinatorCpu * 1e6) / distinct),
      coordinatorCpuMsPerLevel: round((m.coordinatorCpu * 1e3) / levels),
      coordinatorCpuMsPerJob: round(m.coordinatorCpuPerJob * 1e3),
      coordinatorCpuMsPerRun: round(m.coordinatorCpuPerRun * 1e3),
      workersCpuUsPerState: round((m.workersCpu * 1e6) / distinct),
      workersFirstRunCpuUsPerState: round((m.workersCpuFirstRun * 1e6) / distinct),
      serversCpuUsPerState: m.serversCpu.map((cpu) => round((cpu * 1e6) / distinct)),
      ownStepShare: round(m.steps.own / (m.steps.own + m.steps.expand)),
      workersShare: round(m.workersCpu / total),
    },
  };
}

/** In the child process: runs one workload and prints its row as JSON. */
async function measure(w: Workload): Promise<Row> {
  if (w.redis !== undefined) return measureRedis(w, w.redis);
  const loaded = loadSpecFile(w.spec);
  const spec =
    w.reduction === 'por'
      ? { ...loaded, reduction: true }
      : w.reduction === 'sleep'
        ? { ...loaded, sleep: true }
        : loaded;
  const model = modelOf(spec);
  const options = { strategy: 'bfs' as const, seed: 0, walks: 1000, ...spec.defaults, ...w.options };
  // Wall time from before the workers start to the result, as a user waits for it.
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  const result = await runSearch(spec, model, options, w.workers);
  const seconds = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  const perState = (bytes: number | undefined) =>
    bytes === undefined ? undefined : round(bytes / result.distinctStates);
  return {
    workload: w.name,
    workers: w.workers,
    status:
      result.violation === undefined
        ? result.status
        : `${result.status} ${result.violation.property} (${result.violation.trace.actions.length} steps)`,
    distinct: result.distinctStates,
    generated: result.statesGenerated,
    seconds: round(seconds),
    cpuSeconds: round((cpu.user + cpu.system) / 1e6),
    statesPerSecond: Math.round(result.statesGenerated / seconds),
    visitedBytesPerState: perState(result.memory?.visitedBytes),
    traceBytesPerState: perState(result.memory?.traceBytes),
    queueBytesPerState: perState(result.memory?.queueBytes),
    peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
  };
}

const round = (x: number) => Math.round(x * 100) / 100;

function table(rows: readonly Row[]): string {
  const head = [
    'workload',
    'workers',
    'distinct',
    'generated',
    'seconds',
    'CPU s',
    'states/s',
    'visited B/state',
    'trace B/state',
    'queue B/state',
    'peak RSS MB',
    'speed-up',
    'result',
  ];
  const cells = rows.map((r) => [
    r.workload,
    String(r.workers),
    r.distinct.toLocaleString('en-US'),
    r.generated.toLocaleString('en-US'),
    r.seconds.toFixed(2),
    r.cpuSeconds.toFixed(2),
    r.statesPerSecond.toLocaleString('en-US'),
    r.visitedBytesPerState?.toFixed(1) ?? '-',
    r.traceBytesPerState?.toFixed(1) ?? '-',
    r.queueBytesPerState?.toFixed(1) ?? '-',
    String(r.peakRssMB),
    r.speedUp === undefined ? '' : `${r.speedUp.toFixed(2)}x`,
    r.status,
  ]);
  return markdown(head, cells);
}

function markdown(head: readonly string[], cells: readonly (readonly string[])[]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: readonly string[]) => `| ${c.map((x, i) => x.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

/** The distributed runs' costs: per state, per job, per level, and where the CPU went. */
function redisTable(rows: readonly Row[]): string {
  const head = [
    'workload',
    'processes',
    'servers',
    'core share',
    'jobs',
    'levels',
    'server in B/state',
    'server out B/state',
    'coord. B/state',
    'coord. B/job',
    'coord. CPU µs/state',
    'coord. CPU ms/level',
    'coord. CPU ms/job',
    'coord. CPU ms/run',
    'workers CPU µs/state',
    'first run',
    'servers CPU µs/state',
    "workers' share",
    'own steps',
  ];
  const bytes = (xs: readonly number[]) => xs.map((x) => x.toFixed(0)).join(' + ');
  const cells = rows.flatMap(({ workload, workers, redis: r }) =>
    r === undefined
      ? []
      : [
          [
            workload,
            String(workers),
            String(r.servers),
            r.cpuShare === undefined ? '-' : String(r.cpuShare),
            r.jobs.toLocaleString('en-US'),
            String(r.levels.length),
            bytes(r.serverInBytesPerState),
            bytes(r.serverOutBytesPerState),
            r.coordinatorBytesPerState.toFixed(2),
            r.coordinatorBytesPerJob.toLocaleString('en-US'),
            r.coordinatorCpuUsPerState.toFixed(2),
            r.coordinatorCpuMsPerLevel.toFixed(1),
            r.coordinatorCpuMsPerJob.toFixed(2),
            r.coordinatorCpuMsPerRun.toFixed(0),
            r.workersCpuUsPerState.toFixed(1),
            r.workersFirstRunCpuUsPerState.toFixed(1),
            r.serversCpuUsPerState.map((x) => x.toFixed(1)).join(' + '),
            `${Math.round(r.workersShare * 100)} %`,
            `${Math.round(r.ownStepShare * 100)} %`,
          ],
        ],
  );
  return markdown(head, cells);
}

const usage = `npm run bench -- [--only NAME[,NAME...]] [--out FILE]
  --only NAME,...   run these workloads alone: ${workloads.map((w) => w.name).join(', ')}
  --out FILE        where to write the rows as JSON (default out/bench.json)
`;

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        only: { type: 'string' },
        out: { type: 'string' },
        child: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    process.stderr.write(
      `command line: ${(e as Error).message.split('\n')[0]} (see npm run bench -- --help)\n`,
    );
    process.exitCode = 2;
    return;
  }
  if (values.help === true) {
    process.stdout.write(usage);
    return;
  }
  if (values.child !== undefined) {
    process.stdout.write(
      `${JSON.stringify(await measure(workloads.find((w) => w.name === values.child)!))}\n`,
    );
    return;
  }
  const only = values.only?.split(',');
  const unknown = only?.find((name) => !workloads.some((w) => w.name === name));
  if (unknown !== undefined) {
    process.stderr.write(
      `command line: --only: expected workload names from ${workloads.map((w) => w.name).join(', ')}, got ${JSON.stringify(unknown)}\n`,
    );
    process.exitCode = 2;
    return;
  }
  const chosen = workloads.filter((w) => only === undefined || only.includes(w.name));
  const rows: Row[] = [];
  for (const w of chosen) {
    process.stderr.write(`${w.name}...\n`);
    let out: string;
    try {
      out = execFileSync(
        process.execPath,
        ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', w.name],
        { encoding: 'utf8', maxBuffer: 1 << 24, stdio: ['ignore', 'pipe', 'pipe'] },
      );
    } catch (e) {
      // A distributed run needs a redis-server, and a capped one cgroups it can write.
      if (w.redis === undefined) throw e;
      const why = String((e as { stderr?: string }).stderr ?? e)
        .trim()
        .split('\n')
        .at(-1);
      process.stderr.write(`${w.name}: skipped (${why})\n`);
      continue;
    }
    const row = JSON.parse(out.trim().split('\n').at(-1)!) as Row;
    const base = rows.find((r) => r.workload === w.baseline);
    if (base !== undefined) row.speedUp = round(base.seconds / row.seconds);
    rows.push(row);
  }
  process.stdout.write(`${table(rows)}\n`);
  if (rows.some((r) => r.redis !== undefined)) process.stdout.write(`\n${redisTable(rows)}\n`);
  const file = values.out ?? 'out/bench.json';
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify({ node: process.version, rows }, null, 2)}\n`);
  process.stdout.write(`Written to ${file}\n`);
}

await main();
