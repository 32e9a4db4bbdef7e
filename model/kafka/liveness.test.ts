import { describe, expect, it } from 'vitest';
import { checkLiveness } from '../../checker/engine/liveness.ts';
import { parseSpec, temporalProperties } from '../../specs/load.ts';
import type { Goal } from '../../checker/engine/model.ts';
import type { KafkaConfig } from './config.ts';
import { batch, initial, kafkaConfig, withPartition, withProducerEntry } from './conformance/harness.ts';
import { kafkaLiveness } from './liveness.ts';
import type { State } from './state.ts';
import { BatchKind, NO_OFFSET } from './state.ts';

const defaultFairness = [
  'deliver',
  'sendTxnRequest',
  'sendProduce',
  'resendTxnMarker',
  'completeTransaction',
  'verificationTimeout',
  'fetch',
];
const all = ['TransactionsComplete', 'LsoAdvances', 'ConsumersProgress'];

function check(spec: Record<string, unknown>) {
  const loaded = parseSpec(
    'test.json',
    { model: 'kafka', deadlock: true, consumers: { readCommitted: 1 }, ...spec },
    '',
  );
  const model = loaded.entry.build(loaded.params, []);
  return checkLiveness(model, temporalProperties(loaded), { fairness: loaded.fairness });
}

const verdicts = (result: ReturnType<typeof check>) =>
  Object.fromEntries(result.verdicts.map((v) => [v.property, v.lasso?.goal ?? 'holds']));

// PROTOCOL.md B1: one partition, one producer, one request timeout.
const hanging = {
  partitions: 1,
  transactionsPerInstance: 1,
  recordsPerTransaction: 1,
  faults: { batchExpiries: 1 },
  liveness: ['LsoAdvances'],
  fairness: defaultFairness,
};

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
    expect(verdicts(fair)).toEqual({
      TransactionsComplete: 'holds',
      LsoAdvances: 'holds',
      ConsumersProgress: 'holds',
    });
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
    [
      'epoch exhaustion and a transaction timeout under version 0/1',
      { maxEpoch: 1, faults: { transactionTimeouts: 1 } },
    ],
  ])('holds all three properties with %s', (_, faults) => {
    const result = check({
      partitions: 2,
      transactionsPerInstance: 2,
      recordsPerTransaction: 1,
      liveness: all,
      fairness: defaultFairness,
      ...faults,
    });
    expect(verdicts(result)).toEqual({
      TransactionsComplete: 'holds',
      LsoAdvances: 'holds',
      ConsumersProgress: 'holds',
    });
  });

  // A failover while appends are in flight, then a loading window: the new coordinator's loading
  // must be fair too, or clients retrying COORDINATOR_LOAD_IN_PROGRESS starve it.
  it('holds all three properties across a failover with asynchronous appends and loading once loadTransactions is fair', () => {
    const windows = {
      partitions: 1,
      transactionsPerInstance: 2,
      recordsPerTransaction: 1,
      liveness: all,
      coordinatorAppends: 'async',
      coordinatorLoading: 'async',
      faults: { coordinatorFailovers: 1 },
    };
    const fair = check({ ...windows, fairness: [...defaultFairness, 'completeAppend', 'loadTransactions'] });
    expect(verdicts(fair)).toEqual({
      TransactionsComplete: 'holds',
      LsoAdvances: 'holds',
      ConsumersProgress: 'holds',
    });
    const loadingUnfair = check({ ...windows, fairness: [...defaultFairness, 'completeAppend'] });
    const lasso = loadingUnfair.verdicts[0]!.lasso!;
    expect(lasso.goal).toBe('TransactionsComplete[t0]');
    const cycle = [...lasso.actions.slice(lasso.loop), lasso.loopAction];
    expect(cycle).not.toContain('TC: loadTransactions');
    expect((lasso.states[lasso.loop] as State).coordinator.loading).toBe(true);
  });
});

