// `txcheck conform`: random runs of a Kafka spec's model replayed against a real broker.
import { loadSpecFile, parseSpec } from '../../../specs/load.ts';
import type { WalkResult } from '../../../referee/conform.ts';
import type { Timings } from '../../../referee/replay/walk.ts';
import { InputError } from '../../engine/input.ts';
import { REFEREE_AGREEMENT, traceText } from '../../engine/trace.ts';
import { TOOL } from '../../version.ts';
import {
  COMMAND_LINE,
  FlagValueError,
  type Flags,
  fileArgument,
  rejectOtherFlags,
  runOptions,
} from '../args.ts';
import { ExitCode, type Io } from '../io.ts';
import { checkOutput, checkOutputFolder, writeOutput } from '../output.ts';

const DEFAULT_WALKS = 20;
const DEFAULT_DEPTH = 40;

export async function run(args: readonly string[], flags: Flags, io: Io): Promise<number> {
  const file = fileArgument('conform', args, 'a Kafka spec file');
  rejectOtherFlags('conform', flags);
  if (flags.kafka !== undefined && flags['kafka-cluster'] !== undefined)
    throw new InputError(COMMAND_LINE, '--kafka-cluster', 'either --kafka or --kafka-cluster, not both');
  const cluster = flags['kafka-cluster'] !== undefined;
  const kafka = flags.kafka ?? flags['kafka-cluster'];
  if (kafka === undefined)
    throw new InputError(
      COMMAND_LINE,
      '--kafka',
      'the broker to run against: HOST:PORT or a release such as 4.1.1 (or --kafka-cluster RELEASE)',
    );
  const kafkaFlag = cluster ? '--kafka-cluster' : '--kafka';
  const loaded = loadSpecFile(file);
  if (loaded.entry.name !== 'kafka')
    throw new InputError(
      file,
      'model',
      'a Kafka spec (conform drives Kafka brokers)',
      JSON.stringify(loaded.entry.name),
    );
  let raw = loaded.raw;
  if (flags.variant !== undefined) {
    const known = loaded.entry.variants?.map((v) => v.name) ?? [];
    if (!known.includes(flags.variant))
      throw new InputError(
        COMMAND_LINE,
        '--variant',
        `one of ${known.join(', ')}`,
        JSON.stringify(flags.variant),
      );
    raw = loaded.entry.withVariant!(raw, flags.variant) as typeof raw;
  }
  const spec = parseSpec(file, raw, '');
  const options = runOptions(spec, flags);
  if (flags.out === undefined) checkOutputFolder(`out/${spec.name}.conform-walk*.itf.json`, 'out', true);
  else checkOutput(flags.out);
  const json = flags.json === true;
  const { conform } = await import('../../../referee/conform.ts');
  const { isSetupError } = await import('../../../referee/replay/index.ts');
  if (!json) io.out(`${TOOL}: conform ${file} against ${cluster ? `a cluster of Kafka ${kafka}` : kafka}\n`);
  let result;
  try {
    result = await conform({
      target: kafka,
      cluster,
      params: spec.params,
      seed: options.seed,
      walks: flags.walks === undefined ? DEFAULT_WALKS : options.walks,
      maxDepth: options.maxDepth ?? DEFAULT_DEPTH,
      ...(options.maxSeconds === undefined ? {} : { maxSeconds: options.maxSeconds }),
      onWalk: json ? undefined : (w) => io.out(walkLine(w)),
      shouldStop: () => io.stop?.received !== undefined,
    });
  } catch (e) {
    if (isSetupError(e)) throw new FlagValueError(`${kafkaFlag} ${kafka}`, (e as Error).message);
    throw e;
  }
  const differ = result.walks.filter((w) => w.status === 'diverges');
  const { conformTrace } = await import('../../../referee/conform-trace.ts');
  const model = spec.entry.build(spec.params, spec.properties);
  const traceFiles = differ.map((w, k) => {
    const { trace, observed, difference } = conformTrace(
      spec.params as never,
      w.shrunk!,
      w.observed!,
      cluster ? 'cluster' : 'broker',
    );
    const path =
      flags.out === undefined
        ? `out/${spec.name}.conform-walk${w.walk}.itf.json`
        : k === 0
          ? flags.out
          : `${flags.out.replace(/(\.itf)?\.json$/, '')}.walk${w.walk}.itf.json`;
    const meta = {
      tool: TOOL,
      spec: raw,
      specFile: file,
      strategy: 'conform',
      seed: options.seed,
      walk: w.walk,
      property: REFEREE_AGREEMENT,
      description: `${result.broker} (transaction.version ${result.transactionVersion}) differs from the model at step ${difference.step} in ${difference.what} (walk ${w.walk} of seed ${options.seed}, shrunk from ${w.steps} steps)`,
      referee: result.broker,
      difference,
    };
    writeOutput(path, traceText(model, trace, meta, observed), flags.out === undefined);
    return path;
  });
  const steps = result.walks.reduce((n, w) => n + w.steps, 0);
  const byKind = new Map<string, number>();
  for (const w of differ) byKind.set(w.difference!, (byKind.get(w.difference!) ?? 0) + 1);
  const summary = {
    broker: result.broker,
    transactionVersion: result.transactionVersion,
    walks: result.walks.length,
    stepsCompared: steps,
    agreements: result.walks.filter((w) => w.status === 'agrees').length,
    divergences: Object.fromEntries(byKind),
    ...(result.stoppedBy === undefined ? {} : { stoppedBy: result.stoppedBy }),
    notUnderControl: {
      brokerWork: Object.fromEntries(result.timings.brokerWork),
      passedOver: Object.fromEntries(result.timings.passedOver),
    },
  };
  const runs = result.walks.map(({ observed: _, ...w }) => w);
  if (json) io.out(`${JSON.stringify({ ...summary, traceFiles, runs })}\n`);
  else {
    const kinds = [...byKind].map(([k, n]) => `${n} at ${k}`).join(', ');
    io.out(
      `${summary.walks} walks on ${result.broker} (transaction.version ${result.transactionVersion}), ${steps} steps compared: ${summary.agreements} agree, ${differ.length} differ${kinds === '' ? '' : ` (${kinds})`}${result.stoppedBy === undefined ? '' : `; stopped by ${result.stoppedBy === 'signal' ? io.stop!.received : result.stoppedBy}`}\n`,
    );
    io.out(timingLines(result.timings));
    for (const [k, w] of differ.entries())
      io.out(
        `walk ${w.walk}, shortest found (${w.shrunk!.length} steps), saved to ${traceFiles[k]}:\n${w.shrunk!.map((l) => `  ${l}\n`).join('')}`,
      );
  }
  if (result.stoppedBy === 'broker-died' || result.walks.some((w) => w.status === 'error'))
    return ExitCode.Internal;
  if (differ.length > 0) return ExitCode.Violation;
  return result.stoppedBy === 'signal' ? ExitCode.Incomplete : ExitCode.Ok;
}

/** The broker's timings the walks did not choose, for the person reading the summary. */
function timingLines({ brokerWork, passedOver }: Timings): string {
  const list = (counts: Map<string, number>) => [...counts].map(([k, n]) => `${k} ${n}`).join(', ');
  return [
    brokerWork.size === 0
      ? ''
      : `not under the driver's control: the broker's own work, done at once after each step (${list(brokerWork)})\n`,
    passedOver.size === 0
      ? ''
      : `not driven: steps the broker takes at a moment of its own, enabled and passed over (${list(passedOver)})\n`,
  ].join('');
}

function walkLine(w: WalkResult): string {
  return `walk ${w.walk}: ${w.message}\n`;
}
