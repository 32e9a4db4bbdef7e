// The enabled actions of a state: a fault is enabled only while its budget lasts and only where
// it can happen; a loss takes the channel it names.
import { describe, expect, it } from 'vitest';
import { type KafkaConfig } from './config.ts';
import { send } from './network.ts';
import { type FaultBudget, type State, Api, Instance, TC_NODE, TxnState } from './state.ts';
import { P0, act, clientConfig, ready, withPartitionsAdded } from './conformance/client-support.ts';
import {
  TC,
  handle,
  initial,
  kafkaConfig,
  labels,
  leader,
  request,
  response,
  take,
  withProducer,
  withProducerEntry,
  withTxn,
} from './conformance/harness.ts';

/** s with what is left of the fault budgets changed. */
function withBudget(s: State, budget: Partial<FaultBudget>): State {
  return { ...s, faults: { ...s.faults, ...budget } };
}

/** The labels of s under cfg whose text contains `what`. */
const matching = (cfg: KafkaConfig, s: State, what: string): string[] =>
  labels(cfg, s).filter((l) => l.includes(what));

describe('a fault is enabled only while its budget lasts', () => {
  it('Produce timeout and batch expiry, each on its own budget', () => {
    const base = clientConfig('kafka-3.5', { partitions: 1 });
    const s = act(base, withPartitionsAdded(base, ready(base), [0]), 'sendProduce(p0)');
    expect(matching(base, withBudget(s, { requestTimeouts: 0 }), 'produceTimeout')).toEqual([]);
    expect(matching(base, withBudget(s, { requestTimeouts: 0 }), 'batchExpired')).toEqual([
      'P0.0: batchExpired(p0)',
    ]);
    expect(matching(base, withBudget(s, { batchExpiries: 0 }), 'batchExpired')).toEqual([]);
    expect(matching(base, withBudget(s, { batchExpiries: 0 }), 'produceTimeout')).toEqual([
      'P0.0: produceTimeout(p0)',
    ]);
  });

  it('a crash, only of a running instance', () => {
    const cfg = kafkaConfig('kafka-3.5', {
      instancesPerId: 2,
      faults: { ...kafkaConfig('kafka-3.5').faults, producerCrashes: 2 },
    });
    const started = act(cfg, initial(cfg), 'initTransactions');
    expect(matching(cfg, started, 'crash')).toEqual(['P0.0: crash']);
    expect(matching(cfg, withProducer(started, P0, { status: Instance.Crashed }), 'crash')).toEqual([]);
    expect(matching(cfg, withBudget(started, { producerCrashes: 0 }), 'crash')).toEqual([]);
  });

  it('an append failure on its budget; a failover with an append in flight keeps it or loses it', () => {
    const cfg = kafkaConfig('kafka-3.8', {
      coordinatorAppends: 'async',
      faults: { ...kafkaConfig('kafka-3.8').faults, appendFailures: 1, coordinatorFailovers: 1 },
    });
    const empty = withTxn(initial(cfg), 0, { pid: 10, epoch: 1, state: TxnState.Empty });
    expect(matching(cfg, empty, 'coordinatorFailover')).toEqual(['TC: coordinatorFailover']);
    const adding = handle(
      cfg,
      empty,
      0,
      TC,
      request(Api.AddPartitionsToTxn, { txnId: 0, pid: 10, epoch: 1, partitions: 1 }),
    );
    expect(matching(cfg, adding, 'TC: ')).toEqual([
      'TC: coordinatorFailover(t0 lost)',
      'TC: coordinatorFailover(t0 kept)',
      'TC: completeAppend(t0)',
      'TC: failAppend(t0)',
    ]);
    expect(matching(cfg, withBudget(adding, { appendFailures: 0, coordinatorFailovers: 0 }), 'TC: ')).toEqual(
      ['TC: completeAppend(t0)'],
    );
  });

  it('a transaction timeout on its budget', () => {
    const cfg = kafkaConfig('kafka-3.5', {
      faults: { ...kafkaConfig('kafka-3.5').faults, transactionTimeouts: 1 },
    });
    const s = withTxn(initial(cfg), 0, { pid: 10, epoch: 1, state: TxnState.Ongoing, partitions: 1 });
    expect(matching(cfg, s, 'transactionTimeout')).toEqual(['TC: transactionTimeout(t0)']);
    expect(matching(cfg, withBudget(s, { transactionTimeouts: 0 }), 'transactionTimeout')).toEqual([]);
  });

  it('a marker timeout on its budget', () => {
    const cfg = kafkaConfig('kafka-3.8', {
      faults: { ...kafkaConfig('kafka-3.8').faults, markerTimeouts: 1 },
    });
    const prepared = withTxn(initial(cfg), 0, {
      pid: 10,
      epoch: 1,
      state: TxnState.PrepareCommit,
      pendingState: TxnState.CompleteCommit,
      partitions: 1,
    });
    const sending = take(cfg, prepared, 'TC: resendTxnMarker(t0, p0)');
    expect(matching(cfg, sending, 'markerTimeout')).toEqual(['TC: markerTimeout(L0)']);
    expect(matching(cfg, withBudget(sending, { markerTimeouts: 0 }), 'markerTimeout')).toEqual([]);
  });

  it('a transactional.id expiry on its budget', () => {
    const cfg = kafkaConfig('kafka-3.8', {
      faults: { ...kafkaConfig('kafka-3.8').faults, transactionalIdExpiries: 1 },
    });
    const idle = withTxn(initial(cfg), 0, { pid: 10, epoch: 1, state: TxnState.CompleteCommit });
    expect(matching(cfg, idle, 'transactionalIdExpiry')).toEqual(['TC: transactionalIdExpiry(t0)']);
    expect(matching(cfg, withBudget(idle, { transactionalIdExpiries: 0 }), 'transactionalIdExpiry')).toEqual(
      [],
    );
  });

  it("an idempotent producer's Produce timeout and batch expiry, each on its own budget", () => {
    const cfg = kafkaConfig('kafka-3.8', {
      transactionalIds: 0,
      idempotentProducers: 1,
      recordsPerIdempotentProducer: 1,
      partitions: 1,
      faults: { ...kafkaConfig('kafka-3.8').faults, requestTimeouts: 1, batchExpiries: 1 },
    });
    const s = ['I0: initProducerId', 'I0: send(p0)', 'I0: sendProduce(p0)'].reduce(
      (t, label) => take(cfg, t, label),
      initial(cfg),
    );
    expect(matching(cfg, s, 'I0: ')).toEqual(['I0: produceTimeout(p0)', 'I0: batchExpired(p0)']);
    expect(matching(cfg, withBudget(s, { requestTimeouts: 0 }), 'I0: ')).toEqual(['I0: batchExpired(p0)']);
    expect(matching(cfg, withBudget(s, { batchExpiries: 0 }), 'I0: ')).toEqual(['I0: produceTimeout(p0)']);
  });

  it('a change of the finalized transaction.version, only on brokers that have version 2 and on its budget', () => {
    const faults = { ...kafkaConfig('kafka-4.0').faults, transactionVersionChanges: 1 };
    const tv2 = kafkaConfig('kafka-4.0', { faults });
    expect(matching(tv2, initial(tv2), 'finalizeTransactionVersion')).toEqual([
      'TC: finalizeTransactionVersion(1)',
    ]);
    expect(matching(tv2, { ...initial(tv2), transactionVersion: 1 }, 'finalizeTransactionVersion')).toEqual([
      'TC: finalizeTransactionVersion(2)',
    ]);
    expect(take(tv2, initial(tv2), 'TC: finalizeTransactionVersion(1)').transactionVersion).toBe(1);
    expect(
      matching(tv2, withBudget(initial(tv2), { transactionVersionChanges: 0 }), 'finalizeTransactionVersion'),
    ).toEqual([]);
    const older = kafkaConfig('kafka-3.8', { faults });
    expect(matching(older, initial(older), 'finalizeTransactionVersion')).toEqual([]);
  });

  it('a producer-state expiry on its budget', () => {
    const cfg = kafkaConfig('kafka-3.5', {
      faults: { ...kafkaConfig('kafka-3.5').faults, producerStateExpiries: 1 },
    });
    const s = withProducerEntry(initial(cfg), 0, { pid: 5 });
    expect(matching(cfg, s, 'producerStateExpiry')).toEqual(['L0: producerStateExpiry(pid 5)']);
    expect(matching(cfg, withBudget(s, { producerStateExpiries: 0 }), 'producerStateExpiry')).toEqual([]);
  });
});

