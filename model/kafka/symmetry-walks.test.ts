// Symmetry's renamings and canonical form on states of seeded random walks: renaming commutes with
// the model's steps and properties, and every renaming of a state has the same representative.
// These are the symmetry tests cheap enough to run against each mutant of symmetry.ts and of the
// renamings (renaming.ts, renamed-states.ts, and pack.ts under a renaming); the
// searches under symmetry, and their brute-force oracle, are in symmetry.test.ts.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Model } from '../../checker/engine/model.ts';
import { buildModel } from '../../specs/build.ts';
import { parseSpec } from '../../specs/load.ts';
import type { KafkaConfig } from './config.ts';
import type { Action } from './next.ts';
import { packState, unpackState } from './pack.ts';
import { kafkaProperties } from './properties.ts';
import {
  type Request,
  type State,
  Api,
  BatchKind,
  IDEMPOTENT_BASE,
  Instance,
  TC_NODE,
  TxnState,
} from './state.ts';
import {
  batch,
  initial,
  kafkaConfig,
  leader,
  request,
  response,
  withCoordinator,
  withPartition,
  withProducer,
  withTxn,
} from './conformance/harness.ts';
import { IdRenaming } from './renaming.ts';
import { renameInstances, renamePartitions, renameTransactionalIds } from './renamed-states.ts';
import { candidateOrders, kafkaCanonical, permutations } from './symmetry.ts';

// States told apart by their packed words (pack.test.ts: equal words, equal states).
const words = new Int32Array(1 << 14);
const key = (s: State): string => words.subarray(0, packState(s, words)).join(',');

/** The order the representative is the least in: packed words, compared word by word. */
function compareStates(a: State, b: State): number {
  const left = Array.from(words.subarray(0, packState(a, words)));
  const right = Array.from(words.subarray(0, packState(b, words)));
  for (let i = 0; i < left.length && i < right.length; i++)
    if (left[i] !== right[i]) return left[i]! - right[i]!;
  return left.length - right.length;
}

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

/** A Kafka spec's config and model, from the fields it sets beyond a deadlocking Kafka spec's. */
function buildConfig(fields: Record<string, unknown>): { cfg: KafkaConfig; model: Model<State, Action> } {
  const raw = { model: 'kafka', deadlock: true, ...fields };
  return {
    cfg: parseSpec('spec.json', raw, '').params as KafkaConfig,
    model: buildModel('spec.json', raw) as Model<State, Action>,
  };
}

/** A walk of one of `configs` configurations, up to `maxLength` steps, and a renaming to pick. */
function walkOf(configs: number, maxLength: number) {
  return fc.record({
    config: fc.nat({ max: configs - 1 }),
    seed: fc.noBias(fc.nat()),
    length: fc.noBias(fc.nat({ max: maxLength })),
    renaming: fc.noBias(fc.nat()),
  });
}

const renamedWords = new Int32Array(1 << 14);

/**
 * Packing `s` under renamings writes the words of `s` renamed by them, as objects (instances,
 * then transactional.ids, then partitions); so do the successors of `s` just unpacked, whose
 * untouched actors packState would copy.
 */
function expectPackedRenamed(
  cfg: KafkaConfig,
  model: Model<State, Action>,
  s: State,
  ids: readonly number[],
  instances: readonly (readonly number[] | null)[],
  partitions: readonly number[],
): void {
  const idRenaming =
    ids.every((t, i) => t === i) && instances.every((r) => r === null)
      ? null
      : new IdRenaming(cfg, ids, instances);
  const partitionRenaming = partitions.every((p, i) => p === i) ? null : partitions;
  const check = (x: State) =>
    expect(
      renamedWords.subarray(0, packState(x, renamedWords, partitionRenaming, idRenaming)).join(','),
    ).toBe(
      key(renamePartitions(renameTransactionalIds(cfg, renameInstances(cfg, x, instances), ids), partitions)),
    );
  check(s);
  const u = unpackState(words.slice(0, packState(s, words)));
  for (const a of model.actions(u)) check(model.next(u, a));
}

describe('Kafka partition symmetry', () => {
  // Random walks over configurations that reach every place a partition is named: verification
  // holds, markers, timeouts and new connections, failover, the transform app's offsets partition,
  // the coordinator's appends in flight.
  const configs: Record<string, unknown>[] = [
    {
      partitions: 3,
      instancesPerId: 2,
      transactionsPerInstance: 2,
      recordsPerTransaction: 2,
      consumers: { readCommitted: 1, readUncommitted: 1 },
      faults: {
        requestLoss: 1,
        responseLoss: 1,
        requestTimeouts: 2,
        batchExpiries: 1,
        producerCrashes: 1,
        coordinatorFailovers: 1,
        transactionTimeouts: 1,
      },
    },
    {
      variant: 'kafka-3.6',
      partitions: 3,
      transactionalIds: 2,
      recordsPerTransaction: 3,
      faults: {
        requestTimeouts: 2,
        batchExpiries: 1,
        coordinatorFailovers: 1,
        transactionTimeouts: 1,
        responseLoss: 1,
      },
    },
    {
      variant: 'kafka-4.0',
      partitions: 4,
      recordsPerTransaction: 3,
      transactionsPerInstance: 2,
      idempotentProducers: 1,
      faults: { requestTimeouts: 1, batchExpiries: 1, transactionTimeouts: 1, requestLoss: 1 },
    },
    {
      variant: 'kafka-3.6',
      app: 'consume-transform-produce',
      inputRecords: 3,
      partitions: 3,
      instancesPerId: 2,
      recordsPerTransaction: 2,
      faults: { requestTimeouts: 1, producerCrashes: 1, coordinatorFailovers: 1 },
    },
    // Appends in flight name partitions in their transition, request and answer; marker connections are per leader.
    {
      variant: 'kafka-4.0',
      partitions: 3,
      instancesPerId: 2,
      recordsPerTransaction: 2,
      faults: {
        appendFailures: 2,
        transactionTimeouts: 1,
        requestTimeouts: 1,
        markerTimeouts: 2,
        coordinatorFailovers: 1,
      },
    },
    // Expiry drops a leader's producer and verification entries, and the coordinator's metadata and record.
    {
      variant: 'kafka-3.6',
      partitions: 3,
      transactionsPerInstance: 2,
      recordsPerTransaction: 2,
      faults: {
        producerStateExpiries: 2,
        transactionalIdExpiries: 1,
        transactionTimeouts: 1,
        requestTimeouts: 1,
      },
    },
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

  type Walk = typeof walk extends fc.Arbitrary<infer W> ? W : never;

  /** The model, the state a walk ends in, and the renaming of partitions picked. */
  function walkedAndRenaming({ config, seed, length, renaming }: Walk) {
    const { cfg, model } = built[config]!;
    const all = permutations(Array.from({ length: cfg.partitions }, (_, p) => p));
    return { cfg, model, perm: all[renaming % all.length]!, s: walkTo(model, seed, length) };
  }

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
      fc.property(walk, (picked) => {
        const { model, perm, s } = walkedAndRenaming(picked);
        const r = renamePartitions(s, perm);
        const successors = (x: State) =>
          model
            .actions(x)
            .map((a) => key(model.next(x, a)))
            .sort();
        expect(successors(r)).toEqual(
          model
            .actions(s)
            .map((a) => key(renamePartitions(model.next(s, a), perm)))
            .sort(),
        );
        for (const p of kafkaProperties) expect(p.holds(r)).toBe(p.holds(s));
        expect(
          key(
            renamePartitions(
              r,
              perm.map((_, q) => perm.indexOf(q)),
            ),
          ),
        ).toBe(key(s));
      }),
      { numRuns: 400, seed: 11 },
    );
  });

  it("packs a state under a renaming into the renamed state's words, also when its actors were just unpacked", () => {
    fc.assert(
      fc.property(walk, (picked) => {
        const { cfg, model, perm, s } = walkedAndRenaming(picked);
        const ids = Array.from({ length: cfg.transactionalIds }, (_, t) => t);
        expectPackedRenamed(cfg, model, s, ids, [], perm);
      }),
      { numRuns: 300, seed: 13 },
    );
  });
});

