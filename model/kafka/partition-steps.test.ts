// Partition leader and group coordinator steps that Kafka's unit tests leave unasserted, one request
// or action each, checked against the source they come from (apache/kafka 3.9 c821449f unless
// named): when a held request's verification may time out, when a producer id's state may expire,
// the verification entries of several producers at one leader, the guard a marker ends, and the
// batches a leader writes.
import { describe, expect, it } from 'vitest';
import type { KafkaConfig } from './config.ts';
import { VERIFICATION_CONN } from './partition.ts';
import { type Message, type State, Api, BatchKind, Err, SUPPORTS_ALL, Supports, TC_NODE } from './state.ts';
import {
  CLIENT,
  marker,
  pop,
  produce,
  produceAnswer,
  produced,
  verificationsSent,
  verified,
} from './conformance/partition-support.ts';
import {
  TC,
  deliver,
  handle,
  initial,
  kafkaConfig,
  labels,
  leader,
  request,
  response,
  take,
  withPartition,
  withProducerEntry,
} from './conformance/harness.ts';
import { send } from './network.ts';

/** The coordinator's answer NONE to the verification `asked` (a leader's AddPartitionsToTxn) reaches partition p's leader. */
function verifiedNone(cfg: KafkaConfig, s: State, p: number, asked: Message): State {
  const answer = response(Api.AddPartitionsToTxn, {
    txnId: asked.txnId,
    error: Err.NONE,
    pid: asked.pid,
    epoch: asked.epoch,
    partitions: asked.partitions,
    seq: asked.seq,
    guard: asked.guard,
  });
  return deliver(cfg, s, TC_NODE, leader(p), answer, VERIFICATION_CONN);
}

// AddPartitionsToTxnManager completes a verification with NETWORK_EXCEPTION when its request is
// lost; in the model that may happen once neither the request nor its answer is on the way.
describe("AddPartitionsToTxnManager: which held request's verification may time out", () => {
  const cfg = kafkaConfig('kafka-3.8');
  const timeouts = (s: State): string[] => labels(cfg, s).filter((l) => l.includes('verificationTimeout'));
  const held = (s: State, p: number, pid: number, seq: number): State =>
    produce(cfg, s, p, { pid, epoch: 0, seq });
  const lose = (s: State, p: number): State => pop(s, leader(p), TC, VERIFICATION_CONN).state;
  /** The coordinator has answered the oldest verification of p's leader; the answer is on its way back. */
  const answering = (s: State, p: number): State => {
    const asked = pop(s, leader(p), TC, VERIFICATION_CONN);
    return deliver(cfg, asked.state, leader(p), TC, asked.message, VERIFICATION_CONN);
  };

  it("at its own leader only, once its request is lost; another leader's attempt with the same number keeps its own", () => {
    const both = held(held(initial(cfg), 0, 7, 0), 1, 7, 0);
    expect(timeouts(both)).toEqual([]);
    expect(timeouts(lose(both, 0))).toEqual(['L0: verificationTimeout(attempt 0, seq 0)']);
    expect(timeouts(lose(both, 1))).toEqual(['L1: verificationTimeout(attempt 0, seq 0)']);
  });

  it("not while the coordinator's answer is on its way back", () => {
    const both = held(held(initial(cfg), 0, 7, 0), 1, 7, 0);
    expect(timeouts(answering(both, 1))).toEqual([]);
    expect(timeouts(lose(answering(both, 1), 0))).toEqual(['L0: verificationTimeout(attempt 0, seq 0)']);
  });

  it("per attempt and per record: another producer's attempt or another record of the same attempt in flight does not hold it", () => {
    const twoProducers = lose(held(held(initial(cfg), 0, 7, 0), 0, 8, 0), 0);
    expect(timeouts(twoProducers)).toEqual(['L0: verificationTimeout(attempt 0, seq 0)']);
    const twoRecords = lose(held(held(initial(cfg), 0, 7, 0), 0, 7, 1), 0);
    expect(twoRecords.partitions[0]!.held.map((h) => [h.guard, h.request.seq])).toEqual([
      [0, 0],
      [0, 1],
    ]);
    expect(timeouts(twoRecords)).toEqual(['L0: verificationTimeout(attempt 0, seq 0)']);
  });
});

