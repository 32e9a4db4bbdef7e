// `txcheck check`: searches a spec's model, checks its invariants and then its liveness
// properties, writes each counterexample as a trace and prints the summary.
import { fileURLToPath } from 'node:url';
import { modelOf } from '../../../specs/build.ts';
import { type RunOptions, type Spec, loadSpecFile, temporalProperties } from '../../../specs/load.ts';
import { sourceDigest } from '../../distributed/digest.ts';
import { Fields, InputError } from '../../engine/input.ts';
import { type Lasso, type LivenessResult, checkLiveness } from '../../engine/liveness.ts';
import type { Model } from '../../engine/model.ts';
import type { Result, SearchOptions, Trace, Violation } from '../../engine/search.ts';
import { shrink, violates } from '../../engine/shrink.ts';
import { traceText } from '../../engine/trace.ts';
import { runSearch } from '../../strategy.ts';
import { TOOL } from '../../version.ts';
import {
  COMMAND_LINE,
  type Flags,
  fileArgument,
  flagValue,
  rejectOtherFlags,
  runOptions,
  workersOption,
} from '../args.ts';
import { ExitCode, type Io } from '../io.ts';
import { checkOutput, checkOutputFolder, writeOutput } from '../output.ts';
import { ProgressLine } from '../progress.ts';
import { jsonSummary, overallStatus, textSummary } from '../summary.ts';

