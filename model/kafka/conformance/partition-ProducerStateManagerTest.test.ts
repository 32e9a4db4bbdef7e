// ProducerStateManagerTest: the leader's per-producer state (ProducerAppendInfo's epoch, sequence
// and coordinator-epoch checks, the open transaction, the LSO, the verification entry). Kafka's
// test appends to the ProducerStateManager directly; here each append is a Produce or a
// WriteTxnMarkers through the model's step. The model's batches hold one record and are
// transactional; where Kafka's test appends idempotent or multi-record batches for a rule that does
// not depend on it, the case uses single transactional records (comment "adapted").
import { describe, expect, it } from 'vitest';
import { lastStableOffset } from '../partition.ts';
import { type State, Api, Err, NO_OFFSET } from '../state.ts';
import {
  handle,
  initial,
  kafkaConfig,
  labels,
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
  produced,
  producedVerified,
  produceAnswer,
  verificationsSent,
  verified,
} from './partition-support.ts';

const P = 0;
const PID = 1;

/** Appends each batch in turn and expects every append to succeed. */
function appendAll(gen: string, s: State, batches: { pid: number; epoch: number; seq: number }[]): State {
  const cfg = kafkaConfig(gen);
  let state = s;
  for (const b of batches) {
    const r = producedVerified(cfg, state, P, b);
    expect(r.error).toBe(Err.NONE);
    state = r.state;
  }
  return state;
}

// The producer-state rules below are the same on every branch read (3.5 Scala, 3.9 and trunk Java,
// and the 4.1+ file at 04d5bb94); they run under every generation whose markers keep the TV1 epoch rule.
const generations = ['kafka-3.5', 'kafka-3.6', 'kafka-4.0'];

