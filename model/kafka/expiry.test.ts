// Expiry: the coordinator removes an idle transactional.id (transactional.id.expiration.ms), a
// leader drops the state of an idle producer id (producer.id.expiration.ms). Where each may
// happen, what the old producer id meets afterwards, and the client's reaction per generation.
import { describe, expect, it } from 'vitest';
import { compareVariants } from '../../checker/compare.ts';
import { bfs } from '../../checker/engine/bfs.ts';
import { stateView } from '../../checker/engine/trace.ts';
import { loadSpecFile, parseSpec } from '../../specs/load.ts';
import { P0 as P0_MASK, at } from './conformance/coordinator-support.ts';
import {
  TC,
  type Bounds,
  answer,
  handle,
  initial,
  kafkaConfig,
  labels,
  leader,
  request,
  take,
  txn,
  withProducerEntry,
} from './conformance/harness.ts';
import { produce } from './conformance/partition-support.ts';
import type { KafkaConfig } from './config.ts';
import { type State, Api, Err, NO_OFFSET, Tm, TxnState } from './state.ts';
import { kafkaRenderer } from './render/index.ts';
import { kafkaView } from './view.ts';

/** One producer, one partition, two transactions of one record, with the given fault budgets. */
function config(
  generation: string,
  faults: Partial<KafkaConfig['faults']>,
  bounds: Bounds = {},
  disable: string[] = [],
): KafkaConfig {
  const rules = Object.fromEntries(disable.map((n) => [n, false]));
  return kafkaConfig(
    generation,
    {
      partitions: 1,
      recordsPerTransaction: 1,
      faults: { ...kafkaConfig(generation).faults, ...faults },
      ...bounds,
    },
    rules,
  );
}

function run(cfg: KafkaConfig, s: State, steps: readonly string[]): State {
  return steps.reduce((state, label) => take(cfg, state, label), s);
}

const init = [
  'P0.0: initTransactions',
  'deliver P0.0→TC: InitProducerId',
  'deliver TC→P0.0: InitProducerId response',
];
const addP0 = [
  'P0.0: beginTransaction',
  'P0.0: send(p0)',
  'P0.0: sendTxnRequest',
  'deliver P0.0→TC: AddPartitionsToTxn',
  'deliver TC→P0.0: AddPartitionsToTxn response',
];
const verify = [
  'deliver L0→TC (verification): AddPartitionsToTxn',
  'deliver TC→L0 (verification): AddPartitionsToTxn response',
];
const commit = [
  'P0.0: commitTransaction',
  'P0.0: sendTxnRequest',
  'deliver P0.0→TC: EndTxn',
  'deliver TC→L0: WriteTxnMarkers',
  'deliver L0→TC: WriteTxnMarkers response',
  'TC: completeTransaction(t0)',
  'deliver TC→P0.0: EndTxn response',
];

/**
 * A transaction's record written to p0 and acknowledged: through AddPartitionsToTxn first, then
 * verified (3.6 on); under transaction version 2 the partition joins through the leader.
 */
function produceP0(c: KafkaConfig): string[] {
  const sent = ['P0.0: sendProduce(p0)', 'deliver P0.0→L0: Produce'];
  const answered = 'deliver L0→P0.0: Produce response';
  if (c.rules.tv2) return ['P0.0: beginTransaction', 'P0.0: send(p0)', ...sent, ...verify, answered];
  return [...addP0, ...sent, ...(c.rules.verification ? verify : []), answered];
}

/** Budgets the state spends, changed on an existing state. */
function withBudget(s: State, faults: Partial<State['faults']>): State {
  return { ...s, faults: { ...s.faults, ...faults } };
}

