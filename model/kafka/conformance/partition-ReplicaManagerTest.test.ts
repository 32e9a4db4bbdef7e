// ReplicaManagerTest, transaction verification (KIP-890): the leader holds a batch that would open
// a transaction, asks the coordinator, and appends or answers with the converted error. Kafka's
// test completes the mocked AddPartitionsToTxnManager callback with an error; here the
// coordinator's answer with that error reaches the leader through the model's step. A dynamic
// config change in Kafka's test is a change of the model's switches between two steps.
import { describe, expect, it } from 'vitest';
import { type State, Api, Err } from '../state.ts';
import { handle, initial, kafkaConfig, leader, producerEntry, request } from './harness.ts';
import {
  produce,
  produceAnswer,
  produced,
  verificationLost,
  verificationsSent,
  verified,
} from './partition-support.ts';

const P = 0;
const PID = 24;

describe('ReplicaManagerTest (apache/kafka 3.6), kafka-3.6', () => {
  const cfg = kafkaConfig('kafka-3.6');

  it('testVerificationForTransactionalPartitionsOnly', () => {
    // The idempotent half of Kafka's test has no counterpart: every model batch is transactional.
    const s = produce(cfg, initial(cfg), P, { pid: PID, epoch: 0, seq: 1 });
    const sent = verificationsSent(s, P);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      api: Api.AddPartitionsToTxn,
      txnId: 0,
      pid: PID,
      epoch: 0,
      partitions: 1 << P,
      verifyOnly: true,
    });
    expect(s.partitions[P]!.verifications).toHaveLength(1);
    expect(s.partitions[P]!.held).toHaveLength(1);
    expect(s.partitions[P]!.log).toEqual([]);
  });

  describe('testTransactionVerificationFlow', () => {
    const rejected = (): State => produce(cfg, initial(cfg), P, { pid: PID, epoch: 0, seq: 6 });

    it('testTransactionVerificationFlow (not verified)', () => {
      const s = rejected();
      const entry = s.partitions[P]!.verifications[0];
      const a = produceAnswer(verified(cfg, s, P, Err.INVALID_TXN_STATE), P);
      expect(a.response.error).toBe(Err.INVALID_TXN_STATE);
      expect(a.state.partitions[P]!.log).toEqual([]);
      expect(a.state.partitions[P]!.verifications).toEqual([entry]);
    });

    it('testTransactionVerificationFlow (verified on retry)', () => {
      const s0 = produceAnswer(verified(cfg, rejected(), P, Err.INVALID_TXN_STATE), P).state;
      const guard = s0.partitions[P]!.verifications[0]!.guard;
      const s1 = produce(cfg, s0, P, { pid: PID, epoch: 0, seq: 6 });
      expect(verificationsSent(s1, P).map((m) => (m.response ? -1 : m.guard))).toEqual([guard]);
      const a = produceAnswer(verified(cfg, s1, P), P);
      expect(a.response.error).toBe(Err.NONE);
      expect(a.state.partitions[P]!.verifications).toEqual([]);
      expect(producerEntry(a.state, P, PID)!.txnFirstOffset).toBe(0);
    });
  });

  it.each([
    ['kafka-3.6', 6],
    // The 4.1+ file (id 2394612251) starts at sequence 0 and runs under transaction version 2.
    ['kafka-4.0', 0],
    ['kafka-latest', 0],
  ] as const)('testTransactionVerificationBlocksOutOfOrderSequence (%s)', (gen, first) => {
    const c = kafkaConfig(gen);
    let s = produce(c, initial(c), P, { pid: PID, epoch: 0, seq: first });
    const entry = s.partitions[P]!.verifications[0]!;
    let a = produceAnswer(verified(c, s, P, Err.INVALID_PRODUCER_ID_MAPPING), P);
    expect(a.response.error).toBe(Err.INVALID_PRODUCER_ID_MAPPING);
    // The next sequence is verified, but the lower one has not been written: out of order.
    s = produce(c, a.state, P, { pid: PID, epoch: 0, seq: first + 1 });
    a = produceAnswer(verified(c, s, P), P);
    expect(a.response.error).toBe(Err.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(a.state.partitions[P]!.log).toEqual([]);
    expect(a.state.partitions[P]!.verifications).toEqual([{ ...entry, lowestSeq: first }]);
  });

  it('testDisabledTransactionVerification (verification off)', () => {
    const off = kafkaConfig('kafka-3.5');
    const r = produced(off, initial(off), P, { pid: PID, epoch: 0, seq: 0 });
    expect(r.error).toBe(Err.NONE);
    expect(verificationsSent(r.state, P)).toEqual([]);
    expect(r.state.partitions[P]!.verifications).toEqual([]);
  });

  it('testDisabledTransactionVerification (turned on with the transaction ongoing)', () => {
    const off = kafkaConfig('kafka-3.5');
    const s = produced(off, initial(off), P, { pid: PID, epoch: 0, seq: 0 }).state;
    const r = produced(cfg, s, P, { pid: PID, epoch: 0, seq: 1 });
    expect(r.error).toBe(Err.NONE);
    expect(verificationsSent(r.state, P)).toEqual([]);
    expect(producerEntry(r.state, P, PID)!.txnFirstOffset).toBe(0);
  });

  it('testTransactionVerificationDynamicDisablement', () => {
    const off = kafkaConfig('kafka-3.6', {}, { verification: false });
    const s = produce(cfg, initial(cfg), P, { pid: PID, epoch: 0, seq: 6 });
    const entry = s.partitions[P]!.verifications[0];
    // Verification is switched off while the coordinator answers.
    const a = produceAnswer(verified(off, s, P, Err.INVALID_TXN_STATE), P);
    expect(a.response.error).toBe(Err.INVALID_TXN_STATE);
    expect(a.state.partitions[P]!.verifications).toEqual([entry]);
    // Now the batch is appended without asking the coordinator, and the entry goes.
    const r = produced(off, a.state, P, { pid: PID, epoch: 0, seq: 6 });
    expect(r.error).toBe(Err.NONE);
    expect(verificationsSent(r.state, P)).toEqual([]);
    expect(r.state.partitions[P]!.verifications).toEqual([]);
    expect(producerEntry(r.state, P, PID)!.txnFirstOffset).toBe(0);
  });

  it.each([
    Err.NOT_COORDINATOR,
    Err.CONCURRENT_TRANSACTIONS,
    Err.COORDINATOR_LOAD_IN_PROGRESS,
    Err.COORDINATOR_NOT_AVAILABLE,
  ])('testVerificationErrorConversions (error %s)', (error) => {
    const s = produce(cfg, initial(cfg), P, { pid: PID, epoch: 0, seq: 0 });
    const a = produceAnswer(verified(cfg, s, P, error), P);
    expect(a.response.error).toBe(Err.NOT_ENOUGH_REPLICAS);
    expect(a.state.partitions[P]!.log).toEqual([]);
  });
});

