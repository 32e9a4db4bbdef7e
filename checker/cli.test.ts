import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { beforeAll, describe, expect, it } from 'vitest';
import { internalErrorLine, main } from './cli.ts';
import { readCounts } from './counts.ts';

const dir = mkdtempSync(join(tmpdir(), 'txcheck-cli-'));
const tp3 = 'specs/two-phase/tp3.json';
const kafkaBench = 'specs/kafka/bench.json';
const mutant = 'specs/two-phase/tp3-commit-early.json';

/** Runs the CLI; a check searches in this thread unless the test names its workers, so no result depends on the machine's cores. */
async function txcheck(...argv: string[]) {
  let out = '';
  let err = '';
  const args = argv[0] === 'check' && !argv.includes('--workers') ? [...argv, '--workers', '1'] : argv;
  const code = await main(args, { out: (t) => (out += t), err: (t) => (err += t), errIsTTY: false });
  return { code, out, err };
}

function file(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

describe('txcheck --help', () => {
  const reference = readFileSync('docs/reference/cli.md', 'utf8');

  it("names every command and option of the CLI reference's usage, and the other way round", async () => {
    const usage = /## Usage\n\n```\n([^`]*)```/.exec(reference)![1]!;
    const { code, out } = await txcheck('--help');
    expect(code).toBe(0);
    const commands = (text: string) => new Set([...text.matchAll(/^ *txcheck ([a-z-]+)/gm)].map((m) => m[1]));
    expect(commands(out)).toEqual(commands(usage));
    for (const [option] of usage.matchAll(/(?<![\w-])--?[a-z][\w-]*/g)) expect(out).toContain(option);
    expect(reference).toMatch(/Every command also takes `--debug`/);
    expect(out).toMatch(/^ +--debug /m);
  });

  it("gives every exit code of the CLI reference's table", async () => {
    const table = /## Exit codes\n\n((?:\|.*\n)+)/.exec(reference)![1]!;
    const codes = [...table.matchAll(/^\| (\d) \|/gm)].map((m) => m[1]);
    const { out } = await txcheck('--help');
    expect(codes).toEqual(['0', '1', '2', '3', '4']);
    expect([...out.matchAll(/^ {2}(\d) {2}/gm)].map((m) => m[1])).toEqual(codes);
  });
});

describe('txcheck check', () => {
  it('proves TwoPhase with 3 RMs: exit 0, 288 distinct, 1,146 generated', async () => {
    const { code, out } = await txcheck('check', tp3, '--json');
    expect(code).toBe(0);
    const summary = JSON.parse(out);
    expect(summary).toMatchObject({ status: 'ok', distinctStates: 288, statesGenerated: 1146, depth: 10 });
    expect(summary.coverage.neverFired).toEqual([]);
    expect(out.trim().split('\n')).toHaveLength(1);
  });

  it('prints a readable summary with counts, coverage and the result', async () => {
    const { code, out } = await txcheck('check', tp3);
    expect(code).toBe(0);
    expect(out).toContain('288 distinct states, 1,146 states generated, depth 10');
    expect(out).toMatch(/TMCommit\s+1\n/);
    expect(out).toContain('never fired: none');
    expect(out).toContain('Result: ok.');
  });

  it('exits 3 with status incomplete when a limit stops the search', async () => {
    const { code, out } = await txcheck('check', tp3, '--max-states', '100', '--json');
    expect(code).toBe(3);
    expect(JSON.parse(out)).toMatchObject({
      status: 'incomplete',
      stoppedBy: 'maxStates',
      distinctStates: 100,
    });
    const text = await txcheck('check', tp3, '--max-depth', '2');
    expect(text.code).toBe(3);
    expect(text.out).toContain('Result: incomplete. Stopped at maxDepth (2)');
    expect(text.out).not.toContain('hold');
  });

  it('exits 3 with status incomplete, and the memory it covered, when --max-memory stops the search', async () => {
    // Any process is above 1 MB resident: the search stops at its first look, on one thread or on workers.
    for (const workers of ['1', '2']) {
      const { code, out } = await txcheck(
        'check',
        kafkaBench,
        '--max-memory',
        '1',
        '--workers',
        workers,
        '--json',
      );
      expect(code).toBe(3);
      const json = JSON.parse(out);
      expect(json).toMatchObject({ status: 'incomplete', stoppedBy: 'maxMemory' });
      expect(json.distinctStates).toBeGreaterThan(0);
    }
    const text = await txcheck('check', kafkaBench, '--max-memory', '1', '--workers', '1');
    expect(text.code).toBe(3);
    expect(text.out).toContain(
      'Result: incomplete. Stopped at maxMemory (1 MB resident, or 85 % of the heap)',
    );
  });
});

describe('the out folder', () => {
  const tsx = join(process.cwd(), 'node_modules/.bin/tsx');
  const cli = join(process.cwd(), 'checker/cli.ts');
  /** txcheck run from an empty folder of its own, as a new user runs it anywhere. */
  const elsewhere = (...argv: string[]) => {
    const cwd = mkdtempSync(join(tmpdir(), 'txcheck-cwd-'));
    const run = spawnSync(tsx, [cli, ...argv], { cwd, encoding: 'utf8' });
    return { ...run, cwd, entries: readdirSync(cwd, { recursive: true, encoding: 'utf8' }).sort() };
  };

  it('is not made by a run that writes nothing', () => {
    const run = elsewhere('check', join(process.cwd(), tp3), '--workers', '1');
    expect(run.status).toBe(0);
    expect(run.entries).toEqual([]);
  });

  it('is made when a counterexample or a report is written there', () => {
    const check = elsewhere('check', join(process.cwd(), mutant), '--workers', '1');
    expect(check.status).toBe(1);
    expect(check.entries).toEqual(['out', 'out/tp3-commit-early.TCConsistent.itf.json']);
    const trace = join(process.cwd(), 'traces/kafka-3.5-hanging-transaction.itf.json');
    const report = elsewhere('report', trace);
    expect(report.status).toBe(0);
    expect(report.entries).toEqual(['out', 'out/kafka-3.5-hanging-transaction.html']);
  });

  it('is refused before the search when out is a file', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'txcheck-cwd-'));
    writeFileSync(join(cwd, 'out'), '');
    const run = spawnSync(tsx, [cli, 'check', join(process.cwd(), mutant), '--workers', '1'], {
      cwd,
      encoding: 'utf8',
    });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      'out/tp3-commit-early.*.itf.json: --out: expected a new name in an existing folder, got out, which is a file\n',
    );
  });
});

