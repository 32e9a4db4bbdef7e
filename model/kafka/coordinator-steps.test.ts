// Coordinator steps that Kafka's unit tests leave unasserted, one request or action each, checked
// against the source they come from (apache/kafka 3.9 c821449f unless named; TV2 rules from trunk's
// TransactionCoordinator.scala, the 4.0 line): which marker connection a timeout may close, when an
// idle transactional.id may expire, what a failed append remembers, the appends of several
// transactional.ids in flight at once, the ghost notes of a written PrepareCommit and of an epoch
// grant, and what a failover does to the messages on their way.
import { describe, expect, it } from 'vitest';
import type { KafkaConfig } from './config.ts';
import { pendingAppend, transactionTimeout } from './coordinator.ts';
import { send } from './network.ts';
import {
  type Message,
  type State,
  Api,
  Err,
  KAFKA_MAX_EPOCH,
  LEADER_BASE,
  NO_EPOCH,
  NO_PID,
  NO_STATE,
  TC_NODE,
  TxnState,
} from './state.ts';
import { P0, P1, ask, at, logged } from './conformance/coordinator-support.ts';
import {
  type Bounds,
  TC,
  answer,
  handle,
  initial,
  kafkaConfig,
  labels,
  leader,
  messages,
  request,
  response,
  take,
  txn,
  withProducerEntry,
  withTxn,
} from './conformance/harness.ts';

const PID = 10;
const EPOCH = 1;
const exhausted = KAFKA_MAX_EPOCH - 1;

/** `generation` with fault budgets; `faults` only adds to the harness's zero budgets. */
function config(
  generation: string,
  faults: Partial<KafkaConfig['faults']>,
  bounds: Bounds = {},
  rules = {},
): KafkaConfig {
  return kafkaConfig(
    generation,
    { faults: { ...kafkaConfig(generation).faults, ...faults }, ...bounds },
    rules,
  );
}

/** `message` is on its way from `from` to `to` on connection `conn`, not yet delivered. */
function inFlight(s: State, from: number, to: number, message: Message, conn = 0): State {
  return { ...s, network: send(s.network, from, to, conn, message) };
}

const markerAnswer = (p: number): Message =>
  response(Api.WriteTxnMarkers, {
    txnId: 0,
    error: Err.NONE,
    pid: PID,
    epoch: EPOCH,
    partitions: p,
    coordinatorEpoch: 0,
  });
const produceRequest = (p: number): Message =>
  request(Api.Produce, {
    txnId: 0,
    pid: PID,
    epoch: EPOCH,
    partitions: p,
    seq: 0,
    ghostProducer: 0,
    ghostTxn: 0,
  });

describe("the coordinator's marker connections", () => {
  it("one to each leader, the group coordinator of the transform app's __consumer_offsets partition too", () => {
    const cfg = kafkaConfig('kafka-3.8', { app: 'consume-transform-produce', inputRecords: 1 });
    const s = initial(cfg);
    expect(s.partitions).toHaveLength(cfg.partitions + 1);
    expect(s.coordinator.markerConns).toEqual(s.partitions.map(() => 0));
  });
});

