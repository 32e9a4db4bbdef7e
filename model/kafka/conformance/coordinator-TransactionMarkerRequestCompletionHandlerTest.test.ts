// TransactionMarkerRequestCompletionHandlerTest: the coordinator holds a PrepareCommit of
// topic1-0 whose markers are being written (pending CompleteCommit); one WriteTxnMarkers answer
// from the leader of partition 0 reaches it.
import { describe, expect, it } from 'vitest';
import { type State, Err, NO_STATE } from '../state.ts';
import { Api, P0, TxnState, at } from './coordinator-support.ts';
import {
  TC,
  deliver,
  initial,
  kafkaConfig,
  labels,
  leader,
  requestsFrom,
  response,
  take,
  txn,
  withCoordinator,
} from './harness.ts';

const producerId = 0;
const producerEpoch = 0;

describe('TransactionMarkerRequestCompletionHandlerTest (apache/kafka 3.9 c821449f, kafka-3.8)', () => {
  const cfg = kafkaConfig('kafka-3.8');
  const sending = at(initial(cfg), {
    pid: producerId,
    epoch: producerEpoch,
    state: TxnState.PrepareCommit,
    pendingState: TxnState.CompleteCommit,
    partitions: P0,
  });
  const markerAnswer = (s: State, error: Err, coordinatorEpoch = 0): State =>
    deliver(
      cfg,
      s,
      leader(0),
      TC,
      response(Api.WriteTxnMarkers, {
        txnId: 0,
        error,
        pid: producerId,
        epoch: producerEpoch,
        partitions: 0,
        coordinatorEpoch,
      }),
      coordinatorEpoch,
    );

  it('shouldCompleteDelayedOperationWhenNoErrors', () => {
    const s = markerAnswer(sending, Err.NONE);
    expect(txn(s, 0)!.partitions).toBe(0);
    // The last partition answered: the completion (maybeWriteTxnCompletion) can be written.
    expect(labels(cfg, s)).toContain('TC: completeTransaction(t0)');
  });

  it.each([
    ['shouldCompleteDelayedOperationWhenInvalidProducerEpoch', Err.INVALID_PRODUCER_EPOCH],
    ['shouldCompleteDelayedOperationWhenCoordinatorEpochFenced', Err.TRANSACTION_COORDINATOR_FENCED],
  ])('%s', (_, error) => {
    const s = markerAnswer(sending, error);
    // removeMarkersForTxn: no marker of this transaction is sent again and CompleteCommit is never written.
    expect(labels(cfg, s).filter((l) => l.startsWith('TC: '))).toEqual([]);
    expect(txn(s, 0)).toMatchObject({ state: TxnState.PrepareCommit, pendingState: NO_STATE });
  });

  it('shouldCompleteDelayedOperationWhenCoordinatorEpochChanged', () => {
    // The coordinator moved to epoch 1 (it re-sends its own markers); the answer to epoch 0 changes nothing.
    const moved = withCoordinator(sending, { epoch: 1 });
    expect(markerAnswer(moved, Err.NONE, 0)).toEqual(moved);
  });

  it('shouldReEnqueuePartitionsWhenBrokerDisconnected', () => {
    // The request or its answer was lost with the connection: the marker is due and not on its way.
    const s = take(cfg, sending, 'TC: resendTxnMarker(t0, p0)');
    expect(requestsFrom(s, TC)).toEqual([
      expect.objectContaining({
        to: leader(0),
        request: expect.objectContaining({
          api: Api.WriteTxnMarkers,
          pid: producerId,
          epoch: producerEpoch,
          commit: true,
          partitions: 0,
          coordinatorEpoch: 0,
        }),
      }),
    ]);
  });

  it('shouldRetryPartitionWhenNotEnoughReplicasError', () => {
    const s = markerAnswer(sending, Err.NOT_ENOUGH_REPLICAS);
    expect(txn(s, 0)).toMatchObject({ partitions: P0, pendingState: TxnState.CompleteCommit });
    expect(labels(cfg, s)).toContain('TC: resendTxnMarker(t0, p0)');
  });
});

// A request timeout of the marker channel (InterBrokerSendThread, request.timeout.ms) disconnects:
// onComplete sees wasDisconnected and re-enqueues the markers (TransactionMarkerRequestCompletionHandler.scala@3.9).
describe('TransactionMarkerRequestCompletionHandlerTest, marker request timeouts (apache/kafka 3.9 c821449f, kafka-3.8)', () => {
  const cfg = kafkaConfig('kafka-3.8', { faults: { ...kafkaConfig('kafka-3.8').faults, markerTimeouts: 1 } });
  const sending = at(initial(cfg), {
    pid: producerId,
    epoch: producerEpoch,
    state: TxnState.PrepareCommit,
    pendingState: TxnState.CompleteCommit,
    partitions: P0,
  });
  const sent = take(cfg, sending, 'TC: resendTxnMarker(t0, p0)');

  it('shouldReEnqueuePartitionsWhenBrokerDisconnected (part: the request timed out)', () => {
    expect(labels(cfg, sending)).not.toContain('TC: markerTimeout(L0)'); // nothing in flight yet
    const timedOut = take(cfg, sent, 'TC: markerTimeout(L0)');
    const s = take(cfg, timedOut, 'TC: resendTxnMarker(t0, p0)');
    // The first request is still on its way on connection 0; the re-sent one goes on connection 1.
    expect(requestsFrom(s, TC).map((r) => [r.to, r.conn])).toEqual([
      [leader(0), 0],
      [leader(0), 1],
    ]);
  });

  it('ignores an answer on the connection it closed', () => {
    const timedOut = take(cfg, sent, 'TC: markerTimeout(L0)');
    const late = deliver(
      cfg,
      { ...timedOut, network: [] },
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
      0,
    );
    expect(txn(late, 0)!.partitions).toBe(P0);
    const current = deliver(
      cfg,
      { ...timedOut, network: [] },
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
      1,
    );
    expect(txn(current, 0)!.partitions).toBe(0);
  });
});
