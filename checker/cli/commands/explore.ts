// `txcheck explore`: serves the explorer page for a spec or a trace until the process is
// interrupted; the traces it saves go to out/.
import { Fields, InputError } from '../../engine/input.ts';
import { DEFAULT_ANSWER_SECONDS, type RunningExplorer, startExplorer } from '../../explorer/server.ts';
import { TOOL } from '../../version.ts';
import { COMMAND_LINE, type Flags, fileArgument, flagValue, rejectOtherFlags } from '../args.ts';
import { ExitCode, type Io } from '../io.ts';
import { checkOutputFolder } from '../output.ts';

const DEFAULT_EXPLORER_PORT = 8421;

export async function run(args: readonly string[], flags: Flags, io: Io): Promise<number> {
  const file = fileArgument('explore', args, 'a spec or trace file');
  rejectOtherFlags('explore', flags);
  const fields = new Fields(COMMAND_LINE, {
    '--port': flags.port === undefined ? DEFAULT_EXPLORER_PORT : flagValue(flags.port),
    '--max-seconds':
      flags['max-seconds'] === undefined ? DEFAULT_ANSWER_SECONDS : flagValue(flags['max-seconds']),
  });
  const port = fields.int('--port', 1, 65535);
  const maxSeconds = fields.int('--max-seconds', 1, 86_400);
  checkOutputFolder('out/explore-1.itf.json', 'out', true);
  let running: RunningExplorer;
  try {
    running = await startExplorer(file, 'out', { port, maxSeconds });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (e instanceof InputError || code === undefined) throw e;
    throw new InputError(COMMAND_LINE, '--port', 'a free port on 127.0.0.1', code);
  }
  io.out(`${TOOL}: exploring ${file} at ${running.url} (Ctrl-C stops it; saved traces go to out/)\n`);
  await new Promise<void>((resolve) => {
    const stop = (): void => void running.close().then(resolve);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return ExitCode.Ok;
}
