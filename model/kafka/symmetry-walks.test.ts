// Symmetry's renamings and canonical form on states of seeded random walks: renaming commutes with
// the model's steps and properties, and every renaming of a state has the same representative.
// These are the symmetry tests cheap enough to run against each mutant of symmetry.ts; the
// searches under symmetry, and their brute-force oracle, are in symmetry.test.ts.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Model } from '../../checker/engine/model.ts';
import { buildModel } from '../../specs/build.ts';
import { parseSpec } from '../../specs/load.ts';
import type { KafkaConfig } from './config.ts';
import type { Action } from './next.ts';
import { packState } from './pack.ts';
import { kafkaProperties } from './properties.ts';
import { type Request, type State, Api, TC_NODE, TxnState } from './state.ts';
import { batch, initial, kafkaConfig, leader, request, withCoordinator, withPartition, withProducer, withTxn } from './conformance/harness.ts';
import { compareStates, kafkaCanonical, permutations, renamePartitions, renameTransactionalIds } from './symmetry.ts';

// States told apart by their packed words (pack.test.ts: equal words, equal states).
const words = new Int32Array(1 << 14);
const key = (s: State): string => words.subarray(0, packState(s, words)).join(',');

/** The state a seeded walk ends in (it stops early in a state with no action). */
function walkTo(model: Model<State, Action>, seed: number, length: number): State {
  let s = model.init()[0]!;
  let x = seed | 1;
  for (let i = 0; i < length; i++) {
    const actions = model.actions(s);
    if (actions.length === 0) break;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    s = model.next(s, actions[(x >>> 0) % actions.length]!);
  }
  return s;
}

describe('Kafka partition symmetry', () => {
  // Random walks over configurations that reach every place a partition is named: verification
  // holds, markers, timeouts and new connections, failover, the transform app's offsets partition,
  // the coordinator's appends in flight.
  const configs: Record<string, unknown>[] = [
    { partitions: 3, instancesPerId: 2, transactionsPerInstance: 2, recordsPerTransaction: 2, consumers: { readCommitted: 1, readUncommitted: 1 }, faults: { requestLoss: 1, responseLoss: 1, requestTimeouts: 2, batchExpiries: 1, producerCrashes: 1, coordinatorFailovers: 1, transactionTimeouts: 1 } },
    { variant: 'kafka-3.6', partitions: 3, transactionalIds: 2, recordsPerTransaction: 3, faults: { requestTimeouts: 2, batchExpiries: 1, coordinatorFailovers: 1, transactionTimeouts: 1, responseLoss: 1 } },
    { variant: 'kafka-4.0', partitions: 4, recordsPerTransaction: 3, transactionsPerInstance: 2, idempotentProducers: 1, faults: { requestTimeouts: 1, batchExpiries: 1, transactionTimeouts: 1, requestLoss: 1 } },
    { variant: 'kafka-3.6', app: 'consume-transform-produce', inputRecords: 3, partitions: 3, instancesPerId: 2, recordsPerTransaction: 2, faults: { requestTimeouts: 1, producerCrashes: 1, coordinatorFailovers: 1 } },
    // Appends in flight name partitions in their transition, request and answer; marker connections are per leader.
    { variant: 'kafka-4.0', partitions: 3, instancesPerId: 2, recordsPerTransaction: 2, faults: { appendFailures: 2, transactionTimeouts: 1, requestTimeouts: 1, markerTimeouts: 2, coordinatorFailovers: 1 } },
    // Expiry drops a leader's producer and verification entries, and the coordinator's metadata and record.
    { variant: 'kafka-3.6', partitions: 3, transactionsPerInstance: 2, recordsPerTransaction: 2, faults: { producerStateExpiries: 2, transactionalIdExpiries: 1, transactionTimeouts: 1, requestTimeouts: 1 } },
  ].map((c) => ({ model: 'kafka', deadlock: true, ...c }));
  const built = configs.map((raw) => {
    const spec = parseSpec('spec.json', raw, '');
    return { cfg: spec.params as KafkaConfig, model: buildModel('spec.json', raw) as Model<State, Action> };
  });

  // A walk is a seed and a length: fast-check's small-number bias would keep picking the first action.
  const walk = fc.record({
    config: fc.nat({ max: configs.length - 1 }),
    seed: fc.noBias(fc.nat()),
    length: fc.noBias(fc.nat({ max: 80 })),
    renaming: fc.noBias(fc.nat()),
  });

  it('canonical is idempotent and the same for every renaming of a reachable state', () => {
    fc.assert(
      fc.property(walk, ({ config, seed, length, renaming }) => {
        const { cfg, model } = built[config]!;
        const canonical = kafkaCanonical(cfg);
        const plain = kafkaCanonical(cfg, false);
        const s = walkTo(model, seed, length);
        const all = permutations(Array.from({ length: cfg.partitions }, (_, p) => p));
        const renamed = renamePartitions(s, all[renaming % all.length]!);
        const c = canonical(s);
        expect(key(canonical(c))).toBe(key(c));
        expect(key(canonical(renamed))).toBe(key(c));
        expect(key(plain(renamed))).toBe(key(plain(s)));
        expect(compareStates(plain(s), c)).toBeLessThanOrEqual(0);
      }),
      { numRuns: 400, seed: 7 },
    );
  });

  it('renaming commutes with the model: the same actions lead to the renamed successors, and the invariants agree', () => {
    fc.assert(
      fc.property(walk, ({ config, seed, length, renaming }) => {
        const { cfg, model } = built[config]!;
        const all = permutations(Array.from({ length: cfg.partitions }, (_, p) => p));
        const perm = all[renaming % all.length]!;
        const s = walkTo(model, seed, length);
        const r = renamePartitions(s, perm);
        const successors = (x: State) => model.actions(x).map((a) => key(model.next(x, a))).sort();
        expect(successors(r)).toEqual(model.actions(s).map((a) => key(renamePartitions(model.next(s, a), perm))).sort());
        for (const p of kafkaProperties) expect(p.holds(r)).toBe(p.holds(s));
        expect(key(renamePartitions(r, perm.map((_, q) => perm.indexOf(q))))).toBe(key(s));
      }),
      { numRuns: 400, seed: 11 },
    );
  });
});

