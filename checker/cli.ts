// The txcheck command line. `main` takes its arguments and output channels as parameters so
// tests can run it in-process; the entry guard at the bottom wires it to the real process.
import {
  type Stats,
  closeSync,
  lstatSync,
  mkdirSync,
  openSync,
  realpathSync,
  rmSync,
  statSync,
} from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sourceDigest } from './distributed/digest.ts';
import { Fields, InputError } from './engine/input.ts';
import { modelOf } from '../specs/build.ts';
import {
  loadSpecFile,
  parseSpec,
  readRunOptions,
  temporalProperties,
  type RunOptions,
  type Spec,
} from '../specs/load.ts';
import { compareCommand, mutantsCommand } from './compare.ts';
import { DEFAULT_WALK_DEPTH, runSearch } from './strategy.ts';
import { type RunningExplorer, startExplorer } from './explorer/server.ts';
import { explorerSource } from './explorer/source.ts';
import { listText } from './list.ts';
import { type Lasso, type LivenessResult, checkLiveness, describeFairness } from './engine/liveness.ts';
import type { Model } from './engine/model.ts';
import {
  DEADLOCK,
  HEAP_SHARE,
  type Limit,
  type Progress,
  type Result,
  type SearchOptions,
  type Trace,
} from './engine/search.ts';
import { renderHtml } from './report/html.ts';
import { renderMermaid } from './report/mermaid.ts';
import { type Report, buildReport } from './report/report.ts';
import { renderText } from './report/text.ts';
import { shrink, violates } from './engine/shrink.ts';
import { TOOL } from './version.ts';
import {
  type TraceFile,
  initialStateOf,
  readTraceFile,
  replay,
  stateView,
  traceText,
  writeFileAtomic,
} from './engine/trace.ts';

export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** True when progress lines can be redrawn in place on the error channel. */
  readonly errIsTTY: boolean;
  /** Set when a signal asked the run to stop: a flag the search threads read, and the signal's name. */
  readonly stop?: { readonly flag: Int32Array; readonly received: string | undefined };
}

const ExitCode = { Ok: 0, Violation: 1, BadInput: 2, Incomplete: 3, Internal: 4 } as const;

const COMMAND_LINE = 'command line';
/** Loaded by the commands that use Redis alone: BullMQ and its client would slow and grow every other command's start. */
const distributed = () => import('./distributed/commands.ts');
const DEFAULT_WALKS = 1000;
const DEFAULT_CHECKPOINT_SECONDS = 60;

const help = `${TOOL}: an explicit-state model checker

Usage:
  txcheck check <spec.json> [options]   explore the spec's model and check its properties
  txcheck replay <trace.itf.json> [--json]
                                        re-run a counterexample and check it still shows
  txcheck show <trace.itf.json> [--format text|mermaid|json]
                                        the counterexample step by step, or as a sequence diagram
  txcheck report <trace.itf.json> [-o report.html]
                                        one HTML file (works offline) to click through the steps
  txcheck shrink <trace.itf.json> [-o out.itf.json] [--json]
                                        a shorter trace that still violates the same property
  txcheck compare <spec.json> --variants a,b,c [--markdown|--json] [--max-states N] [--max-seconds N]
                                        the spec under each variant: a verdict per property
  txcheck mutants <spec.json>... [--markdown|--json] [--max-states N] [--max-seconds N]
                                        every mutant of the model against the specs: kill matrix
  txcheck explore <spec.json | trace.itf.json> [--port N]
                                        step through the model in the browser (127.0.0.1 only)
  txcheck worker --redis URL [--workers N] [--lock-seconds N]
                                        take the jobs of check --redis runs from a queue
  txcheck list                          models, generations, switches, properties, mutants, specs
  txcheck --help                        this text (also -h)

Options of check (they override the spec's own defaults):
  --strategy bfs|random   breadth-first (exhaustive, shortest trace) or random walks
  --seed N                random: the seed; walk i of seed N can be rerun alone
  --walks N               random: how many walks
  --max-depth N           most actions from an initial state (random: walk length)
  --max-states N          most distinct states
  --max-seconds N         most seconds
  --max-memory MB         most megabytes of resident memory, every thread included; a search
                          also stops on its own at 85 % of its heap, cleanly, with exit 3
  --workers N             worker threads (default: the number of cores); 1 searches in this thread
  --checkpoint FILE       breadth-first: save the search to FILE every --checkpoint-every seconds
                          (default 60) and when it stops early (a signal, a limit); one thread
  --resume FILE           go on from a checkpoint of the same spec and --max-depth, to the counts
                          and verdict of an uninterrupted run; saves again to FILE (or --checkpoint)
  --redis URL[,URL...]    put the search on a queue in Redis (redis://host:port) for txcheck
                          worker processes on any machines to run: random walks, or the levels
                          of breadth-first search, whose visited set is sharded over the URLs
  -o, --out FILE          where to write a counterexample (default out/<spec>.<property>.itf.json)
  --shrink                shrink the counterexample before writing it (see shrink)
  --json                  print one JSON object at the end, nothing else on stdout

Options of every command:
  --debug                 print the stack trace of an internal error

Options of worker:
  --redis URL             the Redis server that check --redis runs put their jobs on
  --workers N             walker threads, hence jobs at once (default: the number of cores)
  --lock-seconds N        how long the job of a worker that died stays with it before
                          another worker takes it (default 30)

Exit codes:
  0  check: every checked property holds within the bounds; replay: the trace replays exactly
     and its violation shows again; mutants: every mutant is killed; the other commands: done
  1  check: a violation was found; replay: the trace diverges, or its violation no longer
     shows; show, report, shrink: the trace does not replay (why is on stderr); mutants: a
     mutant survived
  2  bad input or usage: one line on stderr naming the file, the field and what was expected
  3  check: stopped at a limit before finishing, or random walks found nothing (nothing is
     claimed); compare: a limit left a verdict open
  4  an internal error (a bug, or the machine ran out of memory): one line on stderr
`;

