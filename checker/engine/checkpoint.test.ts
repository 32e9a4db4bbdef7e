import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
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
function interrupted(
  model: Model<unknown, unknown>,
  base: SearchOptions,
  file: string,
  stopEvery: number,
  id = identity,
): { result: Result; runs: number } {
  let resume: SearchOptions['resume'];
  for (let runs = 1; ; runs++) {
    const stop = new Int32Array(1);
    let reports = 0;
    const result = bfs(model, {
      ...base,
      stop,
      progressEveryMs: 0,
      onProgress: () => void (++reports === stopEvery && (stop[0] = 1)),
      checkpoint: { file, everySeconds: 3600, identity: id },
      ...(resume === undefined ? {} : { resume }),
    });
    // A stop asked for in a progress report is taken at once (a violation already found is reported then).
    if (stop[0] === 0) return { result, runs };
    resume = { file, identity: id };
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
  it.each(cases)(
    '%s %j: stopped and resumed again and again, the counts, verdict and trace of one uninterrupted run',
    (specFile, base) => {
      const spec = loadSpecFile(specFile);
      const model = modelOf(spec);
      const whole = bfs(model, base);
      const file = join(dir, `${spec.name}-${Object.keys(base).join('-')}.ckpt`);
      const { result, runs } = interrupted(model, base, file, 2);
      expect(runs).toBeGreaterThan(2);
      expect(outcome(result)).toEqual(outcome(whole));
    },
  );

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
    expect(() => bfs(model, { deadlockAllowed: true, resume: { file, identity: 'another search' } })).toThrow(
      `${file}: identity: expected a checkpoint of this spec with these options, got one of another search`,
    );
    const truncated = join(dir, 'truncated.ckpt');
    const whole = readFileSync(file);
    // Cut 1000 bytes into its sections, past the header.
    writeFileSync(truncated, whole.subarray(0, 4 + whole.readUInt32LE(0) + 1000));
    expect(() => bfs(model, { deadlockAllowed: true, resume: { file: truncated, identity } })).toThrow(
      /truncated\.ckpt: .*expected a checkpoint file written by --checkpoint, got a file of \d+ bytes where its header promises \d+/,
    );
    const foreign = join(dir, 'foreign.ckpt');
    writeFileSync(foreign, '{"not": "a checkpoint"}');
    expect(() => bfs(model, { deadlockAllowed: true, resume: { file: foreign, identity } })).toThrow(
      /foreign\.ckpt: \(top level\): expected a checkpoint file written by --checkpoint, got a file of another kind/,
    );
    expect(() =>
      bfs(model, { deadlockAllowed: true, resume: { file: join(dir, 'missing.ckpt'), identity } }),
    ).toThrow(/missing\.ckpt: .*got an unreadable file \(ENOENT\)/);
    // A header edited by hand: each counter of another type, or one missing.
    const saved = readCheckpoint(file);
    const edited = join(dir, 'edited.ckpt');
    for (const counters of [
      { depth: 'deep' },
      { coverage: [1, -1] },
      { found: { property: 3, id: 0 } },
      { overLimit: undefined },
      { seconds: -1 },
    ]) {
      writeCheckpoint(edited, {
        ...saved,
        counters: { ...saved.counters, ...counters } as unknown as CheckpointCounters,
      });
      expect(() => readCheckpoint(edited), JSON.stringify(counters)).toThrow(
        /edited\.ckpt: counters: expected a checkpoint file written by --checkpoint, got a damaged header/,
      );
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
  ] as [string, SearchOptions][])(
    '%s: the counts, verdict and trace of a search in memory, and no file left',
    (specFile, base) => {
      const model = modelOf(loadSpecFile(specFile));
      const before = frontierFolders();
      const inMemory = bfs(model, base);
      const spilled = bfs(model, { ...base, spillBytes: 4096 });
      expect(outcome(spilled)).toEqual(outcome(inMemory));
      expect(spilled.memory!.spilledBytes).toBeGreaterThan(4096);
      expect(spilled.memory!.queueBytes).toBeLessThan(inMemory.memory!.queueBytes!);
      expect(frontierFolders()).toBe(before);
    },
  );

  it('saves spilled levels in a checkpoint and resumes into spilled levels', () => {
    const model = modelOf(loadSpecFile('specs/kafka/commit-abort.json'));
    const whole = bfs(model, { deadlockAllowed: true });
    const { result, runs } = interrupted(
      model,
      { deadlockAllowed: true, spillBytes: 2048 },
      join(dir, 'spilled.ckpt'),
      2,
    );
    expect(runs).toBeGreaterThan(2);
    expect(outcome(result)).toEqual(outcome(whole));
  });
});

