// The application's side of the producer: which KafkaProducer calls a spec's bounds allow, and
// when. These are the model's own rules (Kafka's tests drive the producer by hand), so each case
// states the bound it pins.
import { describe, expect, it } from 'vitest';
import { bfs } from '../../checker/engine/bfs.ts';
import type { Model } from '../../checker/engine/model.ts';
import { parseSpec } from '../../specs/load.ts';
import { type State, Api, BatchStatus, Decision, Instance, Tm, Told } from './state.ts';
import {
  EPOCH,
  P0,
  PID,
  TC,
  act,
  clientConfig,
  enabled,
  groupCoordinator,
  leader,
  producer,
  ready,
  respond,
  sentTo,
  transformConfig,
  withPartitionsAdded,
} from './conformance/client-support.ts';
import { initial, labels, take, withProducer } from './conformance/harness.ts';

describe('instances of one transactional.id', () => {
  it('the first instance may start at once, and only once', () => {
    const cfg = clientConfig('kafka-3.5', { instancesPerId: 2 });
    expect(labels(cfg, initial(cfg))).toContain('P0.0: initTransactions');
    expect(labels(cfg, initial(cfg))).not.toContain('P0.1: initTransactions');
    expect(labels(cfg, act(cfg, initial(cfg), 'initTransactions'))).not.toContain('P0.0: initTransactions');
  });

  it('"anytime": the next instance may start once the previous one started', () => {
    const cfg = clientConfig('kafka-3.5', { instancesPerId: 2 });
    expect(labels(cfg, act(cfg, initial(cfg), 'initTransactions'))).toContain('P0.1: initTransactions');
  });

  it('"after-crash": the next instance starts only once the previous one crashed', () => {
    const base = clientConfig('kafka-3.5', { instancesPerId: 2, instanceStart: 'after-crash' });
    const cfg = { ...base, faults: { ...base.faults, producerCrashes: 1 } };
    const started = act(cfg, initial(cfg), 'initTransactions');
    expect(labels(cfg, started)).not.toContain('P0.1: initTransactions');
    const crashed = take(cfg, started, 'P0.0: crash');
    expect(crashed.producers[P0]!.status).toBe(Instance.Crashed);
    expect(labels(cfg, crashed)).toContain('P0.1: initTransactions');
  });
});