/** The bound a run stopped at, as its summary names it. */
function limitText(limit: Limit, options: RunOptions): string {
  if (limit !== 'maxMemory') return String(options[limit as keyof RunOptions]);
  const share = `${Math.round(HEAP_SHARE * 100)} % of the heap`;
  return options.maxMemory === undefined ? share : `${options.maxMemory} MB resident, or ${share}`;
}

const optionSpecs = {
  strategy: { type: 'string' },
  seed: { type: 'string' },
  walks: { type: 'string' },
  'max-depth': { type: 'string' },
  'max-states': { type: 'string' },
  'max-seconds': { type: 'string' },
  'max-memory': { type: 'string' },
  checkpoint: { type: 'string' },
  'checkpoint-every': { type: 'string' },
  resume: { type: 'string' },
  workers: { type: 'string' },
  redis: { type: 'string' },
  'lock-seconds': { type: 'string' },
  out: { type: 'string', short: 'o' },
  json: { type: 'boolean' },
  variants: { type: 'string' },
  markdown: { type: 'boolean' },
  format: { type: 'string' },
  shrink: { type: 'boolean' },
  port: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  debug: { type: 'boolean' },
} as const;

type Flags = ReturnType<typeof parseCommandLine>['values'];

function parseCommandLine(argv: readonly string[]) {
  // parseArgs takes "--seed -1" for two options; a negative number is the option's value (and is then refused by range).
  const args = argv.flatMap((arg, i) =>
    /^-\d/.test(arg) && /^--[\w-]+$/.test(argv[i - 1] ?? '')
      ? []
      : /^--[\w-]+$/.test(arg) && /^-\d/.test(argv[i + 1] ?? '')
        ? [`${arg}=${argv[i + 1]}`]
        : [arg],
  );
  let parsed;
  try {
    parsed = parseArgs({ args, options: optionSpecs, allowPositionals: true, strict: true, tokens: true });
  } catch (e) {
    const message = (e as Error).message.split('\n')[0] ?? '';
    const option = /'(-[^' ]+)/.exec(message)?.[1] ?? '(options)';
    if ((e as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      throw new InputError(COMMAND_LINE, option, 'a known option (see txcheck --help)');
    }
    throw new InputError(
      COMMAND_LINE,
      option,
      'an option used as txcheck --help shows',
      JSON.stringify(message),
    );
  }
  // A repeated option would silently override the first.
  const names = parsed.tokens.flatMap((t) => (t.kind === 'option' ? [t.name] : []));
  const repeated = names.find((name, i) => names.indexOf(name) !== i);
  if (repeated !== undefined)
    throw new InputError(
      COMMAND_LINE,
      `--${repeated}`,
      'each option at most once',
      `${names.filter((n) => n === repeated).length} times`,
    );
  return parsed;
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
    if (command === 'list') {
      io.out(listText());
      return ExitCode.Ok;
    }
    if (command === 'worker') {
      if (positionals.length > 1)
        throw new InputError(COMMAND_LINE, positionals[1]!, 'nothing after worker (see txcheck --help)');
      rejectOtherFlags(command, ['redis', 'workers', 'lock-seconds'], flags);
      return await (
        await distributed()
      ).workerCommand(flags.redis, workersOption(flags), flags['lock-seconds'], io);
    }
    if (command === 'compare' || command === 'mutants') {
      rejectOtherFlags(command, variantsFlags[command], flags);
      return variantsCommand(command, positionals.slice(1), flags, io);
    }
    const spec = commands.find((c) => c.name === command);
    if (spec === undefined) {
      const names = [...commands.map((c) => c.name), 'compare', 'mutants', 'worker'].join(', ');
      throw new InputError(
        COMMAND_LINE,
        'command',
        `${names} or list (see txcheck --help)`,
        command === undefined ? 'nothing' : JSON.stringify(command),
      );
    }
    if (file === undefined)
      throw new InputError(
        COMMAND_LINE,
        spec.name,
        spec.name === 'check'
          ? 'a spec file'
          : spec.name === 'explore'
            ? 'a spec or trace file'
            : 'a trace file',
      );
    if (extra.length > 0)
      throw new InputError(COMMAND_LINE, extra[0]!, 'nothing more after the file (see txcheck --help)');
    rejectOtherFlags(spec.name, spec.flags, flags);
    return await spec.run(file, flags, io);
  } catch (e) {
    const message = e instanceof InputError ? e.message : internalErrorLine(e);
    io.err(`${message}\n`);
    if (!(e instanceof InputError) && argv.includes('--debug')) io.err(`${stackOf(e)}\n`);
    if (json) io.out(`${JSON.stringify({ status: 'error', message })}\n`);
    return e instanceof InputError ? ExitCode.BadInput : ExitCode.Internal;
  }
}

/** A failure that is not the input's fault, in one line: a bug, or a limit of the machine. */
export function internalErrorLine(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  const first = (e instanceof Error ? e.message : String(e)).split('\n')[0]!;
  if (code === 'ERR_WORKER_OUT_OF_MEMORY' || /out of memory/i.test(first)) {
    return `${TOOL}: out of memory: ${first}; bound the run (--max-states, --max-depth) or give Node more heap (NODE_OPTIONS=--max-old-space-size=MB)`;
  }
  return `${TOOL}: internal error: ${first} (exit 4; --debug prints the stack trace)`;
}

/** The stack of an error; one from a worker carries the worker's stack as its message. */
function stackOf(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  return e.message.includes('\n    at ') ? e.message : (e.stack ?? e.message);
}

