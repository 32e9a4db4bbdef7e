// The command line's side of a distributed run: `check --redis URL` (the coordinator) and
// `worker --redis URL`. Both read their flags here, one InputError line for each bad one.
import { fileURLToPath } from 'node:url';
import { modelRecipe } from '../../specs/build.ts';
import { type RunOptions, type Spec, filesReadBy, parseSpec } from '../../specs/load.ts';
import { Fields, InputError } from '../engine/input.ts';
import type { Model } from '../engine/model.ts';
import type { Progress } from '../engine/search.ts';
import { distributedBfs } from './bfs-coordinator.ts';
import { type DistributedRun, distributedSwarm } from './coordinator.ts';
import { sourceDigest, specDigest, specFiles } from './digest.ts';
import { RedisLost, checkServer, redisAddress } from './redis.ts';
import { type WorkerProgress, runWorker } from './worker.ts';

const COMMAND_LINE = 'command line';
const REDIS = '--redis';

/** The package's root: the clone, or dist/ in the build, whose files are then JavaScript. */
const root = fileURLToPath(new URL('../..', import.meta.url));
/** What the walks of a spec depend on, besides the spec: the models, the spec layer, the engine and this walker. */
const MODEL_SOURCES = ['model', 'specs', 'checker/engine', 'checker/distributed'];

/** RunDigest.model of this installation. */
export const modelSourceDigest = (): string => sourceDigest(root, MODEL_SOURCES);

/** The search of `check --redis`; `say` prints a line of news (that no worker takes the jobs). */
export type DistributedSearch = (
  model: Model<unknown, unknown>,
  say: (line: string) => void,
  onProgress?: (p: Progress) => void,
  stop?: Int32Array,
) => Promise<DistributedRun>;

/** What `check` was given besides the run options that a distributed run does not take. */
export interface CheckGiven {
  readonly workers: boolean;
  /** --checkpoint or --resume, when one was given. */
  readonly checkpoint?: string;
}

/**
 * Checks the flags of `check --redis` and that Redis answers, before anything is searched;
 * resolves with the search to run. For breadth-first search `urls` may list several servers,
 * comma-separated: the first holds the queue, and the visited set is sharded over them all.
 */
export async function distributedCheck(
  spec: Spec,
  options: RunOptions,
  urls: string,
  given: CheckGiven,
): Promise<DistributedSearch> {
  const bfs = options.strategy === 'bfs';
  if (given.workers)
    throw new InputError(
      COMMAND_LINE,
      '--workers',
      `no --workers with ${REDIS}: each txcheck worker takes its own --workers`,
    );
  // A worker's visited set and memory are its own: a bound over the whole run would not be the one-machine bound.
  if (options.maxStates !== undefined)
    throw new InputError(
      COMMAND_LINE,
      '--max-states',
      `no --max-states (or spec maxStates) with ${REDIS}: bound a distributed run by ${bfs ? '--max-depth' : '--walks'} or --max-seconds`,
    );
  if (options.maxMemory !== undefined)
    throw new InputError(
      COMMAND_LINE,
      '--max-memory',
      `no --max-memory (or spec maxMemory) with ${REDIS}: each worker stops on its own before its heap is full`,
    );
  if (given.checkpoint !== undefined)
    throw new InputError(
      COMMAND_LINE,
      given.checkpoint,
      `no ${given.checkpoint} with ${REDIS}: a checkpoint saves the search of one machine`,
    );
  if (spec.reduction || spec.sleep)
    throw new InputError(
      spec.file,
      'reduction',
      `"none" with ${REDIS} (the reduced search runs on one thread)`,
      spec.sleep ? 'sleep' : 'por',
    );
  if (spec.liveness.length > 0)
    throw new InputError(
      spec.file,
      'liveness',
      `no liveness properties with ${REDIS} (liveness is checked on the state graph of one machine)`,
      spec.liveness.join(', '),
    );
  const addresses = urls.split(',').map((url) => redisAddress(url, COMMAND_LINE, REDIS));
  if (!bfs && addresses.length > 1)
    throw new InputError(
      COMMAND_LINE,
      REDIS,
      'one redis://host:port URL with --strategy random (a list shards the visited set of breadth-first search)',
      JSON.stringify(urls),
    );
  const servers = addresses.map((a) => `${a.host}:${a.port}`);
  const twice = servers.find((server, i) => servers.indexOf(server) !== i);
  if (twice !== undefined)
    throw new InputError(COMMAND_LINE, REDIS, 'each Redis server once in the list', `${twice} twice`);
  for (const address of addresses) await checkServer(address, COMMAND_LINE, REDIS);
  const digest = { spec: specDigest(spec.raw, specFiles(filesReadBy(spec.raw))), model: modelSourceDigest() };
  const job = { file: spec.file, raw: spec.raw };
  const { seed, walks, maxSeconds, maxDepth } = options;
  return (model, say, onProgress, stop) => {
    // Its states travel between machines as packed words.
    if (bfs && (model.pack === undefined || model.unpack === undefined))
      throw new InputError(
        COMMAND_LINE,
        REDIS,
        `with --strategy bfs, a model that packs its states (model ${spec.entry.name} does not)`,
      );
    const common = {
      say,
      deadlockAllowed: spec.deadlockAllowed,
      ...(maxSeconds === undefined ? {} : { maxSeconds }),
      ...(onProgress === undefined ? {} : { onProgress }),
      ...(stop === undefined ? {} : { stop }),
    };
    const search = bfs
      ? distributedBfs(model, job, digest, addresses, {
          ...common,
          ...(maxDepth === undefined ? {} : { maxDepth }),
        })
      : distributedSwarm(model, job, digest, addresses[0]!, { ...common, seed, walks, maxDepth: maxDepth! });
    return search.catch((e: unknown) => {
      if (e instanceof RedisLost) throw new InputError(COMMAND_LINE, REDIS, e.expected, e.why);
      throw e;
    });
  };
}

