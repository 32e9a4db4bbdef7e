// TransactionManagerTest (the Java producer client): each case builds the client's state with the
// model's own client actions, answers its requests by hand as the Kafka test does with MockClient,
// and checks the TransactionManager state that the Kafka test asserts. Error codes the model's
// brokers never send (TOPIC_AUTHORIZATION_FAILED, UNKNOWN_TOPIC_OR_PARTITION, ...) are replaced,
// where said, by one of the model's codes that takes the same branch of the client's handler.
import { describe, expect, it } from 'vitest';
import { type KafkaConfig } from '../config.ts';
import { type State, Api, Err, NO_PID, Supports, Tm } from '../state.ts';
import { bit } from '../util.ts';
import { generations, withClient } from '../variants.ts';
import { initial, labels, take, withProducer } from './harness.ts';
import {
  EPOCH,
  P0,
  PID,
  TC,
  act,
  clientConfig,
  enabled,
  groupCoordinator,
  hasOngoingTransaction,
  leader,
  producer,
  ready,
  respond,
  respondOn,
  sentTo,
  transformConfig,
  withPartitionsAdded,
} from './client-support.ts';

/** The TransactionManagerTest methods of these cases that apache/kafka 0.11.0 has. */
const AT_0_11_0 = new Set([
  'resendFailedProduceRequestAfterAbortableError',
  'testAbortResendsAddPartitionErrorIfRetried',
  'testAbortResendsProduceRequestIfRetried',
  'testAbortableErrorWhileAbortInProgress',
  'testAddPartitionToTransactionOverridesRetryBackoffForConcurrentTransactions',
  'testAddPartitionToTransactionRetainsRetryBackoffForRegularRetriableError',
  'testAddPartitionToTransactionRetainsRetryBackoffWhenPartitionsAlreadyAdded',
  'testAllowAbortOnProduceFailure',
  'testBasicTransaction',
  'testCancelUnsentAddPartitionsAndProduceOnAbort',
  'testCommitTransactionWithInFlightProduceRequest',
  'testCommitTransactionWithUnsentProduceRequest',
  'testDisallowCommitOnProduceFailure',
  'testDropCommitOnBatchExpiry',
  'testEndTxnNotSentIfIncompleteBatches',
  'testFlushPendingPartitionsOnCommit',
  'testHasOngoingTransactionAbortableError',
  'testHasOngoingTransactionFatalError',
  'testHasOngoingTransactionSuccessfulAbort',
  'testHasOngoingTransactionSuccessfulCommit',
  'testIsSendToPartitionAllowedWithAddedPartitionAfterAbortableError',
  'testIsSendToPartitionAllowedWithAddedPartitionAfterFatalError',
  'testIsSendToPartitionAllowedWithInFlightPartitionAddAfterAbortableError',
  'testIsSendToPartitionAllowedWithInFlightPartitionAddAfterFatalError',
  'testIsSendToPartitionAllowedWithPartitionNotAdded',
  'testIsSendToPartitionAllowedWithPendingPartitionAfterAbortableError',
  'testIsSendToPartitionAllowedWithPendingPartitionAfterFatalError',
  'testLookupCoordinatorOnDisconnectAfterSend',
  'testLookupCoordinatorOnNotCoordinatorError',
  'testLookupCoordinatorOnNotCoordinatorError',
  'testMaybeAddPartitionToTransaction',
  'testMultipleAddPartitionsPerForOneProduce',
  'testNoDrainWhenPartitionsPending',
  'testProducerFencedException',
  'testRaiseErrorWhenNoPartitionsPendingOnDrain',
  'testTransitionToAbortableErrorOnBatchExpiry',
  'testTransitionToAbortableErrorOnMultipleBatchExpiry',
]);

/** The TransactionManagerTest methods of these cases that apache/kafka 2.5 has. */
const AT_2_5 = new Set([
  'resendFailedProduceRequestAfterAbortableError',
  'testAbortResendsAddPartitionErrorIfRetried',
  'testAbortResendsProduceRequestIfRetried',
  'testAbortableErrorWhileAbortInProgress',
  'testAddPartitionToTransactionOverridesRetryBackoffForConcurrentTransactions',
  'testAddPartitionToTransactionRetainsRetryBackoffForRegularRetriableError',
  'testAddPartitionToTransactionRetainsRetryBackoffWhenPartitionsAlreadyAdded',
  'testAllowAbortOnProduceFailure',
  'testBasicTransaction',
  'testBumpTransactionalEpochOnAbortableError',
  'testBumpTransactionalEpochOnRecoverableAddOffsetsRequestError',
  'testBumpTransactionalEpochOnRecoverableAddPartitionRequestError',
  'testBumpTransactionalEpochOnTimeout',
  'testCancelUnsentAddPartitionsAndProduceOnAbort',
  'testCommitTransactionWithInFlightProduceRequest',
  'testCommitTransactionWithUnsentProduceRequest',
  'testDisallowCommitOnProduceFailure',
  'testDropCommitOnBatchExpiry',
  'testEndTxnNotSentIfIncompleteBatches',
  'testFlushPendingPartitionsOnCommit',
  'testHandlingOfCoordinatorLoadingErrorOnTxnOffsetCommit',
  'testHasOngoingTransactionAbortableError',
  'testHasOngoingTransactionFatalError',
  'testHasOngoingTransactionSuccessfulAbort',
  'testHasOngoingTransactionSuccessfulCommit',
  'testIllegalGenerationInTxnOffsetCommitByGroupMetadata',
  'testInitializeTransactionsTwiceRaisesError',
  'testIsSendToPartitionAllowedWithAddedPartitionAfterAbortableError',
  'testIsSendToPartitionAllowedWithAddedPartitionAfterFatalError',
  'testIsSendToPartitionAllowedWithInFlightPartitionAddAfterAbortableError',
  'testIsSendToPartitionAllowedWithInFlightPartitionAddAfterFatalError',
  'testIsSendToPartitionAllowedWithPartitionNotAdded',
  'testIsSendToPartitionAllowedWithPendingPartitionAfterAbortableError',
  'testIsSendToPartitionAllowedWithPendingPartitionAfterFatalError',
  'testLookupCoordinatorOnDisconnectAfterSend',
  'testLookupCoordinatorOnNotCoordinatorError',
  'testMaybeAddPartitionToTransaction',
  'testMultipleAddPartitionsPerForOneProduce',
  'testNoDrainWhenPartitionsPending',
  'testProducerFencedException',
  'testRaiseErrorWhenNoPartitionsPendingOnDrain',
  'testRetryAbortTransaction',
  'testRetryAbortTransactionAfterCommitTimeout',
  'testRetryCommitTransaction',
  'testRetryCommitTransactionAfterAbortTimeout',
  'testTransitionToAbortableErrorOnBatchExpiry',
  'testTransitionToAbortableErrorOnMultipleBatchExpiry',
  'testTransitionToFatalErrorWhenRetriedBatchIsExpired',
]);

/** Produce for p0 sent and waiting for its answer. */
function inFlight(cfg: KafkaConfig, s: State, p = 0): State {
  return act(cfg, s, `sendProduce(p${p})`);
}