const variantsFlags: Record<'compare' | 'mutants', readonly (keyof Flags)[]> = {
  compare: ['variants', 'markdown', 'json', 'max-states', 'max-seconds'],
  mutants: ['markdown', 'json', 'max-states', 'max-seconds'],
};

/** Refuses an option that `command` does not take (--debug goes with every command). */
function rejectOtherFlags(command: string, allowed: readonly (keyof Flags)[], flags: Flags): void {
  const other = Object.keys(flags).find(
    (name) => name !== 'debug' && !(allowed as readonly string[]).includes(name),
  );
  if (other !== undefined)
    throw new InputError(
      COMMAND_LINE,
      `--${other}`,
      `no such option for ${command} (only ${allowed.map((f) => `--${f}`).join(', ')})`,
    );
  if (flags.json === true && flags.markdown === true)
    throw new InputError(COMMAND_LINE, '--markdown', 'either --markdown or --json, not both');
}

function variantsCommand(
  command: 'compare' | 'mutants',
  files: readonly string[],
  flags: Flags,
  io: Io,
): number {
  if (files.length === 0) throw new InputError(COMMAND_LINE, command, 'a spec file');
  if (command === 'compare' && files.length > 1)
    throw new InputError(COMMAND_LINE, files[1]!, 'one spec file for compare');
  const specs = files.map((file) => ({ file, raw: loadSpecFile(file).raw }));
  const options = runOptions(loadSpecFile(files[0]!), flags);
  const limits = { maxStates: options.maxStates, maxSeconds: options.maxSeconds };
  const format = flags.json === true ? 'json' : flags.markdown === true ? 'markdown' : 'text';
  if (command === 'mutants') return mutantsCommand(specs, limits, format, io);
  if (flags.variants === undefined)
    throw new InputError(COMMAND_LINE, '--variants', 'a comma-separated list of variants (see txcheck list)');
  return compareCommand(files[0]!, specs[0]!.raw, flags.variants.split(','), limits, format, io);
}

/** String flags that say how to run or where to write, read elsewhere. */
const NOT_RUN_OPTIONS: ReadonlySet<string> = new Set([
  'out',
  'variants',
  'workers',
  'redis',
  'checkpoint',
  'checkpoint-every',
  'resume',
]);

/** The spec's run options overridden by the flags, with the built-in defaults below both. */
function runOptions(spec: Spec, flags: Flags): RunOptions {
  const given: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(flags)) {
    if (typeof value === 'string' && !NOT_RUN_OPTIONS.has(name))
      given[`--${name}`] = /^-?\d+$/.test(value) ? Number(value) : value;
  }
  const fields = new Fields(COMMAND_LINE, given);
  const fromFlags = readRunOptions(fields, (o) => o.flag);
  fields.done();
  const options = { strategy: 'bfs' as const, seed: 0, walks: DEFAULT_WALKS, ...spec.defaults, ...fromFlags };
  return options.strategy === 'random' ? { maxDepth: DEFAULT_WALK_DEPTH, ...options } : options;
}

const MAX_WORKERS = 256;

/** How a checked search is saved and taken up again: --checkpoint, --checkpoint-every and --resume. */
function checkpointOptions(
  spec: Spec,
  model: Model<unknown, unknown>,
  flags: Flags,
  options: RunOptions,
): Pick<SearchOptions, 'checkpoint' | 'resume'> {
  const file = flags.checkpoint ?? flags.resume;
  if (flags['checkpoint-every'] !== undefined && file === undefined)
    throw new InputError(COMMAND_LINE, '--checkpoint-every', 'a --checkpoint FILE to write to');
  if (file === undefined) return {};
  const flag = flags.checkpoint === undefined ? '--resume' : '--checkpoint';
  if (options.strategy === 'random')
    throw new InputError(
      COMMAND_LINE,
      flag,
      'the breadth-first search (random walks are rerun from their seed instead)',
      '--strategy random',
    );
  if (model.pack === undefined || model.unpack === undefined)
    throw new InputError(
      COMMAND_LINE,
      flag,
      `a model that packs its states (model ${spec.entry.name} does not)`,
    );
  const every = flags['checkpoint-every'];
  const everySeconds =
    every === undefined
      ? DEFAULT_CHECKPOINT_SECONDS
      : new Fields(COMMAND_LINE, { '--checkpoint-every': /^-?\d+$/.test(every) ? Number(every) : every }).int(
          '--checkpoint-every',
          1,
          86_400,
        );
  // What decides the search a checkpoint belongs to: the spec as written, the depth bound, and the
  // code that builds and packs the states (a changed model would read the saved words wrongly).
  const code = sourceDigest(fileURLToPath(new URL('..', import.meta.url)), [
    'model',
    'specs',
    'checker/engine',
  ]);
  const identity = JSON.stringify({ tool: TOOL, code, spec: spec.raw, maxDepth: options.maxDepth ?? null });
  return {
    checkpoint: { file, everySeconds, identity },
    ...(flags.resume === undefined ? {} : { resume: { file: flags.resume, identity } }),
  };
}

/** --workers: a run option, not a spec field, since it says how to search and not what. */
function workersOption(flags: Flags): number {
  if (flags.workers === undefined) return availableParallelism();
  const fields = new Fields(COMMAND_LINE, {
    '--workers': /^-?\d+$/.test(flags.workers) ? Number(flags.workers) : flags.workers,
  });
  return fields.int('--workers', 1, MAX_WORKERS);
}

