// Asynchronous coordinator appends: the window between a request and its append's completion,
// the client's retry after a failed append, and how a spec opts in.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../checker/cli.ts';
import { P0, at } from './conformance/coordinator-support.ts';
import {
  TC,
  answer,
  handle,
  initial,
  kafkaConfig,
  labels,
  messages,
  request,
  take,
  txn,
} from './conformance/harness.ts';
import { Api, Err, NO_STATE, Tm, TxnState } from './state.ts';
import { kafkaView } from './view.ts';

const faults = { ...kafkaConfig('kafka-3.8').faults, appendFailures: 1 };
const asyncCfg = kafkaConfig('kafka-3.8', { coordinatorAppends: 'async', faults, instancesPerId: 2 });

describe('the append window', () => {
  const s0 = at(initial(asyncCfg), { pid: 0, epoch: 0, state: TxnState.Empty });
  const adding = handle(
    asyncCfg,
    s0,
    0,
    TC,
    request(Api.AddPartitionsToTxn, { txnId: 0, pid: 0, epoch: 0, partitions: P0 }),
  );

  it('answers other requests for the transactional.id CONCURRENT_TRANSACTIONS until the append ends', () => {
    const init = handle(asyncCfg, adding, 1, TC, request(Api.InitProducerId, { txnId: 0 }));
    expect(answer(init, TC, 1).error).toBe(Err.CONCURRENT_TRANSACTIONS);
    const end = handle(
      asyncCfg,
      adding,
      0,
      TC,
      request(Api.EndTxn, { txnId: 0, pid: 0, epoch: 0, commit: true }),
    );
    expect(answer(end, TC, 0).error).toBe(Err.CONCURRENT_TRANSACTIONS);
    expect(txn(end, 0)!.pendingState).toBe(TxnState.Ongoing);
  });

  it('offers completion always and failure only while the budget lasts', () => {
    expect(labels(asyncCfg, adding)).toEqual(
      expect.arrayContaining(['TC: completeAppend(t0)', 'TC: failAppend(t0)']),
    );
    const noBudget = { ...adding, faults: { ...adding.faults, appendFailures: 0 } };
    expect(labels(asyncCfg, noBudget)).toContain('TC: completeAppend(t0)');
    expect(labels(asyncCfg, noBudget)).not.toContain('TC: failAppend(t0)');
  });

  it('shows the appends in flight in the view, only with asynchronous appends', () => {
    expect(kafkaView(asyncCfg, adding).coordinator.pendingAppends).toEqual([
      {
        transactionalId: 't0',
        state: 'Ongoing',
        producerId: 0,
        producerEpoch: 0,
        partitions: ['p0'],
        epochFence: false,
        answers: 'P0.0 (AddPartitionsToTxn)',
      },
    ]);
    const atomic = kafkaConfig('kafka-3.8');
    expect(kafkaView(atomic, initial(atomic)).coordinator.pendingAppends).toBeUndefined();
    expect(kafkaView(atomic, initial(atomic)).faultsLeft).not.toHaveProperty('appendFailures');
  });

  it('with atomic appends (the default) installs the transition and answers in the request step', () => {
    const cfg = kafkaConfig('kafka-3.8');
    const s = handle(
      cfg,
      at(initial(cfg), { pid: 0, epoch: 0, state: TxnState.Empty }),
      0,
      TC,
      request(Api.AddPartitionsToTxn, { txnId: 0, pid: 0, epoch: 0, partitions: P0 }),
    );
    expect(answer(s, TC, 0).error).toBe(Err.NONE);
    expect(txn(s, 0)).toMatchObject({ state: TxnState.Ongoing, pendingState: NO_STATE });
    expect(s.coordinator.appends).toEqual([]);
  });
});

describe('a failed append at the client', () => {
  it('is answered COORDINATOR_NOT_AVAILABLE, and the client sends the same request again', () => {
    const cfg = kafkaConfig('kafka-3.8', { coordinatorAppends: 'async', faults });
    let s = take(cfg, initial(cfg), 'P0.0: initTransactions');
    s = take(cfg, s, 'deliver P0.0→TC: InitProducerId');
    s = take(cfg, s, 'TC: failAppend(t0)');
    expect(answer(s, TC, 0)).toMatchObject({ api: Api.InitProducerId, error: Err.COORDINATOR_NOT_AVAILABLE });
    s = take(cfg, s, 'deliver TC→P0.0: InitProducerId response');
    expect(messages(s, 0, TC)).toMatchObject([{ api: Api.InitProducerId, response: false }]);
    expect(s.producers[0]!.tm).toBe(Tm.INITIALIZING);
  });
});

describe('spec fields', () => {
  const dir = mkdtempSync(join(tmpdir(), 'txcheck-appends-'));
  async function check(name: string, fields: Record<string, unknown>) {
    const file = join(dir, `${name}.json`);
    writeFileSync(
      file,
      JSON.stringify({
        model: 'kafka',
        partitions: 1,
        consumers: { readCommitted: 0 },
        deadlock: true,
        maxStates: 200,
        ...fields,
      }),
    );
    let out = '';
    let err = '';
    const code = await main(['check', file, '--json', '--workers', '1'], {
      out: (t) => (out += t),
      err: (t) => (err += t),
      errIsTTY: false,
    });
    return { file, code, out, err };
  }

  it('appendFailures makes appends asynchronous', async () => {
    const { out } = await check('failures', { faults: { appendFailures: 1 } });
    expect(JSON.parse(out).coverage.fired.completeAppend).toBeGreaterThan(0);
  });

  it('"coordinatorAppends": "async" opens the window without failures', async () => {
    const { out } = await check('window', { coordinatorAppends: 'async' });
    const fired = JSON.parse(out).coverage.fired;
    expect(fired.completeAppend).toBeGreaterThan(0);
    expect(fired.failAppend).toBe(0);
  });

  it('refuses atomic appends that may fail, in one line', async () => {
    const { file, code, out } = await check('atomic-failures', {
      coordinatorAppends: 'atomic',
      faults: { appendFailures: 1 },
    });
    expect(code).toBe(2);
    expect(JSON.parse(out).message).toBe(
      `${file}: coordinatorAppends: expected "async" (or no field) when faults.appendFailures is above 0, got "atomic"`,
    );
  });
});