/** Cases whose expectations are the same in every release from 0.11.0 to 3.9. */
function stateTransitionCases(cfg: KafkaConfig, t: Register): void {
  t('testNotReadyForSendBeforeInitTransactions', () => {
    const s = initialOrInitializing(cfg);
    for (const state of s) expect(enabled(cfg, state, 'send(p0)')).toBe(false);
  });

  t('testNotReadyForSendBeforeBeginTransaction', () => {
    const s = ready(cfg);
    expect(producer(s).tm).toBe(Tm.READY);
    expect(enabled(cfg, s, 'send(p0)')).toBe(false);
    expect(enabled(cfg, s, 'beginTransaction')).toBe(true);
  });

  t('testNotReadyForSendAfterAbortableError', () => {
    const s = withTm(act(cfg, ready(cfg), 'beginTransaction'), Tm.ABORTABLE_ERROR);
    expect(enabled(cfg, s, 'send(p0)')).toBe(false);
    expect(enabled(cfg, s, 'commitTransaction')).toBe(false);
    expect(enabled(cfg, s, 'abortTransaction')).toBe(true);
  });

  t('testNotReadyForSendAfterFatalError', () => {
    const s = withTm(ready(cfg), Tm.FATAL_ERROR);
    expect(labels(cfg, s).filter((l) => l.startsWith('P0.0:'))).toEqual([]);
  });

  t('testHasOngoingTransactionSuccessfulCommit', () => {
    let s = ready(cfg);
    expect(hasOngoingTransaction(s)).toBe(false);
    s = act(cfg, s, 'beginTransaction');
    expect(hasOngoingTransaction(s)).toBe(true);
    s = act(cfg, act(cfg, s, 'send(p0)'), 'sendTxnRequest');
    s = respond(cfg, s, TC, Api.AddPartitionsToTxn);
    s = respond(cfg, inFlight(cfg, s), leader(0), Api.Produce);
    s = act(cfg, s, 'commitTransaction');
    expect(hasOngoingTransaction(s)).toBe(true);
    s = respond(cfg, act(cfg, s, 'sendTxnRequest'), TC, Api.EndTxn);
    expect(hasOngoingTransaction(s)).toBe(false);
    expect(producer(s).tm).toBe(Tm.READY);
  });

  t('testHasOngoingTransactionSuccessfulAbort', () => {
    let s = withPartitionsAdded(cfg, ready(cfg), [0]);
    expect(hasOngoingTransaction(s)).toBe(true);
    s = act(cfg, s, 'abortTransaction');
    expect(hasOngoingTransaction(s)).toBe(true);
    s = respond(cfg, act(cfg, s, 'sendTxnRequest'), TC, Api.EndTxn);
    expect(hasOngoingTransaction(s)).toBe(false);
  });

  t('testHasOngoingTransactionAbortableError', () => {
    let s = withTm(withPartitionsAdded(cfg, ready(cfg), [0]), Tm.ABORTABLE_ERROR);
    expect(hasOngoingTransaction(s)).toBe(true);
    s = act(cfg, s, 'abortTransaction');
    expect(hasOngoingTransaction(s)).toBe(true);
    s = respond(cfg, act(cfg, s, 'sendTxnRequest'), TC, Api.EndTxn);
    expect(hasOngoingTransaction(s)).toBe(false);
  });

  t('testHasOngoingTransactionFatalError', () => {
    const s = withTm(withPartitionsAdded(cfg, ready(cfg), [0]), Tm.FATAL_ERROR);
    expect(hasOngoingTransaction(s)).toBe(false);
  });

  t('testMaybeAddPartitionToTransaction', () => {
    let s = act(cfg, act(cfg, ready(cfg), 'beginTransaction'), 'send(p0)');
    expect(producer(s).pendingAdd).toBe(bit(0));
    expect(producer(s).added).toBe(0);
    s = respond(cfg, act(cfg, s, 'sendTxnRequest'), TC, Api.AddPartitionsToTxn);
    expect(producer(s).added).toBe(bit(0));
    expect(producer(s).pendingAdd).toBe(0);
    // Sending to the partition again adds nothing.
    s = act(cfg, s, 'send(p0)');
    expect(producer(s).pendingAdd).toBe(0);
    expect(producer(s).added).toBe(bit(0));
  });

  // isSendToPartitionAllowed: may a batch for p0 be drained?
  const pending = (): State => act(cfg, act(cfg, ready(cfg), 'beginTransaction'), 'send(p0)');
  const addInFlight = (): State => act(cfg, pending(), 'sendTxnRequest');
  const added = (): State => withPartitionsAdded(cfg, ready(cfg), [0]);
  const cases = [
    [
      'testIsSendToPartitionAllowedWithPendingPartitionAfterAbortableError',
      pending,
      Tm.ABORTABLE_ERROR,
      false,
    ],
    [
      'testIsSendToPartitionAllowedWithInFlightPartitionAddAfterAbortableError',
      addInFlight,
      Tm.ABORTABLE_ERROR,
      false,
    ],
    ['testIsSendToPartitionAllowedWithPendingPartitionAfterFatalError', pending, Tm.FATAL_ERROR, false],
    [
      'testIsSendToPartitionAllowedWithInFlightPartitionAddAfterFatalError',
      addInFlight,
      Tm.FATAL_ERROR,
      false,
    ],
    ['testIsSendToPartitionAllowedWithAddedPartitionAfterAbortableError', added, Tm.ABORTABLE_ERROR, true],
    ['testIsSendToPartitionAllowedWithAddedPartitionAfterFatalError', added, Tm.FATAL_ERROR, false],
    ['testIsSendToPartitionAllowedWithPartitionNotAdded', pending, Tm.IN_TRANSACTION, false],
  ] as const;
  for (const [name, build, tm, allowed] of cases) {
    t(name, () => {
      const s = withTm(build(), tm);
      expect(enabled(cfg, s, 'sendProduce(p0)')).toBe(allowed);
    });
  }

  t('testNoDrainWhenPartitionsPending', () => {
    const s = act(cfg, act(cfg, act(cfg, ready(cfg), 'beginTransaction'), 'send(p0)'), 'send(p1)');
    expect(enabled(cfg, s, 'sendProduce(p0)')).toBe(false);
    expect(enabled(cfg, s, 'sendProduce(p1)')).toBe(false);
    expect(producer(s).tm).toBe(Tm.IN_TRANSACTION);
  });

  t('testRaiseErrorWhenNoPartitionsPendingOnDrain', () => {
    let s = act(cfg, act(cfg, act(cfg, ready(cfg), 'beginTransaction'), 'send(p0)'), 'sendTxnRequest');
    // The AddPartitionsToTxn is in flight: still nothing to drain.
    expect(enabled(cfg, s, 'sendProduce(p0)')).toBe(false);
    s = respond(cfg, s, TC, Api.AddPartitionsToTxn);
    expect(enabled(cfg, s, 'sendProduce(p0)')).toBe(true);
  });

  t('testEndTxnNotSentIfIncompleteBatches', () => {
    let s = act(cfg, inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0])), 'commitTransaction');
    expect(enabled(cfg, s, 'sendTxnRequest')).toBe(false);
    s = respond(cfg, s, leader(0), Api.Produce);
    s = act(cfg, s, 'sendTxnRequest');
    expect(sentTo(s, TC)).toMatchObject([{ api: Api.EndTxn, commit: true }]);
  });

  t('testFlushPendingPartitionsOnCommit', () => {
    let s = act(cfg, act(cfg, act(cfg, ready(cfg), 'beginTransaction'), 'send(p0)'), 'commitTransaction');
    // 1. AddPartitionsToTxn, 2. Produce, 3. EndTxn.
    s = act(cfg, s, 'sendTxnRequest');
    expect(sentTo(s, TC)).toMatchObject([{ api: Api.AddPartitionsToTxn, partitions: bit(0) }]);
    expect(enabled(cfg, s, 'sendProduce(p0)')).toBe(false);
    s = respond(cfg, s, TC, Api.AddPartitionsToTxn);
    expect(enabled(cfg, s, 'sendTxnRequest')).toBe(false);
    s = respond(cfg, inFlight(cfg, s), leader(0), Api.Produce);
    expect(hasOngoingTransaction(s)).toBe(true);
    expect(producer(s).tm).toBe(Tm.COMMITTING_TRANSACTION);
    s = respond(cfg, act(cfg, s, 'sendTxnRequest'), TC, Api.EndTxn);
    expect(hasOngoingTransaction(s)).toBe(false);
  });

  t('testMultipleAddPartitionsPerForOneProduce', () => {
    let s = withPartitionsAdded(cfg, ready(cfg), [0]);
    s = act(cfg, act(cfg, s, 'send(p1)'), 'sendTxnRequest');
    // The second AddPartitionsToTxn carries only the new partition.
    expect(sentTo(s, TC)).toMatchObject([{ api: Api.AddPartitionsToTxn, partitions: bit(1) }]);
    s = respond(cfg, s, TC, Api.AddPartitionsToTxn);
    expect(producer(s).added).toBe(bit(0) | bit(1));
  });

  for (const name of [
    'testCommitTransactionWithUnsentProduceRequest',
    'testCommitTransactionWithInFlightProduceRequest',
  ])
    t(name, () => {
      let s = withPartitionsAdded(cfg, ready(cfg), [0]);
      if (name.endsWith('InFlightProduceRequest')) s = inFlight(cfg, s);
      s = act(cfg, s, 'commitTransaction');
      if (name.endsWith('UnsentProduceRequest')) s = inFlight(cfg, s);
      // Until the Produce is answered no EndTxn goes out.
      expect(enabled(cfg, s, 'sendTxnRequest')).toBe(false);
      s = respond(cfg, s, leader(0), Api.Produce);
      s = act(cfg, s, 'sendTxnRequest');
      expect(sentTo(s, TC)).toMatchObject([{ api: Api.EndTxn, commit: true }]);
      s = respond(cfg, s, TC, Api.EndTxn);
      expect(producer(s).tm).toBe(Tm.READY);
    });

  t('testCancelUnsentAddPartitionsAndProduceOnAbort', () => {
    let s = act(cfg, act(cfg, ready(cfg), 'beginTransaction'), 'send(p0)');
    s = act(cfg, s, 'abortTransaction');
    // Nothing was added: the abort completes without an EndTxn, and the batch is failed.
    s = act(cfg, s, 'sendTxnRequest');
    expect(sentTo(s, TC)).toEqual([]);
    expect(producer(s).tm).toBe(Tm.READY);
    expect(producer(s).batches).toEqual([]);
  });

  each(
    t,
    [
      ['testRetryAbortTransactionAfterCommitTimeout', 'commitTransaction', 'abortTransaction'],
      ['testRetryCommitTransactionAfterAbortTimeout', 'abortTransaction', 'commitTransaction'],
    ],
    '',
    (_name, first, second) => {
      const s = act(cfg, withPartitionsAdded(cfg, ready(cfg), [0]), first);
      expect(enabled(cfg, s, second)).toBe(false);
    },
  );

  t('testInitializeTransactionsTwiceRaisesError', () => {
    const s = ready(cfg);
    expect(producer(s)).toMatchObject({ pid: PID, epoch: EPOCH });
    expect(enabled(cfg, s, 'initTransactions')).toBe(false);
  });

  t('testForegroundInvalidStateTransitionIsRecoverable', () => {
    expect(enabled(cfg, initial(cfg), 'abortTransaction')).toBe(false);
    // The model's transactions send a record: it is acknowledged before the commit.
    let s = respond(cfg, inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [1]), 1), leader(1), Api.Produce);
    s = act(cfg, s, 'commitTransaction');
    s = respond(cfg, act(cfg, s, 'sendTxnRequest'), TC, Api.EndTxn);
    expect(hasOngoingTransaction(s)).toBe(false);
    expect(producer(s).tm).toBe(Tm.READY);
  });

  t('testLookupCoordinatorOnNotCoordinatorError', () => {
    let s = act(cfg, initial(cfg), 'initTransactions');
    s = respond(cfg, s, TC, Api.InitProducerId, { error: Err.NOT_COORDINATOR });
    expect(producer(s)).toMatchObject({ tm: Tm.INITIALIZING, pid: NO_PID });
    expect(sentTo(s, TC)).toMatchObject([{ api: Api.InitProducerId }]);
    s = respond(cfg, s, TC, Api.InitProducerId, { pid: PID, epoch: EPOCH });
    expect(producer(s)).toMatchObject({ tm: Tm.READY, pid: PID, epoch: EPOCH });
  });

  t('testLookupCoordinatorOnDisconnectAfterSend', () => {
    let s = act(cfg, initial(cfg), 'initTransactions');
    // The disconnect: the client gives the request up and sends it again on a new connection.
    s = take(cfg, s, 'P0.0: requestTimeout(InitProducerId)');
    expect(producer(s)).toMatchObject({ tm: Tm.INITIALIZING, pid: NO_PID });
    s = respondOn(cfg, s, TC, Api.InitProducerId, 0, { pid: PID, epoch: EPOCH });
    expect(producer(s).pid).toBe(NO_PID);
    s = respond(cfg, s, TC, Api.InitProducerId, { pid: PID, epoch: EPOCH });
    expect(producer(s)).toMatchObject({ tm: Tm.READY, pid: PID, epoch: EPOCH });
  });

  each(
    t,
    [
      ['testProducerFencedExceptionInInitProducerId', Err.PRODUCER_FENCED],
      ['testInvalidProducerEpochConvertToProducerFencedInInitProducerId', Err.INVALID_PRODUCER_EPOCH],
    ],
    '',
    (_name, error) => {
      const s = respond(cfg, act(cfg, initial(cfg), 'initTransactions'), TC, Api.InitProducerId, {
        error,
        pid: PID,
        epoch: EPOCH,
      });
      expect(producer(s).tm).toBe(Tm.FATAL_ERROR);
      expect(enabled(cfg, s, 'beginTransaction')).toBe(false);
    },
  );

  t(
    'testRetriableErrors (part: InitProducerId, AddPartitionsToTxn and EndTxn answered COORDINATOR_LOAD_IN_PROGRESS)',
    () => {
      const loading = { error: Err.COORDINATOR_LOAD_IN_PROGRESS };
      let s = respond(cfg, act(cfg, initial(cfg), 'initTransactions'), TC, Api.InitProducerId, loading);
      expect(producer(s)).toMatchObject({ tm: Tm.INITIALIZING, pid: NO_PID });
      expect(sentTo(s, TC)).toMatchObject([{ api: Api.InitProducerId }]);
      s = respond(cfg, s, TC, Api.InitProducerId, { pid: PID, epoch: EPOCH });
      s = act(cfg, act(cfg, act(cfg, s, 'beginTransaction'), 'send(p0)'), 'sendTxnRequest');
      s = respond(cfg, s, TC, Api.AddPartitionsToTxn, loading);
      expect(producer(s)).toMatchObject({ tm: Tm.IN_TRANSACTION, added: 0 });
      expect(sentTo(s, TC)).toMatchObject([{ api: Api.AddPartitionsToTxn, partitions: bit(0) }]);
      s = respond(cfg, s, TC, Api.AddPartitionsToTxn);
      expect(producer(s).added).toBe(bit(0));
      s = respond(cfg, inFlight(cfg, s), leader(0), Api.Produce);
      s = respond(cfg, act(cfg, act(cfg, s, 'commitTransaction'), 'sendTxnRequest'), TC, Api.EndTxn, loading);
      expect(producer(s).tm).toBe(Tm.COMMITTING_TRANSACTION);
      expect(sentTo(s, TC)).toMatchObject([{ api: Api.EndTxn, commit: true }]);
      expect(producer(respond(cfg, s, TC, Api.EndTxn)).tm).toBe(Tm.READY);
    },
  );

  t('testLookupCoordinatorOnNotCoordinatorError', () => {
    // NOT_COORDINATOR: the client looks the coordinator up again (folded into the re-send) and asks again.
    let s = respond(cfg, act(cfg, initial(cfg), 'initTransactions'), TC, Api.InitProducerId, {
      error: Err.NOT_COORDINATOR,
    });
    expect(producer(s)).toMatchObject({ tm: Tm.INITIALIZING, pid: NO_PID });
    expect(sentTo(s, TC)).toMatchObject([{ api: Api.InitProducerId }]);
    s = respond(cfg, s, TC, Api.InitProducerId, { pid: PID, epoch: EPOCH });
    expect(producer(s)).toMatchObject({ tm: Tm.READY, pid: PID, epoch: EPOCH });
  });

  t('testRetriableErrors (part: InitProducerId and EndTxn answered CONCURRENT_TRANSACTIONS)', () => {
    let s = act(cfg, initial(cfg), 'initTransactions');
    s = respond(cfg, s, TC, Api.InitProducerId, { error: Err.CONCURRENT_TRANSACTIONS });
    expect(producer(s).tm).toBe(Tm.INITIALIZING);
    s = respond(cfg, s, TC, Api.InitProducerId, { pid: PID, epoch: EPOCH });
    s = respond(cfg, inFlight(cfg, withPartitionsAdded(cfg, s, [0])), leader(0), Api.Produce);
    s = act(cfg, s, 'commitTransaction');
    s = respond(cfg, act(cfg, s, 'sendTxnRequest'), TC, Api.EndTxn, { error: Err.CONCURRENT_TRANSACTIONS });
    expect(producer(s).tm).toBe(Tm.COMMITTING_TRANSACTION);
    expect(sentTo(s, TC)).toMatchObject([{ api: Api.EndTxn, commit: true }]);
    s = respond(cfg, s, TC, Api.EndTxn);
    expect(producer(s).tm).toBe(Tm.READY);
  });

  each(
    t,
    [
      ['testProducerFencedInAddPartitionToTxn', Err.PRODUCER_FENCED],
      ['testInvalidProducerEpochConvertToProducerFencedInAddPartitionToTxn', Err.INVALID_PRODUCER_EPOCH],
      ['testInvalidTxnStateInAddPartitions', Err.INVALID_TXN_STATE],
    ],
    '',
    (_name, error) => {
      let s = act(cfg, act(cfg, act(cfg, ready(cfg), 'beginTransaction'), 'send(p0)'), 'sendTxnRequest');
      s = respond(cfg, s, TC, Api.AddPartitionsToTxn, { error });
      expect(producer(s).tm).toBe(Tm.FATAL_ERROR);
      expect(enabled(cfg, s, 'abortTransaction')).toBe(false);
      expect(enabled(cfg, s, 'commitTransaction')).toBe(false);
    },
  );

  each(
    t,
    [
      [
        'testAddPartitionToTransactionOverridesRetryBackoffForConcurrentTransactions',
        Err.CONCURRENT_TRANSACTIONS,
      ],
      [
        'testAddPartitionToTransactionRetainsRetryBackoffForRegularRetriableError',
        Err.COORDINATOR_NOT_AVAILABLE,
      ],
    ],
    ' (part: the request is retried; the backoff is not modelled)',
    (_name, error) => {
      let s = act(cfg, act(cfg, act(cfg, ready(cfg), 'beginTransaction'), 'send(p0)'), 'sendTxnRequest');
      s = respond(cfg, s, TC, Api.AddPartitionsToTxn, { error });
      expect(producer(s)).toMatchObject({ tm: Tm.IN_TRANSACTION, added: 0 });
      expect(sentTo(s, TC)).toMatchObject([{ api: Api.AddPartitionsToTxn, partitions: bit(0) }]);
    },
  );

  t(
    'testAddPartitionToTransactionRetainsRetryBackoffWhenPartitionsAlreadyAdded (part: the request is retried)',
    () => {
      let s = act(cfg, act(cfg, withPartitionsAdded(cfg, ready(cfg), [0]), 'send(p1)'), 'sendTxnRequest');
      s = respond(cfg, s, TC, Api.AddPartitionsToTxn, { error: Err.CONCURRENT_TRANSACTIONS });
      expect(producer(s)).toMatchObject({ tm: Tm.IN_TRANSACTION, added: bit(0) });
      expect(sentTo(s, TC)).toMatchObject([{ api: Api.AddPartitionsToTxn, partitions: bit(1) }]);
    },
  );

  t('testAbortResendsAddPartitionErrorIfRetried', () => {
    // CONCURRENT_TRANSACTIONS for UNKNOWN_TOPIC_OR_PARTITION: both re-enqueue the AddPartitionsToTxn.
    let s = act(cfg, act(cfg, act(cfg, ready(cfg), 'beginTransaction'), 'send(p0)'), 'sendTxnRequest');
    s = respond(cfg, s, TC, Api.AddPartitionsToTxn, { error: Err.CONCURRENT_TRANSACTIONS });
    s = act(cfg, s, 'abortTransaction');
    s = respond(cfg, s, TC, Api.AddPartitionsToTxn);
    s = act(cfg, s, 'sendTxnRequest');
    expect(sentTo(s, TC)).toMatchObject([{ api: Api.EndTxn, commit: false }]);
    s = respond(cfg, s, TC, Api.EndTxn);
    expect(producer(s).tm).toBe(Tm.READY);
    // The batch was never sent: it failed with the abort.
    expect(producer(s).batches).toEqual([]);
  });

  t('testInvalidProducerEpochConvertToProducerFencedInEndTxn', () => {
    let s = act(cfg, act(cfg, act(cfg, ready(cfg), 'beginTransaction'), 'send(p0)'), 'commitTransaction');
    s = respond(cfg, act(cfg, s, 'sendTxnRequest'), TC, Api.AddPartitionsToTxn);
    s = respond(cfg, inFlight(cfg, s), leader(0), Api.Produce);
    s = respond(cfg, act(cfg, s, 'sendTxnRequest'), TC, Api.EndTxn, { error: Err.INVALID_PRODUCER_EPOCH });
    expect(producer(s).tm).toBe(Tm.FATAL_ERROR);
    for (const a of ['beginTransaction', 'commitTransaction', 'abortTransaction'])
      expect(enabled(cfg, s, a)).toBe(false);
  });

  t('testDisallowCommitOnProduceFailure', () => {
    let s = act(cfg, act(cfg, act(cfg, ready(cfg), 'beginTransaction'), 'send(p0)'), 'commitTransaction');
    s = respond(cfg, act(cfg, s, 'sendTxnRequest'), TC, Api.AddPartitionsToTxn);
    s = respond(cfg, inFlight(cfg, s), leader(0), Api.Produce, { error: Err.OUT_OF_ORDER_SEQUENCE_NUMBER });
    // The commit is dropped without an EndTxn.
    expect(producer(s).tm).toBe(Tm.ABORTABLE_ERROR);
    expect(enabled(cfg, s, 'sendTxnRequest')).toBe(false);
    s = act(cfg, act(cfg, s, 'abortTransaction'), 'sendTxnRequest');
    expect(sentTo(s, TC)).toMatchObject([{ api: Api.EndTxn, commit: false }]);
    s = respond(cfg, s, TC, Api.EndTxn);
    // The failure came while committing: no epoch bump, ready at once.
    expect(producer(s).tm).toBe(Tm.READY);
  });

  t('testAbortableErrorWhileAbortInProgress', () => {
    let s = inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0]));
    s = act(cfg, s, 'abortTransaction');
    s = respond(cfg, s, leader(0), Api.Produce, { error: Err.OUT_OF_ORDER_SEQUENCE_NUMBER });
    // Already aborting: no ABORTABLE_ERROR.
    expect(producer(s).tm).toBe(Tm.ABORTING_TRANSACTION);
    s = respond(cfg, act(cfg, s, 'sendTxnRequest'), TC, Api.EndTxn);
    expect(producer(s).tm).toBe(Tm.READY);
  });

  t('resendFailedProduceRequestAfterAbortableError', () => {
    // NOT_ENOUGH_REPLICAS for NOT_LEADER_OR_FOLLOWER: both are retriable, the batch is re-enqueued.
    let s = inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0]));
    s = respond(cfg, s, leader(0), Api.Produce, { error: Err.NOT_ENOUGH_REPLICAS });
    s = withTm(s, Tm.ABORTABLE_ERROR);
    expect(sentTo(s, leader(0))).toMatchObject([{ api: Api.Produce, seq: 0 }]);
    s = respond(cfg, s, leader(0), Api.Produce);
    // The retried batch succeeded.
    expect(producer(s).batches).toEqual([]);
    expect(producer(s).tm).toBe(Tm.ABORTABLE_ERROR);
  });

  t('testAbortResendsProduceRequestIfRetried', () => {
    // REQUEST_TIMED_OUT: the model's Produce timeout re-sends the batch on a new connection.
    let s = inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0]));
    s = take(cfg, s, 'P0.0: produceTimeout(p0)');
    s = act(cfg, s, 'abortTransaction');
    // The EndTxn waits for the re-sent Produce.
    expect(enabled(cfg, s, 'sendTxnRequest')).toBe(false);
    s = respond(cfg, s, leader(0), Api.Produce);
    s = respond(cfg, act(cfg, s, 'sendTxnRequest'), TC, Api.EndTxn);
    expect(producer(s).tm).toBe(Tm.READY);
  });

  t('testTransitionToAbortableErrorOnBatchExpiry', () => {
    // The model expires batches in flight; one never retried takes the same path as an unsent one.
    const s = take(cfg, inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0])), 'P0.0: batchExpired(p0)');
    expect(producer(s).batches).toEqual([]);
    expect(producer(s).tm).toBe(Tm.ABORTABLE_ERROR);
  });

  t('testTransitionToAbortableErrorOnMultipleBatchExpiry', () => {
    let s = inFlight(cfg, inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0, 1]), 0), 1);
    s = take(cfg, take(cfg, s, 'P0.0: batchExpired(p0)'), 'P0.0: batchExpired(p1)');
    expect(producer(s).batches).toEqual([]);
    expect(producer(s).tm).toBe(Tm.ABORTABLE_ERROR);
  });

  t('testDropCommitOnBatchExpiry', () => {
    let s = act(cfg, inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0])), 'commitTransaction');
    s = take(cfg, s, 'P0.0: batchExpired(p0)');
    expect(producer(s).tm).toBe(Tm.ABORTABLE_ERROR);
    expect(hasOngoingTransaction(s)).toBe(true);
    expect(producer(s).added).toBe(bit(0));
    expect(enabled(cfg, s, 'sendTxnRequest')).toBe(false);
    s = respond(cfg, act(cfg, act(cfg, s, 'abortTransaction'), 'sendTxnRequest'), TC, Api.EndTxn);
    expect(hasOngoingTransaction(s)).toBe(false);
    expect(producer(s).added).toBe(0);
  });
}

