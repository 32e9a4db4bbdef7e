// Which rules a request meets: the brokers' rules met with the client's generation (withClient)
// and cut to what the request's version supports (forRequest); the brokers' own transaction
// version for what no request decides; and, step by step, the transaction version each
// transaction of a producer runs under.
import { describe, expect, it } from 'vitest';
import { clientSupports, forRequest, serverTransactionVersion } from './config.ts';
import { TC, initial, kafkaConfig, labels, requestsFrom, take, txn } from './conformance/harness.ts';
import { type Request, type State, Api, Supports, Tm, TxnState } from './state.ts';
import { generations, withClient } from './variants.ts';

const rules = (generation: string) => generations[generation]!.rules;

describe('withClient', () => {
  it("takes the client's own rules from the client and the brokers' from the brokers", () => {
    const oldBrokers = withClient(rules('kafka-0.11'), rules('kafka-3.5'));
    expect(oldBrokers.kip588).toBe(true);
    expect(oldBrokers.timeoutFence).toBe(false);
    const newBrokers = withClient(rules('kafka-3.6'), rules('kafka-0.11'));
    expect(newBrokers.kip588).toBe(false);
    expect(newBrokers).toMatchObject({ verification: true, timeoutFence: true, rememberFailedFence: true });
  });

  it('turns a negotiated feature on only when both halves have it', () => {
    for (const [brokers, client] of [
      ['kafka-0.11', 'kafka-3.5'],
      ['kafka-3.5', 'kafka-0.11'],
    ]) {
      expect(withClient(rules(brokers!), rules(client!))).toMatchObject({ kip360: false, kip447: false });
    }
    expect(withClient(rules('kafka-4.0'), rules('kafka-3.8'))).toMatchObject({
      tv2: false,
      transactionAbortable: true,
      pendingCheckFirst: true,
    });
    expect(withClient(rules('kafka-3.8'), rules('kafka-3.6')).transactionAbortable).toBe(false);
    expect(withClient(rules('kafka-4.0'), rules('kafka-4.1'))).toEqual(rules('kafka-4.0'));
  });

  it("keeps the brokers' mutants", () => {
    expect(withClient({ ...rules('kafka-3.5'), mutantNoDedup: true }, rules('kafka-3.5')).mutantNoDedup).toBe(
      true,
    );
  });
});

describe('forRequest', () => {
  const brokers = rules('kafka-4.0');

  it('a version-1 request meets the brokers at version 1 (forRequest), a version-2 one at version 2', () => {
    const v1 = forRequest(brokers, {
      supports: clientSupports(withClient(brokers, rules('kafka-3.8'))),
    } as Request);
    expect(v1).toMatchObject({
      tv2: false,
      transactionAbortable: true,
      verification: true,
      pendingCheckFirst: true,
    });
    expect(forRequest(brokers, { supports: clientSupports(brokers) } as Request)).toEqual(brokers);
  });

  it('turns each feature off for a request whose version lacks it, and only that one', () => {
    const all = Supports.TransactionVersion2 | Supports.TransactionAbortable | Supports.GroupGeneration;
    const without = (bit: number) => forRequest(brokers, { supports: all & ~bit } as Request);
    expect(without(Supports.TransactionVersion2)).toEqual({ ...brokers, tv2: false });
    expect(without(Supports.TransactionAbortable)).toEqual({ ...brokers, transactionAbortable: false });
    expect(without(Supports.GroupGeneration)).toEqual({ ...brokers, kip447: false });
    // A feature the brokers lack stays off whatever the request supports.
    expect(forRequest(rules('kafka-3.6'), { supports: all } as Request)).toEqual(rules('kafka-3.6'));
  });
});

describe("serverTransactionVersion: the brokers' own version, for a fence or a timeout abort", () => {
  it('is 2 only on brokers that have version 2 with version 2 finalized', () => {
    const tv2 = kafkaConfig('kafka-4.0');
    expect(serverTransactionVersion(tv2, initial(tv2))).toBe(2);
    expect(serverTransactionVersion(tv2, { ...initial(tv2), transactionVersion: 1 })).toBe(1);
    const older = kafkaConfig('kafka-3.8');
    expect(serverTransactionVersion(older, { ...initial(older), transactionVersion: 2 })).toBe(1);
  });
});