describe('the commit-early mutant', () => {
  const traceFile = join(dir, 'mutant.itf.json');
  beforeAll(async () => {
    await txcheck('check', mutant, '--out', traceFile);
  });

  it('exits 1 with the shortest counterexample, written where --out says', async () => {
    const { code, out } = await txcheck('check', mutant, '--out', traceFile, '--json');
    expect(code).toBe(1);
    expect(JSON.parse(out).violation).toEqual({ property: 'TCConsistent', length: 3, traceFile });
    const trace = JSON.parse(readFileSync(traceFile, 'utf8'));
    expect(trace.states.map((s: { '#meta': { action?: string } }) => s['#meta'].action)).toEqual([
      undefined,
      'TMCommit',
      'RMChooseToAbort(rm1)',
      'RMRcvCommitMsg(rm2)',
    ]);
    expect(trace['#meta']).toMatchObject({
      property: 'TCConsistent',
      strategy: 'bfs',
      specFile: mutant,
      tool: 'txcheck 0.1.0',
    });
    expect(trace['#meta'].spec).toEqual(JSON.parse(readFileSync(mutant, 'utf8')));
    expect(trace.vars).toEqual(['rmState', 'tmState', 'tmPrepared', 'msgs']);
  });

  it('replays: exit 0, the violation shows again', async () => {
    const { code, out } = await txcheck('replay', traceFile);
    expect(code).toBe(0);
    expect(out).toContain('Reproduced: all 3 steps replay as recorded and TCConsistent is violated');
  });

  it('a tampered state is reported as its step and field path, exit 1', async () => {
    const trace = JSON.parse(readFileSync(traceFile, 'utf8'));
    trace.states[2].rmState['#map'].find(([rm]: [string]) => rm === 'rm1')[1] = 'prepared';
    const { code, out } = await txcheck('replay', file('tampered.itf.json', trace), '--json');
    expect(code).toBe(1);
    expect(JSON.parse(out)).toMatchObject({
      status: 'diverged',
      message: 'step 2: rmState.rm1: recorded "prepared", replayed "aborted"',
    });
  });

  it('an action that is not enabled is reported, exit 1', async () => {
    const trace = JSON.parse(readFileSync(traceFile, 'utf8'));
    trace.states[1]['#meta'].action = 'RMRcvAbortMsg(rm1)';
    const { code, out } = await txcheck('replay', file('wrong-action.itf.json', trace));
    expect(code).toBe(1);
    expect(out).toContain('step 1: action "RMRcvAbortMsg(rm1)" is not enabled');
  });

  it('a trace that stops before the violation replays but exits 1', async () => {
    const trace = JSON.parse(readFileSync(traceFile, 'utf8'));
    trace.states.pop();
    const { code, out } = await txcheck('replay', file('short.itf.json', trace));
    expect(code).toBe(1);
    expect(out).toContain('TCConsistent is no longer violated');
  });

  it('against the fixed model the recorded violation no longer shows: exit 1', async () => {
    const trace = JSON.parse(readFileSync(traceFile, 'utf8'));
    delete trace['#meta'].spec.mutant;
    const { code, out } = await txcheck('replay', file('fixed.itf.json', trace));
    expect(code).toBe(1);
    expect(out).toContain('step 1: action "TMCommit" is not enabled');
  });
});

/** model/kafka/PROTOCOL.md B1 at its smallest: one partition, one producer, one request timeout. */
function hanging(): string {
  const fairness = [
    'deliver',
    'sendTxnRequest',
    'sendProduce',
    'resendTxnMarker',
    'completeTransaction',
    'fetch',
  ];
  const properties = [
    'ReadCommittedIsolation',
    'AtomicCommit',
    'NoLostWrite',
    'ZombieFencing',
    'Idempotence',
    'CoordinatorTransitions',
  ];
  return file('hanging.json', {
    model: 'kafka',
    deadlock: true,
    faults: { batchExpiries: 1 },
    properties,
    liveness: ['LsoAdvances', 'ConsumersProgress'],
    fairness,
  });
}

describe('liveness', () => {
  const traceFile = join(dir, 'lasso.itf.json');
  beforeAll(async () => {
    await txcheck('check', hanging(), '--out', traceFile);
  });

  it('runs after the invariants: exit 1, the verdict of each property, the lasso written with its loop', async () => {
    const { code, out } = await txcheck('check', hanging(), '--out', traceFile, '--json');
    expect(code).toBe(1);
    const summary = JSON.parse(out);
    const trace = JSON.parse(readFileSync(traceFile, 'utf8'));
    // B1 ends with nothing enabled: the run stutters in its last state, which is the loop.
    const length = trace.states.length - 1;
    expect(summary).toMatchObject({
      status: 'violation',
      violation: { property: 'LsoAdvances', goal: 'LsoAdvances[p0, txn 0]', length, loop: length, traceFile },
    });
    expect(summary.liveness.fairness).toEqual([
      'each deliver action',
      'each sendTxnRequest action',
      'each sendProduce action',
      'each resendTxnMarker action',
      'each completeTransaction action',
      'each fetch action',
    ]);
    expect(summary.liveness.properties).toEqual([
      {
        name: 'LsoAdvances',
        goals: 1,
        status: 'violated',
        goal: 'LsoAdvances[p0, txn 0]',
        length,
        loop: length,
        traceFile,
      },
      { name: 'ConsumersProgress', goals: 1, status: 'holds' },
    ]);
    expect(summary.liveness.states).toBe(summary.distinctStates);
    expect(trace.loop).toBe(length);
    expect(trace['#meta']).toMatchObject({ property: 'LsoAdvances', goal: 'LsoAdvances[p0, txn 0]' });
    // The goal's P first holds when the delayed Produce opens a transaction after the ABORT marker.
    const trigger = trace['#meta'].trigger;
    expect(trace.states[trigger]['#meta'].action).toBe('deliver P0.0→L0: Produce');
    expect(trigger).toBeLessThan(length);
  });

  it('prints the fairness, the verdicts, the prefix and the cycle', async () => {
    const { out } = await txcheck('check', hanging(), '--out', traceFile);
    const trace = JSON.parse(readFileSync(traceFile, 'utf8'));
    const [trigger, last] = [trace['#meta'].trigger, trace.states.length - 1];
    expect(out).toContain(
      'Then liveness: LsoAdvances, ConsumersProgress, under weak fairness of each deliver action; each sendTxnRequest action;',
    );
    expect(out).toMatch(/ConsumersProgress {2}holds \(1 goal\)/);
    expect(out).toContain(
      `step ${trigger}: deliver P0.0→L0: Produce   [LsoAdvances[p0, txn 0]: its trigger holds; its goal never does from here on]`,
    );
    expect(out).toContain(`step ${last}: ${trace.states[last]['#meta'].action}   [the cycle starts here]`);
    expect(out).toContain(
      `  (no action is enabled in step ${last}: the run stays there forever)\nTrace written to`,
    );
  });

  it('replays a lasso: the prefix, the cycle back to its first state, the goal never met', async () => {
    const { code, out } = await txcheck('replay', traceFile, '--json');
    expect(code).toBe(0);
    const last = JSON.parse(readFileSync(traceFile, 'utf8')).states.length - 1;
    expect(JSON.parse(out)).toMatchObject({
      status: 'reproduced',
      property: 'LsoAdvances',
      steps: last,
      loop: last,
    });
  });

  it('does not replay a lasso whose trigger is moved, or whose stuttering state has an enabled action', async () => {
    const moved = JSON.parse(readFileSync(traceFile, 'utf8'));
    moved['#meta'].trigger = 3;
    expect((await txcheck('replay', file('moved.itf.json', moved))).out).toContain(
      'LsoAdvances[p0, txn 0]: its trigger does not hold at step 3',
    );
    const early = JSON.parse(readFileSync(traceFile, 'utf8'));
    early.states.pop();
    early.loop = 18;
    const { code, out } = await txcheck('replay', file('early.itf.json', early));
    expect(code).toBe(1);
    expect(out).toContain('the trace stutters in its last state, but actions are enabled there');
  });

  it('is not checked when an invariant fails first', async () => {
    const spec = file('both.json', {
      model: 'kafka',
      deadlock: true,
      faults: { batchExpiries: 1 },
      liveness: ['LsoAdvances'],
      fairness: [],
    });
    const { code, out } = await txcheck('check', spec, '--out', join(dir, 'both.itf.json'));
    expect(code).toBe(1);
    expect(out).toContain('Result: violation. NoHangingTransaction is violated');
    expect(out).toContain('Liveness was not checked');
  });
});

