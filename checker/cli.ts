// The txcheck command line. `main` takes its arguments and output channels as parameters so
// tests can run it in-process; the entry guard at the bottom wires it to the real process.
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { COMMAND_LINE, type Flags, parseCommandLine, usage } from './cli/args.ts';
import * as check from './cli/commands/check.ts';
import * as compare from './cli/commands/compare.ts';
import * as conform from './cli/commands/conform.ts';
import * as explore from './cli/commands/explore.ts';
import * as list from './cli/commands/list.ts';
import * as mutants from './cli/commands/mutants.ts';
import * as replay from './cli/commands/replay.ts';
import * as report from './cli/commands/report.ts';
import * as show from './cli/commands/show.ts';
import * as shrink from './cli/commands/shrink.ts';
import * as worker from './cli/commands/worker.ts';
import { ExitCode, type Io, internalErrorLine, stackOf } from './cli/io.ts';
import { StopOnSignal } from './cli/signals.ts';
import { InputError } from './engine/input.ts';

export { type Io, internalErrorLine } from './cli/io.ts';

type Run = (args: readonly string[], flags: Flags, io: Io) => number | Promise<number>;

/** Each command by name, in the order a wrong name is told them. */
const commands: ReadonlyMap<string, Run> = new Map<string, Run>([
  ['check', check.run],
  ['replay', replay.run],
  ['show', show.run],
  ['report', report.run],
  ['shrink', shrink.run],
  ['explore', explore.run],
  ['compare', compare.run],
  ['conform', conform.run],
  ['mutants', mutants.run],
  ['worker', worker.run],
  ['list', list.run],
]);

export async function main(argv: readonly string[], io: Io): Promise<number> {
  const json = argv.includes('--json');
  try {
    const { values: flags, positionals } = parseCommandLine(argv);
    if (flags.help === true) {
      io.out(usage);
      return ExitCode.Ok;
    }
    const [name, ...args] = positionals;
    const run = name === undefined ? undefined : commands.get(name);
    if (run === undefined)
      throw new InputError(
        COMMAND_LINE,
        'command',
        `${[...commands.keys()].join(', ')} (see txcheck --help)`,
        name === undefined ? 'nothing' : JSON.stringify(name),
      );
    return await run(args, flags, io);
  } catch (e) {
    const message = e instanceof InputError ? e.message : internalErrorLine(e);
    io.err(`${message}\n`);
    if (!(e instanceof InputError) && argv.includes('--debug')) io.err(`${stackOf(e)}\n`);
    if (json) io.out(`${JSON.stringify({ status: 'error', message })}\n`);
    return e instanceof InputError ? ExitCode.BadInput : ExitCode.Internal;
  }
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
