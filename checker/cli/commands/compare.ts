// `txcheck compare`: one spec under each of several variants, a verdict per property.
import { loadSpecFile } from '../../../specs/load.ts';
import { compareCommand } from '../../compare.ts';
import { InputError } from '../../engine/input.ts';
import { COMMAND_LINE, type Flags, rejectOtherFlags, tableFormat, verdictLimits } from '../args.ts';
import type { Io } from '../io.ts';

export function run(files: readonly string[], flags: Flags, io: Io): number {
  rejectOtherFlags('compare', flags);
  if (files.length === 0) throw new InputError(COMMAND_LINE, 'compare', 'a spec file');
  if (files.length > 1) throw new InputError(COMMAND_LINE, files[1]!, 'one spec file for compare');
  const file = files[0]!;
  const { raw } = loadSpecFile(file);
  const limits = verdictLimits(file, flags);
  if (flags.variants === undefined)
    throw new InputError(COMMAND_LINE, '--variants', 'a comma-separated list of variants (see txcheck list)');
  const variants = flags.variants.split(',');
  // Twice the same search would only print the same row twice: a slip, said before any work.
  const repeated = variants.find((v, i) => variants.indexOf(v) !== i);
  if (repeated !== undefined)
    throw new InputError(
      COMMAND_LINE,
      '--variants',
      'each variant once',
      `${JSON.stringify(repeated)} ${variants.filter((v) => v === repeated).length} times`,
    );
  return compareCommand(file, raw, variants, limits, tableFormat(flags), io);
}