describe('a transaction of the produce app', () => {
  const cfg = clientConfig('kafka-3.5', {
    transactionsPerInstance: 2,
    recordsPerTransaction: 2,
    partitions: 2,
  });

  it('begins only when READY with no request in flight, up to transactionsPerInstance times', () => {
    const s = ready(cfg);
    expect(enabled(cfg, s, 'beginTransaction')).toBe(true);
    expect(
      enabled(
        cfg,
        withProducer(s, P0, { request: { api: Api.InitProducerId, partitions: 0, commit: false } }),
        'beginTransaction',
      ),
    ).toBe(false);
    expect(enabled(cfg, withProducer(s, P0, { txnsBegun: 2 }), 'beginTransaction')).toBe(false);
    expect(enabled(cfg, withProducer(s, P0, { txnsBegun: 1 }), 'beginTransaction')).toBe(true);
    const begun = act(cfg, s, 'beginTransaction');
    expect(producer(begun)).toMatchObject({
      tm: Tm.IN_TRANSACTION,
      txnsBegun: 1,
      recordsSent: 0,
      txnStarted: false,
      added: 0,
      pendingAdd: 0,
    });
    expect(enabled(cfg, begun, 'beginTransaction')).toBe(false);
  });

  it('sends up to recordsPerTransaction records; a known partition is not added twice', () => {
    let s = act(cfg, ready(cfg), 'beginTransaction');
    expect(enabled(cfg, s, 'commitTransaction')).toBe(false);
    expect(enabled(cfg, s, 'abortTransaction')).toBe(false);
    s = act(cfg, s, 'send(p1)');
    expect(producer(s)).toMatchObject({ recordsSent: 1, pendingAdd: 0b10 });
    expect(producer(s).batches).toEqual([
      expect.objectContaining({ partition: 1, status: BatchStatus.Queued, ghostRecord: 0 }),
    ]);
    expect(enabled(cfg, s, 'commitTransaction')).toBe(true);
    expect(enabled(cfg, s, 'abortTransaction')).toBe(true);
    s = act(cfg, s, 'send(p1)');
    expect(producer(s)).toMatchObject({ recordsSent: 2, pendingAdd: 0b10 });
    expect(producer(s).batches[1]).toMatchObject({ ghostRecord: 1 });
    expect(enabled(cfg, s, 'send(p0)')).toBe(false);
    expect(s.history[0]).toMatchObject({ recordsSent: 2 });
  });

  it('an added partition is not added again', () => {
    const s = withPartitionsAdded(cfg, ready(cfg), [0]);
    expect(producer(s)).toMatchObject({ added: 0b01, pendingAdd: 0 });
    expect(producer(act(cfg, s, 'send(p0)'))).toMatchObject({ pendingAdd: 0 });
    expect(producer(act(cfg, s, 'send(p1)'))).toMatchObject({ pendingAdd: 0b10 });
  });

  it('under transaction version 2 a record adds its partition at once, with no AddPartitionsToTxn', () => {
    const tv2 = clientConfig('kafka-4.0', { partitions: 2 });
    const s = act(tv2, act(tv2, ready(tv2), 'beginTransaction'), 'send(p1)');
    expect(producer(s)).toMatchObject({ added: 0b10, pendingAdd: 0, txnStarted: true });
  });

  it('an abortable error may be aborted with no record sent in the transaction', () => {
    const s = withProducer(act(cfg, ready(cfg), 'beginTransaction'), P0, { tm: Tm.ABORTABLE_ERROR });
    expect(enabled(cfg, s, 'abortTransaction')).toBe(true);
    expect(enabled(cfg, s, 'commitTransaction')).toBe(false);
  });

  it("the application's commitTransaction and abortTransaction are recorded as its decision for the transaction", () => {
    const sent = act(cfg, act(cfg, ready(cfg), 'beginTransaction'), 'send(p0)');
    expect(act(cfg, sent, 'commitTransaction').history[0]).toMatchObject({ decision: Decision.Commit });
    expect(act(cfg, sent, 'abortTransaction').history[0]).toMatchObject({ decision: Decision.Abort });
  });

  it('a FATAL or crashed producer calls nothing', () => {
    const s = act(cfg, ready(cfg), 'beginTransaction');
    const sent = act(cfg, s, 'send(p0)');
    for (const dead of [
      withProducer(sent, P0, { tm: Tm.FATAL_ERROR }),
      withProducer(sent, P0, { status: Instance.Crashed }),
    ]) {
      expect(labels(cfg, dead).filter((l) => l.startsWith('P0.0:'))).toEqual([]);
    }
  });
});

/** One transform transaction from READY: a record to p0, its offsets committed, then `end` answered NONE. */
function endOne(
  cfg: ReturnType<typeof transformConfig>,
  ready: State,
  end: 'commitTransaction' | 'abortTransaction',
): State {
  let s = act(cfg, act(cfg, ready, 'beginTransaction'), 'send(p0)');
  s = respond(cfg, act(cfg, s, 'sendTxnRequest'), TC, Api.AddPartitionsToTxn);
  s = respond(cfg, act(cfg, s, 'sendProduce(p0)'), leader(0), Api.Produce);
  s = act(cfg, act(cfg, s, 'sendOffsetsToTransaction'), 'sendTxnRequest');
  s = act(cfg, respond(cfg, s, TC, Api.AddOffsetsToTxn), 'sendTxnRequest');
  s = respond(cfg, s, groupCoordinator(cfg), Api.TxnOffsetCommit);
  return respond(cfg, act(cfg, act(cfg, s, end), 'sendTxnRequest'), TC, Api.EndTxn);
}

