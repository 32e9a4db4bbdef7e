// `txcheck shrink`: a shorter trace that still violates the same property.
import { InputError } from '../../engine/input.ts';
import { shrink, violates } from '../../engine/shrink.ts';
import { initialStateOf, replay, traceText } from '../../engine/trace.ts';
import { TOOL } from '../../version.ts';
import { type Flags, fileArgument, rejectOtherFlags } from '../args.ts';
import { ExitCode, type Io } from '../io.ts';
import { checkOutput, writeOutput } from '../output.ts';
import { loadTrace } from '../saved-trace.ts';

export function run(args: readonly string[], flags: Flags, io: Io): number {
  const file = fileArgument('shrink', args, 'a trace file');
  rejectOtherFlags('shrink', flags);
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
