import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bfs } from '../../checker/engine/bfs.ts';
import { main } from '../../checker/cli.ts';
import type { Model } from '../../checker/engine/model.ts';
import { buildModel } from '../../specs/build.ts';
import { kafkaEntry } from '../../specs/kafka/entry.ts';
import { packState } from './pack.ts';
import { loadSpecFile, parseSpec } from '../../specs/load.ts';
import type { KafkaConfig } from './config.ts';
import type { Action } from './next.ts';
import { type State, Instance } from './state.ts';
import { renameInstances, renamePartitions, renameTransactionalIds } from './renamed-states.ts';
import { permutations } from './symmetry.ts';

const dir = mkdtempSync(join(tmpdir(), 'txcheck-kafka-symmetry-'));
const io = { out: () => {}, err: () => {}, errIsTTY: false };
const check = (raw: Record<string, unknown>) =>
  bfs(buildModel('spec.json', raw), { deadlockAllowed: raw.deadlock === true });
const shipped = (file: string) => loadSpecFile(file).raw as Record<string, unknown>;
const withMutant = (file: string, mutant: string) => kafkaEntry.withMutant!(shipped(file), mutant);

/** JSON with sorted keys: equal for equal plain data whatever order its fields were built in. */
function key(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x !== null && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1)))
      : x,
  );
}

/**
 * The spec `raw` without symmetry: its configuration, every reachable state by its packed words
 * (pack.test.ts: equal words, equal states; quicker than comparing states) and every renaming of
 * its partitions.
 */
function unreduced(raw: Record<string, unknown>) {
  const cfg = parseSpec('spec.json', { ...raw, symmetry: false }, '').params as KafkaConfig;
  const model = buildModel('spec.json', { ...raw, symmetry: false }) as Model<State, Action>;
  const words = new Int32Array(1 << 14);
  const packedKey = (s: State) => words.subarray(0, packState(s, words)).join(',');
  const parts = permutations(Array.from({ length: cfg.partitions }, (_, p) => p));
  return { cfg, packedKey, seen: reachable(model, packedKey), parts };
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
      if (!seen.has(k)) {
        seen.set(k, t);
        queue.push(t);
      }
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
    [
      'failover-with-loss + mutantLosePartitionsOnFailover',
      withMutant('specs/kafka/mutants/failover-with-loss.json', 'mutantLosePartitionsOnFailover'),
    ],
    [
      'transform over 2 partitions + mutantOffsetsOutsideTransaction',
      {
        ...withMutant('specs/kafka/mutants/transform.json', 'mutantOffsetsOutsideTransaction'),
        partitions: 2,
      },
    ],
    [
      'transform over 2 partitions, kafka-4.0',
      { ...shipped('specs/kafka/mutants/transform.json'), partitions: 2, variant: 'kafka-4.0' },
    ],
  ])(
    '%s: the same verdict and shortest trace length, fewer states with 2 partitions or more',
    (_name, raw) => {
      const full = check({ ...raw, symmetry: false });
      const reduced = check({ ...raw, symmetry: true });
      expect(reduced.status).toBe(full.status);
      expect(reduced.violation?.property).toBe(full.violation?.property);
      expect(reduced.violation?.trace.actions.length).toBe(full.violation?.trace.actions.length);
      if (((raw.partitions as number | undefined) ?? 1) >= 2)
        expect(reduced.distinctStates).toBeLessThan(full.distinctStates);
      else expect(reduced.distinctStates).toBe(full.distinctStates);
    },
  );

  it.each([
    ['lossy-network', shipped('specs/kafka/lossy-network.json'), 'NoHangingTransaction'],
    [
      'failover-with-loss',
      withMutant('specs/kafka/mutants/failover-with-loss.json', 'mutantLosePartitionsOnFailover'),
      'NoHangingTransaction',
    ],
    [
      'timeout-after-prepare',
      withMutant('specs/kafka/mutants/timeout-after-prepare.json', 'mutantTimeoutAbortsPrepared'),
      'AtomicCommit',
    ],
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
    [
      '3 partitions, one record per transaction, a request timeout',
      {
        model: 'kafka',
        partitions: 3,
        recordsPerTransaction: 1,
        transactionsPerInstance: 1,
        consumers: { readCommitted: 1 },
        faults: { requestTimeouts: 1 },
        properties: [
          'ReadCommittedIsolation',
          'AtomicCommit',
          'NoLostWrite',
          'Idempotence',
          'NoHangingTransaction',
          'ProducerIdAgreement',
        ],
        deadlock: true,
      },
    ],
    [
      'kafka-3.6, 2 partitions, a lost response',
      {
        model: 'kafka',
        variant: 'kafka-3.6',
        partitions: 2,
        recordsPerTransaction: 2,
        faults: { responseLoss: 1 },
        deadlock: true,
      },
    ],
  ])('%s: the reduced search finds exactly one state per class of renamings', (_name, raw) => {
    const spec = parseSpec('spec.json', { ...raw, symmetry: false }, '');
    const cfg = spec.params as KafkaConfig;
    const model = buildModel('spec.json', { ...raw, symmetry: false }) as Model<State, Action>;
    const seen = reachable(model, key);
    const renamings = permutations(Array.from({ length: cfg.partitions }, (_, p) => p));
    const classes = new Set(
      [...seen.values()].map((s) => renamings.map((perm) => key(renamePartitions(s, perm))).sort()[0]),
    );
    const reduced = check({ ...raw, symmetry: true });
    expect(check({ ...raw, symmetry: false }).distinctStates).toBe(seen.size);
    expect(reduced.distinctStates).toBe(classes.size);
    expect(classes.size).toBeLessThan(seen.size);
  });

  it('is refused, in one line, together with liveness', async () => {
    const file = join(dir, 'liveness-symmetry.json');
    writeFileSync(
      file,
      JSON.stringify({ ...shipped('specs/kafka/commit-abort-liveness.json'), symmetry: true }),
    );
    let err = '';
    expect(await main(['check', file], { out: () => {}, err: (t) => (err += t), errIsTTY: false })).toBe(2);
    expect(err).toBe(
      `${file}: symmetry: expected false with "liveness" (liveness is checked on the unreduced state graph), got true\n`,
    );
  });
});