// ProducerStateManager.removeExpiredProducers: an entry with no ongoing transaction, and a
// verification entry, expire once producer.id.expiration.ms passed; in the model once nothing of
// the producer id is on its way to that leader or held there.
describe('ProducerStateManager.removeExpiredProducers: which producer id may expire', () => {
  const cfg = kafkaConfig('kafka-3.8', {
    faults: { ...kafkaConfig('kafka-3.8').faults, producerStateExpiries: 1 },
  });
  const idle = withProducerEntry(withProducerEntry(initial(cfg), 0, { pid: 7, lastSeqs: [0] }), 0, {
    pid: 8,
    lastSeqs: [0],
  });
  const expiries = (c: KafkaConfig, s: State): string[] =>
    labels(c, s).filter((l) => l.includes('producerStateExpiry'));
  const onItsWay = (s: State, from: number, to: number, m: Message): State => ({
    ...s,
    network: send(s.network, from, to, 0, m),
  });
  const produceOf = (pid: number, p: number): Message =>
    request(Api.Produce, { txnId: 0, pid, epoch: 0, partitions: p, seq: 1, ghostProducer: 0, ghostTxn: 0 });

  it('both idle ids, in producer id order', () => {
    expect(expiries(cfg, idle)).toEqual(['L0: producerStateExpiry(pid 7)', 'L0: producerStateExpiry(pid 8)']);
  });

  it("not while a request of it is on its way to the leader; another producer's request keeps only that one", () => {
    expect(expiries(cfg, onItsWay(idle, CLIENT, leader(0), produceOf(7, 0)))).toEqual([
      'L0: producerStateExpiry(pid 8)',
    ]);
  });

  it('the same at another leader: a request on its way to L1 keeps the entry there', () => {
    const atL1 = withProducerEntry(initial(cfg), 1, { pid: 7, lastSeqs: [0] });
    expect(expiries(cfg, atL1)).toEqual(['L1: producerStateExpiry(pid 7)']);
    expect(expiries(cfg, onItsWay(atL1, CLIENT, leader(1), produceOf(7, 1)))).toEqual([]);
  });

  it('a request of it to another leader, or an answer to it, is nothing on its way to this leader', () => {
    let s = onItsWay(idle, CLIENT, leader(1), produceOf(7, 1));
    s = onItsWay(
      s,
      leader(0),
      CLIENT,
      response(Api.Produce, { error: Err.NONE, pid: 7, epoch: 0, partitions: 0, seq: 0 }),
    );
    expect(expiries(cfg, s)).toEqual(['L0: producerStateExpiry(pid 7)', 'L0: producerStateExpiry(pid 8)']);
  });

  it('not while a request of it is held for verification', () => {
    const s = produce(cfg, idle, 0, { pid: 7, epoch: 0, seq: 1 });
    expect(s.partitions[0]!.held).toHaveLength(1);
    expect(expiries(cfg, s)).toEqual(['L0: producerStateExpiry(pid 8)']);
  });

  it("the expiry drops that producer id's entry and verification entry, nobody else's", () => {
    const s = withPartition(idle, 0, {
      verifications: [
        { pid: 7, epoch: 0, guard: 0, lowestSeq: 0, supportsEpochBump: false },
        { pid: 9, epoch: 0, guard: 1, lowestSeq: 0, supportsEpochBump: false },
      ],
    });
    const before = s.partitions[0]!;
    const expired = take(cfg, s, 'L0: producerStateExpiry(pid 7)').partitions[0]!;
    expect(expired.producers.map((e) => e.pid)).toEqual([8]);
    expect(expired.verifications).toEqual([before.verifications[1]]);
  });

  it('a lingering verification entry of a producer id with no entry takes its place in the order', () => {
    const s = withPartition(withProducerEntry(initial(cfg), 0, { pid: 8, lastSeqs: [0] }), 0, {
      verifications: [{ pid: 7, epoch: 0, guard: 0, lowestSeq: 0, supportsEpochBump: false }],
    });
    expect(expiries(cfg, s)).toEqual(['L0: producerStateExpiry(pid 7)', 'L0: producerStateExpiry(pid 8)']);
  });

  it('before KAFKA-9144 (switch markerTimestamp off) an entry with no batch at its epoch expires with a request still on its way', () => {
    const old = kafkaConfig('kafka-3.8', { faults: cfg.faults }, { markerTimestamp: false });
    const markerOnly = onItsWay(
      withProducerEntry(initial(old), 0, { pid: 7, lastSeqs: [] }),
      CLIENT,
      leader(0),
      produceOf(7, 0),
    );
    expect(expiries(old, markerOnly)).toEqual(['L0: producerStateExpiry(pid 7)']);
    const withBatch = onItsWay(
      withProducerEntry(initial(old), 0, { pid: 7, lastSeqs: [0] }),
      CLIENT,
      leader(0),
      produceOf(7, 0),
    );
    expect(expiries(old, withBatch)).toEqual([]);
  });

  it("before KAFKA-9144, an offset commit at the entry's epoch gives a __consumer_offsets entry its timestamp too (addBatch, 2.4)", () => {
    const old = kafkaConfig(
      'kafka-3.8',
      { faults: cfg.faults, app: 'consume-transform-produce', inputRecords: 2 },
      { markerTimestamp: false },
    );
    const offsets = old.partitions;
    const commit = {
      kind: BatchKind.OffsetCommit,
      pid: 7,
      epoch: 0,
      seq: -1,
      transactional: true,
      value: 1,
      ghostTxn: 0,
      ghostRecord: -1,
    };
    const committed = withPartition(
      withProducerEntry(initial(old), offsets, { pid: 7, epoch: 0, lastSeqs: [] }),
      offsets,
      { log: [commit] },
    );
    expect(expiries(old, onItsWay(committed, CLIENT, leader(offsets), produceOf(7, offsets)))).toEqual([]);
    // At a later epoch (a marker bumped it) the entry holds no batch again.
    const bumped = withProducerEntry(committed, offsets, { pid: 7, epoch: 1, lastSeqs: [] });
    expect(expiries(old, onItsWay(bumped, CLIENT, leader(offsets), produceOf(7, offsets)))).toEqual([
      `GC: producerStateExpiry(pid 7)`,
    ]);
    // Only its own offset commit: another producer's at the same epoch number, or a marker, gives it none.
    const others = withPartition(
      withProducerEntry(initial(old), offsets, { pid: 7, epoch: 0, lastSeqs: [] }),
      offsets,
      { log: [{ ...commit, pid: 8 }] },
    );
    expect(expiries(old, onItsWay(others, CLIENT, leader(offsets), produceOf(7, offsets)))).toEqual([
      `GC: producerStateExpiry(pid 7)`,
    ]);
    const marked = withPartition(
      withProducerEntry(initial(old), offsets, { pid: 7, epoch: 0, lastSeqs: [] }),
      offsets,
      { log: [{ ...commit, kind: BatchKind.Abort, value: -1 }] },
    );
    expect(expiries(old, onItsWay(marked, CLIENT, leader(offsets), produceOf(7, offsets)))).toEqual([
      `GC: producerStateExpiry(pid 7)`,
    ]);
  });
});