describe('random search', () => {
  it('writes byte-identical traces for the same seed, and the walk reruns alone', async () => {
    const args = [
      'check',
      mutant,
      '--strategy',
      'random',
      '--seed',
      '42',
      '--walks',
      '500',
      '--max-depth',
      '20',
      '--json',
    ];
    const first = await txcheck(...args, '--out', join(dir, 'r1.itf.json'));
    const second = await txcheck(...args, '--out', join(dir, 'r2.itf.json'));
    expect(first.code).toBe(1);
    expect(second.code).toBe(1);
    const bytes1 = readFileSync(join(dir, 'r1.itf.json'));
    expect(bytes1.equals(readFileSync(join(dir, 'r2.itf.json')))).toBe(true);
    const meta = JSON.parse(bytes1.toString())['#meta'];
    expect(meta).toMatchObject({ strategy: 'random', seed: 42, property: 'TCConsistent' });
    expect(meta.walk).toBe(JSON.parse(first.out).violation.walk);
    expect((await txcheck('replay', join(dir, 'r1.itf.json'))).code).toBe(0);
  });

  it('with a different seed takes other walks', async () => {
    const run = async (seed: string) =>
      JSON.parse(
        (
          await txcheck(
            'check',
            tp3,
            '--strategy',
            'random',
            '--seed',
            seed,
            '--walks',
            '20',
            '--workers',
            '1',
            '--json',
          )
        ).out,
      );
    const [a, b] = [await run('1'), await run('2')];
    expect(a.statesGenerated === b.statesGenerated && a.distinctStates === b.distinctStates).toBe(false);
  });

  it('claims nothing without a violation: exit 3, incomplete, stopped by the walk count', async () => {
    const json = await txcheck(
      'check',
      tp3,
      '--strategy',
      'random',
      '--walks',
      '20',
      '--workers',
      '1',
      '--json',
    );
    expect(json.code).toBe(3);
    expect(JSON.parse(json.out)).toMatchObject({ status: 'incomplete', stoppedBy: 'walks' });
    const text = await txcheck(
      'check',
      tp3,
      '--strategy',
      'random',
      '--walks',
      '20',
      '--max-depth',
      '5',
      '--workers',
      '1',
    );
    expect(text.code).toBe(3);
    expect(text.out).toContain('Result: incomplete. No violation found in 20 walks of up to 5 steps');
  });

  it('on 2 workers counts each distinct state once: the states the same walks meet on 1 worker', async () => {
    const args = [
      'check',
      tp3,
      '--strategy',
      'random',
      '--seed',
      '1',
      '--walks',
      '400',
      '--max-depth',
      '30',
      '--json',
    ];
    const one = JSON.parse((await txcheck(...args, '--workers', '1')).out);
    const two = JSON.parse((await txcheck(...args, '--workers', '2')).out);
    expect(one.distinctStates).toBeLessThanOrEqual(288);
    expect(two.distinctStates).toBe(one.distinctStates);
    expect(two.statesGenerated).toBe(one.statesGenerated);
  });

  it('on 2 workers shows a progress line on a terminal', async () => {
    let err = '';
    const argv = [
      'check',
      tp3,
      '--strategy',
      'random',
      '--walks',
      '300000',
      '--max-depth',
      '20',
      '--workers',
      '2',
      '--json',
    ];
    const code = await main(argv, { out: () => {}, err: (t) => (err += t), errIsTTY: true });
    expect(code).toBe(3);
    expect(err).toMatch(/\r\d[\d,]* distinct, \d[\d,]* generated, queue 0, depth \d+, /);
  });

  it('finds the same least violating walk, with the same trace file, on 1 and on 2 workers', async () => {
    const args = [
      'check',
      mutant,
      '--strategy',
      'random',
      '--seed',
      '5',
      '--walks',
      '300',
      '--max-depth',
      '20',
      '--json',
    ];
    const one = await txcheck(...args, '--workers', '1', '--out', join(dir, 'w1.itf.json'));
    const two = await txcheck(...args, '--workers', '2', '--out', join(dir, 'w2.itf.json'));
    expect(one.code).toBe(1);
    expect(two.code).toBe(1);
    expect(JSON.parse(two.out).violation).toMatchObject({ walk: JSON.parse(one.out).violation.walk });
    expect(readFileSync(join(dir, 'w1.itf.json')).equals(readFileSync(join(dir, 'w2.itf.json')))).toBe(true);
  });
});

/** A symbolic link to a file that must survive any refused --out. */
function link(): string {
  const path = join(dir, 'link.itf.json');
  if (!existsSync(path)) symlinkSync(file('target.txt', 'keep me'), path);
  return path;
}

function fifo(): string {
  const path = join(dir, 'fifo.itf.json');
  if (!existsSync(path)) execFileSync('mkfifo', [path]);
  return path;
}

function device(): string {
  const path = join(dir, 'null.dev');
  if (!existsSync(path)) execFileSync('mknod', [path, 'c', '1', '3']);
  return path;
}

