// UnifiedLogTest, transactional parts: duplicates, epochs, markers and the coordinator epoch, the
// LSO, and the verification guard as the log sees it. Kafka's test appends multi-record and
// non-transactional batches next to the transactional ones; the model's batches are single
// transactional records, so the cases keep only what the rule needs (comment "adapted"). The
// model's high watermark is the log end: Kafka's steps that hold the HW back are left out.
import { describe, expect, it } from 'vitest';
import { batchOutcome, lastStableOffset } from '../partition.ts';
import { type State, Api, BatchKind, Err, NO_OFFSET, Outcome, SUPPORTS_ALL, Supports } from '../state.ts';
import {
  batch,
  handle,
  initial,
  kafkaConfig,
  leader,
  producerEntry,
  request,
  take,
  withPartition,
  withProducerEntry,
} from './harness.ts';
import {
  marker,
  produce,
  produceAnswer,
  produced,
  producedVerified,
  verificationsSent,
  verified,
} from './partition-support.ts';

const P = 0;
const generations = ['kafka-3.5', 'kafka-3.6', 'kafka-4.0'];

/** Appends single-record batches (pid, epoch, seq) in turn; each must succeed. */
function appendAll(gen: string, s: State, batches: [number, number, number][]): State {
  const cfg = kafkaConfig(gen);
  let state = s;
  for (const [pid, epoch, seq] of batches) {
    const r = producedVerified(cfg, state, P, { pid, epoch, seq });
    expect(r.error).toBe(Err.NONE);
    state = r.state;
  }
  return state;
}

const lso = (s: State): number => lastStableOffset(s.partitions[P]!);
const logEnd = (s: State): number => s.partitions[P]!.log.length;

