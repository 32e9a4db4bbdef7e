// The four questions of issue 30 put to real brokers, one per release: each release's answer is
// checked against the first release the review of the 4.x rules (docs/reviews/second-wave-rules.md)
// names for it. 4.1.1 runs wherever the broker tests run; the other releases (and 3.9.1, for the
// second question) only where their jars are fetched (`npm run kafka -- fetch VERSION`).
// `npm run kafka:questions` asks every release.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Broker, cachedClasspath, haveJavaAndMaven, startBroker } from './broker.ts';
import {
  Lab,
  atLeast,
  fencedLowerEpochBatch,
  firstSequenceOfNewProducer,
  retriedInitProducerId,
  staleMarkers,
  transactionLogProducerIds,
} from './questions-experiments.ts';
import { TEST_RELEASE, skipWithoutKafka } from './testing.ts';

const OTHER_RELEASES = ['4.0.0', '4.0.1', '4.2.0', '4.3.0'];
const javaAndMaven = haveJavaAndMaven();

function skipped(version: string): boolean {
  if (version === TEST_RELEASE) return skipWithoutKafka('referee/questions.test.ts');
  return !javaAndMaven || cachedClasspath(version) === undefined;
}

describe.each([TEST_RELEASE, ...OTHER_RELEASES].map((version) => ({ version })))(
  'Kafka $version at transaction.version 2',
  ({ version }) => {
    let broker: Broker;
    let lab: Lab;

    beforeAll(async () => {
      if (skipped(version)) return;
      broker = await startBroker({ version, tv: 2 });
      lab = await Lab.open(broker.address);
    });
    afterAll(async () => {
      lab?.close();
      await broker?.stop();
    });

    // KAFKA-20310 (4.3.0): TransactionLog writes the producer ids it keeps in memory.
    it.skipIf(skipped(version))('1. persists PreviousProducerId only from 4.3.0', async () => {
      const answer = await transactionLogProducerIds(lab);
      expect(answer.records.map((r) => r.transactionStatus)).toEqual([
        'Empty',
        'Ongoing',
        'PrepareCommit',
        'CompleteCommit',
      ]);
      // The tags are read: the client's transaction version is there in every release.
      expect(answer.records.at(-1)).toMatchObject({ version: 1, clientTransactionVersion: 2 });
      expect(answer.previousProducerIdWritten).toBe(atLeast(version, '4.3.0'));
      if (answer.previousProducerIdWritten)
        expect(answer.records.every((r) => r.previousProducerId === r.producerId)).toBe(true);
      // NextProducerId is set only by a rotation at an exhausted epoch.
      expect(answer.nextProducerIdWritten).toBe(false);
    });

    it.skipIf(skipped(version))('2. a retried InitProducerId fences its own producer', async () => {
      const answer = await retriedInitProducerId(lab);
      expect(answer.copy).toEqual({ ...answer.first, producerEpoch: answer.first.producerEpoch + 1 });
      expect(answer).toMatchObject({
        addPartitionsV3: 'PRODUCER_FENCED',
        endTxnV4: 'PRODUCER_FENCED',
        endTxnV5: 'PRODUCER_FENCED',
        produce: { version: 12, error: 'INVALID_PRODUCER_EPOCH' },
        addPartitionsWithoutCopy: 'NONE',
      });
    });

    // KAFKA-18042 (4.1.0) refuses the lower epoch before verifying it; KAFKA-19367 (4.0.1) made
    // the fence of an Ongoing transaction one bump.
    it.skipIf(skipped(version))(
      "3. a fenced producer's lower-epoch batch blocks the live one before 4.1",
      async () => {
        const answer = await fencedLowerEpochBatch(lab);
        const bumps = version === '4.0.0' ? 2 : 1;
        expect(answer).toMatchObject({ abortMarkerEpoch: bumps, grantedEpoch: bumps + 1 });
        expect(answer).toMatchObject({
          liveFirst: 'NONE',
          fencedLate: 'INVALID_PRODUCER_EPOCH',
          liveCommit: 'NONE',
        });
        const blocked = !atLeast(version, '4.1.0');
        const next = blocked ? 'OUT_OF_ORDER_SEQUENCE_NUMBER' : 'NONE';
        expect(answer).toMatchObject({ liveSecond: next, liveThird: next });
        expect(answer.committed).toEqual(blocked ? ['b0'] : ['b0', 'b1', 'b2']);
      },
    );

    // KIP-1228 with KAFKA-19999 (4.2.0): WriteTxnMarkers v2 names the transaction version.
    it.skipIf(skipped(version))('4. refuses a stale version-2 marker from 4.2.0', async () => {
      const strict = atLeast(version, '4.2.0');
      const answers = await staleMarkers(lab);
      const v2 = (error: string) => (strict ? error : 'v2 not spoken');
      expect(
        answers.map((a) => [a.version, a.transactionVersion, a.epoch, a.nextTransactionOpen, a.error]),
      ).toEqual([
        [2, 2, 'same', true, v2('INVALID_PRODUCER_EPOCH')],
        [2, 2, 'same', false, v2('NONE')],
        [2, 1, 'same', true, v2('NONE')],
        [1, 0, 'same', true, 'NONE'],
        [1, 0, 'below', true, 'INVALID_PRODUCER_EPOCH'],
      ]);
      // A legacy marker at the producer's epoch commits the next transaction's open batch.
      expect(answers.filter((a) => a.closedOpenTransaction).map((a) => a.version)).toEqual(
        strict ? [2, 1] : [1],
      );
    });

    // KAFKA-18202 (4.1.0, tv2SequenceZero): before it, the leader takes a new producer's first
    // verified batch at any sequence, and then refuses sequence 0.
    it.skipIf(skipped(version))('a new producer starts at sequence 0 from 4.1.0', async () => {
      const strict = atLeast(version, '4.1.0');
      expect(await firstSequenceOfNewProducer(lab)).toEqual(
        strict
          ? { atThree: 'OUT_OF_ORDER_SEQUENCE_NUMBER', thenZero: 'NONE' }
          : { atThree: 'NONE', thenZero: 'OUT_OF_ORDER_SEQUENCE_NUMBER' },
      );
    });
  },
);

