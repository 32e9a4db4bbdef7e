// The parallel search must give what the one-thread search gives: counts, verdict and trace.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { freemem, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildModel, modelRecipe } from '../../../specs/build.ts';
import { type Spec, loadMutatedSpec, loadSpecFile, parseSpec } from '../../../specs/load.ts';
import { bfs } from '../bfs.ts';
import type { SearchOptions } from '../search.ts';
import { MidLevelStop, midLevelStop, parallelBfs } from './bfs.ts';

const twoPhase = (resourceManagers: number, extra: Record<string, unknown> = {}) => ({
  model: 'two-phase',
  resourceManagers,
  ...extra,
});
const mutant = { mutant: 'commit-without-all-prepared' };

/** The parts of a result that must not depend on the number of threads, on one thread and on `workers`. */
async function onOneAndMore(spec: Spec, limits: Partial<SearchOptions> = {}, workers = 2) {
  const options = { deadlockAllowed: spec.deadlockAllowed, ...limits };
  const { seconds: _a, memory: _b, ...one } = bfs(buildModel(spec.file, spec.raw), options);
  const {
    seconds: _c,
    memory: _d,
    ...more
  } = await parallelBfs(buildModel(spec.file, spec.raw), modelRecipe(spec), { ...options, workers });
  return { one, more };
}

async function onOneAndTwo(raw: Record<string, unknown>, limits: Partial<SearchOptions> = {}) {
  const { one, more: two } = await onOneAndMore(parseSpec('spec.json', raw, ''), limits);
  return { one, two };
}

describe('parallel breadth-first search', () => {
  it.each([
    ['TwoPhase N=3', twoPhase(3)],
    ['TwoPhase N=5', twoPhase(5)],
    ['the commit-early mutant, N=4', twoPhase(4, mutant)],
    ['the commit-early mutant under symmetry, N=5', twoPhase(5, { ...mutant, symmetry: true })],
    ['a Kafka spec that holds', loadSpecFile('specs/kafka/commit-abort.json').raw],
    ['a Kafka spec that fails', loadSpecFile('specs/kafka/stale-end-txn.json').raw],
    // The workers keep a state's words only where it is its own representative.
    [
      'a Kafka spec with two instances under symmetry',
      { ...loadSpecFile('specs/kafka/zombie-fencing.json').raw, symmetry: true },
    ],
  ])('on 2 workers gives the counts, verdict and trace of one thread: %s', async (_name, raw) => {
    const { one, two } = await onOneAndTwo(raw);
    expect(two).toEqual(one);
  });

  // On 3 workers the first violating state of these is one a worker handed to another to even out
  // the levels, so its invariants' result travels with it.
  it.each([
    ['specs/kafka/mutants/end-txn-retry.json', 'mutantEndTxnIgnoresState', 'CoordinatorTransitions'],
    ['specs/kafka/mutants/timed-out-offset-commit.json', 'mutantGuardBeforeEpoch', 'TimedOutProducerFenced'],
  ])(
    'on 3 workers reports the violation one thread reports, in a state handed over: %s',
    async (file, mutant, property) => {
      const { one, more: three } = await onOneAndMore(loadMutatedSpec(file, mutant, property), {}, 3);
      expect(one.violation?.property).toBe(property);
      expect(three).toEqual(one);
    },
  );

  // Sleep sets on workers: each state's set is the intersection over every arrival in its level,
  // wherever it was made, so the counts (generated too), verdict and trace are one thread's.
  it.each([
    ['a Kafka spec that holds', 'specs/kafka/commit-abort.json', 2],
    ['a Kafka spec with two instances', 'specs/kafka/zombie-fencing.json', 3],
    ['a Kafka spec that fails', 'specs/kafka/stale-end-txn.json', 3],
  ])(
    "with sleep sets on workers gives one thread's counts, verdict and trace: %s",
    async (_name, file, workers) => {
      const { one, more } = await onOneAndMore(
        loadSpecFile(file as string),
        { sleep: true },
        workers as number,
      );
      const { one: full } = await onOneAndMore(loadSpecFile(file as string), {}, 1);
      expect(one.statesGenerated).toBeLessThan(full.statesGenerated);
      expect(more).toEqual(one);
    },
  );

  it.each([
    ['specs/kafka/mutants/end-txn-retry.json', 'mutantEndTxnIgnoresState', 'CoordinatorTransitions'],
    ['specs/kafka/mutants/timed-out-offset-commit.json', 'mutantGuardBeforeEpoch', 'TimedOutProducerFenced'],
  ])('with sleep sets on 3 workers catches %s %s as one thread does', async (file, mutant, property) => {
    const { one, more } = await onOneAndMore(loadMutatedSpec(file, mutant, property), { sleep: true }, 3);
    expect(one.violation?.property).toBe(property);
    expect(more).toEqual(one);
  });

  it("counts TLC's published TwoPhase figures on 2 workers (3 RMs: 288 distinct, 1,146 generated; 6 RMs: 50,816 distinct)", async () => {
    const count = async (n: number) => {
      const spec = parseSpec('spec.json', twoPhase(n), '');
      return parallelBfs(buildModel(spec.file, spec.raw), modelRecipe(spec), {
        deadlockAllowed: false,
        workers: 2,
      });
    };
    expect(await count(3)).toMatchObject({ status: 'ok', distinctStates: 288, statesGenerated: 1146 });
    expect(await count(6)).toMatchObject({ status: 'ok', distinctStates: 50816 });
  });

  it.each([
    ['TwoPhase N=4', twoPhase(4), 100],
    ['TwoPhase N=5', twoPhase(5), 1000],
    ['a Kafka spec', loadSpecFile('specs/kafka/commit-abort.json').raw, 500],
    ['a Kafka spec, the limit at a level boundary', loadSpecFile('specs/kafka/commit-abort.json').raw, 1],
  ])(
    'stops at --max-states with the counts, depth and coverage of one thread: %s',
    async (_name, raw, maxStates) => {
      const { one, two } = await onOneAndTwo(raw, { maxStates });
      expect(one).toMatchObject({ status: 'incomplete', stoppedBy: 'maxStates', distinctStates: maxStates });
      expect(two).toEqual(one);
    },
  );

  it('stops at the same limits as one thread', async () => {
    const depth = await onOneAndTwo(twoPhase(4), { maxDepth: 3 });
    expect(depth.two).toEqual(depth.one);
  });

  it('reports the deadlock one thread reports', async () => {
    const { one, two } = await onOneAndTwo({
      ...loadSpecFile('specs/kafka/commit-abort.json').raw,
      deadlock: false,
    });
    expect(one.violation?.property).toBe('Deadlock');
    expect(two).toEqual(one);
  });
});

