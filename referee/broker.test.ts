// A real Kafka broker started and stopped on demand: it serves on 127.0.0.1 alone with the
// transaction.version asked for, and leaves no process or directory behind.
import { connect } from 'node:net';
import { existsSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Broker, BrokerSetupError, fetchRelease, startBroker } from './broker.ts';
import { Connection } from './driver/connection.ts';
import { TEST_RELEASE, skipWithoutKafka } from './testing.ts';
import { isRunning } from '../checker/processes.ts';

/** Whether a TCP connection to host:port is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('bad input', () => {
  it('refuses a version that is not a release number, and one not fetched', async () => {
    await expect(startBroker({ version: '4.1' })).rejects.toThrow(BrokerSetupError);
    await expect(startBroker({ version: '4.1' })).rejects.toThrow('not a Kafka release version: 4.1');
    await expect(startBroker({ version: '0.0.1' })).rejects.toThrow(
      'Kafka 0.0.1 is not fetched: run `npm run kafka -- fetch 0.0.1`',
    );
    await expect(startBroker({ version: TEST_RELEASE, tv: 3 })).rejects.toThrow(
      'transaction.version must be 0, 1 or 2, not 3',
    );
  });
});

describe.skipIf(skipWithoutKafka('referee/broker.test.ts'))(`Kafka ${TEST_RELEASE}`, () => {
  let broker: Broker;
  beforeAll(async () => {
    broker = await startBroker({ version: TEST_RELEASE, tv: 1 });
  });
  afterAll(() => broker?.stop());

  it('names the artifact and version Maven cannot resolve', () => {
    expect(() => fetchRelease('0.0.1')).toThrow(
      /^cannot resolve org\.apache\.kafka:kafka_2\.13:0\.0\.1 with Maven: /,
    );
  });

  it('serves on 127.0.0.1 with the transaction.version asked for', async () => {
    expect(broker.address).toMatch(/^127\.0\.0\.1:\d+$/);
    const connection = await Connection.open(broker.address);
    const features = connection.apiVersions!.finalizedFeatures;
    connection.close();
    expect(broker.transactionVersion).toBe(1);
    expect(features.find((f) => f.name === 'transaction.version')).toEqual({
      name: 'transaction.version',
      maxVersionLevel: 1,
      minVersionLevel: 1,
    });
    expect(features.map((f) => f.name)).toContain('metadata.version');
  });

  it('listens on no other address', async () => {
    const port = Number(broker.address.split(':')[1]);
    const others = Object.values(networkInterfaces())
      .flat()
      .filter((a) => a !== undefined && a.family === 'IPv4' && !a.internal)
      .map((a) => a!.address);
    for (const host of others) expect(await accepts(host, port)).toBe(false);
    expect(await accepts('127.0.0.1', port)).toBe(true);
  });

  it('stops its JVM and removes its directory', async () => {
    const dir = dirname(broker.logFile);
    expect(isRunning(broker.pid)).toBe(true);
    expect(existsSync(dir)).toBe(true);
    await broker.stop();
    expect(isRunning(broker.pid)).toBe(false);
    expect(existsSync(dir)).toBe(false);
    await broker.stop(); // a second stop is harmless
  });
});
