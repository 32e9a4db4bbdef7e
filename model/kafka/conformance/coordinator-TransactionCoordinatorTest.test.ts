// TransactionCoordinatorTest (core/src/test/scala/unit/kafka/coordinator/transaction/): each case
// puts one TransactionMetadata in the coordinator as the Kafka test's mocks do, delivers one
// request from P0.0 and checks the answer and what the coordinator keeps and logs.
import { describe, expect, it } from 'vitest';
import type { KafkaConfig } from '../config.ts';
import { type State, Err, NO_EPOCH, NO_STATE } from '../state.ts';
import { Api, P0, P1, TxnState, ask, askAndClear, at, logged } from './coordinator-support.ts';
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
  withCoordinator,
} from './harness.ts';

const producerId = 10;
const producerEpoch = 1;

// One transaction timeout allowed, so that the coordinator's timeout action can be taken.
const withTimeout = (generation: string, rules = {}) =>
  kafkaConfig(generation, { faults: { ...kafkaConfig(generation).faults, transactionTimeouts: 1 } }, rules);

/** Cases whose Kafka test reads the same at 0.11.0, 3.5 and 3.9. */
function casesOfEveryRelease(cfg: KafkaConfig, s0: State): void {
  it('shouldRespondWithInvalidPidMappingOnAddPartitionsToTransactionWhenTransactionalIdNotPresent', () => {
    expect(ask(cfg, s0, Api.AddPartitionsToTxn, { pid: 0, epoch: 1, partitions: P0 }).reply.error).toBe(
      Err.INVALID_PRODUCER_ID_MAPPING,
    );
  });

  it.each([
    [
      'shouldRespondWithConcurrentTransactionsOnAddPartitionsWhenStateIsPrepareCommit',
      TxnState.PrepareCommit,
    ],
    ['shouldRespondWithConcurrentTransactionOnAddPartitionsWhenStateIsPrepareAbort', TxnState.PrepareAbort],
  ])('%s', (_, state) => {
    expect(
      ask(cfg, at(s0, { pid: 0, epoch: 0, state }), Api.AddPartitionsToTxn, {
        pid: 0,
        epoch: 0,
        partitions: P0,
      }).reply.error,
    ).toBe(Err.CONCURRENT_TRANSACTIONS);
  });

  it('shouldRespondWithErrorsNoneOnAddPartitionWhenNoErrorsAndPartitionsTheSame', () => {
    const s = at(s0, { pid: 0, epoch: 0, state: TxnState.Empty, partitions: P0 });
    expect(ask(cfg, s, Api.AddPartitionsToTxn, { pid: 0, epoch: 0, partitions: P0 }).reply.error).toBe(
      Err.NONE,
    );
  });

  it('shouldReplyWithInvalidPidMappingOnEndTxnWhenTxnIdDoesntExist', () => {
    expect(ask(cfg, s0, Api.EndTxn, { pid: 0, epoch: 0, commit: true }).reply.error).toBe(
      Err.INVALID_PRODUCER_ID_MAPPING,
    );
  });

  it('shouldReplyWithInvalidPidMappingOnEndTxnWhenPidDosentMatchMapped', () => {
    const s = at(s0, { pid: 10, epoch: 0, state: TxnState.Ongoing });
    expect(ask(cfg, s, Api.EndTxn, { pid: 0, epoch: 0, commit: true }).reply.error).toBe(
      Err.INVALID_PRODUCER_ID_MAPPING,
    );
  });

  it.each([
    ['shouldIncrementEpochAndUpdateMetadataOnHandleInitPidWhenExistingEmptyTransaction', TxnState.Empty],
    [
      'shouldIncrementEpochAndUpdateMetadataOnHandleInitPidWhenExistingCompleteTransaction',
      TxnState.CompleteAbort,
    ],
    [
      'shouldIncrementEpochAndUpdateMetadataOnHandleInitPidWhenExistingCompleteCommitTransaction',
      TxnState.CompleteCommit,
    ],
  ])('%s', (_, state) => {
    const { s, reply } = ask(
      cfg,
      at(s0, { pid: producerId, epoch: producerEpoch, state }),
      Api.InitProducerId,
      {},
    );
    expect(reply).toMatchObject({ error: Err.NONE, pid: producerId, epoch: producerEpoch + 1 });
    expect(txn(s, 0)).toMatchObject({ pid: producerId, epoch: producerEpoch + 1 });
  });
}

