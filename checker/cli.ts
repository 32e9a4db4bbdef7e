// The txcheck command line. `main` takes its arguments and output channels as parameters so
// tests can run it in-process; the entry guard at the bottom wires it to the real process.
import { mkdirSync, realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Fields, InputError } from '../specs/fields.ts';
import { loadSpecFile, parseSpec, readRunOptions, type RunOptions, type Spec } from '../specs/load.ts';
import { bfs } from './bfs.ts';
import type { Model } from './model.ts';
import { randomSearch } from './random.ts';
import { DEADLOCK, type Progress, type Result, type Trace } from './search.ts';
import { TOOL, readTraceFile, replay, toItfValue, writeTraceFile } from './trace.ts';

export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** True when progress lines can be redrawn in place on the error channel. */
  readonly errIsTTY: boolean;
}

const ExitCode = { Ok: 0, Violation: 1, BadInput: 2, Incomplete: 3 } as const;

const COMMAND_LINE = 'command line';
const DEFAULT_WALKS = 1000;
const DEFAULT_WALK_DEPTH = 100;

const help = `${TOOL}: an explicit-state model checker

Usage:
  txcheck check <spec.json> [options]   explore the spec's model and check its properties
  txcheck replay <trace.itf.json>       re-run a counterexample and check it still shows
  txcheck --help

Options of check (they override the spec's own defaults):
  --strategy bfs|random   breadth-first (exhaustive, shortest trace) or random walks
  --seed N                random: the seed; walk i of seed N can be rerun alone
  --walks N               random: how many walks
  --max-depth N           most actions from an initial state (random: walk length)
  --max-states N          most distinct states
  --max-seconds N         most seconds
  --out FILE              where to write a counterexample (default out/<spec>.<property>.itf.json)
  --json                  print one JSON object at the end, nothing else on stdout

Exit codes of check: 0 the properties hold within the bounds, 1 a violation was found,
2 bad input or usage, 3 stopped at a limit before finishing.
Exit codes of replay: 0 the trace replays exactly and its violation shows again, 1 it does
not, 2 bad input.
`;

const optionSpecs = {
  strategy: { type: 'string' },
  seed: { type: 'string' },
  walks: { type: 'string' },
  'max-depth': { type: 'string' },
  'max-states': { type: 'string' },
  'max-seconds': { type: 'string' },
  out: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Flags = ReturnType<typeof parseCommandLine>['values'];

function parseCommandLine(argv: readonly string[]) {
  try {
    return parseArgs({ args: [...argv], options: optionSpecs, allowPositionals: true, strict: true });
  } catch (e) {
    const message = (e as Error).message.split('\n')[0] ?? '';
    const option = /'(-[^' ]+)/.exec(message)?.[1] ?? '(options)';
    if ((e as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      throw new InputError(COMMAND_LINE, option, 'a known option (see txcheck --help)');
    }
    throw new InputError(COMMAND_LINE, option, 'an option used as txcheck --help shows', JSON.stringify(message));
  }
}

export async function main(argv: readonly string[], io: Io): Promise<number> {
  const json = argv.includes('--json');
  try {
    const { values: flags, positionals } = parseCommandLine(argv);
    if (flags.help === true) {
      io.out(help);
      return ExitCode.Ok;
    }
    const [command, file, ...extra] = positionals;
    if (command !== 'check' && command !== 'replay') {
      throw new InputError(COMMAND_LINE, 'command', '"check" or "replay" (see txcheck --help)', command === undefined ? 'nothing' : JSON.stringify(command));
    }
    if (file === undefined) throw new InputError(COMMAND_LINE, command, command === 'check' ? 'a spec file' : 'a trace file');
    if (extra.length > 0) throw new InputError(COMMAND_LINE, extra[0]!, 'nothing more after the file (see txcheck --help)');
    return command === 'check' ? check(file, flags, io) : replayCommand(file, flags, io);
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    io.err(`${e.message}\n`);
    if (json) io.out(`${JSON.stringify({ status: 'error', message: e.message })}\n`);
    return ExitCode.BadInput;
  }
}

