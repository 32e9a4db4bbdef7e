// Coordinator failover between an append and its answer, and the new coordinator's loading window:
// what the old coordinator answers, what the new one reads, what the client and the leaders do
// with NOT_COORDINATOR and COORDINATOR_LOAD_IN_PROGRESS, and how a spec opts in.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../checker/cli.ts';
import type { KafkaConfig } from './config.ts';
import { P0, at } from './conformance/coordinator-support.ts';
import {
  TC,
  answer,
  handle,
  initial,
  kafkaConfig,
  labels,
  leader,
  messages,
  request,
  requestsFrom,
  take,
  txn,
} from './conformance/harness.ts';
import { VERIFICATION_CONN } from './partition.ts';
import { kafkaRenderer } from './render/index.ts';
import { Api, Err, NO_STATE, Tm, TxnState } from './state.ts';
import { kafkaView } from './view.ts';

function config(generation: string, bounds: Partial<KafkaConfig> = {}): KafkaConfig {
  const faults = {
    ...kafkaConfig(generation).faults,
    coordinatorFailovers: 2,
    transactionTimeouts: 1,
    transactionalIdExpiries: 1,
  };
  return kafkaConfig(generation, {
    coordinatorAppends: 'async',
    coordinatorLoading: 'async',
    faults,
    ...bounds,
  });
}

describe('a failover while appends are in flight', () => {
  const cfg = config('kafka-3.8', { transactionalIds: 2, instancesPerId: 1 });
  // t0 (P0.0) commits: its PrepareCommit append is in flight; t1 (P1.0) initialises.
  let s = at(initial(cfg), { pid: 5, epoch: 0, state: TxnState.Ongoing, partitions: P0, ghostTxn: 0 });
  s = handle(cfg, s, 0, TC, request(Api.EndTxn, { txnId: 0, pid: 5, epoch: 0, commit: true, ghostTxn: 0 }));
  const both = handle(cfg, s, 1, TC, request(Api.InitProducerId, { txnId: 1 }));

  it('offers every choice of appends kept and lost', () => {
    expect(
      labels(cfg, both)
        .filter((l) => l.startsWith('TC: coordinatorFailover'))
        .sort(),
    ).toEqual([
      'TC: coordinatorFailover(t0 kept, t1 kept)',
      'TC: coordinatorFailover(t0 kept, t1 lost)',
      'TC: coordinatorFailover(t0 lost, t1 kept)',
      'TC: coordinatorFailover(t0 lost, t1 lost)',
    ]);
  });

  it('answers each request NOT_COORDINATOR, whether or not its record stayed', () => {
    for (const label of [
      'TC: coordinatorFailover(t0 kept, t1 lost)',
      'TC: coordinatorFailover(t0 lost, t1 kept)',
    ]) {
      const after = take(cfg, both, label);
      expect(answer(after, TC, 0)).toMatchObject({ api: Api.EndTxn, error: Err.NOT_COORDINATOR });
      expect(answer(after, TC, 1)).toMatchObject({
        api: Api.InitProducerId,
        error: Err.NOT_COORDINATOR,
        pid: -1,
        epoch: -1,
      });
      expect(after.coordinator).toMatchObject({
        epoch: 1,
        loading: true,
        appends: [],
        metadata: [null, null],
      });
    }
  });

  it('a kept PrepareCommit decides the transaction: the new coordinator loads it and sends its markers', () => {
    const kept = take(cfg, both, 'TC: coordinatorFailover(t0 kept, t1 lost)');
    expect(kept.coordinator.log[0]).toMatchObject({ state: TxnState.PrepareCommit });
    expect(kept.coordinator.log[1]).toBeNull();
    expect(kept.history[0]!.prepared).toBe(true);
    const loaded = take(cfg, kept, 'TC: loadTransactions');
    expect(txn(loaded, 0)).toMatchObject({
      state: TxnState.PrepareCommit,
      pendingState: TxnState.CompleteCommit,
    });
    expect(requestsFrom(loaded, TC)).toMatchObject([
      { to: leader(0), conn: 1, request: { api: Api.WriteTxnMarkers, commit: true, coordinatorEpoch: 1 } },
    ]);
  });

  it('a lost PrepareCommit leaves the transaction Ongoing, and the client retries its EndTxn at the new coordinator', () => {
    const lost = take(cfg, both, 'TC: coordinatorFailover(t0 lost, t1 lost)');
    expect(lost.history[0]!.prepared).toBe(false);
    const loaded = take(cfg, lost, 'TC: loadTransactions');
    expect(txn(loaded, 0)).toMatchObject({ state: TxnState.Ongoing, pendingState: NO_STATE });
    expect(txn(loaded, 1)).toBeNull();
  });
});

describe('requests on their way to the old coordinator', () => {
  it("a leader's verification is answered NOT_COORDINATOR, and the leader answers the producer NOT_ENOUGH_REPLICAS", () => {
    const cfg = config('kafka-3.8');
    let s = at(initial(cfg), { pid: 0, epoch: 0, state: TxnState.Ongoing, partitions: P0 });
    s = handle(
      cfg,
      s,
      0,
      leader(0),
      request(Api.Produce, { txnId: 0, pid: 0, epoch: 0, partitions: 0, seq: 0 }),
    );
    expect(messages(s, leader(0), TC, VERIFICATION_CONN)).toMatchObject([
      { api: Api.AddPartitionsToTxn, verifyOnly: true },
    ]);
    s = take(cfg, s, 'TC: coordinatorFailover');
    expect(messages(s, leader(0), TC, VERIFICATION_CONN)).toEqual([]);
    s = take(cfg, s, `deliver TC→L0 (verification): AddPartitionsToTxn response`);
    expect(answer(s, leader(0), 0)).toMatchObject({ api: Api.Produce, error: Err.NOT_ENOUGH_REPLICAS });
    expect(s.partitions[0]!.log).toEqual([]);
  });

  it('an answer to a connection the client closed is lost with it', () => {
    const cfg = config('kafka-3.8', { faults: { ...config('kafka-3.8').faults, requestTimeouts: 1 } });
    let s = take(
      cfg,
      take(cfg, initial(cfg), 'P0.0: initTransactions'),
      'P0.0: requestTimeout(InitProducerId)',
    );
    // The first copy is on connection 0, the re-send on connection 1.
    s = take(cfg, s, 'TC: coordinatorFailover');
    expect(messages(s, TC, 0, 0)).toEqual([]);
    expect(answer(s, TC, 0, 1)).toMatchObject({ api: Api.InitProducerId, error: Err.NOT_COORDINATOR });
  });
});

