// The Sender's side of the producer, one step at a time: which connection and which batch a
// Produce, a timeout or an expiry touches when the producer writes to more than one partition,
// which answer completes which batch, and what a fatal error tells the application.
import { describe, expect, it } from 'vitest';
import { clientTxnIndex } from './config.ts';
import { connSlot } from './network.ts';
import { type State, Api, BatchStatus, Err, Tm, Told } from './state.ts';
import {
  EPOCH,
  P0,
  PID,
  TC,
  act,
  clientConfig,
  enabled,
  leader,
  producer,
  ready,
  respond,
  sentTo,
  withPartitionsAdded,
} from './conformance/client-support.ts';
import { deliver, labels, response, take } from './conformance/harness.ts';

const cfg = clientConfig('kafka-3.5', { partitions: 2 });

/** The connection generation P0 uses to `node`. */
const conn = (s: State, node: number): number => producer(s).conns[connSlot(node)]!;

/** The channels P0 has open to `node`, as [connection, sequences of the Produce requests on it]. */
function produceChannels(s: State, node: number): [number, number[]][] {
  return s.network
    .filter((c) => c.from === P0 && c.to === node)
    .map((c) => [c.conn, c.messages.map((m) => (m as { seq: number }).seq)]);
}

/** One record each to p0 and p1, both partitions added, both batches in flight. */
function bothInFlight(config = cfg): State {
  return act(
    config,
    act(config, withPartitionsAdded(config, ready(config), [0, 1]), 'sendProduce(p0)'),
    'sendProduce(p1)',
  );
}

// NetworkClient keeps one connection per broker: a timeout closes the connection to that
// partition's leader and no other.
describe('connections: one per leader (NetworkClient)', () => {
  it("a Produce timeout on p1 re-sends p1's batch to L1 on a new connection; p0 and the coordinator keep theirs", () => {
    const before = bothInFlight();
    const s = take(cfg, before, 'P0.0: produceTimeout(p1)');
    expect(conn(s, leader(1))).not.toBe(conn(before, leader(1)));
    expect([conn(s, TC), conn(s, leader(0))]).toEqual([conn(before, TC), conn(before, leader(0))]);
    // The old copy stays on the closed connection; only p1's batch goes again.
    expect(produceChannels(s, leader(1))).toEqual([
      [0, [0]],
      [conn(s, leader(1)), [0]],
    ]);
    expect(produceChannels(s, leader(0))).toEqual([[0, [0]]]);
    expect(producer(s).batches.map((b) => [b.partition, b.retried])).toEqual([
      [0, false],
      [1, true],
    ]);
  });

  it("a Produce to L1 goes on L1's connection after the coordinator's was replaced, and its answer is read", () => {
    let s = act(cfg, act(cfg, ready(cfg), 'beginTransaction'), 'send(p1)');
    s = take(cfg, act(cfg, s, 'sendTxnRequest'), 'P0.0: requestTimeout(AddPartitionsToTxn)');
    s = respond(cfg, s, TC, Api.AddPartitionsToTxn);
    expect(conn(s, TC)).not.toBe(conn(s, leader(1)));
    s = act(cfg, s, 'sendProduce(p1)');
    expect(produceChannels(s, leader(1))).toEqual([[conn(s, leader(1)), [0]]]);
    s = take(cfg, take(cfg, s, 'deliver P0.0→L1: Produce'), 'deliver L1→P0.0: Produce response');
    expect(producer(s).batches).toEqual([]);
  });

  it('NOT_ENOUGH_REPLICAS on p1: the batch goes again to L1 on the same connection (Sender.reenqueueBatch)', () => {
    const s = respond(cfg, bothInFlight(), leader(1), Api.Produce, { error: Err.NOT_ENOUGH_REPLICAS });
    expect(sentTo(s, leader(1))).toMatchObject([{ api: Api.Produce, partitions: 1, seq: 0 }]);
    expect(producer(s).batches.find((b) => b.partition === 1)).toMatchObject({
      status: BatchStatus.InFlight,
      retried: true,
    });
  });

  it("a batch expiry on p1 closes L1's connection only", () => {
    const before = bothInFlight();
    const s = take(cfg, before, 'P0.0: batchExpired(p1)');
    expect(conn(s, leader(1))).not.toBe(conn(before, leader(1)));
    expect([conn(s, TC), conn(s, leader(0))]).toEqual([conn(before, TC), conn(before, leader(0))]);
  });
});

