import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { modelOf } from '../../specs/build.ts';
import { loadSpecFile } from '../../specs/load.ts';
import { bfs } from './bfs.ts';
import { type CheckpointCounters, readCheckpoint, writeCheckpoint } from './checkpoint.ts';
import type { Model } from './model.ts';
import type { Result, SearchOptions } from './search.ts';

const dir = mkdtempSync(join(tmpdir(), 'txcheck-checkpoint-'));
const identity = 'the test search';

/** What a resumed search must give exactly as the uninterrupted one (time aside). */
function outcome(r: Result) {
  return {
    status: r.status,
    distinctStates: r.distinctStates,
    statesGenerated: r.statesGenerated,
    depth: r.depth,
    coverage: r.coverage,
    stoppedBy: r.stoppedBy,
    property: r.violation?.property,
    trace: r.violation?.trace.actions,
    reducedStates: r.reducedStates,
  };
}

/**
 * Runs `model` to the end, stopped by a signal after every `stopEvery` progress reports and
 * resumed from its checkpoint each time; returns the last result and how many runs it took.
 */
function interrupted(model: Model<unknown, unknown>, base: SearchOptions, file: string, stopEvery: number): { result: Result; runs: number } {
  let resume: SearchOptions['resume'];
  for (let runs = 1; ; runs++) {
    const stop = new Int32Array(1);
    let reports = 0;
    const result = bfs(model, {
      ...base,
      stop,
      progressEveryMs: 0,
      onProgress: () => void (++reports === stopEvery && (stop[0] = 1)),
      checkpoint: { file, everySeconds: 3600, identity },
      ...(resume === undefined ? {} : { resume }),
    });
    // A stop asked for in a progress report is taken at once (a violation already found is reported then).
    if (stop[0] === 0) return { result, runs };
    resume = { file, identity };
  }
}

const cases: [string, SearchOptions][] = [
  ['specs/two-phase/tp5.json', { deadlockAllowed: true }],
  ['specs/kafka/stale-end-txn.json', { deadlockAllowed: true }],
  ['specs/kafka/commit-abort.json', { deadlockAllowed: true }],
  ['specs/kafka/commit-abort.json', { deadlockAllowed: true, reduction: true }],
  ['specs/kafka/lossy-network.json', { deadlockAllowed: true, maxDepth: 14 }],
];

