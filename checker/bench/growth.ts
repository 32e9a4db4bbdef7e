// npm run growth: how the Kafka model's state count grows with the configuration. Checks one
// grid of specs (instances of the transactional.id × partitions × transactions per instance ×
// one fault kind at a time), each in a fresh process on one thread under a time bound, and
// prints states, depth, seconds and peak memory per cell as a markdown table. No property is
// checked: a cell measures the whole reachable state space.
//
//   npm run growth -- [--variant NAME] [--max-seconds N] [--instances 1,2] [--partitions 1,2,3]
//                     [--transactions 1,2,3] [--faults none,requestTimeouts,...] [--json]
//
// A cell whose search a bound stops is shown as "> N"; the cells past it on the same row
// (more transactions) are skipped, since a larger configuration holds at least its states.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runSearch } from '../strategy.ts';
import { modelOf } from '../../specs/build.ts';
import { loadSpecFile } from '../../specs/load.ts';

const FAULTS = ['none', 'requestTimeouts', 'producerCrashes', 'coordinatorFailovers', 'requestLoss'];

interface Cell {
  readonly instances: number;
  readonly partitions: number;
  readonly transactions: number;
  readonly fault: string;
  readonly status: string;
  readonly states?: number;
  readonly depth?: number;
  readonly seconds?: number;
  readonly peakRssMB?: number;
}

const list = (s: string) => s.split(',').filter((x) => x !== '');
const numbers = (flag: string, s: string) =>
  list(s).map((x) => {
    const n = Number(x);
    if (!Number.isInteger(n) || n < 1 || n > 4) {
      process.stderr.write(
        `txcheck growth: command line: ${flag}: expected integers from 1 to 4, got ${x}\n`,
      );
      process.exit(2);
    }
    return n;
  });

/** In the child process: checks one cell's spec on this thread and prints its cell as JSON. */
async function measure(file: string, maxSeconds: number, at: Omit<Cell, 'status'>): Promise<Cell> {
  const spec = loadSpecFile(file);
  const options = { strategy: 'bfs' as const, seed: 0, walks: 1, ...spec.defaults, maxSeconds };
  const result = await runSearch(spec, modelOf(spec), options, 1);
  return {
    ...at,
    status: result.violation === undefined ? result.status : `violation ${result.violation.property}`,
    states: result.distinctStates,
    depth: result.depth,
    seconds: Math.round(result.seconds * 10) / 10,
    peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
  };
}

function run(dir: string, variant: string, maxSeconds: number, at: Omit<Cell, 'status'>): Cell {
  const spec = {
    model: 'kafka',
    description: 'one cell of the growth table',
    variant,
    partitions: at.partitions,
    instancesPerId: at.instances,
    transactionsPerInstance: at.transactions,
    consumers: { readCommitted: 1 },
    ...(at.fault === 'none' ? {} : { faults: { [at.fault]: 1 } }),
    // No property: the cell measures the whole reachable state space, which a violation would cut short.
    properties: [],
    deadlock: true,
  };
  const file = join(dir, 'cell.json');
  writeFileSync(file, JSON.stringify(spec));
  const out = spawnSync(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', JSON.stringify({ file, maxSeconds, at })],
    { encoding: 'utf8', maxBuffer: 1 << 24 },
  );
  try {
    return JSON.parse(out.stdout.trim().split('\n').at(-1)!) as Cell;
  } catch {
    return { ...at, status: `failed: ${(out.stderr.trim().split('\n')[0] ?? '').slice(0, 120)}` };
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      variant: { type: 'string', default: 'kafka-4.0' },
      'max-seconds': { type: 'string', default: '60' },
      instances: { type: 'string', default: '1,2' },
      partitions: { type: 'string', default: '1,2,3' },
      transactions: { type: 'string', default: '1,2,3' },
      faults: { type: 'string', default: FAULTS.join(',') },
      json: { type: 'boolean', default: false },
      child: { type: 'string' },
    },
  });
  if (values.child !== undefined) {
    const { file, maxSeconds, at } = JSON.parse(values.child) as {
      file: string;
      maxSeconds: number;
      at: Omit<Cell, 'status'>;
    };
    process.stdout.write(`${JSON.stringify(await measure(file, maxSeconds, at))}\n`);
    return;
  }
  const maxSeconds = Number(values['max-seconds']);
  if (!(maxSeconds > 0)) {
    process.stderr.write(`txcheck growth: command line: --max-seconds: expected a positive number\n`);
    process.exit(2);
  }
  const faults = list(values.faults);
  for (const f of faults)
    if (!FAULTS.includes(f)) {
      process.stderr.write(
        `txcheck growth: command line: --faults: expected some of ${FAULTS.join(', ')}, got ${f}\n`,
      );
      process.exit(2);
    }
  const dir = mkdtempSync(join(tmpdir(), 'txcheck-growth-'));
  const cells: Cell[] = [];
  try {
    for (const fault of faults)
      for (const instances of numbers('--instances', values.instances))
        for (const partitions of numbers('--partitions', values.partitions)) {
          let stopped = false;
          for (const transactions of numbers('--transactions', values.transactions)) {
            const at = { instances, partitions, transactions, fault };
            const cell = stopped ? { ...at, status: 'skipped' } : run(dir, values.variant, maxSeconds, at);
            if (cell.status !== 'ok' && !cell.status.startsWith('violation')) stopped = true;
            cells.push(cell);
            if (!values.json) process.stderr.write(`${JSON.stringify(cell)}\n`);
          }
        }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (values.json) {
    process.stdout.write(`${JSON.stringify(cells)}\n`);
    return;
  }
  const states = (c: Cell) =>
    c.states === undefined
      ? c.status
      : `${c.status === 'ok' || c.status.startsWith('violation') ? '' : '> '}${c.states.toLocaleString('en-US')}`;
  process.stdout.write(
    `Growth under ${values.variant}: one read_committed consumer, no property checked, ${maxSeconds} s per cell, one thread\n\n` +
      '| fault | instances | partitions | transactions | states | depth | seconds | peak MB | search |\n' +
      '|---|---:|---:|---:|---:|---:|---:|---:|---|\n' +
      cells
        .map(
          (c) =>
            `| ${c.fault} | ${c.instances} | ${c.partitions} | ${c.transactions} | ${states(c)} | ${c.depth ?? ''} | ` +
            `${c.seconds?.toFixed(1) ?? ''} | ${c.peakRssMB ?? ''} | ${c.status} |`,
        )
        .join('\n') +
      '\n',
  );
}

await main();
