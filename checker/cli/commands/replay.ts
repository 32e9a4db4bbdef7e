// `txcheck replay`: re-runs a saved counterexample and says whether its violation still shows.
import { temporalProperties } from '../../../specs/load.ts';
import { replay } from '../../engine/trace.ts';
import { TOOL } from '../../version.ts';
import { type Flags, fileArgument, rejectOtherFlags } from '../args.ts';
import { ExitCode, type Io } from '../io.ts';
import { loadTrace } from '../saved-trace.ts';

export function run(args: readonly string[], flags: Flags, io: Io): number {
  const file = fileArgument('replay', args, 'a trace file');
  rejectOtherFlags('replay', flags);
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