describe('which batch a step takes (RecordAccumulator.drain, one batch per partition)', () => {
  it('a partition with nothing queued has nothing to send, even when another partition has', () => {
    const s = act(cfg, withPartitionsAdded(cfg, ready(cfg), [0, 1]), 'sendProduce(p0)');
    expect(enabled(cfg, s, 'sendProduce(p0)')).toBe(false);
    expect(enabled(cfg, s, 'sendProduce(p1)')).toBe(true);
  });

  it("sendProduce(p1) drains p1's batch though p0's was queued first", () => {
    const s = act(cfg, withPartitionsAdded(cfg, ready(cfg), [0, 1]), 'sendProduce(p1)');
    expect(producer(s).batches.map((b) => [b.partition, b.status, b.seq])).toEqual([
      [0, BatchStatus.Queued, -1],
      [1, BatchStatus.InFlight, 0],
    ]);
  });

  it('a second batch of p0 takes the next sequence; the first keeps its own', () => {
    let s = act(cfg, withPartitionsAdded(cfg, ready(cfg), [0]), 'send(p0)');
    s = act(cfg, act(cfg, s, 'sendProduce(p0)'), 'sendProduce(p0)');
    expect(producer(s).batches.map((b) => [b.status, b.seq])).toEqual([
      [BatchStatus.InFlight, 0],
      [BatchStatus.InFlight, 1],
    ]);
    expect(produceChannels(s, leader(0))).toEqual([[0, [0, 1]]]);
  });

  it('a Produce timeout re-sends the batch in flight, not the one still queued behind it', () => {
    let s = act(cfg, withPartitionsAdded(cfg, ready(cfg), [0]), 'send(p0)');
    s = take(cfg, act(cfg, s, 'sendProduce(p0)'), 'P0.0: produceTimeout(p0)');
    expect(produceChannels(s, leader(0))).toEqual([
      [0, [0]],
      [conn(s, leader(0)), [0]],
    ]);
    expect(producer(s).batches.map((b) => [b.status, b.retried])).toEqual([
      [BatchStatus.InFlight, true],
      [BatchStatus.Queued, false],
    ]);
  });

  it('only a partition with a batch in flight can time out or expire', () => {
    const s = act(cfg, act(cfg, withPartitionsAdded(cfg, ready(cfg), [0, 1]), 'send(p0)'), 'sendProduce(p0)');
    const timeouts = labels(cfg, s).filter((l) => /produceTimeout|batchExpired/.test(l));
    expect(timeouts).toEqual(['P0.0: produceTimeout(p0)', 'P0.0: batchExpired(p0)']);
  });

  // Model rule: the expiry is of the request in flight; a batch still in the accumulator stays
  // until it is sent or the abort drops it (abortUndrainedBatches).
  it('an expiry fails the batch in flight and leaves the next batch of the partition queued', () => {
    let s = act(cfg, withPartitionsAdded(cfg, ready(cfg), [0]), 'send(p0)');
    s = take(cfg, act(cfg, s, 'sendProduce(p0)'), 'P0.0: batchExpired(p0)');
    expect(producer(s).batches.map((b) => [b.partition, b.status])).toEqual([[0, BatchStatus.Queued]]);
  });

  it('without KIP-360, a retried batch that expires is fatal though another partition has a batch in flight (Sender.sendProducerData, 2.5)', () => {
    const old = clientConfig('kafka-0.11', { partitions: 2 });
    let s = respond(old, bothInFlight(old), leader(0), Api.Produce, { error: Err.NOT_ENOUGH_REPLICAS });
    s = take(old, s, 'P0.0: batchExpired(p0)');
    expect(producer(s).tm).toBe(Tm.FATAL_ERROR);
  });
});