describe('transactional.id expiry', () => {
  const cfg = config('kafka-3.5', { transactionalIdExpiries: 1 });
  const committed = run(cfg, initial(cfg), [...init, ...produceP0(cfg), ...commit]);

  it('is reachable once the transaction is complete: the tombstone replaces the record, a failover does not bring the id back', () => {
    expect(labels(cfg, committed)).toContain('TC: transactionalIdExpiry(t0)');
    const expired = take(cfg, committed, 'TC: transactionalIdExpiry(t0)');
    expect(txn(expired, 0)).toBeNull();
    expect(expired.coordinator.log[0]).toBeNull();
    expect(expired.faults.transactionalIdExpiries).toBe(0);
    expect(
      txn(take(cfg, withBudget(expired, { coordinatorFailovers: 1 }), 'TC: coordinatorFailover'), 0),
    ).toBeNull();
  });

  it('never removes an Ongoing or Prepare* transaction, a pending transition, or an id a request is on its way for', () => {
    const s0 = initial(cfg);
    for (const state of [TxnState.Ongoing, TxnState.PrepareCommit, TxnState.PrepareAbort])
      expect(labels(cfg, at(s0, { state, partitions: P0_MASK }))).not.toContain(
        'TC: transactionalIdExpiry(t0)',
      );
    expect(
      labels(cfg, at(s0, { state: TxnState.CompleteCommit, pendingState: TxnState.Ongoing })),
    ).not.toContain('TC: transactionalIdExpiry(t0)');
    const asked = run(cfg, committed, ['P0.0: beginTransaction', 'P0.0: send(p0)', 'P0.0: sendTxnRequest']);
    expect(labels(cfg, asked)).not.toContain('TC: transactionalIdExpiry(t0)');
    expect(labels(cfg, withBudget(committed, { transactionalIdExpiries: 0 }))).not.toContain(
      'TC: transactionalIdExpiry(t0)',
    );
  });

  it('the old producer id meets INVALID_PRODUCER_ID_MAPPING; InitProducerId with it creates the id again with a new producer id at epoch 0', () => {
    const expired = take(cfg, committed, 'TC: transactionalIdExpiry(t0)');
    expect(
      answer(
        handle(
          cfg,
          expired,
          0,
          TC,
          request(Api.AddPartitionsToTxn, { txnId: 0, pid: 0, epoch: 0, partitions: P0_MASK }),
        ),
        TC,
        0,
      ).error,
    ).toBe(Err.INVALID_PRODUCER_ID_MAPPING);
    expect(
      answer(
        handle(cfg, expired, 0, TC, request(Api.EndTxn, { txnId: 0, pid: 0, epoch: 0, commit: true })),
        TC,
        0,
      ).error,
    ).toBe(Err.INVALID_PRODUCER_ID_MAPPING);
    // isValidProducerId: metadata just created (epoch -1) accepts any expected producer id and epoch (KIP-360).
    const reinit = handle(cfg, expired, 0, TC, request(Api.InitProducerId, { txnId: 0, pid: 0, epoch: 0 }));
    expect(answer(reinit, TC, 0)).toMatchObject({ error: Err.NONE, pid: 1, epoch: 0 });
  });

  it('records in the ghost history which client transaction meets the expired producer id', () => {
    const expired = take(cfg, committed, 'TC: transactionalIdExpiry(t0)');
    expect(expired.history.map((h) => h.expired)).toEqual([false, true]);
    expect(kafkaView(cfg, expired).history[1]).toMatchObject({ expired: true });
    const noExpiry = kafkaConfig('kafka-3.5');
    expect(kafkaView(noExpiry, initial(noExpiry)).history[0]).not.toHaveProperty('expired');
  });

  // The next transaction's first request meets the expiry. Before KIP-360 the client's handlers
  // are fatal; with it the client aborts and bumps (abortableErrorIfPossible, 2.5); from 4.0 the
  // error is fatal (KAFKA-18019).
  const nextTransaction = (c: KafkaConfig): State =>
    take(c, run(c, initial(c), [...init, ...produceP0(c), ...commit]), 'TC: transactionalIdExpiry(t0)');

  it.each(['kafka-0.11', 'kafka-4.0', 'kafka-latest'])('%s: the client goes fatal', (generation) => {
    const c = config(generation, { transactionalIdExpiries: 1 });
    const s = nextTransaction(c);
    // Under transaction version 2 the leader's add meets the expiry first, and its Produce answer
    // is fatal too (maybeTransitionToErrorState@4.0.0, KAFKA-18019).
    const tail = c.rules.tv2 ? produceP0(c) : addP0;
    const after = run(c, s, tail);
    expect(after.producers[0]!.tm).toBe(Tm.FATAL_ERROR);
    expect(after.history[1]).toMatchObject({ expired: true });
  });

  it.each(['kafka-3.5', 'kafka-3.6', 'kafka-3.8'])(
    '%s: the client aborts and InitProducerId(old pid, epoch) gets a new producer id',
    (generation) => {
      const c = config(generation, { transactionalIdExpiries: 1 });
      let s = run(c, nextTransaction(c), addP0);
      expect(s.producers[0]).toMatchObject({ tm: Tm.ABORTABLE_ERROR, bumpRequired: true });
      // Nothing was added, so no EndTxn: straight to the bump.
      s = run(c, s, [
        'P0.0: abortTransaction',
        'P0.0: sendTxnRequest',
        'P0.0: sendTxnRequest',
        'deliver P0.0→TC: InitProducerId',
        'deliver TC→P0.0: InitProducerId response',
      ]);
      expect(s.producers[0]).toMatchObject({ tm: Tm.READY, pid: 1, epoch: 0 });
      expect(txn(s, 0)).toMatchObject({ pid: 1, epoch: 0, state: TxnState.Empty });
    },
  );

  it('kafka-4.0 without invalidPidMappingFatal: the Produce answer that meets the expiry is abortable', () => {
    const c = config('kafka-4.0', { transactionalIdExpiries: 1 }, {}, ['invalidPidMappingFatal']);
    expect(run(c, nextTransaction(c), produceP0(c)).producers[0]!.tm).toBe(Tm.ABORTABLE_ERROR);
  });

  // KAFKA-18019 is a rule of the 4.0 client alone: on a cluster finalized at transaction.version 1
  // its transactions run at version 1 (AddPartitionsToTxn, verified Produce) and the error is
  // still fatal (TransactionsExpirationTest.testFatalErrorAfterInvalidProducerIdMapping, TV1 and TV2).
  it('invalidPidMappingFatal (KAFKA-18019, 4.0.0): fatal at transaction version 1 too; without it the client aborts and bumps', () => {
    const tv1 = (disable: string[]) =>
      config('kafka-4.0', { transactionalIdExpiries: 1 }, { transactionVersion: 1 }, disable);
    const produced = [...addP0, 'P0.0: sendProduce(p0)', 'deliver P0.0→L0: Produce', ...verify];
    const meetExpiry = (c: KafkaConfig): State =>
      run(c, run(c, initial(c), [...init, ...produced, 'deliver L0→P0.0: Produce response', ...commit]), [
        'TC: transactionalIdExpiry(t0)',
        ...addP0,
      ]);
    const on = tv1([]);
    expect(meetExpiry(on).producers[0]!.tm).toBe(Tm.FATAL_ERROR);
    const off = tv1(['invalidPidMappingFatal']);
    expect(meetExpiry(off).producers[0]).toMatchObject({ tm: Tm.ABORTABLE_ERROR, bumpRequired: true });
  });

  it('kafka-3.5: an older instance that meets the expiry comes back with a new producer id and fences the newer one', () => {
    const c = config(
      'kafka-3.5',
      { transactionalIdExpiries: 1 },
      { instancesPerId: 2, transactionsPerInstance: 1 },
    );
    const initNewer = [
      'P0.1: initTransactions',
      'deliver P0.1→TC: InitProducerId',
      'deliver TC→P0.1: InitProducerId response',
    ];
    let s = run(c, initial(c), [...init, ...initNewer, 'TC: transactionalIdExpiry(t0)']);
    expect(s.history.map((h) => h.expired)).toEqual([true, true]);
    s = run(c, s, [
      ...addP0,
      'P0.0: abortTransaction',
      'P0.0: sendTxnRequest',
      'P0.0: sendTxnRequest',
      'deliver P0.0→TC: InitProducerId',
      'deliver TC→P0.0: InitProducerId response',
    ]);
    expect(s.producers[0]).toMatchObject({ tm: Tm.READY, pid: 1, epoch: 0 });
    const addNewer = [
      'P0.1: beginTransaction',
      'P0.1: send(p0)',
      'P0.1: sendTxnRequest',
      'deliver P0.1→TC: AddPartitionsToTxn',
      'deliver TC→P0.1: AddPartitionsToTxn response',
    ];
    s = run(c, s, [
      ...addNewer,
      'P0.1: abortTransaction',
      'P0.1: sendTxnRequest',
      'P0.1: sendTxnRequest',
      'deliver P0.1→TC: InitProducerId',
      'deliver TC→P0.1: InitProducerId response',
    ]);
    expect(s.producers[1]!.tm).toBe(Tm.FATAL_ERROR);
  });

  it('kafka-3.5: an EndTxn answered INVALID_PRODUCER_ID_MAPPING while aborting with a bump due goes on to InitProducerId', () => {
    // A commit whose EndTxn answer is late: the request times out, the id expires, the retry meets no metadata.
    const c = config(
      'kafka-3.5',
      { transactionalIdExpiries: 1, requestTimeouts: 1 },
      { transactionsPerInstance: 1 },
    );
    let s = run(c, initial(c), [...init, ...produceP0(c), ...commit.slice(0, 6)]);
    s = run(c, s, [
      'TC: transactionalIdExpiry(t0)',
      'P0.0: requestTimeout(EndTxn)',
      'deliver P0.0→TC#1: EndTxn',
      'deliver TC→P0.0#1: EndTxn response',
    ]);
    expect(s.producers[0]).toMatchObject({ tm: Tm.ABORTABLE_ERROR, bumpRequired: true });
    s = run(c, s, [
      'P0.0: abortTransaction',
      'P0.0: sendTxnRequest',
      'deliver P0.0→TC#1: EndTxn',
      'deliver TC→P0.0#1: EndTxn response',
    ]);
    expect(s.producers[0]!.tm).toBe(Tm.INITIALIZING);
    s = run(c, s, [
      'P0.0: sendTxnRequest',
      'deliver P0.0→TC#1: InitProducerId',
      'deliver TC→P0.0#1: InitProducerId response',
    ]);
    expect(s.producers[0]).toMatchObject({ tm: Tm.READY, pid: 1, epoch: 0 });
  });
});

