// The command line's words: the options, which command takes which, how they are parsed and
// read into run options, and the usage text of txcheck --help.
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { type RunOptions, type Spec, loadSpecFile, readRunOptions } from '../../specs/load.ts';
import type { Limits } from '../compare.ts';
import { Fields, InputError } from '../engine/input.ts';
import { DEFAULT_WALK_DEPTH } from '../strategy.ts';
import { TOOL } from '../version.ts';

/** The "file" bad command-line input is reported against. */
export const COMMAND_LINE = 'command line';

/** Bad input met while acting on a flag's value (a broker that cannot be used): the flag and why, exit 2. */
export class FlagValueError extends InputError {
  constructor(flag: string, why: string) {
    super(COMMAND_LINE, flag, '');
    this.message = `${COMMAND_LINE}: ${flag}: ${why}`;
  }
}
const DEFAULT_WALKS = 1000;
const MAX_WORKERS = 256;

export const usage = `${TOOL}: an explicit-state model checker

Usage:
  txcheck check <spec.json> [options]   explore the spec's model and check its properties
  txcheck replay <trace.itf.json> [--json]
                                        re-run a counterexample and check it still shows
  txcheck replay --kafka HOST:PORT|VERSION [--tv N] [--variant V] <trace.itf.json> [--json]
                                        run a Kafka trace against a real broker, step by step
  txcheck replay --kafka-cluster VERSION [--tv N] [--variant V] <trace.itf.json> [--json]
                                        the same against a three-node cluster whose network
                                        the replay holds (markers, time-outs, failover)
  txcheck show <trace.itf.json> [--format text|mermaid|json]
                                        the counterexample step by step, or as a sequence diagram
  txcheck report <trace.itf.json> [-o report.html]
                                        one HTML file (works offline) to click through the steps
  txcheck shrink <trace.itf.json> [-o out.itf.json] [--json]
                                        a shorter trace that still violates the same property
  txcheck conform <spec.json> (--kafka HOST:PORT|VERSION | --kafka-cluster VERSION) [--variant V]
                  [--walks N] [--seed N] [--max-depth N] [--max-seconds N] [-o FILE] [--json]
                                        random runs of a Kafka spec against a real broker,
                                        step by step; a run that differs is shrunk and saved
  txcheck compare <spec.json> --variants a,b,c [--markdown|--json] [--max-states N] [--max-seconds N]
                                        the spec under each variant: a verdict per property
  txcheck mutants <spec.json>... [--markdown|--json] [--max-states N] [--max-seconds N]
                                        every mutant of the model against the specs: kill matrix
  txcheck explore <spec.json | trace.itf.json> [--port N] [--max-seconds N]
                                        step through the model in the browser (127.0.0.1 only);
                                        --max-seconds bounds each answer (default 30)
  txcheck worker --redis URL [--workers N] [--lock-seconds N]
                                        take the jobs of check --redis runs from a queue
  txcheck list [--json]                 models, generations, switches, properties, mutants, specs
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

Options of replay:
  --kafka HOST:PORT|VERSION
                          run a Kafka trace against a real broker: one serving at HOST:PORT,
                          or a release (e.g. 4.1.1, fetched with npm run kafka -- fetch) that
                          is started on 127.0.0.1 for the replay and stopped after it
  --kafka-cluster VERSION run it against three nodes of a release (each a broker and a
                          controller) on 127.0.0.1, behind proxies the replay holds: the
                          coordinator's markers wait for the trace, which can time them out or
                          fail the coordinator over; started for the replay, stopped after it
  --tv 1|2                with a release: the transaction.version to finalize (default: the
                          trace's own)
  --variant V             take the trace's steps under another generation or variant of its
                          model (as far as it can take them) and compare the broker with that

Options of worker:
  --redis URL             the Redis server that check --redis runs put their jobs on
  --workers N             walker threads, hence jobs at once (default: the number of cores)
  --lock-seconds N        how long the job of a worker that died stays with it before
                          another worker takes it (default 30)

Exit codes:
  0  check: every checked property holds within the bounds; replay: the trace replays exactly
     and its violation shows again (with --kafka: the broker agrees on every step); mutants: every mutant is killed; the other commands: done
  1  check: a violation was found; replay: the trace diverges, or its violation no longer
     shows (with --kafka: the broker differs, first difference shown); show, report, shrink: the trace does not replay (why is on stderr); mutants: a
     mutant survived
  2  bad input or usage: one line on stderr naming the file, the field and what was expected
  3  check: stopped at a limit before finishing, or random walks found nothing (nothing is
     claimed); compare: a limit left a verdict open; replay --kafka: stopped at a step one
     broker cannot take (named on stderr)
  4  an internal error (a bug, or the machine ran out of memory): one line on stderr;
     replay --kafka: the broker died (after the steps compared so far)
`;

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
  kafka: { type: 'string' },
  'kafka-cluster': { type: 'string' },
  variant: { type: 'string' },
  tv: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  debug: { type: 'boolean' },
} as const;

