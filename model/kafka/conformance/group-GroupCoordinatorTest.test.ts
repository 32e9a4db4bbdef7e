// The group coordinator's transactional offsets: TxnOffsetCommit writes pending offsets into the
// group's __consumer_offsets partition; a COMMIT marker makes them the group's committed offset, an
// ABORT drops them; OffsetFetch with requireStable waits while any are pending (the model's
// hasPendingOffsets, under which the client's fetchOffsets is not enabled). The model has one group
// and one input partition, so committedOffset is that partition's committed offset (0: none yet).
import { describe, expect, it } from 'vitest';
import type { KafkaConfig } from '../config.ts';
import { committedOffset, hasPendingOffsets } from '../group.ts';
import { type State, Api, BatchKind, Err } from '../state.ts';
import {
  batch,
  handle,
  initial,
  kafkaConfig,
  leader,
  request,
  withPartition,
  withProducerEntry,
} from './harness.ts';
import { marker, produceAnswer, verificationsSent, verified } from './partition-support.ts';

function transform(gen: string): KafkaConfig {
  return kafkaConfig(gen, { app: 'consume-transform-produce', inputRecords: 30 });
}

interface Commit {
  readonly pid: number;
  readonly epoch: number;
  readonly value: number;
  readonly generation?: number;
}

/**
 * A TxnOffsetCommit to the group coordinator; when the coordinator first verifies the
 * __consumer_offsets partition (KIP-890), the transaction coordinator answers `verification`.
 */
function txnCommit(
  cfg: KafkaConfig,
  s: State,
  c: Commit,
  verification: Err = Err.NONE,
): { error: Err; state: State } {
  const offsets = cfg.partitions;
  const generation = c.generation ?? s.group!.generation;
  const sent = handle(
    cfg,
    s,
    0,
    leader(offsets),
    request(Api.TxnOffsetCommit, {
      txnId: 0,
      pid: c.pid,
      epoch: c.epoch,
      partitions: offsets,
      value: c.value,
      generation,
    }),
  );
  const asked = verificationsSent(sent, offsets).length > verificationsSent(s, offsets).length;
  const a = produceAnswer(asked ? verified(cfg, sent, offsets, verification) : sent, offsets);
  return { error: a.response.error, state: a.state };
}

const offsetsOf = (cfg: KafkaConfig, s: State) => s.partitions[cfg.partitions]!;

const generations = ['kafka-3.5', 'kafka-3.6', 'kafka-4.0'];

