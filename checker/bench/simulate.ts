// A discrete-event simulation of a distributed breadth-first run on 1 to 64 machines, fed with
// the costs `npm run bench` measured here (out/bench.json): what the workers, the servers and the
// coordinator spend per state and per job, the bytes per state, and the states of each level.
// It predicts states/s and which resource bounds the run: the workers, a server's CPU, a
// machine's network, the coordinator, the queue's server, or the level barrier (workers idle
// while a level's last jobs finish). Deterministic: the same inputs give the same table.
//
// A machine has --cores worker threads, a Redis server of its own and a network link of --gbit
// each way. Each level is cut into expand jobs as the coordinator cuts it; a job takes a queue
// round trip to start and one to answer, gathers its states from the servers, expands them,
// tests its successors and sends the new ones, each part waiting for the resource it uses; the
// servers share every job's bytes and CPU evenly (fingerprints spread the states). Then one own
// job per server, then the coordinator starts the next level.
//
//   npx tsx checker/bench/simulate.ts [--bench FILE] [--row NAME] [--scale N] [--cores N] [--gbit N] [--rtt-ms N]
//   npx tsx checker/bench/simulate.ts --shape   (the capped rows: 1 server, machines of one capped core)
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ownJobsOf, statesPerJob } from '../distributed/bfs-coordinator.ts';
import type { RedisFigures } from './redis-run.ts';

/** Bad command-line input or bench file: one line, exit 2. */
class UsageError extends Error {}

/** What the simulation takes from a bench row (run.ts writes these). */
export interface Costs {
  /** Worker CPU per state, µs, and the share of it in own steps. */
  readonly workerUs: number;
  readonly ownShare: number;
  /** Server CPU per state, µs, all servers; and the queue's server's CPU per job, µs. */
  readonly serverUs: number;
  readonly queueUsPerJob: number;
  /** Bytes the servers receive and send per state. */
  readonly bytesIn: number;
  readonly bytesOut: number;
  /** Coordinator CPU per job, µs. */
  readonly coordinatorUsPerJob: number;
  readonly levels: readonly number[];
}

export interface Cluster {
  readonly machines: number;
  readonly cores: number;
  /** Servers: one per machine, or a fixed number. */
  readonly servers: number;
  /** Bytes per second each way on a machine's link. */
  readonly bandwidth: number;
  /** A network round trip, µs. */
  readonly rttUs: number;
  /** Worker CPU per state is divided by this (a capped core: below 1). */
  readonly speed: number;
}

export interface Prediction {
  readonly seconds: number;
  readonly statesPerSecond: number;
  /** Busy share of the run, per kind of resource (the busiest of each kind). */
  readonly busy: Readonly<Record<Resource, number>>;
  /** The share of worker-core time spent waiting at level barriers, idle. */
  readonly barrierIdle: number;
}

type Resource = 'workers' | 'server' | 'network' | 'coordinator' | 'queue';

/** As the coordinator cuts a level of `size` states for `workers` workers. */
export function jobsOf(size: number, workers: number): number[] {
  const per = statesPerJob(size, workers);
  const jobs: number[] = [];
  for (let left = size; left > 0; left -= per) jobs.push(Math.min(per, left));
  return jobs;
}

/** A resource used one at a time, in the order asked: callers ask in time order. */
class Line {
  freeAt = 0;
  busy = 0;
  /** Uses it for `us` from `at` on, or once free; when that ends. */
  use(at: number, us: number): number {
    const start = Math.max(at, this.freeAt);
    this.freeAt = start + us;
    this.busy += us;
    return this.freeAt;
  }
}

/** Events in time order, ties in the order they were scheduled. */
class Agenda {
  private readonly heap: { at: number; seq: number; run: (at: number) => void }[] = [];
  private seq = 0;

  at(at: number, run: (at: number) => void): void {
    const heap = this.heap;
    heap.push({ at, seq: this.seq++, run });
    for (let i = heap.length - 1; i > 0;) {
      const up = (i - 1) >> 1;
      if (!this.before(heap[i]!, heap[up]!)) break;
      [heap[i], heap[up]] = [heap[up]!, heap[i]!];
      i = up;
    }
  }

