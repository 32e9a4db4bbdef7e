import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Model, asMap, asSet } from './model.ts';
import { firstDifference, readTraceFile, stateView, toItfValue, writeFileAtomic, writeTraceFile } from './trace.ts';

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

  it('writes a list the view marks as a set as {"#set"} and a record marked as a map as {"#map"}, in the order of the view', () => {
    expect(toItfValue({ s: asSet(['b', 'a']), m: asMap({ k2: asSet([2 ** 60]), k1: 'x' }), l: [['b', 'a']], r: { k: 1 } })).toEqual({
      s: { '#set': ['b', 'a'] },
      m: { '#map': [['k2', { '#set': [{ '#bigint': '1152921504606846976' }] }], ['k1', 'x']] },
      l: [['b', 'a']],
      r: { k: 1 },
    });
  });

  it('gives reports and replay the view with its sets as lists and its maps as records', () => {
    const marked = { view: () => ({ s: asSet(['a']), m: asMap({ k: asSet([1]) }) }) } as unknown as Model<unknown, unknown>;
    expect(JSON.stringify(stateView(marked, {}))).toBe('{"s":["a"],"m":{"k":[1]}}');
  });

  it('reads a trace written with sets and maps back as the states it recorded, whatever the order of a set', () => {
    const path = join(dir, 'sets.itf.json');
    const model = { view: (s: { n: number }) => ({ s: asSet(['a', 'b'].slice(0, s.n)), m: asMap({ k: s.n }) }) } as unknown as Model<unknown, unknown>;
    const states = [{ n: 0 }, { n: 2 }];
    writeTraceFile(path, model, { states, actions: ['add'] }, meta);
    const read = readTraceFile(path);
    expect(read.states[1]).toEqual({ s: { '#set': ['a', 'b'] }, m: { k: 2 } });
    read.states.forEach((recorded, i) => expect(firstDifference(recorded, stateView(model, states[i]), '')).toBeUndefined());
    expect(firstDifference({ s: { '#set': ['b', 'a'] }, m: { k: 2 } }, stateView(model, states[1]), '')).toBeUndefined();
    expect(firstDifference({ s: { '#set': ['b'] }, m: { k: 2 } }, stateView(model, states[1]), '')).toBe('s: recorded {"#set":["b"]}, replayed ["a","b"]');
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