describe('GroupCoordinatorTest (apache/kafka 3.5, 3.9)', () => {
  describe.each(generations)('testBasicFetchTxnOffsets (%s)', (gen) => {
    const cfg = transform(gen);
    const pending = (): State => {
      const r = txnCommit(cfg, initial(cfg), { pid: 1000, epoch: 2, value: 5 });
      expect(r.error).toBe(Err.NONE);
      return r.state;
    };

    it('testBasicFetchTxnOffsets (not materialised before the marker)', () => {
      const s = pending();
      expect(hasPendingOffsets(offsetsOf(cfg, s))).toBe(true);
      expect(committedOffset(offsetsOf(cfg, s))).toBe(0);
    });

    it('testBasicFetchTxnOffsets (materialised by COMMIT)', () => {
      const m = marker(cfg, pending(), cfg.partitions, { pid: 1000, epoch: 2, commit: true });
      expect(m.error).toBe(Err.NONE);
      expect(hasPendingOffsets(offsetsOf(cfg, m.state))).toBe(false);
      expect(committedOffset(offsetsOf(cfg, m.state))).toBe(5);
    });
  });

  it.each(generations)('testFetchTxnOffsetsWithAbort (%s)', (gen) => {
    const cfg = transform(gen);
    const s = txnCommit(cfg, initial(cfg), { pid: 1000, epoch: 2, value: 5 }).state;
    const m = marker(cfg, s, cfg.partitions, { pid: 1000, epoch: 2, commit: false });
    expect(m.error).toBe(Err.NONE);
    expect(committedOffset(offsetsOf(cfg, m.state))).toBe(0);
  });

  it.each(generations)('testFetchPendingTxnOffsetsWithAbort (%s)', (gen) => {
    const cfg = transform(gen);
    const s = txnCommit(cfg, initial(cfg), { pid: 1000, epoch: 2, value: 5 }).state;
    expect(hasPendingOffsets(offsetsOf(cfg, s))).toBe(true);
    const m = marker(cfg, s, cfg.partitions, { pid: 1000, epoch: 2, commit: false });
    expect(hasPendingOffsets(offsetsOf(cfg, m.state))).toBe(false);
    expect(committedOffset(offsetsOf(cfg, m.state))).toBe(0);
  });

  it.each(generations)('testFetchPendingTxnOffsetsWithCommit (%s)', (gen) => {
    const cfg = transform(gen);
    const s = txnCommit(cfg, initial(cfg), { pid: 1000, epoch: 2, value: 25 }).state;
    expect(hasPendingOffsets(offsetsOf(cfg, s))).toBe(true);
    const m = marker(cfg, s, cfg.partitions, { pid: 1000, epoch: 2, commit: true });
    expect(hasPendingOffsets(offsetsOf(cfg, m.state))).toBe(false);
    expect(committedOffset(offsetsOf(cfg, m.state))).toBe(25);
  });

  it.each(generations)('testFetchTxnOffsetsIgnoreSpuriousCommit (%s)', (gen) => {
    const cfg = transform(gen);
    let s = txnCommit(cfg, initial(cfg), { pid: 1000, epoch: 2, value: 5 }).state;
    s = marker(cfg, s, cfg.partitions, { pid: 1000, epoch: 2, commit: false }).state;
    expect(committedOffset(offsetsOf(cfg, s))).toBe(0);
    const spurious = marker(cfg, s, cfg.partitions, { pid: 1000, epoch: 2, commit: true });
    expect(committedOffset(offsetsOf(cfg, spurious.state))).toBe(0);
  });

  it.each(generations)('testFetchTxnOffsetsMultipleProducersOneGroup (%s)', (gen) => {
    const cfg = transform(gen);
    // adapted: both producers commit the one input partition; each marker decides its own commit.
    let s = txnCommit(cfg, initial(cfg), { pid: 1000, epoch: 3, value: 10 }).state;
    s = txnCommit(cfg, s, { pid: 1005, epoch: 4, value: 15 }).state;
    s = marker(cfg, s, cfg.partitions, { pid: 1000, epoch: 3, commit: true }).state;
    expect(committedOffset(offsetsOf(cfg, s))).toBe(10);
    expect(hasPendingOffsets(offsetsOf(cfg, s))).toBe(true);
    s = marker(cfg, s, cfg.partitions, { pid: 1005, epoch: 4, commit: true }).state;
    expect(committedOffset(offsetsOf(cfg, s))).toBe(15);
    expect(hasPendingOffsets(offsetsOf(cfg, s))).toBe(false);
  });

  it.each(generations)('testTxnCommitOffsetWithIllegalGeneration (%s)', (gen) => {
    const cfg = transform(gen);
    const s0 = { ...initial(cfg), group: { generation: 1 } };
    const r = txnCommit(cfg, s0, { pid: 1000, epoch: 2, value: 5, generation: 6 });
    expect(r.error).toBe(Err.ILLEGAL_GENERATION);
    expect(offsetsOf(cfg, r.state).log).toEqual([]);
  });

  it.each(generations)('testTxnCommitOffsetWithLegalGeneration (%s)', (gen) => {
    const cfg = transform(gen);
    const s0 = { ...initial(cfg), group: { generation: 1 } };
    const r = txnCommit(cfg, s0, { pid: 1000, epoch: 2, value: 5, generation: 1 });
    expect(r.error).toBe(Err.NONE);
    expect(hasPendingOffsets(offsetsOf(cfg, r.state))).toBe(true);
  });
});

describe('GroupCoordinatorTest (apache/kafka 3.9), kafka-3.8', () => {
  const cfg = transform('kafka-3.8');

  it.each([Err.INVALID_PRODUCER_ID_MAPPING, Err.INVALID_TXN_STATE])(
    'testVerificationErrorsForTxnOffsetCommits (error %s)',
    (error) => {
      const r = txnCommit(cfg, initial(cfg), { pid: 1000, epoch: 2, value: 5 }, error);
      expect(r.error).toBe(error);
      expect(offsetsOf(cfg, r.state).log).toEqual([]);
    },
  );
});

describe('GroupCoordinatorTest (apache/kafka 3.9: verification before doTxnCommitOffsets)', () => {
  // In 3.7+ handleTxnCommitOffsets verifies the __consumer_offsets partition and only then
  // (doTxnCommitOffsets) checks member and generation, as the 3.9 test's mocked verifier shows.
  it.each(['kafka-3.8', 'kafka-4.0'])(
    'testTxnCommitOffsetWithIllegalGeneration (verified first, %s)',
    (gen) => {
      const cfg = transform(gen);
      const s0 = { ...initial(cfg), group: { generation: 1 } };
      const sent = handle(
        cfg,
        s0,
        0,
        leader(cfg.partitions),
        request(Api.TxnOffsetCommit, {
          txnId: 0,
          pid: 1000,
          epoch: 2,
          partitions: cfg.partitions,
          value: 5,
          generation: 6,
        }),
      );
      expect(verificationsSent(sent, cfg.partitions)).toHaveLength(1);
      const a = produceAnswer(verified(cfg, sent, cfg.partitions), cfg.partitions);
      expect(a.response.error).toBe(Err.ILLEGAL_GENERATION);
    },
  );
});