describe('the loading window', () => {
  const cfg = config('kafka-3.8');
  const ongoing = at(initial(cfg), { pid: 0, epoch: 0, state: TxnState.Ongoing, partitions: P0 });
  const loading = take(cfg, ongoing, 'TC: coordinatorFailover');

  it('offers loadTransactions, another failover, and none of the coordinator steps that need metadata', () => {
    const tc = labels(cfg, loading).filter((l) => l.startsWith('TC: '));
    expect(tc).toEqual(['TC: coordinatorFailover', 'TC: loadTransactions']);
    expect(labels(cfg, take(cfg, loading, 'TC: loadTransactions'))).toContain('TC: transactionTimeout(t0)');
  });

  it('a second failover during loading starts loading again at the next coordinator epoch', () => {
    const again = take(cfg, loading, 'TC: coordinatorFailover');
    expect(again.coordinator).toMatchObject({ epoch: 2, loading: true });
    expect(txn(take(cfg, again, 'TC: loadTransactions'), 0)).toMatchObject({
      state: TxnState.Ongoing,
      partitions: P0,
    });
  });

  it('the client retries COORDINATOR_LOAD_IN_PROGRESS until the coordinator has loaded', () => {
    let s = take(cfg, take(cfg, loading, 'P0.0: initTransactions'), 'deliver P0.0→TC: InitProducerId');
    expect(answer(s, TC, 0).error).toBe(Err.COORDINATOR_LOAD_IN_PROGRESS);
    s = take(cfg, s, 'deliver TC→P0.0: InitProducerId response');
    expect(s.producers[0]!.tm).toBe(Tm.INITIALIZING);
    expect(messages(s, 0, TC)).toMatchObject([{ api: Api.InitProducerId, response: false }]);
    s = take(cfg, take(cfg, s, 'TC: loadTransactions'), 'deliver P0.0→TC: InitProducerId');
    // The loaded Ongoing transaction is fenced: its PrepareAbort is appended before the answer.
    expect(txn(s, 0)).toMatchObject({
      state: TxnState.Ongoing,
      epoch: 1,
      pendingState: TxnState.PrepareAbort,
    });
    expect(answer(take(cfg, s, 'TC: completeAppend(t0)'), TC, 0).error).toBe(Err.CONCURRENT_TRANSACTIONS);
  });

  it('is shown in the view and the rendered step only with asynchronous loading', () => {
    expect(kafkaView(cfg, loading).coordinator.loading).toBe(true);
    const atomic = kafkaConfig('kafka-3.8');
    expect(kafkaView(atomic, initial(atomic)).coordinator).not.toHaveProperty('loading');
    const steps = kafkaRenderer.steps(
      [kafkaView(cfg, ongoing), kafkaView(cfg, loading)],
      ['TC: coordinatorFailover'],
    );
    expect(steps[0]!.action).toContain('loading __transaction_state, coordinator epoch 1');
  });
});

describe('atomic loading (the default)', () => {
  it('loads the log in the failover step', () => {
    const cfg = config('kafka-3.8', { coordinatorLoading: 'atomic' });
    const s = take(
      cfg,
      at(initial(cfg), { pid: 0, epoch: 0, state: TxnState.Ongoing, partitions: P0 }),
      'TC: coordinatorFailover',
    );
    expect(s.coordinator).toMatchObject({ epoch: 1, loading: false });
    expect(txn(s, 0)).toMatchObject({ state: TxnState.Ongoing, partitions: P0 });
    expect(labels(cfg, s)).not.toContain('TC: loadTransactions');
  });
});

describe('spec field coordinatorLoading', () => {
  const dir = mkdtempSync(join(tmpdir(), 'txcheck-loading-'));
  async function check(name: string, fields: Record<string, unknown>) {
    const file = join(dir, `${name}.json`);
    writeFileSync(
      file,
      JSON.stringify({
        model: 'kafka',
        partitions: 1,
        consumers: { readCommitted: 0 },
        deadlock: true,
        maxStates: 300,
        ...fields,
      }),
    );
    let out = '';
    const code = await main(['check', file, '--json', '--workers', '1'], {
      out: (t) => (out += t),
      err: () => {},
      errIsTTY: false,
    });
    return { file, code, out };
  }

  it('"async" gives the new coordinator its own loading step', async () => {
    const { out } = await check('async', {
      coordinatorLoading: 'async',
      faults: { coordinatorFailovers: 1 },
    });
    expect(JSON.parse(out).coverage.fired.loadTransactions).toBeGreaterThan(0);
  });

  it('refuses an unknown mode in one line', async () => {
    const { file, code, out } = await check('bad', { coordinatorLoading: 'lazy' });
    expect(code).toBe(2);
    expect(JSON.parse(out).message).toBe(
      `${file}: coordinatorLoading: expected one of "atomic", "async", got "lazy"`,
    );
  });
});