// The goals on hand-built states: which records each one waits for. One partition's log holds, at
// offset 0, client transaction 0's record (its transaction still open: the entry's first offset is
// 0, so the LSO is 0), and after it other batches the goals must not mistake for that record.
describe('Kafka liveness goals on hand-built states', () => {
  const cfg = kafkaConfig('kafka-4.0', {
    transactionalIds: 1,
    instancesPerId: 2,
    transactionsPerInstance: 1,
    partitions: 1,
    consumers: { readCommitted: 1, readUncommitted: 0 },
  });
  const goalsOf = (name: string, c: KafkaConfig = cfg) =>
    kafkaLiveness.find((l) => l.name === name)!.goals(c) as Goal<State>[];
  const goal = (name: string, label: string): Extract<Goal<State>, { kind: 'leadsTo' }> => {
    const g = goalsOf(name).find((x) => x.label === label);
    if (g?.kind !== 'leadsTo') throw new Error(`no leads-to goal ${label}`);
    return g;
  };
  const open = withProducerEntry(
    withPartition(initial(cfg), 0, { log: [batch({ pid: 7, epoch: 0, ghostTxn: 0 })] }),
    0,
    { pid: 7, txnFirstOffset: 0 },
  );

  it('has one LsoAdvances and one ConsumersProgress goal per partition and client transaction (both instances of the id)', () => {
    expect(goalsOf('LsoAdvances').map((g) => g.label)).toEqual([
      'LsoAdvances[p0, txn 0]',
      'LsoAdvances[p0, txn 1]',
    ]);
    expect(goalsOf('ConsumersProgress').map((g) => g.label)).toEqual([
      'ConsumersProgress[C0, p0, txn 0]',
      'ConsumersProgress[C0, p0, txn 1]',
    ]);
  });

  it("watches __consumer_offsets's LSO too when the transform app runs", () => {
    const transform = { ...cfg, app: 'consume-transform-produce' } as KafkaConfig;
    expect(goalsOf('LsoAdvances', transform).map((g) => g.label)).toContain('LsoAdvances[p1, txn 0]');
  });

  it('LsoAdvances waits for an open record of its own client transaction only', () => {
    expect(goal('LsoAdvances', 'LsoAdvances[p0, txn 0]').p(open)).toBe(true);
    expect(goal('LsoAdvances', 'LsoAdvances[p0, txn 1]').p(open)).toBe(false);
    // Another transaction's record, a non-transactional record and a marker, all at or past the LSO, are not txn 1's.
    const others = withPartition(open, 0, {
      log: [
        batch({ pid: 7, epoch: 0, ghostTxn: 0 }),
        batch({ pid: 8, epoch: 0, ghostTxn: 1, transactional: false }),
        batch({ pid: 7, epoch: 0, kind: BatchKind.Abort, ghostTxn: 1 }),
      ],
    });
    expect(goal('LsoAdvances', 'LsoAdvances[p0, txn 1]').p(others)).toBe(false);
    // Closed (no open transaction): the LSO is the high watermark.
    const closed = withProducerEntry(open, 0, { pid: 7, txnFirstOffset: NO_OFFSET });
    expect(goal('LsoAdvances', 'LsoAdvances[p0, txn 0]').p(closed)).toBe(false);
  });

  it('ConsumersProgress waits for a committed record until this partition and offset is delivered', () => {
    const committed = withProducerEntry(
      withPartition(open, 0, {
        log: [
          batch({ pid: 7, epoch: 0, ghostTxn: 0 }),
          batch({ pid: 7, epoch: 0, kind: BatchKind.Commit, ghostTxn: 0 }),
        ],
      }),
      0,
      { pid: 7, txnFirstOffset: NO_OFFSET },
    );
    const waiting = goal('ConsumersProgress', 'ConsumersProgress[C0, p0, txn 0]');
    const delivering = (partition: number, offset: number): State => ({
      ...committed,
      consumers: committed.consumers.map((c) => ({
        ...c,
        delivered: [{ partition, offset, ghostTxn: 0, ghostRecord: 0 }],
      })),
    });
    expect(waiting.p(committed)).toBe(true);
    expect(waiting.p(delivering(0, 0))).toBe(false);
    expect(waiting.p(delivering(1, 0))).toBe(true);
    expect(waiting.p(delivering(0, 1))).toBe(true);
    expect(waiting.p(open)).toBe(false);
    expect(goal('ConsumersProgress', 'ConsumersProgress[C0, p0, txn 1]').p(committed)).toBe(false);
  });
});