describe('Kafka transactional-id symmetry', () => {
  // Random walks where two or three transactional.ids meet every place one is named: instances,
  // the coordinator's memory, log and appends, markers, verification, the ghost history.
  const configs: Record<string, unknown>[] = [
    {
      transactionalIds: 2,
      instancesPerId: 2,
      partitions: 2,
      transactionsPerInstance: 2,
      consumers: { readCommitted: 1 },
      faults: {
        requestTimeouts: 1,
        responseLoss: 1,
        producerCrashes: 1,
        coordinatorFailovers: 1,
        transactionTimeouts: 1,
      },
    },
    {
      variant: 'kafka-3.6',
      transactionalIds: 3,
      partitions: 2,
      recordsPerTransaction: 2,
      faults: { requestTimeouts: 1, batchExpiries: 1, transactionTimeouts: 1 },
    },
    {
      variant: 'kafka-4.0',
      transactionalIds: 2,
      instancesPerId: 2,
      partitions: 1,
      transactionsPerInstance: 2,
      faults: { appendFailures: 1, markerTimeouts: 1, transactionalIdExpiries: 1, coordinatorFailovers: 1 },
      coordinatorLoading: 'async',
    },
    {
      variant: 'kafka-3.8',
      app: 'consume-transform-produce',
      transactionalIds: 2,
      inputRecords: 2,
      partitions: 1,
      idempotentProducers: 1,
      faults: { requestTimeouts: 1, producerCrashes: 1 },
    },
  ];
  const built = configs.map(buildConfig);
  const walk = walkOf(configs.length, 80);
  const idRenamings = (cfg: KafkaConfig) =>
    permutations(Array.from({ length: cfg.transactionalIds }, (_, t) => t));
  const inverse = (perm: readonly number[]) => perm.map((_, q) => perm.indexOf(q));

  it('renaming commutes with the model: the same actions lead to the renamed successors, and the invariants agree', () => {
    fc.assert(
      fc.property(walk, ({ config, seed, length, renaming }) => {
        const { cfg, model } = built[config]!;
        const all = idRenamings(cfg);
        const perm = all[renaming % all.length]!;
        const s = walkTo(model, seed, length);
        const r = renameTransactionalIds(cfg, s, perm);
        const successors = (x: State) =>
          model
            .actions(x)
            .map((a) => key(model.next(x, a)))
            .sort();
        expect(successors(r)).toEqual(
          model
            .actions(s)
            .map((a) => key(renameTransactionalIds(cfg, model.next(s, a), perm)))
            .sort(),
        );
        for (const p of kafkaProperties) expect(p.holds(r)).toBe(p.holds(s));
        expect(key(renameTransactionalIds(cfg, r, inverse(perm)))).toBe(key(s));
      }),
      { numRuns: 300, seed: 13 },
    );
  });

  it("packs a state under renamings of transactional.ids and partitions into the renamed state's words", () => {
    fc.assert(
      fc.property(walk, fc.noBias(fc.nat()), ({ config, seed, length, renaming }, other) => {
        const { cfg, model } = built[config]!;
        const ids = idRenamings(cfg);
        const parts = permutations(Array.from({ length: cfg.partitions }, (_, p) => p));
        const s = walkTo(model, seed, length);
        expectPackedRenamed(cfg, model, s, ids[renaming % ids.length]!, [], parts[other % parts.length]!);
      }),
      { numRuns: 300, seed: 19 },
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
        const renamed = renamePartitions(
          renameTransactionalIds(cfg, s, ids[renaming % ids.length]!),
          parts[partitionRenaming % parts.length]!,
        );
        expect(key(canonical(renamed))).toBe(key(canonical(s)));
        expect(key(canonical(canonical(s)))).toBe(key(canonical(s)));
      }),
      { numRuns: 300, seed: 17 },
    );
  });
});

