// Coordinator emigration and loading: the cases of TransactionCoordinatorTest,
// TransactionStateManagerTest and TransactionMarkerRequestCompletionHandlerTest whose mocks answer
// getTransactionState with NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS, or move the
// __transaction_state partition. In the model a request meets NOT_COORDINATOR when it is on its
// way to a coordinator that resigns (the failover answers it), and COORDINATOR_LOAD_IN_PROGRESS
// while the new coordinator loads (asynchronous loading).
import { describe, expect, it } from 'vitest';
import type { KafkaConfig } from '../config.ts';
import { send } from '../network.ts';
import { type Request, type State, Err, NO_EPOCH, NO_PID, NO_STATE } from '../state.ts';
import { Api, P0, P1, TxnState, at, logged } from './coordinator-support.ts';
import {
  TC,
  answer,
  deliver,
  handle,
  initial,
  kafkaConfig,
  labels,
  leader,
  messages,
  request,
  requestsFrom,
  response,
  take,
  txn,
} from './harness.ts';

const producerId = 10;
const producerEpoch = 1;

function failoverConfig(generation: string, bounds: Partial<KafkaConfig> = {}): KafkaConfig {
  const faults = { ...kafkaConfig(generation).faults, coordinatorFailovers: 2 };
  return kafkaConfig(generation, { coordinatorLoading: 'async', faults, ...bounds });
}

/** P0.0's request is on its way to the coordinator (not yet delivered). */
function onItsWay(s: State, req: Request): State {
  return { ...s, network: send(s.network, 0, TC, 0, { ...req, ghostProducer: 0, ghostTxn: 0 }) };
}

// The same cases read alike at 0.11.0 (where two names spell "Coordintor") and 3.9.
describe.each([
  ['apache/kafka 0.11.0 e18335dd', 'kafka-0.11', 'Coordintor'],
  ['apache/kafka 3.9 c821449f', 'kafka-3.8', 'Coordinator'],
])(
  'TransactionCoordinatorTest (%s, %s): NOT_COORDINATOR and COORDINATOR_LOAD_IN_PROGRESS',
  (_branch, generation, spelt) => {
    const cfg = failoverConfig(generation);
    const known = at(initial(cfg), {
      pid: producerId,
      epoch: producerEpoch,
      state: TxnState.Ongoing,
      partitions: P0,
    });
    const loading = take(cfg, known, 'TC: coordinatorFailover');
    const requests: [string, string, Request][] = [
      ['InitPid', `InitPidWhen${spelt}Loading`, request(Api.InitProducerId, { txnId: 0 })],
      [
        'AddPartitions',
        `AddPartitionsWhen${spelt}Loading`,
        request(Api.AddPartitionsToTxn, { txnId: 0, pid: producerId, epoch: producerEpoch, partitions: P1 }),
      ],
      [
        'EndTxn',
        'EndTxnWhenCoordinatorIsLoading',
        request(Api.EndTxn, { txnId: 0, pid: producerId, epoch: producerEpoch, commit: true }),
      ],
    ];

    it.each(requests)('shouldRespondWithCoordinatorLoadInProgressOn%s (…%s)', (_api, _name, req) => {
      const s = handle(cfg, loading, 0, TC, req);
      const reply = answer(s, TC, 0);
      expect(reply.error).toBe(Err.COORDINATOR_LOAD_IN_PROGRESS);
      // InitProducerIdResult(-1, -1, COORDINATOR_LOAD_IN_PROGRESS): no producer id is allocated.
      if (req.api === Api.InitProducerId) expect(reply).toMatchObject({ pid: NO_PID, epoch: NO_EPOCH });
      expect(s.coordinator).toEqual(loading.coordinator);
    });

    it.each(requests)(
      'shouldRespondWithNotCoordinatorOn%s… (the request reaches a coordinator that resigned)',
      (_api, _name, req) => {
        const s = take(cfg, onItsWay(known, req), 'TC: coordinatorFailover');
        const reply = answer(s, TC, 0);
        expect(reply.error).toBe(Err.NOT_COORDINATOR);
        if (req.api === Api.InitProducerId) expect(reply).toMatchObject({ pid: NO_PID, epoch: NO_EPOCH });
        // The request changed nothing: the new coordinator loads what the log holds.
        expect(logged(s)).toEqual(logged(known));
      },
    );

    it('shouldRemoveTransactionsForPartitionOnEmigration', () => {
      const preparing = at(initial(cfg), {
        pid: producerId,
        epoch: producerEpoch,
        state: TxnState.PrepareCommit,
        pendingState: TxnState.CompleteCommit,
        partitions: P0,
      });
      const s = take(cfg, preparing, 'TC: coordinatorFailover');
      // removeTransactionsForTxnTopicPartition: the metadata is gone from memory, not from the log.
      expect(txn(s, 0)).toBeNull();
      expect(logged(s)).toMatchObject({ state: TxnState.PrepareCommit, partitions: P0 });
      // removeMarkersForTxnTopicPartition: the old coordinator sends no marker of it again.
      expect(labels(cfg, s)).not.toContain('TC: resendTxnMarker(t0, p0)');
      expect(requestsFrom(s, TC)).toEqual([]);
    });
  },
);