describe('Kafka transactional-id symmetry', () => {
  // Random walks where two or three transactional.ids meet every place one is named: instances,
  // the coordinator's memory, log and appends, markers, verification, the ghost history.
  const configs: Record<string, unknown>[] = [
    { transactionalIds: 2, instancesPerId: 2, partitions: 2, transactionsPerInstance: 2, consumers: { readCommitted: 1 }, faults: { requestTimeouts: 1, responseLoss: 1, producerCrashes: 1, coordinatorFailovers: 1, transactionTimeouts: 1 } },
    { variant: 'kafka-3.6', transactionalIds: 3, partitions: 2, recordsPerTransaction: 2, faults: { requestTimeouts: 1, batchExpiries: 1, transactionTimeouts: 1 } },
    { variant: 'kafka-4.0', transactionalIds: 2, instancesPerId: 2, partitions: 1, transactionsPerInstance: 2, faults: { appendFailures: 1, markerTimeouts: 1, transactionalIdExpiries: 1, coordinatorFailovers: 1 }, coordinatorLoading: 'async' },
    { variant: 'kafka-3.8', app: 'consume-transform-produce', transactionalIds: 2, inputRecords: 2, partitions: 1, idempotentProducers: 1, faults: { requestTimeouts: 1, producerCrashes: 1 } },
  ].map((c) => ({ model: 'kafka', deadlock: true, ...c }));
  const built = configs.map((raw) => {
    const spec = parseSpec('spec.json', raw, '');
    return { cfg: spec.params as KafkaConfig, model: buildModel('spec.json', raw) as Model<State, Action> };
  });
  const walk = fc.record({ config: fc.nat({ max: configs.length - 1 }), seed: fc.noBias(fc.nat()), length: fc.noBias(fc.nat({ max: 80 })), renaming: fc.noBias(fc.nat()) });
  const idRenamings = (cfg: KafkaConfig) => permutations(Array.from({ length: cfg.transactionalIds }, (_, t) => t));
  const inverse = (perm: readonly number[]) => perm.map((_, q) => perm.indexOf(q));

  it('renaming commutes with the model: the same actions lead to the renamed successors, and the invariants agree', () => {
    fc.assert(
      fc.property(walk, ({ config, seed, length, renaming }) => {
        const { cfg, model } = built[config]!;
        const all = idRenamings(cfg);
        const perm = all[renaming % all.length]!;
        const s = walkTo(model, seed, length);
        const r = renameTransactionalIds(cfg, s, perm);
        const successors = (x: State) => model.actions(x).map((a) => key(model.next(x, a))).sort();
        expect(successors(r)).toEqual(model.actions(s).map((a) => key(renameTransactionalIds(cfg, model.next(s, a), perm))).sort());
        for (const p of kafkaProperties) expect(p.holds(r)).toBe(p.holds(s));
        expect(key(renameTransactionalIds(cfg, r, inverse(perm)))).toBe(key(s));
      }),
      { numRuns: 300, seed: 13 },
    );
  });

  it('canonical is the same for every renaming of transactional.ids and partitions together', () => {
    fc.assert(
      fc.property(walk, fc.noBias(fc.nat()), ({ config, seed, length, renaming }, partitionRenaming) => {
        const { cfg, model } = built[config]!;
        const canonical = kafkaCanonical(cfg);
        const s = walkTo(model, seed, length);
        const ids = idRenamings(cfg);
        const parts = permutations(Array.from({ length: cfg.partitions }, (_, p) => p));
        const renamed = renamePartitions(renameTransactionalIds(cfg, s, ids[renaming % ids.length]!), parts[partitionRenaming % parts.length]!);
        expect(key(canonical(renamed))).toBe(key(canonical(s)));
        expect(key(canonical(canonical(s)))).toBe(key(canonical(s)));
      }),
      { numRuns: 300, seed: 17 },
    );
  });
});