describe('bad input', () => {
  const spec = (extra: Record<string, unknown>) => ({ model: 'two-phase', resourceManagers: 3, ...extra });
  const kafka = (extra: Record<string, unknown>) => ({ model: 'kafka', deadlock: true, ...extra });
  const validTrace = () => JSON.parse(readFileSync(join(dir, 'mutant.itf.json'), 'utf8'));
  beforeAll(async () => {
    await txcheck('check', mutant, '--out', join(dir, 'mutant.itf.json'));
    await txcheck('check', hanging(), '--out', join(dir, 'hanging.itf.json'));
  });

  // [what, arguments, what the one line must name: the file and the field]
  const cases: [string, () => string[], string, string][] = [
    ['a missing spec file', () => ['check', join(dir, 'nope.json')], 'nope.json', 'expected a readable file'],
    [
      'bad JSON',
      () => ['check', file('bad.json', '{"model": "two-phase",')],
      'bad.json',
      'expected valid JSON',
    ],
    [
      'a spec that is not an object',
      () => ['check', file('list.json', [1])],
      'list.json',
      'expected a JSON object',
    ],
    [
      'an unknown model',
      () => ['check', file('model.json', { model: 'three-phase' })],
      'model.json',
      ': model: expected one of',
    ],
    [
      'a parameter of the wrong type',
      () => ['check', file('type.json', spec({ resourceManagers: '3' }))],
      'type.json',
      ': resourceManagers: expected an integer',
    ],
    [
      'a parameter out of range',
      () => ['check', file('range.json', spec({ resourceManagers: 13 }))],
      'range.json',
      ': resourceManagers: expected an integer from 1 to 12, got 13',
    ],
    [
      'an unknown property',
      () => ['check', file('prop.json', spec({ properties: ['Nope'] }))],
      'prop.json',
      ': properties[0]: expected one of TPTypeOK, TCConsistent',
    ],
    [
      'an unknown field',
      () => ['check', file('field.json', spec({ colour: 'red' }))],
      'field.json',
      ': colour: expected no such field',
    ],
    [
      'deadlock not a boolean',
      () => ['check', file('dead.json', spec({ deadlock: 'yes' }))],
      'dead.json',
      ': deadlock: expected true or false',
    ],
    [
      'a bound out of range in the spec',
      () => ['check', file('bound.json', spec({ maxStates: 0 }))],
      'bound.json',
      ': maxStates: expected an integer from 1',
    ],
    [
      'an unknown strategy',
      () => ['check', file('strat.json', spec({ strategy: 'dfs' }))],
      'strat.json',
      ': strategy: expected one of "bfs", "random"',
    ],
    [
      'an unknown mutant',
      () => ['check', file('mutant.json', spec({ mutant: 'x' }))],
      'mutant.json',
      ': mutant: expected one of',
    ],
    [
      'a flag value that is not a number',
      () => ['check', tp3, '--max-states', 'lots'],
      'command line',
      ': --max-states: expected an integer',
    ],
    [
      'a flag value out of range',
      () => ['check', tp3, '--walks', '0'],
      'command line',
      ': --walks: expected an integer from 1',
    ],
    [
      'no workers',
      () => ['check', tp3, '--workers', '0'],
      'command line',
      ': --workers: expected an integer from 1 to 256, got 0',
    ],
    [
      'no memory',
      () => ['check', tp3, '--max-memory', '0'],
      'command line',
      ': --max-memory: expected an integer from 1',
    ],
    [
      'an unknown flag',
      () => ['check', tp3, '--frobnicate'],
      'command line',
      ': --frobnicate: expected a known option',
    ],
    [
      'an unknown command',
      () => ['verify', tp3],
      'command line',
      ': command: expected check, replay, show, ',
    ],
    ['a missing spec argument', () => ['check'], 'command line', ': check: expected a spec file'],
    [
      'a check flag given to replay',
      () => ['replay', join(dir, 'mutant.itf.json'), '--seed', '1'],
      'command line',
      ': --seed: expected no such option for replay',
    ],
    [
      'a truncated trace',
      () => [
        'replay',
        file('cut.itf.json', readFileSync(join(dir, 'mutant.itf.json'), 'utf8').slice(0, 700)),
      ],
      'cut.itf.json',
      'expected valid JSON',
    ],
    [
      'an ITF trace of another tool, without a spec',
      () => [
        'replay',
        file('other.itf.json', { '#meta': { format: 'ITF' }, vars: ['x'], states: [{ x: 1 }] }),
      ],
      'other.itf.json',
      ': #meta.spec: expected an ITF trace written by txcheck',
    ],
    [
      'a Quint trace',
      () => {
        const quint = {
          '#meta': { format: 'ITF', source: 'SumTypes.qnt', status: 'passed' },
          vars: ['value'],
          states: [{ '#meta': { index: 0 }, value: { tag: 'Some', value: { '#bigint': '40' } } }],
        };
        return ['show', file('quint.itf.json', quint)];
      },
      'quint.itf.json',
      ': #meta.spec: expected an ITF trace written by txcheck, whose #meta records the spec that was checked (this one says: "SumTypes.qnt")',
    ],
    [
      'a null in a trace state',
      () => {
        const t = validTrace();
        t.states[1].tmPrepared = [null];
        return ['replay', file('null.itf.json', t)];
      },
      'null.itf.json',
      ': states[1].tmPrepared[0]: expected an ITF value: ITF has no null, got null',
    ],
    [
      'a fraction in a trace state',
      () => [
        'replay',
        file('frac.itf.json', { ...validTrace(), states: [{ ...validTrace().states[0], tmState: 0.5 }] }),
      ],
      'frac.itf.json',
      ': states[0].tmState: expected an ITF integer',
    ],
    [
      'a malformed #map',
      () => [
        'report',
        file('map.itf.json', {
          ...validTrace(),
          states: [{ ...validTrace().states[0], msgs: { '#map': [[1]] } }],
        }),
      ],
      'map.itf.json',
      ': states[0].msgs.#map[0]: expected a [key, value] pair',
    ],
    [
      'a state with a variable vars does not list',
      () => [
        'shrink',
        file('extra.itf.json', { ...validTrace(), states: [{ ...validTrace().states[0], y: 1 }] }),
      ],
      'extra.itf.json',
      ': states[0].y: expected no such variable',
    ],
    [
      'a top-level field ITF does not have',
      () => ['replay', file('top.itf.json', { ...validTrace(), trace: [] })],
      'top.itf.json',
      ': trace: expected no such field in an ITF trace',
    ],
    [
      'a loop index out of range',
      () => ['replay', file('loop.itf.json', { ...validTrace(), loop: 9 })],
      'loop.itf.json',
      ': loop: expected the index of a state, from 0 to 3',
    ],
    [
      'an unknown show format',
      () => ['show', join(dir, 'mutant.itf.json'), '--format', 'svg'],
      'command line',
      ': --format: expected one of "text", "mermaid", "json"',
    ],
    [
      'a check flag given to compare',
      () => ['compare', tp3, '--variants', 'x', '--strategy', 'random'],
      'command line',
      ': --strategy: expected no such option for compare (only --variants, --markdown, --json, --max-states, --max-seconds)',
    ],
    [
      'a check flag given to mutants',
      () => ['mutants', mutant, '--seed', '3'],
      'command line',
      ': --seed: expected no such option for mutants (only --markdown, --json, --max-states, --max-seconds)',
    ],
    [
      '--variants given to mutants',
      () => ['mutants', mutant, '--variants', 'kafka-3.5'],
      'command line',
      ': --variants: expected no such option for mutants',
    ],
    [
      'a negative flag value',
      () => ['check', tp3, '--seed', '-1'],
      'command line',
      ': --seed: expected an integer from 0 to 4294967295, got -1',
    ],
    [
      'a negative flag value with =',
      () => ['check', tp3, '--max-states=-5'],
      'command line',
      ': --max-states: expected an integer from 1',
    ],
    [
      'a repeated flag',
      () => ['check', tp3, '--seed', '1', '--seed', '2'],
      'command line',
      ': --seed: expected each option at most once, got 2 times',
    ],
    [
      'an unknown field, listing the common fields too',
      () => ['check', file('field2.json', spec({ colour: 'red' }))],
      'field2.json',
      'description, expect, fairness, liveness, maxDepth',
    ],
    [
      'a number too large for JSON',
      () => ['check', file('huge.json', '{"model": "two-phase", "resourceManagers": 1e400}')],
      'huge.json',
      ': resourceManagers: expected an integer from 1 to 12, got a number beyond the largest double (such as 1e400)',
    ],
    [
      'a FIFO as the spec',
      () => ['check', fifo()],
      'fifo.itf.json',
      ': (top level): expected a regular file, got a FIFO',
    ],
    [
      'a folder as the spec',
      () => ['check', dir],
      dir,
      ': (top level): expected a regular file, got a folder',
    ],
    [
      'a spec path under a file',
      () => ['check', join(tp3, 'x.json')],
      'x.json',
      ': (top level): expected a readable file, got ENOTDIR',
    ],
    [
      'a show flag given to report',
      () => ['report', join(dir, 'mutant.itf.json'), '--format', 'text'],
      'command line',
      ': --format: expected no such option for report',
    ],
    [
      'a trace of another model',
      () => [
        'replay',
        file('paxos.itf.json', {
          ...validTrace(),
          '#meta': { ...validTrace()['#meta'], spec: { model: 'paxos' } },
        }),
      ],
      'paxos.itf.json',
      ': #meta.spec.model: expected one of',
    ],
    [
      "a trace whose variables are not the model's",
      () => {
        const t = validTrace();
        t.vars = ['rmState'];
        t.states = t.states.map((s: Record<string, unknown>) => ({
          '#meta': s['#meta'],
          rmState: s.rmState,
        }));
        return ['replay', file('vars.itf.json', t)];
      },
      'vars.itf.json',
      ": vars: expected the variables of the spec's model",
    ],
    [
      'a trace state that is not an object',
      () => ['replay', file('state.itf.json', { ...validTrace(), states: [validTrace().states[0], 'x'] })],
      'state.itf.json',
      ': states[1]: expected a JSON object',
    ],
    [
      'a trace state without its action',
      () => {
        const t = validTrace();
        delete t.states[2]['#meta'];
        return ['replay', file('noaction.itf.json', t)];
      },
      'noaction.itf.json',
      ': states[2].#meta: expected a JSON object with the action label',
    ],
    [
      'a trace with an unknown property',
      () => [
        'replay',
        file('tprop.itf.json', { ...validTrace(), '#meta': { ...validTrace()['#meta'], property: 'Nope' } }),
      ],
      'tprop.itf.json',
      ': #meta.property: expected one of TPTypeOK, TCConsistent, Deadlock',
    ],
    [
      'liveness for a model without any',
      () => ['check', file('nolive.json', spec({ liveness: ['Terminates'] }))],
      'nolive.json',
      ': liveness: expected nothing: model two-phase has no liveness properties',
    ],
    [
      'no producer at all',
      () => ['check', file('noproducer.json', kafka({ transactionalIds: 0 }))],
      'noproducer.json',
      ': transactionalIds: expected at least 1 when there is no idempotent producer (idempotentProducers), got 0',
    ],
    [
      'too many idempotent producers',
      () => ['check', file('idem.json', kafka({ idempotentProducers: 4 }))],
      'idem.json',
      ': idempotentProducers: expected an integer from 0 to 3, got 4',
    ],
    [
      'an unknown liveness property',
      () => ['check', file('live.json', kafka({ liveness: ['Nope'], fairness: [] }))],
      'live.json',
      ': liveness[0]: expected one of TransactionsComplete, LsoAdvances, ConsumersProgress',
    ],
    [
      'liveness without fairness',
      () => ['check', file('nofair.json', kafka({ liveness: ['LsoAdvances'] }))],
      'nofair.json',
      ': fairness: expected a list of weakly fair action kinds',
    ],
    [
      'fairness without liveness',
      () => ['check', file('faironly.json', kafka({ fairness: ['deliver'] }))],
      'faironly.json',
      ': fairness: expected no fairness without "liveness"',
    ],
    [
      'an unknown fair action kind',
      () => [
        'check',
        file('fairkind.json', kafka({ liveness: ['LsoAdvances'], fairness: ['deliver', 'delivr'] })),
      ],
      'fairkind.json',
      ': fairness[1]: expected one of the action kinds initTransactions,',
    ],
    [
      'an empty fairness group',
      () => [
        'check',
        file('fairgroup.json', kafka({ liveness: ['LsoAdvances'], fairness: [{ anyOf: [] }] })),
      ],
      'fairgroup.json',
      ': fairness[0].anyOf: expected a non-empty list of action kinds',
    ],
    [
      'an unknown kind in a fairness group',
      () => [
        'check',
        file(
          'fairgroup2.json',
          kafka({ liveness: ['LsoAdvances'], fairness: [{ anyOf: ['deliver', 'x'] }] }),
        ),
      ],
      'fairgroup2.json',
      ': fairness[0].anyOf[1]: expected one of the action kinds',
    ],
    [
      'liveness with random walks in the spec',
      () => [
        'check',
        file('liverandom.json', kafka({ liveness: ['LsoAdvances'], fairness: [], strategy: 'random' })),
      ],
      'liverandom.json',
      ': strategy: expected "bfs" (liveness needs the whole state graph)',
    ],
    [
      'liveness with random walks on the command line',
      () => [
        'check',
        file('liveflag.json', kafka({ liveness: ['LsoAdvances'], fairness: [] })),
        '--strategy',
        'random',
      ],
      'command line',
      ': --strategy: expected "bfs": the spec checks liveness',
    ],
    [
      'a lasso trace with an unknown goal',
      () => {
        const t = JSON.parse(readFileSync(join(dir, 'hanging.itf.json'), 'utf8'));
        t['#meta'].goal = 'LsoAdvances[p7, txn 0]';
        return ['replay', file('goal.itf.json', t)];
      },
      'goal.itf.json',
      ': #meta.goal: expected one of LsoAdvances[p0, txn 0]',
    ],
    [
      '--out naming a folder',
      () => ['check', mutant, '--out', dir],
      dir,
      ': --out: expected a regular file or a new name in an existing folder, got a folder',
    ],
    [
      '--out naming a symbolic link',
      () => ['check', mutant, '--out', link()],
      'link.itf.json',
      ': --out: expected a regular file or a new name in an existing folder, got a symbolic link',
    ],
    [
      '--out naming a FIFO',
      () => ['check', mutant, '--out', fifo()],
      'fifo.itf.json',
      ': --out: expected a regular file or a new name in an existing folder, got a FIFO',
    ],
    // A device node of its own (only root may make one): a checker without the test replaces it.
    ...(process.getuid?.() === 0
      ? [
          [
            '--out naming a device',
            () => ['check', mutant, '--out', device()],
            'null.dev',
            ': --out: expected a regular file or a new name in an existing folder, got a character device',
          ] satisfies [string, () => string[], string, string],
        ]
      : []),
    [
      '--checkpoint naming a symbolic link, before the search',
      () => ['check', mutant, '--checkpoint', link()],
      'link.itf.json',
      ': --checkpoint: expected a regular file or a new name in an existing folder, got a symbolic link',
    ],
    [
      '--checkpoint naming a FIFO, before the search',
      () => ['check', mutant, '--checkpoint', fifo()],
      'fifo.itf.json',
      ': --checkpoint: expected a regular file or a new name in an existing folder, got a FIFO',
    ],
    [
      '--checkpoint in a folder that does not exist',
      () => ['check', mutant, '--checkpoint', join(dir, 'nowhere', 'c.ckpt')],
      'c.ckpt',
      `: --checkpoint: expected a new name in an existing folder, got no folder ${join(dir, 'nowhere')}`,
    ],
    ['an empty --out', () => ['check', mutant, '-o', ''], 'command line', ': --out: expected a file name'],
    [
      '--out in a folder that does not exist',
      () => ['check', mutant, '--out', join(dir, 'nowhere', 't.itf.json')],
      't.itf.json',
      `: --out: expected a new name in an existing folder, got no folder ${join(dir, 'nowhere')}`,
    ],
    [
      '--out under a file',
      () => ['check', mutant, '--out', join(tp3, 't.itf.json')],
      't.itf.json',
      `: --out: expected a new name in an existing folder, got ${tp3}, which is a file`,
    ],
    [
      '--out in a folder nobody may write',
      () => ['check', mutant, '--out', '/proc/t.itf.json'],
      '/proc/t.itf.json',
      ': --out: expected a path this user can write',
    ],
    [
      'report -o naming a folder',
      () => ['report', join(dir, 'mutant.itf.json'), '-o', dir],
      dir,
      ': --out: expected a regular file or a new name in an existing folder, got a folder',
    ],
    [
      'shrink -o naming a symbolic link',
      () => ['shrink', join(dir, 'mutant.itf.json'), '-o', link()],
      'link.itf.json',
      ': --out: expected a regular file or a new name in an existing folder, got a symbolic link',
    ],
    [
      'a bad spec inside a trace',
      () => [
        'replay',
        file('tspec.itf.json', {
          ...validTrace(),
          '#meta': { ...validTrace()['#meta'], spec: spec({ resourceManagers: 0 }) },
        }),
      ],
      'tspec.itf.json',
      ': #meta.spec.resourceManagers: expected an integer from 1 to 12',
    ],
  ];

  it.each(cases)(
    '%s: exit 2 and one line naming the file and field',
    async (_what, args, fileName, fieldAndExpected) => {
      const { code, out, err } = await txcheck(...args());
      expect(code).toBe(2);
      expect(out).toBe('');
      expect(err.endsWith('\n')).toBe(true);
      expect(err.trimEnd().split('\n')).toHaveLength(1);
      expect(err).toContain(fileName);
      expect(err).toContain(fieldAndExpected);
      expect(err).not.toMatch(/\bat .*:\d+/);
    },
  );

  it('a spec that starts with a UTF-8 byte order mark is read', async () => {
    const { code, out } = await txcheck(
      'check',
      file('bom.json', `\uFEFF${JSON.stringify(spec({}))}`),
      '--json',
    );
    expect(code).toBe(0);
    expect(JSON.parse(out).distinctStates).toBe(288);
  });

  it('compare with --markdown and --json together: exit 2, the error as JSON', async () => {
    const { code, out } = await txcheck('compare', tp3, '--variants', 'x', '--markdown', '--json');
    expect(code).toBe(2);
    expect(JSON.parse(out).message).toBe(
      'command line: --markdown: expected either --markdown or --json, not both',
    );
  });

  it('a refused --out leaves what it names as it was', async () => {
    await txcheck('check', mutant, '--out', link());
    expect(lstatSync(link()).isSymbolicLink()).toBe(true);
    expect(readFileSync(link(), 'utf8')).toBe('keep me');
  });

  it('with --json, bad input is one JSON error object on stdout', async () => {
    const { code, out, err } = await txcheck(
      'check',
      file('range2.json', spec({ resourceManagers: 0 })),
      '--json',
    );
    expect(code).toBe(2);
    expect(JSON.parse(out)).toEqual({ status: 'error', message: err.trimEnd() });
  });
});

