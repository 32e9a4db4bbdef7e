// `npm run kafka:questions -- [--json] [VERSION...]` asks the four questions of issue 30 of one
// broker per release (transaction.version 2 from 4.0), fetching each release first, and prints a
// table release x question; --json prints every answer in full. Without versions: every release
// that resolves from Maven Central, 3.9.1 and 4.x.
import { BrokerSetupError, checkVersion, fetchRelease, startBroker } from './broker.ts';
import { type Answers, askAll, atLeast, summarize } from './questions-experiments.ts';

const QUESTION_RELEASES = [
  '3.9.1',
  '4.0.0',
  '4.0.1',
  '4.0.2',
  '4.1.0',
  '4.1.1',
  '4.1.2',
  '4.2.0',
  '4.2.2',
  '4.3.0',
  '4.3.2',
  '4.4.0',
];

const HEADINGS = [
  'release',
  '1. PreviousProducerId/NextProducerId persisted',
  '2. a retried InitProducerId fences its producer',
  "3. a fenced producer's lower-epoch batch blocks the live one",
  '4. a stale version-2 marker is refused (KIP-1228)',
];

function row(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}

async function ask(version: string): Promise<Answers> {
  const began = performance.now();
  const { resolved } = fetchRelease(version);
  // Transaction version 2 is 4.0's; an older release keeps its own default.
  const broker = await startBroker({ version, tv: atLeast(version, '4.0.0') ? 2 : undefined });
  try {
    console.error(
      `Kafka ${version}: ${resolved ? 'fetched and ' : ''}serving after ${((performance.now() - began) / 1000).toFixed(1)} s`,
    );
    return await askAll(broker.address);
  } finally {
    await broker.stop();
  }
}

async function main(args: string[]): Promise<number> {
  const json = args.includes('--json');
  const versions = args.filter((a) => a !== '--json');
  try {
    for (const v of versions) {
      if (v.startsWith('-'))
        throw new BrokerSetupError(
          `unknown flag ${v}; usage: npm run kafka:questions -- [--json] [VERSION...]`,
        );
      checkVersion(v);
    }
  } catch (e) {
    console.error((e as Error).message);
    return 2;
  }
  const answers: Record<string, Answers | { error: string }> = {};
  const rows = [row(HEADINGS), row(HEADINGS.map(() => '---'))];
  let failed = false;
  for (const version of versions.length > 0 ? versions : QUESTION_RELEASES) {
    try {
      const answer = await ask(version);
      answers[version] = answer;
      rows.push(row([version, ...summarize(answer)]));
    } catch (e) {
      if (e instanceof BrokerSetupError && versions.length === 1) {
        console.error(e.message);
        return 2;
      }
      failed = true;
      const message = (e as Error).message.split('\n')[0]!;
      console.error(`Kafka ${version}: ${message}`);
      answers[version] = { error: message };
      rows.push(row([version, `not answered: ${message}`, '', '', '']));
    }
  }
  console.log(json ? JSON.stringify(answers, null, 2) : rows.join('\n'));
  return failed ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