// The 3.5 and 3.9 test files agree on every case below but for mocks and TRANSACTION_ABORTABLE.
// A partition absent from the transaction: INVALID_TXN_STATE at 3.5, TRANSACTION_ABORTABLE at 3.9 (KAFKA-16314, 3.8).
describe.each([
  ['apache/kafka 3.5 1361d5cd, kafka-3.5', 'kafka-3.5', Err.INVALID_TXN_STATE],
  ['apache/kafka 3.9 c821449f, kafka-3.8', 'kafka-3.8', Err.TRANSACTION_ABORTABLE],
] as const)('TransactionCoordinatorTest (%s)', (_, generation, notInTransaction) => {
  const cfg = withTimeout(generation);
  const s0 = initial(cfg);

  it('shouldInitPidWithEpochZeroForNewTransactionalId', () => {
    const { s, reply } = ask(cfg, withCoordinator(s0, { nextPid: 5 }), Api.InitProducerId, {});
    expect(reply).toMatchObject({ error: Err.NONE, pid: 5, epoch: 0 });
    expect(txn(s, 0)).toMatchObject({ pid: 5, epoch: 0, state: TxnState.Empty });
  });

  it('shouldGenerateNewProducerIdIfNoStateAndProducerIdAndEpochProvided', () => {
    const { reply } = ask(cfg, withCoordinator(s0, { nextPid: 5 }), Api.InitProducerId, {
      pid: producerId,
      epoch: producerEpoch,
    });
    expect(reply).toMatchObject({ error: Err.NONE, pid: 5, epoch: 0 });
  });

  casesOfEveryRelease(cfg, s0);

  // The Kafka test verifies four metadata in turn; a leader of the model verifies one partition.
  const verify = (md: Parameters<typeof at>[1], epoch: number, partitions = P0): Err =>
    ask(cfg, at(s0, md), Api.AddPartitionsToTxn, { pid: 0, epoch, partitions, verifyOnly: true }).reply.error;
  it('testVerifyPartitionHandling (part: another producer id)', () => {
    expect(verify({ pid: 1, epoch: 0, state: TxnState.PrepareCommit, partitions: P0 }, 0)).toBe(
      Err.INVALID_PRODUCER_ID_MAPPING,
    );
  });
  it('testVerifyPartitionHandling (part: another epoch)', () => {
    expect(verify({ pid: 0, epoch: 0, state: TxnState.PrepareCommit, partitions: P0 }, 1)).toBe(
      Err.PRODUCER_FENCED,
    );
  });
  it('testVerifyPartitionHandling (part: Prepare state)', () => {
    expect(verify({ pid: 0, epoch: 0, state: TxnState.PrepareCommit, partitions: P0 }, 0)).toBe(
      Err.CONCURRENT_TRANSACTIONS,
    );
  });
  it('testVerifyPartitionHandling (part: pending state ignored, partition absent)', () => {
    expect(
      verify(
        { pid: 0, epoch: 0, state: TxnState.Ongoing, partitions: 0, pendingState: TxnState.CompleteCommit },
        0,
      ),
    ).toBe(notInTransaction);
  });

  it('shouldRespondWithProducerFencedOnAddPartitionsWhenEpochsAreDifferent', () => {
    const s = at(s0, { pid: 0, epoch: 10, lastEpoch: 9, state: TxnState.PrepareCommit });
    expect(ask(cfg, s, Api.AddPartitionsToTxn, { pid: 0, epoch: 0, partitions: P0 }).reply.error).toBe(
      Err.PRODUCER_FENCED,
    );
  });

  it.each([
    ['shouldAppendNewMetadataToLogOnAddPartitionsWhenPartitionsAdded', TxnState.Empty],
    ['shouldRespondWithSuccessOnAddPartitionsWhenStateIsOngoing', TxnState.Ongoing],
    ['shouldRespondWithSuccessOnAddPartitionsWhenStateIsCompleteCommit', TxnState.CompleteCommit],
    ['shouldRespondWithSuccessOnAddPartitionsWhenStateIsCompleteAbort', TxnState.CompleteAbort],
  ])('%s', (_, state) => {
    const s1 = at(s0, { pid: producerId, epoch: producerEpoch, lastEpoch: producerEpoch - 1, state });
    const { s } = ask(cfg, s1, Api.AddPartitionsToTxn, {
      pid: producerId,
      epoch: producerEpoch,
      partitions: P0,
    });
    // The Kafka test checks that the coordinator appends to its log.
    expect(logged(s)).toMatchObject({ state: TxnState.Ongoing, partitions: P0, epoch: producerEpoch });
  });

  it('shouldRespondWithErrorsNoneOnAddPartitionWhenOngoingVerifyOnlyAndPartitionsTheSame', () => {
    expect(verify({ pid: 0, epoch: 0, state: TxnState.Ongoing, partitions: P0 }, 0)).toBe(Err.NONE);
  });

  it('shouldRespondWithInvalidTxnStateWhenVerifyOnlyAndPartitionNotPresent', () => {
    // Empty state with topic1-0 recorded: membership alone decides, per partition.
    const md = { pid: 0, epoch: 0, state: TxnState.Empty, partitions: P0 };
    expect(verify(md, 0, P1)).toBe(notInTransaction);
    expect(verify(md, 0, P0)).toBe(Err.NONE);
  });

  it('shouldReplyWithProducerFencedOnEndTxnWhenEpochIsNotSameAsTransaction', () => {
    const s = at(s0, { pid: producerId, epoch: producerEpoch, lastEpoch: 0, state: TxnState.Ongoing });
    expect(ask(cfg, s, Api.EndTxn, { pid: producerId, epoch: 0, commit: true }).reply.error).toBe(
      Err.PRODUCER_FENCED,
    );
  });

  it.each([
    [
      'shouldReturnOkOnEndTxnWhenStatusIsCompleteCommitAndResultIsCommit',
      TxnState.CompleteCommit,
      true,
      Err.NONE,
    ],
    [
      'shouldReturnOkOnEndTxnWhenStatusIsCompleteAbortAndResultIsAbort',
      TxnState.CompleteAbort,
      false,
      Err.NONE,
    ],
    [
      'shouldReturnInvalidTxnRequestOnEndTxnRequestWhenStatusIsCompleteAbortAndResultIsNotAbort',
      TxnState.CompleteAbort,
      true,
      Err.INVALID_TXN_STATE,
    ],
    [
      'shouldReturnInvalidTxnRequestOnEndTxnRequestWhenStatusIsCompleteCommitAndResultIsNotCommit',
      TxnState.CompleteCommit,
      false,
      Err.INVALID_TXN_STATE,
    ],
  ])('%s', (_, state, commit, error) => {
    const s1 = at(s0, { pid: producerId, epoch: producerEpoch, lastEpoch: 0, state });
    const { s, reply } = ask(cfg, s1, Api.EndTxn, { pid: producerId, epoch: 1, commit });
    expect(reply.error).toBe(error);
    expect(logged(s)).toEqual(logged(s1));
  });

  it('shouldReturnConcurrentTxnRequestOnEndTxnRequestWhenStatusIsPrepareCommit', () => {
    const s = at(s0, { pid: producerId, epoch: producerEpoch, lastEpoch: 0, state: TxnState.PrepareCommit });
    expect(ask(cfg, s, Api.EndTxn, { pid: producerId, epoch: 1, commit: true }).reply.error).toBe(
      Err.CONCURRENT_TRANSACTIONS,
    );
  });

  it('shouldReturnInvalidTxnRequestOnEndTxnRequestWhenStatusIsPrepareAbort', () => {
    const s = at(s0, { pid: producerId, epoch: 1, state: TxnState.PrepareAbort });
    expect(ask(cfg, s, Api.EndTxn, { pid: producerId, epoch: 1, commit: true }).reply.error).toBe(
      Err.INVALID_TXN_STATE,
    );
  });

  it.each([
    [
      'shouldAppendPrepareCommitToLogOnEndTxnWhenStatusIsOngoingAndResultIsCommit',
      true,
      TxnState.PrepareCommit,
    ],
    [
      'shouldAppendPrepareAbortToLogOnEndTxnWhenStatusIsOngoingAndResultIsAbort',
      false,
      TxnState.PrepareAbort,
    ],
  ])('%s', (_, commit, state) => {
    const s1 = at(s0, { pid: producerId, epoch: producerEpoch, state: TxnState.Ongoing, partitions: P0 });
    const { s } = ask(cfg, s1, Api.EndTxn, { pid: producerId, epoch: producerEpoch, commit });
    // Transaction version 0/1: the prepare record keeps the epoch.
    expect(logged(s)).toMatchObject({ state, pid: producerId, epoch: producerEpoch, partitions: P0 });
  });

  it.each([
    ['shouldReturnInvalidEpochOnEndTxnWhenEpochIsLarger', 2],
    ['shouldReturnInvalidEpochOnEndTxnWhenEpochIsSmaller', 0],
  ])('%s', (_, epoch) => {
    const s = at(s0, { pid: producerId, epoch: 1, lastEpoch: 0, state: TxnState.CompleteCommit });
    expect(ask(cfg, s, Api.EndTxn, { pid: producerId, epoch, commit: true }).reply.error).toBe(
      Err.PRODUCER_FENCED,
    );
  });

  it.each([
    [
      'shouldWaitForCommitToCompleteOnHandleInitPidAndExistingTransactionInPrepareCommitState',
      TxnState.PrepareCommit,
    ],
    [
      'shouldWaitForCommitToCompleteOnHandleInitPidAndExistingTransactionInPrepareAbortState',
      TxnState.PrepareAbort,
    ],
  ])('%s', (_, state) => {
    const s = at(s0, { pid: 0, epoch: 0, state, partitions: P1 });
    expect(ask(cfg, s, Api.InitProducerId, {}).reply).toMatchObject({
      error: Err.CONCURRENT_TRANSACTIONS,
      pid: -1,
      epoch: -1,
    });
  });

  it('shouldAbortTransactionOnHandleInitPidWhenExistingTransactionInOngoingState', () => {
    const s1 = at(s0, {
      pid: producerId,
      epoch: producerEpoch,
      lastEpoch: producerEpoch - 1,
      state: TxnState.Ongoing,
      partitions: P0,
    });
    const { s, reply } = ask(cfg, s1, Api.InitProducerId, {});
    expect(reply).toMatchObject({ error: Err.CONCURRENT_TRANSACTIONS, pid: -1, epoch: -1 });
    // The fence: PrepareAbort at epoch + 1, and the last epoch forgotten.
    expect(logged(s)).toMatchObject({
      state: TxnState.PrepareAbort,
      epoch: producerEpoch + 1,
      partitions: P0,
    });
    expect(txn(s, 0)).toMatchObject({ epoch: producerEpoch + 1, lastEpoch: NO_EPOCH });
  });

  it('testInitProducerIdWithNoLastProducerData', () => {
    const s = at(s0, {
      pid: producerId,
      epoch: producerEpoch + 1,
      lastEpoch: NO_EPOCH,
      state: TxnState.Empty,
      partitions: P0,
    });
    expect(ask(cfg, s, Api.InitProducerId, { pid: producerId, epoch: producerEpoch }).reply).toMatchObject({
      error: Err.PRODUCER_FENCED,
      pid: -1,
      epoch: -1,
    });
  });

  it('testFenceProducerWhenMappingExistsWithDifferentProducerId', () => {
    const s = at(s0, {
      pid: producerId + 1,
      epoch: producerEpoch,
      lastEpoch: producerEpoch - 1,
      state: TxnState.Empty,
      partitions: P0,
    });
    expect(ask(cfg, s, Api.InitProducerId, { pid: producerId, epoch: producerEpoch }).reply).toMatchObject({
      error: Err.PRODUCER_FENCED,
      pid: -1,
      epoch: -1,
    });
  });

  it('testInitProducerIdWithCurrentEpochProvided', () => {
    const s1 = at(s0, { pid: producerId, epoch: 10, lastEpoch: 9, state: TxnState.Empty, partitions: P0 });
    const first = askAndClear(cfg, s1, Api.InitProducerId, { pid: producerId, epoch: 10 });
    expect(first.reply).toMatchObject({ error: Err.NONE, pid: producerId, epoch: 11 });
    // The same request again (its answer was lost): recognised as a retry by the last epoch.
    expect(ask(cfg, first.s, Api.InitProducerId, { pid: producerId, epoch: 10 }).reply).toMatchObject({
      error: Err.NONE,
      pid: producerId,
      epoch: 11,
    });
  });

  it('testInitProducerIdStaleCurrentEpochProvided', () => {
    const s1 = at(s0, { pid: producerId, epoch: 10, lastEpoch: 9, state: TxnState.Empty, partitions: P0 });
    const first = askAndClear(cfg, s1, Api.InitProducerId, {});
    expect(first.reply).toMatchObject({ error: Err.NONE, pid: producerId, epoch: 11 });
    expect(ask(cfg, first.s, Api.InitProducerId, { pid: producerId, epoch: 10 }).reply).toMatchObject({
      error: Err.PRODUCER_FENCED,
      pid: -1,
      epoch: -1,
    });
  });

  it('shouldAbortExpiredTransactionsInOngoingStateAndBumpEpoch', () => {
    const s1 = at(s0, {
      pid: producerId,
      epoch: producerEpoch,
      lastEpoch: NO_EPOCH,
      state: TxnState.Ongoing,
      partitions: P0,
    });
    const s = take(cfg, s1, 'TC: transactionTimeout(t0)');
    expect(logged(s)).toMatchObject({
      state: TxnState.PrepareAbort,
      pid: producerId,
      epoch: producerEpoch + 1,
      partitions: P0,
    });
    expect(txn(s, 0)!.lastEpoch).toBe(NO_EPOCH);
  });

  // The Kafka test sets a pending Ongoing -> PrepareCommit transition, which the model's atomic
  // appends never leave behind; the guard that reads it is the same.
  const pendingCommit = {
    pid: producerId,
    epoch: producerEpoch,
    state: TxnState.Ongoing,
    partitions: P0,
    pendingState: TxnState.PrepareCommit,
  };
  it('shouldNotAbortExpiredTransactionsThatHaveAPendingStateTransition', () => {
    expect(labels(cfg, at(s0, pendingCommit))).not.toContain('TC: transactionTimeout(t0)');
  });

  it('shouldNotBumpEpochWithPendingTransaction', () => {
    const { s, reply } = ask(cfg, at(s0, pendingCommit), Api.InitProducerId, { pid: producerId, epoch: 10 });
    expect(reply).toMatchObject({ error: Err.CONCURRENT_TRANSACTIONS, pid: -1, epoch: -1 });
    expect(txn(s, 0)).toMatchObject({ epoch: producerEpoch, pendingState: TxnState.PrepareCommit });
  });
});