describe('internal errors', () => {
  const failingOut = (argv: string[]) => {
    let err = '';
    const io = {
      out: () => {
        throw new Error('stdout is gone');
      },
      err: (t: string) => void (err += t),
      errIsTTY: false,
    };
    return main(argv, io).then((code) => ({ code, err }));
  };

  it('exit 4, never the violation code, with one line and no stack trace', async () => {
    const { code, err } = await failingOut(['list']);
    expect(code).toBe(4);
    expect(err).toMatch(
      /^txcheck \S+: internal error: stdout is gone \(exit 4; --debug prints the stack trace\)\n$/,
    );
  });

  it('--debug adds the stack trace', async () => {
    const { code, err } = await failingOut(['list', '--debug']);
    expect(code).toBe(4);
    expect(err).toMatch(/internal error: stdout is gone.*\nError: stdout is gone\n {4}at /);
  });

  it('a worker that runs out of heap is named as such, in one line', async () => {
    const worker = new Worker('const a = []; for (;;) a.push(new Array(1e5).fill(1));', {
      eval: true,
      resourceLimits: { maxOldGenerationSizeMb: 16 },
    });
    const error = await new Promise((resolve) => worker.on('error', resolve));
    const line = internalErrorLine(error);
    expect(line).toMatch(/^txcheck \S+: out of memory: .*--max-states.*--max-old-space-size/);
    expect(line).not.toContain('\n');
  });
});