describe('TransactionStateManagerTest (apache/kafka 3.9 c821449f, kafka-3.8): emigration while an append is in flight', () => {
  const cfg = failoverConfig('kafka-3.8', { coordinatorAppends: 'async' });
  const empty = at(initial(cfg), { pid: producerId, epoch: producerEpoch, state: TxnState.Empty });
  const adding = handle(
    cfg,
    empty,
    0,
    TC,
    request(Api.AddPartitionsToTxn, { txnId: 0, pid: producerId, epoch: producerEpoch, partitions: P0 | P1 }),
  );

  it('offers the failover with the append kept in the log and with it lost', () => {
    expect(labels(cfg, adding)).toEqual(
      expect.arrayContaining(['TC: coordinatorFailover(t0 kept)', 'TC: coordinatorFailover(t0 lost)']),
    );
    expect(labels(cfg, adding)).not.toContain('TC: coordinatorFailover');
  });

  it('testAppendFailToNotCoordinatorError (part: the append succeeds after the partition emigrated)', () => {
    const s = take(cfg, adding, 'TC: coordinatorFailover(t0 kept)');
    // The cached coordinator epoch changed after the append: NOT_COORDINATOR, though the record is written.
    expect(answer(s, TC, 0).error).toBe(Err.NOT_COORDINATOR);
    expect(logged(s)).toMatchObject({ state: TxnState.Ongoing, partitions: P0 | P1 });
    expect(s.coordinator.appends).toEqual([]);
    // The new coordinator loads the record the old one wrote.
    expect(txn(take(cfg, s, 'TC: loadTransactions'), 0)).toMatchObject({
      state: TxnState.Ongoing,
      pendingState: NO_STATE,
      partitions: P0 | P1,
    });
  });

  it('testAppendFailToNotCoordinatorError (part: NOT_LEADER_OR_FOLLOWER, the record truncated)', () => {
    const s = take(cfg, adding, 'TC: coordinatorFailover(t0 lost)');
    expect(answer(s, TC, 0).error).toBe(Err.NOT_COORDINATOR);
    expect(logged(s)).toMatchObject({ state: TxnState.Empty, partitions: 0 });
    expect(txn(take(cfg, s, 'TC: loadTransactions'), 0)).toMatchObject({
      state: TxnState.Empty,
      pendingState: NO_STATE,
      partitions: 0,
    });
  });

  it('testLoadAndRemoveTransactionsForPartition (part: memory is rebuilt from the log with the new coordinator epoch)', () => {
    const twoIds = failoverConfig('kafka-3.8', { transactionalIds: 2 });
    let s = at(initial(twoIds), {
      pid: producerId,
      epoch: producerEpoch,
      state: TxnState.Ongoing,
      partitions: P0,
    });
    s = take(twoIds, s, 'TC: coordinatorFailover');
    expect(s.coordinator).toMatchObject({ epoch: 1, loading: true, metadata: [null, null] });
    s = take(twoIds, s, 'TC: loadTransactions');
    expect(s.coordinator).toMatchObject({ epoch: 1, loading: false });
    expect(txn(s, 0)).toMatchObject({
      pid: producerId,
      epoch: producerEpoch,
      state: TxnState.Ongoing,
      partitions: P0,
    });
    expect(txn(s, 1)).toBeNull();
  });

  it.each([
    ['shouldWriteTxnMarkersForTransactionInPreparedCommitState', TxnState.PrepareCommit, true],
    ['shouldWriteTxnMarkersForTransactionInPreparedAbortState', TxnState.PrepareAbort, false],
  ])('%s', (_name, state, commit) => {
    const atomicAppends = failoverConfig('kafka-3.8');
    let s = take(
      atomicAppends,
      at(initial(atomicAppends), { pid: producerId, epoch: producerEpoch, state, partitions: P0 | P1 }),
      'TC: coordinatorFailover',
    );
    expect(requestsFrom(s, TC)).toEqual([]);
    s = take(atomicAppends, s, 'TC: loadTransactions');
    const marker = {
      api: Api.WriteTxnMarkers,
      pid: producerId,
      epoch: producerEpoch,
      commit,
      coordinatorEpoch: 1,
    };
    expect(requestsFrom(s, TC)).toEqual([
      { to: leader(0), conn: 1, request: expect.objectContaining({ ...marker, partitions: 0 }) },
      { to: leader(1), conn: 1, request: expect.objectContaining({ ...marker, partitions: 1 }) },
    ]);
    expect(txn(s, 0)).toMatchObject({
      state,
      pendingState: commit ? TxnState.CompleteCommit : TxnState.CompleteAbort,
    });
  });
});