/** Registers a case named after a Kafka test when the branch read has that test. */
type Register = (name: string, fn: () => void) => void;

/** `has` says which Kafka test names (without a " (part ...)" suffix) the describe's branch has. */
function register(has: (name: string) => boolean): Register {
  return (name, fn) => {
    if (has(name.replace(/ \(.*$/, ''))) it(name, fn);
  };
}

/** One case per row, named by the row's first element plus `suffix`. */
function each<R extends readonly [string, ...unknown[]]>(
  t: Register,
  rows: readonly R[],
  suffix: string,
  fn: (...row: R) => void,
): void {
  for (const row of rows) t(`${row[0]}${suffix}`, () => fn(...row));
}

/** Before initTransactions and while its InitProducerId is out. */
function initialOrInitializing(cfg: KafkaConfig): State[] {
  const zero = initial(cfg);
  return [zero, act(cfg, zero, 'initTransactions')];
}

/** The state TransactionManagerTest forces with transitionToAbortableError / transitionToFatalError. */
function withTm(s: State, tm: Tm): State {
  return withProducer(s, P0, { tm });
}

describe('TransactionManagerTest (apache/kafka 0.11.0, kafka-0.11)', () => {
  const cfg = clientConfig('kafka-0.11');
  stateTransitionCases(
    cfg,
    register((name) => AT_0_11_0.has(name)),
  );

  it('testProducerFencedException', () => {
    // 0.11.0: INVALID_PRODUCER_EPOCH is ProducerFencedException, which Sender.failBatch makes fatal.
    let s = inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0]));
    s = respond(cfg, s, leader(0), Api.Produce, { error: Err.INVALID_PRODUCER_EPOCH });
    expect(producer(s).tm).toBe(Tm.FATAL_ERROR);
  });

  it('testAllowAbortOnProduceFailure', () => {
    let s = inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0]));
    s = respond(cfg, s, leader(0), Api.Produce, { error: Err.OUT_OF_ORDER_SEQUENCE_NUMBER });
    expect(producer(s).tm).toBe(Tm.ABORTABLE_ERROR);
    s = respond(cfg, act(cfg, act(cfg, s, 'abortTransaction'), 'sendTxnRequest'), TC, Api.EndTxn);
    // No epoch bump before KIP-360: ready with the same epoch.
    expect(producer(s)).toMatchObject({ tm: Tm.READY, pid: PID, epoch: EPOCH });
  });
});

