// `npm run kafka:cluster-throughput`: how fast conform walks a three-node cluster, and in how
// much memory. One cluster of the release runs the walks of each spec in turn; a spec's time runs
// from its first walk to its last (the cluster's start is apart), and the resident memory of the
// three JVMs is read every second. One Markdown table to stdout.
//
//   npm run kafka:cluster-throughput [-- --release 4.1.1] [--walks N] [--seed N] [specs...]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { KafkaConfig } from '../model/kafka/config.ts';
import { loadSpecFile, parseSpec } from '../specs/load.ts';
import { type Cluster, startCluster } from './cluster.ts';
import { conformOn } from './conform.ts';
import { traceTransactionVersion } from './replay/index.ts';

/** The specs whose walks take the steps only a cluster drives. */
const SPECS = ['marker-timeouts', 'coordinator-failover', 'transaction-timeout'].map(
  (name) => `specs/kafka/${name}.json`,
);

/** The resident memory of the cluster's running JVMs, in MB. */
function rssMb(cluster: Cluster): number {
  let kb = 0;
  for (const node of cluster.nodes) {
    const pid = node.pid();
    if (pid === undefined) continue;
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    kb += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  }
  return kb / 1024;
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    options: { release: { type: 'string' }, walks: { type: 'string' }, seed: { type: 'string' } },
    allowPositionals: true,
  });
  const release = values.release ?? '4.1.1';
  const walks = Number(values.walks ?? 30);
  const seed = Number(values.seed ?? 0);
  if (!Number.isInteger(walks) || walks < 1 || !Number.isInteger(seed)) {
    console.error('--walks: expected a positive integer; --seed: expected an integer');
    return 2;
  }
  const specs = (positionals.length > 0 ? positionals : SPECS).map((file) => {
    const spec = loadSpecFile(file);
    return { file, cfg: parseSpec(spec.file, spec.raw, '').params as KafkaConfig };
  });
  const started = Date.now();
  const cluster = await startCluster({ version: release, tv: traceTransactionVersion(specs[0]!.cfg) });
  const startS = (Date.now() - started) / 1000;
  const samples: number[] = [];
  const sampler = setInterval(() => samples.push(rssMb(cluster)), 1000);
  const rows: string[] = [];
  try {
    for (const { file, cfg } of specs) {
      samples.length = 0;
      const from = Date.now();
      const on = { address: cluster.node(1).address, cluster };
      const result = await conformOn(on, cfg, { target: release, params: cfg, seed, walks, maxDepth: 40 });
      const s = (Date.now() - from) / 1000;
      const steps = result.walks.reduce((n, w) => n + w.steps, 0);
      const count = (status: string) => result.walks.filter((w) => w.status === status).length;
      const mean = samples.reduce((a, b) => a + b, 0) / Math.max(samples.length, 1);
      rows.push(
        `| \`${file.split('/').at(-1)}\` | ${result.walks.length} (${count('agrees')} agree, ${count('diverges')} differ) | ${steps} | ${((result.walks.length * 60) / s).toFixed(0)} | ${(steps / s).toFixed(0)} | ${mean.toFixed(0)} MB mean, ${Math.max(...samples).toFixed(0)} MB peak |`,
      );
      if (result.stoppedBy !== undefined) break;
    }
  } finally {
    clearInterval(sampler);
    await cluster.stop();
  }
  console.log(`A cluster of Kafka ${release}, started in ${startS.toFixed(0)} s; seed ${seed}.\n`);
  console.log('| spec | walks | steps compared | walks/minute | steps compared/s | RSS of the three JVMs |');
  console.log('|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
  return 0;
}

process.exitCode = await main();