// InterBrokerSendThread times out a request it sent on a connection it still has open; the
// completion handler then sees wasDisconnected (TransactionMarkerRequestCompletionHandler.scala).
describe('a marker timeout closes the connection of a marker still in flight to or from that leader', () => {
  const cfg = config('kafka-3.8', { markerTimeouts: 2 });
  const sending = at(initial(cfg), {
    pid: PID,
    epoch: EPOCH,
    state: TxnState.PrepareCommit,
    pendingState: TxnState.CompleteCommit,
    partitions: P0 | P1,
  });
  const timeouts = (s: State): string[] => labels(cfg, s).filter((l) => l.startsWith('TC: markerTimeout'));

  it("a request to a leader may time out on that leader's connection only", () => {
    expect(timeouts(take(cfg, sending, 'TC: resendTxnMarker(t0, p1)'))).toEqual(['TC: markerTimeout(L1)']);
    expect(timeouts(take(cfg, sending, 'TC: resendTxnMarker(t0, p0)'))).toEqual(['TC: markerTimeout(L0)']);
  });

  it('so may the answer on its way back, and only for the leader that sent it', () => {
    const answered = take(
      cfg,
      take(cfg, sending, 'TC: resendTxnMarker(t0, p1)'),
      'deliver TC→L1: WriteTxnMarkers',
    );
    expect(messages(answered, leader(1), TC)).toHaveLength(1);
    expect(timeouts(answered)).toEqual(['TC: markerTimeout(L1)']);
  });

  it('a marker left on a connection that already timed out is no reason for another timeout', () => {
    const timedOut = take(cfg, take(cfg, sending, 'TC: resendTxnMarker(t0, p0)'), 'TC: markerTimeout(L0)');
    expect(messages(timedOut, TC, leader(0), 0)).toHaveLength(1);
    expect(timeouts(timedOut)).toEqual([]);
    expect(timeouts(take(cfg, timedOut, 'TC: resendTxnMarker(t0, p0)'))).toEqual(['TC: markerTimeout(L0)']);
  });

  it("a client's request or a Produce in flight is no marker", () => {
    let s = inFlight(
      sending,
      0,
      TC,
      request(Api.EndTxn, { txnId: 0, pid: PID, epoch: EPOCH, commit: true, ghostProducer: 0, ghostTxn: 0 }),
    );
    s = inFlight(s, 0, leader(0), produceRequest(0));
    expect(timeouts(s)).toEqual([]);
  });
});

describe('TransactionMarkerChannelManager: a marker is re-sent per transactional.id', () => {
  it("another transactional.id's marker in flight to the same leader does not hold this one back", () => {
    const cfg = kafkaConfig('kafka-3.8', { transactionalIds: 2 });
    const prepared = { state: TxnState.PrepareCommit, pendingState: TxnState.CompleteCommit, partitions: P0 };
    const both = withTxn(at(initial(cfg), { pid: PID, epoch: EPOCH, ...prepared }), 1, {
      pid: PID + 1,
      epoch: 0,
      ...prepared,
    });
    const s = take(cfg, both, 'TC: resendTxnMarker(t1, p0)');
    expect(labels(cfg, s)).toContain('TC: resendTxnMarker(t0, p0)');
    expect(labels(cfg, s)).not.toContain('TC: resendTxnMarker(t1, p0)');
  });
});

// removeExpiredTransactionalIds: only with no pending transition (pendingState.isEmpty) and in a
// state that allows expiration, once txnLastUpdateTimestamp is old enough. In the model an id is
// idle while nothing for it is on its way to the coordinator.
describe('TransactionStateManager.removeExpiredTransactionalIds: which transactional.id may expire', () => {
  const cfg = config(
    'kafka-3.8',
    { transactionalIdExpiries: 1 },
    { transactionalIds: 2, coordinatorAppends: 'async' },
  );
  const idle = withTxn(at(initial(cfg), { pid: PID, epoch: EPOCH, state: TxnState.CompleteCommit }), 1, {
    pid: PID + 1,
    epoch: 0,
  });
  const expiries = (s: State): string[] =>
    labels(cfg, s).filter((l) => l.startsWith('TC: transactionalIdExpiry'));

  it('both idle ids may expire', () => {
    expect(expiries(idle)).toEqual(['TC: transactionalIdExpiry(t0)', 'TC: transactionalIdExpiry(t1)']);
  });

  it('not while a transition of it is pending (the append of a new transaction in flight)', () => {
    const s = handle(
      cfg,
      idle,
      0,
      TC,
      request(Api.AddPartitionsToTxn, { txnId: 0, pid: PID, epoch: EPOCH, partitions: P0 }),
    );
    expect(txn(s, 0)!.pendingState).toBe(TxnState.Ongoing);
    expect(expiries(s)).toEqual(['TC: transactionalIdExpiry(t1)']);
  });

  it("not while a request of it is on its way to the coordinator; another id's request keeps only that id", () => {
    const s = inFlight(idle, 0, TC, request(Api.InitProducerId, { txnId: 0, ghostProducer: 0, ghostTxn: 0 }));
    expect(expiries(s)).toEqual(['TC: transactionalIdExpiry(t1)']);
  });

  it("a Produce on its way to a leader, a marker answer or an answer to the client do not reach the coordinator's metadata", () => {
    let s = inFlight(idle, 0, leader(0), produceRequest(0));
    s = inFlight(s, leader(0), TC, markerAnswer(0));
    s = inFlight(s, TC, 0, response(Api.EndTxn, { txnId: 0, error: Err.NONE, pid: PID, epoch: EPOCH }));
    expect(expiries(s)).toEqual(['TC: transactionalIdExpiry(t0)', 'TC: transactionalIdExpiry(t1)']);
  });
});