export interface WorkerIo {
  out(text: string): void;
  err(text: string): void;
  readonly errIsTTY: boolean;
  readonly stop?: { readonly flag: Int32Array; readonly received: string | undefined };
}

const DEFAULT_LOCK_SECONDS = 30;
const count = (n: number) => Math.round(n).toLocaleString('en-US');

/** `txcheck worker --redis URL`: takes jobs until a signal; exit 0. */
export async function workerCommand(
  url: string | undefined,
  threads: number,
  lockSeconds: string | undefined,
  io: WorkerIo,
): Promise<number> {
  if (url === undefined)
    throw new InputError(COMMAND_LINE, REDIS, 'the redis://host:port URL of the queue to take jobs from');
  const given =
    lockSeconds === undefined
      ? {}
      : { '--lock-seconds': /^-?\d+$/.test(lockSeconds) ? Number(lockSeconds) : lockSeconds };
  const lock = new Fields(COMMAND_LINE, given).int('--lock-seconds', 1, 3600, DEFAULT_LOCK_SECONDS);
  const address = redisAddress(url, COMMAND_LINE, REDIS);
  await checkServer(address, COMMAND_LINE, REDIS);
  const stop = io.stop?.flag ?? new Int32Array(new SharedArrayBuffer(4));
  io.out(
    `txcheck worker: taking jobs from ${address.url} on ${threads} thread${threads === 1 ? '' : 's'} (SIGTERM or Ctrl-C stops; a job under way goes back to the queue)\n`,
  );
  let shown = false;
  const line = (p: WorkerProgress) =>
    `${count(p.jobs)} jobs, ${count(p.walks)} walks, ${count(p.statesGenerated)} states generated, ${count(p.seconds > 0 ? p.statesGenerated / p.seconds : 0)} states/s` +
    `${p.refused === 0 ? '' : `, ${count(p.refused)} refused`}, ${p.seconds.toFixed(0)} s`;
  const done = await runWorker({
    address,
    threads,
    lockMs: lock * 1000,
    modelDigest: modelSourceDigest(),
    recipeOf: (file, raw) => modelRecipe(parseSpec(file, raw, '')),
    filesReadBy,
    stop,
    say: (text) => io.err(`${shown ? '\r\x1b[K' : ''}txcheck worker: ${text}\n`),
    onProgress: io.errIsTTY
      ? (p) => {
          shown = true;
          io.err(`\r${line(p)}\x1b[K`);
        }
      : undefined,
  });
  if (shown) io.err('\r\x1b[K');
  io.out(
    `txcheck worker: stopped${io.stop?.received === undefined ? '' : ` by ${io.stop.received}`}: ${line(done)}\n`,
  );
  return 0;
}