// Tests newer than 0.11.0 whose response handlers answer the same in 0.11.0's TransactionManager.
describe('TransactionManagerTest (apache/kafka 3.8, kafka-0.11)', () => {
  stateTransitionCases(
    clientConfig('kafka-0.11'),
    register((name) => !AT_0_11_0.has(name)),
  );
});

describe('TransactionManagerTest (apache/kafka 3.8, kafka-3.8)', () => {
  const cfg = clientConfig('kafka-3.8');
  const all = register(() => true);
  stateTransitionCases(cfg, all);
  kip360Cases(cfg, all);
  offsetCases(transformConfig('kafka-3.8'), all);

  it.each(['testRetryCommitTransaction', 'testRetryAbortTransaction'])('%s', (name) => {
    const commit = name === 'testRetryCommitTransaction';
    let s = respond(cfg, inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0])), leader(0), Api.Produce);
    s = act(cfg, act(cfg, s, commit ? 'commitTransaction' : 'abortTransaction'), 'sendTxnRequest');
    // The connection drops before the answer: the same EndTxn goes again on a new connection.
    s = take(cfg, s, 'P0.0: requestTimeout(EndTxn)');
    expect(sentTo(s, TC)).toMatchObject([
      { api: Api.EndTxn, commit },
      { api: Api.EndTxn, commit },
    ]);
    s = respondOn(cfg, s, TC, Api.EndTxn, 0);
    expect(hasOngoingTransaction(s)).toBe(true);
    s = respond(cfg, s, TC, Api.EndTxn);
    expect(hasOngoingTransaction(s)).toBe(false);
    expect(producer(s).tm).toBe(Tm.READY);
  });

  it('testHandlingOfNetworkExceptionOnTxnOffsetCommit (part: the retriable errors the model sends)', () => {
    // 3.8 (PR #15266) retries every RetriableException; the model's group coordinator answers
    // NOT_ENOUGH_REPLICAS when partition verification cannot reach the transaction coordinator.
    for (const error of [
      Err.NOT_ENOUGH_REPLICAS,
      Err.CONCURRENT_TRANSACTIONS,
      Err.NOT_COORDINATOR,
      Err.COORDINATOR_NOT_AVAILABLE,
    ]) {
      const t = transformConfig('kafka-3.8');
      let s = offsetCommitInFlight(t);
      s = respond(t, s, groupCoordinator(t), Api.TxnOffsetCommit, { error });
      expect(producer(s)).toMatchObject({ tm: Tm.IN_TRANSACTION, offsetsCommitted: false });
      expect(sentTo(s, groupCoordinator(t))).toMatchObject([{ api: Api.TxnOffsetCommit }]);
      s = respond(t, s, groupCoordinator(t), Api.TxnOffsetCommit);
      expect(producer(s).offsetsCommitted).toBe(true);
    }
  });
});

