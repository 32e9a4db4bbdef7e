// `txcheck replay`: re-runs a saved counterexample and says whether its violation still shows;
// with --kafka, runs it against a real Kafka broker too, step by step.
import { type Spec, parseSpec, temporalProperties } from '../../../specs/load.ts';
import type { KafkaReplayResult, StepResult, Violation } from '../../../referee/replay/index.ts';
import { InputError } from '../../engine/input.ts';
import { replay } from '../../engine/trace.ts';
import { TOOL } from '../../version.ts';
import { COMMAND_LINE, FlagValueError, type Flags, fileArgument, rejectOtherFlags } from '../args.ts';
import { ExitCode, type Io } from '../io.ts';
import { loadTrace } from '../saved-trace.ts';

export async function run(args: readonly string[], flags: Flags, io: Io): Promise<number> {
  const file = fileArgument('replay', args, 'a trace file');
  rejectOtherFlags('replay', flags);
  if (flags.kafka !== undefined && flags['kafka-cluster'] !== undefined)
    throw new InputError(COMMAND_LINE, '--kafka-cluster', 'either --kafka or --kafka-cluster, not both');
  const cluster = flags['kafka-cluster'] !== undefined;
  const kafka = flags.kafka ?? flags['kafka-cluster'];
  const kafkaFlag = cluster ? '--kafka-cluster' : '--kafka';
  for (const flag of ['tv', 'variant'] as const)
    if (flags[flag] !== undefined && kafka === undefined)
      throw new InputError(COMMAND_LINE, `--${flag}`, `--${flag} together with --kafka or --kafka-cluster`);
  const tv = flags.tv === undefined ? undefined : Number(flags.tv);
  if (tv !== undefined && tv !== 1 && tv !== 2)
    throw new InputError(COMMAND_LINE, '--tv', 'transaction version 1 or 2', JSON.stringify(flags.tv));
  const { trace, spec, model } = loadTrace(file);
  if (kafka !== undefined && spec.entry.name !== 'kafka')
    throw new InputError(
      file,
      '#meta.spec.model',
      'a Kafka trace (replay --kafka drives Kafka brokers)',
      JSON.stringify(spec.entry.name),
    );
  const raw =
    flags.variant === undefined ? trace.meta.spec : retargeted(spec, trace.meta.spec, flags.variant);
  const { reproduced, message } = replay(model, trace, {
    properties: temporalProperties(spec),
    fairness: spec.fairness,
  });
  const json = flags.json === true;
  const loop = trace.loop === undefined ? {} : { loop: trace.loop };
  if (kafka === undefined || !reproduced) {
    if (json) {
      io.out(
        `${JSON.stringify({ status: reproduced ? 'reproduced' : 'diverged', property: trace.meta.property, steps: trace.actions.length, ...loop, message })}\n`,
      );
    } else {
      const cycle = trace.loop === undefined ? '' : `, cycle from step ${trace.loop}`;
      io.out(`${TOOL}: replay ${file} (model ${spec.entry.name}, ${trace.actions.length} steps${cycle})\n`);
      io.out(`${reproduced ? 'Reproduced' : 'Not reproduced'}: ${message}\n`);
      if (kafka !== undefined)
        io.out('Not run against Kafka: the trace must replay against its model first\n');
    }
    return reproduced ? ExitCode.Ok : ExitCode.Violation;
  }
  // The referee is loaded only for --kafka: a replay against the model alone needs none of it.
  const { replayOnKafka, isSetupError, atTransactionVersion } =
    await import('../../../referee/replay/index.ts');
  const retargetedSpec = parseSpec(
    file,
    tv === undefined ? raw : atTransactionVersion(raw, tv),
    '#meta.spec',
  );
  const against = cluster ? `a cluster of Kafka ${kafka}` : kafka;
  if (!json) io.out(`${TOOL}: replay ${file} against ${against} (${trace.actions.length} steps)\n`);
  let result: KafkaReplayResult;
  try {
    result = await replayOnKafka({
      target: kafka,
      cluster,
      ...(tv === undefined ? {} : { tv }),
      params: retargetedSpec.params,
      labels: trace.actions,
      property: trace.meta.property,
      onStep: json ? undefined : (r) => io.out(stepLine(r)),
      shouldStop: () => io.stop?.received !== undefined,
    });
  } catch (e) {
    if (isSetupError(e)) throw new FlagValueError(`${kafkaFlag} ${kafka}`, (e as Error).message);
    throw e;
  }
  const versions =
    result.transactionVersion === result.modelTransactionVersion
      ? `transaction.version ${result.transactionVersion}`
      : `transaction.version ${result.transactionVersion}, the model's ${result.modelTransactionVersion}`;
  const verdict = `${result.message.replace('Kafka', result.broker)} (${versions})`;
  if (json) io.out(`${JSON.stringify({ ...result, message: verdict })}\n`);
  else if (result.status === 'agrees' || result.status === 'diverges') io.out(`${capitalized(verdict)}\n`);
  else io.err(`${TOOL}: ${verdict}\n`);
  if (!json && result.status === 'agrees')
    io.out(`${violationLine(trace.meta.property, result.violation)}\n`);
  return exitCodes[result.status];
}

/** The trace's raw spec under `variant`, which its model must know. */
function retargeted(
  spec: Spec,
  raw: Readonly<Record<string, unknown>>,
  variant: string,
): Readonly<Record<string, unknown>> {
  const known = spec.entry.variants?.map((v) => v.name) ?? [];
  if (!known.includes(variant) || spec.entry.withVariant === undefined)
    throw new InputError(COMMAND_LINE, '--variant', `one of ${known.join(', ')}`, JSON.stringify(variant));
  return spec.entry.withVariant(raw, variant) as Readonly<Record<string, unknown>>;
}

function violationLine(property: string, violation: Violation): string {
  switch (violation) {
    case 'shows':
      return `${property} is violated at the end of the replayed run, as in the trace.`;
    case 'gone':
      return `${property} is not violated at the end: with the broker's own work done at once, as one broker does it, the trace's interleaving is gone (it needs that work held back).`;
    default:
      return `${property} was not checked at the end (${violation}).`;
  }
}

const exitCodes = {
  agrees: ExitCode.Ok,
  diverges: ExitCode.Violation,
  unsupported: ExitCode.Incomplete,
  'broker-died': ExitCode.Internal,
} as const;

function stepLine(r: StepResult): string {
  const mark = r.difference === undefined ? ' ' : '✗';
  return `${mark} ${String(r.index).padStart(3)}  ${r.label}: ${r.did}\n`;
}

const capitalized = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);