// A small checkpoint written directly, then read back whole, cut or with its header edited.
describe('the checkpoint file', () => {
  const counters: CheckpointCounters = {
    distinctStates: 3,
    statesGenerated: 4,
    depth: 1,
    levelStartId: 1,
    nextIndex: 0,
    queueBytes: 8,
    seconds: 0,
    coverage: [2, 0],
    found: null,
    overLimit: false,
    cutOffByDepth: false,
    reducedStates: 0,
  };
  const words = (...n: number[]) => Int32Array.from(n);
  const small = (id: string) => ({
    identity: id,
    counters,
    visited: words(1, 2, 3, 4),
    parents: words(-1, 0, 0),
    actions: words(0, 0, 1),
    levelWords: words(7),
    levelEnds: words(1),
    nextWords: words(8, 9),
    nextEnds: words(1, 2),
    nextLevelSeen: words(),
    nextLevelSeenCount: 0,
  });
  const file = join(dir, 'small.ckpt');
  // The file's first line, after its 4-byte header size.
  const magic = 'TXCHECK-CHECKPOINT\n';
  const refused = (bytes: Uint8Array) => {
    writeFileSync(file, bytes);
    return () => readCheckpoint(file);
  };
  /** The file with its JSON header edited (the magic line, the size, the header's sha256 and the padding written anew). */
  const withHeader = (edit: (h: Record<string, unknown>) => void): Buffer => {
    writeCheckpoint(file, small('x'));
    const bytes = readFileSync(file);
    const size = bytes.readUInt32LE(0);
    const header = JSON.parse(
      bytes
        .subarray(4 + magic.length, 4 + size)
        .toString('utf8')
        .split('\n')[0]!,
    );
    edit(header);
    const json = JSON.stringify(header);
    let text = `${magic}${json}\nsha256 ${createHash('sha256').update(json).digest('hex')}\n`;
    text += ' '.repeat((4 - ((text.length + 4) % 4)) % 4);
    const prefix = Buffer.alloc(4);
    prefix.writeUInt32LE(text.length);
    return Buffer.concat([prefix, Buffer.from(text), bytes.subarray(4 + size)]);
  };

  it('reads back what it wrote, whatever the length of its header (and so of its padding)', () => {
    for (const id of ['a', 'ab', 'abc', 'abcd']) {
      writeCheckpoint(file, small(id));
      const read = readCheckpoint(file);
      expect(read).toEqual(small(id));
    }
  });

  it('refuses a file cut inside its header, or where its sections should start, naming what is wrong', () => {
    writeCheckpoint(file, small('x'));
    const whole = readFileSync(file);
    const size = whole.readUInt32LE(0);
    const prefix = (n: number) => whole.subarray(0, n);
    expect(refused(prefix(4 + magic.length))).toThrow(
      `${file}: header: expected a checkpoint file written by --checkpoint, got a truncated file`,
    );
    expect(refused(prefix(4 + magic.length - 1))).toThrow(
      `${file}: (top level): expected a checkpoint file written by --checkpoint, got a file of another kind`,
    );
    expect(refused(prefix(size + 3))).toThrow(/header: expected .*, got a truncated file/);
    expect(refused(prefix(size + 4))).toThrow(
      `${file}: (top level): expected a checkpoint file written by --checkpoint, got a file of ${size + 4} bytes where its header promises ${whole.length}`,
    );
  });

  it('refuses a header that is not JSON, of another version, or with damaged lengths or counters', () => {
    const damaged = withHeader(() => {});
    damaged.write('x', 4 + magic.length);
    expect(refused(damaged)).toThrow(
      `${file}: header: expected a checkpoint file written by --checkpoint, got a damaged header`,
    );
    expect(refused(withHeader((h) => (h.version = 3)))).toThrow(
      `${file}: version: expected a checkpoint file written by --checkpoint, got version 3 (this txcheck reads version 2)`,
    );
    expect(refused(withHeader((h) => (h.version = 1)))).toThrow(
      `${file}: version: expected a checkpoint file written by --checkpoint, got version 1, written by an older txcheck (this one reads version 2; run the search again from the start)`,
    );
    for (const lengths of [
      [4, 3, 3, 1, 1, 2, 2],
      [4, 3, 3, 1, 1, 2, 2, -0.5],
      [4, 3, 3, 1, 1, 2, 2, -1],
      'none',
    ]) {
      expect(refused(withHeader((h) => (h.lengths = lengths))), JSON.stringify(lengths)).toThrow(
        `${file}: lengths: expected a checkpoint file written by --checkpoint, got a damaged header`,
      );
    }
    for (const edit of [
      { counters: null },
      { counters: 'none' },
      { counters: { ...counters, cutOffByDepth: 1 } },
      { counters: { ...counters, seconds: '1' } },
      { nextLevelSeenCount: -1 },
    ]) {
      expect(refused(withHeader((h) => Object.assign(h, edit))), JSON.stringify(edit)).toThrow(
        `${file}: counters: expected a checkpoint file written by --checkpoint, got a damaged header`,
      );
    }
    expect(refused(withHeader((h) => (h.sha256 = 'none')))).toThrow(
      `${file}: sha256: expected a checkpoint file written by --checkpoint, got a damaged header`,
    );
    // Edited and summed again: the counters must still agree with the sections.
    for (const [edit, field] of [
      [{ distinctStates: 4 }, 'distinctStates'],
      [{ nextIndex: 2 }, 'nextIndex'],
      [{ levelStartId: 3 }, 'levelStartId'],
      [{ found: { property: 'Deadlock', id: 3 } }, 'found'],
    ] as const) {
      expect(refused(withHeader((h) => (h.counters = { ...counters, ...edit }))), field).toThrow(
        new RegExp(`^${file}: counters\\.${field}: expected a checkpoint file written by --checkpoint, got `),
      );
    }
    const found = { ...counters, found: { property: 'Deadlock', id: 2 } };
    expect(refused(withHeader((h) => (h.counters = found)))().counters).toEqual(found);
  });
});