describe('a transaction of the consume-transform-produce app', () => {
  const cfg = transformConfig('kafka-3.5');

  it('fetches its position before the first transaction, then reads inputRecords records at most', () => {
    let s = act(cfg, initial(cfg), 'initTransactions');
    s = respond(cfg, s, TC, Api.InitProducerId, { pid: 1, epoch: 0 });
    expect(enabled(cfg, s, 'beginTransaction')).toBe(false);
    expect(enabled(cfg, s, 'fetchOffsets')).toBe(true);
    s = act(cfg, s, 'fetchOffsets');
    expect(producer(s).inputPosition).toBe(0);
    expect(enabled(cfg, s, 'fetchOffsets')).toBe(false);
    s = act(cfg, s, 'beginTransaction');
    s = act(cfg, s, 'send(p0)');
    // One output per input: the record carries the input offset it derives from.
    expect(producer(s).batches[0]).toMatchObject({ value: 0 });
    s = act(cfg, s, 'send(p0)');
    expect(producer(s).batches[1]).toMatchObject({ value: 1 });
    // inputRecords is 2: no input left.
    expect(enabled(cfg, s, 'send(p0)')).toBe(false);
  });

  it('commits only after sending its offsets, which are the position after the last input processed', () => {
    let s = act(cfg, ready(cfg), 'beginTransaction');
    expect(enabled(cfg, s, 'sendOffsetsToTransaction')).toBe(false);
    s = act(cfg, s, 'send(p0)');
    expect(enabled(cfg, s, 'commitTransaction')).toBe(false);
    expect(enabled(cfg, s, 'sendOffsetsToTransaction')).toBe(true);
    s = act(cfg, s, 'sendOffsetsToTransaction');
    expect(producer(s).offsetToCommit).toBe(1);
    expect(enabled(cfg, s, 'send(p0)')).toBe(false);
    expect(enabled(cfg, s, 'sendOffsetsToTransaction')).toBe(false);
    expect(enabled(cfg, s, 'commitTransaction')).toBe(true);
  });

  it('the consumer joins the group when the app starts: a new instance moves the group to a new generation (KIP-447)', () => {
    const two = { ...cfg, instancesPerId: 2, clientRules: [cfg.rules, cfg.rules] };
    const first = act(two, initial(two), 'initTransactions');
    expect(producer(first).generation).toBe(first.group!.generation);
    const second = take(two, first, 'P0.1: initTransactions');
    expect(second.producers[1]!.generation).toBe(second.group!.generation);
    expect(producer(second).generation).toBeLessThan(second.group!.generation);
  });

  it('fetches its position only once initTransactions has completed', () => {
    expect(enabled(cfg, act(cfg, initial(cfg), 'initTransactions'), 'fetchOffsets')).toBe(false);
  });

  it('cannot send offsets in an abortable error (sendOffsetsToTransaction fails with the last error)', () => {
    const s = withProducer(act(cfg, act(cfg, ready(cfg), 'beginTransaction'), 'send(p0)'), P0, {
      tm: Tm.ABORTABLE_ERROR,
    });
    expect(enabled(cfg, s, 'sendOffsetsToTransaction')).toBe(false);
  });

  it('after a commit the next transaction starts at the committed offset and adds and commits its offsets again', () => {
    let s = endOne(cfg, ready(cfg), 'commitTransaction');
    expect(producer(s)).toMatchObject({ tm: Tm.READY, inputPosition: 1, offsetToCommit: -1 });
    expect(enabled(cfg, s, 'fetchOffsets')).toBe(false);
    s = act(cfg, act(cfg, s, 'beginTransaction'), 'send(p0)');
    expect(producer(s).batches[0]).toMatchObject({ value: 1 });
    s = respond(cfg, act(cfg, s, 'sendTxnRequest'), TC, Api.AddPartitionsToTxn);
    s = act(cfg, act(cfg, s, 'sendOffsetsToTransaction'), 'sendTxnRequest');
    expect(sentTo(s, TC)).toMatchObject([{ api: Api.AddOffsetsToTxn }]);
    s = act(cfg, respond(cfg, s, TC, Api.AddOffsetsToTxn), 'sendTxnRequest');
    expect(sentTo(s, groupCoordinator(cfg))).toMatchObject([{ api: Api.TxnOffsetCommit, value: 2 }]);
  });

  it('after an abort the consumer forgets its position and fetches the committed offset again', () => {
    const s = endOne(cfg, ready(cfg), 'abortTransaction');
    expect(producer(s)).toMatchObject({ tm: Tm.READY, inputPosition: -1, offsetToCommit: -1 });
    expect(enabled(cfg, s, 'beginTransaction')).toBe(false);
    expect(enabled(cfg, s, 'fetchOffsets')).toBe(true);
  });

  it('afterAbort "rewind-memory": back to where the aborted transaction began, with no OffsetFetch', () => {
    const memory = { ...cfg, afterAbort: 'rewind-memory' } as const;
    const s = endOne(memory, ready(memory), 'abortTransaction');
    expect(producer(s)).toMatchObject({ tm: Tm.READY, inputPosition: 0, offsetToCommit: -1 });
    expect(enabled(memory, s, 'fetchOffsets')).toBe(false);
    expect(enabled(memory, s, 'beginTransaction')).toBe(true);
  });

  it('afterAbort "keep-position": past the inputs of the aborted transaction', () => {
    const keep = { ...cfg, afterAbort: 'keep-position' } as const;
    const s = endOne(keep, ready(keep), 'abortTransaction');
    expect(producer(s)).toMatchObject({ tm: Tm.READY, inputPosition: 1, offsetToCommit: -1 });
    expect(enabled(keep, s, 'fetchOffsets')).toBe(false);
  });

  it('a rewind keeps ExactlyOnce; an app that does not rewind commits past an input whose output aborted', () => {
    const search = (afterAbort: string) => {
      const spec = {
        model: 'kafka',
        variant: 'kafka-3.5',
        app: 'consume-transform-produce',
        afterAbort,
        inputRecords: 2,
        transactionsPerInstance: 2,
        partitions: 1,
        consumers: { readCommitted: 0 },
      };
      const run = parseSpec('after-abort.json', spec, '');
      const model = run.entry.build(run.params, run.properties) as Model<State, unknown>;
      return bfs(model, { deadlockAllowed: true });
    };
    expect(search('rewind-committed').status).toBe('ok');
    expect(search('rewind-memory').status).toBe('ok');
    expect(search('keep-position').violation?.property).toBe('ExactlyOnce');
  });

  it('refuses afterAbort for the produce app, naming the field', () => {
    const spec = { model: 'kafka', variant: 'kafka-3.5', afterAbort: 'keep-position' };
    expect(() => parseSpec('produce.json', spec, '')).toThrow(
      'afterAbort: expected "rewind-committed" (or no field) unless app is "consume-transform-produce", got "keep-position"',
    );
  });

  it('under transaction version 2 the offsets go straight to the group coordinator, with no AddOffsetsToTxn (KIP-890)', () => {
    const tv2 = transformConfig('kafka-4.0');
    let s = act(tv2, act(tv2, ready(tv2), 'beginTransaction'), 'send(p0)');
    s = act(tv2, act(tv2, s, 'sendOffsetsToTransaction'), 'sendTxnRequest');
    expect(sentTo(s, TC)).toEqual([]);
    expect(sentTo(s, groupCoordinator(tv2))).toMatchObject([{ api: Api.TxnOffsetCommit, value: 1 }]);
  });

  it('a transaction begins only while input is left', () => {
    const s = ready(cfg);
    expect(enabled(cfg, withProducer(s, P0, { inputPosition: 1 }), 'beginTransaction')).toBe(true);
    expect(enabled(cfg, withProducer(s, P0, { inputPosition: 2 }), 'beginTransaction')).toBe(false);
  });
});