describe('a delivery or a loss takes the head of the channel it names', () => {
  const cfg = kafkaConfig('kafka-3.5', {
    faults: { ...kafkaConfig('kafka-3.5').faults, requestLoss: 1, responseLoss: 1 },
  });

  it('of two answers to the same client, the one from the node named', () => {
    let network = send([], TC_NODE, P0, 0, response(Api.AddPartitionsToTxn, {}));
    network = send(network, leader(0), P0, 0, response(Api.Produce, {}));
    const s = take(cfg, { ...initial(cfg), network }, 'lose L0→P0.0: Produce response');
    expect(s.network.map((c) => c.from)).toEqual([TC_NODE]);
  });

  it('a delivery: of two answers to the same client, the one from the node named', () => {
    let network = send([], TC_NODE, P0, 0, response(Api.AddPartitionsToTxn, {}));
    network = send(network, leader(0), P0, 0, response(Api.Produce, {}));
    const s = take(cfg, { ...initial(cfg), network }, 'deliver L0→P0.0: Produce response');
    expect(s.network.map((c) => c.from)).toEqual([TC_NODE]);
  });

  it('a delivery: of two connections to the same leader, the one named', () => {
    let network = send([], P0, leader(0), 0, request(Api.Produce, { seq: 0 }));
    network = send(network, P0, leader(0), 1, request(Api.Produce, { seq: 0 }));
    const s = take(cfg, { ...initial(cfg), network }, 'deliver P0.0→L0#1: Produce');
    expect(s.network.filter((c) => c.from === P0 && c.to === leader(0)).map((c) => c.conn)).toEqual([0]);
  });

  it('of two connections to the same leader, the one named', () => {
    let network = send([], P0, leader(0), 0, request(Api.Produce, { seq: 0 }));
    network = send(network, P0, leader(0), 1, request(Api.Produce, { seq: 0 }));
    const s = take(cfg, { ...initial(cfg), network }, 'lose P0.0→L0#1: Produce');
    expect(s.network.map((c) => c.conn)).toEqual([0]);
  });
});