describe('a crash in a child process', () => {
  // A variant whose handler sends to a node that does not exist: a state of the right shape that the model cannot take.
  const variant = file(
    'crash.ts',
    'export const overrides = { InitProducerId: (ctx, s, c, r) => { const n = ctx.base.InitProducerId(ctx, s, c, r); return { ...n, network: n.network.map((ch) => ({ ...ch, to: 42 })) }; } };\n',
  );
  const spec = file('crash.json', {
    model: 'kafka',
    variant: { base: 'kafka-3.5', overrides: variant },
    deadlock: true,
  });

  it(
    'a breadth-first search fits a small heap: the states waiting in the queue are packed words',
    { timeout: 60_000 },
    () => {
      const run = spawnSync(
        process.execPath,
        [
          '--max-old-space-size=24',
          '--import',
          'tsx',
          'checker/cli.ts',
          'check',
          'specs/kafka/zombie-fencing.json',
          '--workers',
          '1',
          '--json',
        ],
        { encoding: 'utf8' },
      );
      expect(run.status).toBe(0);
      // The reviewed count of the spec under its own variant.
      expect(JSON.parse(run.stdout)).toMatchObject({
        status: 'ok',
        distinctStates: readCounts()['specs/kafka/zombie-fencing.json']!['kafka-3.5']!.distinctStates,
      });
    },
  );

  it(
    'a liveness graph that outgrows a small heap stops cleanly: exit 3, no abort',
    { timeout: 60_000 },
    () => {
      const live = file('live.json', {
        model: 'kafka',
        partitions: 3,
        instancesPerId: 2,
        faults: { producerCrashes: 1 },
        deadlock: true,
        liveness: ['LsoAdvances'],
        fairness: ['deliver', 'completeTransaction', 'resendTxnMarker'],
      });
      const run = spawnSync(
        process.execPath,
        ['--max-old-space-size=24', '--import', 'tsx', 'checker/cli.ts', 'check', live, '--workers', '1'],
        { encoding: 'utf8' },
      );
      expect(run.status).toBe(3);
      expect(run.stdout).toContain(
        'Result: incomplete. The liveness check stopped at maxMemory; no liveness verdict.',
      );
      expect(run.stderr).not.toContain('heap out of memory');
    },
  );

  it.each(['1', '2'])('on %s worker(s): exit 4 and one line on stderr', (workers) => {
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'checker/cli.ts', 'check', spec, '--workers', workers],
      { encoding: 'utf8' },
    );
    expect(run.status).toBe(4);
    expect(run.stderr).toMatch(/^txcheck \S+: internal error: .*\n$/);
  });
});