describe('UnifiedLogTest (apache/kafka 3.5, 3.9, trunk 1eb7644)', () => {
  describe.each(generations)('testDuplicateAppends (%s)', (gen) => {
    const cfg = kafkaConfig(gen);
    // adapted: seven single-record batches, sequences 0..6; the leader keeps the last five (2..6).
    const seven = (): State =>
      appendAll(
        gen,
        initial(cfg),
        [0, 1, 2, 3, 4, 5, 6].map((seq) => [1, 0, seq]),
      );

    it('testDuplicateAppends (a batch among the last five)', () => {
      const s = seven();
      const r = produced(cfg, s, P, { pid: 1, epoch: 0, seq: 2 });
      expect(r.error).toBe(Err.NONE);
      expect(r.state.partitions[P]!.log).toEqual(s.partitions[P]!.log);
    });

    it('testDuplicateAppends (a batch older than the last five)', () => {
      const r = produced(cfg, seven(), P, { pid: 1, epoch: 0, seq: 1 });
      expect(r.error).toBe(Err.OUT_OF_ORDER_SEQUENCE_NUMBER);
    });

    it('testDuplicateAppends (the tail)', () => {
      const s = appendAll(gen, seven(), [[1, 0, 7]]);
      const r = produced(cfg, s, P, { pid: 1, epoch: 0, seq: 7 });
      expect(r.error).toBe(Err.NONE);
      expect(logEnd(r.state)).toBe(8);
    });
  });

  it.each(generations)('testOldProducerEpoch (%s)', (gen) => {
    const cfg = kafkaConfig(gen);
    const s = appendAll(gen, initial(cfg), [[1, 1, 0]]);
    expect(producedVerified(cfg, s, P, { pid: 1, epoch: 0, seq: 0 }).error).toBe(Err.INVALID_PRODUCER_EPOCH);
  });

  it.each(generations)('testFirstUnstableOffsetWithTransactionalData (%s)', (gen) => {
    const cfg = kafkaConfig(gen);
    // adapted: three single records where Kafka appends one batch of three.
    let s = appendAll(gen, initial(cfg), [
      [137, 5, 0],
      [137, 5, 1],
      [137, 5, 2],
    ]);
    expect(lso(s)).toBe(0);
    s = appendAll(gen, s, [[137, 5, 3]]);
    expect(lso(s)).toBe(0);
    const m = marker(cfg, s, P, { pid: 137, epoch: 5, commit: true });
    expect(m.error).toBe(Err.NONE);
    expect(lso(m.state)).toBe(logEnd(m.state));
  });

  it.each(generations)('testFetchUpToLastStableOffset (%s)', (gen) => {
    const cfg = kafkaConfig(gen);
    // adapted: without the non-transactional batches, producer 2's transaction opens at offset 1.
    let s = appendAll(gen, initial(cfg), [
      [1, 0, 0],
      [2, 0, 0],
      [1, 0, 1],
      [1, 0, 2],
    ]);
    expect(lso(s)).toBe(0);
    s = marker(cfg, s, P, { pid: 1, epoch: 0, commit: true }).state;
    expect(lso(s)).toBe(1);
    s = marker(cfg, s, P, { pid: 2, epoch: 0, commit: false }).state;
    expect(lso(s)).toBe(logEnd(s));
  });

  it.each(generations)('testTransactionIndexUpdated (%s)', (gen) => {
    const cfg = kafkaConfig(gen);
    // adapted: the same interleaving of four producers without the non-transactional batches.
    const seq = new Map<number, number>();
    let s = initial(cfg);
    const append = (pid: number): void => {
      const n = seq.get(pid) ?? 0;
      s = appendAll(gen, s, [[pid, 0, n]]);
      seq.set(pid, n + 1);
    };
    const end = (pid: number, commit: boolean): void => {
      const m = marker(cfg, s, P, { pid, epoch: 0, commit });
      expect(m.error).toBe(Err.NONE);
      s = m.state;
    };
    append(1);
    append(2);
    append(1);
    append(3);
    append(1);
    end(1, false);
    append(2);
    append(4);
    append(3);
    end(3, true);
    append(4);
    append(2);
    end(2, false);
    append(4);
    end(4, true);
    // The aborted transactions are producer 1's and producer 2's; 3 and 4 committed.
    const part = s.partitions[P]!;
    part.log.forEach((b, offset) => {
      if (b.kind !== BatchKind.Data) return;
      expect([offset, batchOutcome(part, offset)]).toEqual([
        offset,
        b.pid === 1 || b.pid === 2 ? Outcome.Aborted : Outcome.Committed,
      ]);
    });
    expect(lso(s)).toBe(logEnd(s));
  });

  it.each(generations)('testZombieCoordinatorFenced (%s)', (gen) => {
    const cfg = kafkaConfig(gen);
    let s = appendAll(gen, initial(cfg), [[1, 0, 0]]);
    s = marker(cfg, s, P, { pid: 1, epoch: 0, commit: false, coordinatorEpoch: 1 }).state;
    s = appendAll(gen, s, [[1, 0, 1]]);
    const commit = marker(cfg, s, P, { pid: 1, epoch: 0, commit: true, coordinatorEpoch: 2 });
    expect(commit.error).toBe(Err.NONE);
    const zombie = marker(cfg, commit.state, P, { pid: 1, epoch: 0, commit: false, coordinatorEpoch: 1 });
    expect(zombie.error).toBe(Err.TRANSACTION_COORDINATOR_FENCED);
    expect(logEnd(zombie.state)).toBe(logEnd(commit.state));
  });

  it.each(generations)('testZombieCoordinatorFencedEmptyTransaction (%s)', (gen) => {
    const cfg = kafkaConfig(gen);
    // Kafka appends a committed transaction as a follower; here the state is built the same.
    let s = withPartition(initial(cfg), P, {
      log: [
        batch({ pid: 1, epoch: 0, seq: 0 }),
        batch({ pid: 1, epoch: 0, seq: -1, kind: BatchKind.Commit }),
      ],
    });
    s = withProducerEntry(s, P, { pid: 1, epoch: 0, lastSeqs: [0], coordinatorEpoch: 0 });
    for (let k = 0; k < 2; k++) {
      const m = marker(cfg, s, P, { pid: 1, epoch: 0, commit: false, coordinatorEpoch: 2 });
      expect(m.error).toBe(Err.NONE);
      s = m.state;
    }
    expect(marker(cfg, s, P, { pid: 1, epoch: 0, commit: false, coordinatorEpoch: 1 }).error).toBe(
      Err.TRANSACTION_COORDINATOR_FENCED,
    );
  });

  it.each(generations)('testEndTxnWithFencedProducerEpoch (%s)', (gen) => {
    const cfg = kafkaConfig(gen);
    const first = marker(cfg, initial(cfg), P, { pid: 1, epoch: 5, commit: false, coordinatorEpoch: 1 });
    expect(first.error).toBe(Err.NONE);
    expect(marker(cfg, first.state, P, { pid: 1, epoch: 4, commit: false, coordinatorEpoch: 1 }).error).toBe(
      Err.INVALID_PRODUCER_EPOCH,
    );
  });

  it.each(generations)('testLastStableOffsetWithMixedProducerData (%s)', (gen) => {
    const cfg = kafkaConfig(gen);
    // adapted: producer 137's three records, then producer 983's three (no plain data between).
    let s = appendAll(gen, initial(cfg), [
      [137, 5, 0],
      [137, 5, 1],
      [137, 5, 2],
      [983, 5, 0],
      [983, 5, 1],
      [983, 5, 2],
    ]);
    expect(lso(s)).toBe(0);
    s = marker(cfg, s, P, { pid: 137, epoch: 5, commit: false }).state;
    expect(lso(s)).toBe(3);
    s = marker(cfg, s, P, { pid: 983, epoch: 5, commit: true }).state;
    expect(lso(s)).toBe(logEnd(s));
  });

  it.each(generations)('testActiveProducers (%s)', (gen) => {
    const cfg = kafkaConfig(gen);
    const s = appendAll(
      gen,
      initial(cfg),
      [0, 1, 2, 3, 4].map((seq) => [1, 5, seq]),
    );
    expect(producerEntry(s, P, 1)).toMatchObject({
      epoch: 5,
      lastSeqs: [0, 1, 2, 3, 4],
      txnFirstOffset: 0,
      coordinatorEpoch: -1,
    });
    const m = marker(cfg, s, P, { pid: 1, epoch: 5, commit: true, coordinatorEpoch: 15 });
    expect(producerEntry(m.state, P, 1)).toMatchObject({
      epoch: 5,
      lastSeqs: [0, 1, 2, 3, 4],
      txnFirstOffset: NO_OFFSET,
      coordinatorEpoch: 15,
    });
  });
});

