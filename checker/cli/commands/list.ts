// `txcheck list`: the models, generations, switches, properties, mutants and specs one can name.
import { listText } from '../../list.ts';
import { ExitCode, type Io } from '../io.ts';

/** Takes no file and ignores any option. */
export function run(io: Io): number {
  io.out(listText());
  return ExitCode.Ok;
}