describe('ProducerStateManagerTest (apache/kafka 3.5, 3.9, trunk 1eb7644)', () => {
  it.each(generations)('testBasicIdMapping (out of order, %s)', (gen) => {
    const cfg = kafkaConfig(gen);
    const s = appendAll(gen, initial(cfg), [
      { pid: PID, epoch: 0, seq: 0 },
      { pid: PID, epoch: 0, seq: 1 },
    ]);
    const r = produced(cfg, s, P, { pid: PID, epoch: 0, seq: 5 });
    expect(r.error).toBe(Err.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(r.state.partitions[P]!.log).toHaveLength(2);
  });

  it.each(generations)('testBasicIdMapping (epoch bump, then a fenced epoch, %s)', (gen) => {
    const cfg = kafkaConfig(gen);
    // adapted: Kafka appends idempotent batches; an epoch change needs sequence 0 either way.
    let s = withProducerEntry(initial(cfg), P, { pid: PID, epoch: 0, lastSeqs: [0, 1] });
    const bumped = producedVerified(cfg, s, P, { pid: PID, epoch: 1, seq: 0 });
    expect(bumped.error).toBe(Err.NONE);
    s = bumped.state;
    expect(producerEntry(s, P, PID)).toMatchObject({ epoch: 1, lastSeqs: [0] });
    // Under transaction version 2 the leader asks the coordinator first (an open transaction counts
    // only at its own epoch); the leader's own epoch check answers either way.
    expect(producedVerified(cfg, s, P, { pid: PID, epoch: 0, seq: 0 }).error).toBe(
      Err.INVALID_PRODUCER_EPOCH,
    );
  });

  describe.each(generations)('testAppendTxnMarkerWithNoProducerState (%s)', (gen) => {
    const cfg = kafkaConfig(gen);
    const onlyMarker = (): State => {
      const r = marker(cfg, initial(cfg), P, { pid: PID, epoch: 2, commit: true });
      expect(r.error).toBe(Err.NONE);
      return r.state;
    };

    it('testAppendTxnMarkerWithNoProducerState (the marker alone)', () => {
      const entry = producerEntry(onlyMarker(), P, PID);
      expect(entry).toMatchObject({ epoch: 2, lastSeqs: [], txnFirstOffset: NO_OFFSET });
    });

    it('testAppendTxnMarkerWithNoProducerState (fencing)', () => {
      expect(producedVerified(cfg, onlyMarker(), P, { pid: PID, epoch: 0, seq: 0 }).error).toBe(
        Err.INVALID_PRODUCER_EPOCH,
      );
    });

    it('testAppendTxnMarkerWithNoProducerState (non-zero sequence)', () => {
      const r = producedVerified(cfg, onlyMarker(), P, { pid: PID, epoch: 2, seq: 17 });
      expect(r.error).toBe(Err.OUT_OF_ORDER_SEQUENCE_NUMBER);
      expect(r.state.partitions[P]!.log).toHaveLength(1);
    });

    it('testAppendTxnMarkerWithNoProducerState (sequence 0)', () => {
      const r = producedVerified(cfg, onlyMarker(), P, { pid: PID, epoch: 2, seq: 0 });
      expect(r.error).toBe(Err.NONE);
      expect(producerEntry(r.state, P, PID)).toMatchObject({ epoch: 2, lastSeqs: [0] });
    });
  });

  it.each(generations)('testControlRecordBumpsProducerEpoch (%s)', (gen) => {
    const cfg = kafkaConfig(gen);
    const s = appendAll(gen, initial(cfg), [{ pid: PID, epoch: 0, seq: 0 }]);
    const m = marker(cfg, s, P, { pid: PID, epoch: 1, commit: false });
    expect(m.error).toBe(Err.NONE);
    expect(producerEntry(m.state, P, PID)).toMatchObject({
      epoch: 1,
      lastSeqs: [],
      txnFirstOffset: NO_OFFSET,
    });
    const r = producedVerified(cfg, m.state, P, { pid: PID, epoch: 1, seq: 0 });
    expect(r.error).toBe(Err.NONE);
    expect(producerEntry(r.state, P, PID)!.lastSeqs).toEqual([0]);
  });

  it.each(generations)('testTxnFirstOffsetMetadataCached (%s)', (gen) => {
    const cfg = kafkaConfig(gen);
    // Another producer's transaction (a batch and its marker) comes first, so this one opens at offset 2.
    const s1 = appendAll(gen, initial(cfg), [{ pid: 7, epoch: 0, seq: 0 }]);
    const s2 = marker(cfg, s1, P, { pid: 7, epoch: 0, commit: true }).state;
    const s = appendAll(gen, s2, [{ pid: PID, epoch: 0, seq: 0 }]);
    expect(lastStableOffset(s.partitions[P]!)).toBe(2);
  });

  it.each(generations)('updateProducerTransactionState (%s)', (gen) => {
    const cfg = kafkaConfig(gen);
    // adapted: the transaction's batches are single records 0..2; the COMMIT marker at the same
    // epoch ends the transaction and keeps the batch metadata.
    const s = appendAll(gen, initial(cfg), [
      { pid: PID, epoch: 0, seq: 0 },
      { pid: PID, epoch: 0, seq: 1 },
      { pid: PID, epoch: 0, seq: 2 },
    ]);
    expect(producerEntry(s, P, PID)!.txnFirstOffset).toBe(0);
    const m = marker(cfg, s, P, { pid: PID, epoch: 0, commit: true, coordinatorEpoch: 15 });
    expect(m.error).toBe(Err.NONE);
    expect(producerEntry(m.state, P, PID)).toMatchObject({
      epoch: 0,
      lastSeqs: [0, 1, 2],
      txnFirstOffset: NO_OFFSET,
      coordinatorEpoch: 15,
    });
  });

  describe.each(generations)('testOutOfSequenceAfterControlRecordEpochBump (%s)', (gen) => {
    const cfg = kafkaConfig(gen);
    const afterBump = (): State => {
      const s = appendAll(gen, initial(cfg), [
        { pid: PID, epoch: 0, seq: 0 },
        { pid: PID, epoch: 0, seq: 1 },
      ]);
      const m = marker(cfg, s, P, { pid: PID, epoch: 1, commit: false });
      expect(m.error).toBe(Err.NONE);
      return m.state;
    };

    it('testOutOfSequenceAfterControlRecordEpochBump (bumped epoch, old sequence)', () => {
      expect(producedVerified(cfg, afterBump(), P, { pid: PID, epoch: 1, seq: 2 }).error).toBe(
        Err.OUT_OF_ORDER_SEQUENCE_NUMBER,
      );
    });

    it('testOutOfSequenceAfterControlRecordEpochBump (newer epoch, old sequence)', () => {
      expect(producedVerified(cfg, afterBump(), P, { pid: PID, epoch: 2, seq: 2 }).error).toBe(
        Err.OUT_OF_ORDER_SEQUENCE_NUMBER,
      );
    });

    it('testOutOfSequenceAfterControlRecordEpochBump (bumped epoch, sequence 0)', () => {
      const r = producedVerified(cfg, afterBump(), P, { pid: PID, epoch: 1, seq: 0 });
      expect(r.error).toBe(Err.NONE);
      expect(producerEntry(r.state, P, PID)).toMatchObject({ epoch: 1, lastSeqs: [0] });
    });
  });

  it.each(generations)('testProducerStateAfterFencingAbortMarker (%s)', (gen) => {
    const cfg = kafkaConfig(gen);
    const s = appendAll(gen, initial(cfg), [{ pid: PID, epoch: 0, seq: 0 }]);
    const m = marker(cfg, s, P, { pid: PID, epoch: 1, commit: false });
    expect(m.error).toBe(Err.NONE);
    // No open transaction and no data batch left at the fencing epoch.
    expect(producerEntry(m.state, P, PID)).toMatchObject({
      epoch: 1,
      txnFirstOffset: NO_OFFSET,
      lastSeqs: [],
    });
  });

  it.each(generations)('testAcceptAppendWithSequenceGapsOnReplica (client append, %s)', (gen) => {
    const cfg = kafkaConfig(gen);
    const s = appendAll(gen, initial(cfg), [{ pid: PID, epoch: 0, seq: 0 }]);
    const r = produced(cfg, s, P, { pid: PID, epoch: 0, seq: 3 });
    expect(r.error).toBe(Err.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(producerEntry(r.state, P, PID)!.lastSeqs).toEqual([0]);
  });

  it.each(generations)('testFirstUnstableOffset (%s)', (gen) => {
    const cfg = kafkaConfig(gen);
    // adapted: offsets 0 and 1 instead of 99 and 105; the high watermark is the log end.
    const other = 2;
    let s = appendAll(gen, initial(cfg), [{ pid: PID, epoch: 5, seq: 0 }]);
    expect(lastStableOffset(s.partitions[P]!)).toBe(0);
    s = appendAll(gen, s, [{ pid: other, epoch: 5, seq: 0 }]);
    expect(lastStableOffset(s.partitions[P]!)).toBe(0);
    s = marker(cfg, s, P, { pid: PID, epoch: 5, commit: true }).state;
    expect(lastStableOffset(s.partitions[P]!)).toBe(1);
    s = marker(cfg, s, P, { pid: other, epoch: 5, commit: false }).state;
    expect(lastStableOffset(s.partitions[P]!)).toBe(s.partitions[P]!.log.length);
  });

  it.each(generations)('testOldEpochForControlRecord (%s)', (gen) => {
    const cfg = kafkaConfig(gen);
    const s = appendAll(gen, initial(cfg), [{ pid: PID, epoch: 5, seq: 0 }]);
    const m = marker(cfg, s, P, { pid: PID, epoch: 3, commit: true });
    expect(m.error).toBe(Err.INVALID_PRODUCER_EPOCH);
    expect(m.state.partitions[P]!.log).toHaveLength(1);
  });

  describe.each(generations)('testCoordinatorFencing (%s)', (gen) => {
    const cfg = kafkaConfig(gen);
    const committedAtOne = (): State => {
      const s = appendAll(gen, initial(cfg), [{ pid: PID, epoch: 5, seq: 0 }]);
      const m = marker(cfg, s, P, { pid: PID, epoch: 5, commit: true, coordinatorEpoch: 1 });
      expect(m.error).toBe(Err.NONE);
      return m.state;
    };

    it('testCoordinatorFencing (first marker sets the coordinator epoch)', () => {
      expect(producerEntry(committedAtOne(), P, PID)!.coordinatorEpoch).toBe(1);
    });

    it('testCoordinatorFencing (same, then higher coordinator epoch)', () => {
      const same = marker(cfg, committedAtOne(), P, {
        pid: PID,
        epoch: 5,
        commit: true,
        coordinatorEpoch: 1,
      });
      expect(same.error).toBe(Err.NONE);
      const higher = marker(cfg, same.state, P, { pid: PID, epoch: 5, commit: true, coordinatorEpoch: 2 });
      expect(higher.error).toBe(Err.NONE);
      expect(producerEntry(higher.state, P, PID)!.coordinatorEpoch).toBe(2);
    });

    it('testCoordinatorFencing (older coordinator epoch)', () => {
      const higher = marker(cfg, committedAtOne(), P, {
        pid: PID,
        epoch: 5,
        commit: true,
        coordinatorEpoch: 2,
      }).state;
      const zombie = marker(cfg, higher, P, { pid: PID, epoch: 5, commit: true, coordinatorEpoch: 1 });
      expect(zombie.error).toBe(Err.TRANSACTION_COORDINATOR_FENCED);
      expect(zombie.state.partitions[P]!.log).toHaveLength(higher.partitions[P]!.log.length);
    });
  });

  it.each(generations)('testLastStableOffsetCompletedTxn (%s)', (gen) => {
    const cfg = kafkaConfig(gen);
    // adapted: three producers open transactions at offsets 0, 1, 2 and end them 1, 3, 2.
    let s = appendAll(gen, initial(cfg), [
      { pid: 1, epoch: 0, seq: 0 },
      { pid: 2, epoch: 0, seq: 0 },
      { pid: 3, epoch: 0, seq: 0 },
    ]);
    s = marker(cfg, s, P, { pid: 1, epoch: 0, commit: true }).state;
    expect(lastStableOffset(s.partitions[P]!)).toBe(1);
    s = marker(cfg, s, P, { pid: 3, epoch: 0, commit: true }).state;
    expect(lastStableOffset(s.partitions[P]!)).toBe(1);
    s = marker(cfg, s, P, { pid: 2, epoch: 0, commit: true }).state;
    expect(lastStableOffset(s.partitions[P]!)).toBe(s.partitions[P]!.log.length);
  });

  it.each(generations)('testSkipEmptyTransactions (%s)', (gen) => {
    const cfg = kafkaConfig(gen);
    // adapted: one append per step. Markers with no open transaction change nothing but the log;
    // the next data batch opens a new transaction where it lands.
    let s = appendAll(gen, initial(cfg), [{ pid: PID, epoch: 0, seq: 0 }]);
    s = marker(cfg, s, P, { pid: PID, epoch: 0, commit: true }).state;
    for (const commit of [true, false]) {
      const m = marker(cfg, s, P, { pid: PID, epoch: 0, commit });
      expect(m.error).toBe(Err.NONE);
      expect(producerEntry(m.state, P, PID)!.txnFirstOffset).toBe(NO_OFFSET);
      expect(lastStableOffset(m.state.partitions[P]!)).toBe(m.state.partitions[P]!.log.length);
      s = m.state;
    }
    s = appendAll(gen, s, [{ pid: PID, epoch: 0, seq: 1 }]);
    expect(lastStableOffset(s.partitions[P]!)).toBe(4);
  });

  it.each(generations)('testRejectNonZeroSequenceForDirectEpochBump (%s)', (gen) => {
    const cfg = kafkaConfig(gen);
    const s = withProducerEntry(initial(cfg), P, { pid: PID, epoch: 0, lastSeqs: [0, 1, 2] });
    expect(producedVerified(cfg, s, P, { pid: PID, epoch: 1, seq: 5 }).error).toBe(
      Err.OUT_OF_ORDER_SEQUENCE_NUMBER,
    );
    expect(producedVerified(cfg, s, P, { pid: PID, epoch: 1, seq: 0 }).error).toBe(Err.NONE);
  });
});

describe('ProducerStateManagerTest (apache/kafka 3.5, 3.9): __consumer_offsets, kafka-3.5', () => {
  it('testSequenceNotValidatedForGroupMetadataTopic', () => {
    const cfg = kafkaConfig('kafka-3.5', { app: 'consume-transform-produce', inputRecords: 2 });
    const offsets = cfg.partitions;
    // Two offset commits of one transaction carry no sequence (coordinator origin): both are appended.
    let s = initial(cfg);
    for (const value of [1, 2]) {
      s = handle(
        cfg,
        s,
        0,
        leader(offsets),
        request(Api.TxnOffsetCommit, {
          txnId: 0,
          pid: PID,
          epoch: 0,
          partitions: offsets,
          value,
          generation: s.group!.generation,
        }),
      );
      const a = produceAnswer(s, offsets);
      expect(a.response.error).toBe(Err.NONE);
      s = a.state;
    }
    expect(s.partitions[offsets]!.log).toHaveLength(2);
  });
});

describe('ProducerStateManagerTest (apache/kafka 3.6 and trunk 1eb7644): verification entry, kafka-3.6', () => {
  const cfg = kafkaConfig('kafka-3.6');

  it('testEntryForVerification (reused)', () => {
    let s = produce(cfg, initial(cfg), P, { pid: PID, epoch: 0, seq: 0 });
    const first = s.partitions[P]!.verifications[0]!;
    s = produce(cfg, s, P, { pid: PID, epoch: 0, seq: 0 });
    expect(s.partitions[P]!.verifications).toEqual([first]);
    expect(verificationsSent(s, P).map((m) => (m.response ? -1 : m.guard))).toEqual([
      first.guard,
      first.guard,
    ]);
  });

  it('testEntryForVerification (cleared by the append)', () => {
    const s = produceAnswer(
      verified(cfg, produce(cfg, initial(cfg), P, { pid: PID, epoch: 0, seq: 0 }), P),
      P,
    );
    expect(s.response.error).toBe(Err.NONE);
    expect(s.state.partitions[P]!.verifications).toEqual([]);
  });

  it('testSequenceAndEpochInVerificationEntry', () => {
    let s = produce(cfg, initial(cfg), P, { pid: PID, epoch: 0, seq: 1 });
    const guard = s.partitions[P]!.verifications[0]!.guard;
    expect(s.partitions[P]!.verifications[0]).toMatchObject({ epoch: 0, lowestSeq: 1 });
    // A lower sequence at the same epoch lowers it.
    s = produce(cfg, s, P, { pid: PID, epoch: 0, seq: 0 });
    expect(s.partitions[P]!.verifications).toEqual([
      { pid: PID, guard, epoch: 0, lowestSeq: 0, supportsEpochBump: false },
    ]);
    // A higher epoch replaces epoch and sequence, under the same guard.
    s = produce(cfg, s, P, { pid: PID, epoch: 1, seq: 2 });
    expect(s.partitions[P]!.verifications).toEqual([
      { pid: PID, guard, epoch: 1, lowestSeq: 2, supportsEpochBump: false },
    ]);
    // A lower epoch changes nothing.
    s = produce(cfg, s, P, { pid: PID, epoch: 0, seq: 0 });
    expect(s.partitions[P]!.verifications).toEqual([
      { pid: PID, guard, epoch: 1, lowestSeq: 2, supportsEpochBump: false },
    ]);
  });

  it.each([
    ['verification on', {}],
    // Kafka's dynamically disabled case: the entry is there, the switch is off; the check still runs.
    ['verification off', { verification: false }],
  ] as const)('testThrowOutOfOrderSequenceWithVerificationSequenceCheck (%s)', (_, rules) => {
    const c = kafkaConfig('kafka-3.6', {}, rules);
    const entry = { pid: PID, epoch: 0, guard: 0, lowestSeq: 0, supportsEpochBump: false };
    const s = withPartition(initial(c), P, { verifications: [entry], nextGuard: 1 });
    const r = producedVerified(c, s, P, { pid: PID, epoch: 0, seq: 4 });
    expect(r.error).toBe(Err.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(r.state.partitions[P]!.verifications).toEqual([entry]);
    expect(r.state.partitions[P]!.log).toEqual([]);
  });
});

describe('ProducerStateManagerTest (apache/kafka 04d5bb94, 4.1+): KAFKA-18202', () => {
  // The batch at sequence 5 is the lowest the leader has seen while verifying, so only the
  // transaction-version-2 rule can turn it away.
  it('testRejectNonZeroSequenceForTransactionsV2WithEmptyState (kafka-latest)', () => {
    const cfg = kafkaConfig('kafka-latest');
    const r = producedVerified(cfg, initial(cfg), P, { pid: PID, epoch: 0, seq: 5 });
    expect(r.error).toBe(Err.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(r.state.partitions[P]!.log).toEqual([]);
    expect(producedVerified(cfg, r.state, P, { pid: PID, epoch: 0, seq: 0 }).error).toBe(Err.NONE);
  });

  // The rule asks for sequence 0 only from a producer the leader holds no sequences for. A
  // producer that committed under transaction version 1 at this epoch and runs version 2 after an
  // upgrade opens its first such transaction at the same epoch, so it goes on from its last sequence.
  it('a verified TV2 batch that goes on from the sequences held at its epoch (kafka-latest)', () => {
    const cfg = kafkaConfig('kafka-latest');
    const s = withProducerEntry(initial(cfg), P, { pid: PID, epoch: 0, lastSeqs: [0] });
    const r = producedVerified(cfg, s, P, { pid: PID, epoch: 0, seq: 1 });
    expect(verificationsSent(produce(cfg, s, P, { pid: PID, epoch: 0, seq: 1 }), P)).toHaveLength(1);
    expect(r.error).toBe(Err.NONE);
    expect(producerEntry(r.state, P, PID)!.lastSeqs).toEqual([0, 1]);
  });

  it('testAllowNonZeroSequenceForTransactionsV1WithEmptyState (kafka-3.6)', () => {
    const cfg = kafkaConfig('kafka-3.6');
    const r = producedVerified(cfg, initial(cfg), P, { pid: PID, epoch: 0, seq: 5 });
    expect(r.error).toBe(Err.NONE);
    expect(producerEntry(r.state, P, PID)!.lastSeqs).toEqual([5]);
  });
});

describe('ProducerStateManagerTest (apache/kafka 0.11.0), kafka-0.11', () => {
  const gen = 'kafka-0.11';
  const cfg = kafkaConfig(gen);

  it('testControlRecordBumpsEpoch', () => {
    const s = appendAll(gen, initial(cfg), [{ pid: PID, epoch: 0, seq: 0 }]);
    const m = marker(cfg, s, P, { pid: PID, epoch: 1, commit: false });
    expect(m.error).toBe(Err.NONE);
    expect(producerEntry(m.state, P, PID)).toMatchObject({
      epoch: 1,
      lastSeqs: [],
      txnFirstOffset: NO_OFFSET,
    });
    expect(lastStableOffset(m.state.partitions[P]!)).toBe(2);
    expect(produced(cfg, m.state, P, { pid: PID, epoch: 1, seq: 0 }).error).toBe(Err.NONE);
  });

  it('testOutOfSequenceAfterControlRecordEpochBump', () => {
    const s = appendAll(gen, initial(cfg), [
      { pid: PID, epoch: 0, seq: 0 },
      { pid: PID, epoch: 0, seq: 1 },
    ]);
    const m = marker(cfg, s, P, { pid: PID, epoch: 1, commit: false });
    expect(produced(cfg, m.state, P, { pid: PID, epoch: 1, seq: 2 }).error).toBe(
      Err.OUT_OF_ORDER_SEQUENCE_NUMBER,
    );
  });

  it('testCoordinatorFencing', () => {
    let s = appendAll(gen, initial(cfg), [{ pid: PID, epoch: 5, seq: 0 }]);
    for (const coordinatorEpoch of [1, 1, 2]) {
      const m = marker(cfg, s, P, { pid: PID, epoch: 5, commit: true, coordinatorEpoch });
      expect(m.error).toBe(Err.NONE);
      s = m.state;
    }
    expect(marker(cfg, s, P, { pid: PID, epoch: 5, commit: true, coordinatorEpoch: 1 }).error).toBe(
      Err.TRANSACTION_COORDINATOR_FENCED,
    );
  });
});

// removeExpiredProducers: Kafka sleeps past producer.id.expiration.ms and calls it; the model's
// leader takes its expiry step, a fault a budget allows once the producer is idle.
const expiring = (gen: string) =>
  kafkaConfig(gen, { faults: { ...kafkaConfig(gen).faults, producerStateExpiries: 1 } });
const expiry = `L${P}: producerStateExpiry(pid ${PID})`;

describe.each(['kafka-0.11', ...generations])(
  'ProducerStateManagerTest (apache/kafka 0.11.0, 3.5, 3.9, trunk 1eb7644): producer id expiration, %s',
  (gen) => {
    const cfg = expiring(gen);

    it('testPidExpirationTimeout', () => {
      if (gen === 'kafka-0.11') {
        // 0.11.0 expects OutOfOrderSequenceException (1.0 to 2.4: UnknownProducerIdException): a producer
        // id the leader has no state for must start at sequence 0, so the test's first append fails already.
        expect(produced(cfg, initial(cfg), P, { pid: PID, epoch: 5, seq: 37 }).error).toBe(
          Err.OUT_OF_ORDER_SEQUENCE_NUMBER,
        );
        return;
      }
      // adapted: Kafka appends idempotent batches; here a transactional record and its COMMIT marker.
      let s = appendAll(gen, initial(cfg), [{ pid: PID, epoch: 5, seq: 37 }]);
      s = take(cfg, marker(cfg, s, P, { pid: PID, epoch: 5, commit: true }).state, expiry);
      expect(producerEntry(s, P, PID)).toBeUndefined();
      s = appendAll(gen, s, [{ pid: PID, epoch: 5, seq: 38 }]);
      expect(s.partitions[P]!.producers).toHaveLength(1);
      expect(producerEntry(s, P, PID)!.lastSeqs).toEqual([38]);
      expect(s.partitions[P]!.log).toHaveLength(3);
    });

    it('testProducersWithOngoingTransactionsDontExpire', () => {
      const s = appendAll(gen, initial(cfg), [{ pid: PID, epoch: 5, seq: 0 }]);
      expect(lastStableOffset(s.partitions[P]!)).toBe(0);
      expect(labels(cfg, s)).not.toContain(expiry);
      expect(producerEntry(s, P, PID)!.txnFirstOffset).toBe(0);
    });
  },
);

describe.each(['kafka-0.11', ...generations])(
  'ProducerStateManagerTest (apache/kafka 0.11.0, 3.9): idempotent appends, %s',
  (gen) => {
    const cfg = kafkaConfig(gen);
    const idempotent = { pid: PID, epoch: 0, txnId: -1 };

    it('testNonTransactionalAppendWithOngoingTransaction', () => {
      const s = appendAll(gen, initial(cfg), [{ pid: PID, epoch: 0, seq: 0 }]);
      const r = produced(cfg, s, P, { ...idempotent, seq: 1 });
      expect(r.error).toBe(Err.INVALID_TXN_STATE);
      expect(r.state.partitions[P]!.log).toHaveLength(1);
    });

    it('an idempotent batch opens no transaction: the LSO follows the high watermark', () => {
      const r = produced(cfg, initial(cfg), P, { ...idempotent, seq: 0 });
      expect(r.error).toBe(Err.NONE);
      expect(r.state.partitions[P]!.log).toMatchObject([{ transactional: false, seq: 0 }]);
      expect(producerEntry(r.state, P, PID)).toMatchObject({
        epoch: 0,
        lastSeqs: [0],
        txnFirstOffset: NO_OFFSET,
      });
      expect(lastStableOffset(r.state.partitions[P]!)).toBe(1);
      expect(verificationsSent(r.state, P)).toEqual([]);
    });

    it('testBasicIdMapping (idempotent: duplicate, out of order, fenced epoch)', () => {
      let s = produced(cfg, initial(cfg), P, { ...idempotent, seq: 0 }).state;
      s = produced(cfg, s, P, { ...idempotent, seq: 1 }).state;
      const duplicate = produced(cfg, s, P, { ...idempotent, seq: 1 });
      expect(duplicate.error).toBe(Err.NONE);
      expect(duplicate.state.partitions[P]!.log).toHaveLength(2);
      expect(produced(cfg, s, P, { ...idempotent, seq: 5 }).error).toBe(Err.OUT_OF_ORDER_SEQUENCE_NUMBER);
      s = produced(cfg, s, P, { ...idempotent, epoch: 1, seq: 0 }).state;
      expect(produced(cfg, s, P, { ...idempotent, seq: 2 }).error).toBe(Err.INVALID_PRODUCER_EPOCH);
    });

    it('checkSequence: a producer id without state at the leader starts at sequence 0 before KIP-360 (2.5), at any sequence after', () => {
      const r = produced(cfg, initial(cfg), P, { ...idempotent, seq: 3 });
      expect(r.error).toBe(gen === 'kafka-0.11' ? Err.OUT_OF_ORDER_SEQUENCE_NUMBER : Err.NONE);
    });
  },
);

describe('ProducerStateManagerTest (apache/kafka 3.6 and trunk 1eb7644): verification entry expiration, kafka-3.6', () => {
  it('testVerificationStateEntryExpiration (part: removed once expired)', () => {
    const cfg = expiring('kafka-3.6');
    const s = withPartition(initial(cfg), P, {
      verifications: [{ pid: PID, epoch: 0, guard: 0, lowestSeq: 0, supportsEpochBump: false }],
      nextGuard: 1,
    });
    expect(take(cfg, s, expiry).partitions[P]!.verifications).toEqual([]);
  });
});