const DEFAULT_CHECKPOINT_SECONDS = 60;

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
  // Before the search, as for --out: a symlink, FIFO or device is never replaced by a checkpoint,
  // and a path that cannot be written is said before the run, not after it.
  if (flags.checkpoint !== undefined) checkOutput(flags.checkpoint, '--checkpoint');
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
      : new Fields(COMMAND_LINE, { '--checkpoint-every': flagValue(every) }).int(
          '--checkpoint-every',
          1,
          86_400,
        );
  // What decides the search a checkpoint belongs to: the spec as written, the depth bound, and the
  // code that builds and packs the states (a changed model would read the saved words wrongly).
  const code = sourceDigest(fileURLToPath(new URL('../../..', import.meta.url)), [
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

export async function run(args: readonly string[], flags: Flags, io: Io): Promise<number> {
  const file = fileArgument('check', args, 'a spec file');
  rejectOtherFlags('check', flags);
  const spec = loadSpecFile(file);
  const options = runOptions(spec, flags);
  const model = modelOf(spec);
  const saving = checkpointOptions(spec, model, flags, options);
  // The proviso of the reduction reads the depths of one search, and a checkpoint saves one search: they run on one thread.
  let workers = spec.reduction || saving.checkpoint !== undefined ? 1 : workersOption(flags);
  if (spec.sleep && (saving.checkpoint !== undefined || saving.resume !== undefined))
    throw new InputError(
      COMMAND_LINE,
      saving.resume !== undefined ? '--resume' : '--checkpoint',
      'none with "reduction": "sleep" (a checkpoint does not save the sleep sets)',
    );
  requireBreadthFirst(spec, options);
  const checkpointFlag =
    flags.checkpoint !== undefined ? '--checkpoint' : flags.resume !== undefined ? '--resume' : undefined;
  const given = {
    workers: flags.workers !== undefined,
    ...(checkpointFlag === undefined ? {} : { checkpoint: checkpointFlag }),
  };
  const onRedis =
    flags.redis === undefined
      ? undefined
      : // Loaded here alone: BullMQ and its Redis client would slow and grow every other command's start.
        await (
          await import('../../distributed/commands.ts')
        ).distributedCheck(spec, options, flags.redis, given);
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

  let shrunkFrom: number | undefined;
  if (result.violation !== undefined && flags.shrink === true) {
    shrunkFrom = result.violation.trace.actions.length;
    result = { ...result, violation: shrunk(model, result.violation) };
  }
  const { traceFile, lassoFiles } = writeTraces(spec, model, options, flags.out, result, live, shrunkFrom);

  const signal = io.stop?.received;
  // A search stopped between two states (time, memory, a signal) left a checkpoint to go on from.
  const saved =
    saving.checkpoint !== undefined &&
    result.status === 'incomplete' &&
    result.stoppedBy !== 'maxStates' &&
    result.stoppedBy !== 'maxDepth'
      ? saving.checkpoint.file
      : undefined;
  const outcome = { spec, options, workers, model, result, traceFile, live, lassoFiles, shrunkFrom, signal };
  if (flags.json === true) {
    const checkpoint = saved === undefined ? {} : { checkpoint: saved };
    io.out(`${JSON.stringify({ ...jsonSummary(outcome), ...checkpoint })}\n`);
  } else {
    io.out(textSummary(outcome));
    if (saved !== undefined)
      io.out(`Checkpoint written to ${saved}; go on with: txcheck check ${spec.file} --resume ${saved}\n`);
  }
  const status = overallStatus(result, live);
  return status === 'ok' ? ExitCode.Ok : status === 'violation' ? ExitCode.Violation : ExitCode.Incomplete;
}

/** Random walks cover some states only: what needs every reachable state needs the breadth-first search. */
function requireBreadthFirst(spec: Spec, options: RunOptions): void {
  if (spec.liveness.length > 0 && options.strategy === 'random') {
    throw new InputError(
      COMMAND_LINE,
      '--strategy',
      '"bfs": the spec checks liveness, which needs the whole state graph',
      '"random"',
    );
  }
  if ((spec.reduction || spec.sleep) && options.strategy === 'random') {
    throw new InputError(
      COMMAND_LINE,
      '--strategy',
      `"bfs": the spec asks for ${spec.sleep ? 'sleep sets' : 'partial-order reduction'}, which the breadth-first search applies`,
      '"random"',
    );
  }
}

/** The violation with its trace shrunk to one that still violates the same property. */
function shrunk(model: Model<unknown, unknown>, violation: Violation): Violation {
  const { property, trace } = violation;
  return {
    ...violation,
    trace: shrink(model, trace.states[0], trace.actions, violates(model, property)).trace,
  };
}

/**
 * Writes the invariant violation's trace and each violated liveness property's lasso: the first
 * to --out (or out/<spec>.<property>.itf.json), the others beside it, named by their property.
 */
function writeTraces(
  spec: Spec,
  model: Model<unknown, unknown>,
  options: RunOptions,
  out: string | undefined,
  result: Result,
  live: LivenessResult | undefined,
  shrunkFrom: number | undefined,
): { traceFile: string | undefined; lassoFiles: ReadonlyMap<string, string> } {
  const baseMeta = { tool: TOOL, spec: spec.raw, specFile: spec.file, strategy: options.strategy };
  const written: string[] = [];
  const write = (property: string, trace: Trace | Lasso, description: string, extra: object = {}): string => {
    const defaultFile = `out/${spec.name}.${property}.itf.json`;
    const path =
      out === undefined
        ? defaultFile
        : written.length === 0
          ? out
          : out.replace(/(\.itf)?\.json$/, '') + `.${property}.itf.json`;
    writeOutput(
      path,
      traceText(model, trace, { ...baseMeta, ...extra, property, description }),
      out === undefined,
    );
    written.push(path);
    return path;
  };

  let traceFile: string | undefined;
  if (result.violation !== undefined) {
    const { property, trace, walk } = result.violation;
    const random = options.strategy === 'random' ? { seed: options.seed, walk } : {};
    const shrinking = shrunkFrom === undefined ? {} : { shrunkFrom };
    const how = `${shrunkFrom === undefined ? '' : `shrunk from ${shrunkFrom} steps, `}${options.strategy} search of ${spec.file}`;
    traceFile = write(property, trace, `${property} violated after ${trace.actions.length} steps (${how})`, {
      ...random,
      ...shrinking,
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
  return { traceFile, lassoFiles };
}