// The transaction-version-2 parameter of the tests; the version-0 parameter is the 3.9 case above.
describe('TransactionCoordinatorTest, clientTransactionVersion 2 (apache/kafka trunk 1eb76443 and the 4.0-era stored version, kafka-4.0)', () => {
  const cfg = kafkaConfig('kafka-4.0');
  const s0 = initial(cfg);
  const endTxn = (md: Parameters<typeof at>[1], epoch: number, commit: boolean) =>
    ask(cfg, at(s0, md), Api.EndTxn, { pid: producerId, epoch, commit });

  it('shouldReplyWithInvalidPidMappingOnEndTxnWhenTxnIdDoesntExist', () => {
    expect(ask(cfg, s0, Api.EndTxn, { pid: 0, epoch: 0, commit: true }).reply.error).toBe(
      Err.INVALID_PRODUCER_ID_MAPPING,
    );
  });

  it('shouldReplyWithInvalidPidMappingOnEndTxnWhenPidDosentMatchMapped', () => {
    const s = at(s0, { pid: 10, epoch: 0, state: TxnState.Ongoing });
    expect(ask(cfg, s, Api.EndTxn, { pid: 0, epoch: 0, commit: true }).reply.error).toBe(
      Err.INVALID_PRODUCER_ID_MAPPING,
    );
  });

  it('shouldReplyWithProducerFencedOnEndTxnWhenEpochIsNotSameAsTransaction', () => {
    expect(
      endTxn({ pid: producerId, epoch: 1, lastEpoch: 0, state: TxnState.Ongoing }, 0, true).reply.error,
    ).toBe(Err.PRODUCER_FENCED);
  });

  // Retry: the request carries the epoch before the bump (stored epoch - 1); current: the stored one.
  const complete = (state: TxnState) => ({
    pid: producerId,
    epoch: producerEpoch,
    lastEpoch: producerEpoch - 1,
    state,
  });

  it.each([
    [
      'testEndTxnWhenStatusIsCompleteCommitAndResultIsCommitInV2 (part: retry)',
      TxnState.CompleteCommit,
      0,
      true,
      Err.NONE,
    ],
    [
      'testEndTxnWhenStatusIsCompleteCommitAndResultIsCommitInV2 (part: current)',
      TxnState.CompleteCommit,
      1,
      true,
      Err.INVALID_TXN_STATE,
    ],
    [
      'shouldReturnOkOnEndTxnWhenStatusIsCompleteAbortAndResultIsAbortInV2 (part: retry)',
      TxnState.CompleteAbort,
      0,
      false,
      Err.NONE,
    ],
    [
      'shouldReturnInvalidTxnRequestOnEndTxnRequestWhenStatusIsCompleteAbortAndResultIsNotAbort',
      TxnState.CompleteAbort,
      0,
      true,
      Err.INVALID_TXN_STATE,
    ],
    [
      'testEndTxnRequestWhenStatusIsCompleteCommitAndResultIsAbortInV2 (part: retry)',
      TxnState.CompleteCommit,
      0,
      false,
      Err.INVALID_TXN_STATE,
    ],
  ])('%s', (_, state, epoch, commit, error) => {
    const { s, reply } = endTxn(complete(state), epoch, commit);
    expect(reply.error).toBe(error);
    // Nothing is appended.
    expect(logged(s)).toEqual(logged(at(s0, complete(state))));
  });

  it.each([
    [
      'shouldReturnOkOnEndTxnWhenStatusIsCompleteAbortAndResultIsAbortInV2 (part: current)',
      TxnState.CompleteAbort,
    ],
    [
      'testEndTxnRequestWhenStatusIsCompleteCommitAndResultIsAbortInV2 (part: current)',
      TxnState.CompleteCommit,
    ],
    ['TestEndTxnRequestWhenEmptyTransactionStateForAbortInV2 (part: current)', TxnState.Empty],
  ])('%s', (_, state) => {
    const { s, reply } = endTxn(
      { ...complete(state), lastEpoch: state === TxnState.Empty ? NO_EPOCH : producerEpoch - 1 },
      producerEpoch,
      false,
    );
    expect(reply.error).toBe(Err.NONE);
    // An epoch bump: an empty PrepareAbort at epoch + 1.
    expect(logged(s)).toMatchObject({
      state: TxnState.PrepareAbort,
      epoch: producerEpoch + 1,
      partitions: 0,
    });
  });

  it.each([
    ['TestEndTxnRequestWhenEmptyTransactionStateForAbortInV2 (part: retry)', false, 0, Err.PRODUCER_FENCED],
    ['TestEndTxnRequestWhenEmptyTransactionStateForCommitInV2 (part: retry)', true, 0, Err.PRODUCER_FENCED],
    [
      'TestEndTxnRequestWhenEmptyTransactionStateForCommitInV2 (part: current)',
      true,
      1,
      Err.INVALID_TXN_STATE,
    ],
  ])('%s', (_, commit, epoch, error) => {
    expect(
      endTxn({ pid: producerId, epoch: producerEpoch, state: TxnState.Empty }, epoch, commit).reply.error,
    ).toBe(error);
  });

  it('shouldReturnConcurrentTransactionsOnEndTxnRequestWhenStatusIsPrepareCommit', () => {
    expect(
      endTxn({ pid: producerId, epoch: 1, lastEpoch: 0, state: TxnState.PrepareCommit }, 0, true).reply.error,
    ).toBe(Err.CONCURRENT_TRANSACTIONS);
  });

  it('shouldReturnInvalidTxnRequestOnEndTxnRequestWhenStatusIsPrepareAbort', () => {
    // 4.0-era stored test (id 354375433); newer trunk (KIP-939, PR #21735) answers CONCURRENT_TRANSACTIONS.
    expect(endTxn({ pid: producerId, epoch: 1, state: TxnState.PrepareAbort }, 0, true).reply.error).toBe(
      Err.INVALID_TXN_STATE,
    );
  });

  it('shouldReturnInvalidTxnRequestOnEndTxnV2IfNotEndTxnV2Retry', () => {
    // The same epoch is the next EndTxn, not a retry of the last one.
    expect(
      endTxn({ pid: producerId, epoch: producerEpoch, state: TxnState.PrepareCommit }, producerEpoch, true)
        .reply.error,
    ).toBe(Err.PRODUCER_FENCED);
    expect(
      endTxn({ pid: producerId, epoch: producerEpoch, state: TxnState.CompleteCommit }, producerEpoch, true)
        .reply.error,
    ).toBe(Err.INVALID_TXN_STATE);
  });

  it.each([
    [
      'shouldAppendPrepareCommitToLogOnEndTxnWhenStatusIsOngoingAndResultIsCommit',
      true,
      TxnState.PrepareCommit,
    ],
    [
      'shouldAppendPrepareAbortToLogOnEndTxnWhenStatusIsOngoingAndResultIsAbort',
      false,
      TxnState.PrepareAbort,
    ],
  ])('%s', (_, commit, state) => {
    const { s, reply } = endTxn(
      { pid: producerId, epoch: producerEpoch, state: TxnState.Ongoing, partitions: P0 },
      producerEpoch,
      commit,
    );
    expect(logged(s)).toMatchObject({ state, epoch: producerEpoch + 1, partitions: P0 });
    expect(reply).toMatchObject({ error: Err.NONE, pid: producerId, epoch: producerEpoch + 1 });
  });

  it('shouldReturnInvalidEpochOnEndTxnWhenEpochIsLarger', () => {
    expect(
      endTxn({ pid: producerId, epoch: 1, lastEpoch: 1, state: TxnState.CompleteCommit }, 2, true).reply
        .error,
    ).toBe(Err.PRODUCER_FENCED);
  });

  it('shouldReturnInvalidEpochOnEndTxnWhenEpochIsSmaller', () => {
    // Stored epoch 2, request epoch producerEpoch - 1: two behind, not a retry.
    expect(
      endTxn(
        { pid: producerId, epoch: 2, lastEpoch: 1, state: TxnState.CompleteCommit },
        producerEpoch - 1,
        true,
      ).reply.error,
    ).toBe(Err.PRODUCER_FENCED);
  });

  it.each([
    ['shouldRespondWithSuccessOnAddPartitionsWhenStateIsCompleteCommit', TxnState.CompleteCommit],
    ['shouldRespondWithSuccessOnAddPartitionsWhenStateIsCompleteAbort', TxnState.CompleteAbort],
  ])('%s', (_, state) => {
    const { s } = ask(cfg, at(s0, complete(state)), Api.AddPartitionsToTxn, {
      pid: producerId,
      epoch: producerEpoch,
      partitions: P0,
    });
    expect(logged(s)).toMatchObject({ state: TxnState.Ongoing, partitions: P0, epoch: producerEpoch });
  });
});