export type Flags = ReturnType<typeof parseCommandLine>['values'];
type Flag = keyof Flags;

/** The options each command takes, in the order its refusal lists them; --debug goes with every command. */
export const commandFlags = {
  check: [
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
  replay: ['json', 'kafka', 'kafka-cluster', 'tv', 'variant'],
  show: ['format'],
  report: ['out'],
  shrink: ['out', 'json'],
  explore: ['port', 'max-seconds'],
  compare: ['variants', 'markdown', 'json', 'max-states', 'max-seconds'],
  mutants: ['markdown', 'json', 'max-states', 'max-seconds'],
  worker: ['redis', 'workers', 'lock-seconds'],
  conform: ['kafka', 'kafka-cluster', 'variant', 'walks', 'seed', 'max-depth', 'max-seconds', 'out', 'json'],
  list: ['json'],
} as const satisfies Record<string, readonly Flag[]>;

export type CommandName = keyof typeof commandFlags;

/** The options and the positional arguments of `argv`; a misused or repeated option is bad input. */
export function parseCommandLine(argv: readonly string[]) {
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

/** Refuses an option that `command` does not take (--debug goes with every command). */
export function rejectOtherFlags(command: CommandName, flags: Flags): void {
  const allowed: readonly string[] = commandFlags[command];
  const other = Object.keys(flags).find((name) => name !== 'debug' && !allowed.includes(name));
  if (other !== undefined)
    throw new InputError(
      COMMAND_LINE,
      `--${other}`,
      `no such option for ${command} (only ${allowed.map((f) => `--${f}`).join(', ')})`,
    );
  if (flags.json === true && flags.markdown === true)
    throw new InputError(COMMAND_LINE, '--markdown', 'either --markdown or --json, not both');
}

/** The one file a command takes, which `expected` names when it is missing. */
export function fileArgument(command: CommandName, args: readonly string[], expected: string): string {
  const [file, ...extra] = args;
  if (file === undefined) throw new InputError(COMMAND_LINE, command, expected);
  if (extra.length > 0)
    throw new InputError(COMMAND_LINE, extra[0]!, 'nothing more after the file (see txcheck --help)');
  return file;
}

/** A flag's text as a spec field would hold it: a number when it is written as one. */
export const flagValue = (text: string): string | number => (/^-?\d+$/.test(text) ? Number(text) : text);

/** String flags that say how to run or where to write, read elsewhere. */
const NOT_RUN_OPTIONS: ReadonlySet<string> = new Set([
  'out',
  'kafka',
  'kafka-cluster',
  'tv',
  'variant',
  'variants',
  'workers',
  'redis',
  'checkpoint',
  'checkpoint-every',
  'resume',
]);

/** The spec's run options overridden by the flags, with the built-in defaults below both. */
export function runOptions(spec: Spec, flags: Flags): RunOptions {
  const given: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(flags)) {
    if (typeof value === 'string' && !NOT_RUN_OPTIONS.has(name)) given[`--${name}`] = flagValue(value);
  }
  const fields = new Fields(COMMAND_LINE, given);
  const fromFlags = readRunOptions(fields, (o) => o.flag);
  fields.done();
  const options = { strategy: 'bfs' as const, seed: 0, walks: DEFAULT_WALKS, ...spec.defaults, ...fromFlags };
  return options.strategy === 'random' ? { maxDepth: DEFAULT_WALK_DEPTH, ...options } : options;
}

/** --workers: a run option, not a spec field, since it says how to search and not what. */
export function workersOption(flags: Flags): number {
  if (flags.workers === undefined) return availableParallelism();
  return new Fields(COMMAND_LINE, { '--workers': flagValue(flags.workers) }).int('--workers', 1, MAX_WORKERS);
}

/** The bounds of each search of compare and mutants, read as check reads them: from the spec and the flags. */
export function verdictLimits(specFile: string, flags: Flags): Limits {
  const options = runOptions(loadSpecFile(specFile), flags);
  return { maxStates: options.maxStates, maxSeconds: options.maxSeconds };
}

/** How compare and mutants print their verdicts. */
export function tableFormat(flags: Flags): 'text' | 'markdown' | 'json' {
  return flags.json === true ? 'json' : flags.markdown === true ? 'markdown' : 'text';
}