async function check(file: string, flags: Flags, io: Io): Promise<number> {
  const spec = loadSpecFile(file);
  const options = runOptions(spec, flags);
  const model = modelOf(spec);
  const saving = checkpointOptions(spec, model, flags, options);
  // The proviso of the reduction reads the depths of one search, and a checkpoint saves one search: they run on one thread.
  let workers = spec.reduction || saving.checkpoint !== undefined ? 1 : workersOption(flags);
  if (spec.liveness.length > 0 && options.strategy === 'random') {
    throw new InputError(
      COMMAND_LINE,
      '--strategy',
      '"bfs": the spec checks liveness, which needs the whole state graph',
      '"random"',
    );
  }
  if (spec.reduction && options.strategy === 'random') {
    throw new InputError(
      COMMAND_LINE,
      '--strategy',
      '"bfs": the spec asks for partial-order reduction, which the breadth-first search applies',
      '"random"',
    );
  }
  const checkpointFlag =
    flags.checkpoint !== undefined ? '--checkpoint' : flags.resume !== undefined ? '--resume' : undefined;
  const given = {
    workers: flags.workers !== undefined,
    ...(checkpointFlag === undefined ? {} : { checkpoint: checkpointFlag }),
  };
  const onRedis =
    flags.redis === undefined
      ? undefined
      : await (await distributed()).distributedCheck(spec, options, flags.redis, given);
  if (flags.out === undefined) checkOutputFolder(`out/${spec.name}.*.itf.json`, 'out', true);
  else checkOutput(flags.out);
  const progress = new ProgressLine(io);
  const onProgress = io.errIsTTY ? progress.show : undefined;
  let result: Result;
  if (onRedis === undefined)
    result = await runSearch(spec, model, options, workers, onProgress, io.stop?.flag, saving);
  else ({ result, workers } = await onRedis(model, progress.say, onProgress, io.stop?.flag));
  progress.clear();
  // Liveness is checked once every invariant holds in every reachable state.
  const live =
    result.status === 'ok' && spec.liveness.length > 0
      ? checkLiveness(model, temporalProperties(spec), {
          fairness: spec.fairness,
          maxStates: options.maxStates,
          maxSeconds: options.maxSeconds,
          maxMemory: options.maxMemory,
        })
      : undefined;

  const baseMeta = { tool: TOOL, spec: spec.raw, specFile: spec.file, strategy: options.strategy };
  const written: string[] = [];
  const write = (property: string, trace: Trace | Lasso, description: string, extra: object = {}): string => {
    const defaultFile = `out/${spec.name}.${property}.itf.json`;
    const path =
      flags.out === undefined
        ? defaultFile
        : written.length === 0
          ? flags.out
          : flags.out.replace(/(\.itf)?\.json$/, '') + `.${property}.itf.json`;
    writeOutput(path, traceText(model, trace, { ...baseMeta, ...extra, property, description }));
    written.push(path);
    return path;
  };

  let traceFile: string | undefined;
  let shrunkFrom: number | undefined;
  if (result.violation !== undefined && flags.shrink === true) {
    const { property, trace } = result.violation;
    shrunkFrom = trace.actions.length;
    result = {
      ...result,
      violation: {
        ...result.violation,
        trace: shrink(model, trace.states[0], trace.actions, violates(model, property)).trace,
      },
    };
  }
  if (result.violation !== undefined) {
    const { property, trace, walk } = result.violation;
    const random = options.strategy === 'random' ? { seed: options.seed, walk } : {};
    const shrunk = shrunkFrom === undefined ? {} : { shrunkFrom };
    const how = `${shrunkFrom === undefined ? '' : `shrunk from ${shrunkFrom} steps, `}${options.strategy} search of ${spec.file}`;
    traceFile = write(property, trace, `${property} violated after ${trace.actions.length} steps (${how})`, {
      ...random,
      ...shrunk,
    });
  }
  const lassoFiles = new Map<string, string>();
  for (const { property, lasso } of live?.verdicts ?? []) {
    if (lasso === undefined) continue;
    const cycle =
      lasso.loopAction === undefined
        ? 'stutters forever'
        : `repeats a cycle of ${lasso.states.length - lasso.loop} steps`;
    lassoFiles.set(
      property,
      write(
        property,
        lasso,
        `${lasso.goal} fails on a fair run: after ${lasso.loop} steps it ${cycle} (${spec.file})`,
      ),
    );
  }

  const signal = io.stop?.received;
  // A search stopped between two states (time, memory, a signal) left a checkpoint to go on from.
  const saved =
    saving.checkpoint !== undefined &&
    result.status === 'incomplete' &&
    result.stoppedBy !== 'maxStates' &&
    result.stoppedBy !== 'maxDepth'
      ? saving.checkpoint.file
      : undefined;
  if (flags.json === true) {
    const extra = {
      ...(signal === undefined ? {} : { signal }),
      ...(saved === undefined ? {} : { checkpoint: saved }),
    };
    io.out(
      `${JSON.stringify({ ...(jsonSummary(spec, result, options, workers, traceFile, live, lassoFiles, shrunkFrom) as object), ...extra })}\n`,
    );
  } else {
    io.out(
      textSummary(spec, options, workers, model, result, traceFile, live, lassoFiles, shrunkFrom, signal),
    );
    if (saved !== undefined)
      io.out(`Checkpoint written to ${saved}; go on with: txcheck check ${spec.file} --resume ${saved}\n`);
  }
  const status = overallStatus(result, live);
  return status === 'ok' ? ExitCode.Ok : status === 'violation' ? ExitCode.Violation : ExitCode.Incomplete;
}

function overallStatus(result: Result, live: LivenessResult | undefined): Result['status'] {
  return result.status !== 'ok' || live === undefined ? result.status : live.status;
}

/** Steps in a lasso: to the last state, plus the step back to the cycle's start. */
function lassoLength(lasso: Lasso): number {
  return lasso.actions.length + (lasso.loopAction === undefined ? 0 : 1);
}

