// The mark a distributed run leaves on each Redis server it uses, so that it notices when a server
// loses the run's keys: a restart, whether or not the server saved them, or a FLUSHALL. The mark
// holds the server's run_id (a new one at each start of the server) from when the run began.
// Every round trip of the coordinator and of the workers that reads or writes the run's keys ends
// with a look at the mark, in the same pipeline: a mark that is missing means the keys are gone,
// and another run_id that the server restarted, so that what it holds may be older than the run.
// Either way the run stops with one line rather than count from keys that are not the run's.
import type { ChainableCommander, Redis } from 'ioredis';
import { RUN_KEY_SECONDS } from './jobs.ts';
import { ANSWER_WITHIN_MS, RedisLost, answerFrom } from './redis.ts';

/** Where a run keeps its mark on each server. */
export const epochKey = (run: string): string => `txcheck:run:${run}:epoch`;

/** What a run needs of its servers beyond answering. */
export const KEPT = "a Redis server that keeps the run's keys until the run ends";

/** What the mark of a run that ended holds, and what a job of it then fails with. */
const OVER = 'over';
export const RUN_OVER = 'its run is over';

const runIdOf = (info: unknown): string | undefined =>
  typeof info === 'string' ? /^run_id:(\w+)/m.exec(info)?.[1] : undefined;

/** The server of `client`, for messages. */
export const whereOf = (client: Redis): string => `${client.options.host}:${client.options.port}`;

/** Leaves the run's mark on the server of `client`. */
export async function markServer(client: Redis, run: string, ms = ANSWER_WITHIN_MS): Promise<void> {
  const where = whereOf(client);
  const id = runIdOf(await answerFrom(client.info('server'), where, ms));
  if (id === undefined) throw new RedisLost(`no run_id in the INFO of ${where}`, 'a Redis server');
  await answerFrom(client.set(epochKey(run), id, 'EX', RUN_KEY_SECONDS), where, ms);
}

/** Marks the run over on the server of `client`: a worker that takes one of its jobs from now on drops it. */
export async function markOver(client: Redis, run: string): Promise<void> {
  await client.set(epochKey(run), OVER, 'EX', RUN_KEY_SECONDS);
}

/** Why the mark the last two replies show is not the run's, or undefined when it is. */
function epochLost(replies: [Error | null, unknown][], where: string): string | undefined {
  if (replies.length < 2) return `no replies from ${where}`;
  const [[markError, mark], [infoError, info]] = replies.slice(-2) as [
    [Error | null, unknown],
    [Error | null, unknown],
  ];
  const error = markError ?? infoError;
  if (error !== null) return `${error.message} at ${where}`;
  if (mark === null) return `the run's keys gone from ${where} (flushed, or the server restarted)`;
  if (mark === OVER) return RUN_OVER;
  const id = runIdOf(info);
  if (mark !== id)
    return `${where} restarted during the run (its run_id ${String(id).slice(0, 12)} is not the run's ${String(mark).slice(0, 12)}; what it holds may be older than the run)`;
  return undefined;
}

/**
 * Runs `pipeline` with a look at the run's mark after its commands, within `ms`; resolves with
 * the replies of its own commands, or rejects with a RedisLost when the mark is not the run's.
 */
export async function execMarked(
  client: Redis,
  pipeline: ChainableCommander,
  run: string,
  ms = ANSWER_WITHIN_MS,
): Promise<[Error | null, unknown][]> {
  const where = whereOf(client);
  pipeline.get(epochKey(run)).info('server');
  const replies = (await answerFrom(pipeline.exec(), where, ms)) ?? [];
  const lost = epochLost(replies, where);
  if (lost !== undefined) throw new RedisLost(lost, KEPT);
  return replies.slice(0, -2);
}
