// TRANSACTION_ABORTABLE on the coordinator's transactional answers: abortable for the 3.8+ client
// (every handler of TransactionManager calls abortableError, KAFKA-16314), fatal before it, and
// fatal while aborting, where the producer can only be closed.
import { describe, expect, it } from 'vitest';
import { initial, kafkaConfig, response, take, withProducer } from './conformance/harness.ts';
import { handleResponse } from './producer.ts';
import { Api, Err, type State, Tm } from './state.ts';

const bounds = { partitions: 1, transactionsPerInstance: 1, recordsPerTransaction: 1 };
const run = (generation: string, steps: string[]) => {
  const cfg = kafkaConfig(generation, bounds);
  return { cfg, s: steps.reduce((t: State, label) => take(cfg, t, label), initial(cfg)) };
};
const ready = [
  'P0.0: initTransactions',
  'deliver P0.0→TC: InitProducerId',
  'deliver TC→P0.0: InitProducerId response',
];
const adding = [...ready, 'P0.0: beginTransaction', 'P0.0: send(p0)', 'P0.0: sendTxnRequest'];
const ending = (decision: 'commitTransaction' | 'abortTransaction') => [
  ...adding,
  'deliver P0.0→TC: AddPartitionsToTxn',
  'deliver TC→P0.0: AddPartitionsToTxn response',
  'P0.0: sendProduce(p0)',
  'deliver P0.0→L0: Produce',
  'deliver L0→TC (verification): AddPartitionsToTxn',
  'deliver TC→L0 (verification): AddPartitionsToTxn response',
  'deliver L0→P0.0: Produce response',
  `P0.0: ${decision}`,
  'P0.0: sendTxnRequest',
];
const abortable = (api: Api) => response(api, { txnId: 0, error: Err.TRANSACTION_ABORTABLE });

describe('TRANSACTION_ABORTABLE on a transactional answer', () => {
  it.each([
    ['AddPartitionsToTxn', Api.AddPartitionsToTxn, adding],
    ['EndTxn of a commit', Api.EndTxn, ending('commitTransaction')],
  ] as const)('%s: abortable from the 3.8 client on, fatal before', (_name, api, steps) => {
    for (const [generation, tm] of [
      ['kafka-3.8', Tm.ABORTABLE_ERROR],
      ['kafka-3.6', Tm.FATAL_ERROR],
    ] as const) {
      const { cfg, s } = run(generation, steps);
      expect(s.producers[0]!.request?.api).toBe(api);
      const after = handleResponse(cfg, s, 0, abortable(api)).producers[0]!;
      expect([generation, after.tm]).toEqual([generation, tm]);
      if (tm === Tm.ABORTABLE_ERROR) expect(after.request).toBeNull();
    }
  });

  it('EndTxn of an abort: fatal, as abortTransaction cannot be called again', () => {
    const { cfg, s } = run('kafka-3.8', ending('abortTransaction'));
    expect(s.producers[0]!).toMatchObject({ tm: Tm.ABORTING_TRANSACTION, request: { api: Api.EndTxn } });
    expect(handleResponse(cfg, s, 0, abortable(Api.EndTxn)).producers[0]!.tm).toBe(Tm.FATAL_ERROR);
  });

  it('AddOffsetsToTxn: abortable from the 3.8 client on', () => {
    const { cfg, s } = run('kafka-3.8', ready);
    const sending = withProducer(s, 0, {
      tm: Tm.IN_TRANSACTION,
      request: { api: Api.AddOffsetsToTxn, partitions: 0, commit: false },
    });
    expect(handleResponse(cfg, sending, 0, abortable(Api.AddOffsetsToTxn)).producers[0]!.tm).toBe(
      Tm.ABORTABLE_ERROR,
    );
  });

  it('InitProducerId: abortable when it bumps an epoch, fatal when it is the first', () => {
    const { cfg, s } = run('kafka-3.8', ['P0.0: initTransactions', 'deliver P0.0→TC: InitProducerId']);
    expect(s.producers[0]!).toMatchObject({ tm: Tm.INITIALIZING, request: { api: Api.InitProducerId } });
    expect(handleResponse(cfg, s, 0, abortable(Api.InitProducerId)).producers[0]!.tm).toBe(Tm.FATAL_ERROR);
    const bumping = withProducer(s, 0, { pid: 7, epoch: 2 });
    expect(handleResponse(cfg, bumping, 0, abortable(Api.InitProducerId)).producers[0]!.tm).toBe(
      Tm.ABORTABLE_ERROR,
    );
  });
});
