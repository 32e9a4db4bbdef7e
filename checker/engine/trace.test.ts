import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Model, asMap, asSet } from './model.ts';
import {
  REFEREE_AGREEMENT,
  firstDifference,
  initialStateOf,
  parseTrace,
  readTraceFile,
  replay,
  stateView,
  toItfValue,
  writeFileAtomic,
  writeTraceFile,
} from './trace.ts';

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
    expect(
      toItfValue({
        s: asSet(['b', 'a']),
        m: asMap({ k2: asSet([2 ** 60]), k1: 'x' }),
        l: [['b', 'a']],
        r: { k: 1 },
      }),
    ).toEqual({
      s: { '#set': ['b', 'a'] },
      m: {
        '#map': [
          ['k2', { '#set': [{ '#bigint': '1152921504606846976' }] }],
          ['k1', 'x'],
        ],
      },
      l: [['b', 'a']],
      r: { k: 1 },
    });
  });

  it('gives reports and replay the view with its sets as lists and its maps as records', () => {
    const marked = { view: () => ({ s: asSet(['a']), m: asMap({ k: asSet([1]) }) }) } as unknown as Model<
      unknown,
      unknown
    >;
    expect(JSON.stringify(stateView(marked, {}))).toBe('{"s":["a"],"m":{"k":[1]}}');
  });

  it('reads a trace written with sets and maps back as the states it recorded, whatever the order of a set', () => {
    const path = join(dir, 'sets.itf.json');
    const model = {
      view: (s: { n: number }) => ({ s: asSet(['a', 'b'].slice(0, s.n)), m: asMap({ k: s.n }) }),
    } as unknown as Model<unknown, unknown>;
    const states = [{ n: 0 }, { n: 2 }];
    writeTraceFile(path, model, { states, actions: ['add'] }, meta);
    const read = readTraceFile(path);
    expect(read.states[1]).toEqual({ s: { '#set': ['a', 'b'] }, m: { k: 2 } });
    read.states.forEach((recorded, i) =>
      expect(firstDifference(recorded, stateView(model, states[i]), '')).toBeUndefined(),
    );
    expect(
      firstDifference({ s: { '#set': ['b', 'a'] }, m: { k: 2 } }, stateView(model, states[1]), ''),
    ).toBeUndefined();
    expect(firstDifference({ s: { '#set': ['b'] }, m: { k: 2 } }, stateView(model, states[1]), '')).toBe(
      's: recorded {"#set":["b"]}, replayed ["a","b"]',
    );
  });

  it('refuses null, which ITF does not have', () => {
    expect(() => toItfValue({ a: [null] })).toThrow(/not plain data for ITF: null/);
  });
});

describe('firstDifference', () => {
  it('names the first differing field path', () => {
    expect(firstDifference({ a: { b: [1, 2] }, c: 1 }, { a: { b: [1, 3] }, c: 2 }, '')).toBe(
      'a.b[1]: recorded 2, replayed 3',
    );
    expect(firstDifference({ a: 1 }, { a: 1, b: 'x' }, '')).toBe('b: recorded nothing, replayed "x"');
    expect(firstDifference([1], [1, 2], 'l')).toBe('l: recorded [1], replayed [1,2]');
    expect(firstDifference({ a: 1 }, { a: 1 }, '')).toBeUndefined();
  });
});

