// The harness itself: a delivered request reaches the model's handler and its answer waits on
// the connection back; a client action is taken by its label.
import { describe, expect, it } from 'vitest';
import { Api, Err, Tm, TxnState } from '../state.ts';
import { TC, answer, handle, initial, kafkaConfig, request, take, txn, withTxn } from './harness.ts';

describe('conformance harness', () => {
  const cfg = kafkaConfig('kafka-3.5');

  it('delivers a request through the handler and leaves its answer on the way back', () => {
    const s = handle(cfg, initial(cfg), 0, TC, request(Api.InitProducerId, { txnId: 0 }));
    expect(answer(s, TC, 0)).toMatchObject({ api: Api.InitProducerId, error: Err.NONE, pid: 0, epoch: 0 });
    expect(txn(s, 0)).toMatchObject({ state: TxnState.Empty, pid: 0, epoch: 0 });
  });

  it('builds coordinator state that the handler reads', () => {
    const s0 = withTxn(initial(cfg), 0, { pid: 7, epoch: 3, state: TxnState.Ongoing, partitions: 1 });
    const s = handle(cfg, s0, 0, TC, request(Api.EndTxn, { txnId: 0, pid: 7, epoch: 2, commit: true }));
    expect(answer(s, TC, 0).error).toBe(Err.PRODUCER_FENCED);
    expect(txn(s, 0)!.state).toBe(TxnState.Ongoing);
  });

  it('takes a client action by its label, and says what is enabled when it is not', () => {
    const s = take(cfg, initial(cfg), 'P0.0: initTransactions');
    expect(s.producers[0]!.tm).toBe(Tm.INITIALIZING);
    expect(() => take(cfg, s, 'P0.0: beginTransaction')).toThrow(
      /not enabled: P0.0: beginTransaction; enabled: deliver P0.0→TC: InitProducerId/,
    );
  });
});