describe('Kafka instance symmetry', () => {
  // Random walks of two or three instances of a transactional.id. Once every instance of an id has
  // started, nothing tells them apart: renaming them is a symmetry of those states.
  const configs: Record<string, unknown>[] = [
    {
      instancesPerId: 2,
      partitions: 2,
      transactionsPerInstance: 2,
      consumers: { readCommitted: 1 },
      faults: { requestTimeouts: 1, producerCrashes: 1, coordinatorFailovers: 1, transactionTimeouts: 1 },
    },
    {
      variant: 'kafka-4.0',
      transactionalIds: 2,
      instancesPerId: 2,
      transactionsPerInstance: 2,
      faults: { appendFailures: 1, markerTimeouts: 1, transactionalIdExpiries: 1, responseLoss: 1 },
      coordinatorLoading: 'async',
    },
    {
      variant: 'kafka-3.8',
      app: 'consume-transform-produce',
      instancesPerId: 3,
      inputRecords: 2,
      idempotentProducers: 1,
      faults: { requestTimeouts: 1, producerCrashes: 1 },
    },
    {
      variant: 'kafka-0.11',
      instancesPerId: 2,
      instanceStart: 'after-crash',
      transactionsPerInstance: 2,
      faults: { producerCrashes: 1, batchExpiries: 1 },
    },
  ];
  const built = configs.map(buildConfig);
  const walk = walkOf(configs.length, 90);
  const allStarted = (cfg: KafkaConfig, s: State, t: number) =>
    s.producers.every((p) => p.txnId !== t || p.status !== Instance.NotStarted);
  /** A renaming of the instances of each id whose instances have all started (null for the others). */
  const instanceRenaming = (cfg: KafkaConfig, s: State, pick: number) => {
    const orders = permutations(Array.from({ length: cfg.instancesPerId }, (_, k) => k));
    return Array.from({ length: cfg.transactionalIds }, (_, t) =>
      allStarted(cfg, s, t) ? orders[Math.floor(pick / orders.length ** t) % orders.length]! : null,
    );
  };
  const inverse = (perm: readonly number[]) => perm.map((_, q) => perm.indexOf(q));
  const successors = (model: Model<State, Action>, x: State) =>
    model
      .actions(x)
      .map((a) => key(model.next(x, a)))
      .sort();

  it('renaming started instances commutes with the model, keeps every invariant, and is undone by its inverse', () => {
    let renamed = 0;
    fc.assert(
      fc.property(walk, ({ config, seed, length, renaming }) => {
        const { cfg, model } = built[config]!;
        const s = walkTo(model, seed, length);
        const perms = instanceRenaming(cfg, s, renaming);
        const r = renameInstances(cfg, s, perms);
        if (key(r) !== key(s)) renamed++;
        expect(successors(model, r)).toEqual(
          model
            .actions(s)
            .map((a) => key(renameInstances(cfg, model.next(s, a), perms)))
            .sort(),
        );
        for (const p of kafkaProperties) expect(p.holds(r)).toBe(p.holds(s));
        const back = perms.map((perm) => (perm === null ? null : inverse(perm)));
        expect(key(renameInstances(cfg, r, back))).toBe(key(s));
      }),
      { numRuns: 300, seed: 23 },
    );
    // The walks reach states where a renaming moves something, or the test would prove nothing.
    expect(renamed).toBeGreaterThan(50);
  });

  it('is no symmetry while an instance has not started: it may start only after the one before it', () => {
    const { cfg, model } = built[3]!;
    // The first instance has started, the second not, and may start only once the first crashed:
    // swapped, the one not started would be the first instance, which may start at once.
    let s = model.init()[0]!;
    s = model.next(
      s,
      model.actions(s).find((a) => model.label(a).endsWith('initTransactions'))!,
    );
    expect(allStarted(cfg, s, 0)).toBe(false);
    const swapped = renameInstances(cfg, s, [[1, 0]]);
    expect(successors(model, swapped)).not.toEqual(
      model
        .actions(s)
        .map((a) => key(renameInstances(cfg, model.next(s, a), [[1, 0]])))
        .sort(),
    );
  });

  it("packs a state under renamings of instances, transactional.ids and partitions into the renamed state's words", () => {
    fc.assert(
      fc.property(walk, fc.noBias(fc.nat()), ({ config, seed, length, renaming }, other) => {
        const { cfg, model } = built[config]!;
        const s = walkTo(model, seed, length);
        const ids = permutations(Array.from({ length: cfg.transactionalIds }, (_, t) => t));
        const instances = permutations(Array.from({ length: cfg.instancesPerId }, (_, k) => k));
        const parts = permutations(Array.from({ length: cfg.partitions }, (_, p) => p));
        // Any renaming, started instances or not: packing must agree with renaming the objects.
        const instanceRenaming = ids[0]!.map(
          (t) => instances[Math.floor(renaming / instances.length ** t) % instances.length]!,
        );
        expectPackedRenamed(
          cfg,
          model,
          s,
          ids[other % ids.length]!,
          instanceRenaming,
          parts[other % parts.length]!,
        );
      }),
      { numRuns: 300, seed: 31 },
    );
  });

  it('canonical is the same for every renaming of instances, transactional.ids and partitions together', () => {
    fc.assert(
      fc.property(walk, fc.noBias(fc.nat()), ({ config, seed, length, renaming }, other) => {
        const { cfg, model } = built[config]!;
        const canonical = kafkaCanonical(cfg);
        const s = walkTo(model, seed, length);
        const ids = permutations(Array.from({ length: cfg.transactionalIds }, (_, t) => t));
        const parts = permutations(Array.from({ length: cfg.partitions }, (_, p) => p));
        const renamed = renamePartitions(
          renameTransactionalIds(
            cfg,
            renameInstances(cfg, s, instanceRenaming(cfg, s, renaming)),
            ids[other % ids.length]!,
          ),
          parts[other % parts.length]!,
        );
        expect(key(canonical(renamed))).toBe(key(canonical(s)));
        expect(key(canonical(canonical(s)))).toBe(key(canonical(s)));
      }),
      { numRuns: 300, seed: 29 },
    );
  });

  it('leaves instances alone where their clients differ, and renames them under partial-order reduction too', () => {
    const raw = {
      model: 'kafka',
      variant: 'kafka-4.0',
      client: ['kafka-3.8', 'kafka-4.0'],
      instancesPerId: 2,
      deadlock: true,
    };
    const cfg = parseSpec('spec.json', raw, '').params as KafkaConfig;
    const model = buildModel('spec.json', raw) as Model<State, Action>;
    const same = built[0]!;
    for (let seed = 1; seed < 200; seed++) {
      const s = walkTo(model, seed, 30);
      expect(key(kafkaCanonical(cfg)(s))).toBe(key(kafkaCanonical(cfg, true, false)(s)));
    }
    // With one client, some walk's representative does rename its instances, with or without
    // partial-order reduction (entry.ts).
    const porRaw = { model: 'kafka', deadlock: true, ...configs[0]!, symmetry: true, reduction: 'por' };
    const porCanonical = buildModel('spec.json', porRaw).canonical!;
    let moved = 0;
    for (let seed = 1; seed < 200; seed++) {
      const s = walkTo(same.model, seed, 40);
      expect(key(porCanonical(s) as State)).toBe(key(kafkaCanonical(same.cfg)(s)));
      if (key(kafkaCanonical(same.cfg)(s)) !== key(kafkaCanonical(same.cfg, true, false)(s))) moved++;
    }
    expect(moved).toBeGreaterThan(0);
  });
});

// One hand-built state that names data partition 0 in every place a renaming must reach, with
// partitions 1 and 2 told apart by other values, so a place the renaming misses shows as a field.
describe('renamePartitions on a hand-built state', () => {
  const cfg = kafkaConfig('kafka-4.0', {
    partitions: 3,
    idempotentProducers: 1,
    consumers: { readCommitted: 1, readUncommitted: 0 },
  });
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
  s = {
    ...s,
    idempotentProducers: [
      {
        ...s.idempotentProducers[0]!,
        sequences: [
          { pid: 5, epoch: 0, nextSeq: 2, lastAcked: 1 },
          s.idempotentProducers[0]!.sequences[1]!,
          s.idempotentProducers[0]!.sequences[2]!,
        ],
        conns: [4, 0, 6],
        batches: [{ partition: 2, status: 0, pid: 5, epoch: 0, seq: 0, retried: false, record: 0 }],
      },
    ],
  };
  s = withTxn(s, 0, { pid: 0, epoch: 0, state: TxnState.Ongoing, partitions: 0b011 });
  s = withCoordinator(s, { markerConns: [2, 0, 1] });
  s = withPartition(s, 0, {
    log: [batch({ pid: 0, epoch: 0 })],
    held: [{ guard: 0, request: produce, from: 0, conn: 0 }],
  });
  s = {
    ...s,
    consumers: [
      {
        ...s.consumers[0]!,
        position: [1, 0, 0],
        delivered: [{ partition: 0, offset: 0, ghostTxn: 0, ghostRecord: 0 }],
      },
    ],
  };
  s = {
    ...s,
    network: [
      { from: 0, to: TC_NODE, conn: 0, messages: [addPartitions] },
      { from: 0, to: leader(0), conn: 1, messages: [produce] },
      { from: 0, to: leader(2), conn: 0, messages: [{ ...produce, partitions: 2 }] },
    ],
  };
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
    const offsets = withProducer(s, 0, {
      added: 0b1001,
      request: { api: Api.TxnOffsetCommit, partitions: 3, commit: false },
    });
    const p = renamePartitions(offsets, perm).producers[0]!;
    expect([p.added, p.request?.partitions]).toEqual([0b1010, 3]);
  });
});

