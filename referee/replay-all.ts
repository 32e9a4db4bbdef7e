// `npm run kafka:replay-all`: the replay matrix. Every shipped Kafka trace is replayed against
// every release named, at transaction versions 1 and 2, once under each generation it can be
// matched to; a table per trace says where each release agrees, differs or stops. The tables go
// to stdout as Markdown, the whole results to out/replay-matrix.json.
//
//   npm run kafka:replay-all [-- --releases 4.0.0,4.1.1] [--traces stale-end-txn,...]
//                            [--generations kafka-3.8,kafka-4.1]
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readTraceFile } from '../checker/engine/trace.ts';
import { parseSpec } from '../specs/load.ts';
import { BrokerSetupError, type Broker, fetchRelease, startBroker } from './broker.ts';
import { type KafkaReplayResult, atTransactionVersion, replayOnKafka } from './replay/index.ts';

/** The releases served from Maven Central (docs/guides/real-kafka.md), one or two per line. */
const RELEASES = ['4.0.0', '4.0.2', '4.1.0', '4.1.2', '4.2.0', '4.3.0', '4.4.0'];
/** The generations a 4.x broker is matched against: the brokers' rules of 3.8 (TV1) and the 4.x ones. */
const GENERATIONS = ['kafka-3.8', 'kafka-4.0', 'kafka-4.1', 'kafka-4.3', 'kafka-latest'];

interface Cell {
  readonly trace: string;
  readonly generation: string;
  readonly release: string;
  readonly tv: number;
  readonly status: KafkaReplayResult['status'] | 'no broker';
  readonly steps: number;
  readonly message: string;
  readonly violation?: KafkaReplayResult['violation'];
}

function list(text: string | undefined, all: readonly string[]): readonly string[] {
  return text === undefined ? all : text.split(',');
}

/** A cell as the table shows it: ✓ agrees on every step, ✗ k differs at step k, ⊘ k stops at step k. */
function mark(cell: Cell, total: number): string {
  switch (cell.status) {
    case 'agrees':
      return cell.steps === total
        ? `✓${cell.violation === 'shows' ? ' (violates)' : ''}`
        : `✓ ${cell.steps}/${total}`;
    case 'diverges':
      return `✗ ${cell.steps}`;
    case 'unsupported':
      return `⊘ ${cell.steps + 1}`;
    default:
      return cell.status;
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { releases: { type: 'string' }, traces: { type: 'string' }, generations: { type: 'string' } },
  });
  const releases = list(values.releases, RELEASES);
  const files = readdirSync('traces')
    .filter((f) => f.endsWith('.itf.json') && !f.startsWith('kafka-0.11'))
    .filter((f) => values.traces === undefined || values.traces.split(',').some((t) => f.includes(t)))
    .map((f) => join('traces', f));
  const generations = list(values.generations, GENERATIONS);
  const cells: Cell[] = [];
  mkdirSync('out', { recursive: true });
  for (const release of releases) {
    try {
      fetchRelease(release);
    } catch (e) {
      if (!(e instanceof BrokerSetupError)) throw e;
      console.error(e.message);
      continue;
    }
    for (const tv of [1, 2]) {
      let broker: Broker | undefined;
      try {
        try {
          broker = await startBroker({ version: release, tv });
        } catch (e) {
          console.error(`${release} tv${tv}: no broker: ${(e as Error).message.split('\n')[0]}`);
          continue;
        }
        for (const file of files) {
          const trace = readTraceFile(file);
          const variant = trace.meta.spec.variant;
          const own = String(
            (typeof variant === 'object' && variant !== null
              ? (variant as { base?: unknown }).base
              : variant) ?? 'kafka-3.5',
          );
          for (const generation of [own, ...generations.filter((g) => g !== own)]) {
            const recorded = parseSpec(file, trace.meta.spec, '#meta.spec');
            const raw =
              generation === own ? trace.meta.spec : recorded.entry.withVariant!(trace.meta.spec, generation);
            const spec = parseSpec(file, atTransactionVersion(raw, tv), '#meta.spec');
            const result = await replayOnKafka({
              target: broker.address,
              params: spec.params,
              labels: trace.actions,
              property: trace.meta.property,
            });
            const cell: Cell = {
              trace: file,
              generation,
              release,
              tv,
              status: result.status,
              steps: result.steps.length,
              message: result.message,
              violation: result.violation,
            };
            cells.push(cell);
            writeFileSync('out/replay-matrix.json', `${JSON.stringify(cells, null, 1)}\n`);
            console.error(`${release} tv${tv} ${file} ${generation}: ${result.message}`);
          }
        }
      } finally {
        await broker?.stop();
      }
    }
  }
  const columns = releases.flatMap((r) => [1, 2].map((tv) => ({ release: r, tv })));
  for (const file of files) {
    const total = readTraceFile(file).actions.length;
    console.log(`\n#### \`${file.replace('traces/', '')}\` (${total} steps)\n`);
    console.log(`| generation | ${columns.map((c) => `${c.release} TV${c.tv}`).join(' | ')} |`);
    console.log(`|---|${columns.map(() => '---').join('|')}|`);
    const rows = [...new Set(cells.filter((c) => c.trace === file).map((c) => c.generation))];
    for (const generation of rows) {
      const row = columns.map((col) => {
        const cell = cells.find(
          (c) =>
            c.trace === file && c.generation === generation && c.release === col.release && c.tv === col.tv,
        );
        return cell === undefined ? '' : mark(cell, total);
      });
      console.log(`| ${generation} | ${row.join(' | ')} |`);
    }
  }
}

await main();
