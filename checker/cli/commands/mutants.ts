// `txcheck mutants`: every mutant of the model against the specs, as a kill matrix.
import { loadSpecFile } from '../../../specs/load.ts';
import { mutantsCommand } from '../../compare.ts';
import { InputError } from '../../engine/input.ts';
import { COMMAND_LINE, type Flags, rejectOtherFlags, tableFormat, verdictLimits } from '../args.ts';
import type { Io } from '../io.ts';

export function run(files: readonly string[], flags: Flags, io: Io): number {
  rejectOtherFlags('mutants', flags);
  if (files.length === 0) throw new InputError(COMMAND_LINE, 'mutants', 'a spec file');
  const specs = files.map((file) => ({ file, raw: loadSpecFile(file).raw }));
  return mutantsCommand(specs, verdictLimits(files[0]!, flags), tableFormat(flags), io);
}