describe('Kafka transactional-id symmetry', () => {
  const idRenamings = (cfg: KafkaConfig) =>
    permutations(Array.from({ length: cfg.transactionalIds }, (_, t) => t));

  // The oracle: every reachable state of the unreduced model, grouped into classes by trying every
  // renaming of both kinds: the reduced search must find one state per class.
  it.each([
    [
      'two transactional.ids, one partition',
      { model: 'kafka', transactionalIds: 2, consumers: { readCommitted: 0 }, deadlock: true },
    ],
    [
      'two transactional.ids, two partitions',
      { model: 'kafka', transactionalIds: 2, partitions: 2, consumers: { readCommitted: 0 }, deadlock: true },
    ],
  ])('%s: the reduced search finds exactly one state per class of renamings', (_name, raw) => {
    const { cfg, packedKey, seen, parts } = unreduced(raw);
    const ids = idRenamings(cfg);
    const classOf = (s: State) =>
      ids
        .flatMap((t) => parts.map((p) => packedKey(renamePartitions(renameTransactionalIds(cfg, s, t), p))))
        .sort()[0];
    const classes = new Set([...seen.values()].map(classOf));
    expect(check({ ...raw, symmetry: false }).distinctStates).toBe(seen.size);
    expect(check({ ...raw, symmetry: true }).distinctStates).toBe(classes.size);
    expect(classes.size).toBeLessThan(seen.size);
  });

  it('keeps the verdict and the shortest counterexample, which replays on the real model', async () => {
    const raw = {
      ...withMutant('specs/kafka/mutants/read-past-lso.json', 'mutantReadPastLso'),
      transactionalIds: 2,
    };
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

describe('Kafka instance symmetry', () => {
  // The oracle: classes of the unreduced model's states under every renaming of partitions and,
  // where every instance of the id has started, of its instances.
  it.each([
    [
      'two instances, one partition',
      { model: 'kafka', instancesPerId: 2, consumers: { readCommitted: 0 }, deadlock: true },
      true,
    ],
    [
      'the second instance after a crash of the first, two partitions',
      {
        model: 'kafka',
        instancesPerId: 2,
        instanceStart: 'after-crash',
        partitions: 2,
        consumers: { readCommitted: 0 },
        faults: { producerCrashes: 1 },
        deadlock: true,
      },
      // A crashed instance and the one started after it never trade places in a reachable state.
      false,
    ],
  ] as const)(
    '%s: the reduced search finds exactly one state per class of renamings',
    (_name, raw, merges) => {
      const { cfg, packedKey, seen, parts } = unreduced(raw);
      const classOf = (s: State) => {
        const started = s.producers.every((p) => p.status !== Instance.NotStarted);
        const renamings = started ? [s, renameInstances(cfg, s, [[1, 0]])] : [s];
        return renamings.flatMap((r) => parts.map((p) => packedKey(renamePartitions(r, p)))).sort()[0];
      };
      const classes = new Set([...seen.values()].map(classOf));
      expect(check({ ...raw, symmetry: false }).distinctStates).toBe(seen.size);
      expect(check({ ...raw, symmetry: true }).distinctStates).toBe(classes.size);
      // Whether renaming instances merges states beyond what renaming partitions does.
      const byPartitions = new Set(
        [...seen.values()].map((s) => parts.map((p) => packedKey(renamePartitions(s, p))).sort()[0]),
      );
      if (merges) expect(classes.size).toBeLessThan(byPartitions.size);
      else expect(classes.size).toBe(byPartitions.size);
    },
  );

  it.each([
    ['two-instances', 'specs/kafka/mutants/two-instances.json', 'mutantNoProduceEpochFence'],
    ['zombie-fencing', 'specs/kafka/zombie-fencing.json', 'mutantFenceAnswersNone'],
    ['zombie-fencing', 'specs/kafka/zombie-fencing.json', 'mutantMarkerNeedsHigherEpoch'],
  ])(
    '%s with %s: the same verdict and shortest counterexample, which replays',
    async (name, file, mutant) => {
      const raw = withMutant(file, mutant);
      const full = check({ ...raw, symmetry: false });
      const reduced = check({ ...raw, symmetry: true });
      expect(full.violation).toBeDefined();
      expect(reduced.violation?.property).toBe(full.violation?.property);
      expect(reduced.violation?.trace.actions.length).toBe(full.violation?.trace.actions.length);
      expect(reduced.distinctStates).toBeLessThan(full.distinctStates);
      const spec = join(dir, `${name}-${mutant}.json`);
      writeFileSync(spec, JSON.stringify({ ...raw, symmetry: true, expect: full.violation!.property }));
      const trace = join(dir, `${name}-${mutant}.itf.json`);
      expect(await main(['check', spec, '--workers', '1', '--out', trace], io)).toBe(1);
      expect(await main(['replay', trace], io)).toBe(0);
    },
  );
});