describe('TransactionMarkerRequestCompletionHandlerTest (apache/kafka 3.9 c821449f, kafka-3.8): answers while loading', () => {
  const cfg = failoverConfig('kafka-3.8');
  const sending = at(initial(cfg), {
    pid: producerId,
    epoch: producerEpoch,
    state: TxnState.PrepareCommit,
    pendingState: TxnState.CompleteCommit,
    partitions: P0,
  });
  const loading = take(cfg, sending, 'TC: coordinatorFailover');

  it.each([
    'shouldCompleteDelayedOperationWhenCoordinatorLoading',
    'shouldCompleteDelayedOperationWhenNotCoordinator',
  ])('%s', () => {
    // The old coordinator's marker is acknowledged after it resigned: nothing is completed or re-sent.
    const acked = deliver(
      cfg,
      loading,
      leader(0),
      TC,
      response(Api.WriteTxnMarkers, {
        txnId: 0,
        error: Err.NONE,
        pid: producerId,
        epoch: producerEpoch,
        partitions: 0,
        coordinatorEpoch: 0,
      }),
    );
    expect(acked).toEqual(loading);
    expect(labels(cfg, acked).filter((l) => l.startsWith('TC: '))).toEqual([
      'TC: coordinatorFailover',
      'TC: loadTransactions',
    ]);
  });
});

describe('A failover answers what is on its way to the old coordinator (source: TransactionStateManager.getTransactionState@3.9)', () => {
  it("keeps the leaders' marker answers, which the new coordinator drops by their coordinator epoch", () => {
    const cfg = failoverConfig('kafka-3.8');
    const sending = at(initial(cfg), {
      pid: producerId,
      epoch: producerEpoch,
      state: TxnState.PrepareCommit,
      pendingState: TxnState.CompleteCommit,
      partitions: P0,
    });
    const ack = response(Api.WriteTxnMarkers, {
      txnId: 0,
      error: Err.NONE,
      pid: producerId,
      epoch: producerEpoch,
      partitions: 0,
      coordinatorEpoch: 0,
    });
    const s = take(
      cfg,
      { ...sending, network: send(sending.network, leader(0), TC, 0, ack) },
      'TC: coordinatorFailover',
    );
    expect(messages(s, leader(0), TC, 0)).toEqual([ack]);
  });
});
