import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Model } from './model.ts';
import { firstDifference, toItfValue, writeFileAtomic, writeTraceFile } from './trace.ts';

const dir = mkdtempSync(join(tmpdir(), 'txcheck-trace-'));

const meta = { spec: { model: 'm' }, specFile: 'm.json', strategy: 'bfs', property: 'P', description: 'd' };

/** A model whose states are whatever the test puts in the trace. */
const passThrough = { view: undefined } as unknown as Model<unknown, unknown>;

describe('atomic trace writing', () => {
  it('leaves the previous file intact when encoding the trace fails', () => {
    const path = join(dir, 'encode.itf.json');
    writeFileSync(path, 'previous');
    const badTrace = { states: [{ x: 1 }, { x: () => 2 }], actions: ['a'] };
    expect(() => writeTraceFile(path, passThrough, badTrace, meta)).toThrow(/not plain data/);
    expect(readFileSync(path, 'utf8')).toBe('previous');
  });

  it('leaves the previous file intact when writing the new one fails, and cleans up', () => {
    const path = join(dir, 'blocked.itf.json');
    writeFileSync(path, 'previous');
    // A directory where the temporary file would go makes the write itself fail.
    mkdirSync(join(dirname(path), `.${basename(path)}.${process.pid}.tmp`));
    expect(() => writeFileAtomic(path, 'new content')).toThrow();
    expect(readFileSync(path, 'utf8')).toBe('previous');
  });

  it('replaces the file and leaves no temporary file behind', () => {
    const path = join(dir, 'ok.itf.json');
    writeFileSync(path, 'previous');
    writeTraceFile(path, passThrough, { states: [{ x: 1 }, { x: 2 }], actions: ['inc'] }, meta);
    const trace = JSON.parse(readFileSync(path, 'utf8'));
    expect(trace.vars).toEqual(['x']);
    expect(trace.states).toEqual([
      { '#meta': { index: 0 }, x: 1 },
      { '#meta': { index: 1, action: 'inc' }, x: 2 },
    ]);
    expect(readdirSync(dir).filter((f) => f.startsWith('.ok.itf.json'))).toEqual([]);
    expect(existsSync(path)).toBe(true);
  });
});

describe('ITF values', () => {
  it('writes integers beyond 2^53 as #bigint and keeps the rest as JSON', () => {
    expect(toItfValue({ big: 2 ** 60, n: -3, s: 'x', l: [true, 'y'] })).toEqual({
      big: { '#bigint': '1152921504606846976' },
      n: -3,
      s: 'x',
      l: [true, 'y'],
    });
  });

  it('refuses null, which ITF does not have', () => {
    expect(() => toItfValue({ a: [null] })).toThrow(/not plain data for ITF: null/);
  });
});

describe('firstDifference', () => {
  it('names the first differing field path', () => {
    expect(firstDifference({ a: { b: [1, 2] }, c: 1 }, { a: { b: [1, 3] }, c: 2 }, '')).toBe('a.b[1]: recorded 2, replayed 3');
    expect(firstDifference({ a: 1 }, { a: 1, b: 'x' }, '')).toBe('b: recorded nothing, replayed "x"');
    expect(firstDifference([1], [1, 2], 'l')).toBe('l: recorded [1], replayed [1,2]');
    expect(firstDifference({ a: 1 }, { a: 1 }, '')).toBeUndefined();
  });
});