describe('traces in the ITF encodings of Apalache and Quint', () => {
  type Json = unknown;
  type Vars = Record<string, Json>;
  /** Every integer as {"#bigint"}, as Apalache and Quint write them. */
  const bigints = (v: Json): Json =>
    typeof v === 'number'
      ? { '#bigint': String(v) }
      : Array.isArray(v)
        ? v.map(bigints)
        : typeof v === 'object' && v !== null
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, bigints(x)]))
          : v;
  /** `file` with each state's variables re-encoded by `state`, written as `name`. */
  const write = (file: string, name: string, state: (s: Vars) => Vars) => {
    const path = join(dir, name);
    const t = JSON.parse(readFileSync(file, 'utf8'));
    t.states = t.states.map((s: Vars) => {
      const { '#meta': meta, ...vars } = s;
      return { '#meta': meta, ...state(vars) };
    });
    writeFileSync(path, JSON.stringify(t));
    return path;
  };
  /** Every {"#set"} and {"#map"} inside `v` rewritten by `set` and `map`. */
  const recode = (v: Json, set: (items: Json[]) => Json, map: (pairs: [string, Json][]) => Json): Json => {
    if (Array.isArray(v)) return v.map((x) => recode(x, set, map));
    if (typeof v !== 'object' || v === null) return v;
    const o = v as Record<string, Json>;
    if (Array.isArray(o['#set'])) return set(o['#set'].map((x) => recode(x, set, map)));
    if (Array.isArray(o['#map']))
      return map((o['#map'] as [string, Json][]).map(([k, x]) => [k, recode(x, set, map)]));
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, recode(x, set, map)]));
  };
  const twoPhase = join(dir, 'itf-mutant.itf.json');
  const kafka = join(dir, 'itf-b1.itf.json');
  const shown = async (file: string) =>
    JSON.parse((await txcheck('show', file, '--format', 'json')).out).steps;
  beforeAll(async () => {
    await txcheck('check', mutant, '--out', twoPhase);
    await txcheck('check', 'specs/kafka/hanging-transaction.json', '--out', kafka);
  });

  it('txcheck writes the sets of TwoPhase.tla as {"#set"} and rmState, a function, as {"#map"}', () => {
    const last = JSON.parse(readFileSync(twoPhase, 'utf8')).states.at(-1);
    expect(last.rmState['#map']).toEqual(expect.arrayContaining([['rm1', expect.any(String)]]));
    expect(last.tmPrepared).toEqual({ '#set': expect.any(Array) });
    expect(last.msgs['#set']).toContainEqual({ type: 'Commit' });
  });

  it('txcheck writes Kafka\'s sets of partitions as {"#set"}, and lists and records as they are', () => {
    const states = JSON.parse(readFileSync(kafka, 'utf8')).states;
    const txn = states.at(-1).coordinator.transactions[0];
    expect(txn.partitions).toEqual({ '#set': expect.any(Array) });
    expect(
      states.some((s: Vars) =>
        JSON.stringify(s.producers).includes('"partitionsInTransaction":{"#set":["p0"]}'),
      ),
    ).toBe(true);
    expect(Array.isArray(states[0].partitions)).toBe(true);
    expect(Array.isArray(states[0].producers[0].nextSequence)).toBe(true);
  });

  it.each([
    ['two-phase', twoPhase],
    ['Kafka', kafka],
  ])(
    'a %s trace with its sets and maps in another order, every integer as {"#bigint"}, replays and shows as txcheck wrote it',
    async (_, original) => {
      const reversed = (s: Vars) =>
        bigints(
          recode(
            s,
            (items) => ({ '#set': items.reverse() }),
            (pairs) => ({ '#map': pairs.reverse() }),
          ),
        ) as Vars;
      const other = write(original, `itf-reversed-${basename(original)}`, reversed);
      expect(readFileSync(other, 'utf8')).not.toBe(readFileSync(original, 'utf8'));
      expect((await txcheck('replay', other)).code).toBe(0);
      expect(await shown(other)).toEqual(await shown(original));
    },
  );

  it('the same trace with sets as lists and maps as records, as txcheck wrote before, replays and shows the same', async () => {
    const plain = (s: Vars) =>
      recode(
        s,
        (items) => items,
        (pairs) => Object.fromEntries(pairs),
      ) as Vars;
    const other = write(twoPhase, 'itf-lists.itf.json', plain);
    expect((await txcheck('replay', other)).code).toBe(0);
    expect(await shown(other)).toEqual(await shown(twoPhase));
  });

  it('a saved Kafka trace with every integer as {"#bigint"} and a list as {"#tup"} replays and shows as written by txcheck', async () => {
    const original = 'traces/kafka-3.5-stale-end-txn.itf.json';
    const other = write(original, 'itf-bigint.itf.json', (s) => ({
      ...(bigints(s) as Vars),
      history: { '#tup': bigints(s.history) },
    }));
    const replayed = await txcheck('replay', other);
    expect(replayed.out).toContain('Reproduced');
    expect(replayed.code).toBe(0);
    const shownText = await txcheck('show', other);
    expect(shownText.out).toBe((await txcheck('show', original)).out.replace(original, other));
  });

  it('a set with an item the model does not have is a difference', async () => {
    const other = write(twoPhase, 'itf-wrong-set.itf.json', (s) => ({
      ...s,
      tmPrepared: { '#set': [...(s.tmPrepared as { '#set': Json[] })['#set'], 'rm9'] },
    }));
    const { code, out } = await txcheck('replay', other);
    expect(code).toBe(1);
    expect(out).toMatch(/tmPrepared: recorded \{"#set":\[.*"rm9"\]\}/);
  });
});