describe('transactions of one transactional.id at two transaction versions (per-instance clients)', () => {
  const brokers = rules('kafka-4.0');
  const cfg = kafkaConfig('kafka-4.0', {
    instancesPerId: 2,
    partitions: 1,
    transactionsPerInstance: 1,
    recordsPerTransaction: 1,
    clientRules: [withClient(brokers, rules('kafka-3.8')), brokers],
  });

  /** Takes the labelled steps in order. */
  const run = (s: State, steps: string[]): State => steps.reduce((t, label) => take(cfg, t, label), s);

  it('the old instance runs a version-1 transaction and the new one a version-2 transaction, each marked at its own version', () => {
    let s = run(initial(cfg), [
      'P0.0: initTransactions',
      'deliver P0.0→TC: InitProducerId',
      'deliver TC→P0.0: InitProducerId response',
      'P0.0: beginTransaction',
      'P0.0: send(p0)',
      'P0.0: sendTxnRequest',
    ]);
    // The version-1 client adds its partition itself; the coordinator records version 1.
    expect(s.network.find((c) => c.from === 0 && c.to === TC)!.messages[0]).toMatchObject({
      api: Api.AddPartitionsToTxn,
      supports: Supports.TransactionAbortable | Supports.GroupGeneration,
    });
    s = run(s, [
      'deliver P0.0→TC: AddPartitionsToTxn',
      'deliver TC→P0.0: AddPartitionsToTxn response',
      'P0.0: sendProduce(p0)',
      'deliver P0.0→L0: Produce',
    ]);
    s = run(s, [
      'deliver L0→TC (verification): AddPartitionsToTxn',
      'deliver TC→L0 (verification): AddPartitionsToTxn response',
      'deliver L0→P0.0: Produce response',
      'P0.0: commitTransaction',
      'P0.0: sendTxnRequest',
      'deliver P0.0→TC: EndTxn',
    ]);
    expect(txn(s, 0)).toMatchObject({ state: TxnState.PrepareCommit, epoch: 0, transactionVersion: 1 });
    expect(requestsFrom(s, TC)[0]!.request.supports & Supports.TransactionVersion2).toBe(0);
    s = run(s, [
      'deliver TC→L0: WriteTxnMarkers',
      'deliver L0→TC: WriteTxnMarkers response',
      'TC: completeTransaction(t0)',
    ]);
    // The new instance takes over with a version-2 client: no AddPartitionsToTxn, EndTxn v5 bumps the epoch.
    s = run(s, [
      'P0.1: initTransactions',
      'deliver P0.1→TC: InitProducerId',
      'deliver TC→P0.1: InitProducerId response',
      'P0.1: beginTransaction',
      'P0.1: send(p0)',
      'P0.1: sendProduce(p0)',
      'deliver P0.1→L0: Produce',
    ]);
    s = run(s, [
      'deliver L0→TC (verification): AddPartitionsToTxn',
      'deliver TC→L0 (verification): AddPartitionsToTxn response',
      'deliver L0→P0.1: Produce response',
      'P0.1: commitTransaction',
      'P0.1: sendTxnRequest',
      'deliver P0.1→TC: EndTxn',
    ]);
    expect(txn(s, 0)).toMatchObject({ state: TxnState.PrepareCommit, epoch: 2, transactionVersion: 2 });
    expect(requestsFrom(s, TC)[0]!.request.supports & Supports.TransactionVersion2).toBe(
      Supports.TransactionVersion2,
    );
  });
});

