// `txcheck show`: a counterexample step by step, as a sequence diagram, or as JSON.
import { Fields } from '../../engine/input.ts';
import { renderMermaid } from '../../report/mermaid.ts';
import { renderText } from '../../report/text.ts';
import { COMMAND_LINE, type Flags, fileArgument, rejectOtherFlags } from '../args.ts';
import { ExitCode, type Io } from '../io.ts';
import { reportOf } from '../saved-trace.ts';

const formats = ['text', 'mermaid', 'json'] as const;

export function run(args: readonly string[], flags: Flags, io: Io): number {
  const file = fileArgument('show', args, 'a trace file');
  rejectOtherFlags('show', flags);
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