describe('the client after EndTxn under transaction version 2 (TransactionManager.EndTxnHandler, 4.0)', () => {
  const cfg = clientConfig('kafka-4.0', { transactionsPerInstance: 2 });
  const committing = (): ReturnType<typeof ready> => {
    let s = act(cfg, act(cfg, ready(cfg), 'beginTransaction'), 'send(p0)');
    s = act(cfg, s, 'sendProduce(p0)');
    s = respond(cfg, s, leader(0), Api.Produce);
    return act(cfg, act(cfg, s, 'commitTransaction'), 'sendTxnRequest');
  };

  it('takes the producer id and epoch of the answer and restarts its sequences', () => {
    const before = committing();
    expect(producer(before).nextSeq[0]).toBe(1);
    const s = respond(cfg, before, TC, Api.EndTxn, { pid: PID + 1, epoch: 0 });
    expect(producer(s)).toMatchObject({ tm: Tm.READY, pid: PID + 1, epoch: 0 });
    expect(producer(s).nextSeq[0]).toBe(0);
    expect(s.history[0]).toMatchObject({ told: Told.Committed });
  });

  it('keeps its sequences when the answer names its own producer id and epoch', () => {
    const s = respond(cfg, committing(), TC, Api.EndTxn, { pid: PID, epoch: EPOCH });
    expect(producer(s)).toMatchObject({ tm: Tm.READY, pid: PID, epoch: EPOCH });
    expect(producer(s).nextSeq[0]).toBe(1);
  });

  it('takes the bumped epoch of its own producer id and restarts its sequences', () => {
    const s = respond(cfg, committing(), TC, Api.EndTxn, { pid: PID, epoch: EPOCH + 1 });
    expect(producer(s)).toMatchObject({ tm: Tm.READY, pid: PID, epoch: EPOCH + 1 });
    expect(producer(s).nextSeq[0]).toBe(0);
  });

  it('a new producer id restarts the sequences whatever its epoch', () => {
    const s = respond(cfg, committing(), TC, Api.EndTxn, { pid: PID + 1, epoch: EPOCH });
    expect(producer(s)).toMatchObject({ pid: PID + 1, epoch: EPOCH });
    expect(producer(s).nextSeq[0]).toBe(0);
  });

  it('before version 2 the answer carries nothing the client reads', () => {
    const tv1 = clientConfig('kafka-3.8');
    let s = act(tv1, act(tv1, ready(tv1), 'beginTransaction'), 'send(p0)');
    s = respond(tv1, act(tv1, s, 'sendTxnRequest'), TC, Api.AddPartitionsToTxn);
    s = respond(tv1, act(tv1, s, 'sendProduce(p0)'), leader(0), Api.Produce);
    s = respond(tv1, act(tv1, act(tv1, s, 'commitTransaction'), 'sendTxnRequest'), TC, Api.EndTxn, {
      pid: PID + 1,
      epoch: 0,
    });
    expect(producer(s)).toMatchObject({ tm: Tm.READY, pid: PID, epoch: EPOCH });
    expect(producer(s).nextSeq[0]).toBe(1);
  });
});

describe('a producer crash', () => {
  const base = clientConfig('kafka-3.5');
  const cfg = { ...base, faults: { ...base.faults, producerCrashes: 1 } };

  it('stops the instance: its requests on the wire still arrive, answers to it are dropped', () => {
    let s = withPartitionsAdded(cfg, ready(cfg), [0]);
    s = act(cfg, act(cfg, s, 'send(p0)'), 'sendProduce(p0)');
    s = take(cfg, s, 'P0.0: crash');
    expect(producer(s).status).toBe(Instance.Crashed);
    expect(labels(cfg, s)).not.toContain('P0.0: crash');
    // The Produce still reaches the leader, and the leader's answer is then dropped unread.
    s = take(cfg, s, 'deliver P0.0→L0: Produce');
    expect(s.partitions[0]!.log).toHaveLength(1);
    const answered = take(cfg, s, 'deliver L0→P0.0: Produce response');
    expect(producer(answered)).toEqual(producer(s));
    expect(answered.network).toEqual([]);
  });
});
