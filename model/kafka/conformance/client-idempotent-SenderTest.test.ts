// SenderTest and TransactionManagerTest cases of the idempotent producer (no transactional.id): its
// requests are answered by hand, as MockClient answers them, and its Sender's steps are taken by
// their labels. The model's idempotent producer has one batch in flight per partition
// (max.in.flight.requests.per.connection=1); cases that need more are not ported.
import { describe, expect, it } from 'vitest';
import type { KafkaConfig } from '../config.ts';
import {
  type IdempotentProducer,
  type Request,
  type State,
  Api,
  BatchStatus,
  Err,
  IDEMPOTENT_BASE,
  NO_PID,
} from '../state.ts';
import { deliver, initial, kafkaConfig, labels as enabledLabels, leader, response, take } from './harness.ts';

const I0 = IDEMPOTENT_BASE;

function config(generation: string, partitions = 2): KafkaConfig {
  const faults = { ...kafkaConfig(generation).faults, requestTimeouts: 2, batchExpiries: 2 };
  return kafkaConfig(generation, {
    transactionalIds: 0,
    idempotentProducers: 1,
    recordsPerIdempotentProducer: 4,
    partitions,
    faults,
  });
}

function producer(s: State): IdempotentProducer {
  return s.idempotentProducers[0]!;
}

function act(cfg: KafkaConfig, s: State, action: string): State {
  return take(cfg, s, `I0: ${action}`);
}

/** Sends a record to partition p and drains it: the Produce is on the wire. */
function sendRecord(cfg: KafkaConfig, s: State, p: number): State {
  return act(cfg, act(cfg, s, `send(p${p})`), `sendProduce(p${p})`);
}

/** I0's requests to partition p's leader, on every connection, oldest first. */
function produceRequests(s: State, p: number): Request[] {
  return s.network
    .filter((c) => c.from === I0 && c.to === leader(p))
    .flatMap((c) => c.messages.filter((m): m is Request => !m.response));
}

/** Takes I0's oldest Produce to partition p off the wire and answers it with `error` on the connection the client uses now. */
function answerProduce(cfg: KafkaConfig, s: State, p: number, error: Err): State {
  const index = s.network.findIndex((c) => c.from === I0 && c.to === leader(p));
  const channel = s.network[index]!;
  const req = channel.messages[0] as Request;
  const network =
    channel.messages.length === 1
      ? s.network.filter((_, k) => k !== index)
      : s.network.map((c, k) => (k === index ? { ...c, messages: c.messages.slice(1) } : c));
  const answer = response(Api.Produce, {
    error,
    pid: req.pid,
    epoch: req.epoch,
    partitions: p,
    seq: req.seq,
  });
  return deliver(cfg, { ...s, network }, leader(p), I0, answer, producer(s).conns[p]!);
}

/** A producer with its producer id (TransactionManagerTest's prepareAndReceiveInitProducerId). */
function started(cfg: KafkaConfig): State {
  return act(cfg, initial(cfg), 'initProducerId');
}