describe('UnifiedLogTest (apache/kafka 3.9): verification guard, kafka-3.8', () => {
  const cfg = kafkaConfig('kafka-3.8');

  it('testTransactionIsOngoingAndVerificationGuard (CLIENT)', () => {
    // The Kafka test's idempotent append comes first; the model has no idempotent producer.
    let s = produce(cfg, initial(cfg), P, { pid: 23, epoch: 1, seq: 5 });
    const guard = s.partitions[P]!.verifications[0]!.guard;
    let a = produceAnswer(verified(cfg, s, P), P);
    expect(a.response.error).toBe(Err.NONE);
    s = a.state;
    expect(producerEntry(s, P, 23)!.txnFirstOffset).toBe(0);
    expect(s.partitions[P]!.verifications).toEqual([]);
    // While the transaction is ongoing no verification is needed.
    a = produceAnswer(produce(cfg, s, P, { pid: 23, epoch: 1, seq: 6 }), P);
    expect(a.response.error).toBe(Err.NONE);
    expect(verificationsSent(a.state, P)).toEqual([]);
    s = marker(cfg, a.state, P, { pid: 23, epoch: 1, commit: true }).state;
    expect(producerEntry(s, P, 23)!.txnFirstOffset).toBe(NO_OFFSET);
    expect(s.partitions[P]!.verifications).toEqual([]);
    // The next transaction is verified again, under a new guard.
    s = produce(cfg, s, P, { pid: 23, epoch: 1, seq: 7 });
    expect(verificationsSent(s, P)).toHaveLength(1);
    expect(s.partitions[P]!.verifications[0]!.guard).not.toBe(guard);
  });

  it('testTransactionIsOngoingAndVerificationGuard (COORDINATOR)', () => {
    const c = kafkaConfig('kafka-3.8', { app: 'consume-transform-produce', inputRecords: 2 });
    const offsets = c.partitions;
    const commit = (s: State, value: number): State =>
      handle(
        c,
        s,
        0,
        leader(offsets),
        request(Api.TxnOffsetCommit, {
          txnId: 0,
          pid: 23,
          epoch: 1,
          partitions: offsets,
          value,
          generation: s.group!.generation,
        }),
      );
    let s = commit(initial(c), 1);
    const guard = s.partitions[offsets]!.verifications[0]!.guard;
    let a = produceAnswer(verified(c, s, offsets), offsets);
    expect(a.response.error).toBe(Err.NONE);
    expect(a.state.partitions[offsets]!.verifications).toEqual([]);
    a = produceAnswer(commit(a.state, 2), offsets);
    expect(a.response.error).toBe(Err.NONE);
    expect(verificationsSent(a.state, offsets)).toEqual([]);
    s = marker(c, a.state, offsets, { pid: 23, epoch: 1, commit: true }).state;
    s = commit(s, 3);
    expect(verificationsSent(s, offsets)).toHaveLength(1);
    expect(s.partitions[offsets]!.verifications[0]!.guard).not.toBe(guard);
  });

  it('testEmptyTransactionStillClearsVerificationGuard', () => {
    const s = produce(cfg, initial(cfg), P, { pid: 23, epoch: 1, seq: 0 });
    expect(s.partitions[P]!.verifications).toHaveLength(1);
    const m = marker(cfg, s, P, { pid: 23, epoch: 1, commit: true });
    expect(m.error).toBe(Err.NONE);
    expect(producerEntry(m.state, P, 23)!.txnFirstOffset).toBe(NO_OFFSET);
    expect(m.state.partitions[P]!.verifications).toEqual([]);
  });

  it('testDisabledVerificationClearsVerificationGuard', () => {
    // Kafka switches verification off at run time with the entry in place; a switch stands in.
    const c = kafkaConfig('kafka-3.8', {}, { verification: false });
    const s = withPartition(initial(c), P, {
      verifications: [{ pid: 23, epoch: 1, guard: 0, lowestSeq: 0, supportsEpochBump: false }],
      nextGuard: 1,
    });
    const r = produced(c, s, P, { pid: 23, epoch: 1, seq: 0 });
    expect(r.error).toBe(Err.NONE);
    expect(producerEntry(r.state, P, 23)!.txnFirstOffset).toBe(0);
    expect(r.state.partitions[P]!.verifications).toEqual([]);
  });

  it.each(['kafka-3.8', 'kafka-4.0'])('testAllowNonZeroSequenceOnFirstAppendNonZeroEpoch (%s)', (gen) => {
    const c = kafkaConfig(gen);
    const r = producedVerified(c, initial(c), P, { pid: 23, epoch: 1, seq: 3 });
    expect(r.error).toBe(Err.NONE);
  });
});