describe('renameTransactionalIds on a hand-built state', () => {
  const cfg = kafkaConfig('kafka-4.0', { transactionalIds: 2, partitions: 1, transactionsPerInstance: 2 });
  const perm = [1, 0];
  // Producer 0 (id 0) is in its second client transaction (1); id 1 has none.
  const produce = request(Api.Produce, {
    txnId: 0,
    pid: 0,
    epoch: 0,
    partitions: 0,
    ghostProducer: 0,
    ghostTxn: 1,
  });
  let s = initial(cfg);
  s = withProducer(s, 0, { pid: 0, epoch: 0, txnsBegun: 2 });
  s = withTxn(s, 0, { pid: 0, epoch: 0, state: TxnState.Ongoing, partitions: 1, ghostTxn: 1 });
  s = withPartition(s, 0, { log: [batch({ pid: 0, epoch: 0, ghostTxn: 1, ghostRecord: 0 })] });
  s = {
    ...s,
    network: [{ from: 0, to: leader(0), conn: 0, messages: [produce] }],
    history: s.history.map((h, c) => (c === 1 ? { ...h, recordsSent: 1 } : h)),
  };
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
    expect(
      r.network[0]!.messages.map((m) => [m.txnId, (m as Request).ghostProducer, (m as Request).ghostTxn]),
    ).toEqual([[1, 1, 3]]);
  });

  it('is undone by itself, a swap', () => {
    expect(key(renameTransactionalIds(cfg, r, perm))).toBe(key(s));
  });
});

// One place at a time: a state that names data partition 0 in a single field, so a renaming that
// skips a part of the state whenever another part names no partition shows here.
describe('renamePartitions, one place at a time', () => {
  const cfg = kafkaConfig('kafka-4.0', {
    partitions: 3,
    transactionalIds: 2,
    idempotentProducers: 1,
    consumers: { readCommitted: 1, readUncommitted: 0 },
  });
  const perm = [1, 2, 0];
  const s0 = initial(cfg);
  const idem = s0.idempotentProducers[0]!;
  const noSequence = idem.sequences[0]!;
  const md = withTxn(s0, 0, { state: TxnState.Ongoing, partitions: 0b001 }).coordinator.metadata[0]!;
  const cases: { place: string; state: State; read: (s: State) => unknown; renamed: unknown }[] = [
    {
      place: "a producer's pending partitions",
      state: withProducer(s0, 0, { pendingAdd: 0b001 }),
      read: (s) => s.producers[0]!.pendingAdd,
      renamed: 0b010,
    },
    // AddOffsetsToTxn names the offsets partition (past the data partitions) in a bitmask.
    {
      place: "a producer's request slot",
      state: withProducer(s0, 0, {
        request: { api: Api.AddOffsetsToTxn, partitions: 0b1001, commit: false },
      }),
      read: (s) => s.producers[0]!.request?.partitions,
      renamed: 0b1010,
    },
    {
      place: "a producer's sequences",
      state: withProducer(s0, 0, { nextSeq: [3, 0, 0] }),
      read: (s) => s.producers[0]!.nextSeq,
      renamed: [0, 3, 0],
    },
    {
      place: "a producer's connections",
      state: withProducer(s0, 0, { conns: [0, 1, 0, 0, 0] }),
      read: (s) => s.producers[0]!.conns,
      renamed: [0, 0, 1, 0, 0],
    },
    {
      place: "a producer's batches",
      state: withProducer(s0, 1, {
        batches: [{ partition: 0, seq: 0, status: 0, retried: false, value: 1, ghostRecord: 0 }],
      }),
      read: (s) => s.producers[1]!.batches.map((b) => b.partition),
      renamed: [1],
    },
    {
      place: "an idempotent producer's sequences",
      state: {
        ...s0,
        idempotentProducers: [
          { ...idem, sequences: [{ pid: 5, epoch: 0, nextSeq: 1, lastAcked: 0 }, noSequence, noSequence] },
        ],
      },
      read: (s) => s.idempotentProducers[0]!.sequences.map((q) => q.pid),
      renamed: [-1, 5, -1],
    },
    {
      place: "an idempotent producer's connections",
      state: { ...s0, idempotentProducers: [{ ...idem, conns: [1, 0, 0] }] },
      read: (s) => s.idempotentProducers[0]!.conns,
      renamed: [0, 1, 0],
    },
    {
      place: "an idempotent producer's batches",
      state: {
        ...s0,
        idempotentProducers: [
          {
            ...idem,
            batches: [{ partition: 0, status: 0, pid: 5, epoch: 0, seq: 0, retried: false, record: 0 }],
          },
        ],
      },
      read: (s) => s.idempotentProducers[0]!.batches.map((b) => b.partition),
      renamed: [1],
    },
    {
      place: "the coordinator's marker connections",
      state: withCoordinator(s0, { markerConns: [1, 0, 0] }),
      read: (s) => s.coordinator.markerConns,
      renamed: [0, 1, 0],
    },
    {
      place: "the coordinator's memory alone",
      state: withCoordinator(s0, { metadata: [md, null] }),
      read: (s) => s.coordinator.metadata[0]!.partitions,
      renamed: 0b010,
    },
    {
      place: "the coordinator's log alone",
      state: withCoordinator(s0, {
        log: [{ ...withTxn(s0, 0, {}).coordinator.log[0]!, partitions: 0b001 }, null],
      }),
      read: (s) => s.coordinator.log[0]!.partitions,
      renamed: 0b010,
    },
    {
      place: "a consumer's position",
      state: { ...s0, consumers: [{ ...s0.consumers[0]!, position: [2, 0, 0] }] },
      read: (s) => s.consumers[0]!.position,
      renamed: [0, 2, 0],
    },
    {
      place: "a consumer's deliveries",
      state: {
        ...s0,
        consumers: [
          { ...s0.consumers[0]!, delivered: [{ partition: 0, offset: 0, ghostTxn: -1, ghostRecord: -1 }] },
        ],
      },
      read: (s) => s.consumers[0]!.delivered.map((d) => d.partition),
      renamed: [1],
    },
  ];
  for (const { place, state, read, renamed } of cases) {
    it(`renames ${place}`, () => {
      expect(read(renamePartitions(state, perm))).toEqual(renamed);
      expect(read(renamePartitions(renamePartitions(state, perm), [2, 0, 1]))).toEqual(read(state));
    });
  }

  it("renames a coordinator's appends in flight: the leader asking, the transition, the request and its answer", () => {
    // Transaction version 2: leader 0 adds its partition for a verified Produce; a timeout abort has no request.
    const fromLeader = {
      txnId: 0,
      transit: md,
      epochFence: false,
      request: request(Api.AddPartitionsToTxn, { txnId: 0, pid: 0, epoch: 0, partitions: 0b001 }),
      response: response(Api.AddPartitionsToTxn, { txnId: 0, partitions: 0b001 }),
      from: leader(0),
      conn: 0,
    };
    const timeout = {
      txnId: 1,
      transit: { ...md, partitions: 0b100 },
      epochFence: true,
      request: null,
      response: null,
      from: TC_NODE,
      conn: 0,
    };
    const r = renamePartitions(withCoordinator(s0, { appends: [fromLeader, timeout] }), perm);
    expect(
      r.coordinator.appends.map((a) => [
        a.from,
        a.transit.partitions,
        a.request?.partitions ?? null,
        a.response?.partitions ?? null,
      ]),
    ).toEqual([
      [leader(1), 0b010, 0b010, 0b010],
      [TC_NODE, 0b001, null, null],
    ]);
  });

  it('renames the leaders in the network, keeps the other nodes, and sorts the channels by (from, to, connection)', () => {
    const marker = request(Api.WriteTxnMarkers, { txnId: 0, pid: 0, epoch: 0, partitions: 0, commit: true });
    const markerAnswer = response(Api.WriteTxnMarkers, { txnId: 0, partitions: 2 });
    const commit = request(Api.TxnOffsetCommit, { txnId: 0, pid: 0, epoch: 0, partitions: 3 });
    const network = [
      {
        from: 0,
        to: leader(0),
        conn: 0,
        messages: [request(Api.Produce, { txnId: 0, pid: 0, epoch: 0, partitions: 0 })],
      },
      {
        from: 0,
        to: leader(0),
        conn: 1,
        messages: [request(Api.Produce, { txnId: 0, pid: 0, epoch: 0, partitions: 0, seq: 1 })],
      },
      { from: 0, to: leader(3), conn: 0, messages: [commit] },
      {
        from: 1,
        to: leader(2),
        conn: 0,
        messages: [request(Api.Produce, { txnId: 0, pid: 1, epoch: 0, partitions: 2 })],
      },
      { from: TC_NODE, to: leader(0), conn: 0, messages: [marker] },
      { from: leader(2), to: TC_NODE, conn: 0, messages: [markerAnswer] },
    ];
    const r = renamePartitions({ ...s0, network }, perm);
    expect(r.network.map((ch) => [ch.from, ch.to, ch.conn, ch.messages[0]!.partitions])).toEqual([
      [0, leader(1), 0, 1],
      [0, leader(1), 1, 1],
      [0, leader(3), 0, 3],
      [1, leader(0), 0, 0],
      [TC_NODE, leader(1), 0, 1],
      [leader(0), TC_NODE, 0, 0],
    ]);
  });

  it('shares what it leaves alone: a state naming no partition is renamed part for part into itself', () => {
    // The coordinator knows a transactional.id whose transaction holds no partition.
    const s = withTxn(s0, 0, {});
    const r = renamePartitions(s, perm);
    r.producers.forEach((p, i) => expect(p).toBe(s.producers[i]));
    expect(r.idempotentProducers[0]).toBe(idem);
    expect(r.coordinator).toBe(s.coordinator);
    expect(r.consumers[0]).toBe(s.consumers[0]);
    s.partitions.forEach((part, p) => expect(r.partitions[perm[p]!]).toBe(part));
    expect(key(r)).toBe(key(s));
  });
});