describe('the parallel search past its spill size', () => {
  /** Runs `f` with the temporary folder a fresh one, and returns what the search left there (tsx keeps its cache there too). */
  async function inFreshTmp<T>(f: () => Promise<T>): Promise<{ value: T; left: string[] }> {
    const saved = process.env.TMPDIR;
    const folder = mkdtempSync(join(tmpdir(), 'spill-test-'));
    process.env.TMPDIR = folder;
    try {
      const value = await f();
      return { value, left: readdirSync(folder).filter((name) => name.startsWith('txcheck-')) };
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
      rmSync(folder, { recursive: true, force: true });
    }
  }

  it.each([
    ['a Kafka spec that holds', loadSpecFile('specs/kafka/commit-abort.json').raw],
    ['a Kafka spec that fails', loadSpecFile('specs/kafka/stale-end-txn.json').raw],
  ])(
    'keeps states on disk, gives the counts, verdict and trace of one thread, and leaves no file: %s',
    async (_name, raw) => {
      const { value, left } = await inFreshTmp(async () => {
        const spec = parseSpec('spec.json', raw, '');
        const options = { deadlockAllowed: spec.deadlockAllowed };
        const one = bfs(buildModel(spec.file, spec.raw), options);
        const two = await parallelBfs(buildModel(spec.file, spec.raw), modelRecipe(spec), {
          ...options,
          workers: 2,
          spillBytes: 4096,
        });
        return { one, two };
      });
      const { seconds: _a, memory: _b, ...one } = value.one;
      const { seconds: _c, memory, ...two } = value.two;
      expect(two).toEqual(one);
      expect(memory?.spilledBytes).toBeGreaterThan(0);
      expect(left).toEqual([]);
    },
  );

  it('leaves no file when it stops in the middle of a level', async () => {
    const { value, left } = await inFreshTmp(() => {
      const spec = parseSpec('spec.json', loadSpecFile('specs/kafka/commit-abort.json').raw, '');
      // Past the bound once states are on disk, whenever that is: a count of looks depended on
      // how fast the machine ran the levels, and a fast run finished first.
      const folder = process.env.TMPDIR!;
      const onDisk = () =>
        readdirSync(folder, { recursive: true, withFileTypes: true }).some((e) => e.isFile());
      const memory = () => ({ heapUsed: 0, heapLimit: 2 ** 40, rss: onDisk() ? 2 ** 40 : 0 });
      return parallelBfs(buildModel(spec.file, spec.raw), modelRecipe(spec), {
        deadlockAllowed: spec.deadlockAllowed,
        workers: 2,
        spillBytes: 4096,
        maxMemory: 512,
        memory,
      });
    });
    expect(value).toMatchObject({ status: 'incomplete', stoppedBy: 'maxMemory' });
    expect(left).toEqual([]);
  });
});