// timedOutTransactions: only an Ongoing transaction with no pending transition times out.
describe('TransactionStateManager.timedOutTransactions: which transaction may time out', () => {
  const cfg = config('kafka-3.8', { transactionTimeouts: 1 });
  it.each([
    ['Empty', TxnState.Empty],
    ['CompleteCommit', TxnState.CompleteCommit],
    ['CompleteAbort', TxnState.CompleteAbort],
  ])('not in %s', (_name, state) => {
    expect(labels(cfg, at(initial(cfg), { pid: PID, epoch: EPOCH, state }))).not.toContain(
      'TC: transactionTimeout(t0)',
    );
  });

  it('an Ongoing one at the maximum epoch neither times out nor changes when asked to (prepareFenceProducerEpoch throws)', () => {
    const s = at(initial(cfg), { pid: PID, epoch: KAFKA_MAX_EPOCH, state: TxnState.Ongoing, partitions: P0 });
    expect(labels(cfg, s)).not.toContain('TC: transactionTimeout(t0)');
    const after = transactionTimeout(cfg, s, 0);
    expect(after.coordinator).toEqual(s.coordinator);
    expect(after.network).toEqual(s.network);
  });
});

// hasFailedEpochFence is set only where endTransaction's append callback fails and isEpochFence is
// true (TransactionCoordinator.scala@3.9, KAFKA-9666): a fence's PrepareAbort. Any other failed
// append leaves it clear, so the next fence bumps the epoch.
describe('TransactionCoordinator.endTransaction: only a failed fence is remembered', () => {
  const faults = { appendFailures: 1, transactionTimeouts: 1 };
  const failed = (cfg: KafkaConfig, s: State): State => take(cfg, s, 'TC: failAppend(t0)');
  const remembered = (s: State): boolean => txn(s, 0)!.hasFailedEpochFence;

  const v1 = config('kafka-3.8', faults, { coordinatorAppends: 'async', instancesPerId: 2 });
  const v2 = config('kafka-4.0', faults, { coordinatorAppends: 'async' });
  const noTimeoutFence = config(
    'kafka-3.8',
    faults,
    { coordinatorAppends: 'async' },
    { timeoutFence: false },
  );
  const empty = (cfg: KafkaConfig) => at(initial(cfg), { pid: PID, epoch: EPOCH, state: TxnState.Empty });
  const ongoing = (cfg: KafkaConfig) =>
    at(initial(cfg), { pid: PID, epoch: EPOCH, state: TxnState.Ongoing, partitions: P0 });

  it.each([
    [
      'an InitProducerId epoch bump',
      v1,
      () => handle(v1, empty(v1), 0, TC, request(Api.InitProducerId, { txnId: 0 })),
    ],
    [
      'an AddPartitionsToTxn',
      v1,
      () =>
        handle(
          v1,
          empty(v1),
          0,
          TC,
          request(Api.AddPartitionsToTxn, { txnId: 0, pid: PID, epoch: EPOCH, partitions: P0 }),
        ),
    ],
    [
      'a TV1 EndTxn',
      v1,
      () =>
        handle(
          v1,
          ongoing(v1),
          0,
          TC,
          request(Api.EndTxn, { txnId: 0, pid: PID, epoch: EPOCH, commit: true }),
        ),
    ],
    [
      'a TV2 EndTxn (its epoch bump is no fence)',
      v2,
      () =>
        handle(
          v2,
          ongoing(v2),
          0,
          TC,
          request(Api.EndTxn, { txnId: 0, pid: PID, epoch: EPOCH, commit: false }),
        ),
    ],
    [
      'a timeout abort that bumps no epoch (before KAFKA-6119)',
      noTimeoutFence,
      () => take(noTimeoutFence, ongoing(noTimeoutFence), 'TC: transactionTimeout(t0)'),
    ],
  ])('%s whose append fails', (_name, cfg, started) => {
    const s = failed(cfg, started());
    expect(txn(s, 0)!.pendingState).toBe(NO_STATE);
    expect(remembered(s)).toBe(false);
  });

  it('a fence whose append fails is remembered', () => {
    const s = failed(v1, handle(v1, ongoing(v1), 1, TC, request(Api.InitProducerId, { txnId: 0 })));
    expect(remembered(s)).toBe(true);
  });

  // KAFKA-19367 (4.0.1, 4.1.0; TransactionCoordinatorTest.testTV2AllowsEpochReBumpingAfterFailedWrite):
  // a version-2 fence bumps only in prepareAbortOrCommit, so a failed one leaves the old epoch.
  it('tv2FenceKeepsEpoch: a version-2 fence leaves memory at the old epoch, and a failed one is not remembered', () => {
    const fence = (cfg: KafkaConfig): State => take(cfg, ongoing(cfg), 'TC: transactionTimeout(t0)');
    const keeps = config('kafka-4.1', faults, { coordinatorAppends: 'async' });
    const pending = fence(keeps);
    expect(txn(pending, 0)).toMatchObject({ epoch: EPOCH, pendingState: TxnState.PrepareAbort });
    expect(pendingAppend(pending, 0)!.transit).toMatchObject({
      epoch: EPOCH + 1,
      lastEpoch: EPOCH,
      state: TxnState.PrepareAbort,
    });
    const kept = failed(keeps, pending);
    expect(txn(kept, 0)).toMatchObject({ epoch: EPOCH, pendingState: NO_STATE, hasFailedEpochFence: false });
    // The next fence bumps from the old epoch again: PrepareAbort at epoch + 1, not + 2.
    const again = handle(keeps, kept, 0, TC, request(Api.InitProducerId, { txnId: 0 }));
    expect(pendingAppend(again, 0)!.transit).toMatchObject({
      epoch: EPOCH + 1,
      state: TxnState.PrepareAbort,
    });
    // 4.0.0 (the switch off): memory is bumped during the append, and the failure is remembered.
    const bumps = fence(v2);
    expect(txn(bumps, 0)).toMatchObject({ epoch: EPOCH + 1 });
    expect(pendingAppend(bumps, 0)!.transit).toMatchObject({ epoch: EPOCH + 1, lastEpoch: NO_EPOCH });
    expect(txn(failed(v2, bumps), 0)).toMatchObject({ epoch: EPOCH + 1, hasFailedEpochFence: true });
    // A fence at the brokers' transaction version 1 keeps the old rule under the switch.
    const tv1 = config('kafka-4.1', faults, { coordinatorAppends: 'async', transactionVersion: 1 });
    expect(txn(failed(tv1, fence(tv1)), 0)).toMatchObject({ epoch: EPOCH + 1, hasFailedEpochFence: true });
  });

  // Kafka 4.0.0 (question 3 of docs/guides/real-kafka.md: its ABORT marker at epoch 2, the new
  // instance at 3): the fence bumps memory, then prepareAbortOrCommit bumps again.
  it('tv2FenceBumpsTwice: a version-2 fence (here a timeout abort) of 4.0.0 appends its PrepareAbort at epoch + 2', () => {
    const fence = (cfg: KafkaConfig): State => take(cfg, ongoing(cfg), 'TC: transactionTimeout(t0)');
    const twice = config('kafka-4.0', faults, { coordinatorAppends: 'async' }, { tv2FenceBumpsTwice: true });
    const pending = fence(twice);
    expect(txn(pending, 0)).toMatchObject({ epoch: EPOCH + 1, pendingState: TxnState.PrepareAbort });
    expect(pendingAppend(pending, 0)!.transit).toMatchObject({ epoch: EPOCH + 2, lastEpoch: EPOCH + 1 });
    // The fix supersedes it; at transaction version 1 the fence bumps once.
    const fixed = config(
      'kafka-4.0',
      faults,
      { coordinatorAppends: 'async' },
      {
        tv2FenceBumpsTwice: true,
        tv2FenceKeepsEpoch: true,
      },
    );
    expect(pendingAppend(fence(fixed), 0)!.transit).toMatchObject({ epoch: EPOCH + 1 });
    const tv1 = config(
      'kafka-4.0',
      faults,
      { coordinatorAppends: 'async', transactionVersion: 1 },
      { tv2FenceBumpsTwice: true },
    );
    expect(pendingAppend(fence(tv1), 0)!.transit).toMatchObject({ epoch: EPOCH + 1 });
  });

  it('the metadata a failed first InitProducerId leaves is Empty, with no epoch, no transaction and no failed fence', () => {
    const s = failed(v1, handle(v1, initial(v1), 0, TC, request(Api.InitProducerId, { txnId: 0 })));
    // initTransactionError: the failed grant names no producer id or epoch.
    expect(answer(s, TC, 0)).toMatchObject({
      error: Err.COORDINATOR_NOT_AVAILABLE,
      pid: NO_PID,
      epoch: NO_EPOCH,
    });
    expect(txn(s, 0)).toEqual({
      pid: 0,
      epoch: NO_EPOCH,
      lastEpoch: NO_EPOCH,
      state: TxnState.Empty,
      pendingState: NO_STATE,
      partitions: 0,
      ghostTxn: -1,
      hasFailedEpochFence: false,
      prevPid: NO_PID,
      nextPid: NO_PID,
      transactionVersion: 1,
    });
  });

  it('a failed epoch bump is answered like any InitProducerId error, without the id and epoch it would have granted', () => {
    const s = failed(
      v1,
      handle(v1, empty(v1), 0, TC, request(Api.InitProducerId, { txnId: 0, pid: PID, epoch: EPOCH })),
    );
    expect(answer(s, TC, 0)).toMatchObject({
      error: Err.COORDINATOR_NOT_AVAILABLE,
      pid: NO_PID,
      epoch: NO_EPOCH,
    });
  });
});