describe('the finalized transaction.version changing at run time (transactionVersionChanges)', () => {
  const cfg = kafkaConfig('kafka-4.0', {
    partitions: 1,
    transactionsPerInstance: 2,
    recordsPerTransaction: 1,
    faults: { ...kafkaConfig('kafka-4.0').faults, transactionVersionChanges: 1 },
  });
  const run = (s: State, steps: string[]): State => steps.reduce((t, label) => take(cfg, t, label), s);
  const ready = run(initial(cfg), [
    'P0.0: initTransactions',
    'deliver P0.0→TC: InitProducerId',
    'deliver TC→P0.0: InitProducerId response',
  ]);

  it('a transaction begun at version 2 keeps it after a downgrade; the next one takes version 1', () => {
    let s = run(ready, ['P0.0: beginTransaction', 'TC: finalizeTransactionVersion(1)', 'P0.0: send(p0)']);
    expect(s.transactionVersion).toBe(1);
    // Still version 2: no AddPartitionsToTxn, the leader adds the partition.
    expect(s.producers[0]).toMatchObject({ transactionV2: true, added: 1, pendingAdd: 0 });
    expect(labels(cfg, s)).not.toContain('TC: finalizeTransactionVersion(2)');
    s = run(s, [
      'P0.0: sendProduce(p0)',
      'deliver P0.0→L0: Produce',
      'deliver L0→TC (verification): AddPartitionsToTxn',
      'deliver TC→L0 (verification): AddPartitionsToTxn response',
    ]);
    s = run(s, [
      'deliver L0→P0.0: Produce response',
      'P0.0: commitTransaction',
      'P0.0: sendTxnRequest',
      'deliver P0.0→TC: EndTxn',
      'deliver TC→P0.0: EndTxn response',
    ]);
    expect(s.producers[0]).toMatchObject({ tm: 2 /* READY */, epoch: 1 });
    s = run(s, ['P0.0: beginTransaction', 'P0.0: send(p0)']);
    // Version 1 now: the client adds the partition itself.
    expect(s.producers[0]).toMatchObject({ transactionV2: false, added: 0, pendingAdd: 1 });
  });

  // KAFKA-18227 (4.0.0), TransactionManagerTest testTransactionManagerEnablesV2: an upgrade during
  // a transaction; the commit goes at version 1, then an InitProducerId bumps the epoch and the
  // next transaction runs at version 2.
  it('an upgrade is read as the transaction ends, and the next transaction at version 2 comes after a bump', () => {
    const v1 = kafkaConfig('kafka-4.0', {
      partitions: 1,
      transactionsPerInstance: 2,
      recordsPerTransaction: 1,
      transactionVersion: 1,
      faults: { ...kafkaConfig('kafka-4.0').faults, transactionVersionChanges: 1 },
    });
    const go = (s: State, steps: string[]): State => steps.reduce((t, label) => take(v1, t, label), s);
    const sent = (s: State) => s.network.find((c) => c.from === 0 && c.to === TC)!.messages[0]!;
    let s = go(initial(v1), [
      'P0.0: initTransactions',
      'deliver P0.0→TC: InitProducerId',
      'deliver TC→P0.0: InitProducerId response',
      'P0.0: beginTransaction',
      'P0.0: send(p0)',
      'TC: finalizeTransactionVersion(2)',
      'P0.0: sendTxnRequest',
    ]);
    // The transaction begun at version 1 stays there: the client adds its partition itself.
    expect(sent(s).api).toBe(Api.AddPartitionsToTxn);
    s = go(s, [
      'deliver P0.0→TC: AddPartitionsToTxn',
      'deliver TC→P0.0: AddPartitionsToTxn response',
      'P0.0: sendProduce(p0)',
      'deliver P0.0→L0: Produce',
      'deliver L0→TC (verification): AddPartitionsToTxn',
      'deliver TC→L0 (verification): AddPartitionsToTxn response',
      'deliver L0→P0.0: Produce response',
      'P0.0: commitTransaction',
    ]);
    expect(s.producers[0]).toMatchObject({ transactionV2: false, bumpRequired: true });
    s = go(s, ['P0.0: sendTxnRequest']);
    expect(sent(s)).toMatchObject({ api: Api.EndTxn });
    expect((sent(s) as Request).supports & Supports.TransactionVersion2).toBe(0);
    s = go(s, ['deliver P0.0→TC: EndTxn', 'deliver TC→P0.0: EndTxn response']);
    expect(s.producers[0]).toMatchObject({ tm: Tm.INITIALIZING, transactionV2: true, epoch: 0 });
    s = go(s, ['P0.0: sendTxnRequest']);
    expect(sent(s)).toMatchObject({ api: Api.InitProducerId, epoch: 0 });
    s = go(s, [
      'deliver TC→L0: WriteTxnMarkers',
      'deliver L0→TC: WriteTxnMarkers response',
      'TC: completeTransaction(t0)',
      'deliver P0.0→TC: InitProducerId',
      'deliver TC→P0.0: InitProducerId response',
      'P0.0: beginTransaction',
      'P0.0: send(p0)',
    ]);
    // Version 2 at epoch 1: the leader adds the partition.
    expect(s.producers[0]).toMatchObject({
      tm: Tm.IN_TRANSACTION,
      epoch: 1,
      transactionV2: true,
      pendingAdd: 0,
    });
  });
});