// KAFKA-18464 (PR #18467, in 4.0.0): a commit ended at epoch 1 bumps to 2 and is still writing its
// markers (pending CompleteCommit) when the client, now at epoch 2, sends an empty abort. The PR's
// test is not in the stored sources; the scenario is the one its description gives.
describe('KAFKA-18464 empty abort during a completing commit (apache/kafka PR #18467, kafka-4.0)', () => {
  const completing = {
    pid: producerId,
    epoch: 2,
    lastEpoch: 1,
    state: TxnState.PrepareCommit,
    pendingState: TxnState.CompleteCommit,
    partitions: P0,
  };
  it.each([
    ['kafka-4.0: pending transition first, the client waits', {}, Err.CONCURRENT_TRANSACTIONS],
    [
      'before the fix (TransactionCoordinator.scala bb126f2d): epoch first, the client is fenced',
      { pendingCheckFirst: false },
      Err.PRODUCER_FENCED,
    ],
  ])('%s', (_, rules, error) => {
    const cfg = kafkaConfig('kafka-4.0', {}, rules);
    const { s, reply } = ask(cfg, at(initial(cfg), completing), Api.EndTxn, {
      pid: producerId,
      epoch: 2,
      commit: false,
    });
    expect(reply.error).toBe(error);
    expect(txn(s, 0)).toMatchObject({
      state: TxnState.PrepareCommit,
      pendingState: TxnState.CompleteCommit,
      epoch: 2,
    });
  });
});