// appendTransactionToLog completes each transactional.id's append through its own callback: the
// appends in flight are one per id, and which started first is no part of the state.
describe('TransactionStateManager.appendTransactionToLog: appends of two transactional.ids in flight', () => {
  const cfg = kafkaConfig('kafka-3.8', { transactionalIds: 2, coordinatorAppends: 'async' });
  const both = withTxn(at(initial(cfg), { pid: PID, epoch: EPOCH, state: TxnState.Empty }), 1, {
    pid: PID + 1,
    epoch: 0,
  });
  const add0 = (s: State): State =>
    handle(
      cfg,
      s,
      0,
      TC,
      request(Api.AddPartitionsToTxn, { txnId: 0, pid: PID, epoch: EPOCH, partitions: P0 }),
    );
  const add1 = (s: State): State =>
    handle(
      cfg,
      s,
      1,
      TC,
      request(Api.AddPartitionsToTxn, { txnId: 1, pid: PID + 1, epoch: 0, partitions: P1 }),
    );

  it('the order in which they started does not matter', () => {
    expect(add0(add1(both))).toEqual(add1(add0(both)));
  });

  it('completing one installs and answers that one only; the other stays in flight', () => {
    const s = take(cfg, add0(add1(both)), 'TC: completeAppend(t1)');
    expect(txn(s, 1)).toMatchObject({ state: TxnState.Ongoing, pendingState: NO_STATE, partitions: P1 });
    expect(answer(s, TC, 1).error).toBe(Err.NONE);
    expect(txn(s, 0)).toMatchObject({ state: TxnState.Empty, pendingState: TxnState.Ongoing });
    expect(messages(s, TC, 0)).toEqual([]);
    expect(labels(cfg, s)).toContain('TC: completeAppend(t0)');
    expect(labels(cfg, s)).not.toContain('TC: completeAppend(t1)');
  });
});