describe('ReplicaManagerTest (apache/kafka 3.9), kafka-3.8', () => {
  const cfg = kafkaConfig('kafka-3.8');

  it('testVerificationErrorConversions (NETWORK_EXCEPTION)', () => {
    const s = produce(cfg, initial(cfg), P, { pid: PID, epoch: 0, seq: 0 });
    const a = produceAnswer(verificationLost(cfg, s, P), P);
    expect(a.response.error).toBe(Err.NOT_ENOUGH_REPLICAS);
  });

  it('testTransactionVerificationFlow (COORDINATOR)', () => {
    // The COORDINATOR origin is the group coordinator's TxnOffsetCommit to __consumer_offsets.
    const c = kafkaConfig('kafka-3.8', { app: 'consume-transform-produce', inputRecords: 2 });
    const offsets = c.partitions;
    const commit = (s: State): State =>
      handle(
        c,
        s,
        0,
        leader(offsets),
        request(Api.TxnOffsetCommit, {
          txnId: 0,
          pid: PID,
          epoch: 0,
          partitions: offsets,
          value: 1,
          generation: s.group!.generation,
        }),
      );
    const first = commit(initial(c));
    const entry = first.partitions[offsets]!.verifications[0];
    let a = produceAnswer(verified(c, first, offsets, Err.INVALID_TXN_STATE), offsets);
    expect(a.response.error).toBe(Err.INVALID_TXN_STATE);
    expect(a.state.partitions[offsets]!.verifications).toEqual([entry]);
    a = produceAnswer(verified(c, commit(a.state), offsets), offsets);
    expect(a.response.error).toBe(Err.NONE);
    expect(a.state.partitions[offsets]!.verifications).toEqual([]);
    expect(producerEntry(a.state, offsets, PID)!.txnFirstOffset).toBe(0);
  });
});

