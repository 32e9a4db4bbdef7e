// `txcheck report`: a counterexample as one HTML file to click through, which works offline.
import { basename } from 'node:path';
import { renderHtml } from '../../report/html.ts';
import { TOOL } from '../../version.ts';
import { type Flags, fileArgument, rejectOtherFlags } from '../args.ts';
import { ExitCode, type Io } from '../io.ts';
import { checkOutput, writeOutput } from '../output.ts';
import { reportOf } from '../saved-trace.ts';

export function run(args: readonly string[], flags: Flags, io: Io): number {
  const file = fileArgument('report', args, 'a trace file');
  rejectOtherFlags('report', flags);
  const out = flags.out ?? `out/${basename(file).replace(/(\.itf)?\.json$/, '')}.html`;
  checkOutput(out, '--out', flags.out === undefined);
  const report = reportOf(file, io);
  if (report === undefined) return ExitCode.Violation;
  writeOutput(out, renderHtml(report), flags.out === undefined);
  io.out(
    `${TOOL}: report of ${file} (${report.steps.length - 1} steps, ${report.property}) written to ${out}\n`,
  );
  return ExitCode.Ok;
}