describe('GroupCoordinator.handleTxnCommitOffsets (apache/kafka 3.6 source: no verification before KAFKA-15449, 3.7)', () => {
  it('kafka-3.6 answers a TxnOffsetCommit without asking the transaction coordinator', () => {
    const cfg = transform('kafka-3.6');
    const s0 = { ...initial(cfg), group: { generation: 1 } };
    const sent = handle(
      cfg,
      s0,
      0,
      leader(cfg.partitions),
      request(Api.TxnOffsetCommit, {
        txnId: 0,
        pid: 1000,
        epoch: 2,
        partitions: cfg.partitions,
        value: 5,
        generation: 6,
      }),
    );
    expect(verificationsSent(sent, cfg.partitions)).toHaveLength(0);
    expect(produceAnswer(sent, cfg.partitions).response.error).toBe(Err.ILLEGAL_GENERATION);
  });
});

describe('GroupMetadataManagerTest (apache/kafka 3.9), kafka-3.8', () => {
  const cfg = transform('kafka-3.8');

  it('testTransactionalCommitOffsetCommitted', () => {
    let s = txnCommit(cfg, initial(cfg), { pid: 232, epoch: 0, value: 37 }).state;
    expect(hasPendingOffsets(offsetsOf(cfg, s))).toBe(true);
    expect(committedOffset(offsetsOf(cfg, s))).toBe(0);
    s = marker(cfg, s, cfg.partitions, { pid: 232, epoch: 0, commit: true }).state;
    expect(committedOffset(offsetsOf(cfg, s))).toBe(37);
  });

  it('testTransactionalCommitOffsetAborted', () => {
    let s = txnCommit(cfg, initial(cfg), { pid: 232, epoch: 0, value: 37 }).state;
    s = marker(cfg, s, cfg.partitions, { pid: 232, epoch: 0, commit: false }).state;
    expect(hasPendingOffsets(offsetsOf(cfg, s))).toBe(false);
    expect(committedOffset(offsetsOf(cfg, s))).toBe(0);
  });
});

describe('OffsetMetadataManagerTest (apache/kafka trunk 1eb7644: the group coordinator 4.0 ships), kafka-4.0', () => {
  const cfg = transform('kafka-4.0');
  const offsets = cfg.partitions;

  it('testReplayTransactionEndMarkerWithCommit', () => {
    // A plain commit of 99, then producer 5's pending 100.
    let s = withPartition(initial(cfg), offsets, {
      log: [
        batch({ pid: -1, epoch: -1, seq: -1, kind: BatchKind.OffsetCommit, transactional: false, value: 99 }),
        batch({ pid: 5, epoch: 0, seq: -1, kind: BatchKind.OffsetCommit, value: 100 }),
      ],
    });
    s = withProducerEntry(s, offsets, { pid: 5, epoch: 0, txnFirstOffset: 1 });
    // An end marker of an unknown producer changes nothing.
    s = marker(cfg, s, offsets, { pid: 1, epoch: 0, commit: true }).state;
    expect(committedOffset(offsetsOf(cfg, s))).toBe(99);
    s = marker(cfg, s, offsets, { pid: 5, epoch: 1, commit: true }).state;
    expect(committedOffset(offsetsOf(cfg, s))).toBe(100);
    expect(hasPendingOffsets(offsetsOf(cfg, s))).toBe(false);
  });

  it('testReplayTransactionEndMarkerKeepsTheMostRecentCommittedOffset', () => {
    // Producer 5's pending 100 first, then a plain commit of 101: the later one stays.
    let s = withPartition(initial(cfg), offsets, {
      log: [
        batch({ pid: 5, epoch: 0, seq: -1, kind: BatchKind.OffsetCommit, value: 100 }),
        batch({
          pid: -1,
          epoch: -1,
          seq: -1,
          kind: BatchKind.OffsetCommit,
          transactional: false,
          value: 101,
        }),
      ],
    });
    s = withProducerEntry(s, offsets, { pid: 5, epoch: 0, txnFirstOffset: 0 });
    s = marker(cfg, s, offsets, { pid: 5, epoch: 1, commit: true }).state;
    expect(committedOffset(offsetsOf(cfg, s))).toBe(101);
  });

  it('testGenericGroupTransactionalOffsetCommit', () => {
    const s0 = { ...initial(cfg), group: { generation: 1 } };
    const r = txnCommit(cfg, s0, { pid: 5, epoch: 0, value: 100, generation: 1 });
    expect(r.error).toBe(Err.NONE);
    expect(offsetsOf(cfg, r.state).log.map((b) => [b.kind, b.value])).toEqual([
      [BatchKind.OffsetCommit, 100],
    ]);
  });

  it('testGenericGroupTransactionalOffsetCommitWithIllegalGenerationId', () => {
    const s0 = { ...initial(cfg), group: { generation: 1 } };
    expect(txnCommit(cfg, s0, { pid: 5, epoch: 0, value: 100, generation: 100 }).error).toBe(
      Err.ILLEGAL_GENERATION,
    );
  });
});