/** The spec's run options overridden by the flags, with the built-in defaults below both. */
function runOptions(spec: Spec, flags: Flags): RunOptions {
  const given: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(flags)) {
    if (typeof value === 'string' && name !== 'out') given[`--${name}`] = /^-?\d+$/.test(value) ? Number(value) : value;
  }
  const fields = new Fields(COMMAND_LINE, given);
  const fromFlags = readRunOptions(fields, (o) => o.flag);
  fields.done();
  const options = { strategy: 'bfs' as const, seed: 0, walks: DEFAULT_WALKS, ...spec.defaults, ...fromFlags };
  return options.strategy === 'random' ? { maxDepth: DEFAULT_WALK_DEPTH, ...options } : options;
}

function check(file: string, flags: Flags, io: Io): number {
  const spec = loadSpecFile(file);
  const options = runOptions(spec, flags);
  const model = spec.entry.build(spec.params, spec.properties);
  const progress = new ProgressLine(io);
  const searchOptions = { ...options, deadlockAllowed: spec.deadlockAllowed, onProgress: io.errIsTTY ? progress.show : undefined };
  const result =
    options.strategy === 'bfs'
      ? bfs(model, searchOptions)
      : randomSearch(model, { ...searchOptions, maxDepth: options.maxDepth ?? DEFAULT_WALK_DEPTH });
  progress.clear();

  let traceFile: string | undefined;
  if (result.violation !== undefined) {
    const { property, trace, walk } = result.violation;
    traceFile = flags.out ?? `out/${spec.name}.${property}.itf.json`;
    const random = options.strategy === 'random' ? { seed: options.seed, walk } : {};
    const description = `${property} violated after ${trace.actions.length} steps (${options.strategy} search of ${spec.file})`;
    const meta = { spec: spec.raw, specFile: spec.file, strategy: options.strategy, ...random, property, description };
    try {
      mkdirSync(dirname(traceFile), { recursive: true });
      writeTraceFile(traceFile, model, trace, meta);
    } catch (e) {
      throw new InputError(traceFile, '--out', 'a writable file path', (e as NodeJS.ErrnoException).code ?? String(e));
    }
  }

  if (flags.json === true) io.out(`${JSON.stringify(jsonSummary(result, options, traceFile))}\n`);
  else io.out(textSummary(spec, options, model, result, traceFile));
  return result.status === 'ok' ? ExitCode.Ok : result.status === 'violation' ? ExitCode.Violation : ExitCode.Incomplete;
}

function jsonSummary(result: Result, options: RunOptions, traceFile: string | undefined): unknown {
  const { status, distinctStates, statesGenerated, depth, seconds, coverage, stoppedBy, violation } = result;
  return {
    status,
    distinctStates,
    statesGenerated,
    depth,
    seconds,
    coverage,
    strategy: options.strategy,
    ...(options.strategy === 'random' ? { seed: options.seed } : {}),
    ...(stoppedBy === undefined ? {} : { stoppedBy }),
    ...(violation === undefined
      ? {}
      : { violation: { property: violation.property, length: violation.trace.actions.length, traceFile, ...(violation.walk === undefined ? {} : { walk: violation.walk }) } }),
  };
}

const count = (n: number) => Math.round(n).toLocaleString('en-US');

class ProgressLine {
  private shown = false;
  constructor(private readonly io: Io) {}

  show = (p: Progress): void => {
    this.shown = true;
    this.io.err(
      `\r${count(p.distinctStates)} distinct, ${count(p.statesGenerated)} generated, queue ${count(p.queue)}, ` +
        `depth ${p.depth}, ${count(p.statesPerSecond)} states/s, ${p.seconds.toFixed(0)} s\x1b[K`,
    );
  };

  clear(): void {
    if (this.shown) this.io.err('\r\x1b[K');
  }
}