describe('TransactionManagerTest (apache/kafka 2.5, kafka-3.5)', () => {
  const cfg = clientConfig('kafka-3.5');
  const at25 = register((name) => AT_2_5.has(name));
  stateTransitionCases(cfg, at25);
  kip360Cases(cfg, at25);
  offsetCases(transformConfig('kafka-3.5'), at25);
});

// Tests newer than 2.5 (testInvalidProducerEpochFromProduce is 2.7+, KIP-588).
describe('TransactionManagerTest (apache/kafka 3.8, kafka-3.5)', () => {
  const cfg = clientConfig('kafka-3.5');
  const after25 = register((name) => !AT_2_5.has(name));
  stateTransitionCases(cfg, after25);
  kip360Cases(cfg, after25);
  offsetCases(transformConfig('kafka-3.5'), after25);
});

/** Cases of a KIP-360 client (2.5+: InitProducerId v3, the client bumps its epoch). */
function kip360Cases(cfg: KafkaConfig, t: Register): void {
  t('testBumpTransactionalEpochOnRecoverableAddPartitionRequestError', () => {
    let s = act(cfg, act(cfg, act(cfg, ready(cfg), 'beginTransaction'), 'send(p0)'), 'sendTxnRequest');
    s = respond(cfg, s, TC, Api.AddPartitionsToTxn, { error: Err.INVALID_PRODUCER_ID_MAPPING });
    expect(producer(s).tm).toBe(Tm.ABORTABLE_ERROR);
    s = act(cfg, s, 'abortTransaction');
    // Nothing was added: no EndTxn, straight to InitProducerId(pid, epoch).
    s = act(cfg, s, 'sendTxnRequest');
    expect(producer(s).tm).toBe(Tm.INITIALIZING);
    s = act(cfg, s, 'sendTxnRequest');
    expect(sentTo(s, TC)).toMatchObject([{ api: Api.InitProducerId, pid: PID, epoch: EPOCH }]);
    s = respond(cfg, s, TC, Api.InitProducerId, { pid: PID, epoch: EPOCH + 1 });
    expect(producer(s)).toMatchObject({ tm: Tm.READY, epoch: EPOCH + 1 });
  });

  t('testInvalidProducerEpochFromProduce', () => {
    let s = inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0]));
    s = respond(cfg, s, leader(0), Api.Produce, { error: Err.INVALID_PRODUCER_EPOCH });
    expect(producer(s).tm).toBe(Tm.ABORTABLE_ERROR);
    // First the EndTxn for the abort, then the InitProducerId that bumps the epoch.
    s = act(cfg, act(cfg, s, 'abortTransaction'), 'sendTxnRequest');
    expect(sentTo(s, TC)).toMatchObject([{ api: Api.EndTxn, commit: false }]);
    s = act(cfg, respond(cfg, s, TC, Api.EndTxn), 'sendTxnRequest');
    expect(sentTo(s, TC)).toMatchObject([{ api: Api.InitProducerId, pid: PID, epoch: EPOCH }]);
  });

  t('testAllowAbortOnProduceFailure', () => {
    let s = inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0]));
    s = respond(cfg, s, leader(0), Api.Produce, { error: Err.OUT_OF_ORDER_SEQUENCE_NUMBER });
    expect(producer(s).tm).toBe(Tm.ABORTABLE_ERROR);
    s = respond(cfg, act(cfg, act(cfg, s, 'abortTransaction'), 'sendTxnRequest'), TC, Api.EndTxn);
    s = respond(cfg, act(cfg, s, 'sendTxnRequest'), TC, Api.InitProducerId, { pid: PID, epoch: EPOCH + 1 });
    expect(producer(s)).toMatchObject({ tm: Tm.READY, epoch: EPOCH + 1 });
  });

  t('testBumpTransactionalEpochOnAbortableError', () => {
    // OUT_OF_ORDER_SEQUENCE_NUMBER for TOPIC_AUTHORIZATION_FAILED: the same non-fatal branch of
    // maybeTransitionToErrorState.
    let s = withPartitionsAdded(cfg, ready(cfg), [0]);
    s = respond(cfg, inFlight(cfg, act(cfg, s, 'send(p0)')), leader(0), Api.Produce);
    s = respond(cfg, inFlight(cfg, s), leader(0), Api.Produce);
    expect(producer(s).nextSeq[0]).toBe(2);
    s = respond(cfg, inFlight(cfg, act(cfg, s, 'send(p0)')), leader(0), Api.Produce, {
      error: Err.OUT_OF_ORDER_SEQUENCE_NUMBER,
    });
    expect(producer(s).tm).toBe(Tm.ABORTABLE_ERROR);
    s = respond(cfg, act(cfg, act(cfg, s, 'abortTransaction'), 'sendTxnRequest'), TC, Api.EndTxn, {
      epoch: EPOCH,
    });
    s = respond(cfg, act(cfg, s, 'sendTxnRequest'), TC, Api.InitProducerId, { pid: PID, epoch: EPOCH + 1 });
    expect(producer(s)).toMatchObject({ tm: Tm.READY, epoch: EPOCH + 1 });
    s = withPartitionsAdded(cfg, s, [0]);
    expect(producer(s).nextSeq[0]).toBe(0);
  });

  t('testBumpTransactionalEpochOnTimeout', () => {
    let s = withPartitionsAdded(cfg, ready(cfg), [0]);
    s = respond(cfg, inFlight(cfg, act(cfg, s, 'send(p0)')), leader(0), Api.Produce);
    s = respond(cfg, inFlight(cfg, s), leader(0), Api.Produce);
    s = inFlight(cfg, act(cfg, s, 'send(p0)'));
    s = take(cfg, s, 'P0.0: batchExpired(p0)');
    expect(producer(s).tm).toBe(Tm.ABORTABLE_ERROR);
    s = respond(cfg, act(cfg, act(cfg, s, 'abortTransaction'), 'sendTxnRequest'), TC, Api.EndTxn);
    s = respond(cfg, act(cfg, s, 'sendTxnRequest'), TC, Api.InitProducerId, { pid: PID, epoch: EPOCH + 1 });
    expect(producer(s)).toMatchObject({ tm: Tm.READY, epoch: EPOCH + 1 });
    expect(producer(withPartitionsAdded(cfg, s, [0])).nextSeq[0]).toBe(0);
  });

  t('testDisallowCommitOnProduceFailure (part: the abort needs no epoch bump)', () => {
    let s = act(cfg, inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0])), 'commitTransaction');
    s = respond(cfg, s, leader(0), Api.Produce, { error: Err.OUT_OF_ORDER_SEQUENCE_NUMBER });
    s = respond(cfg, act(cfg, act(cfg, s, 'abortTransaction'), 'sendTxnRequest'), TC, Api.EndTxn);
    // isCompleting() when the batch failed: epochBumpRequired stays false.
    expect(producer(s)).toMatchObject({ tm: Tm.READY, epoch: EPOCH });
  });
}

