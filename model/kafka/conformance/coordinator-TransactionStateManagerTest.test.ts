// TransactionStateManagerTest (core/src/test/scala/unit/kafka/coordinator/transaction/): the
// appends of appendTransactionToLog. Under asynchronous appends a transition stays pending until
// its append completes (installed, answered) or fails (dropped, answered with the coordinator
// error the append error maps to).
import { describe, expect, it } from 'vitest';
import { Err, NO_STATE } from '../state.ts';
import { Api, P0, P1, TxnState, at, logged } from './coordinator-support.ts';
import {
  TC,
  answer,
  handle,
  initial,
  kafkaConfig,
  labels,
  messages,
  request,
  take,
  txn,
  withTxn,
} from './harness.ts';

const producerId = 10;
const producerEpoch = 1;

describe('TransactionStateManagerTest (apache/kafka 3.9 c821449f, kafka-3.8, asynchronous appends)', () => {
  const cfg = kafkaConfig('kafka-3.8', {
    coordinatorAppends: 'async',
    faults: { ...kafkaConfig('kafka-3.8').faults, appendFailures: 1 },
  });
  const empty = at(initial(cfg), { pid: producerId, epoch: producerEpoch, state: TxnState.Empty });
  const adding = handle(
    cfg,
    empty,
    0,
    TC,
    request(Api.AddPartitionsToTxn, { txnId: 0, pid: producerId, epoch: producerEpoch, partitions: P0 | P1 }),
  );

  it('the transition is pending while its append is in flight (prepareAddPartitions, appendTransactionToLog)', () => {
    expect(txn(adding, 0)).toMatchObject({
      state: TxnState.Empty,
      pendingState: TxnState.Ongoing,
      partitions: 0,
    });
    expect(logged(adding)).toMatchObject({ state: TxnState.Empty });
    expect(messages(adding, TC, 0)).toEqual([]);
  });

  it('testCompleteTransitionWhenAppendSucceeded', () => {
    const s = take(cfg, adding, 'TC: completeAppend(t0)');
    expect(answer(s, TC, 0).error).toBe(Err.NONE);
    expect(txn(s, 0)).toMatchObject({ state: TxnState.Ongoing, pendingState: NO_STATE, partitions: P0 | P1 });
    expect(logged(s)).toMatchObject({ state: TxnState.Ongoing, partitions: P0 | P1 });
    expect(s.coordinator.appends).toEqual([]);
  });

  it('testAppendFailToCoordinatorNotAvailableError (part: NOT_ENOUGH_REPLICAS)', () => {
    const s = take(cfg, adding, 'TC: failAppend(t0)');
    expect(answer(s, TC, 0).error).toBe(Err.COORDINATOR_NOT_AVAILABLE);
    expect(txn(s, 0)).toMatchObject({ state: TxnState.Empty, pendingState: NO_STATE, partitions: 0 });
    expect(logged(s)).toMatchObject({ state: TxnState.Empty });
    expect(s.faults.appendFailures).toBe(0);
  });
});

// removeExpiredTransactionalIds: t0 (Kafka's transactionalId1) has been idle past
// transactional.id.expiration.ms, t1 (transactionalId2) was just updated. The model's expiry is one
// step a fault budget allows; t1 could expire too, so the cases take t0's step and look at both.
describe.each([
  ['apache/kafka 0.11.0 e18335dd', 'kafka-0.11'],
  ['apache/kafka 3.9 c821449f', 'kafka-3.8'],
])('TransactionStateManagerTest (%s, %s): transactional.id expiration', (_branch, generation) => {
  const cfg = kafkaConfig(generation, {
    transactionalIds: 2,
    faults: { ...kafkaConfig(generation).faults, transactionalIdExpiries: 1 },
  });
  const expiry = 'TC: transactionalIdExpiry(t0)';
  const open = (state: TxnState) =>
    state === TxnState.Ongoing || state === TxnState.PrepareCommit || state === TxnState.PrepareAbort;
  const setup = (state: TxnState) =>
    withTxn(
      at(initial(cfg), { pid: producerId, epoch: producerEpoch, state, partitions: open(state) ? P0 : 0 }),
      1,
      { pid: producerId + 1, epoch: 0 },
    );

  // 0.11.0 spells the first shouldRemoveCompleteCommmitExpiredTransactionalIds.
  it.each([
    ['shouldRemoveCompleteCommitExpiredTransactionalIds', TxnState.CompleteCommit],
    ['shouldRemoveCompleteAbortExpiredTransactionalIds', TxnState.CompleteAbort],
    ['shouldRemoveEmptyExpiredTransactionalIds', TxnState.Empty],
  ])('%s', (_name, state) => {
    const s = take(cfg, setup(state), expiry);
    // verifyMetadataDoesntExist(transactionalId1), and its tombstone is the log's last word on it.
    expect(txn(s, 0)).toBeNull();
    expect(logged(s)).toBeNull();
    // verifyMetadataDoesExistAndIsUsable(transactionalId2).
    expect(txn(s, 1)).toMatchObject({ pid: producerId + 1, pendingState: NO_STATE });
  });

  it.each([
    ['shouldNotRemoveOngoingTransactionalIds', TxnState.Ongoing],
    ['shouldNotRemovePrepareAbortTransactionalIds', TxnState.PrepareAbort],
    ['shouldNotRemovePrepareCommitTransactionalIds', TxnState.PrepareCommit],
  ])('%s', (_name, state) => {
    const s = setup(state);
    expect(labels(cfg, s)).not.toContain(expiry);
    expect(labels(cfg, s)).toContain('TC: transactionalIdExpiry(t1)');
  });
});

describe('TransactionStateManagerTest (apache/kafka 3.9 c821449f, kafka-3.8, asynchronous appends): transactional.id expiration', () => {
  it('testTransactionExpirationShouldNotFailWithUninitializedTransactionMetadata', () => {
    // InitProducerId's append failed: the new metadata stays in memory, Empty at epoch -1, with no record.
    const cfg = kafkaConfig('kafka-3.8', {
      coordinatorAppends: 'async',
      faults: { ...kafkaConfig('kafka-3.8').faults, appendFailures: 1, transactionalIdExpiries: 1 },
    });
    let s = handle(cfg, initial(cfg), 0, TC, request(Api.InitProducerId, { txnId: 0 }));
    s = take(cfg, s, 'TC: failAppend(t0)');
    expect(txn(s, 0)).toMatchObject({ epoch: -1, state: TxnState.Empty, pendingState: NO_STATE });
    expect(logged(s)).toBeNull();
    expect(txn(take(cfg, s, 'TC: transactionalIdExpiry(t0)'), 0)).toBeNull();
  });
});
