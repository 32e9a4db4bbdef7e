// `npm run kafka -- fetch VERSION` resolves a Kafka release's jars with Maven;
// `npm run kafka -- start VERSION [--tv 0|1|2]` runs one broker on 127.0.0.1 until Ctrl-C or
// SIGTERM, printing its address on stdout when it serves.
import { BrokerSetupError, checkVersion, fetchRelease, startBroker } from './broker.ts';

const USAGE = 'usage: npm run kafka -- fetch VERSION | start VERSION [--tv 0|1|2]';

function seconds(since: number): string {
  return `${((performance.now() - since) / 1000).toFixed(1)} s`;
}

async function start(version: string, flags: string[]): Promise<number> {
  let tv: number | undefined;
  if (flags.length > 0) {
    if (flags.length !== 2 || flags[0] !== '--tv' || !/^[0-2]$/.test(flags[1]!))
      throw new BrokerSetupError(`start: expected --tv 0, 1 or 2, got ${flags.join(' ')}\n${USAGE}`);
    tv = Number(flags[1]);
  }
  const began = performance.now();
  const broker = await startBroker({ version, tv });
  console.error(
    `Kafka ${version} (transaction.version=${broker.transactionVersion}, pid ${broker.pid}) serves after ${seconds(began)}; Ctrl-C stops it`,
  );
  console.log(broker.address);
  const signalled = new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  const why = await Promise.race([signalled, broker.exited.then(() => 'exit')]);
  if (why === 'exit') {
    await broker.stop();
    console.error(`Kafka ${version} exited by itself`);
    return 1;
  }
  const stopping = performance.now();
  await broker.stop();
  console.error(`Kafka ${version} stopped in ${seconds(stopping)}`);
  return 0;
}

async function main(args: string[]): Promise<number> {
  const [command, version, ...flags] = args;
  if (version === undefined || (command !== 'fetch' && command !== 'start')) {
    console.error(USAGE);
    return 2;
  }
  try {
    checkVersion(version);
    if (command === 'start') return await start(version, flags);
    if (flags.length > 0) throw new BrokerSetupError(`fetch takes no flags: ${flags.join(' ')}`);
    const began = performance.now();
    const { classpath, resolved } = fetchRelease(version);
    const jars = classpath.split(':').length;
    console.error(
      resolved
        ? `Kafka ${version}: ${jars} jars resolved with Maven in ${seconds(began)}`
        : `Kafka ${version}: ${jars} jars already fetched`,
    );
    return 0;
  } catch (e) {
    if (e instanceof BrokerSetupError) {
      console.error(e.message);
      return 2;
    }
    console.error((e as Error).message);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