function livenessJson(spec: Spec, live: LivenessResult, files: ReadonlyMap<string, string>): unknown {
  const { states, edges, seconds, bytes, stoppedBy, verdicts } = live;
  return {
    fairness: spec.fairness.map(describeFairness),
    states,
    edges,
    seconds,
    bytes,
    ...(stoppedBy === undefined ? {} : { stoppedBy }),
    properties: verdicts.map(({ property, goals, lasso }) => ({
      name: property,
      goals,
      status: lasso === undefined ? 'holds' : 'violated',
      ...(lasso === undefined
        ? {}
        : { goal: lasso.goal, length: lassoLength(lasso), loop: lasso.loop, traceFile: files.get(property) }),
    })),
  };
}

function jsonSummary(
  spec: Spec,
  result: Result,
  options: RunOptions,
  workers: number,
  traceFile: string | undefined,
  live: LivenessResult | undefined,
  lassoFiles: ReadonlyMap<string, string>,
  shrunkFrom: number | undefined,
): unknown {
  const { distinctStates, statesGenerated, depth, seconds, coverage, violation, memory } = result;
  const stoppedBy = result.stoppedBy ?? live?.stoppedBy;
  const lasso = live?.verdicts.find((v) => v.lasso !== undefined);
  return {
    status: overallStatus(result, live),
    distinctStates,
    statesGenerated,
    depth,
    seconds,
    coverage,
    strategy: options.strategy,
    workers,
    ...(options.strategy === 'random' ? { seed: options.seed } : {}),
    ...(spec.reduction ? { reduction: 'por', reducedStates: result.reducedStates } : {}),
    ...(memory === undefined ? {} : { memory }),
    ...(stoppedBy === undefined ? {} : { stoppedBy }),
    ...(violation === undefined
      ? {}
      : {
          violation: {
            property: violation.property,
            length: violation.trace.actions.length,
            traceFile,
            ...(violation.walk === undefined ? {} : { walk: violation.walk }),
            ...(shrunkFrom === undefined ? {} : { shrunkFrom }),
          },
        }),
    ...(lasso?.lasso === undefined
      ? {}
      : {
          violation: {
            property: lasso.property,
            goal: lasso.lasso.goal,
            length: lassoLength(lasso.lasso),
            loop: lasso.lasso.loop,
            traceFile: lassoFiles.get(lasso.property),
          },
        }),
    ...(live === undefined ? {} : { liveness: livenessJson(spec, live, lassoFiles) }),
  };
}

const count = (n: number) => Math.round(n).toLocaleString('en-US');

/** A repeated signal within this time is the same request (a terminal and a launcher such as tsx both pass it on). */
const SIGNAL_REPEAT_MS = 1000;

/**
 * SIGINT and SIGTERM ask a search to stop (through a flag the search threads read) so that it can
 * still report what it covered; a signal repeated later ends the process at once.
 */
class StopOnSignal {
  readonly flag = new Int32Array(new SharedArrayBuffer(4));
  received: NodeJS.Signals | undefined;
  private at = 0;
  private readonly handler = (signal: NodeJS.Signals): void => {
    if (this.received === undefined) {
      this.received = signal;
      this.at = performance.now();
      Atomics.store(this.flag, 0, 1);
    } else if (performance.now() - this.at > SIGNAL_REPEAT_MS) {
      this.release();
      process.kill(process.pid, signal);
    }
  };

  constructor() {
    process.on('SIGINT', this.handler);
    process.on('SIGTERM', this.handler);
  }

  release(): void {
    process.off('SIGINT', this.handler);
    process.off('SIGTERM', this.handler);
  }
}

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

  /** A line of news, below which the progress line is drawn again. */
  say = (line: string): void => this.io.err(`${this.shown ? '\r\x1b[K' : ''}txcheck: ${line}\n`);
}

function textSummary(
  spec: Spec,
  options: RunOptions,
  workers: number,
  model: Model<unknown, unknown>,
  result: Result,
  traceFile: string | undefined,
  live: LivenessResult | undefined,
  lassoFiles: ReadonlyMap<string, string>,
  shrunkFrom: number | undefined,
  signal: string | undefined,
): string {
  const lines: string[] = [];
  const threads = workers === 1 ? '' : `, ${workers} workers`;
  const reduced = spec.reduction ? ', partial-order reduction' : '';
  const searched = `${options.strategy === 'random' ? `random walks, seed ${options.seed}` : 'breadth-first'}${reduced}${threads}`;
  lines.push(`${TOOL}: ${spec.file} (model ${spec.entry.name}, ${searched})`);
  lines.push(
    `Checking ${spec.properties.join(', ') || 'no invariants'}; deadlock ${spec.deadlockAllowed ? 'allowed' : 'reported'}.`,
  );
  if (spec.liveness.length > 0) {
    const fairness =
      spec.fairness.length === 0
        ? 'no fairness at all'
        : `weak fairness of ${spec.fairness.map(describeFairness).join('; ')}`;
    lines.push(`Then liveness: ${spec.liveness.join(', ')}, under ${fairness}.`);
  }
  const perSecond = result.seconds > 0 ? ` (${count(result.statesGenerated / result.seconds)} states/s)` : '';
  lines.push(
    `${count(result.distinctStates)} distinct states, ${count(result.statesGenerated)} states generated, ` +
      `depth ${result.depth}, ${result.seconds.toFixed(2)} s${perSecond}`,
  );
  lines.push('Coverage (successors computed per action):');
  const width = Math.max(...Object.keys(result.coverage.fired).map((k) => k.length));
  for (const [kind, n] of Object.entries(result.coverage.fired))
    lines.push(`  ${kind.padEnd(width)}  ${count(n).padStart(12)}`);
  lines.push(`  never fired: ${result.coverage.neverFired.join(', ') || 'none'}`);

  if (result.status === 'ok' && live !== undefined) {
    lines.push(...livenessLines(spec, model, result, live, lassoFiles));
  } else if (result.status === 'ok') {
    lines.push(
      spec.reduction
        ? `Result: ok. ${spec.properties.join(' and ') || 'No invariant'} hold${spec.properties.length === 1 ? 's' : ''} in all ${count(result.distinctStates)} states of the reduced graph, and so in every reachable state.`
        : `Result: ok. ${spec.properties.join(' and ') || 'No invariant'} hold${spec.properties.length === 1 ? 's' : ''} in all ${count(result.distinctStates)} reachable states.`,
    );
  } else if (result.stoppedBy === 'walks') {
    lines.push(
      `Result: incomplete. No violation found in ${count(options.walks)} walks of up to ${options.maxDepth} steps; ` +
        'random walks do not cover every state, so nothing is claimed.',
    );
  } else if (result.stoppedBy === 'signal') {
    lines.push(
      `Result: incomplete. Stopped by signal (${signal ?? 'a request to stop'}) at depth ${result.depth}; no violation in the states covered, ` +
        'which says nothing about the rest.',
    );
  } else if (result.status === 'incomplete') {
    lines.push(
      `Result: incomplete. Stopped at ${result.stoppedBy} (${limitText(result.stoppedBy!, options)}); no violation in the states covered, ` +
        'which says nothing about the rest.',
    );
  } else {
    const { property, trace, walk } = result.violation!;
    const where = walk === undefined ? '' : ` in walk ${walk}`;
    const shrunk = shrunkFrom === undefined ? '' : ` (shrunk from ${shrunkFrom})`;
    lines.push(
      `Result: violation. ${property} is violated after ${trace.actions.length} steps${shrunk}${where}:`,
    );
    lines.push(...traceLines(model, trace, property));
    lines.push(written(traceFile!));
  }
  if (result.status !== 'ok' && spec.liveness.length > 0)
    lines.push('Liveness was not checked: it needs every invariant to hold in every reachable state first.');
  return `${lines.join('\n')}\n`;
}

