import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bfs } from '../../checker/engine/bfs.ts';
import { main } from '../../checker/cli.ts';
import type { Model } from '../../checker/engine/model.ts';
import { buildModel } from '../../specs/build.ts';
import { kafkaEntry } from '../../specs/kafka/entry.ts';
import { packState } from './pack.ts';
import { kafkaProperties } from './properties.ts';
import { loadSpecFile, parseSpec } from '../../specs/load.ts';
import type { KafkaConfig } from './config.ts';
import type { Action } from './next.ts';
import type { State } from './state.ts';
import { compareStates, kafkaCanonical, permutations, renamePartitions, renameTransactionalIds } from './symmetry.ts';

const dir = mkdtempSync(join(tmpdir(), 'txcheck-kafka-symmetry-'));
const io = { out: () => {}, err: () => {}, errIsTTY: false };
const check = (raw: Record<string, unknown>) => bfs(buildModel('spec.json', raw), { deadlockAllowed: raw.deadlock === true });
const shipped = (file: string) => loadSpecFile(file).raw as Record<string, unknown>;
const withMutant = (file: string, mutant: string) => kafkaEntry.withMutant!(shipped(file), mutant);

/** JSON with sorted keys: equal for equal plain data whatever order its fields were built in. */
function key(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x !== null && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x,
  );
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

/** Every reachable state of the unreduced model, by the key that tells states apart. */
function reachable(model: Model<State, Action>, keyOf: (s: State) => string): Map<string, State> {
  const seen = new Map<string, State>();
  const queue = model.init().slice();
  for (const s of queue) seen.set(keyOf(s), s);
  for (let i = 0; i < queue.length; i++) {
    for (const a of model.actions(queue[i]!)) {
      const t = model.next(queue[i]!, a);
      const k = keyOf(t);
      if (!seen.has(k)) seen.set(k, t) && queue.push(t);
    }
  }
  return seen;
}