// Before 4.0 only the second question can be put: the re-sent InitProducerId at transaction
// version 0, with Produce v11 verified at the coordinator (KIP-890 part 1, 3.6).
describe.skipIf(skipped('3.9.1'))('Kafka 3.9.1 at transaction.version 0', () => {
  let broker: Broker;
  let lab: Lab;

  beforeAll(async () => {
    broker = await startBroker({ version: '3.9.1' });
    lab = await Lab.open(broker.address);
  });
  afterAll(async () => {
    lab?.close();
    await broker?.stop();
  });

  it('2. a retried InitProducerId fences its own producer', async () => {
    expect(lab.speaksVersion2()).toBe(false);
    expect(await retriedInitProducerId(lab)).toMatchObject({
      first: { producerEpoch: 0 },
      copy: { producerEpoch: 1 },
      addPartitionsV3: 'PRODUCER_FENCED',
      endTxnV4: 'PRODUCER_FENCED',
      endTxnV5: 'not spoken',
      produce: { version: 11, error: 'INVALID_PRODUCER_EPOCH' },
      addPartitionsWithoutCopy: 'NONE',
    });
  });
});

describe('npm run kafka:questions', () => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  it.each([
    [['4.x'], 'not a Kafka release version: 4.x (expected e.g. 4.1.1)'],
    [['--all'], 'unknown flag --all; usage: npm run kafka:questions -- [--json] [VERSION...]'],
  ])('refuses %j in one line, exit 2', (args, message) => {
    const run = spawnSync('node_modules/.bin/tsx', ['referee/questions.ts', ...args], {
      cwd: root,
      encoding: 'utf8',
    });
    expect([run.status, run.stdout, run.stderr]).toEqual([2, '', `${message}\n`]);
  });
});
