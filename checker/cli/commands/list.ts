// `txcheck list`: the models, generations, switches, properties, mutants and specs one can name.
import { InputError } from '../../engine/input.ts';
import { listData, listText } from '../../list.ts';
import { COMMAND_LINE, type Flags, rejectOtherFlags } from '../args.ts';
import { ExitCode, type Io } from '../io.ts';

/** Takes no word, and --json for the same as one JSON object. */
export function run(args: readonly string[], flags: Flags, io: Io): number {
  rejectOtherFlags('list', flags);
  if (args.length > 0)
    throw new InputError(
      COMMAND_LINE,
      args[0]!,
      'nothing after list but --json (list shows everything at once; see txcheck --help)',
    );
  io.out(flags.json === true ? `${JSON.stringify(listData())}\n` : listText());
  return ExitCode.Ok;
}