  /** Runs the events until none is left; the time of the last. */
  run(): number {
    let now = 0;
    const heap = this.heap;
    while (heap.length > 0) {
      const top = heap[0]!;
      const last = heap.pop()!;
      if (heap.length > 0) {
        heap[0] = last;
        for (let i = 0; ;) {
          const l = 2 * i + 1;
          const r = l + 1;
          let m = i;
          if (l < heap.length && this.before(heap[l]!, heap[m]!)) m = l;
          if (r < heap.length && this.before(heap[r]!, heap[m]!)) m = r;
          if (m === i) break;
          [heap[i], heap[m]] = [heap[m]!, heap[i]!];
          i = m;
        }
      }
      now = top.at;
      top.run(now);
    }
    return now;
  }

  private before(a: { at: number; seq: number }, b: { at: number; seq: number }): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }
}

export function simulate(costs: Costs, cluster: Cluster): Prediction {
  const { machines, cores, servers: serverCount, bandwidth, rttUs, speed } = cluster;
  const servers = Array.from({ length: serverCount }, () => new Line());
  const linksIn = Array.from({ length: machines }, () => new Line());
  const linksOut = Array.from({ length: machines }, () => new Line());
  const coordinator = new Line();
  // The queue's server is the first server: its CPU is shared.
  const queue = servers[0]!;
  let queueBusy = 0;
  let coreBusy = 0;
  let barrierIdle = 0;
  const usPerByte = 1e6 / bandwidth;
  const expandUs = (costs.workerUs * (1 - costs.ownShare)) / speed;
  const ownUs = (costs.workerUs * costs.ownShare) / speed;
  const agenda = new Agenda();
  /** Half a queue round trip: the message, and the queue's server's work for it; then `next`. */
  const hop = (at: number, next: (at: number) => void): void =>
    agenda.at(at + rttUs / 2, (t) => {
      queueBusy += costs.queueUsPerJob / 2;
      agenda.at(queue.use(t, costs.queueUsPerJob / 2) + rttUs / 2, next);
    });
  /** The servers' part of `states` states' CPU, spread evenly, from `at`; when the last is done. */
  const serve = (at: number, states: number, share: number): number =>
    Math.max(...servers.map((s) => s.use(at, (states * costs.serverUs * share) / serverCount)));

  let distinct = 0;
  const level = (l: number, start: number): void => {
    const size = costs.levels[l];
    if (size === undefined) return;
    distinct += size;
    const jobs = jobsOf(size, machines * cores);
    let next = 0;
    let open = jobs.length;
    let levelEnd = start;
    const idleSince: number[] = [];
    // A core takes the next job as it frees, machine by machine.
    const take = (machine: number, at: number): void => {
      const states = jobs[next++];
      if (states === undefined) return void idleSince.push(at);
      hop(at, (taken) => {
        const gathered = Math.max(
          linksIn[machine]!.use(taken, states * costs.bytesOut * usPerByte),
          serve(taken, states, 0.5),
        );
        agenda.at(gathered + states * expandUs + rttUs, (computed) => {
          const sent = Math.max(
            linksOut[machine]!.use(computed, states * costs.bytesIn * usPerByte),
            serve(computed, states, 0.5),
          );
          hop(sent + rttUs, (answered) => {
            coreBusy += answered - at;
            const heard = coordinator.use(answered, costs.coordinatorUsPerJob);
            levelEnd = Math.max(levelEnd, heard);
            take(machine, answered);
            if (--open === 0) agenda.at(levelEnd, (end) => own(end));
          });
        });
      });
    };
    const own = (end: number): void => {
      for (const since of idleSince) barrierIdle += end - since;
      // Own: each server's share of the level, in as many jobs as the coordinator makes, on its machine's cores.
      let left = serverCount;
      let owned = end;
      const share = size / serverCount;
      const parallel = Math.min(cores, Math.max(1, ownJobsOf(share)));
      for (let s = 0; s < serverCount; s++)
        hop(end, (began) => {
          const work = (share * ownUs) / parallel + 2 * rttUs;
          coreBusy += work * parallel;
          hop(began + work, (done) => {
            owned = Math.max(owned, coordinator.use(done, costs.coordinatorUsPerJob));
            if (--left > 0) return;
            barrierIdle += (owned - end) * machines * cores - size * ownUs;
            agenda.at(owned, (t) => level(l + 1, t));
          });
        });
    };
    for (let c = 0; c < machines * cores; c++) take(c % machines, start);
  };
  level(0, 0);
  const now = agenda.run();
  const seconds = now / 1e6;
  const busiest = (lines: readonly Line[]) => Math.max(...lines.map((l) => l.busy)) / now;
  return {
    seconds,
    statesPerSecond: distinct / seconds,
    busy: {
      workers: coreBusy / (now * machines * cores),
      server: busiest(servers),
      network: Math.max(busiest(linksIn), busiest(linksOut)),
      coordinator: coordinator.busy / now,
      queue: queueBusy / now,
    },
    barrierIdle: Math.max(0, barrierIdle) / (now * machines * cores),
  };
}