/** The transform app through AddOffsetsToTxn, with its TxnOffsetCommit sent. */
function offsetCommitInFlight(cfg: KafkaConfig): State {
  let s = act(cfg, act(cfg, ready(cfg), 'beginTransaction'), 'send(p0)');
  s = respond(cfg, act(cfg, s, 'sendTxnRequest'), TC, Api.AddPartitionsToTxn);
  s = respond(cfg, inFlight(cfg, s), leader(0), Api.Produce);
  s = act(cfg, act(cfg, s, 'sendOffsetsToTransaction'), 'sendTxnRequest');
  s = respond(cfg, s, TC, Api.AddOffsetsToTxn);
  return act(cfg, s, 'sendTxnRequest');
}

/** sendOffsetsToTransaction with its AddOffsetsToTxn sent. */
function addOffsetsInFlight(cfg: KafkaConfig): State {
  let s = act(cfg, act(cfg, ready(cfg), 'beginTransaction'), 'send(p0)');
  s = respond(cfg, act(cfg, s, 'sendTxnRequest'), TC, Api.AddPartitionsToTxn);
  s = respond(cfg, inFlight(cfg, s), leader(0), Api.Produce);
  return act(cfg, act(cfg, s, 'sendOffsetsToTransaction'), 'sendTxnRequest');
}

/** AddOffsetsToTxn and TxnOffsetCommit cases of a 2.5+ client (KIP-447 and KIP-360). */
function offsetCases(cfg: KafkaConfig, t: Register): void {
  t('testBasicTransaction', () => {
    let s = offsetCommitInFlight(cfg);
    expect(sentTo(s, groupCoordinator(cfg))).toMatchObject([
      { api: Api.TxnOffsetCommit, pid: PID, epoch: EPOCH },
    ]);
    s = respond(cfg, s, groupCoordinator(cfg), Api.TxnOffsetCommit);
    expect(producer(s)).toMatchObject({ offsetsAdded: true, offsetsCommitted: true });
    s = respond(cfg, act(cfg, act(cfg, s, 'commitTransaction'), 'sendTxnRequest'), TC, Api.EndTxn);
    expect(hasOngoingTransaction(s)).toBe(false);
    expect(producer(s)).toMatchObject({ tm: Tm.READY, added: 0 });
  });

  each(
    t,
    [
      ['testProducerFencedInAddOffSetsToTxn', Err.INVALID_PRODUCER_EPOCH],
      ['testInvalidProducerEpochConvertToProducerFencedInAddOffSetsToTxn', Err.INVALID_PRODUCER_EPOCH],
      ['testInvalidTxnStateFailureInAddOffsetsToTxn', Err.INVALID_TXN_STATE],
    ],
    '',
    (_name, error) => {
      const s = respond(cfg, addOffsetsInFlight(cfg), TC, Api.AddOffsetsToTxn, { error });
      expect(producer(s).tm).toBe(Tm.FATAL_ERROR);
      expect(enabled(cfg, s, 'abortTransaction')).toBe(false);
    },
  );

  t('testBumpTransactionalEpochOnRecoverableAddOffsetsRequestError', () => {
    let s = respond(cfg, addOffsetsInFlight(cfg), TC, Api.AddOffsetsToTxn, {
      error: Err.INVALID_PRODUCER_ID_MAPPING,
    });
    expect(producer(s).tm).toBe(Tm.ABORTABLE_ERROR);
    s = act(cfg, s, 'abortTransaction');
    // The EndTxn goes first, as Kafka's test answers it: beginAbort clears lastError before
    // beginCompletingTransaction looks for INVALID_PRODUCER_ID_MAPPING (KAFKA-10504).
    s = act(cfg, s, 'sendTxnRequest');
    expect(sentTo(s, TC)).toMatchObject([{ api: Api.EndTxn, commit: false }]);
    s = act(cfg, respond(cfg, s, TC, Api.EndTxn), 'sendTxnRequest');
    s = respond(cfg, s, TC, Api.InitProducerId, { pid: PID, epoch: EPOCH + 1 });
    expect(producer(s)).toMatchObject({ tm: Tm.READY, epoch: EPOCH + 1 });
  });

  each(
    t,
    [
      ['testHandlingOfProducerFencedErrorOnTxnOffsetCommit', Err.PRODUCER_FENCED],
      ['testHandlingOfInvalidProducerEpochErrorOnTxnOffsetCommit', Err.INVALID_PRODUCER_EPOCH],
    ],
    '',
    (_name, error) => {
      const s = respond(cfg, offsetCommitInFlight(cfg), groupCoordinator(cfg), Api.TxnOffsetCommit, {
        error,
      });
      expect(producer(s)).toMatchObject({ tm: Tm.FATAL_ERROR, offsetsCommitted: false });
    },
  );

  t(
    'testHandlingOfCoordinatorLoadingErrorOnTxnOffsetCommit (part: NOT_COORDINATOR and COORDINATOR_NOT_AVAILABLE)',
    () => {
      // The model's coordinator errors take the handler's lookup-and-retry branch, as loading does the retry one.
      for (const error of [Err.NOT_COORDINATOR, Err.COORDINATOR_NOT_AVAILABLE]) {
        let s = respond(cfg, offsetCommitInFlight(cfg), groupCoordinator(cfg), Api.TxnOffsetCommit, {
          error,
        });
        expect(producer(s)).toMatchObject({ tm: Tm.IN_TRANSACTION, offsetsCommitted: false });
        s = respond(cfg, s, groupCoordinator(cfg), Api.TxnOffsetCommit);
        expect(producer(s).offsetsCommitted).toBe(true);
      }
    },
  );

  t('testIllegalGenerationInTxnOffsetCommitByGroupMetadata', () => {
    let s = respond(cfg, offsetCommitInFlight(cfg), groupCoordinator(cfg), Api.TxnOffsetCommit, {
      error: Err.ILLEGAL_GENERATION,
    });
    // assertAbortableError: commit refused, abort accepted.
    expect(producer(s).tm).toBe(Tm.ABORTABLE_ERROR);
    expect(enabled(cfg, s, 'commitTransaction')).toBe(false);
    s = act(cfg, s, 'abortTransaction');
    expect(producer(s).tm).toBe(Tm.ABORTING_TRANSACTION);
    // TxnOffsetCommitHandler calls abortableError, which does not require an epoch bump.
    s = respond(cfg, act(cfg, s, 'sendTxnRequest'), TC, Api.EndTxn);
    expect(producer(s)).toMatchObject({ tm: Tm.READY, epoch: EPOCH });
  });
}

// The 2.5 test's brokers only have InitProducerId v1: a KIP-360 client that cannot bump its epoch.
describe('TransactionManagerTest (apache/kafka 2.5, testTransitionToFatalErrorWhenRetriedBatchIsExpired: InitProducerId v1), brokers kafka-0.11 with client kafka-3.5', () => {
  const cfg = clientConfig(
    'kafka-0.11',
    {},
    withClient(generations['kafka-0.11']!.rules, generations['kafka-3.5']!.rules),
  );

  it('testTransitionToFatalErrorWhenRetriedBatchIsExpired', () => {
    // NOT_ENOUGH_REPLICAS for NOT_LEADER_OR_FOLLOWER: the batch is re-enqueued, so it is in retry.
    let s = inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0]));
    s = respond(cfg, s, leader(0), Api.Produce, { error: Err.NOT_ENOUGH_REPLICAS });
    s = act(cfg, s, 'commitTransaction');
    s = take(cfg, s, 'P0.0: batchExpired(p0)');
    expect(producer(s).tm).toBe(Tm.FATAL_ERROR);
    expect(hasOngoingTransaction(s)).toBe(false);
  });
});

