// Coordinator rules that Kafka's unit tests leave unasserted, checked against the source they come
// from (apache/kafka 3.9 c821449f unless named): TransactionCoordinator.handleAddPartitionsToTransaction,
// the producer-id allocation of handleInitProducerId, the markers of endTransaction, the marker
// channel's re-sends, abortTimedOutTransactions, and the reload of onElection.
import { describe, expect, it } from 'vitest';
import { type State, Err, NO_STATE, Told } from '../state.ts';
import { Api, P0, P1, TxnState, ask, at, logged } from './coordinator-support.ts';
import {
  TC,
  deliver,
  initial,
  kafkaConfig,
  labels,
  leader,
  messages,
  requestsFrom,
  response,
  take,
  txn,
} from './harness.ts';

const PID = 10;
const EPOCH = 1;

describe.each([
  ['kafka-3.5', 'kafka-3.5'],
  ['kafka-3.8', 'kafka-3.8'],
])('TransactionCoordinator.handleAddPartitionsToTransaction (apache/kafka 3.9, %s)', (_, generation) => {
  const cfg = kafkaConfig(generation);
  const s0 = initial(cfg);

  it('a transition in progress is CONCURRENT_TRANSACTIONS (pendingTransitionInProgress)', () => {
    const s = at(s0, {
      pid: PID,
      epoch: EPOCH,
      state: TxnState.Ongoing,
      partitions: P0,
      pendingState: TxnState.PrepareCommit,
    });
    expect(ask(cfg, s, Api.AddPartitionsToTxn, { pid: PID, epoch: EPOCH, partitions: P1 }).reply.error).toBe(
      Err.CONCURRENT_TRANSACTIONS,
    );
  });

  it('partitions already in the Ongoing transaction are answered NONE without a log append', () => {
    const s = at(s0, { pid: PID, epoch: EPOCH, state: TxnState.Ongoing, partitions: P0 | P1 });
    const { s: after, reply } = ask(cfg, s, Api.AddPartitionsToTxn, {
      pid: PID,
      epoch: EPOCH,
      partitions: P0,
    });
    expect(reply.error).toBe(Err.NONE);
    expect(after.coordinator).toEqual(s.coordinator);
  });

  it('new partitions join the Ongoing transaction (prepareAddPartitions keeps the old ones)', () => {
    const s = at(s0, { pid: PID, epoch: EPOCH, state: TxnState.Ongoing, partitions: P0 });
    const { s: after, reply } = ask(cfg, s, Api.AddPartitionsToTxn, {
      pid: PID,
      epoch: EPOCH,
      partitions: P1,
    });
    expect(reply.error).toBe(Err.NONE);
    expect(logged(after)).toMatchObject({ state: TxnState.Ongoing, partitions: P0 | P1 });
  });
});

describe('TransactionCoordinator.handleInitProducerId (apache/kafka 3.9, kafka-3.5): a new transactional.id gets the next producer id', () => {
  it('two transactional.ids get distinct producer ids, each at epoch 0', () => {
    const cfg = kafkaConfig('kafka-3.5', { transactionalIds: 2 });
    // Instance 0 of t0 is producer 0, instance 0 of t1 is producer 1.
    let s = take(cfg, take(cfg, initial(cfg), 'P0.0: initTransactions'), 'P1.0: initTransactions');
    s = take(cfg, take(cfg, s, 'deliver P0.0→TC: InitProducerId'), 'deliver P1.0→TC: InitProducerId');
    const first = messages(s, TC, 0)[0]!;
    const second = messages(s, TC, 1)[0]!;
    expect(first).toMatchObject({ error: Err.NONE, epoch: 0 });
    expect(second).toMatchObject({ error: Err.NONE, epoch: 0 });
    expect(first.pid).not.toBe(second.pid);
    expect(s.coordinator.nextPid).toBe(2);
  });
});

