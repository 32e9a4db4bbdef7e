// `npm run kafka:campaign`: conform runs of the shipped specs one broker can drive, against each
// release at transaction versions 1 and 2, each under the generation it is matched to
// (releases.ts). One Markdown table to stdout, every walk to out/campaign.json.
//
//   npm run kafka:campaign [-- --releases 4.0.0,4.1.1] [--walks N] [--seed N]
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadSpecFile, parseSpec } from '../specs/load.ts';
import { BrokerSetupError, type Broker, fetchRelease, startBroker } from './broker.ts';
import { type WalkResult, conform } from './conform.ts';
import { SERVED_RELEASES, atRelease, variantName, variantOf } from './releases.ts';
import { atTransactionVersion } from './replay/index.ts';

/** Shipped specs whose faults one broker can be driven through. */
const SPECS = [
  'commit-abort',
  'lossy-network',
  'zombie-fencing',
  'stale-end-txn',
  'init-producer-id-retry',
  'delayed-produce',
  'idempotent-beside-transactions',
].map((name) => `specs/kafka/${name}.json`);

interface Row {
  readonly release: string;
  readonly tv: number;
  readonly generation: string;
  readonly spec: string;
  readonly walks: readonly WalkResult[];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { releases: { type: 'string' }, walks: { type: 'string' }, seed: { type: 'string' } },
  });
  const releases = values.releases?.split(',') ?? [...SERVED_RELEASES];
  const walks = Number(values.walks ?? 10);
  const seed = Number(values.seed ?? 0);
  const rows: Row[] = [];
  mkdirSync('out', { recursive: true });
  for (const release of releases) {
    try {
      fetchRelease(release);
    } catch (e) {
      if (!(e instanceof BrokerSetupError)) throw e;
      console.error(e.message);
      continue;
    }
    const generation = variantName(variantOf(release));
    for (const tv of [1, 2]) {
      let broker: Broker;
      try {
        broker = await startBroker({ version: release, tv });
      } catch (e) {
        console.error(`${release} TV${tv}: no broker: ${(e as Error).message.split('\n')[0]}`);
        continue;
      }
      try {
        for (const file of SPECS) {
          const spec = loadSpecFile(file);
          const raw = atTransactionVersion(atRelease(spec.raw, release), tv);
          const params = parseSpec(file, raw, '').params;
          const result = await conform({ target: broker.address, params, seed, walks, maxDepth: 40 });
          rows.push({ release, tv, generation, spec: file, walks: result.walks });
          writeFileSync('out/campaign.json', `${JSON.stringify(rows, null, 1)}\n`);
          const differ = result.walks.filter((w) => w.status === 'diverges');
          console.error(
            `${release} TV${tv} ${generation} ${file}: ${result.walks.length} walks, ${differ.length} differ${differ.map((w) => ` [walk ${w.walk}: ${w.difference}]`).join('')}`,
          );
        }
      } finally {
        await broker.stop();
      }
    }
  }
  console.log('| release | TV | generation | walks | steps compared | agree | differ (field: walks) |');
  console.log('|---|---|---|---|---|---|---|');
  for (const release of releases)
    for (const tv of [1, 2]) {
      const mine = rows.filter((r) => r.release === release && r.tv === tv);
      if (mine.length === 0) continue;
      const all = mine.flatMap((r) => r.walks);
      const byField = new Map<string, number>();
      for (const w of all)
        if (w.difference !== undefined) byField.set(w.difference, (byField.get(w.difference) ?? 0) + 1);
      const differ = [...byField].map(([f, n]) => `${f}: ${n}`).join('; ') || '—';
      console.log(
        `| ${release} | ${tv} | ${mine[0]!.generation} | ${all.length} | ${all.reduce((n, w) => n + w.steps, 0)} | ${all.filter((w) => w.status === 'agrees').length} | ${differ} |`,
      );
    }
}

await main();