// KAFKA-18660 (PR #18730, picked to 4.0 as #18758): AddPartitionsToTxn checks the pending
// transition before the producer id, so a producer already given the next producer id waits for
// the completion instead of being told its id is unknown. The Kafka test reaches the new id by
// epoch overflow, which the model does not have; the order of the checks is what is run here.
describe('TransactionCoordinatorTest (stored 4.2-era version id 2751723026, kafka-4.0)', () => {
  it('shouldReturnConcurrentTxnOnAddPartitionsIfEndTxnV2EpochOverflowAndNotComplete (part: pending completion)', () => {
    const cfg = kafkaConfig('kafka-4.0');
    const s1 = at(initial(cfg), {
      pid: producerId,
      epoch: 2,
      lastEpoch: 1,
      state: TxnState.PrepareCommit,
      pendingState: TxnState.CompleteCommit,
      partitions: 0,
    });
    const { s, reply } = ask(cfg, s1, Api.AddPartitionsToTxn, {
      pid: producerId + 1,
      epoch: 0,
      partitions: P0,
    });
    expect(reply.error).toBe(Err.CONCURRENT_TRANSACTIONS);
    expect(txn(s, 0)!.pendingState).toBe(TxnState.CompleteCommit);
  });
});

// KIP-98 as first shipped: no KIP-360 (InitProducerId carries no producer id), and the timeout
// abort keeps the epoch (KAFKA-6119 came with 0.11.0.2 and 1.0).
describe('TransactionCoordinatorTest (apache/kafka 0.11.0.0 e18335dd, kafka-0.11)', () => {
  const cfg = withTimeout('kafka-0.11');
  const s0 = initial(cfg);

  it('shouldInitPidWithEpochZeroForNewTransactionalId', () => {
    expect(ask(cfg, withCoordinator(s0, { nextPid: 5 }), Api.InitProducerId, {}).reply).toMatchObject({
      error: Err.NONE,
      pid: 5,
      epoch: 0,
    });
  });

  casesOfEveryRelease(cfg, s0);

  it.each([
    ['shouldAppendNewMetadataToLogOnAddPartitionsWhenPartitionsAdded', TxnState.Empty],
    ['shouldRespondWithSuccessOnAddPartitionsWhenStateIsOngoing', TxnState.Ongoing],
    ['shouldRespondWithSuccessOnAddPartitionsWhenStateIsCompleteCommit', TxnState.CompleteCommit],
    ['shouldRespondWithSuccessOnAddPartitionsWhenStateIsCompleteAbort', TxnState.CompleteAbort],
  ])('%s', (_, state) => {
    const { s } = ask(cfg, at(s0, { pid: producerId, epoch: producerEpoch, state }), Api.AddPartitionsToTxn, {
      pid: producerId,
      epoch: producerEpoch,
      partitions: P0,
    });
    expect(logged(s)).toMatchObject({ state: TxnState.Ongoing, partitions: P0, epoch: producerEpoch });
  });

  it.each([
    [
      'shouldReturnOkOnEndTxnWhenStatusIsCompleteCommitAndResultIsCommit',
      TxnState.CompleteCommit,
      true,
      Err.NONE,
    ],
    [
      'shouldReturnOkOnEndTxnWhenStatusIsCompleteAbortAndResultIsAbort',
      TxnState.CompleteAbort,
      false,
      Err.NONE,
    ],
    [
      'shouldReturnInvalidTxnRequestOnEndTxnRequestWhenStatusIsCompleteAbortAndResultIsNotAbort',
      TxnState.CompleteAbort,
      true,
      Err.INVALID_TXN_STATE,
    ],
    [
      'shouldReturnInvalidTxnRequestOnEndTxnRequestWhenStatusIsCompleteCommitAndResultIsNotCommit',
      TxnState.CompleteCommit,
      false,
      Err.INVALID_TXN_STATE,
    ],
    [
      'shouldReturnConcurrentTxnRequestOnEndTxnRequestWhenStatusIsPrepareCommit',
      TxnState.PrepareCommit,
      true,
      Err.CONCURRENT_TRANSACTIONS,
    ],
    [
      'shouldReturnInvalidTxnRequestOnEndTxnRequestWhenStatusIsPrepareAbort',
      TxnState.PrepareAbort,
      true,
      Err.INVALID_TXN_STATE,
    ],
  ])('%s', (_, state, commit, error) => {
    expect(
      ask(cfg, at(s0, { pid: producerId, epoch: 1, state }), Api.EndTxn, {
        pid: producerId,
        epoch: 1,
        commit,
      }).reply.error,
    ).toBe(error);
  });

  it.each([
    [
      'shouldAppendPrepareCommitToLogOnEndTxnWhenStatusIsOngoingAndResultIsCommit',
      true,
      TxnState.PrepareCommit,
    ],
    [
      'shouldAppendPrepareAbortToLogOnEndTxnWhenStatusIsOngoingAndResultIsAbort',
      false,
      TxnState.PrepareAbort,
    ],
  ])('%s', (_, commit, state) => {
    const { s } = ask(
      cfg,
      at(s0, { pid: producerId, epoch: producerEpoch, state: TxnState.Ongoing, partitions: P0 }),
      Api.EndTxn,
      { pid: producerId, epoch: producerEpoch, commit },
    );
    expect(logged(s)).toMatchObject({ state, epoch: producerEpoch, partitions: P0 });
  });

  it.each([
    [
      'shouldWaitForCommitToCompleteOnHandleInitPidAndExistingTransactionInPrepareCommitState',
      TxnState.PrepareCommit,
    ],
    [
      'shouldWaitForCommitToCompleteOnHandleInitPidAndExistingTransactionInPrepareAbortState',
      TxnState.PrepareAbort,
    ],
  ])('%s', (_, state) => {
    expect(
      ask(cfg, at(s0, { pid: 0, epoch: 0, state, partitions: P1 }), Api.InitProducerId, {}).reply,
    ).toMatchObject({ error: Err.CONCURRENT_TRANSACTIONS, pid: -1, epoch: -1 });
  });

  it('shouldAbortTransactionOnHandleInitPidWhenExistingTransactionInOngoingState', () => {
    const { s, reply } = ask(
      cfg,
      at(s0, { pid: producerId, epoch: producerEpoch, state: TxnState.Ongoing, partitions: P0 }),
      Api.InitProducerId,
      {},
    );
    expect(reply).toMatchObject({ error: Err.CONCURRENT_TRANSACTIONS, pid: -1, epoch: -1 });
    expect(logged(s)).toMatchObject({
      state: TxnState.PrepareAbort,
      epoch: producerEpoch + 1,
      partitions: P0,
    });
  });

  it('shouldAbortExpiredTransactionsInOngoingState', () => {
    const s = take(
      cfg,
      at(s0, { pid: producerId, epoch: producerEpoch, state: TxnState.Ongoing, partitions: P0 }),
      'TC: transactionTimeout(t0)',
    );
    // Before KAFKA-6119 the coordinator aborts at the producer's own epoch.
    expect(logged(s)).toMatchObject({
      state: TxnState.PrepareAbort,
      pid: producerId,
      epoch: producerEpoch,
      partitions: P0,
    });
  });

  it('shouldNotAbortExpiredTransactionsThatHaveAPendingStateTransition', () => {
    const pending = {
      pid: producerId,
      epoch: producerEpoch,
      state: TxnState.Ongoing,
      partitions: P0,
      pendingState: TxnState.PrepareCommit,
    };
    expect(labels(cfg, at(s0, pending))).not.toContain('TC: transactionTimeout(t0)');
  });
});