// A counter that counts up to 3; Small fails at 2. Its traces are written, edited and replayed.
describe('replay and parsing on a counter', () => {
  type C = { readonly x: number };
  const counter: Model<C, string> = {
    init: () => [{ x: 0 }, { x: 10 }],
    actions: (s) => (s.x < 3 ? ['inc'] : s.x === 10 ? ['inc', 'dec'] : []),
    next: (s, a) => ({ x: a === 'inc' ? s.x + 1 : s.x - 1 }),
    label: (a) => a,
    kind: (a) => a,
    actionKinds: ['inc', 'dec'],
    invariants: [{ name: 'Small', description: 'x stays below 2', holds: (s) => s.x < 2 }],
  };
  const small = { ...meta, property: 'Small' };
  // The edits reach into a saved file's raw JSON, whatever its shape.
  /* eslint-disable @typescript-eslint/no-explicit-any */
  const written = (
    edit: (t: Record<string, any>) => void = () => {},
    trace = { states: [{ x: 0 }, { x: 1 }, { x: 2 }], actions: ['inc', 'inc'] },
    m: object = small,
  ) => {
    const path = join(dir, 'counter.itf.json');
    writeTraceFile(path, counter, trace, m as typeof meta);
    const raw = JSON.parse(readFileSync(path, 'utf8'));
    edit(raw);
    return parseTrace(path, raw);
  };
  const fails = (edit: (t: Record<string, any>) => void) => () => written(edit);
  /* eslint-enable @typescript-eslint/no-explicit-any */

  it('a trace run on a referee replays its steps alone, and keeps what the referee did at each', () => {
    const refereeMeta = {
      ...meta,
      property: REFEREE_AGREEMENT,
      referee: 'R 1.0',
      difference: { step: 1, what: 'x', model: '1', referee: '0' },
    };
    const path = join(dir, 'referee.itf.json');
    const trace = { states: [{ x: 0 }, { x: 1 }], actions: ['inc'] };
    writeTraceFile(path, counter, trace, refereeMeta, [undefined, 'answered 0']);
    const read = readTraceFile(path);
    expect(read.meta).toMatchObject({ referee: 'R 1.0', difference: refereeMeta.difference });
    expect(read.observed).toEqual([undefined, 'answered 0']);
    expect(replay(counter, read)).toMatchObject({
      reproduced: true,
      message:
        'all 1 steps replay as recorded; R 1.0 differed at step 1 (x), which only a run on it re-checks',
    });
    const raw = JSON.parse(readFileSync(path, 'utf8'));
    delete raw['#meta'].difference;
    expect(() => parseTrace(path, raw)).toThrow(
      /#meta\.difference: expected the step and field where the referee differs/,
    );
  });

  it('reproduces a violating trace from the initial state it starts at, with the model views', () => {
    const result = replay(counter, written());
    expect(result).toEqual({
      reproduced: true,
      message: 'all 2 steps replay as recorded and Small is violated in the last state',
      views: [{ x: 0 }, { x: 1 }, { x: 2 }],
    });
    const fromTen = replay(
      counter,
      written(() => {}, { states: [{ x: 10 }, { x: 9 }], actions: ['dec'] }),
    );
    expect(fromTen.reproduced).toBe(true);
    expect(
      initialStateOf(
        counter,
        written((t) => (t.states[0].x = 5)),
      ),
    ).toBeUndefined();
  });

  it('says where a trace stops replaying: no initial state, an action not enabled, a state that differs, a property that holds', () => {
    expect(
      replay(
        counter,
        written((t) => (t.states[0].x = 5)),
      ),
    ).toEqual({ reproduced: false, message: 'step 0: no initial state matches; x: recorded 5, replayed 0' });
    expect(
      replay(
        counter,
        written((t) => (t.states[2]['#meta'].action = 'dec')),
      ).message,
    ).toBe('step 2: action "dec" is not enabled (enabled: inc)');
    expect(
      replay(
        counter,
        written((t) => (t.states[2].x = 7)),
      ).message,
    ).toBe('step 2: x: recorded 7, replayed 2');
    const short = written((t) => t.states.pop());
    expect(replay(counter, short)).toEqual({
      reproduced: false,
      message: 'all 1 steps replay as recorded, but Small is no longer violated in the last state',
    });
    const stuck = written(
      () => {},
      { states: [{ x: 0 }, { x: 1 }, { x: 2 }, { x: 3 }], actions: ['inc', 'inc', 'inc'] },
      { ...meta, property: 'Deadlock' },
    );
    expect(replay(counter, stuck).reproduced).toBe(true);
    expect(
      replay(
        counter,
        written((t) => (t['#meta'].property = 'Deadlock')),
      ).reproduced,
    ).toBe(false);
  });

  it('refuses, naming the file and field, a trace of another property or other variables', () => {
    expect(() =>
      replay(
        counter,
        written((t) => (t['#meta'].property = 'Big')),
      ),
    ).toThrow(/counter\.itf\.json: #meta\.property: expected one of Small, Deadlock, got "Big"/);
    const renamed = written((t) => {
      t.vars = ['y'];
      for (const s of t.states) {
        s.y = s.x;
        delete s.x;
      }
    });
    expect(() => replay(counter, renamed)).toThrow(
      /counter\.itf\.json: vars: expected the variables of the spec's model \(x\), got y/,
    );
    expect(() =>
      replay(
        counter,
        written((t) => Object.assign(t, { loop: 1 }) && Object.assign(t['#meta'], { goal: 'G', trigger: 0 })),
      ),
    ).toThrow(/#meta\.property: expected a liveness property of the spec \(none in the spec\)/);
  });

  it('reads the meta fields back and refuses a file that is not a txcheck trace, one line naming the field', () => {
    const read = written((t) => Object.assign(t['#meta'], { seed: 7, walk: 3 }));
    expect(read.meta).toEqual({ ...small, seed: 7, walk: 3 });
    expect(read.actions).toEqual(['inc', 'inc']);
    expect(fails((t) => delete t['#meta'])).toThrow(/#meta: expected an ITF trace written by txcheck/);
    expect(fails((t) => (t['#meta'] = { source: 'apalache', spec: 'x' }))).toThrow(
      /#meta\.spec: expected an ITF trace written by txcheck, whose #meta records the spec that was checked \(this one says: "apalache"\)/,
    );
    expect(fails((t) => (t.states = []))).toThrow(/states: expected a non-empty list of states/);
    expect(fails((t) => (t.loop = 3))).toThrow(/loop: expected/);
    expect(fails((t) => delete t.states[1].x)).toThrow(
      /states\[1\]\.x: expected a value \(every state has the variables x\)/,
    );
    expect(fails((t) => delete t.states[1]['#meta'])).toThrow(
      /states\[1\]\.#meta: expected a JSON object with the action label/,
    );
    expect(fails((t) => (t.states[1] = 4))).toThrow(/states\[1\]: expected a JSON object/);
    expect(fails((t) => (t['#meta'].seed = -1))).toThrow(/#meta\.seed/);
    expect(fails((t) => (t.extra = 1))).toThrow(/extra/);
  });

  it('reads a lasso: its loop, goal and trigger', () => {
    const read = written((t) => {
      t.loop = 1;
      Object.assign(t['#meta'], { goal: 'G', trigger: 1, loopAction: 'inc' });
    });
    expect([read.loop, read.meta.goal, read.meta.trigger, read.meta.loopAction]).toEqual([1, 'G', 1, 'inc']);
    expect(
      fails((t) => Object.assign(t, { loop: 1 }) && Object.assign(t['#meta'], { goal: 'G', trigger: 2 })),
    ).toThrow(/#meta\.trigger/);
  });
});