describe('TransactionCoordinator.endTransaction and the marker channel (apache/kafka 3.9, kafka-3.5)', () => {
  const cfg = kafkaConfig('kafka-3.5', {
    faults: {
      ...kafkaConfig('kafka-3.5').faults,
      requestLoss: 1,
      transactionTimeouts: 1,
      coordinatorFailovers: 1,
    },
  });
  const ongoing = (partitions: number, ghostTxn = 0): State =>
    at(initial(cfg), { pid: PID, epoch: EPOCH, state: TxnState.Ongoing, partitions, ghostTxn });
  const committing = (): State =>
    ask(cfg, ongoing(P1), Api.EndTxn, { pid: PID, epoch: EPOCH, commit: true }).s;

  it("a commit sends one WriteTxnMarkers per partition to that partition's leader, at the transaction's epoch and the coordinator epoch", () => {
    const markers = requestsFrom(committing(), TC);
    expect(markers).toHaveLength(1);
    expect(markers[0]).toMatchObject({
      to: leader(1),
      conn: 0,
      request: {
        api: Api.WriteTxnMarkers,
        pid: PID,
        epoch: EPOCH,
        partitions: 1,
        commit: true,
        coordinatorEpoch: 0,
      },
    });
  });

  it('ghost history: the client transaction the coordinator prepares to commit is marked prepared', () => {
    const s = committing();
    expect(s.history[0]).toMatchObject({ prepared: true, told: Told.Nothing });
    expect(
      ask(cfg, ongoing(P1), Api.EndTxn, { pid: PID, epoch: EPOCH, commit: false }).s.history[0]!.prepared,
    ).toBe(false);
  });

  it('a marker is re-sent only when neither it nor its answer is on the way, and only while its partition is due', () => {
    const resend = 'TC: resendTxnMarker(t0, p1)';
    const sent = committing();
    expect(labels(cfg, sent)).not.toContain(resend);
    // The request is lost: the channel manager sends it again.
    const lost = take(cfg, sent, 'lose TC→L1: WriteTxnMarkers');
    expect(labels(cfg, lost)).toContain(resend);
    expect(requestsFrom(take(cfg, lost, resend), TC)).toHaveLength(1);
    // Delivered: its answer is on the way, so nothing is re-sent; once acknowledged, the partition is no longer due.
    const answered = take(cfg, sent, 'deliver TC→L1: WriteTxnMarkers');
    expect(labels(cfg, answered)).not.toContain(resend);
    const acked = take(cfg, answered, 'deliver L1→TC: WriteTxnMarkers response');
    expect(txn(acked, 0)).toMatchObject({ partitions: 0, pendingState: TxnState.CompleteCommit });
    expect(labels(cfg, acked)).not.toContain(resend);
    expect(labels(cfg, acked)).toContain('TC: completeTransaction(t0)');
  });

  it("the re-send is per partition: a lost marker is re-sent while another partition's marker is still on the way", () => {
    const both = ask(cfg, ongoing(P0 | P1), Api.EndTxn, { pid: PID, epoch: EPOCH, commit: true }).s;
    const lost = take(cfg, both, 'lose TC→L0: WriteTxnMarkers');
    expect(labels(cfg, lost)).toContain('TC: resendTxnMarker(t0, p0)');
    expect(labels(cfg, lost)).not.toContain('TC: resendTxnMarker(t0, p1)');
  });

  it('an answer about another producer id is ignored (TransactionMarkerRequestCompletionHandler matches the transaction)', () => {
    const sent = committing();
    const stale = deliver(
      cfg,
      { ...sent, network: [] },
      leader(1),
      TC,
      response(Api.WriteTxnMarkers, {
        txnId: 0,
        error: Err.NONE,
        pid: PID + 1,
        partitions: 1,
        coordinatorEpoch: 0,
      }),
    );
    expect(txn(stale, 0)).toEqual(txn(sent, 0));
  });

  it('abortTimedOutTransactions takes only an Ongoing transaction with no transition in progress', () => {
    const timeout = 'TC: transactionTimeout(t0)';
    expect(labels(cfg, ongoing(P0))).toContain(timeout);
    expect(
      labels(
        cfg,
        at(initial(cfg), {
          pid: PID,
          epoch: EPOCH,
          state: TxnState.Ongoing,
          partitions: P0,
          pendingState: TxnState.PrepareCommit,
        }),
      ),
    ).not.toContain(timeout);
    expect(labels(cfg, committing())).not.toContain(timeout);
    expect(labels(cfg, initial(cfg))).not.toContain(timeout);
  });

  it('onElection reloads every transaction from __transaction_state at the next coordinator epoch and re-sends the markers of a Prepare* transaction', () => {
    const before = committing();
    const after = take(cfg, { ...before, network: [] }, 'TC: coordinatorFailover');
    expect(after.coordinator.epoch).toBe(1);
    expect(txn(after, 0)).toMatchObject({
      pid: PID,
      epoch: EPOCH,
      state: TxnState.PrepareCommit,
      pendingState: TxnState.CompleteCommit,
      partitions: P1,
      lastEpoch: -1,
    });
    expect(requestsFrom(after, TC)).toMatchObject([
      {
        to: leader(1),
        conn: 1,
        request: { api: Api.WriteTxnMarkers, commit: true, coordinatorEpoch: 1, partitions: 1 },
      },
    ]);
  });

  it('onElection reloads an Ongoing transaction as Ongoing, with no transition in progress and no marker', () => {
    const after = take(cfg, ongoing(P0 | P1), 'TC: coordinatorFailover');
    expect(txn(after, 0)).toMatchObject({
      state: TxnState.Ongoing,
      pendingState: NO_STATE,
      partitions: P0 | P1,
    });
    expect(requestsFrom(after, TC)).toEqual([]);
  });

  it('onElection reloads a PrepareAbort transaction with CompleteAbort pending', () => {
    const aborting = ask(cfg, ongoing(P0), Api.EndTxn, { pid: PID, epoch: EPOCH, commit: false }).s;
    const after = take(cfg, { ...aborting, network: [] }, 'TC: coordinatorFailover');
    expect(txn(after, 0)).toMatchObject({
      state: TxnState.PrepareAbort,
      pendingState: TxnState.CompleteAbort,
      partitions: P0,
    });
    expect(requestsFrom(after, TC)).toMatchObject([
      { to: leader(0), request: { commit: false, coordinatorEpoch: 1 } },
    ]);
  });
});

describe('TransactionCoordinator.endTransaction, transaction version 2 (apache/kafka 4.0 era, kafka-4.0 with pendingCheckFirst off)', () => {
  it("a transition in progress is CONCURRENT_TRANSACTIONS after a valid epoch, and the answer carries the coordinator's producer id and epoch", () => {
    const cfg = kafkaConfig('kafka-4.0', {}, { pendingCheckFirst: false });
    const s = at(initial(cfg), {
      pid: PID,
      epoch: EPOCH,
      state: TxnState.Ongoing,
      partitions: P0,
      pendingState: TxnState.PrepareCommit,
    });
    expect(ask(cfg, s, Api.EndTxn, { pid: PID, epoch: EPOCH, commit: true }).reply).toMatchObject({
      error: Err.CONCURRENT_TRANSACTIONS,
      pid: PID,
      epoch: EPOCH,
    });
    // A wrong epoch is fenced first when the pending check comes after it.
    expect(ask(cfg, s, Api.EndTxn, { pid: PID, epoch: EPOCH + 5, commit: true }).reply.error).toBe(
      Err.PRODUCER_FENCED,
    );
  });
});
