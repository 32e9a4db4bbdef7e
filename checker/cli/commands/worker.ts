// `txcheck worker`: takes the jobs of `check --redis` runs from a queue in Redis.
import { InputError } from '../../engine/input.ts';
import { COMMAND_LINE, type Flags, rejectOtherFlags, workersOption } from '../args.ts';
import type { Io } from '../io.ts';

export async function run(args: readonly string[], flags: Flags, io: Io): Promise<number> {
  if (args.length > 0)
    throw new InputError(COMMAND_LINE, args[0]!, 'nothing after worker (see txcheck --help)');
  rejectOtherFlags('worker', flags);
  // Loaded here alone: BullMQ and its Redis client would slow and grow every other command's start.
  const { workerCommand } = await import('../../distributed/commands.ts');
  return await workerCommand(flags.redis, workersOption(flags), flags['lock-seconds'], io);
}