describe('ReplicaManagerTest (apache/kafka 4.1+, read_file id 2394612251), kafka-4.0', () => {
  const cfg = kafkaConfig('kafka-4.0');

  it.each([Err.NOT_COORDINATOR, Err.COORDINATOR_NOT_AVAILABLE])(
    'testVerificationErrorConversionsTV2 (error %s)',
    (error) => {
      const s = produce(cfg, initial(cfg), P, { pid: PID, epoch: 0, seq: 0 });
      // Under transaction version 2 the leader adds the partition (verifyOnly false).
      expect(verificationsSent(s, P)[0]).toMatchObject({ api: Api.AddPartitionsToTxn, verifyOnly: false });
      expect(produceAnswer(verified(cfg, s, P, error), P).response.error).toBe(Err.NOT_ENOUGH_REPLICAS);
    },
  );

  it('testVerificationErrorConversionsTV2 (NETWORK_EXCEPTION)', () => {
    const s = produce(cfg, initial(cfg), P, { pid: PID, epoch: 0, seq: 0 });
    expect(produceAnswer(verificationLost(cfg, s, P), P).response.error).toBe(Err.NOT_ENOUGH_REPLICAS);
  });

  it('testTransactionAddPartitionRetry (NOT_COORDINATOR)', () => {
    const s = produce(cfg, initial(cfg), P, { pid: PID, epoch: 0, seq: 0 });
    const a = produceAnswer(verified(cfg, s, P, Err.NOT_COORDINATOR), P);
    expect(a.response.error).toBe(Err.NOT_ENOUGH_REPLICAS);
    expect(a.state.partitions[P]!.verifications).toHaveLength(1);
  });

  it('testTransactionVerificationFlow (transaction version 2)', () => {
    const s = produce(cfg, initial(cfg), P, { pid: PID, epoch: 0, seq: 6 });
    const entry = s.partitions[P]!.verifications[0];
    let a = produceAnswer(verified(cfg, s, P, Err.INVALID_TXN_STATE), P);
    expect(a.response.error).toBe(Err.INVALID_TXN_STATE);
    expect(a.state.partitions[P]!.verifications).toEqual([entry]);
    a = produceAnswer(verified(cfg, produce(cfg, a.state, P, { pid: PID, epoch: 0, seq: 6 }), P), P);
    expect(a.response.error).toBe(Err.NONE);
    expect(a.state.partitions[P]!.verifications).toEqual([]);
    expect(producerEntry(a.state, P, PID)).toMatchObject({ epoch: 0, txnFirstOffset: 0 });
  });
});

describe('ReplicaManagerTest (apache/kafka 4.1+, read_file id 2394612251): KAFKA-18042', () => {
  // Kafka's test starts at sequence 6 with a transaction-version-1 request; the model's kafka-latest
  // runs version 2, whose first batch must be sequence 0 (KAFKA-18202).
  const ongoingAtFive = (gen: string): State => {
    const c = kafkaConfig(gen);
    const a = produceAnswer(verified(c, produce(c, initial(c), P, { pid: PID, epoch: 5, seq: 0 }), P), P);
    expect(a.response.error).toBe(Err.NONE);
    expect(producerEntry(a.state, P, PID)).toMatchObject({ epoch: 5, txnFirstOffset: 0 });
    return a.state;
  };

  it('testTransactionVerificationRejectsLowerProducerEpoch (kafka-latest)', () => {
    const c = kafkaConfig('kafka-latest');
    const r = produced(c, ongoingAtFive('kafka-latest'), P, { pid: PID, epoch: 4, seq: 1 });
    expect(r.error).toBe(Err.INVALID_PRODUCER_EPOCH);
    expect(verificationsSent(r.state, P)).toEqual([]);
    expect(r.state.partitions[P]!.verifications).toEqual([]);
  });

  it('testTransactionVerificationRejectsLowerProducerEpoch (kafka-4.0, before the fix: the leader asks the coordinator)', () => {
    // Under transaction version 2 the open transaction counts only at its own epoch, so 4.0 starts
    // a verification for the lower epoch (UnifiedLog.maybeStartTransactionVerification @trunk 1eb7644).
    const c = kafkaConfig('kafka-4.0');
    const s = produce(c, ongoingAtFive('kafka-4.0'), P, { pid: PID, epoch: 4, seq: 1 });
    expect(verificationsSent(s, P)).toHaveLength(1);
    expect(s.partitions[P]!.verifications).toEqual([
      // A transaction-version-2 Produce makes the entry (supportsEpochBump, 4.0).
      { pid: PID, epoch: 4, guard: 1, lowestSeq: 1, supportsEpochBump: true },
    ]);
  });
});

describe('ReplicaManager.maybeSendPartitionsToTransactionCoordinator (apache/kafka 4.x source, read_file id 2480155386), kafka-4.0 with verification off', () => {
  // No Kafka unit test covers it: the leader skips the coordinator only when the request does not
  // support the epoch bump (transaction version 2) and verification is disabled.
  const cfg = kafkaConfig('kafka-4.0', {}, { verification: false });

  it('testDisabledTransactionVerification (transaction version 2 still adds the partition)', () => {
    const s = produce(cfg, initial(cfg), P, { pid: PID, epoch: 0, seq: 0 });
    expect(s.partitions[P]!.log).toEqual([]);
    const sent = verificationsSent(s, P);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ api: Api.AddPartitionsToTxn, pid: PID, epoch: 0, verifyOnly: false });
    const a = produceAnswer(verified(cfg, s, P), P);
    expect(a.response.error).toBe(Err.NONE);
    expect(producerEntry(a.state, P, PID)!.txnFirstOffset).toBe(0);
  });
});