describe('ProducerStateManager: the entries of several producers at one leader', () => {
  it('producer entries are kept in producer id order, whatever order the producers came in', () => {
    const cfg = kafkaConfig('kafka-3.5');
    const s = withProducerEntry(withProducerEntry(initial(cfg), 0, { pid: 7, lastSeqs: [0] }), 0, {
      pid: 9,
      lastSeqs: [0],
    });
    const { error, state } = produced(cfg, s, 0, { pid: 8, epoch: 0, seq: 0 });
    expect(error).toBe(Err.NONE);
    expect(state.partitions[0]!.producers.map((e) => e.pid)).toEqual([7, 8, 9]);
  });

  // maybeCreateVerificationStateEntry: one entry, with its own guard, per producer id.
  it('each producer verifying at a leader has its own verification entry and attempt', () => {
    const cfg = kafkaConfig('kafka-3.8');
    const s = produce(cfg, produce(cfg, initial(cfg), 0, { pid: 9, epoch: 0, seq: 0 }), 0, {
      pid: 7,
      epoch: 0,
      seq: 0,
    });
    expect(s.partitions[0]!.verifications).toEqual([
      { pid: 7, epoch: 0, guard: 1, lowestSeq: 0, supportsEpochBump: false },
      { pid: 9, epoch: 0, guard: 0, lowestSeq: 0, supportsEpochBump: false },
    ]);
  });

  it("two producers' held requests, verified in the other order, are both appended", () => {
    const cfg = kafkaConfig('kafka-3.8');
    const s = produce(cfg, produce(cfg, initial(cfg), 0, { pid: 7, epoch: 0, seq: 0 }), 0, {
      pid: 8,
      epoch: 0,
      seq: 2,
    });
    const first = pop(s, leader(0), TC, VERIFICATION_CONN);
    const second = pop(first.state, leader(0), TC, VERIFICATION_CONN);
    const both = verifiedNone(cfg, verifiedNone(cfg, second.state, 0, second.message), 0, first.message);
    const answers = both.network.find((c) => c.from === leader(0) && c.to === CLIENT)!.messages;
    expect(answers.map((m) => [m.pid, m.response && m.error])).toEqual([
      [8, Err.NONE],
      [7, Err.NONE],
    ]);
    expect(both.partitions[0]!.log.map((b) => b.pid)).toEqual([8, 7]);
  });
});