// A checkpoint damaged or edited after it was written, or a path that is not a regular file.
describe('a checkpoint that cannot be trusted', () => {
  const model = modelOf(loadSpecFile('specs/kafka/commit-abort.json'));
  const file = join(dir, 'trusted.ckpt');
  const copy = join(dir, 'untrusted.ckpt');
  const resume =
    (path: string, id = identity) =>
    () =>
      bfs(model, { deadlockAllowed: true, resume: { file: path, identity: id } });
  const written = () => {
    if (!existsSync(file)) interrupted(model, { deadlockAllowed: true }, file, 1);
    return readFileSync(file);
  };

  it('refuses a header field edited by hand (nextIndex), naming the header', () => {
    const bytes = written();
    const { nextIndex } = readCheckpoint(file).counters;
    const text = bytes.toString('latin1');
    const edited = text.replace(`"nextIndex":${nextIndex},`, `"nextIndex":${nextIndex + 1},`);
    expect(edited).not.toBe(text);
    writeFileSync(copy, Buffer.from(edited, 'latin1'));
    expect(resume(copy)).toThrow(
      `${copy}: header: expected a checkpoint file written by --checkpoint, got a header that does not match its sha256 (edited or damaged)`,
    );
  });

  it('refuses flipped bytes in any section, naming the section', () => {
    const bytes = written();
    const saved = readCheckpoint(file);
    const lengths = [
      saved.visited,
      saved.parents,
      saved.actions,
      saved.levelWords,
      saved.levelEnds,
      saved.nextWords,
      saved.nextEnds,
    ].map((s) => s.length);
    const names = ['visited', 'parents', 'actions', 'levelWords', 'levelEnds', 'nextWords', 'nextEnds'];
    let start = bytes.length - 4 * (lengths.reduce((a, b) => a + b, 0) + saved.nextLevelSeen.length);
    lengths.forEach((length, k) => {
      if (length > 0) {
        const flipped = Buffer.from(bytes);
        flipped[start + 4 * Math.floor(length / 2)]! ^= 0x10;
        writeFileSync(copy, flipped);
        expect(resume(copy), names[k]).toThrow(
          `${copy}: ${names[k]}: expected a checkpoint file written by --checkpoint, got bytes that do not match their sha256 (a damaged file)`,
        );
      }
      start += 4 * length;
    });
  });

  it('refuses a FIFO, a directory and a device at once, as not regular files', () => {
    written();
    const fifo = join(dir, 'fifo.ckpt');
    if (!existsSync(fifo)) execFileSync('mkfifo', [fifo]);
    for (const [path, kind] of [
      [fifo, 'a FIFO'],
      [dir, 'a directory'],
      ['/dev/zero', 'a device'],
    ]) {
      expect(resume(path!), path).toThrow(
        `${path}: (top level): expected a checkpoint file written by --checkpoint, got ${kind}, not a regular file`,
      );
    }
  });

  it('says which field of the search differs when a checkpoint is of another search', () => {
    written();
    const ours = JSON.stringify({ tool: 'txcheck 1', spec: { partitions: 2, name: 'x' }, maxDepth: null });
    const theirs = JSON.stringify({ tool: 'txcheck 1', spec: { partitions: 3, name: 'x' }, maxDepth: 9 });
    interrupted(model, { deadlockAllowed: true }, copy, 1, theirs);
    expect(resume(copy, ours)).toThrow(
      `${copy}: identity: expected a checkpoint of this spec with these options, got one of another search (spec.partitions: 3 in the checkpoint, 2 here; maxDepth: 9 in the checkpoint, null here)`,
    );
  });
});