/** npx finds the command in a clone, in a project that installed it, and installed globally. */
const written = (traceFile: string): string =>
  `Trace written to ${traceFile}; replay it with: npx txcheck replay ${traceFile}`;

function livenessLines(
  spec: Spec,
  model: Model<unknown, unknown>,
  result: Result,
  live: LivenessResult,
  files: ReadonlyMap<string, string>,
): string[] {
  const lines = [
    `Liveness: state graph of ${count(live.states)} states and ${count(live.edges)} edges, ${live.seconds.toFixed(2)} s, ${(live.bytes / 2 ** 20).toFixed(1)} MiB.`,
  ];
  if (live.status === 'incomplete') {
    lines.push(`Result: incomplete. The liveness check stopped at ${live.stoppedBy}; no liveness verdict.`);
    return lines;
  }
  const width = Math.max(...live.verdicts.map((v) => v.property.length));
  for (const { property, goals, lasso } of live.verdicts) {
    const verdict =
      lasso === undefined
        ? `holds (${goals} goal${goals === 1 ? '' : 's'})`
        : `fails: ${lasso.goal}, trace ${files.get(property)}`;
    lines.push(`  ${property.padEnd(width)}  ${verdict}`);
  }
  const failed = live.verdicts.find((v) => v.lasso !== undefined);
  if (failed === undefined) {
    const invariants =
      spec.properties.length === 0
        ? 'No invariant is checked'
        : `${spec.properties.join(' and ')} hold${spec.properties.length === 1 ? 's' : ''}`;
    lines.push(
      `Result: ok. ${invariants} in all ${count(result.distinctStates)} reachable states, and ${spec.liveness.join(' and ')} on every fair run.`,
    );
    return lines;
  }
  const lasso = failed.lasso!;
  const goal = `${lasso.goal}${lasso.goal === failed.property ? '' : ` (${failed.property})`}`;
  const run = spec.fairness.length === 0 ? 'a run (no fairness assumed)' : 'a fair run';
  lines.push(
    `Result: violation. ${goal} fails on ${run}: ${lasso.loop} steps to a cycle that it repeats forever:`,
  );
  lines.push(...traceLines(model, lasso, failed.property));
  const file = files.get(failed.property);
  lines.push(written(file!));
  return lines;
}

/**
 * Each step of `trace`: the action, then the variables it changed (all of them at step 0). A
 * lasso marks where its trigger held and where its cycle starts, and says how the cycle closes.
 */
function traceLines(model: Model<unknown, unknown>, trace: Trace | Lasso, property: string): string[] {
  const lines: string[] = [];
  let before: Record<string, unknown> = {};
  const lasso = 'loop' in trace ? trace : undefined;
  trace.states.forEach((s, step) => {
    const vars = stateView(model, s);
    const notes: string[] = [];
    if (step === lasso?.trigger)
      notes.push(`${lasso.goal}: its trigger holds; its goal never does from here on`);
    if (step === lasso?.loop) notes.push('the cycle starts here');
    lines.push(
      `  step ${step}: ${step === 0 ? '(initial state)' : trace.actions[step - 1]}${notes.length === 0 ? '' : `   [${notes.join('; ')}]`}`,
    );
    for (const [name, value] of Object.entries(vars)) {
      const shown = JSON.stringify(value);
      if (shown !== JSON.stringify(before[name])) lines.push(`    ${name} = ${shown}`);
    }
    before = vars;
  });
  if (property === DEADLOCK) lines.push('  (no action is enabled in the last state)');
  if (lasso !== undefined) {
    lines.push(
      lasso.loopAction === undefined
        ? `  (no action is enabled in step ${lasso.loop}: the run stays there forever)`
        : `  step ${trace.states.length}: ${lasso.loopAction}   [back to step ${lasso.loop}]`,
    );
  }
  return lines;
}

/** A trace file with the spec and model it names. */
function loadTrace(file: string): { trace: TraceFile; spec: Spec; model: Model<unknown, unknown> } {
  const trace = readTraceFile(file);
  const spec = parseSpec(file, trace.meta.spec, '#meta.spec');
  return { trace, spec, model: spec.entry.build(spec.params, spec.properties) };
}