// Rules read in TransactionManager.java / Sender.java where no TransactionManagerTest case pins
// them down; named after the source method and the branch read.
describe('TransactionManager.java source rules (apache/kafka 0.11.0, 2.5, 3.8; 4.0 from PR threads)', () => {
  it('maybeResolveSequences (3.8, kafka-3.6): a retried batch that expires while committing still requires an epoch bump', () => {
    const cfg = clientConfig('kafka-3.6');
    let s = inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0]));
    s = respond(cfg, s, leader(0), Api.Produce, { error: Err.NOT_ENOUGH_REPLICAS });
    s = take(cfg, act(cfg, s, 'commitTransaction'), 'P0.0: batchExpired(p0)');
    expect(producer(s)).toMatchObject({ tm: Tm.ABORTABLE_ERROR, bumpRequired: true });
    s = respond(cfg, act(cfg, act(cfg, s, 'abortTransaction'), 'sendTxnRequest'), TC, Api.EndTxn);
    expect(producer(s).tm).toBe(Tm.INITIALIZING);
  });

  it('Sender.sendProducerData (2.5, kafka-0.11): a batch re-sent after a request timeout is in retry too', () => {
    const cfg = clientConfig('kafka-0.11');
    let s = inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0]));
    s = take(cfg, take(cfg, s, 'P0.0: produceTimeout(p0)'), 'P0.0: batchExpired(p0)');
    expect(producer(s).tm).toBe(Tm.FATAL_ERROR);
  });

  it('Sender.sendProducerData (2.5, kafka-0.11): a batch never retried expires as an abortable error', () => {
    const cfg = clientConfig('kafka-0.11');
    const s = take(cfg, inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0])), 'P0.0: batchExpired(p0)');
    expect(producer(s)).toMatchObject({ tm: Tm.ABORTABLE_ERROR, bumpRequired: false });
  });

  it('maybeResolveSequences with canHandleAbortableError (KAFKA-17898, PR #17849, 4.0, kafka-4.0): abortable, the client does not bump', () => {
    const cfg = clientConfig('kafka-4.0');
    // Transaction version 2: no AddPartitionsToTxn, the batch goes straight out.
    let s = inFlight(cfg, act(cfg, act(cfg, ready(cfg), 'beginTransaction'), 'send(p0)'));
    s = respond(cfg, s, leader(0), Api.Produce, { error: Err.NOT_ENOUGH_REPLICAS });
    s = take(cfg, s, 'P0.0: batchExpired(p0)');
    expect(producer(s)).toMatchObject({ tm: Tm.ABORTABLE_ERROR, bumpRequired: false });
  });

  it('AddPartitionsToTxnHandler (0.11.0, kafka-0.11): INVALID_PRODUCER_ID_MAPPING is fatal', () => {
    const cfg = clientConfig('kafka-0.11');
    let s = act(cfg, act(cfg, act(cfg, ready(cfg), 'beginTransaction'), 'send(p0)'), 'sendTxnRequest');
    s = respond(cfg, s, TC, Api.AddPartitionsToTxn, { error: Err.INVALID_PRODUCER_ID_MAPPING });
    expect(producer(s).tm).toBe(Tm.FATAL_ERROR);
  });

  it('EndTxnHandler.abortableErrorIfPossible (2.5, kafka-3.5): INVALID_PRODUCER_ID_MAPPING while committing requires a bump', () => {
    const cfg = clientConfig('kafka-3.5');
    let s = respond(cfg, inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0])), leader(0), Api.Produce);
    s = act(cfg, act(cfg, s, 'commitTransaction'), 'sendTxnRequest');
    s = respond(cfg, s, TC, Api.EndTxn, { error: Err.INVALID_PRODUCER_ID_MAPPING });
    expect(producer(s)).toMatchObject({ tm: Tm.ABORTABLE_ERROR, bumpRequired: true });
  });

  it('EndTxnHandler (3.9, kafka-3.5): INVALID_PRODUCER_ID_MAPPING on the EndTxn of an abort with a bump due: the InitProducerId queued behind it goes next', () => {
    const cfg = clientConfig('kafka-3.5');
    let s = respond(cfg, inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0])), leader(0), Api.Produce, {
      error: Err.INVALID_PRODUCER_EPOCH,
    });
    s = act(cfg, act(cfg, s, 'abortTransaction'), 'sendTxnRequest');
    s = respond(cfg, s, TC, Api.EndTxn, { error: Err.INVALID_PRODUCER_ID_MAPPING });
    expect(producer(s).tm).toBe(Tm.INITIALIZING);
    s = respond(cfg, act(cfg, s, 'sendTxnRequest'), TC, Api.InitProducerId, { pid: PID + 1, epoch: 0 });
    expect(producer(s)).toMatchObject({ tm: Tm.READY, pid: PID + 1, epoch: 0 });
  });

  it('EndTxnHandler (3.9, kafka-3.5): INVALID_PRODUCER_ID_MAPPING on the EndTxn of an abort with no bump due: abortTransaction fails and cannot be retried', () => {
    const cfg = clientConfig('kafka-3.5');
    let s = respond(cfg, inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0])), leader(0), Api.Produce);
    s = act(cfg, act(cfg, s, 'abortTransaction'), 'sendTxnRequest');
    s = respond(cfg, s, TC, Api.EndTxn, { error: Err.INVALID_PRODUCER_ID_MAPPING });
    expect(producer(s).tm).toBe(Tm.FATAL_ERROR);
  });

  it('EndTxnHandler (KAFKA-18019, PR #17822, 4.0, kafka-4.0): INVALID_PRODUCER_ID_MAPPING is fatal', () => {
    const cfg = clientConfig('kafka-4.0');
    let s = respond(
      cfg,
      inFlight(cfg, act(cfg, act(cfg, ready(cfg), 'beginTransaction'), 'send(p0)')),
      leader(0),
      Api.Produce,
    );
    s = act(cfg, act(cfg, s, 'commitTransaction'), 'sendTxnRequest');
    s = respond(cfg, s, TC, Api.EndTxn, { error: Err.INVALID_PRODUCER_ID_MAPPING });
    expect(producer(s).tm).toBe(Tm.FATAL_ERROR);
  });

  it('TxnOffsetCommitHandler (3.8, kafka-3.6): INVALID_TXN_STATE is an unexpected error, fatal', () => {
    // What a pre-3.8 client gets when verification finds the offsets partition outside the transaction.
    const cfg = transformConfig('kafka-3.6');
    const s = respond(cfg, offsetCommitInFlight(cfg), groupCoordinator(cfg), Api.TxnOffsetCommit, {
      error: Err.INVALID_TXN_STATE,
    });
    expect(producer(s).tm).toBe(Tm.FATAL_ERROR);
  });

  it('Errors.INVALID_PRODUCER_EPOCH (2.7, KIP-588, kafka-3.5): a Produce answered INVALID_PRODUCER_EPOCH while committing is abortable without a bump', () => {
    const cfg = clientConfig('kafka-3.5');
    let s = act(cfg, inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0])), 'commitTransaction');
    s = respond(cfg, s, leader(0), Api.Produce, { error: Err.INVALID_PRODUCER_EPOCH });
    expect(producer(s)).toMatchObject({ tm: Tm.ABORTABLE_ERROR, bumpRequired: false });
  });
});

// 2.5 and 2.6 are kafka-3.5 before KIP-588: INVALID_PRODUCER_EPOCH still meant ProducerFencedException.
describe('TransactionManagerTest (apache/kafka 2.5, kafka-3.5 with kip588 off)', () => {
  const cfg = clientConfig('kafka-3.5', {}, { kip588: false });

  it('testProducerFencedException', () => {
    let s = inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0]));
    s = respond(cfg, s, leader(0), Api.Produce, { error: Err.INVALID_PRODUCER_EPOCH });
    expect(producer(s).tm).toBe(Tm.FATAL_ERROR);
    // beginTransaction, beginCommit, beginAbort and sendOffsetsToTransaction all throw.
    for (const a of ['beginTransaction', 'commitTransaction', 'abortTransaction', 'sendOffsetsToTransaction'])
      expect(enabled(cfg, s, a)).toBe(false);
  });
});