describe('producer state expiry', () => {
  const cfg = config('kafka-3.5', { producerStateExpiries: 1 });
  const PID = 3;

  it('never drops the entry of a producer with an open transaction', () => {
    const open = withProducerEntry(initial(cfg), 0, { pid: PID, epoch: 0, lastSeqs: [0], txnFirstOffset: 0 });
    expect(labels(cfg, open)).not.toContain('L0: producerStateExpiry(pid 3)');
  });

  it('drops an idle entry, but not while a request of that producer id is on its way to the leader', () => {
    const idle = withProducerEntry(initial(cfg), 0, { pid: PID, epoch: 0, lastSeqs: [0] });
    const dropped = take(cfg, idle, 'L0: producerStateExpiry(pid 3)');
    expect(dropped.partitions[0]!.producers).toEqual([]);
    expect(dropped.faults.producerStateExpiries).toBe(0);
    const sent = {
      ...idle,
      network: [
        {
          from: 0,
          to: leader(0),
          conn: 0,
          messages: [request(Api.Produce, { txnId: 0, pid: PID, epoch: 0, partitions: 0, seq: 1 })],
        },
      ],
    };
    expect(labels(cfg, sent)).not.toContain('L0: producerStateExpiry(pid 3)');
    // Before KAFKA-9144 an entry with no batch at its epoch has no timestamp: it goes even then.
    const early = config('kafka-3.5', { producerStateExpiries: 1 }, {}, ['markerTimestamp']);
    const markerOnly = {
      ...sent,
      partitions: withProducerEntry(initial(early), 0, { pid: PID, epoch: 1, lastSeqs: [] }).partitions,
    };
    expect(labels(early, markerOnly)).toContain('L0: producerStateExpiry(pid 3)');
    expect(labels(cfg, markerOnly)).not.toContain('L0: producerStateExpiry(pid 3)');
  });

  it('afterwards any sequence at any epoch is accepted, as from a new producer (checkSequence)', () => {
    const fenced = withProducerEntry(initial(cfg), 0, {
      pid: PID,
      epoch: 2,
      lastSeqs: [4],
      txnFirstOffset: NO_OFFSET,
    });
    const dropped = take(cfg, fenced, 'L0: producerStateExpiry(pid 3)');
    const late = produce(cfg, dropped, 0, { pid: PID, epoch: 1, seq: 7 });
    expect(answer(late, leader(0), 0).error).toBe(Err.NONE);
    expect(answer(produce(cfg, fenced, 0, { pid: PID, epoch: 1, seq: 7 }), leader(0), 0).error).toBe(
      Err.INVALID_PRODUCER_EPOCH,
    );
  });

  it('drops a lingering verification entry of a quiet producer id (kafka-3.6)', () => {
    const c = config('kafka-3.6', { producerStateExpiries: 1 });
    const lingering = {
      ...initial(c),
      partitions: [
        {
          ...initial(c).partitions[0]!,
          verifications: [{ pid: PID, epoch: 0, guard: 0, lowestSeq: 0, supportsEpochBump: false }],
          nextGuard: 1,
        },
      ],
    };
    expect(take(c, lingering, 'L0: producerStateExpiry(pid 3)').partitions[0]!.verifications).toEqual([]);
  });

  it('loses de-duplication: a retry after the expiry is appended again, until partition verification (3.6) refuses its fenced epoch', () => {
    // The transaction times out (the ABORT marker bumps the epoch), the leader forgets the producer,
    // and the client re-sends its batch after a request timeout.
    const spec = {
      model: 'kafka',
      partitions: 1,
      transactionsPerInstance: 1,
      consumers: { readCommitted: 0 },
      faults: { producerStateExpiries: 1, transactionTimeouts: 1, requestTimeouts: 1 },
      properties: ['Idempotence'],
      deadlock: true,
    };
    const verdicts = compareVariants('expiry', spec, ['kafka-3.5', 'kafka-3.6'], {});
    expect(verdicts.map((r) => r.properties.Idempotence!.status)).toEqual(['violated', 'holds']);
    const withoutExpiry = compareVariants(
      'expiry',
      { ...spec, faults: { ...spec.faults, producerStateExpiries: 0 } },
      ['kafka-3.5'],
      {},
    );
    expect(withoutExpiry[0]!.properties.Idempotence!.status).toBe('holds');
  });
});