// Asynchronous appends with failures: the Kafka tests' mocked appendTransactionToLog calls its
// callback with NOT_ENOUGH_REPLICAS directly; the real TransactionStateManager (which the model
// follows) turns that into COORDINATOR_NOT_AVAILABLE before the coordinator sees it.
const withFailures = (generation: string) =>
  kafkaConfig(generation, {
    coordinatorAppends: 'async',
    faults: { ...kafkaConfig(generation).faults, transactionTimeouts: 2, appendFailures: 3 },
  });

/** P0.0 sends InitProducerId; the coordinator's append then fails or completes; returns the answer. */
function initPidThen(
  cfg: ReturnType<typeof withFailures>,
  s: State,
  outcome: 'TC: failAppend(t0)' | 'TC: completeAppend(t0)',
) {
  const sent = handle(cfg, s, 0, TC, request(Api.InitProducerId, { txnId: 0 }));
  expect(answerOf(sent)).toBeUndefined(); // nothing is answered before the append ends
  const next = take(cfg, sent, outcome);
  return {
    s: { ...next, network: next.network.filter((c) => !(c.from === TC && c.to === 0)) },
    reply: answer(next, TC, 0),
  };
}
const answerOf = (s: State) => messages(s, TC, 0)[0];

describe('TransactionCoordinatorTest, failed appends (apache/kafka 3.9 c821449f, kafka-3.8, asynchronous appends)', () => {
  const cfg = withFailures('kafka-3.8');
  const s0 = initial(cfg);
  const ongoing = {
    pid: producerId,
    epoch: producerEpoch,
    lastEpoch: NO_EPOCH,
    state: TxnState.Ongoing,
    partitions: P0,
  };

  it('shouldNotRepeatedlyBumpEpochDueToInitPidDuringOngoingTxnIfAppendToLogFails', () => {
    const first = initPidThen(cfg, at(s0, ongoing), 'TC: failAppend(t0)');
    expect(first.reply).toMatchObject({ error: Err.COORDINATOR_NOT_AVAILABLE, pid: -1, epoch: -1 });
    expect(txn(first.s, 0)).toMatchObject({
      epoch: producerEpoch + 1,
      hasFailedEpochFence: true,
      state: TxnState.Ongoing,
      pendingState: NO_STATE,
    });

    const second = initPidThen(cfg, first.s, 'TC: failAppend(t0)');
    expect(second.reply).toMatchObject({ error: Err.COORDINATOR_NOT_AVAILABLE, pid: -1, epoch: -1 });
    expect(txn(second.s, 0)).toMatchObject({ epoch: producerEpoch + 1, hasFailedEpochFence: true });

    const third = initPidThen(cfg, second.s, 'TC: completeAppend(t0)');
    expect(third.reply).toMatchObject({ error: Err.CONCURRENT_TRANSACTIONS, pid: -1, epoch: -1 });
    expect(txn(third.s, 0)).toMatchObject({
      epoch: producerEpoch + 1,
      hasFailedEpochFence: false,
      state: TxnState.PrepareAbort,
      pendingState: TxnState.CompleteAbort,
    });
    expect(logged(third.s)).toMatchObject({
      state: TxnState.PrepareAbort,
      epoch: producerEpoch + 1,
      partitions: P0,
    });
  });

  it('shouldNotBumpEpochWhenAbortingExpiredTransactionIfAppendToLogFails', () => {
    const timedOut = take(cfg, at(s0, ongoing), 'TC: transactionTimeout(t0)');
    expect(timedOut.coordinator.appends).toMatchObject([
      {
        transit: {
          state: TxnState.PrepareAbort,
          epoch: producerEpoch + 1,
          lastEpoch: NO_EPOCH,
          partitions: P0,
        },
      },
    ]);
    const s = take(cfg, timedOut, 'TC: failAppend(t0)');
    expect(txn(s, 0)).toMatchObject({
      epoch: producerEpoch + 1,
      hasFailedEpochFence: true,
      state: TxnState.Ongoing,
      pendingState: NO_STATE,
    });
    expect(logged(s)).toMatchObject({ state: TxnState.Ongoing, epoch: producerEpoch });
    // The next timeout abort reuses the epoch the failed fence bumped.
    expect(take(cfg, s, 'TC: transactionTimeout(t0)').coordinator.appends[0]!.transit.epoch).toBe(
      producerEpoch + 1,
    );
  });
});

