// The leader's marker-epoch rule of each generation on the cases that tell them apart: a marker at
// an epoch below, equal to and above the producer's, with and without an open transaction.
// Source: ProducerAppendInfo.checkProducerEpoch, apache/kafka 0.11.0 to 4.1 (markerEpoch >= current)
// and 074553555c60 (KIP-1228: a transaction-version-2 marker needs markerEpoch > current; KAFKA-19999:
// an equal epoch with no open transaction is an idempotent retry and is written).
import { describe, expect, it } from 'vitest';
import { BatchKind, Err } from '../state.ts';
import { batch, initial, kafkaConfig, withPartition, withProducerEntry } from './harness.ts';
import { generations, withClient } from '../variants.ts';
import { marker } from './partition-support.ts';

const PID = 7;
const EPOCH = 3;

/** Partition 0 with the producer at EPOCH, with one open transactional record or with none. */
function leaderState(generation: string, open: boolean) {
  const cfg = kafkaConfig(generation);
  let s = initial(cfg);
  if (open) s = withPartition(s, 0, { log: [batch({ pid: PID, epoch: EPOCH })] });
  s = withProducerEntry(s, 0, {
    pid: PID,
    epoch: EPOCH,
    lastSeqs: open ? [0] : [],
    txnFirstOffset: open ? 0 : -1,
  });
  return { cfg, s };
}

const legacy = ['kafka-0.11', 'kafka-3.5', 'kafka-3.6', 'kafka-3.8', 'kafka-4.0', 'kafka-4.1'];

describe('ProducerAppendInfo.checkProducerEpoch for markers, per generation', () => {
  it.each(legacy)("%s: a marker at the producer's own epoch ends its open transaction", (generation) => {
    const { cfg, s } = leaderState(generation, true);
    const { error, state } = marker(cfg, s, 0, { pid: PID, epoch: EPOCH, commit: true });
    expect(error).toBe(Err.NONE);
    expect(state.partitions[0]!.log.map((b) => b.kind)).toEqual([BatchKind.Data, BatchKind.Commit]);
  });

  it("kafka-latest: a marker at the producer's own epoch with an open transaction is stale (KIP-1228)", () => {
    const { cfg, s } = leaderState('kafka-latest', true);
    const { error, state } = marker(cfg, s, 0, { pid: PID, epoch: EPOCH, commit: true });
    expect(error).toBe(Err.INVALID_PRODUCER_EPOCH);
    expect(state.partitions[0]!.log).toHaveLength(1);
  });

  it("kafka-latest brokers, a transaction-version-1 client: a marker at the producer's own epoch ends its open transaction (KIP-1228 marks version 2 only)", () => {
    const { s } = leaderState('kafka-latest', true);
    const cfg = kafkaConfig(
      'kafka-latest',
      {},
      withClient(generations['kafka-latest']!.rules, generations['kafka-3.8']!.rules),
    );
    const { error, state } = marker(cfg, s, 0, { pid: PID, epoch: EPOCH, commit: true });
    expect(error).toBe(Err.NONE);
    expect(state.partitions[0]!.log.map((b) => b.kind)).toEqual([BatchKind.Data, BatchKind.Commit]);
  });

  it.each([...legacy, 'kafka-latest'])(
    "%s: a marker at the producer's epoch with no open transaction is written (KAFKA-19999 retry)",
    (generation) => {
      const { cfg, s } = leaderState(generation, false);
      const { error, state } = marker(cfg, s, 0, { pid: PID, epoch: EPOCH, commit: false });
      expect(error).toBe(Err.NONE);
      expect(state.partitions[0]!.log.map((b) => b.kind)).toEqual([BatchKind.Abort]);
    },
  );

  it.each([...legacy, 'kafka-latest'])(
    "%s: a marker below the producer's epoch is fenced, one above is written",
    (generation) => {
      const { cfg, s } = leaderState(generation, true);
      expect(marker(cfg, s, 0, { pid: PID, epoch: EPOCH - 1, commit: true }).error).toBe(
        Err.INVALID_PRODUCER_EPOCH,
      );
      expect(marker(cfg, s, 0, { pid: PID, epoch: EPOCH + 1, commit: true }).error).toBe(Err.NONE);
    },
  );
});