function replayCommand(file: string, flags: Flags, io: Io): number {
  const { trace, spec, model } = loadTrace(file);
  const { reproduced, message } = replay(model, trace, {
    properties: temporalProperties(spec),
    fairness: spec.fairness,
  });
  const loop = trace.loop === undefined ? {} : { loop: trace.loop };
  if (flags.json === true) {
    io.out(
      `${JSON.stringify({ status: reproduced ? 'reproduced' : 'diverged', property: trace.meta.property, steps: trace.actions.length, ...loop, message })}\n`,
    );
  } else {
    const cycle = trace.loop === undefined ? '' : `, cycle from step ${trace.loop}`;
    io.out(`${TOOL}: replay ${file} (model ${spec.entry.name}, ${trace.actions.length} steps${cycle})\n`);
    io.out(`${reproduced ? 'Reproduced' : 'Not reproduced'}: ${message}\n`);
  }
  return reproduced ? ExitCode.Ok : ExitCode.Violation;
}

const formats = ['text', 'mermaid', 'json'] as const;

/**
 * The report of a trace that replays: its recorded states are then exactly the model's, so the
 * model's renderer can read them. Undefined (after saying why) when the trace does not replay.
 */
function reportOf(file: string, io: Io): Report | undefined {
  const { trace, spec, model } = loadTrace(file);
  const { reproduced, message, views } = replay(model, trace, {
    properties: temporalProperties(spec),
    fairness: spec.fairness,
  });
  if (!reproduced) {
    io.err(`${file}: the trace does not replay against its model, so it is not shown: ${message}\n`);
    return undefined;
  }
  const { meta } = trace;
  const known = [...spec.entry.properties, ...(spec.entry.liveness ?? [])].find(
    (p) => p.name === meta.property,
  );
  const last = trace.states.length - 1;
  const cycle =
    trace.loop === undefined
      ? undefined
      : meta.loopAction === undefined
        ? `After step ${last} the run stutters (no fairly required action is left) forever, and ${meta.goal} never holds after step ${meta.trigger}.`
        : `Step ${last + 1}, ${meta.loopAction}, leads back to step ${trace.loop}: steps ${trace.loop} to ${last + 1} repeat forever, and ${meta.goal} never holds after step ${meta.trigger}.`;
  return buildReport({
    traceFile: file,
    specFile: meta.specFile,
    model: spec.entry.name,
    specDescription: spec.description ?? '',
    property: meta.property,
    propertyDescription: known?.description ?? 'some action is enabled in every reachable state',
    states: views ?? trace.states,
    labels: trace.actions,
    renderer: spec.entry.render,
    ...(cycle === undefined ? {} : { cycle }),
  });
}

function showCommand(file: string, flags: Flags, io: Io): number {
  const format = new Fields(
    COMMAND_LINE,
    flags.format === undefined ? {} : { '--format': flags.format },
  ).oneOf('--format', formats, 'text');
  const report = reportOf(file, io);
  if (report === undefined) return ExitCode.Violation;
  io.out(
    format === 'text'
      ? renderText(report)
      : format === 'mermaid'
        ? renderMermaid(report)
        : `${JSON.stringify(report, null, 2)}\n`,
  );
  return ExitCode.Ok;
}

const errorCode = (e: unknown) => (e as NodeJS.ErrnoException).code ?? String(e);

function fileKind(stat: Stats): string {
  if (stat.isDirectory()) return 'a folder';
  if (stat.isSymbolicLink()) return 'a symbolic link';
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  return stat.isSocket() ? 'a socket' : 'not a regular file';
}

/**
 * Refuses, before any work is done, an output path that is not a regular file or a new name in
 * an existing folder this user can write: the atomic rename would replace a link, a FIFO or a
 * device with a plain file, and a path that cannot be written would lose the result at the end.
 */
function checkOutput(file: string): void {
  const existing = lstatOrUndefined(file);
  if (existing !== undefined && !existing.isFile()) {
    throw new InputError(
      file,
      '--out',
      'a regular file or a new name in an existing folder',
      fileKind(existing),
    );
  }
  checkOutputFolder(file, dirname(file), false);
}