// UnifiedLog.batchMissingRequiredVerification (3.6): a held request may open a transaction only
// under the verification guard it was held with; a marker in between ends that attempt.
describe('the verification guard a marker ends', () => {
  it('Produce: the held batch is refused INVALID_TXN_STATE', () => {
    const cfg = kafkaConfig('kafka-3.8');
    const held = produce(cfg, initial(cfg), 0, { pid: 7, epoch: 0, seq: 0 });
    const marked = marker(cfg, held, 0, { pid: 7, epoch: 0, commit: false });
    expect(marked.error).toBe(Err.NONE);
    const answered = produceAnswer(verified(cfg, marked.state, 0), 0);
    expect(answered.response.error).toBe(Err.INVALID_TXN_STATE);
    expect(answered.state.partitions[0]!.log.map((b) => b.kind)).toEqual([BatchKind.Abort]);
  });

  it('TxnOffsetCommit (3.8, verified like a data partition): the held commit is refused INVALID_TXN_STATE', () => {
    const cfg = kafkaConfig('kafka-3.8', { app: 'consume-transform-produce', inputRecords: 2 });
    const offsets = cfg.partitions;
    const held = handle(
      cfg,
      initial(cfg),
      CLIENT,
      leader(offsets),
      request(Api.TxnOffsetCommit, {
        txnId: 0,
        pid: 7,
        epoch: 0,
        partitions: offsets,
        value: 1,
        generation: initial(cfg).group!.generation,
      }),
    );
    expect(verificationsSent(held, offsets)).toHaveLength(1);
    const marked = marker(cfg, held, offsets, { pid: 7, epoch: 0, commit: false });
    expect(produceAnswer(verified(cfg, marked.state, offsets), offsets).response.error).toBe(
      Err.INVALID_TXN_STATE,
    );
  });
});