describe('renameTransactionalIds where a message, a leader or a consumer names an id', () => {
  const cfg = kafkaConfig('kafka-4.0', {
    transactionalIds: 2,
    partitions: 1,
    transactionsPerInstance: 2,
    idempotentProducers: 1,
    consumers: { readCommitted: 1, readUncommitted: 0 },
  });
  const swap = [1, 0];
  const s0 = initial(cfg);
  // Client transaction 1 of id 0 is client transaction 3 once id 0 is id 1.
  const produce = request(Api.Produce, {
    txnId: 0,
    pid: 0,
    epoch: 0,
    partitions: 0,
    ghostProducer: 0,
    ghostTxn: 1,
  });
  const idempotentProduce = request(Api.Produce, { pid: 5, epoch: 0, partitions: 0, ghostTxn: 0 });

  it("renames a marker's id and client transaction, a response's id, and the producer a channel ends at; an idempotent producer's messages stay", () => {
    const marker = request(Api.WriteTxnMarkers, {
      txnId: 0,
      pid: 0,
      epoch: 0,
      partitions: 0,
      commit: true,
      ghostTxn: 1,
    });
    const network = [
      { from: TC_NODE, to: 0, conn: 0, messages: [response(Api.EndTxn, { txnId: 0 })] },
      { from: TC_NODE, to: leader(0), conn: 0, messages: [marker] },
      { from: IDEMPOTENT_BASE, to: leader(0), conn: 0, messages: [idempotentProduce] },
      {
        from: leader(0),
        to: IDEMPOTENT_BASE,
        conn: 0,
        messages: [response(Api.Produce, { pid: 5, partitions: 0 })],
      },
    ];
    const r = renameTransactionalIds(cfg, { ...s0, network }, swap);
    expect(r.network.map((ch) => [ch.from, ch.to])).toEqual([
      [TC_NODE, 1],
      [TC_NODE, leader(0)],
      [leader(0), IDEMPOTENT_BASE],
      [IDEMPOTENT_BASE, leader(0)],
    ]);
    expect(r.network[0]!.messages[0]).toEqual(response(Api.EndTxn, { txnId: 1 }));
    expect([r.network[1]!.messages[0]!.txnId, (r.network[1]!.messages[0] as Request).ghostTxn]).toEqual([
      1, 3,
    ]);
    expect(r.network[2]!.messages[0]).toEqual(network[3]!.messages[0]);
    expect(r.network[3]!.messages[0]).toEqual(idempotentProduce);
  });

  it("renames an InitProducerId's client transaction when it is one past the instance's last (none begun yet)", () => {
    // Producer 0 has begun both of its transactions: its next InitProducerId names transaction 2, its own.
    const init = request(Api.InitProducerId, { txnId: 0, ghostProducer: 0, ghostTxn: 2 });
    const r = renameTransactionalIds(
      cfg,
      { ...s0, network: [{ from: 0, to: TC_NODE, conn: 0, messages: [init] }] },
      swap,
    );
    expect(
      r.network.map((ch) => [
        ch.from,
        (ch.messages[0] as Request).ghostProducer,
        (ch.messages[0] as Request).ghostTxn,
      ]),
    ).toEqual([[1, 1, 4]]);
  });

  it('renames the producer and the ids of a Produce a leader holds', () => {
    const s = withPartition(s0, 0, { held: [{ guard: 0, request: produce, from: 0, conn: 0 }] });
    const held = renameTransactionalIds(cfg, s, swap).partitions[0]!.held[0]!;
    expect([held.from, held.request.txnId, held.request.ghostProducer, held.request.ghostTxn]).toEqual([
      1, 1, 1, 3,
    ]);
  });

  it("renames the client transaction of a transactional record a consumer read, and keeps an idempotent one's", () => {
    let s = withPartition(s0, 0, {
      log: [
        batch({ pid: 0, epoch: 0, ghostTxn: 1, ghostRecord: 0 }),
        batch({ pid: 5, epoch: 0, transactional: false, ghostTxn: 0, ghostRecord: 0 }),
      ],
    });
    s = {
      ...s,
      consumers: [
        {
          ...s.consumers[0]!,
          position: [2],
          delivered: [
            { partition: 0, offset: 0, ghostTxn: 1, ghostRecord: 0 },
            { partition: 0, offset: 1, ghostTxn: 0, ghostRecord: 0 },
          ],
        },
      ],
    };
    const r = renameTransactionalIds(cfg, s, swap);
    expect(r.partitions[0]!.log.map((b) => b.ghostTxn)).toEqual([3, 0]);
    expect(r.consumers[0]!.delivered.map((d) => d.ghostTxn)).toEqual([3, 0]);
  });

  it('moves the appends in flight with their ids, keeps them sorted by id, and renames the instance each answers', () => {
    const md = withTxn(s0, 0, { state: TxnState.Ongoing, ghostTxn: 1 }).coordinator.metadata[0]!;
    const endTxn = request(Api.EndTxn, {
      txnId: 0,
      pid: 0,
      epoch: 0,
      commit: true,
      ghostProducer: 0,
      ghostTxn: 1,
    });
    const appends = [
      {
        txnId: 0,
        transit: md,
        epochFence: false,
        request: endTxn,
        response: response(Api.EndTxn, { txnId: 0 }),
        from: 0,
        conn: 0,
      },
      {
        txnId: 1,
        transit: { ...md, ghostTxn: -1 },
        epochFence: true,
        request: null,
        response: null,
        from: TC_NODE,
        conn: 0,
      },
    ];
    const r = renameTransactionalIds(cfg, withCoordinator(s0, { appends }), swap);
    expect(
      r.coordinator.appends.map((a) => [
        a.txnId,
        a.from,
        a.transit.ghostTxn,
        a.request?.txnId ?? null,
        a.request?.ghostTxn ?? null,
        a.response?.txnId ?? null,
      ]),
    ).toEqual([
      [0, TC_NODE, -1, null, null, null],
      [1, 1, 3, 1, 3, 1],
    ]);
  });
});