describe('Produce answers (Sender.handleProduceResponse)', () => {
  it("a batch re-sent behind a later one: the later one's answer completes the later batch", () => {
    let s = act(cfg, withPartitionsAdded(cfg, ready(cfg), [0]), 'send(p0)');
    s = act(cfg, act(cfg, s, 'sendProduce(p0)'), 'sendProduce(p0)');
    // Sequence 0 goes again behind sequence 1, so sequence 1 is answered first.
    s = respond(cfg, s, leader(0), Api.Produce, { error: Err.NOT_ENOUGH_REPLICAS });
    expect(sentTo(s, leader(0)).map((r) => r.seq)).toEqual([1, 0]);
    s = respond(cfg, s, leader(0), Api.Produce);
    expect(producer(s).batches).toEqual([
      expect.objectContaining({ seq: 0, status: BatchStatus.InFlight, retried: true }),
    ]);
    expect(producer(s).tm).toBe(Tm.IN_TRANSACTION);
  });

  // The model has no correlation ids; an answer that matches no batch in flight answers nothing.
  it('model rule: an error answer matching no batch in flight is ignored', () => {
    const s = act(cfg, withPartitionsAdded(cfg, ready(cfg), [0]), 'sendProduce(p0)');
    const stray = response(Api.Produce, {
      pid: PID,
      epoch: EPOCH,
      partitions: 0,
      seq: 5,
      error: Err.OUT_OF_ORDER_SEQUENCE_NUMBER,
    });
    const after = deliver(cfg, { ...s, network: [] }, leader(0), P0, stray);
    expect(producer(after)).toEqual(producer(s));
  });

  it('PRODUCER_FENCED is fatal (maybeTransitionToErrorState), and the application is told the transaction failed', () => {
    const s = respond(
      cfg,
      act(cfg, withPartitionsAdded(cfg, ready(cfg), [0]), 'sendProduce(p0)'),
      leader(0),
      Api.Produce,
      { error: Err.PRODUCER_FENCED },
    );
    expect(producer(s)).toMatchObject({ tm: Tm.FATAL_ERROR, batches: [] });
    expect(s.history[0]).toMatchObject({ told: Told.Failed });
  });
});

describe('transactional requests', () => {
  it('an answer of another request than the one in flight is ignored (the client matches answers to requests)', () => {
    const s = act(cfg, act(cfg, act(cfg, ready(cfg), 'beginTransaction'), 'send(p0)'), 'sendTxnRequest');
    const after = deliver(
      cfg,
      { ...s, network: [] },
      TC,
      P0,
      response(Api.EndTxn, { pid: PID, epoch: EPOCH }),
    );
    expect(producer(after)).toEqual(producer(s));
  });

  // KIP-360: after an abortable error the client bumps its epoch with InitProducerId(pid, epoch).
  it("the bump's InitProducerId opens the way for the next transaction; a fatal answer leaves the aborted one aborted", () => {
    let s = act(cfg, withPartitionsAdded(cfg, ready(cfg), [0]), 'sendProduce(p0)');
    expect(sentTo(s, TC)).toEqual([]);
    s = respond(cfg, s, leader(0), Api.Produce, { error: Err.OUT_OF_ORDER_SEQUENCE_NUMBER });
    s = act(cfg, act(cfg, s, 'abortTransaction'), 'sendTxnRequest');
    expect(sentTo(s, TC)).toMatchObject([{ api: Api.EndTxn, ghostTxn: clientTxnIndex(cfg, P0, 0) }]);
    s = act(cfg, respond(cfg, s, TC, Api.EndTxn), 'sendTxnRequest');
    expect(s.history[0]).toMatchObject({ told: Told.Aborted });
    expect(sentTo(s, TC)).toMatchObject([
      { api: Api.InitProducerId, pid: PID, epoch: EPOCH, ghostTxn: clientTxnIndex(cfg, P0, 1) },
    ]);
    s = respond(cfg, s, TC, Api.InitProducerId, { error: Err.PRODUCER_FENCED });
    expect(producer(s).tm).toBe(Tm.FATAL_ERROR);
    expect(s.history[0]).toMatchObject({ told: Told.Aborted });
    expect(s.history[1]).toMatchObject({ told: Told.Nothing });
  });
});