// KAFKA-18654 [1/2] (PR #18720, 4.0.0): UnifiedLog.updateProducers keeps the verification entry of
// a transaction-version-2 request when a marker at its epoch is appended, since under version 2 that
// epoch is the next transaction's; switch keepGuardAcrossV2Marker.
describe('UnifiedLogTest (apache/kafka 4.0.0): the verification guard across a version-2 marker, kafka-4.0', () => {
  const cfg = kafkaConfig('kafka-4.0');
  const started = produce(cfg, initial(cfg), P, { pid: 23, epoch: 1, seq: 0 });

  it('testNextTransactionVerificationGuardNotCleared', () => {
    const entry = started.partitions[P]!.verifications[0]!;
    expect(entry).toMatchObject({ epoch: 1, supportsEpochBump: true });
    const m = marker(cfg, started, P, { pid: 23, epoch: 1, commit: true });
    expect(m.error).toBe(Err.NONE);
    expect(m.state.partitions[P]!.verifications).toEqual([entry]);
    // The held Produce is verified and appended under its guard.
    expect(produceAnswer(verified(cfg, m.state, P), P).response.error).toBe(Err.NONE);
  });

  it('testNextTransactionVerificationGuardNotCleared (the switch off: the marker clears it, as before KAFKA-18654)', () => {
    const c = kafkaConfig('kafka-4.0', {}, { keepGuardAcrossV2Marker: false });
    const m = marker(c, produce(c, initial(c), P, { pid: 23, epoch: 1, seq: 0 }), P, {
      pid: 23,
      epoch: 1,
      commit: true,
    });
    expect(m.state.partitions[P]!.verifications).toEqual([]);
    expect(produceAnswer(verified(c, m.state, P), P).response.error).toBe(Err.INVALID_TXN_STATE);
  });

  it('testEmptyTransactionStillClearsVerificationGuard (supportsEpochBump: a marker at the next epoch)', () => {
    const m = marker(cfg, started, P, { pid: 23, epoch: 2, commit: true });
    expect(m.error).toBe(Err.NONE);
    expect(m.state.partitions[P]!.verifications).toEqual([]);
  });

  it('a version-1 entry is cleared by a marker at its epoch (supportsEpochBump false)', () => {
    // A Produce below v12 (no transaction version 2) makes the entry.
    const v1Produce = request(Api.Produce, {
      txnId: 0,
      pid: 23,
      epoch: 1,
      partitions: P,
      seq: 0,
      supports: SUPPORTS_ALL & ~Supports.TransactionVersion2,
    });
    const s = handle(cfg, initial(cfg), 0, leader(P), v1Produce);
    expect(s.partitions[P]!.verifications).toEqual([expect.objectContaining({ supportsEpochBump: false })]);
    expect(marker(cfg, s, P, { pid: 23, epoch: 1, commit: true }).state.partitions[P]!.verifications).toEqual(
      [],
    );
  });
});

describe('UnifiedLogTest (apache/kafka 3.5, 3.9, trunk 1eb7644): producer id expiration', () => {
  it.each(generations)('testPeriodicProducerIdExpiration (%s)', (gen) => {
    // adapted: an idempotent record in Kafka; here a transactional record its COMMIT marker closed.
    // The periodic check is the leader's expiry step, which the fault budget allows.
    const cfg = kafkaConfig(gen, { faults: { ...kafkaConfig(gen).faults, producerStateExpiries: 1 } });
    const pid = 23;
    const s = marker(cfg, appendAll(gen, initial(cfg), [[pid, 0, 0]]), P, {
      pid,
      epoch: 0,
      commit: true,
    }).state;
    expect(s.partitions[P]!.producers.map((e) => e.pid)).toEqual([pid]);
    expect(take(cfg, s, `L${P}: producerStateExpiry(pid ${pid})`).partitions[P]!.producers).toEqual([]);
  });
});