describe("ghost history of the coordinator's writes", () => {
  it('a written PrepareCommit of no client transaction notes none', () => {
    const cfg = kafkaConfig('kafka-3.8');
    const s0 = at(initial(cfg), { pid: PID, epoch: EPOCH, state: TxnState.Ongoing, partitions: P0 });
    const { s } = ask(cfg, s0, Api.EndTxn, { pid: PID, epoch: EPOCH, commit: true });
    expect(txn(s, 0)!.state).toBe(TxnState.PrepareCommit);
    expect(Object.keys(s.history)).toEqual(Object.keys(s0.history));
    expect(s.history).toEqual(s0.history);
  });

  const cfg = kafkaConfig('kafka-3.8', { instancesPerId: 2, transactionsPerInstance: 1 });
  // P0.0 (producer 0) holds t0's epoch; its transaction 0 is history entry 0, P0.1's is entry 1.
  const running = take(cfg, take(cfg, initial(cfg), 'P0.0: initTransactions'), 'P0.1: initTransactions');
  const started: State = { ...running, network: [] };

  it("an epoch grant to another instance makes the first instance's unprepared transactions zombies'", () => {
    const granted = handle(
      cfg,
      at(started, { pid: PID, epoch: EPOCH, state: TxnState.CompleteCommit }),
      1,
      TC,
      request(Api.InitProducerId, { txnId: 0 }),
    );
    expect(answer(granted, TC, 1)).toMatchObject({ error: Err.NONE, epoch: EPOCH + 1 });
    expect(granted.history.map((h) => h.fenced)).toEqual([true, false]);
  });

  it('a fence grants nothing yet: the fencing instance is told CONCURRENT_TRANSACTIONS, and its retry after the abort is the grant', () => {
    const fencing = handle(
      cfg,
      at(started, { pid: PID, epoch: EPOCH, state: TxnState.Ongoing, partitions: P0, ghostTxn: 0 }),
      1,
      TC,
      request(Api.InitProducerId, { txnId: 0 }),
    );
    expect(answer(fencing, TC, 1).error).toBe(Err.CONCURRENT_TRANSACTIONS);
    expect(fencing.history.map((h) => h.fenced)).toEqual([false, false]);
    let s = take(
      cfg,
      take(cfg, fencing, 'deliver TC→L0: WriteTxnMarkers'),
      'deliver L0→TC: WriteTxnMarkers response',
    );
    s = take(cfg, { ...s, network: [] }, 'TC: completeTransaction(t0)');
    const granted = handle(cfg, s, 1, TC, request(Api.InitProducerId, { txnId: 0 }));
    expect(answer(granted, TC, 1).error).toBe(Err.NONE);
    expect(granted.history.map((h) => h.fenced)).toEqual([true, false]);
  });

  it.each([
    ['an epoch bump', EPOCH],
    ['a producer id rotation', exhausted],
  ])('the Empty transaction of %s belongs to no client transaction', (_name, epoch) => {
    const s0 = at(initial(cfg), { pid: PID, epoch, state: TxnState.CompleteCommit, ghostTxn: 0 });
    const { s, reply } = ask(cfg, s0, Api.InitProducerId, {});
    expect(reply.error).toBe(Err.NONE);
    expect(txn(s, 0)).toMatchObject({ state: TxnState.Empty, ghostTxn: -1 });
    expect(logged(s)).toMatchObject({ state: TxnState.Empty, ghostTxn: -1 });
  });
});