describe('SenderTest, idempotent producer (apache/kafka 3.9)', () => {
  it('testIdempotentInitProducerIdWithMaxInFlightOne: nothing drains before the producer id', () => {
    const cfg = config('kafka-3.8');
    const s = act(cfg, initial(cfg), 'send(p0)');
    expect(() => act(cfg, s, 'sendProduce(p0)')).toThrow(/not enabled/);
    const ready = act(cfg, s, 'initProducerId');
    expect(producer(ready).pid).not.toBe(NO_PID);
    expect(producer(ready).epoch).toBe(0);
    const sent = act(cfg, ready, 'sendProduce(p0)');
    expect(produceRequests(sent, 0)).toMatchObject([
      { pid: producer(ready).pid, epoch: 0, seq: 0, txnId: -1 },
    ]);
  });

  it('testSequenceNumberIncrement: each partition numbers its batches from 0', () => {
    const cfg = config('kafka-3.8');
    let s = sendRecord(cfg, started(cfg), 0);
    s = answerProduce(cfg, s, 0, Err.NONE);
    s = sendRecord(cfg, s, 0);
    s = sendRecord(cfg, s, 1);
    expect(produceRequests(s, 0).map((r) => r.seq)).toEqual([1]);
    expect(produceRequests(s, 1).map((r) => r.seq)).toEqual([0]);
    expect(producer(s).sequences.map((q) => q.nextSeq)).toEqual([2, 1]);
  });

  it('testEpochBumpOnOutOfOrderSequenceForNextBatchWhenThereIsNoBatchInFlight', () => {
    const cfg = config('kafka-3.8');
    let s = sendRecord(cfg, started(cfg), 0);
    expect(producer(s).sequences[0]).toMatchObject({ epoch: 0, nextSeq: 1, lastAcked: -1 });
    s = answerProduce(cfg, s, 0, Err.NONE);
    expect(producer(s).sequences[0]).toMatchObject({ epoch: 0, nextSeq: 1, lastAcked: 0 });
    s = answerProduce(cfg, sendRecord(cfg, s, 1), 1, Err.NONE);
    s = sendRecord(cfg, s, 0);
    expect(producer(s).sequences[0]).toMatchObject({ epoch: 0, nextSeq: 2, lastAcked: 0 });
    // The batch right after the last acknowledged one is out of order: a real gap, so the epoch is bumped.
    s = answerProduce(cfg, s, 0, Err.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(producer(s).epoch).toBe(1);
    s = act(cfg, s, 'sendProduce(p0)');
    expect(produceRequests(s, 0)).toMatchObject([{ epoch: 1, seq: 0 }]);
    expect(producer(s).sequences[0]).toMatchObject({ epoch: 1, nextSeq: 1, lastAcked: -1 });
    // Partition 1 keeps its state until its next batch (hasStaleProducerIdAndEpoch).
    expect(producer(s).sequences[1]).toMatchObject({ epoch: 0, nextSeq: 1, lastAcked: 0 });
    s = answerProduce(cfg, s, 0, Err.NONE);
    expect(producer(s).sequences[0]).toMatchObject({ epoch: 1, nextSeq: 1, lastAcked: 0 });
    s = sendRecord(cfg, s, 1);
    expect(produceRequests(s, 1)).toMatchObject([{ epoch: 1, seq: 0 }]);
    expect(producer(s).sequences[1]).toMatchObject({ epoch: 1, nextSeq: 1, lastAcked: -1 });
  });

  it('testBumpEpochWhenOutOfOrderSequenceReceived: the batch is not failed, it goes again under the new epoch', () => {
    const cfg = config('kafka-3.8');
    let s = answerProduce(cfg, sendRecord(cfg, started(cfg), 0), 0, Err.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(producer(s).epoch).toBe(1);
    expect(producer(s).batches).toMatchObject([{ partition: 0, record: 0, status: BatchStatus.Queued }]);
    s = act(cfg, s, 'sendProduce(p0)');
    expect(produceRequests(s, 0)).toMatchObject([{ epoch: 1, seq: 0, ghostRecord: 0 }]);
  });

  it('testExpiryOfAllSentBatchesShouldCauseUnresolvedSequences: a retried batch that expires bumps the epoch', () => {
    const cfg = config('kafka-3.8');
    // NOT_LEADER_OR_FOLLOWER in Kafka's test; NOT_ENOUGH_REPLICAS is the model's retriable Produce error.
    let s = answerProduce(cfg, sendRecord(cfg, started(cfg), 0), 0, Err.NOT_ENOUGH_REPLICAS);
    expect(producer(s).batches).toMatchObject([{ status: BatchStatus.InFlight, retried: true, seq: 0 }]);
    const pid = producer(s).pid;
    s = act(cfg, s, 'batchExpired(p0)');
    expect(producer(s).batches).toEqual([]);
    expect(producer(s)).toMatchObject({ pid, epoch: 1 });
    expect(producer(s).sequences[0]).toMatchObject({ epoch: 1, nextSeq: 0 });
  });

  it('testExpiryOfUnsentBatchesShouldNotCauseUnresolvedSequences (the batch sent once): no epoch bump', () => {
    const cfg = config('kafka-3.8');
    const s = act(cfg, sendRecord(cfg, started(cfg), 0), 'batchExpired(p0)');
    expect(producer(s).epoch).toBe(0);
    expect(producer(s).sequences[0]).toMatchObject({ epoch: 0, nextSeq: 1 });
  });

  it('testCorrectHandlingOfOutOfOrderResponses (one in flight): OUT_OF_ORDER for a batch after a gap the client left is retried as it is', () => {
    const cfg = config('kafka-3.8');
    // The first batch expired after one send: its sequence is used, the next batch is not the next after the last acknowledged.
    let s = act(cfg, sendRecord(cfg, started(cfg), 0), 'batchExpired(p0)');
    s = sendRecord(cfg, s, 0);
    const before = produceRequests(s, 0).filter((r) => r.seq === 1);
    s = answerProduce(
      cfg,
      { ...s, network: s.network.filter((c) => c.conn !== 0) },
      0,
      Err.OUT_OF_ORDER_SEQUENCE_NUMBER,
    );
    expect(producer(s).epoch).toBe(0);
    expect(produceRequests(s, 0)).toMatchObject([{ epoch: 0, seq: 1 }]);
    expect(before).toHaveLength(1);
  });

  it('an idempotent producer at the largest epoch resets its producer id instead of bumping (bumpIdempotentProducerEpoch)', () => {
    const cfg = { ...config('kafka-3.8'), maxEpoch: 1 };
    let s = answerProduce(cfg, sendRecord(cfg, started(cfg), 0), 0, Err.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(producer(s).epoch).toBe(1);
    s = act(cfg, s, 'sendProduce(p0)');
    s = answerProduce(cfg, s, 0, Err.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(producer(s).pid).toBe(NO_PID);
    const renewed = act(cfg, s, 'initProducerId');
    expect(producer(renewed).epoch).toBe(0);
    expect(produceRequests(act(cfg, renewed, 'sendProduce(p0)'), 0)).toMatchObject([
      { pid: producer(renewed).pid, epoch: 0, seq: 0 },
    ]);
  });

  it('PRODUCER_FENCED is fatal for an idempotent producer too (maybeTransitionToErrorState)', () => {
    const cfg = config('kafka-3.8');
    const s = answerProduce(cfg, sendRecord(cfg, started(cfg), 0), 0, Err.PRODUCER_FENCED);
    expect(producer(s).fatal).toBe(true);
  });
});

describe('Sender, idempotent producer (apache/kafka 0.11.0)', () => {
  it('OUT_OF_ORDER_SEQUENCE_NUMBER fails the batch and resets the producer id (failBatch, resetProducerId)', () => {
    const cfg = config('kafka-0.11');
    let s = answerProduce(cfg, sendRecord(cfg, started(cfg), 0), 0, Err.NONE);
    s = answerProduce(cfg, sendRecord(cfg, s, 0), 0, Err.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(producer(s).batches).toEqual([]);
    expect(producer(s).pid).toBe(NO_PID);
    const renewed = act(cfg, act(cfg, s, 'initProducerId'), 'send(p0)');
    expect(produceRequests(act(cfg, renewed, 'sendProduce(p0)'), 0)).toMatchObject([
      { pid: producer(renewed).pid, epoch: 0, seq: 0 },
    ]);
  });

  it('an expired batch that was retried resets the producer id (Sender.sendProducerData, needsTransactionStateReset)', () => {
    const cfg = config('kafka-0.11');
    const s = act(cfg, act(cfg, sendRecord(cfg, started(cfg), 0), 'produceTimeout(p0)'), 'batchExpired(p0)');
    expect(producer(s).pid).toBe(NO_PID);
  });

  it('a retriable error for a batch of an older producer id fails it ("the producer id changed")', () => {
    const cfg = config('kafka-0.11');
    // p0's batch is retried and expires (a reset); p1's batch was sent under the old producer id.
    let s = act(cfg, sendRecord(cfg, sendRecord(cfg, started(cfg), 1), 0), 'produceTimeout(p0)');
    s = act(cfg, act(cfg, s, 'batchExpired(p0)'), 'initProducerId');
    s = answerProduce(cfg, s, 1, Err.NOT_ENOUGH_REPLICAS);
    expect(producer(s).batches).toEqual([]);
    expect(produceRequests(s, 1)).toEqual([]);
  });
});

// Rules of the Sender that Kafka's tests leave implicit, read in TransactionManager and Sender
// (3.9 and 0.11.0): when each step is possible, which answer belongs to which batch, what a
// failure keeps.
describe('the idempotent Sender, rules read in the source', () => {
  const withProducer = (s: State, fields: Partial<IdempotentProducer>): State => ({
    ...s,
    idempotentProducers: [{ ...producer(s), ...fields }],
  });
  /** The producer's own steps (a delivery to a leader is the leader's). */
  const steps = (cfg: KafkaConfig, s: State) => enabledLabels(cfg, s).filter((l) => l.startsWith('I0: '));

  it('a producer that failed for good takes no step, and ignores answers', () => {
    const cfg = config('kafka-3.8');
    let s = sendRecord(cfg, started(cfg), 0);
    s = act(cfg, s, 'send(p1)');
    const fatal = withProducer(s, { fatal: true });
    expect(steps(cfg, fatal)).toEqual([]);
    expect(answerProduce(cfg, fatal, 0, Err.NONE).idempotentProducers).toEqual(fatal.idempotentProducers);
    expect(steps(cfg, withProducer(initial(cfg), { fatal: true }))).toEqual([]);
  });

  it('InitProducerId only without a producer id; send only up to the records of the spec', () => {
    const cfg = config('kafka-3.8');
    let s = started(cfg);
    expect(steps(cfg, s)).not.toContain('I0: initProducerId');
    for (let k = 0; k < cfg.recordsPerIdempotentProducer; k++) s = act(cfg, s, 'send(p0)');
    expect(producer(s).batches.map((b) => b.record)).toEqual([0, 1, 2, 3]);
    expect(producer(s).batches[0]).toMatchObject({
      status: BatchStatus.Queued,
      pid: NO_PID,
      epoch: -1,
      seq: -1,
      retried: false,
    });
    expect(steps(cfg, s).filter((l) => l.startsWith('I0: send('))).toEqual([]);
  });

  it('a partition drains its own first queued batch, one at a time; timeouts only with a batch in flight', () => {
    const cfg = config('kafka-3.8');
    let s = act(cfg, act(cfg, act(cfg, started(cfg), 'send(p1)'), 'send(p0)'), 'send(p0)');
    expect(steps(cfg, s)).not.toContain('I0: produceTimeout(p0)');
    s = act(cfg, s, 'sendProduce(p0)');
    expect(produceRequests(s, 0)).toMatchObject([{ ghostRecord: 1, seq: 0 }]);
    expect(steps(cfg, s)).not.toContain('I0: sendProduce(p0)');
    expect(steps(cfg, s)).toContain('I0: sendProduce(p1)');
    expect(steps(cfg, s)).toEqual(expect.arrayContaining(['I0: produceTimeout(p0)', 'I0: batchExpired(p0)']));
    // Only the queued batch of p1 is left to drain there.
    expect(steps(cfg, act(cfg, s, 'sendProduce(p1)'))).not.toContain('I0: sendProduce(p1)');
  });

  it('a partition with nothing queued drains nothing, whatever another partition has', () => {
    const cfg = config('kafka-3.8');
    // p0's batch is first in the list and in flight; p1's is acknowledged; p0 has one more queued.
    let s = act(cfg, act(cfg, act(cfg, started(cfg), 'send(p0)'), 'sendProduce(p0)'), 'send(p1)');
    s = answerProduce(cfg, act(cfg, act(cfg, s, 'sendProduce(p1)'), 'send(p0)'), 1, Err.NONE);
    expect(steps(cfg, s).filter((l) => l.includes('sendProduce'))).toEqual([]);
  });

  it('KIP-360: an error that is not retriable fails even a batch that is not the next sequence', () => {
    const cfg = config('kafka-3.8');
    // The first batch expired after one send: the second is not the next after the last acknowledged.
    let s = sendRecord(cfg, act(cfg, sendRecord(cfg, started(cfg), 0), 'batchExpired(p0)'), 0);
    s = answerProduce(
      cfg,
      { ...s, network: s.network.filter((c) => c.conn !== 0) },
      0,
      Err.INVALID_PRODUCER_EPOCH,
    );
    expect(producer(s)).toMatchObject({ epoch: 1, batches: [] });
    expect(produceRequests(s, 0)).toEqual([]);
  });

  it('a timeout re-sends on a new connection, and an answer on the old one is ignored', () => {
    const cfg = config('kafka-3.8');
    const s = act(cfg, sendRecord(cfg, started(cfg), 0), 'produceTimeout(p0)');
    expect(producer(s).conns).toEqual([1, 0]);
    expect(s.network.filter((c) => c.from === I0).map((c) => c.conn)).toEqual([0, 1]);
    const late = deliver(
      cfg,
      { ...s, network: s.network.filter((c) => c.conn !== 0) },
      leader(0),
      I0,
      response(Api.Produce, { pid: producer(s).pid, epoch: 0, partitions: 0, seq: 0 }),
      0,
    );
    expect(late.idempotentProducers).toEqual(s.idempotentProducers);
  });

  it('an expiry fails only the batch in flight there and closes its connection', () => {
    const cfg = config('kafka-3.8');
    const s = act(cfg, act(cfg, sendRecord(cfg, started(cfg), 0), 'send(p0)'), 'batchExpired(p0)');
    expect(producer(s).batches).toMatchObject([{ record: 1, status: BatchStatus.Queued }]);
    expect(producer(s).conns).toEqual([1, 0]);
  });

  it('each idempotent producer sends from its own node', () => {
    const cfg = kafkaConfig('kafka-3.8', { transactionalIds: 0, idempotentProducers: 2, partitions: 1 });
    let s = take(cfg, take(cfg, initial(cfg), 'I1: initProducerId'), 'I1: send(p0)');
    s = take(cfg, s, 'I1: sendProduce(p0)');
    expect(s.network.map((c) => c.from)).toEqual([IDEMPOTENT_BASE + 1]);
  });

  it('an answer belongs to the batch in flight with its partition, producer id, epoch and sequence', () => {
    const cfg = config('kafka-3.8');
    const s = sendRecord(cfg, started(cfg), 0);
    const pid = producer(s).pid;
    const wire = { ...s, network: [] };
    for (const other of [{ pid: pid + 1 }, { epoch: 1 }, { seq: 1 }, { partitions: 1 }]) {
      const answered = deliver(
        cfg,
        wire,
        leader(other.partitions ?? 0),
        I0,
        response(Api.Produce, { pid, epoch: 0, partitions: 0, seq: 0, ...other }),
        0,
      );
      expect(answered.idempotentProducers).toEqual(wire.idempotentProducers);
    }
    // A queued batch with the same numbers is not the one answered.
    const queued = withProducer(wire, {
      batches: [{ ...producer(wire).batches[0]!, status: BatchStatus.Queued }],
    });
    expect(
      deliver(cfg, queued, leader(0), I0, response(Api.Produce, { pid, epoch: 0, partitions: 0, seq: 0 }), 0)
        .idempotentProducers,
    ).toEqual(queued.idempotentProducers);
  });

  // The partition's sequences moved on, to a later epoch or (after a producer id reset at the same epoch) to another
  // producer id: TransactionManager compares both halves (hasProducerIdAndEpoch), so both are tried.
  const movedOn = (pid: number) => [
    { pid, epoch: 1 },
    { pid: pid + 1, epoch: 0 },
  ];

  it("an acknowledgement under other numbers than the partition's sequences leaves them alone, and keeps the other batches", () => {
    const cfg = config('kafka-3.8');
    const sent = act(cfg, sendRecord(cfg, started(cfg), 0), 'send(p0)');
    for (const numbers of movedOn(producer(sent).pid)) {
      const sequences = { ...numbers, nextSeq: 3, lastAcked: 1 };
      const s = answerProduce(
        cfg,
        withProducer(sent, { ...numbers, sequences: [sequences, producer(sent).sequences[1]!] }),
        0,
        Err.NONE,
      );
      expect(producer(s).sequences[0], JSON.stringify(numbers)).toEqual(sequences);
      expect(producer(s).batches).toMatchObject([{ record: 1 }]);
    }
  });

  it("OUT_OF_ORDER_SEQUENCE_NUMBER for a batch under other numbers than its partition's sequences is retried as it is", () => {
    const cfg = config('kafka-3.8');
    const sent = sendRecord(cfg, started(cfg), 0);
    const pid = producer(sent).pid;
    for (const numbers of movedOn(pid)) {
      // The sequences' last acknowledged is the batch's predecessor: only the numbers tell the batch is not the next.
      const s = answerProduce(
        cfg,
        withProducer(sent, {
          ...numbers,
          sequences: [{ ...numbers, nextSeq: 1, lastAcked: -1 }, producer(sent).sequences[1]!],
        }),
        0,
        Err.OUT_OF_ORDER_SEQUENCE_NUMBER,
      );
      expect(producer(s), JSON.stringify(numbers)).toMatchObject(numbers);
      expect(produceRequests(s, 0)).toMatchObject([{ pid, epoch: 0, seq: 0 }]);
    }
  });

  it('KIP-360: an error that is not retriable fails the batch alone and bumps the epoch; a requeued batch has no sequence', () => {
    const cfg = config('kafka-3.8');
    const s = answerProduce(
      cfg,
      act(cfg, sendRecord(cfg, started(cfg), 0), 'send(p0)'),
      0,
      Err.INVALID_TXN_STATE,
    );
    expect(producer(s).epoch).toBe(1);
    expect(producer(s).batches).toMatchObject([{ record: 1, status: BatchStatus.Queued }]);
    expect(produceRequests(s, 0)).toEqual([]);
    const requeued = answerProduce(
      cfg,
      sendRecord(cfg, started(cfg), 0),
      0,
      Err.OUT_OF_ORDER_SEQUENCE_NUMBER,
    );
    expect(producer(requeued).batches).toMatchObject([
      { status: BatchStatus.Queued, seq: -1, pid: NO_PID, retried: true },
    ]);
  });

  it('INVALID_PRODUCER_EPOCH is fatal before KIP-588 (ProducerFencedException) and not after it', () => {
    const old = config('kafka-0.11');
    expect(
      producer(answerProduce(old, sendRecord(old, started(old), 0), 0, Err.INVALID_PRODUCER_EPOCH)).fatal,
    ).toBe(true);
    const cfg = config('kafka-3.8');
    const s = answerProduce(cfg, sendRecord(cfg, started(cfg), 0), 0, Err.INVALID_PRODUCER_EPOCH);
    expect(producer(s)).toMatchObject({ fatal: false, epoch: 1, batches: [] });
  });

  it("0.11.0: a retriable error is retried while the producer id and epoch are the batch's; other errors fail the batch without a reset", () => {
    const cfg = config('kafka-0.11');
    const s = sendRecord(cfg, started(cfg), 0);
    const retried = answerProduce(cfg, s, 0, Err.NOT_ENOUGH_REPLICAS);
    expect(produceRequests(retried, 0)).toMatchObject([{ seq: 0 }]);
    const bumped = withProducer(s, { epoch: 1 });
    expect(producer(answerProduce(cfg, bumped, 0, Err.NOT_ENOUGH_REPLICAS)).batches).toEqual([]);
    const refused = answerProduce(cfg, act(cfg, s, 'send(p0)'), 0, Err.INVALID_TXN_STATE);
    expect(producer(refused)).toMatchObject({ pid: producer(s).pid, batches: [{ record: 1 }] });
    const otherPid = withProducer(s, { pid: producer(s).pid + 7 });
    expect(producer(answerProduce(cfg, otherPid, 0, Err.OUT_OF_ORDER_SEQUENCE_NUMBER)).pid).toBe(
      producer(s).pid + 7,
    );
  });
});