describe('expiry in a counterexample', () => {
  /** The steps of the shipped spec's counterexample as the renderer tells them. */
  function told(file: string) {
    const written = loadSpecFile(file);
    const spec = parseSpec(file, written.raw, '');
    const model = spec.entry.build(spec.params, spec.properties);
    const { trace } = bfs(model, { deadlockAllowed: true }).violation!;
    return kafkaRenderer.steps(
      trace.states.map((st) => stateView(model, st)),
      trace.actions,
    );
  }

  it('shows the transactional.id expiry as a fault of the coordinator, with its tombstone', () => {
    const step = told('specs/kafka/transactional-id-expiry.json').find((m) =>
      m.action.includes('transactional.id.expiration.ms'),
    )!;
    expect(step).toMatchObject({
      actor: 'TC',
      action: 't0 expired (transactional.id.expiration.ms): tombstone written, metadata removed',
    });
    expect(step.changes).toEqual(
      expect.arrayContaining([
        '__transaction_state: t0 tombstone',
        'P0.0/T0: its producer id expired at the coordinator',
      ]),
    );
    expect(step.events).toMatchObject([{ kind: 'note', over: 'TC', fault: true }]);
  });

  it('shows the producer state expiry as a fault of the leader, with the entry it drops', () => {
    const step = told('specs/kafka/producer-state-expiry.json').find((m) =>
      m.action.includes('producer.id.expiration.ms'),
    )!;
    expect(step).toMatchObject({
      actor: 'L0',
      action: 'producer state of pid 0 expired (producer.id.expiration.ms)',
      changes: ['p0: producer state of pid 0 dropped'],
    });
    expect(step.events).toMatchObject([{ kind: 'note', over: 'L0', fault: true }]);
  });
});
