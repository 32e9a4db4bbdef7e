import { describe, expect, it } from 'vitest';
import { checkLiveness } from '../../checker/engine/liveness.ts';
import { parseSpec, temporalProperties } from '../../specs/load.ts';
import type { State } from './state.ts';
import { BatchKind } from './state.ts';

const defaultFairness = ['deliver', 'sendTxnRequest', 'sendProduce', 'resendTxnMarker', 'completeTransaction', 'verificationTimeout', 'fetch'];
const all = ['TransactionsComplete', 'LsoAdvances', 'ConsumersProgress'];

function check(spec: Record<string, unknown>) {
  const loaded = parseSpec('test.json', { model: 'kafka', deadlock: true, consumers: { readCommitted: 1 }, ...spec }, '');
  const model = loaded.entry.build(loaded.params, []);
  return checkLiveness(model, temporalProperties(loaded), { fairness: loaded.fairness });
}

const verdicts = (result: ReturnType<typeof check>) => Object.fromEntries(result.verdicts.map((v) => [v.property, v.lasso?.goal ?? 'holds']));

// PROTOCOL.md B1: one partition, one producer, one request timeout.
const hanging = { partitions: 1, transactionsPerInstance: 1, recordsPerTransaction: 1, faults: { batchExpiries: 1 }, liveness: ['LsoAdvances'], fairness: defaultFairness };

describe('Kafka liveness', () => {
  it('finds the hanging transaction (B1) under kafka-3.5 as an LsoAdvances lasso', () => {
    const result = check({ ...hanging, variant: 'kafka-3.5' });
    const lasso = result.verdicts[0]!.lasso!;
    expect(lasso.goal).toBe('LsoAdvances[p0, txn 0]');
    // The delayed Produce lands after the ABORT marker and is never covered by another one.
    expect(lasso.actions[lasso.trigger - 1]).toBe('deliver P0.0→L0: Produce');
    const log = (lasso.states[lasso.trigger] as State).partitions[0]!.log;
    expect(log.map((b) => b.kind)).toEqual([BatchKind.Abort, BatchKind.Data]);
    // Nothing is enabled at the end: the run stays with the LSO below the record forever.
    expect(lasso.loop).toBe(lasso.states.length - 1);
    expect(lasso.loopAction).toBeUndefined();
    expect(lasso.actions).toContain('P0.0: batchExpired(p0)');
  });

  it('finds no LsoAdvances lasso for the same spec under kafka-4.0 (KIP-890 part 2 fences the delayed Produce by epoch)', () => {
    const result = check({ ...hanging, variant: 'kafka-4.0' });
    expect(result.status).toBe('ok');
    expect(result.verdicts[0]!.lasso).toBeUndefined();
  });

  it('holds all three properties on a fault-free run under the default fairness, and none without fairness', () => {
    const faultFree = { partitions: 2, transactionsPerInstance: 2, recordsPerTransaction: 1, liveness: all };
    const fair = check({ ...faultFree, fairness: defaultFairness });
    expect(fair.status).toBe('ok');
    expect(verdicts(fair)).toEqual({ TransactionsComplete: 'holds', LsoAdvances: 'holds', ConsumersProgress: 'holds' });
    expect(fair.verdicts.map((v) => v.goals)).toEqual([1, 4, 4]);
    // Unfairly, a producer retrying AddPartitionsToTxn (CONCURRENT_TRANSACTIONS) starves the markers.
    const unfair = check({ ...faultFree, fairness: [] });
    expect(verdicts(unfair)).toEqual({
      TransactionsComplete: 'TransactionsComplete[t0]',
      LsoAdvances: 'LsoAdvances[p0, txn 0]',
      ConsumersProgress: 'ConsumersProgress[C0, p0, txn 0]',
    });
    const lasso = unfair.verdicts[0]!.lasso!;
    expect([...lasso.actions.slice(lasso.loop), lasso.loopAction]).toEqual([
      'deliver P0.0→TC: AddPartitionsToTxn',
      'deliver TC→P0.0: AddPartitionsToTxn response',
    ]);
  });

  // Each fault of the brokers' own (appends, markers, expiry, epoch exhaustion) on the fault-free
  // run: the liveness properties still hold under the default fairness.
  it.each([
    ['an append failure', { faults: { appendFailures: 1 } }],
    ['a marker timeout', { faults: { markerTimeouts: 1 } }],
    ['a transactional.id expiry', { faults: { transactionalIdExpiries: 1 } }],
    ['a producer state expiry', { faults: { producerStateExpiries: 1 } }],
    ['epoch exhaustion under transaction version 2', { variant: 'kafka-4.0', maxEpoch: 1 }],
    ['epoch exhaustion and a transaction timeout under version 0/1', { maxEpoch: 1, faults: { transactionTimeouts: 1 } }],
  ])('holds all three properties with %s', (_, faults) => {
    const result = check({ partitions: 2, transactionsPerInstance: 2, recordsPerTransaction: 1, liveness: all, fairness: defaultFairness, ...faults });
    expect(verdicts(result)).toEqual({ TransactionsComplete: 'holds', LsoAdvances: 'holds', ConsumersProgress: 'holds' });
  });

  // A failover while appends are in flight, then a loading window: the new coordinator's loading
  // must be fair too, or clients retrying COORDINATOR_LOAD_IN_PROGRESS starve it.
  it('holds all three properties across a failover with asynchronous appends and loading once loadTransactions is fair', () => {
    const windows = { partitions: 1, transactionsPerInstance: 2, recordsPerTransaction: 1, liveness: all, coordinatorAppends: 'async', coordinatorLoading: 'async', faults: { coordinatorFailovers: 1 } };
    const fair = check({ ...windows, fairness: [...defaultFairness, 'completeAppend', 'loadTransactions'] });
    expect(verdicts(fair)).toEqual({ TransactionsComplete: 'holds', LsoAdvances: 'holds', ConsumersProgress: 'holds' });
    const loadingUnfair = check({ ...windows, fairness: [...defaultFairness, 'completeAppend'] });
    const lasso = loadingUnfair.verdicts[0]!.lasso!;
    expect(lasso.goal).toBe('TransactionsComplete[t0]');
    const cycle = [...lasso.actions.slice(lasso.loop), lasso.loopAction];
    expect(cycle).not.toContain('TC: loadTransactions');
    expect((lasso.states[lasso.loop] as State).coordinator.loading).toBe(true);
  });
});