// isValidProducerId (TransactionCoordinator.scala@3.9): an expected producer id is valid when it is
// the current one, or the previous one at an exhausted epoch (a retry of a rotation whose answer was
// lost). The previous id at an epoch that is not exhausted, or another id, is fenced.
describe('TransactionCoordinator.handleInitProducerId: which expected producer id is a retry', () => {
  const cfg = kafkaConfig('kafka-3.8');
  it('the previous producer id at an epoch that is not exhausted is fenced', () => {
    const s = at(initial(cfg), { pid: PID + 1, prevPid: PID, epoch: 3, lastEpoch: 2, state: TxnState.Empty });
    expect(ask(cfg, s, Api.InitProducerId, { pid: PID, epoch: 3 }).reply).toMatchObject({
      error: Err.PRODUCER_FENCED,
      pid: NO_PID,
      epoch: NO_EPOCH,
    });
  });

  it('an id that is neither the current nor the previous one is fenced, even at an exhausted epoch', () => {
    const rotated = at(initial(cfg), {
      pid: PID + 1,
      prevPid: PID,
      epoch: 0,
      lastEpoch: exhausted,
      state: TxnState.Empty,
    });
    expect(ask(cfg, rotated, Api.InitProducerId, { pid: PID + 5, epoch: exhausted }).reply.error).toBe(
      Err.PRODUCER_FENCED,
    );
    expect(ask(cfg, rotated, Api.InitProducerId, { pid: PID, epoch: exhausted }).reply).toMatchObject({
      error: Err.NONE,
      pid: PID + 1,
      epoch: 0,
    });
  });
});