// Before KAFKA-9666 (2.6) prepareFenceProducerEpoch bumps at every fence, also after a failed
// append (TransactionMetadata.scala@2.5, @0.11.0): a rule read in the source, no Kafka test.
describe('TransactionMetadata.prepareFenceProducerEpoch before KAFKA-9666 (apache/kafka 2.5 source, kafka-0.11, asynchronous appends)', () => {
  const cfg = withFailures('kafka-0.11');
  const s0 = initial(cfg);

  it('every failed fence bumps the epoch again', () => {
    const first = initPidThen(
      cfg,
      at(s0, { pid: producerId, epoch: producerEpoch, state: TxnState.Ongoing, partitions: P0 }),
      'TC: failAppend(t0)',
    );
    expect(first.reply.error).toBe(Err.COORDINATOR_NOT_AVAILABLE);
    expect(txn(first.s, 0)).toMatchObject({ epoch: producerEpoch + 1, hasFailedEpochFence: false });
    const second = initPidThen(cfg, first.s, 'TC: failAppend(t0)');
    expect(txn(second.s, 0)).toMatchObject({ epoch: producerEpoch + 2, hasFailedEpochFence: false });
    const third = initPidThen(cfg, second.s, 'TC: completeAppend(t0)');
    expect(third.reply.error).toBe(Err.CONCURRENT_TRANSACTIONS);
    expect(logged(third.s)).toMatchObject({ state: TxnState.PrepareAbort, epoch: producerEpoch + 3 });
  });
});
