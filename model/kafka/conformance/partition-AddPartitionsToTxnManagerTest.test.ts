// AddPartitionsToTxnManagerTest: how the leader's verification request fares and which error the
// producer finally sees. Kafka's test feeds canned coordinator responses to the manager; here the
// coordinator's own handler answers from the TransactionMetadata the case sets up, and the
// ReplicaManager's conversion that follows in Kafka is part of the model's answer to the client.
import { describe, expect, it } from 'vitest';
import { Err, TxnState } from '../state.ts';
import { initial, kafkaConfig, producerEntry, withTxn } from './harness.ts';
import { generations, withClient } from '../variants.ts';
import { coordinatorAnswers, produce, produceAnswer, verificationLost } from './partition-support.ts';

const P = 0;
const PID = 24;

describe('AddPartitionsToTxnManagerTest (apache/kafka 3.6, 3.9), kafka-3.8', () => {
  const cfg = kafkaConfig('kafka-3.8');

  it('testAddPartitionsToTxnHandlerErrorHandling (PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH)', () => {
    const s = withTxn(initial(cfg), 0, { pid: PID, epoch: 1, state: TxnState.Ongoing, partitions: 1 << P });
    const a = produceAnswer(
      coordinatorAnswers(cfg, produce(cfg, s, P, { pid: PID, epoch: 0, seq: 0 }), P),
      P,
    );
    expect(a.response.error).toBe(Err.INVALID_PRODUCER_EPOCH);
    expect(a.state.partitions[P]!.log).toEqual([]);
  });

  // 3.6: INVALID_TXN_STATE; 3.9 (KAFKA-16314): TRANSACTION_ABORTABLE, passed on to a client whose Produce version knows it.
  it.each([
    ['kafka-3.6', Err.INVALID_TXN_STATE],
    ['kafka-3.8', Err.TRANSACTION_ABORTABLE],
  ] as const)(
    'testAddPartitionsToTxnHandlerErrorHandling (a partition not in the transaction, %s)',
    (generation, error) => {
      const c = kafkaConfig(generation);
      const s = withTxn(initial(c), 0, { pid: PID, epoch: 0, state: TxnState.Ongoing, partitions: 1 << 1 });
      const a = produceAnswer(coordinatorAnswers(c, produce(c, s, P, { pid: PID, epoch: 0, seq: 0 }), P), P);
      expect(a.response.error).toBe(error);
    },
  );

  it('testAddPartitionsToTxnHandlerErrorHandling (a partition not in the transaction, a client whose Produce version predates TRANSACTION_ABORTABLE)', () => {
    // Brokers of 3.8 and a 3.6 client: the error is converted to INVALID_TXN_STATE (transactionSupportedOperation defaultError).
    const c = kafkaConfig(
      'kafka-3.8',
      {},
      withClient(generations['kafka-3.8']!.rules, generations['kafka-3.6']!.rules),
    );
    const s = withTxn(initial(c), 0, { pid: PID, epoch: 0, state: TxnState.Ongoing, partitions: 1 << 1 });
    const a = produceAnswer(coordinatorAnswers(c, produce(c, s, P, { pid: PID, epoch: 0, seq: 0 }), P), P);
    expect(a.response.error).toBe(Err.INVALID_TXN_STATE);
  });

  it('testAddPartitionsToTxnHandlerErrorHandling (a partition in the transaction has no error)', () => {
    const s = withTxn(initial(cfg), 0, { pid: PID, epoch: 0, state: TxnState.Ongoing, partitions: 1 << P });
    const a = produceAnswer(
      coordinatorAnswers(cfg, produce(cfg, s, P, { pid: PID, epoch: 0, seq: 0 }), P),
      P,
    );
    expect(a.response.error).toBe(Err.NONE);
    expect(producerEntry(a.state, P, PID)!.txnFirstOffset).toBe(0);
  });

  it('testAddPartitionsToTxnHandlerErrorHandling (disconnected: NETWORK_EXCEPTION, retriable for the producer)', () => {
    // NETWORK_EXCEPTION reaches the producer as NOT_ENOUGH_REPLICAS (ReplicaManager, 3.9 test).
    const s = produce(cfg, initial(cfg), P, { pid: PID, epoch: 0, seq: 0 });
    expect(produceAnswer(verificationLost(cfg, s, P), P).response.error).toBe(Err.NOT_ENOUGH_REPLICAS);
  });
});