function textSummary(spec: Spec, options: RunOptions, model: Model<unknown, unknown>, result: Result, traceFile: string | undefined): string {
  const lines: string[] = [];
  const searched = options.strategy === 'random' ? `random walks, seed ${options.seed}` : 'breadth-first';
  lines.push(`${TOOL}: ${spec.file} (model ${spec.entry.name}, ${searched})`);
  lines.push(`Checking ${spec.properties.join(', ') || 'no invariants'}; deadlock ${spec.deadlockAllowed ? 'allowed' : 'reported'}.`);
  const perSecond = result.seconds > 0 ? ` (${count(result.statesGenerated / result.seconds)} states/s)` : '';
  lines.push(
    `${count(result.distinctStates)} distinct states, ${count(result.statesGenerated)} states generated, ` +
      `depth ${result.depth}, ${result.seconds.toFixed(2)} s${perSecond}`,
  );
  lines.push('Coverage (successors computed per action):');
  const width = Math.max(...Object.keys(result.coverage.fired).map((k) => k.length));
  for (const [kind, n] of Object.entries(result.coverage.fired)) lines.push(`  ${kind.padEnd(width)}  ${count(n).padStart(12)}`);
  lines.push(`  never fired: ${result.coverage.neverFired.join(', ') || 'none'}`);

  if (result.status === 'ok') {
    lines.push(
      options.strategy === 'bfs'
        ? `Result: ok. ${spec.properties.join(' and ') || 'No invariant'} hold${spec.properties.length === 1 ? 's' : ''} in all ${count(result.distinctStates)} reachable states.`
        : `Result: ok within the bounds: no violation in ${count(options.walks)} walks of up to ${options.maxDepth} steps (random walks do not cover every state).`,
    );
  } else if (result.status === 'incomplete') {
    lines.push(
      `Result: incomplete. Stopped at ${result.stoppedBy} (${options[result.stoppedBy!]}); no violation in the states covered, ` +
        'which says nothing about the rest.',
    );
  } else {
    const { property, trace, walk } = result.violation!;
    const where = walk === undefined ? '' : ` in walk ${walk}`;
    lines.push(`Result: violation. ${property} is violated after ${trace.actions.length} steps${where}:`);
    lines.push(...traceLines(model, trace, property));
    lines.push(`Trace written to ${traceFile}; replay it with: txcheck replay ${traceFile}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Each step of `trace`: the action, then the variables it changed (all of them at step 0). */
function traceLines(model: Model<unknown, unknown>, trace: Trace, property: string): string[] {
  const lines: string[] = [];
  let before: Record<string, unknown> = {};
  trace.states.forEach((s, step) => {
    const vars = toItfValue(model.view === undefined ? s : model.view(s)) as Record<string, unknown>;
    lines.push(`  step ${step}: ${step === 0 ? '(initial state)' : trace.actions[step - 1]}`);
    for (const [name, value] of Object.entries(vars)) {
      const shown = JSON.stringify(value);
      if (shown !== JSON.stringify(before[name])) lines.push(`    ${name} = ${shown}`);
    }
    before = vars;
  });
  if (property === DEADLOCK) lines.push('  (no action is enabled in the last state)');
  return lines;
}

function replayCommand(file: string, flags: Flags, io: Io): number {
  const checkOnly = Object.keys(flags).find((name) => name !== 'json');
  if (checkOnly !== undefined) throw new InputError(COMMAND_LINE, `--${checkOnly}`, 'no such option for replay (only --json)');
  const trace = readTraceFile(file);
  const spec = parseSpec(file, trace.meta.spec, '#meta.spec');
  const model = spec.entry.build(spec.params, spec.properties);
  const { reproduced, message } = replay(model, trace);
  if (flags.json === true) {
    io.out(`${JSON.stringify({ status: reproduced ? 'reproduced' : 'diverged', property: trace.meta.property, steps: trace.actions.length, message })}\n`);
  } else {
    io.out(`${TOOL}: replay ${file} (model ${spec.entry.name}, ${trace.actions.length} steps)\n`);
    io.out(`${reproduced ? 'Reproduced' : 'Not reproduced'}: ${message}\n`);
  }
  return reproduced ? ExitCode.Ok : ExitCode.Violation;
}

/** Runs `main` on this process's arguments and streams and sets its exit code. */
export async function runProcess(): Promise<void> {
  process.exitCode = await main(process.argv.slice(2), {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    errIsTTY: process.stderr.isTTY === true,
  });
}

function isEntryPoint(): boolean {
  try {
    return realpathSync(process.argv[1] ?? '') === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (isEntryPoint()) await runProcess();