describe('the parallel search at --max-memory', () => {
  it('watches the memory while the workers are busy, and the stop flag first', async () => {
    let over = false;
    const watch = midLevelStop(undefined, () => (over ? 'maxMemory' : undefined));
    over = true;
    expect(await watch.promise).toEqual(new MidLevelStop('maxMemory'));
    watch.cancel();
    const flag = new Int32Array(new SharedArrayBuffer(4));
    flag[0] = 1;
    const both = midLevelStop(flag, () => 'maxMemory');
    expect(await both.promise).toEqual(new MidLevelStop('signal'));
    both.cancel();
  });

  it('stops cleanly, with the counts of the levels it merged, once the resident memory is past the limit', async () => {
    const spec = parseSpec('spec.json', loadSpecFile('specs/kafka/commit-abort.json').raw, '');
    const full = bfs(buildModel(spec.file, spec.raw), { deadlockAllowed: spec.deadlockAllowed });
    const memory = () => ({ heapUsed: 0, heapLimit: 2 ** 40, rss: 2 ** 30 });
    const result = await parallelBfs(buildModel(spec.file, spec.raw), modelRecipe(spec), {
      deadlockAllowed: spec.deadlockAllowed,
      workers: 2,
      maxMemory: 512,
      memory,
    });
    expect(result).toMatchObject({ status: 'incomplete', stoppedBy: 'maxMemory' });
    expect(result.distinctStates).toBeLessThan(full.distinctStates);
  });

  it('--max-seconds stops the search within the level under way, not at its end', async () => {
    // Twelve resource managers on two workers: the level under way at 6 s ends past 10 s.
    const raw = { model: 'two-phase', resourceManagers: 12 };
    const spec = parseSpec('tp12.json', raw, '');
    const result = await parallelBfs(buildModel(spec.file, raw), modelRecipe(spec), {
      deadlockAllowed: false,
      workers: 2,
      maxSeconds: 6,
    });
    expect(result).toMatchObject({ status: 'incomplete', stoppedBy: 'maxSeconds' });
    // A poll every 50 ms; the rest is room for a machine busy with other tests.
    expect(result.seconds).toBeLessThan(8);
  });

  it('stops cleanly before the machine runs out of memory, with no --max-memory', async () => {
    const spec = parseSpec('spec.json', loadSpecFile('specs/kafka/commit-abort.json').raw, '');
    const full = bfs(buildModel(spec.file, spec.raw), { deadlockAllowed: spec.deadlockAllowed });
    let looks = 0;
    // At the start the process holds 1 GB; from the next look on, more than the machine had free.
    const memory = () => ({
      heapUsed: 0,
      heapLimit: 2 ** 40,
      rss: 2 ** 30 + (looks++ === 0 ? 0 : freemem()),
    });
    const result = await parallelBfs(buildModel(spec.file, spec.raw), modelRecipe(spec), {
      deadlockAllowed: spec.deadlockAllowed,
      workers: 2,
      memory,
    });
    expect(result).toMatchObject({ status: 'incomplete', stoppedBy: 'maxMemory' });
    expect(result.distinctStates).toBeLessThan(full.distinctStates);
    expect(result.memory?.peakResidentBytes).toBeGreaterThan(0);
  });
});