// handleAddPartitionsToTransaction@3.9 checks the producer id, then the epoch, then a pending
// transition; from 4.0 the pending transition comes first (KAFKA-18660), and no metadata at all is
// still INVALID_PRODUCER_ID_MAPPING (getTransactionState returns None).
describe('TransactionCoordinator.handleAddPartitionsToTransaction: the order of its checks', () => {
  it('kafka-3.8: a stale epoch is fenced even while a transition is pending', () => {
    const cfg = kafkaConfig('kafka-3.8');
    const s = at(initial(cfg), {
      pid: PID,
      epoch: EPOCH + 1,
      state: TxnState.Ongoing,
      partitions: P0,
      pendingState: TxnState.PrepareCommit,
    });
    expect(ask(cfg, s, Api.AddPartitionsToTxn, { pid: PID, epoch: EPOCH, partitions: P1 }).reply.error).toBe(
      Err.PRODUCER_FENCED,
    );
  });

  it('kafka-4.0: an unknown transactional.id is INVALID_PRODUCER_ID_MAPPING', () => {
    const cfg = kafkaConfig('kafka-4.0');
    expect(
      ask(cfg, initial(cfg), Api.AddPartitionsToTxn, { pid: PID, epoch: EPOCH, partitions: P1 }).reply.error,
    ).toBe(Err.INVALID_PRODUCER_ID_MAPPING);
  });
});

// endTransaction under TV2 (trunk TransactionCoordinator.scala): retryOnOverflow is
// previousProducerId == producerId && producerEpoch == Short.MaxValue - 1 && producerEpoch == 0 in
// the metadata; a retry answered NONE carries the metadata's producer id and epoch.
describe('TransactionCoordinator.endTransaction, TV2: the retry after a producer id rotation', () => {
  const cfg = kafkaConfig('kafka-4.0');
  const rotated = (epoch: number) =>
    at(initial(cfg), { pid: PID + 1, prevPid: PID, epoch, state: TxnState.CompleteCommit });
  const end = (s: State, pid: number, epoch: number) =>
    ask(cfg, s, Api.EndTxn, { pid, epoch, commit: true }).reply;

  it('the previous id at the exhausted epoch is the retry; another id, another epoch, or a later epoch of the new id is not', () => {
    expect(end(rotated(0), PID, exhausted)).toMatchObject({ error: Err.NONE, pid: PID + 1, epoch: 0 });
    expect(end(rotated(0), PID + 5, exhausted).error).toBe(Err.INVALID_PRODUCER_ID_MAPPING);
    expect(end(rotated(0), PID, exhausted - 1).error).toBe(Err.INVALID_PRODUCER_ID_MAPPING);
    expect(end(rotated(1), PID, exhausted).error).toBe(Err.INVALID_PRODUCER_ID_MAPPING);
  });

  it('a retry of a completed commit is told the epoch the commit bumped to', () => {
    const s = at(initial(cfg), { pid: PID, epoch: 3, state: TxnState.CompleteCommit });
    expect(end(s, PID, 2)).toMatchObject({ error: Err.NONE, pid: PID, epoch: 3 });
  });
});

// KIP-1228: WriteTxnMarkers v2 names the transaction's version, and the leader's strict marker
// epoch rule applies to version 2 markers only (ProducerAppendInfo.checkProducerEpoch, 074553555c60).
describe('WriteTxnMarkers carries the transaction version of the transaction it ends', () => {
  const cfg = kafkaConfig('kafka-latest');
  /** A commit marker at the producer's own epoch reaches a leader that holds an open transaction of it. */
  const lateMarker = (transactionVersion: number): Err => {
    let s = at(initial(cfg), {
      pid: PID,
      epoch: 3,
      state: TxnState.PrepareCommit,
      pendingState: TxnState.CompleteCommit,
      partitions: P0,
      transactionVersion,
    });
    s = withProducerEntry(s, 0, { pid: PID, epoch: 3, lastSeqs: [0], txnFirstOffset: 0 });
    s = take(cfg, take(cfg, s, 'TC: resendTxnMarker(t0, p0)'), 'deliver TC→L0: WriteTxnMarkers');
    return answer(s, leader(0), TC).error;
  };

  it("a version 1 transaction's marker meets the old rule: the equal epoch is written", () => {
    expect(lateMarker(1)).toBe(Err.NONE);
  });

  it("a version 2 transaction's marker meets KIP-1228: the equal epoch is stale", () => {
    expect(lateMarker(2)).toBe(Err.INVALID_PRODUCER_EPOCH);
  });
});