describe('Kafka partition symmetry', () => {
  it.each([
    ['commit-abort', shipped('specs/kafka/commit-abort.json')],
    ['transaction-timeout', shipped('specs/kafka/transaction-timeout.json')],
    ['hanging-transaction', shipped('specs/kafka/hanging-transaction.json')],
    ['stale-end-txn', shipped('specs/kafka/stale-end-txn.json')],
    ['lossy-network', shipped('specs/kafka/lossy-network.json')],
    ['failover-with-loss + mutantLosePartitionsOnFailover', withMutant('specs/kafka/mutants/failover-with-loss.json', 'mutantLosePartitionsOnFailover')],
    ['transform over 2 partitions + mutantOffsetsOutsideTransaction', { ...withMutant('specs/kafka/mutants/transform.json', 'mutantOffsetsOutsideTransaction'), partitions: 2 }],
    ['transform over 2 partitions, kafka-4.0', { ...shipped('specs/kafka/mutants/transform.json'), partitions: 2, variant: 'kafka-4.0' }],
  ])('%s: the same verdict and shortest trace length, fewer states with 2 partitions or more', (_name, raw) => {
    const full = check({ ...raw, symmetry: false });
    const reduced = check({ ...raw, symmetry: true });
    expect(reduced.status).toBe(full.status);
    expect(reduced.violation?.property).toBe(full.violation?.property);
    expect(reduced.violation?.trace.actions.length).toBe(full.violation?.trace.actions.length);
    if (((raw.partitions as number | undefined) ?? 1) >= 2) expect(reduced.distinctStates).toBeLessThan(full.distinctStates);
    else expect(reduced.distinctStates).toBe(full.distinctStates);
  });

  it.each([
    ['lossy-network', shipped('specs/kafka/lossy-network.json'), 'NoHangingTransaction'],
    ['failover-with-loss', withMutant('specs/kafka/mutants/failover-with-loss.json', 'mutantLosePartitionsOnFailover'), 'NoHangingTransaction'],
    ['timeout-after-prepare', withMutant('specs/kafka/mutants/timeout-after-prepare.json', 'mutantTimeoutAbortsPrepared'), 'AtomicCommit'],
  ])('%s: the counterexample found under symmetry replays on the real model', async (name, raw, property) => {
    const file = join(dir, `${name}.json`);
    writeFileSync(file, JSON.stringify({ ...raw, symmetry: true, expect: property }));
    const trace = join(dir, `${name}.itf.json`);
    for (const workers of ['1', '2']) {
      expect(await main(['check', file, '--workers', workers, '--out', trace], io)).toBe(1);
      expect(await main(['replay', trace], io)).toBe(0);
    }
  });

  // The oracle: every reachable state of the unreduced model, grouped into classes by trying every
  // renaming (no signatures, no canonical): the reduced search must find one state per class.
  it.each([
    ['commit-abort (2 partitions)', shipped('specs/kafka/commit-abort.json')],
    // Without NoSpuriousFatal, which a timed-out InitProducerId breaks early: the run must explore everything.
    ['3 partitions, one record per transaction, a request timeout', { model: 'kafka', partitions: 3, recordsPerTransaction: 1, transactionsPerInstance: 1, consumers: { readCommitted: 1 }, faults: { requestTimeouts: 1 }, properties: ['ReadCommittedIsolation', 'AtomicCommit', 'NoLostWrite', 'Idempotence', 'NoHangingTransaction', 'ProducerIdAgreement'], deadlock: true }],
    ['kafka-3.6, 2 partitions, a lost response', { model: 'kafka', variant: 'kafka-3.6', partitions: 2, recordsPerTransaction: 2, faults: { responseLoss: 1 }, deadlock: true }],
  ])('%s: the reduced search finds exactly one state per class of renamings', (_name, raw) => {
    const spec = parseSpec('spec.json', { ...raw, symmetry: false }, '');
    const cfg = spec.params as KafkaConfig;
    const model = buildModel('spec.json', { ...raw, symmetry: false }) as Model<State, Action>;
    const seen = reachable(model, key);
    const renamings = permutations(Array.from({ length: cfg.partitions }, (_, p) => p));
    const classes = new Set([...seen.values()].map((s) => renamings.map((perm) => key(renamePartitions(s, perm))).sort()[0]));
    const reduced = check({ ...raw, symmetry: true });
    expect(check({ ...raw, symmetry: false }).distinctStates).toBe(seen.size);
    expect(reduced.distinctStates).toBe(classes.size);
    expect(classes.size).toBeLessThan(seen.size);
  });

  it('is refused, in one line, together with liveness', async () => {
    const file = join(dir, 'liveness-symmetry.json');
    writeFileSync(file, JSON.stringify({ ...shipped('specs/kafka/commit-abort-liveness.json'), symmetry: true }));
    let err = '';
    expect(await main(['check', file], { out: () => {}, err: (t) => (err += t), errIsTTY: false })).toBe(2);
    expect(err).toBe(`${file}: symmetry: expected false with "liveness" (liveness is checked on the unreduced state graph), got true\n`);
  });

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

  // The oracle: every reachable state of the unreduced model, grouped into classes by trying every
  // renaming of both kinds: the reduced search must find one state per class.
  it.each([
    ['two transactional.ids, one partition', { model: 'kafka', transactionalIds: 2, consumers: { readCommitted: 0 }, deadlock: true }],
    ['two transactional.ids, two partitions', { model: 'kafka', transactionalIds: 2, partitions: 2, consumers: { readCommitted: 0 }, deadlock: true }],
  ])('%s: the reduced search finds exactly one state per class of renamings', (_name, raw) => {
    const spec = parseSpec('spec.json', { ...raw, symmetry: false }, '');
    const cfg = spec.params as KafkaConfig;
    const model = buildModel('spec.json', { ...raw, symmetry: false }) as Model<State, Action>;
    // States told apart by their packed words (pack.test.ts: equal words, equal states), which is quick.
    const words = new Int32Array(1 << 14);
    const packedKey = (s: State) => words.subarray(0, packState(s, words)).join(',');
    const seen = reachable(model, packedKey);
    const parts = permutations(Array.from({ length: cfg.partitions }, (_, p) => p));
    const ids = idRenamings(cfg);
    const classOf = (s: State) => ids.flatMap((t) => parts.map((p) => packedKey(renamePartitions(renameTransactionalIds(cfg, s, t), p)))).sort()[0];
    const classes = new Set([...seen.values()].map(classOf));
    expect(check({ ...raw, symmetry: false }).distinctStates).toBe(seen.size);
    expect(check({ ...raw, symmetry: true }).distinctStates).toBe(classes.size);
    expect(classes.size).toBeLessThan(seen.size);
  });

  it('keeps the verdict and the shortest counterexample, which replays on the real model', async () => {
    const raw = { ...withMutant('specs/kafka/mutants/read-past-lso.json', 'mutantReadPastLso'), transactionalIds: 2 };
    const full = check({ ...raw, symmetry: false });
    const reduced = check({ ...raw, symmetry: true });
    expect(reduced.violation?.property).toBe(full.violation?.property);
    expect(reduced.violation?.trace.actions.length).toBe(full.violation?.trace.actions.length);
    expect(reduced.distinctStates).toBeLessThan(full.distinctStates);
    const file = join(dir, 'two-ids.json');
    writeFileSync(file, JSON.stringify({ ...raw, symmetry: true, expect: full.violation!.property }));
    const trace = join(dir, 'two-ids.itf.json');
    expect(await main(['check', file, '--workers', '1', '--out', trace], io)).toBe(1);
    expect(await main(['replay', trace], io)).toBe(0);
  });
});