// One hand-built state that names data partition 0 in every place a renaming must reach, with
// partitions 1 and 2 told apart by other values, so a place the renaming misses shows as a field.
describe('renamePartitions on a hand-built state', () => {
  const cfg = kafkaConfig('kafka-4.0', { partitions: 3, idempotentProducers: 1, consumers: { readCommitted: 1, readUncommitted: 0 } });
  const perm = [1, 2, 0];
  const produce = request(Api.Produce, { txnId: 0, pid: 0, epoch: 0, partitions: 0, seq: 4 });
  const addPartitions = request(Api.AddPartitionsToTxn, { txnId: 0, pid: 0, epoch: 0, partitions: 0b011 });
  let s = initial(cfg);
  s = withProducer(s, 0, {
    added: 0b001,
    pendingAdd: 0b010,
    request: { api: Api.AddPartitionsToTxn, partitions: 0b101, commit: false },
    nextSeq: [3, 5, 0],
    conns: [9, 1, 2, 0, 7],
    batches: [{ partition: 0, seq: 3, status: 0, retried: false, value: 1, ghostRecord: 0 }],
  });
  s = { ...s, idempotentProducers: [{ ...s.idempotentProducers[0]!, sequences: [{ pid: 5, epoch: 0, nextSeq: 2, lastAcked: 1 }, s.idempotentProducers[0]!.sequences[1]!, s.idempotentProducers[0]!.sequences[2]!], conns: [4, 0, 6], batches: [{ partition: 2, status: 0, pid: 5, epoch: 0, seq: 0, retried: false, record: 0 }] }] };
  s = withTxn(s, 0, { pid: 0, epoch: 0, state: TxnState.Ongoing, partitions: 0b011 });
  s = withCoordinator(s, { markerConns: [2, 0, 1] });
  s = withPartition(s, 0, { log: [batch({ pid: 0, epoch: 0 })], held: [{ guard: 0, request: produce, from: 0, conn: 0 }] });
  s = { ...s, consumers: [{ ...s.consumers[0]!, position: [1, 0, 0], delivered: [{ partition: 0, offset: 0, ghostTxn: 0, ghostRecord: 0 }] }] };
  s = { ...s, network: [{ from: 0, to: TC_NODE, conn: 0, messages: [addPartitions] }, { from: 0, to: leader(0), conn: 1, messages: [produce] }, { from: 0, to: leader(2), conn: 0, messages: [{ ...produce, partitions: 2 }] }] };
  const r = renamePartitions(s, perm);

  it("moves the producer's sets, sequences, connections, batches and request", () => {
    const p = r.producers[0]!;
    expect([p.added, p.pendingAdd, p.request?.partitions]).toEqual([0b010, 0b100, 0b011]);
    expect(p.nextSeq).toEqual([0, 3, 5]);
    // The coordinator's slot (first) and the group coordinator's (last) stay.
    expect(p.conns).toEqual([9, 0, 1, 2, 7]);
    expect(p.batches.map((b) => b.partition)).toEqual([1]);
  });

  it("moves the idempotent producer's sequences, connections and batches", () => {
    const p = r.idempotentProducers[0]!;
    expect(p.sequences.map((q) => q.pid)).toEqual([-1, 5, -1]);
    expect(p.conns).toEqual([6, 4, 0]);
    expect(p.batches.map((b) => b.partition)).toEqual([0]);
  });

  it("moves the coordinator's partition sets, in memory and logged, and its marker connections", () => {
    expect(r.coordinator.metadata[0]!.partitions).toBe(0b110);
    expect(r.coordinator.log[0]!.partitions).toBe(0b110);
    expect(r.coordinator.markerConns).toEqual([1, 2, 0]);
  });

  it('moves the partitions, the requests a leader holds, the consumers and the network', () => {
    expect(r.partitions.map((p) => p.log.length)).toEqual([0, 1, 0]);
    expect(r.partitions[1]!.held.map((h) => h.request.partitions)).toEqual([1]);
    expect(r.consumers[0]!.position).toEqual([0, 1, 0]);
    expect(r.consumers[0]!.delivered.map((d) => d.partition)).toEqual([1]);
    // Channels stay sorted by (from, to, conn): the coordinator's node sorts before the leaders'.
    expect(r.network.map((ch) => [ch.to, ch.messages[0]!.partitions])).toEqual([
      [TC_NODE, 0b110],
      [leader(0), 0],
      [leader(1), 1],
    ]);
  });

  it('leaves the state as it was under the identity, and the inverse renaming undoes it', () => {
    expect(key(renamePartitions(s, [0, 1, 2]))).toBe(key(s));
    expect(key(renamePartitions(r, [2, 0, 1]))).toBe(key(s));
  });

  it('keeps a partition past the data partitions (the offsets partition) where it is', () => {
    const offsets = withProducer(s, 0, { added: 0b1001, request: { api: Api.TxnOffsetCommit, partitions: 3, commit: false } });
    const p = renamePartitions(offsets, perm).producers[0]!;
    expect([p.added, p.request?.partitions]).toEqual([0b1010, 3]);
  });
});