/** Refuses a folder that does not exist (unless `make` creates it) or that this user cannot write in. */
function checkOutputFolder(file: string, folder: string, make: boolean): void {
  const refuse = (expected: string, got: string): never => {
    throw new InputError(file, '--out', expected, got);
  };
  if (make) {
    try {
      mkdirSync(folder, { recursive: true });
    } catch (e) {
      refuse('a path whose folder can be created', `${errorCode(e)} for ${folder}`);
    }
  }
  let parent: Stats | undefined;
  try {
    parent = statSync(folder);
  } catch (e) {
    if (errorCode(e) !== 'ENOENT' && errorCode(e) !== 'ENOTDIR')
      refuse('a new name in an existing folder', `${errorCode(e)} for ${folder}`);
  }
  if (parent === undefined) {
    const above = ancestorFile(folder);
    refuse(
      'a new name in an existing folder',
      above === undefined ? `no folder ${folder}` : `${above}, which is a file`,
    );
  }
  if (!parent!.isDirectory())
    refuse(
      'a new name in an existing folder',
      `${folder}, which is ${parent!.isFile() ? 'a file' : fileKind(parent!)}`,
    );
  // Creating a file is the only test that holds for every user, root included.
  const probe = join(folder, `.txcheck-${process.pid}.probe`);
  try {
    closeSync(openSync(probe, 'wx'));
    rmSync(probe);
  } catch (e) {
    refuse('a path this user can write', `${errorCode(e)} in ${folder}`);
  }
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/** The nearest ancestor of `folder` that exists as something other than a folder, if any. */
function ancestorFile(folder: string): string | undefined {
  for (let p = folder; p !== dirname(p); p = dirname(p)) {
    const stat = lstatOrUndefined(p);
    if (stat !== undefined) return stat.isDirectory() ? undefined : p;
  }
  return undefined;
}

/** Writes `text` to `file` atomically; a failure is bad input naming the file. */
function writeOutput(file: string, text: string): void {
  checkOutput(file);
  try {
    writeFileAtomic(file, text);
  } catch (e) {
    throw new InputError(file, '--out', 'a writable file path', errorCode(e));
  }
}

function reportCommand(file: string, flags: Flags, io: Io): number {
  const out = flags.out ?? `out/${basename(file).replace(/(\.itf)?\.json$/, '')}.html`;
  if (flags.out === undefined) checkOutputFolder(out, 'out', true);
  checkOutput(out);
  const report = reportOf(file, io);
  if (report === undefined) return ExitCode.Violation;
  writeOutput(out, renderHtml(report));
  io.out(
    `${TOOL}: report of ${file} (${report.steps.length - 1} steps, ${report.property}) written to ${out}\n`,
  );
  return ExitCode.Ok;
}

function shrinkCommand(file: string, flags: Flags, io: Io): number {
  const { trace, model } = loadTrace(file);
  const out = flags.out ?? file.replace(/(\.shrunk)?(\.itf)?\.json$/, '.shrunk.itf.json');
  checkOutput(out);
  if (trace.loop !== undefined)
    throw new InputError(
      file,
      'loop',
      'a counterexample without a cycle: a lasso (liveness) trace cannot lose steps and keep its cycle',
    );
  const { reproduced, message } = replay(model, trace);
  if (!reproduced) {
    io.err(`${file}: the trace does not replay against its model, so it is not shrunk: ${message}\n`);
    return ExitCode.Violation;
  }
  const { meta } = trace;
  const { trace: shrunk, tried } = shrink(
    model,
    initialStateOf(model, trace)!,
    trace.actions,
    violates(model, meta.property),
  );
  const [before, after] = [trace.actions.length, shrunk.actions.length];
  const original = meta.shrunkFrom ?? before;
  const description = `${meta.property} violated after ${after} steps (shrunk from ${original} steps, ${meta.strategy} search of ${meta.specFile})`;
  writeOutput(out, traceText(model, shrunk, { tool: TOOL, ...meta, description, shrunkFrom: original }));
  if (flags.json === true) {
    io.out(
      `${JSON.stringify({ status: 'shrunk', property: meta.property, before, after, tried, traceFile: out })}\n`,
    );
  } else {
    io.out(
      `${TOOL}: shrink ${file} (${meta.property})\nShrunk from ${before} to ${after} steps (${tried} candidates re-executed); written to ${out}\n`,
    );
  }
  return ExitCode.Ok;
}

interface Command {
  readonly name: string;
  /** The options it takes. */
  readonly flags: readonly (keyof Flags)[];
  run(file: string, flags: Flags, io: Io): number | Promise<number>;
}

const commands: readonly Command[] = [
  {
    name: 'check',
    flags: [
      'strategy',
      'seed',
      'walks',
      'max-depth',
      'max-states',
      'max-seconds',
      'max-memory',
      'checkpoint',
      'checkpoint-every',
      'resume',
      'workers',
      'redis',
      'out',
      'json',
      'shrink',
    ],
    run: check,
  },
  { name: 'replay', flags: ['json'], run: replayCommand },
  { name: 'show', flags: ['format'], run: showCommand },
  { name: 'report', flags: ['out'], run: reportCommand },
  { name: 'shrink', flags: ['out', 'json'], run: shrinkCommand },
  { name: 'explore', flags: ['port'], run: exploreCommand },
];

const DEFAULT_EXPLORER_PORT = 8421;

/** Serves the explorer until the process is interrupted; saved traces go to out/. */
async function exploreCommand(file: string, flags: Flags, io: Io): Promise<number> {
  const fields = new Fields(COMMAND_LINE, {
    '--port':
      flags.port === undefined
        ? DEFAULT_EXPLORER_PORT
        : /^-?\d+$/.test(flags.port)
          ? Number(flags.port)
          : flags.port,
  });
  const port = fields.int('--port', 1, 65535);
  const source = explorerSource(file, 'out');
  mkdirSync('out', { recursive: true });
  let running: RunningExplorer;
  try {
    running = await startExplorer(source, port);
  } catch (e) {
    throw new InputError(
      COMMAND_LINE,
      '--port',
      'a free port on 127.0.0.1',
      (e as NodeJS.ErrnoException).code ?? String(e),
    );
  }
  io.out(`${TOOL}: exploring ${file} at ${running.url} (Ctrl-C stops it; saved traces go to out/)\n`);
  await new Promise<void>((resolve) => {
    const stop = (): void => void running.close().then(resolve);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return ExitCode.Ok;
}

/** Runs `main` on this process's arguments and streams and sets its exit code. */
export async function runProcess(): Promise<void> {
  // What escapes main (an error raised outside any command) is still one line and exit 4.
  const crash = (e: unknown): void => {
    process.stderr.write(
      `${internalErrorLine(e)}\n${process.argv.includes('--debug') ? `${stackOf(e)}\n` : ''}`,
    );
    process.exit(ExitCode.Internal);
  };
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);
  const stop = new StopOnSignal();
  try {
    process.exitCode = await main(process.argv.slice(2), {
      out: (text) => process.stdout.write(text),
      err: (text) => process.stderr.write(text),
      errIsTTY: process.stderr.isTTY === true,
      stop,
    });
  } finally {
    stop.release();
  }
}

function isEntryPoint(): boolean {
  try {
    return realpathSync(process.argv[1] ?? '') === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (isEntryPoint()) await runProcess();