describe('partial-order reduction', () => {
  const base = {
    model: 'kafka',
    variant: 'kafka-3.5',
    partitions: 2,
    transactionsPerInstance: 1,
    recordsPerTransaction: 1,
    consumers: { readCommitted: 1 },
    deadlock: true,
  };

  it('runs the reduced search on one thread and says so', async () => {
    const spec = file('por.json', { ...base, properties: ['AtomicCommit'], reduction: 'por' });
    const { code, out } = await txcheck('check', spec, '--json', '--workers', '2');
    const summary = JSON.parse(out);
    expect(code).toBe(0);
    expect(summary).toMatchObject({ status: 'ok', workers: 1, reduction: 'por' });
    expect(summary.reducedStates).toBeGreaterThan(0);
    const full = JSON.parse(
      (await txcheck('check', file('full.json', { ...base, properties: ['AtomicCommit'] }), '--json')).out,
    );
    expect(summary.distinctStates).toBeLessThan(full.distinctStates);
    const text = (await txcheck('check', spec)).out;
    expect(text).toMatch(/breadth-first, partial-order reduction\)/);
    expect(text).toContain(
      `AtomicCommit holds in all ${summary.distinctStates.toLocaleString('en-US')} states of the reduced graph, and so in every reachable state.`,
    );
  });

  it('refuses an unknown reduction, liveness and random search with one line each', async () => {
    const unknown = await txcheck('check', file('por-bad.json', { ...base, reduction: 'ample' }));
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(
      /por-bad\.json: reduction: expected one of "none", "por", "sleep", got "ample"/,
    );
    const random = await txcheck(
      'check',
      file('por-random.json', { ...base, reduction: 'por' }),
      '--strategy',
      'random',
    );
    expect(random.code).toBe(2);
    expect(random.err).toMatch(/--strategy: expected "bfs": the spec asks for partial-order reduction/);
    const live = await txcheck(
      'check',
      file('por-live.json', { ...base, reduction: 'por', liveness: ['TransactionsComplete'], fairness: [] }),
    );
    expect(live.code).toBe(2);
    expect(live.err).toMatch(/reduction: expected "none" with "liveness"/);
  });

  it('runs sleep sets on workers too: the full search states, fewer generated', async () => {
    const spec = file('sleep.json', { ...base, reduction: 'sleep' });
    const { code, out } = await txcheck('check', spec, '--json', '--workers', '2');
    const summary = JSON.parse(out);
    expect(code).toBe(0);
    expect(summary).toMatchObject({ status: 'ok', workers: 2, reduction: 'sleep' });
    const full = JSON.parse((await txcheck('check', file('sleep-full.json', base), '--json')).out);
    expect(summary.distinctStates).toBe(full.distinctStates);
    expect(summary.statesGenerated).toBeLessThan(full.statesGenerated);
    expect((await txcheck('check', spec, '--workers', '1')).out).toMatch(/breadth-first, sleep sets\)/);
  });

  it('refuses sleep sets with symmetry and with a checkpoint, with one line each', async () => {
    const symmetric = await txcheck(
      'check',
      file('sleep-sym.json', { ...base, reduction: 'sleep', symmetry: true }),
    );
    expect(symmetric.code).toBe(2);
    expect(symmetric.err).toMatch(/sleep-sym\.json: reduction: expected "none" or "por" with "symmetry"/);
    expect(symmetric.err.trim().split('\n')).toHaveLength(1);
    const saved = join(dir, 'sleep.ckpt');
    const saving = await txcheck(
      'check',
      file('sleep-ckpt.json', { ...base, reduction: 'sleep' }),
      '--checkpoint',
      saved,
    );
    expect(saving.code).toBe(2);
    expect(saving.err).toMatch(/--checkpoint: expected none with "reduction": "sleep"/);
    expect(existsSync(saved)).toBe(false);
  });
});

describe('checkpoint and resume', () => {
  /** check, with a stop already asked for: the search stops at its first look at the clock. */
  async function stopped(...argv: string[]) {
    let out = '';
    let err = '';
    const stop = { flag: new Int32Array(new SharedArrayBuffer(4)), received: 'SIGINT' };
    stop.flag[0] = 1;
    const code = await main(['check', ...argv], {
      out: (t) => (out += t),
      err: (t) => (err += t),
      errIsTTY: false,
      stop,
    });
    return { code, out, err };
  }

  it('a stopped search leaves a checkpoint, and the resumed one ends with the counts and verdict of an uninterrupted run', async () => {
    const saved = join(dir, 'stale.ckpt');
    const first = await stopped(
      'specs/kafka/stale-end-txn.json',
      '--checkpoint',
      saved,
      '--json',
      '--out',
      join(dir, 'first.itf.json'),
    );
    expect(first.code).toBe(3);
    expect(JSON.parse(first.out)).toMatchObject({
      status: 'incomplete',
      stoppedBy: 'signal',
      checkpoint: saved,
      workers: 1,
    });
    const resumed = JSON.parse(
      (
        await txcheck(
          'check',
          'specs/kafka/stale-end-txn.json',
          '--resume',
          saved,
          '--json',
          '--out',
          join(dir, 'resumed.itf.json'),
        )
      ).out,
    );
    const whole = JSON.parse(
      (
        await txcheck(
          'check',
          'specs/kafka/stale-end-txn.json',
          '--json',
          '--out',
          join(dir, 'whole.itf.json'),
        )
      ).out,
    );
    for (const field of ['status', 'distinctStates', 'statesGenerated', 'depth', 'coverage'])
      expect(resumed[field]).toEqual(whole[field]);
    expect(resumed.violation.length).toBe(whole.violation.length);
    expect(JSON.parse(readFileSync(join(dir, 'resumed.itf.json'), 'utf8')).states).toEqual(
      JSON.parse(readFileSync(join(dir, 'whole.itf.json'), 'utf8')).states,
    );
    const text = await stopped('specs/kafka/commit-abort.json', '--checkpoint', join(dir, 'text.ckpt'));
    expect(text.out).toContain(
      `Checkpoint written to ${join(dir, 'text.ckpt')}; go on with: txcheck check specs/kafka/commit-abort.json --resume ${join(dir, 'text.ckpt')}`,
    );
  });

  it('refuses what cannot be saved or resumed with one line and exit 2', async () => {
    const saved = join(dir, 'commit-abort.ckpt');
    await stopped('specs/kafka/commit-abort.json', '--checkpoint', saved);
    const cases: [string[], RegExp][] = [
      [
        ['specs/kafka/commit-abort.json', '--checkpoint', saved, '--strategy', 'random'],
        /--checkpoint: expected the breadth-first search/,
      ],
      [
        ['specs/kafka/commit-abort.json', '--checkpoint-every', '10'],
        /--checkpoint-every: expected a --checkpoint FILE to write to/,
      ],
      [
        ['specs/kafka/commit-abort.json', '--checkpoint', saved, '--checkpoint-every', '0'],
        /--checkpoint-every: expected an integer from 1/,
      ],
      [
        ['specs/kafka/zombie-fencing.json', '--resume', saved],
        /commit-abort\.ckpt: identity: expected a checkpoint of this spec with these options, got one of another search/,
      ],
      [
        ['specs/kafka/commit-abort.json', '--resume', saved, '--max-depth', '3'],
        /identity: expected a checkpoint of this spec with these options/,
      ],
      [
        ['specs/kafka/commit-abort.json', '--resume', 'specs/kafka/commit-abort.json'],
        /commit-abort\.json: \(top level\): expected a checkpoint file written by --checkpoint, got a file of another kind/,
      ],
    ];
    for (const [argv, message] of cases) {
      const { code, err } = await txcheck('check', ...argv);
      expect(code, argv.join(' ')).toBe(2);
      expect(err).toMatch(message);
      expect(err.trim().split('\n')).toHaveLength(1);
    }
  });
});