describe('renameTransactionalIds on a hand-built state', () => {
  const cfg = kafkaConfig('kafka-4.0', { transactionalIds: 2, partitions: 1, transactionsPerInstance: 2 });
  const perm = [1, 0];
  // Producer 0 (id 0) is in its second client transaction (1); id 1 has none.
  const produce = request(Api.Produce, { txnId: 0, pid: 0, epoch: 0, partitions: 0, ghostProducer: 0, ghostTxn: 1 });
  let s = initial(cfg);
  s = withProducer(s, 0, { pid: 0, epoch: 0, txnsBegun: 2 });
  s = withTxn(s, 0, { pid: 0, epoch: 0, state: TxnState.Ongoing, partitions: 1, ghostTxn: 1 });
  s = withPartition(s, 0, { log: [batch({ pid: 0, epoch: 0, ghostTxn: 1, ghostRecord: 0 })] });
  s = { ...s, network: [{ from: 0, to: leader(0), conn: 0, messages: [produce] }], history: s.history.map((h, c) => (c === 1 ? { ...h, recordsSent: 1 } : h)) };
  const r = renameTransactionalIds(cfg, s, perm);

  it("moves the producer instance, its client transactions and the coordinator's entry to the other id", () => {
    expect(r.producers.map((p) => [p.txnId, p.pid])).toEqual([
      [0, -1],
      [1, 0],
    ]);
    expect(r.history.map((h) => h.recordsSent)).toEqual([0, 0, 0, 1]);
    expect(r.coordinator.metadata.map((md) => md?.ghostTxn ?? null)).toEqual([null, 3]);
    expect(r.coordinator.log.map((rec) => rec?.ghostTxn ?? null)).toEqual([null, 3]);
  });

  it('renames the id and client transaction a log batch and a message name, and the node a channel starts at', () => {
    expect(r.partitions[0]!.log[0]!.ghostTxn).toBe(3);
    expect(r.network.map((ch) => ch.from)).toEqual([1]);
    expect(r.network[0]!.messages.map((m) => [m.txnId, (m as Request).ghostProducer, (m as Request).ghostTxn])).toEqual([[1, 1, 3]]);
  });

  it('is undone by itself, a swap', () => {
    expect(key(renameTransactionalIds(cfg, r, perm))).toBe(key(s));
  });
});