describe('TransactionManagerTest and SenderTest (apache/kafka 3.8 8333ccc1), kafka-3.8: TRANSACTION_ABORTABLE', () => {
  it('testTransactionAbortableExceptionInTxnOffsetCommit', () => {
    const cfg = transformConfig('kafka-3.8');
    let s = respond(cfg, offsetCommitInFlight(cfg), groupCoordinator(cfg), Api.TxnOffsetCommit, {
      error: Err.TRANSACTION_ABORTABLE,
    });
    // assertAbortableError: commit refused, abort accepted; TxnOffsetCommitHandler calls abortableError (no bump).
    expect(producer(s)).toMatchObject({
      tm: Tm.ABORTABLE_ERROR,
      offsetsCommitted: false,
      bumpRequired: false,
    });
    expect(enabled(cfg, s, 'commitTransaction')).toBe(false);
    s = respond(cfg, act(cfg, act(cfg, s, 'abortTransaction'), 'sendTxnRequest'), TC, Api.EndTxn);
    expect(producer(s)).toMatchObject({ tm: Tm.READY, epoch: EPOCH });
  });

  it('testTransactionAbortableExceptionIsAnAbortableError (SenderTest)', () => {
    const cfg = clientConfig('kafka-3.8');
    let s = respond(cfg, inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0])), leader(0), Api.Produce, {
      error: Err.TRANSACTION_ABORTABLE,
    });
    expect(producer(s).tm).toBe(Tm.ABORTABLE_ERROR);
    // The abort sends EndTxn, then bumps the epoch with InitProducerId (KIP-360), then the client is ready.
    s = respond(cfg, act(cfg, act(cfg, s, 'abortTransaction'), 'sendTxnRequest'), TC, Api.EndTxn);
    expect(producer(s).tm).toBe(Tm.INITIALIZING);
    s = respond(cfg, act(cfg, s, 'sendTxnRequest'), TC, Api.InitProducerId, { pid: PID, epoch: EPOCH + 1 });
    expect(producer(s)).toMatchObject({ tm: Tm.READY, epoch: EPOCH + 1 });
    expect(enabled(cfg, s, 'beginTransaction')).toBe(true);
  });
});

// Sender.handleProduceResponse (apache/kafka 3.5): each partition's response completes that
// partition's batch; the model matches an answer to its batch by partition and sequence.
describe('Sender.handleProduceResponse (apache/kafka 3.5 source), kafka-3.5: an answer completes its own batch', () => {
  const cfg = clientConfig('kafka-3.5');

  it("the answer for p1 acknowledges p1's batch and leaves p0's in flight", () => {
    let s = inFlight(cfg, inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0, 1]), 0), 1);
    s = respond(cfg, s, leader(1), Api.Produce);
    expect(producer(s).batches.map((b) => b.partition)).toEqual([0]);
    s = respond(cfg, s, leader(0), Api.Produce);
    expect(producer(s).batches).toEqual([]);
  });

  it("an error for p1 fails only p1's batch", () => {
    let s = inFlight(cfg, inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0, 1]), 0), 1);
    s = respond(cfg, s, leader(1), Api.Produce, { error: Err.OUT_OF_ORDER_SEQUENCE_NUMBER });
    expect(producer(s).tm).toBe(Tm.ABORTABLE_ERROR);
    expect(producer(s).batches.map((b) => b.partition)).toEqual([0]);
  });

  // The model has no correlation ids: it tells a late answer from before an epoch bump from the
  // answer to a new batch of the same partition and sequence by its epoch.
  it("model rule: an answer at another epoch than the producer's is ignored", () => {
    const s = inFlight(cfg, withPartitionsAdded(cfg, ready(cfg), [0]), 0);
    const late = respond(cfg, s, leader(0), Api.Produce, { epoch: EPOCH - 1 });
    expect(producer(late).batches).toEqual(producer(s).batches);
  });
});

// KAFKA-18227 (PR #18176, 4.0.0): the client reads the finalized transaction.version when it begins
// completing a transaction and after initTransactions, and bumps its epoch on an upgrade.
describe('TransactionManagerTest (apache/kafka 4.0.0 4ae68144), kafka-4.0 on a cluster at transaction version 1', () => {
  const cfg = clientConfig('kafka-4.0', {
    transactionVersion: 1,
    faults: { ...clientConfig('kafka-4.0').faults, transactionVersionChanges: 2 },
  });
  const finalize = (s: State, level: number): State =>
    take(cfg, s, `TC: finalizeTransactionVersion(${level})`);
  const acked = (s: State): State =>
    inFlight(
      cfg,
      respond(cfg, act(cfg, act(cfg, s, 'send(p0)'), 'sendTxnRequest'), TC, Api.AddPartitionsToTxn),
    );
  const supportsV2 = (s: State, api: Api): boolean =>
    (sentTo(s, TC).find((r) => r.api === api)!.supports & Supports.TransactionVersion2) !== 0;

  it('testTransactionManagerEnablesV2', () => {
    let s = act(cfg, ready(cfg), 'beginTransaction');
    expect(producer(s).transactionV2).toBe(false);
    s = finalize(s, 2);
    // The manager stays at version 1 until the transaction ends.
    expect(producer(s)).toMatchObject({ transactionV2: false, nextTransactionV2: false });
    s = respond(cfg, acked(s), leader(0), Api.Produce);
    s = act(cfg, s, 'commitTransaction');
    expect(producer(s)).toMatchObject({ nextTransactionV2: true, bumpRequired: true });
    s = act(cfg, s, 'sendTxnRequest');
    // The EndTxn completes the transaction at the version it started with.
    expect(supportsV2(s, Api.EndTxn)).toBe(false);
    s = respond(cfg, s, TC, Api.EndTxn);
    expect(producer(s)).toMatchObject({ tm: Tm.INITIALIZING, transactionV2: true });
    s = act(cfg, s, 'sendTxnRequest');
    expect(sentTo(s, TC)[0]).toMatchObject({ api: Api.InitProducerId, pid: PID, epoch: EPOCH });
    s = respond(cfg, s, TC, Api.InitProducerId, { pid: PID, epoch: EPOCH + 1 });
    s = act(cfg, s, 'beginTransaction');
    expect(producer(s)).toMatchObject({ transactionV2: true, epoch: EPOCH + 1 });
  });
});

describe('TransactionManager.java and KafkaProducer.java source rules (apache/kafka 4.0.0 4ae68144, KAFKA-18227)', () => {
  const cfg = clientConfig('kafka-4.0', {
    transactionVersion: 1,
    faults: { ...clientConfig('kafka-4.0').faults, transactionVersionChanges: 2 },
  });
  const finalize = (c: KafkaConfig, s: State, level: number): State =>
    take(c, s, `TC: finalizeTransactionVersion(${level})`);

  it('KafkaProducer.initTransactions: the version is read once the first InitProducerId is answered, with no bump', () => {
    let s = finalize(cfg, act(cfg, initial(cfg), 'initTransactions'), 2);
    s = respond(cfg, s, TC, Api.InitProducerId, { pid: PID, epoch: EPOCH });
    expect(producer(s)).toMatchObject({ tm: Tm.READY, transactionV2: true, bumpRequired: false });
  });

  it('beginCompletingTransaction: a downgrade needs no bump; the next transaction is at version 1', () => {
    const v2 = clientConfig('kafka-4.0', {
      faults: { ...clientConfig('kafka-4.0').faults, transactionVersionChanges: 1 },
    });
    let s = act(v2, act(v2, ready(v2), 'beginTransaction'), 'send(p0)');
    s = respond(v2, inFlight(v2, s), leader(0), Api.Produce);
    s = act(v2, finalize(v2, s, 1), 'commitTransaction');
    expect(producer(s)).toMatchObject({ transactionV2: true, nextTransactionV2: false, bumpRequired: false });
    s = respond(v2, act(v2, s, 'sendTxnRequest'), TC, Api.EndTxn, { pid: PID, epoch: EPOCH + 1 });
    expect(producer(s)).toMatchObject({ tm: Tm.READY, transactionV2: false, epoch: EPOCH + 1 });
  });

  it('beginCompletingTransaction: an abort after a failed commit builds its EndTxn at the version the commit read', () => {
    let s = act(cfg, ready(cfg), 'beginTransaction');
    s = inFlight(
      cfg,
      respond(cfg, act(cfg, act(cfg, s, 'send(p0)'), 'sendTxnRequest'), TC, Api.AddPartitionsToTxn),
    );
    s = act(cfg, finalize(cfg, s, 2), 'commitTransaction');
    s = respond(cfg, s, leader(0), Api.Produce, { error: Err.OUT_OF_ORDER_SEQUENCE_NUMBER });
    s = act(cfg, s, 'abortTransaction');
    expect(producer(s)).toMatchObject({ transactionV2: true, nextTransactionV2: true, bumpRequired: true });
  });

  it('model before KAFKA-18227 (trunk 1eb76443, tv2UpgradeBump off): the version is read at beginTransaction, with no bump', () => {
    const old = clientConfig(
      'kafka-4.0',
      {
        transactionVersion: 1,
        faults: { ...clientConfig('kafka-4.0').faults, transactionVersionChanges: 1 },
      },
      { tv2UpgradeBump: false },
    );
    let s = act(old, ready(old), 'beginTransaction');
    s = respond(
      old,
      inFlight(
        old,
        respond(old, act(old, act(old, s, 'send(p0)'), 'sendTxnRequest'), TC, Api.AddPartitionsToTxn),
      ),
      leader(0),
      Api.Produce,
    );
    s = respond(old, act(old, act(old, s, 'commitTransaction'), 'sendTxnRequest'), TC, Api.EndTxn);
    s = act(old, finalize(old, s, 2), 'beginTransaction');
    expect(producer(s)).toMatchObject({ tm: Tm.IN_TRANSACTION, transactionV2: true, epoch: EPOCH });
  });
});