describe('checkpoint and resume', () => {
  it.each(cases)('%s %j: stopped and resumed again and again, the counts, verdict and trace of one uninterrupted run', (specFile, base) => {
    const spec = loadSpecFile(specFile);
    const model = modelOf(spec);
    const whole = bfs(model, base);
    const file = join(dir, `${spec.name}-${Object.keys(base).join('-')}.ckpt`);
    const { result, runs } = interrupted(model, base, file, 2);
    expect(runs).toBeGreaterThan(2);
    expect(outcome(result)).toEqual(outcome(whole));
  });

  it('writes on its schedule, and a checkpoint taken mid-run resumes to the same end', () => {
    const model = modelOf(loadSpecFile('specs/kafka/commit-abort.json'));
    const whole = bfs(model, { deadlockAllowed: true });
    const file = join(dir, 'scheduled.ckpt');
    const early = join(dir, 'early.ckpt');
    let clock = 0;
    let saves = 0;
    bfs(model, {
      deadlockAllowed: true,
      now: () => (clock += 400),
      progressEveryMs: 0,
      // Each report follows the clock's look at the schedule: keep the first checkpoint aside.
      onProgress: () => {
        if (existsSync(file) && saves++ === 0) copyFileSync(file, early);
      },
      checkpoint: { file, everySeconds: 1, identity },
    });
    expect(saves).toBeGreaterThan(1);
    expect(readCheckpoint(early).counters.distinctStates).toBeLessThan(whole.distinctStates);
    const resumed = bfs(model, { deadlockAllowed: true, resume: { file: early, identity } });
    expect(outcome(resumed)).toEqual(outcome(whole));
    // The time of the runs before the checkpoint counts (it was taken on the simulated clock, seconds in).
    const before = readCheckpoint(early).counters.seconds;
    expect(before).toBeGreaterThanOrEqual(1);
    expect(resumed.seconds).toBeGreaterThanOrEqual(before);
    // Only the checkpoint itself is left: no temporary file.
    expect(readdirSync(dir).filter((f) => f.includes('.tmp'))).toEqual([]);
  });

  it('refuses a checkpoint of another search, a truncated one and a file of another kind, naming the file', () => {
    const model = modelOf(loadSpecFile('specs/kafka/commit-abort.json'));
    const file = join(dir, 'refused.ckpt');
    interrupted(model, { deadlockAllowed: true }, file, 1);
    expect(() => bfs(model, { deadlockAllowed: true, resume: { file, identity: 'another search' } })).toThrow(`${file}: identity: expected a checkpoint of this spec with these options, got one of another search`);
    const truncated = join(dir, 'truncated.ckpt');
    writeFileSync(truncated, readFileSync(file).subarray(0, 1000));
    expect(() => bfs(model, { deadlockAllowed: true, resume: { file: truncated, identity } })).toThrow(/truncated\.ckpt: .*expected a checkpoint file written by --checkpoint, got a file of \d+ bytes where its header promises \d+/);
    const foreign = join(dir, 'foreign.ckpt');
    writeFileSync(foreign, '{"not": "a checkpoint"}');
    expect(() => bfs(model, { deadlockAllowed: true, resume: { file: foreign, identity } })).toThrow(/foreign\.ckpt: \(top level\): expected a checkpoint file written by --checkpoint, got a file of another kind/);
    expect(() => bfs(model, { deadlockAllowed: true, resume: { file: join(dir, 'missing.ckpt'), identity } })).toThrow(/missing\.ckpt: .*got an unreadable file \(ENOENT\)/);
    // A header edited by hand: each counter of another type, or one missing.
    const saved = readCheckpoint(file);
    const edited = join(dir, 'edited.ckpt');
    for (const counters of [{ depth: 'deep' }, { coverage: [1, -1] }, { found: { property: 3, id: 0 } }, { overLimit: undefined }, { seconds: -1 }]) {
      writeCheckpoint(edited, { ...saved, counters: { ...saved.counters, ...counters } as unknown as CheckpointCounters });
      expect(() => readCheckpoint(edited), JSON.stringify(counters)).toThrow(/edited\.ckpt: counters: expected a checkpoint file written by --checkpoint, got a damaged header/);
    }
    expect(readCheckpoint(file).counters).toEqual(saved.counters);
  });
});

describe('levels spilled to disk', () => {
  const frontierFolders = () => readdirSync(tmpdir()).filter((f) => f.startsWith('txcheck-frontier-')).length;

  it.each([
    ['specs/kafka/commit-abort.json', { deadlockAllowed: true }],
    ['specs/kafka/stale-end-txn.json', { deadlockAllowed: true }],
    ['specs/two-phase/tp5.json', { deadlockAllowed: true }],
  ] as [string, SearchOptions][])('%s: the counts, verdict and trace of a search in memory, and no file left', (specFile, base) => {
    const model = modelOf(loadSpecFile(specFile));
    const before = frontierFolders();
    const inMemory = bfs(model, base);
    const spilled = bfs(model, { ...base, spillBytes: 4096 });
    expect(outcome(spilled)).toEqual(outcome(inMemory));
    expect(spilled.memory!.spilledBytes).toBeGreaterThan(4096);
    expect(spilled.memory!.queueBytes).toBeLessThan(inMemory.memory!.queueBytes!);
    expect(frontierFolders()).toBe(before);
  });

  it('saves spilled levels in a checkpoint and resumes into spilled levels', () => {
    const model = modelOf(loadSpecFile('specs/kafka/commit-abort.json'));
    const whole = bfs(model, { deadlockAllowed: true });
    const { result, runs } = interrupted(model, { deadlockAllowed: true, spillBytes: 2048 }, join(dir, 'spilled.ckpt'), 2);
    expect(runs).toBeGreaterThan(2);
    expect(outcome(result)).toEqual(outcome(whole));
  });
});