describe('what a leader refuses or passes on', () => {
  // KAFKA-18042 (4.1): maybeStartTransactionVerification refuses an epoch below the entry's at once.
  it("kafka-4.1: a lower epoch is refused before any verification; the entry's own epoch is verified", () => {
    const cfg = kafkaConfig('kafka-4.1');
    const s = withProducerEntry(initial(cfg), 0, { pid: 7, epoch: 3, lastSeqs: [0] });
    const lower = produce(cfg, s, 0, { pid: 7, epoch: 2, seq: 0 });
    expect(verificationsSent(lower, 0)).toEqual([]);
    expect(produceAnswer(lower, 0).response.error).toBe(Err.INVALID_PRODUCER_EPOCH);
    expect(verificationsSent(produce(cfg, s, 0, { pid: 7, epoch: 3, seq: 1 }), 0)).toHaveLength(1);
  });

  // AddPartitionsToTxnManager@3.8 (transactionSupportedOperation): TRANSACTION_ABORTABLE only to a
  // client whose request version knows it.
  it.each([
    ['knows', SUPPORTS_ALL, Err.TRANSACTION_ABORTABLE],
    ['predates', SUPPORTS_ALL & ~Supports.TransactionAbortable, Err.INVALID_TXN_STATE],
  ])(
    'TRANSACTION_ABORTABLE from the coordinator, to a Produce whose version %s it',
    (_name, supports, expected) => {
      const cfg = kafkaConfig('kafka-3.8');
      const held = handle(
        cfg,
        initial(cfg),
        CLIENT,
        leader(0),
        request(Api.Produce, { txnId: 0, pid: 7, epoch: 0, partitions: 0, seq: 0, supports }),
      );
      expect(produceAnswer(verified(cfg, held, 0, Err.TRANSACTION_ABORTABLE), 0).response.error).toBe(
        expected,
      );
    },
  );

  // ProducerAppendInfo.checkProducerEpoch with KIP-1228: a marker below the producer's epoch is
  // fenced, open transaction or not.
  it("kafka-latest: a marker below the producer's epoch with no open transaction is fenced", () => {
    const cfg = kafkaConfig('kafka-latest');
    const s = withProducerEntry(initial(cfg), 0, { pid: 7, epoch: 3 });
    expect(marker(cfg, s, 0, { pid: 7, epoch: 2, commit: false }).error).toBe(Err.INVALID_PRODUCER_EPOCH);
  });

  // GroupCoordinator's append to __consumer_offsets (origin coordinator) checks the producer epoch.
  it("kafka-3.5: a TxnOffsetCommit below the producer's epoch is INVALID_PRODUCER_EPOCH", () => {
    const cfg = kafkaConfig('kafka-3.5', { app: 'consume-transform-produce', inputRecords: 2 });
    const offsets = cfg.partitions;
    const s0 = withProducerEntry(initial(cfg), offsets, { pid: 7, epoch: 3 });
    const commit = (epoch: number) =>
      produceAnswer(
        handle(
          cfg,
          s0,
          CLIENT,
          leader(offsets),
          request(Api.TxnOffsetCommit, {
            txnId: 0,
            pid: 7,
            epoch,
            partitions: offsets,
            value: 1,
            generation: s0.group!.generation,
          }),
        ),
        offsets,
      );
    expect(commit(2).response.error).toBe(Err.INVALID_PRODUCER_EPOCH);
    expect(commit(3).response.error).toBe(Err.NONE);
  });
});

// The batches a leader writes: a client's transactional batch with its sequence; a control batch
// and an offset commit (coordinator origin) with none (RecordBatch.NO_SEQUENCE), both transactional.
describe('the batches a leader writes', () => {
  it('a transactional Produce, then its marker', () => {
    const cfg = kafkaConfig('kafka-3.5');
    const { state } = produced(cfg, initial(cfg), 0, { pid: 7, epoch: 0, seq: 0 });
    const { state: marked } = marker(cfg, state, 0, { pid: 7, epoch: 0, commit: true });
    expect(marked.partitions[0]!.log).toMatchObject([
      { kind: BatchKind.Data, pid: 7, epoch: 0, seq: 0, transactional: true },
      { kind: BatchKind.Commit, pid: 7, epoch: 0, seq: -1, transactional: true, value: -1, ghostRecord: -1 },
    ]);
  });

  it('a TxnOffsetCommit', () => {
    const cfg = kafkaConfig('kafka-3.5', { app: 'consume-transform-produce', inputRecords: 2 });
    const offsets = cfg.partitions;
    const s = handle(
      cfg,
      initial(cfg),
      CLIENT,
      leader(offsets),
      request(Api.TxnOffsetCommit, {
        txnId: 0,
        pid: 7,
        epoch: 0,
        partitions: offsets,
        value: 1,
        generation: initial(cfg).group!.generation,
      }),
    );
    expect(s.partitions[offsets]!.log).toMatchObject([
      { kind: BatchKind.OffsetCommit, pid: 7, seq: -1, transactional: true, value: 1, ghostRecord: -1 },
    ]);
  });
});