// The signatures decide which renamings canonical tries: a field they leave out makes two
// partitions (or ids) that differ only there tie, and canonical then tries both orders. Each case
// starts from a state where partitions 0 and 1 (ids 0 and 1) are alike and changes one field of
// the first: they must no longer tie.
describe('candidate orders: the fields that tell partitions and transactional.ids apart', () => {
  const cfg = kafkaConfig('kafka-4.0', {
    partitions: 3,
    transactionalIds: 3,
    idempotentProducers: 1,
    consumers: { readCommitted: 1, readUncommitted: 0 },
  });
  const s0 = initial(cfg);
  const produceTo = (p: number) => request(Api.Produce, { txnId: 0, pid: 0, epoch: 0, partitions: p });
  const alikePartition = {
    log: [batch({ pid: 0, epoch: 0 })],
    producers: [{ pid: 0, epoch: 0, lastSeqs: [0], coordinatorEpoch: -1, txnFirstOffset: 0 }],
    verifications: [{ pid: 0, epoch: 0, guard: 0, lowestSeq: 0, supportsEpochBump: false }],
    held: [{ guard: 0, from: 0, conn: 0, request: produceTo(0) }],
    nextGuard: 1,
  };
  const clientBatch = (partition: number) => ({
    partition,
    seq: 0,
    status: 0 as const,
    retried: false,
    value: -1,
    ghostRecord: 0,
  });
  const idemBatch = (partition: number) => ({
    partition,
    status: 0 as const,
    pid: 5,
    epoch: 0,
    seq: 0,
    retried: false,
    record: 0,
  });
  const sequences = { pid: 5, epoch: 0, nextSeq: 1, lastAcked: 0 };
  const idem = s0.idempotentProducers[0]!;
  let alike = withPartition(withPartition(s0, 0, alikePartition), 1, {
    ...alikePartition,
    held: [{ ...alikePartition.held[0]!, request: produceTo(1) }],
  });
  alike = withProducer(alike, 0, {
    added: 0b011,
    pendingAdd: 0b011,
    nextSeq: [1, 1, 0],
    conns: [0, 1, 1, 0, 0],
    batches: [clientBatch(0), clientBatch(1)],
  });
  alike = {
    ...alike,
    idempotentProducers: [
      {
        ...idem,
        sequences: [sequences, sequences, idem.sequences[2]!],
        conns: [1, 1, 0],
        batches: [idemBatch(0), idemBatch(1)],
      },
    ],
  };
  alike = withTxn(alike, 0, { state: TxnState.Ongoing, partitions: 0b011 });
  alike = {
    ...alike,
    consumers: [
      {
        ...alike.consumers[0]!,
        position: [1, 1, 0],
        delivered: [
          { partition: 0, offset: 0, ghostTxn: -1, ghostRecord: -1 },
          { partition: 1, offset: 0, ghostTxn: -1, ghostRecord: -1 },
        ],
      },
    ],
  };
  alike = {
    ...alike,
    network: [
      { from: 0, to: leader(0), conn: 0, messages: [produceTo(0)] },
      { from: 0, to: leader(1), conn: 0, messages: [produceTo(1)] },
      {
        from: leader(0),
        to: TC_NODE,
        conn: 0,
        messages: [request(Api.AddPartitionsToTxn, { txnId: 0, pid: 0, epoch: 0, partitions: 0b001 })],
      },
      {
        from: leader(1),
        to: TC_NODE,
        conn: 0,
        messages: [request(Api.AddPartitionsToTxn, { txnId: 0, pid: 0, epoch: 0, partitions: 0b010 })],
      },
    ],
  };
  const partition0 = (fields: object) => (s: State) => withPartition(s, 0, fields);
  const md0 = (fields: object) => (s: State) =>
    withCoordinator(s, {
      metadata: s.coordinator.metadata.map((md, t) => (t === 0 ? { ...md!, ...fields } : md)),
    });
  const log0 = (fields: object) => (s: State) =>
    withCoordinator(s, { log: s.coordinator.log.map((r, t) => (t === 0 ? { ...r!, ...fields } : r)) });
  const logBatch0 = (fields: object) => partition0({ log: [{ ...alikePartition.log[0]!, ...fields }] });
  const producer0 = (fields: object) => (s: State) => withProducer(s, 0, fields);
  const idem0 = (fields: object) => (s: State) => ({
    ...s,
    idempotentProducers: [{ ...s.idempotentProducers[0]!, ...fields }],
  });
  const channel = (i: number, fields: object) => (s: State) => ({
    ...s,
    network: s.network.map((ch, j) => (j === i ? { ...ch, ...fields } : ch)),
  });
  const partitionCases: [string, (s: State) => State][] = [
    ['the log length', partition0({ log: [alikePartition.log[0]!, alikePartition.log[0]!] })],
    ["a batch's kind", logBatch0({ kind: BatchKind.Commit })],
    ["a batch's producer id", logBatch0({ pid: 1 })],
    ["a batch's epoch", logBatch0({ epoch: 1 })],
    ["a batch's sequence", logBatch0({ seq: 1 })],
    ["a batch's record", logBatch0({ ghostRecord: 1 })],
    ["a producer entry's id", partition0({ producers: [{ ...alikePartition.producers[0]!, pid: 1 }] })],
    ["a producer entry's epoch", partition0({ producers: [{ ...alikePartition.producers[0]!, epoch: 1 }] })],
    [
      "a producer entry's first offset",
      partition0({ producers: [{ ...alikePartition.producers[0]!, txnFirstOffset: -1 }] }),
    ],
    ['the verification entries', partition0({ verifications: [] })],
    ['the held requests', partition0({ held: [] })],
    ['the next guard', partition0({ nextGuard: 2 })],
    ['a producer adding it', producer0({ added: 0b010 })],
    ['a producer about to add it', producer0({ pendingAdd: 0b010 })],
    ["a producer's sequence", producer0({ nextSeq: [2, 1, 0] })],
    ["a producer's connection", producer0({ conns: [0, 2, 1, 0, 0] })],
    ["a producer batch's status", producer0({ batches: [{ ...clientBatch(0), status: 1 }, clientBatch(1)] })],
    ["a producer batch's sequence", producer0({ batches: [{ ...clientBatch(0), seq: 1 }, clientBatch(1)] })],
    [
      "an idempotent producer's epoch there",
      idem0({ sequences: [{ ...sequences, epoch: 1 }, sequences, idem.sequences[2]!] }),
    ],
    [
      "an idempotent producer's next sequence there",
      idem0({ sequences: [{ ...sequences, nextSeq: 2 }, sequences, idem.sequences[2]!] }),
    ],
    [
      "an idempotent producer's last acknowledged sequence there",
      idem0({ sequences: [{ ...sequences, lastAcked: 1 }, sequences, idem.sequences[2]!] }),
    ],
    ["an idempotent producer's connection", idem0({ conns: [2, 1, 0] })],
    ["an idempotent batch's status", idem0({ batches: [{ ...idemBatch(0), status: 1 }, idemBatch(1)] })],
    ["an idempotent batch's sequence", idem0({ batches: [{ ...idemBatch(0), seq: 1 }, idemBatch(1)] })],
    ["an idempotent batch's record", idem0({ batches: [{ ...idemBatch(0), record: 1 }, idemBatch(1)] })],
    ["the coordinator's memory", md0({ partitions: 0b010 })],
    ["the coordinator's log", log0({ partitions: 0b010 })],
    ["a consumer's position", (s) => ({ ...s, consumers: [{ ...s.consumers[0]!, position: [2, 1, 0] }] })],
    [
      "a consumer's delivery",
      (s) => ({
        ...s,
        consumers: [
          {
            ...s.consumers[0]!,
            delivered: [{ ...s.consumers[0]!.delivered[0]!, offset: 1 }, s.consumers[0]!.delivered[1]!],
          },
        ],
      }),
    ],
    ['the connection a request reaches it on', channel(0, { conn: 1 })],
    ['how many messages reach it', channel(0, { messages: [produceTo(0), produceTo(0)] })],
    [
      'which api reaches it',
      channel(0, { messages: [request(Api.WriteTxnMarkers, { txnId: 0, pid: 0, epoch: 0, partitions: 0 })] }),
    ],
    ['an answer for a request', channel(0, { messages: [{ ...produceTo(0), response: true }] })],
    ['the connection its requests leave on', channel(2, { conn: 1 })],
    ['where its requests go', channel(2, { to: 1 })],
    [
      'how many partitions a message from it names',
      channel(2, {
        messages: [request(Api.AddPartitionsToTxn, { txnId: 0, pid: 0, epoch: 0, partitions: 0b011 })],
      }),
    ],
  ];

  it('ties partitions 0 and 1 when they are alike', () => {
    expect(candidateOrders(cfg, alike).partitions).toHaveLength(2);
  });
  for (const [field, change] of partitionCases) {
    it(`tells partitions apart by ${field}`, () => {
      const changed = change(alike);
      expect(key(changed)).not.toBe(key(alike));
      expect(candidateOrders(cfg, changed).partitions).toEqual([expect.any(Array)]);
    });
  }
  // A renaming of transactional.ids or instances changes these, and the representative is packed
  // for every renaming of ids with the partition orders of the state itself: they must tie.
  const idNamedCases: [string, (s: State) => State][] = [
    ["a batch's client transaction", logBatch0({ ghostTxn: 1 })],
    [
      'which transactional.id holds it',
      (s) =>
        withTxn(withTxn(s, 0, { state: TxnState.Ongoing, partitions: 0b010 }), 1, {
          pid: 1,
          state: TxnState.Ongoing,
          partitions: 0b001,
        }),
    ],
    ['which producer instance sends to it', channel(0, { from: 1 })],
  ];
  for (const [field, change] of idNamedCases) {
    it(`does not tell partitions apart by ${field}`, () => {
      const changed = change(alike);
      expect(key(changed)).not.toBe(key(alike));
      expect(candidateOrders(cfg, changed).partitions).toHaveLength(2);
    });
  }

  // Ids 0 and 1 alike (the same producer id too, which the signature reads), with one instance
  // each and a client transaction under way; id 2 as it starts.
  let alikeIds = s0;
  for (const t of [0, 1]) {
    alikeIds = withTxn(alikeIds, t, {
      pid: 0,
      state: TxnState.Ongoing,
      pendingState: TxnState.PrepareCommit,
      partitions: 1 << t,
    });
    alikeIds = withProducer(alikeIds, t, {
      status: 1,
      tm: 2,
      pid: 0,
      epoch: 0,
      txnsBegun: 1,
      recordsSent: 1,
    });
    const first = t * cfg.transactionsPerInstance;
    alikeIds = {
      ...alikeIds,
      history: alikeIds.history.map((h, c) => (c === first ? { ...h, recordsSent: 1 } : h)),
    };
  }
  const instance0 = (fields: object) => (s: State) => withProducer(s, 0, fields);
  const history0 = (fields: object) => (s: State) => ({
    ...s,
    history: s.history.map((h, c) => (c === 0 ? { ...h, ...fields } : h)),
  });
  const idCases: [string, (s: State) => State][] = [
    [
      "the coordinator's memory of it",
      (s) => withCoordinator(s, { metadata: s.coordinator.metadata.map((md, t) => (t === 0 ? null : md)) }),
    ],
    ["the coordinator's producer id for it", md0({ pid: 1 })],
    ["the coordinator's epoch for it", md0({ epoch: 1 })],
    ["its transaction's state", md0({ state: TxnState.PrepareCommit })],
    ["its transaction's pending state", md0({ pendingState: -1 })],
    ['how many partitions its transaction holds', md0({ partitions: 0b011 })],
    [
      'its last log record',
      (s) => withCoordinator(s, { log: s.coordinator.log.map((r, t) => (t === 0 ? null : r)) }),
    ],
    ["its log record's producer id", log0({ pid: 1 })],
    ["its log record's epoch", log0({ epoch: 1 })],
    ["its log record's state", log0({ state: TxnState.PrepareCommit })],
    ['how many partitions its log record holds', log0({ partitions: 0b011 })],
    ["its instance's status", instance0({ status: 2 })],
    ["its instance's client state", instance0({ tm: 3 })],
    ["its instance's producer id", instance0({ pid: 1 })],
    ["its instance's epoch", instance0({ epoch: 1 })],
    ["its instance's transactions begun", instance0({ txnsBegun: 2 })],
    ["its instance's records sent", instance0({ recordsSent: 2 })],
    ["its client transaction's decision", history0({ decision: 1 })],
    ['what its client transaction was told', history0({ told: 1 })],
    ["its client transaction's records", history0({ recordsSent: 2 })],
  ];

  it('ties transactional.ids 0 and 1 when they are alike', () => {
    expect(candidateOrders(cfg, alikeIds).transactionalIds).toHaveLength(2);
  });
  for (const [field, change] of idCases) {
    it(`tells transactional.ids apart by ${field}`, () => {
      const changed = change(alikeIds);
      expect(key(changed)).not.toBe(key(alikeIds));
      expect(candidateOrders(cfg, changed).transactionalIds).toEqual([expect.any(Array)]);
    });
  }
});