/** The capped rows' names, less their number of worker processes. */
const CAPPED = 'zombie-redis-capped-';

interface BenchRow {
  readonly workload: string;
  readonly distinct: number;
  readonly seconds: number;
  readonly redis?: Pick<
    RedisFigures,
    | 'cpuShare'
    | 'jobs'
    | 'levels'
    | 'serverInBytesPerState'
    | 'serverOutBytesPerState'
    | 'coordinatorCpuMsPerJob'
    | 'workersCpuUsPerState'
    | 'serversCpuUsPerState'
    | 'ownStepShare'
  >;
}

/** The costs of bench row `name`; the queue's server's CPU per job from a row on two servers, where there is one. */
export function costsOf(rows: readonly BenchRow[], name: string, file: string): Costs {
  const row = rows.find((r) => r.workload === name);
  const r = row?.redis;
  if (row === undefined || r === undefined)
    throw new UsageError(
      `${file}: rows: expected a distributed row named ${name} (npm run bench -- --only ${name})`,
    );
  const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
  // On two servers, the first does the same work as the second plus the queue's.
  const two = rows.find((x) => x.redis?.serversCpuUsPerState.length === 2);
  const queueUsPerJob =
    two === undefined
      ? 0
      : Math.max(
          0,
          ((two.redis!.serversCpuUsPerState[0]! - two.redis!.serversCpuUsPerState[1]!) * two.distinct) /
            two.redis!.jobs,
        );
  return {
    workerUs: r.workersCpuUsPerState,
    ownShare: r.ownStepShare,
    serverUs: sum(r.serversCpuUsPerState) - (queueUsPerJob * r.jobs) / row.distinct,
    queueUsPerJob,
    bytesIn: sum(r.serverInBytesPerState),
    bytesOut: sum(r.serverOutBytesPerState),
    coordinatorUsPerJob: r.coordinatorCpuMsPerJob * 1000,
    levels: r.levels,
  };
}

const RESOURCES: readonly Resource[] = ['workers', 'server', 'network', 'coordinator', 'queue'];

/** What bounds a run: the busiest resource, or the barrier when workers idle more than they are short of. */
function bound(p: Prediction): string {
  const [top] = [...RESOURCES].sort((a, b) => p.busy[b] - p.busy[a]);
  if (top === 'workers' || p.busy[top!] < 0.8) return p.barrierIdle > 0.2 ? 'level barrier' : 'workers';
  return top === 'server' ? 'a server' : top!;
}