// A new coordinator loads the metadata from the log; hasFailedEpochFence lives in memory only
// (TransactionMetadata's constructor default, TransactionStateManager.loadTransactionMetadata).
describe('TransactionCoordinator.onElection: what a failover keeps', () => {
  const cfg = config('kafka-3.8', { coordinatorFailovers: 1 }, { instancesPerId: 2 });

  it('a failed fence is forgotten, so the fence after the failover bumps the epoch', () => {
    const s0 = at(initial(cfg), {
      pid: PID,
      epoch: EPOCH,
      state: TxnState.Ongoing,
      partitions: P0,
      hasFailedEpochFence: true,
    });
    const loaded = take(cfg, s0, 'TC: coordinatorFailover');
    expect(txn(loaded, 0)).toMatchObject({ state: TxnState.Ongoing, hasFailedEpochFence: false });
    const fenced = handle(cfg, loaded, 1, TC, request(Api.InitProducerId, { txnId: 0 }));
    expect(logged(fenced)).toMatchObject({ state: TxnState.PrepareAbort, epoch: EPOCH + 1 });
  });

  it('requests on their way to the coordinator are answered NOT_COORDINATOR and gone; requests to leaders and answers stay', () => {
    let s = at(initial(cfg), { pid: PID, epoch: EPOCH, state: TxnState.Ongoing, partitions: P0 });
    s = inFlight(
      s,
      0,
      TC,
      request(Api.EndTxn, { txnId: 0, pid: PID, epoch: EPOCH, commit: true, ghostProducer: 0, ghostTxn: 0 }),
    );
    s = inFlight(s, 0, leader(0), produceRequest(0));
    s = inFlight(s, leader(0), TC, markerAnswer(0));
    const after = take(cfg, s, 'TC: coordinatorFailover');
    expect(answer(after, TC, 0).error).toBe(Err.NOT_COORDINATOR);
    expect(after.network.map((ch) => [ch.from, ch.to, ch.messages.map((m) => [m.api, m.response])])).toEqual([
      [0, LEADER_BASE, [[Api.Produce, false]]],
      [TC_NODE, 0, [[Api.EndTxn, true]]],
      [LEADER_BASE, TC_NODE, [[Api.WriteTxnMarkers, true]]],
    ]);
  });
});

// getTransactionState while loading: InitProducerId gets initTransactionError (no producer id or
// epoch, whatever the request named); the others echo their request.
describe("TransactionStateManager.getTransactionState while loading: the answer's form", () => {
  const cfg = config('kafka-3.8', { coordinatorFailovers: 1 }, { coordinatorLoading: 'async' });
  const loading = take(
    cfg,
    at(initial(cfg), { pid: PID, epoch: EPOCH, state: TxnState.Ongoing, partitions: P0 }),
    'TC: coordinatorFailover',
  );

  it('an InitProducerId that names its producer id and epoch (KIP-360) gets neither back', () => {
    const reply = ask(cfg, loading, Api.InitProducerId, { pid: PID, epoch: EPOCH }).reply;
    expect(reply).toMatchObject({
      api: Api.InitProducerId,
      error: Err.COORDINATOR_LOAD_IN_PROGRESS,
      pid: NO_PID,
      epoch: NO_EPOCH,
    });
  });

  it('an AddPartitionsToTxn is answered as one', () => {
    const reply = ask(cfg, loading, Api.AddPartitionsToTxn, { pid: PID, epoch: EPOCH, partitions: P1 }).reply;
    expect(reply).toMatchObject({
      api: Api.AddPartitionsToTxn,
      error: Err.COORDINATOR_LOAD_IN_PROGRESS,
      pid: PID,
      epoch: EPOCH,
      partitions: P1,
    });
  });
});