// States where two partitions tie on their signatures but differ in what the signatures leave
// out: canonical must try both orders, which it does only while both count as touched.
describe('canonical on partitions that tie', () => {
  const cfg = kafkaConfig('kafka-4.0', {
    partitions: 3,
    idempotentProducers: 1,
    consumers: { readCommitted: 1, readUncommitted: 0 },
  });
  const s0 = initial(cfg);
  const idem = s0.idempotentProducers[0]!;
  const all = permutations([0, 1, 2]);
  const verification = (pid: number) => ({ pid, epoch: 0, guard: 0, lowestSeq: 0, supportsEpochBump: false });
  // Partitions 0 and 1 hold verification entries of two producer ids (the signature counts them);
  // partition 2 is named in every other place a partition is marked touched.
  const tiedByVerifications = withPartition(withPartition(s0, 0, { verifications: [verification(0)] }), 1, {
    verifications: [verification(1)],
  });
  let namedEverywhere = withProducer(tiedByVerifications, 0, {
    nextSeq: [0, 0, 1],
    conns: [0, 0, 0, 1, 0],
    batches: [{ partition: 2, seq: 0, status: 0, retried: false, value: -1, ghostRecord: 0 }],
  });
  namedEverywhere = {
    ...namedEverywhere,
    idempotentProducers: [
      {
        ...idem,
        sequences: [idem.sequences[0]!, idem.sequences[1]!, { pid: 5, epoch: 0, nextSeq: 1, lastAcked: 0 }],
        conns: [0, 0, 1],
        batches: [{ partition: 2, status: 0, pid: 5, epoch: 0, seq: 0, retried: false, record: 0 }],
      },
    ],
  };
  namedEverywhere = withTxn(namedEverywhere, 0, { state: TxnState.Ongoing, partitions: 0b100 });
  namedEverywhere = {
    ...namedEverywhere,
    consumers: [
      {
        ...namedEverywhere.consumers[0]!,
        position: [0, 0, 1],
        delivered: [{ partition: 2, offset: 0, ghostTxn: -1, ghostRecord: -1 }],
      },
    ],
  };
  namedEverywhere = {
    ...namedEverywhere,
    network: [
      {
        from: 0,
        to: leader(2),
        conn: 0,
        messages: [request(Api.Produce, { txnId: 0, pid: 0, epoch: 0, partitions: 2 })],
      },
      {
        from: leader(2),
        to: TC_NODE,
        conn: 0,
        messages: [request(Api.AddPartitionsToTxn, { txnId: 0, pid: 0, epoch: 0, partitions: 0b100 })],
      },
    ],
  };
  // Partitions 0 and 1 have sequences of two producer ids at one epoch (the signature reads the epoch and sequences).
  const sequencesOf = (pid: number) => ({ pid, epoch: 0, nextSeq: 0, lastAcked: -1 });
  const tiedBySequences = {
    ...s0,
    idempotentProducers: [{ ...idem, sequences: [sequencesOf(5), sequencesOf(6), idem.sequences[2]!] }],
  };
  // Partitions 0 and 1 hold one batch each, of two input records (the signature does not read a
  // record's value), and one thing more: a producer entry, a verification entry, a held request or
  // a guard handed out. A partition holds something when any of its counts is not zero.
  const tiedByValues = (more: object) => {
    const holding = (value: number) => ({ log: [batch({ pid: 0, epoch: 0, value })], ...more });
    return withPartition(withPartition(s0, 0, holding(0)), 1, holding(1));
  };
  const cases: [string, State][] = [
    [
      'the values of their batches, beside a producer entry',
      tiedByValues({
        producers: [{ pid: 0, epoch: 0, lastSeqs: [0], coordinatorEpoch: -1, txnFirstOffset: 0 }],
      }),
    ],
    [
      'the values of their batches, beside a verification entry',
      tiedByValues({ verifications: [verification(0)] }),
    ],
    [
      'the values of their batches, beside a held request',
      tiedByValues({
        held: [
          {
            guard: 0,
            from: 0,
            conn: 0,
            request: request(Api.Produce, { txnId: 0, pid: 0, epoch: 0, partitions: 0 }),
          },
        ],
      }),
    ],
    ['the values of their batches, beside a guard handed out', tiedByValues({ nextGuard: 1 })],
    ['verification entries', tiedByVerifications],
    ['verification entries, with partition 2 named in every other place', namedEverywhere],
    ["an idempotent producer's sequences", tiedBySequences],
  ];

  for (const [tiedBy, s] of cases) {
    it(`gives every renaming one representative when partitions tie on ${tiedBy}`, () => {
      expect(candidateOrders(cfg, s).partitions.length).toBeGreaterThan(1);
      const canonical = kafkaCanonical(cfg);
      const representative = key(canonical(s));
      for (const perm of all) expect(key(canonical(renamePartitions(s, perm)))).toBe(representative);
    });
  }

  it('forgets the last state between calls: the representative of a state is its own, whatever came before', () => {
    const canonical = kafkaCanonical(cfg);
    const representatives = cases.map(([, s]) => key(kafkaCanonical(cfg)(s)));
    for (let i = 0; i < cases.length; i++)
      for (let j = 0; j < cases.length; j++) {
        canonical(cases[i]![1]);
        expect(key(canonical(cases[j]![1]))).toBe(representatives[j]);
      }
  });
});