function table(
  costs: Costs,
  cluster: Omit<Cluster, 'machines'>,
  machines: readonly number[],
  perServer: boolean,
): string {
  const base = simulate(costs, { ...cluster, machines: 1, servers: 1 });
  const lines = [
    '| machines | states/s | speed-up | workers busy | barrier idle | busiest server | busiest link | coordinator | queue server | bound by |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  const pct = (x: number) => `${Math.round(x * 100)} %`;
  for (const m of machines) {
    const p = simulate(costs, { ...cluster, machines: m, servers: perServer ? m : cluster.servers });
    lines.push(
      `| ${m} | ${Math.round(p.statesPerSecond).toLocaleString('en-US')} | ${(p.statesPerSecond / base.statesPerSecond).toFixed(1)}x | ${pct(p.busy.workers)} | ${pct(p.barrierIdle)} | ${pct(p.busy.server)} | ${pct(p.busy.network)} | ${pct(p.busy.coordinator)} | ${pct(p.busy.queue)} | ${bound(p)} |`,
    );
  }
  return lines.join('\n');
}

function main(): void {
  const options = {
    bench: { type: 'string', default: 'out/bench.json' },
    row: { type: 'string', default: 'kafka-redis-1' },
    scale: { type: 'string', default: '1' },
    cores: { type: 'string', default: '8' },
    gbit: { type: 'string', default: '10' },
    'rtt-ms': { type: 'string', default: '0.2' },
    shape: { type: 'boolean', default: false },
  } as const;
  let values: ReturnType<typeof parseArgs<{ options: typeof options }>>['values'];
  try {
    ({ values } = parseArgs({ options }));
  } catch (e) {
    throw new UsageError(`command line: ${(e as Error).message.split('\n')[0]}`, { cause: e });
  }
  const number = (name: keyof typeof values, min: number): number => {
    const x = Number(values[name]);
    if (!(x >= min))
      throw new UsageError(
        `command line: --${name}: expected a number of at least ${min}, got ${JSON.stringify(values[name])}`,
      );
    return x;
  };
  // Numbers first, so that a bad one is named even when the bench file is missing too.
  const scale = number('scale', 1);
  const cluster = {
    cores: number('cores', 1),
    servers: 1,
    bandwidth: (number('gbit', 0.001) * 1e9) / 8,
    rttUs: number('rtt-ms', 0) * 1000,
    speed: 1,
  };
  const file = values.bench!;
  let rows: BenchRow[];
  try {
    rows = (JSON.parse(readFileSync(file, 'utf8')) as { rows: BenchRow[] }).rows;
  } catch (e) {
    throw new UsageError(
      `${file}: expected the JSON npm run bench writes, got ${(e as Error).message.split('\n')[0]}`,
      { cause: e },
    );
  }
  if (!Array.isArray(rows))
    throw new UsageError(`${file}: rows: expected the list of rows npm run bench writes`);
  if (values.shape) {
    // The capped rows: machines of one worker core at its capped share, one server, on loopback.
    const measured = rows.filter((r) => r.workload.startsWith(CAPPED));
    const first = measured.find((r) => r.workload === `${CAPPED}1`);
    const costs = costsOf(rows, `${CAPPED}1`, file);
    const share = first?.redis?.cpuShare ?? 1;
    console.log(
      table(costs, { cores: 1, servers: 1, bandwidth: 1e9, rttUs: 50, speed: share }, [1, 2, 4, 8], false),
    );
    console.log(
      `\nmeasured, distinct states/s: ${measured.map((r) => `${r.workload.slice(CAPPED.length)} processes ${Math.round(r.distinct / r.seconds).toLocaleString('en-US')}`).join(', ')}`,
    );
    return;
  }
  const base = costsOf(rows, values.row!, file);
  const costs = { ...base, levels: base.levels.map((size) => Math.round(size * scale)) };
  console.log(
    `${values.row} of ${file}, levels x${scale} (${costs.levels.reduce((a, b) => a + b, 0).toLocaleString('en-US')} states); machines of ${cluster.cores} worker cores, a server each, ${values.gbit} Gbit/s, ${values['rtt-ms']} ms round trips\n`,
  );
  console.log(table(costs, cluster, [1, 2, 4, 8, 16, 32, 64], true));
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    main();
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`${e.message}\n`);
    process.exitCode = 2;
  }
}
