// The coordinator of a distributed breadth-first search in which the owners of the states compute
// each level, and the coordinator only keeps the level barrier and adds up counts: it never
// handles a state's words.
//
// Every fingerprint has an owner, one of the run's shards (SHARDS_PER_SERVER on each server),
// where its part of the visited set, its inboxes and its states are kept. Level d is searched in
// two steps. Expand: jobs of consecutive positions of level d (a state's position in its level is
// its id on one machine, less the level's first id) gather their states from the shards, expand
// them in position order, drop the successors the visited set holds, and send the rest, batched,
// to their owners: fingerprints and keys (parent position, action index) to the owner's inbox,
// words beside it, grouped by the block of positions their parent is in (GROUPS_PER_JOB blocks
// to a job). Own: once every expand job is done, one job per server takes each of its shards that
// received something: it takes the shard's inbox in job order, keeps each fingerprint at its
// first sight, which is its least key since jobs hold consecutive positions and send in key
// order, and in one transaction per shard adds the winners to its part of the visited set and
// keeps, per group, which of the words sent won. Each answers
// how many states it keeps per group; the sums give each group's first position, and the next
// level's jobs are cut from them. So each state gets its position on one machine, and its words
// cross the network twice: to its owner's server, and from there to the job that expands it.
//
// The event reported is the one of least key, as on one machine: a deadlock of the state at
// position p as (p, -1), or a violation: the least of each expand job's first violating successor
// sent, which is the least over the level (a state that breaks an invariant in one job breaks it
// in every job that sends it). The level in which one is met is decided first. An expand job
// keeps its states' keys in Redis (jobTrailKey); a counterexample is read back from them and
// replayed here from its initial state. Every round trip looks at the run's mark too (epoch.ts).
import type { Model } from '../engine/model.ts';
import { DEADLOCK, type Limit, type Result, rebuildTrace } from '../engine/search.ts';
import type { DistributedRun } from './coordinator.ts';
import type { RunDigest } from './digest.ts';
import {
  EXPAND_JOB,
  GROUPS_PER_JOB,
  type ExpandAnswer,
  type ExpandJob,
  OWN_JOB,
  type OwnAnswer,
  type OwnJob,
  RUN_KEY_SECONDS,
  type WalkJob,
  inboxKey,
  jobTrailKey,
  levelKey,
  ownedKey,
  shardVisitedKey,
  wordsKey,
} from './jobs.ts';
import { QueueRun, type QueueRunOptions } from './queue-run.ts';
import type { RedisAddress } from './redis.ts';
import { serverOf } from './visited-shards.ts';

export interface DistributedBfsOptions extends QueueRunOptions {
  readonly maxDepth?: number;
  readonly deadlockAllowed: boolean;
}

/** Shards on each server: enough own jobs a level to keep a few workers busy per server. */
export const SHARDS_PER_SERVER = 16;
/** Jobs a level is cut into when it is large enough: a few per worker of a small cluster, so that none waits long at the level's end. */
const JOBS_PER_LEVEL = 16;
/** States per job: enough to outweigh its round trips through Redis, few enough for a job of some hundred kilobytes. */
const MIN_STATES_PER_JOB = 128;
const MAX_STATES_PER_JOB = 1024;
/** How often the run's trails and visited sets have their expiry renewed. */
const RENEW_EVERY_MS = 60_000;

/** The first event one machine would meet: of key (parent, action) at level `level` + 1, or a deadlock at (parent, -1) at `level`. */
interface Found {
  readonly property: string;
  /** The level of the parent (-1 for an initial state, whose action is its index in init()). */
  readonly level: number;
  readonly parent: number;
  readonly action: number;
}

/** What the expand jobs of a level were: where each starts, for reading the trail back. */
interface Expanded {
  readonly starts: number[];
}

type Answer = ExpandAnswer | OwnAnswer;

export async function distributedBfs<S, A>(
  model: Model<S, A>,
  spec: WalkJob['spec'],
  digest: RunDigest,
  servers: readonly RedisAddress[],
  options: DistributedBfsOptions,
): Promise<DistributedRun> {
  const shards = servers.length * SHARDS_PER_SERVER;
  const maxDepth = options.maxDepth ?? Infinity;
  const fired: Record<string, number> = Object.fromEntries(model.actionKinds.map((k) => [k, 0]));
  const walkers = new Set<string>();
  let statesGenerated = 0;
  /** States of the levels decided. */
  let distinct = 0;
  let depth = 0;
  let found: Found | undefined;
  let stoppedBy: Limit | undefined;
  let trace: Result['violation'] | undefined;
  const expanded: Expanded[] = [];

  // The step under way: the level expanded, or the level owned; its jobs' first index on the queue and how many are answered.
  let level = -1;
  let step: 'expand' | 'own' = 'expand';
  let firstJob = 0;
  let jobs: readonly (ExpandJob | OwnJob)[] = [];
  let answered = 0;
  let cut = false;
  let cutOff = false;
  /** Level `level`'s states, and those of its expand jobs answered. */
  let size = 1;
  let sizeDone = 0;
  /** Per shard, the successors sent to it by this level's expand jobs. */
  let sent: number[] = [];
  /** Per group of the level being owned, its states. */
  let groups: number[] = [];

  const consider = (f: Found): void => {
    if (
      found === undefined ||
      f.parent < found.parent ||
      (f.parent === found.parent && f.action < found.action)
    )
      found = f;
  };

  const queued: QueueRun<ExpandJob | OwnJob, Answer> = new QueueRun(servers[0]!, options, {
    others: servers.slice(1),
    answered(index, answer) {
      const i = index - firstJob;
      if (i < 0 || i >= jobs.length) return;
      walkers.add(answer.walker);
      if (step === 'expand') heardExpand(jobs[i] as ExpandJob, answer as ExpandAnswer);
      else heardOwn(answer as OwnAnswer);
      if (++answered === jobs.length) void stepDone().catch((e: unknown) => queued.fail(e));
    },
    describe: (index) => {
      const job = jobs[index - firstJob];
      if (job === undefined) return `job ${index}`;
      return 'groups' in job
        ? `job ${index} (level ${job.level}, states from position ${job.firstPosition})`
        : `job ${index} (the shards of server ${job.server} for level ${job.level})`;
    },
    progress: () => ({
      distinctStates: distinct,
      statesGenerated,
      queue: step === 'expand' ? size - sizeDone : 0,
      depth,
    }),
    cleanUp: async (clients) => {
      const last = Math.max(level, 0) + 1;
      await Promise.all(
        clients.map(async (client, server) => {
          const pipeline = client.pipeline();
          for (let shard = server; shard < shards; shard += servers.length) {
            const keys = [shardVisitedKey(queued.id, shard)];
            for (let l = 0; l <= last; l++)
              keys.push(
                inboxKey(queued.id, shard, l),
                wordsKey(queued.id, shard, l),
                levelKey(queued.id, shard, l),
                ownedKey(queued.id, shard, l),
              );
            expanded.forEach((e, l) => {
              for (let job = shard; job < e.starts.length; job += shards)
                keys.push(jobTrailKey(queued.id, shards, l, job));
            });
            pipeline.del(...keys);
          }
          await pipeline.exec();
        }),
      );
    },
  });

  const heardExpand = (job: ExpandJob, answer: ExpandAnswer): void => {
    statesGenerated += answer.statesGenerated;
    for (const kind of model.actionKinds) fired[kind]! += answer.fired[kind] ?? 0;
    cutOff ||= answer.cutOff;
    sizeDone += job.states;
    if (answer.deadlock !== -1) consider({ property: DEADLOCK, level, parent: answer.deadlock, action: -1 });
    if (answer.violation !== undefined) consider({ level, ...answer.violation });
    answer.sent.forEach((n, shard) => (sent[shard]! += n));
  };

  const heardOwn = (answer: OwnAnswer): void => {
    for (let i = 0; i < answer.groups.length; i += 2) groups[answer.groups[i]!]! += answer.groups[i + 1]!;
  };

  const add = (name: string, added: readonly (ExpandJob | OwnJob)[]): void => {
    jobs = added;
    answered = 0;
    firstJob = queued.add(name, added);
  };

  const common = { run: queued.id, spec, digest, servers, shards };

  /** Cuts level `level`, whose groups hold `counts` states, into expand jobs. */
  const expand = (counts: readonly number[]): void => {
    step = 'expand';
    cut = level >= maxDepth;
    cutOff = false;
    sent = new Array<number>(shards).fill(0);
    size = counts.reduce((a, b) => a + b, 0);
    sizeDone = 0;
    const per = Math.min(MAX_STATES_PER_JOB, Math.max(MIN_STATES_PER_JOB, Math.ceil(size / JOBS_PER_LEVEL)));
    const added: ExpandJob[] = [];
    const starts: number[] = [];
    let position = 0;
    for (let g = 0; g < counts.length;) {
      const first = g;
      let states = 0;
      while (g < counts.length && states < per) states += counts[g++]!;
      if (states === 0) continue;
      starts.push(position);
      added.push({
        ...common,
        deadlockAllowed: options.deadlockAllowed,
        level,
        job: added.length,
        groups: [first, g],
        firstPosition: position,
        states,
        cut,
      });
      position += states;
    }
    expanded[level] = { starts };
    add(EXPAND_JOB, added);
  };

  const stepDone = async (): Promise<void> => {
    if (step === 'expand') {
      if (cut) {
        if (cutOff && found === undefined) stoppedBy = 'maxDepth';
        return end();
      }
      const owners = servers.flatMap((_, server) => {
        const owned = sent.flatMap((n, shard) =>
          n > 0 && serverOf(shard, servers.length) === server ? [shard] : [],
        );
        return owned.length === 0 ? [] : [{ ...common, level: level + 1, server, owned }];
      });
      groups = new Array<number>(jobs.length * GROUPS_PER_JOB).fill(0);
      step = 'own';
      level++;
      if (owners.length === 0) return decided();
      return add(OWN_JOB, owners);
    }
    return decided();
  };

  /** Level `level` is decided: its states are counted, and the one before it is of no more use. */
  const decided = async (): Promise<void> => {
    const states = groups.reduce((a, b) => a + b, 0);
    distinct += states;
    if (states > 0) depth = level;
    await Promise.all(
      queued.clients.map((client, server) =>
        queued.roundTrip((p) => {
          for (let shard = server; shard < shards; shard += servers.length)
            p.del(
              levelKey(queued.id, shard, level - 1),
              wordsKey(queued.id, shard, level - 1),
              ownedKey(queued.id, shard, level),
            );
        }, client),
      ),
    );
    if (found !== undefined || states === 0) return end();
    expand(groups);
  };

  /** The trail record of the state at `position` of `at`: its parent's position and its action index. */
  const record = async (at: number, position: number): Promise<[number, number]> => {
    const { starts } = expanded[at]!;
    let job = starts.length - 1;
    while (starts[job]! > position) job--;
    const offset = (position - starts[job]!) * 8;
    const client = queued.clients[serverOf(job % shards, servers.length)]!;
    const [[error, bytes]] = (await queued.roundTrip(
      (p) => void p.getrangeBuffer(jobTrailKey(queued.id, shards, at, job), offset, offset + 7),
      client,
    )) as [[Error | null, Buffer]];
    if (error !== null) throw error;
    if (bytes.length !== 8) throw new Error(`distributed run: the trail of level ${at} is not in Redis`);
    return [bytes.readInt32LE(0), bytes.readInt32LE(4)];
  };

  /** The initial state's index and the action indices that lead to `found`. */
  const pathOf = async (f: Found): Promise<{ init: number; actions: number[] }> => {
    if (f.level < 0) return { init: f.action, actions: [] };
    const actions = f.action < 0 ? [] : [f.action];
    let position = f.parent;
    for (let at = f.level; ; at--) {
      const [parent, action] = await record(at, position);
      if (at === 0) return { init: action, actions: actions.reverse() };
      actions.push(action);
      position = parent;
    }
  };

  const end = async (): Promise<void> => {
    if (found !== undefined) {
      const { init, actions } = await pathOf(found);
      trace = { property: found.property, trace: rebuildTrace(model, init, actions) };
    }
    queued.done();
  };

  const renew = async (): Promise<void> => {
    await Promise.all(
      queued.clients.map((client, server) =>
        queued.roundTrip((p) => {
          for (let shard = server; shard < shards; shard += servers.length)
            p.expire(shardVisitedKey(queued.id, shard), RUN_KEY_SECONDS);
          expanded.forEach((e, l) => {
            for (let job = 0; job < e.starts.length; job++)
              if (serverOf(job % shards, servers.length) === server)
                p.expire(jobTrailKey(queued.id, shards, l, job), RUN_KEY_SECONDS);
          });
        }, client),
      ),
    );
  };
  const renewing = setInterval(() => void renew().catch(() => {}), RENEW_EVERY_MS);

  // Level -1: one job finds the initial states, as if expanding a state before them.
  add(EXPAND_JOB, [
    {
      ...common,
      deadlockAllowed: options.deadlockAllowed,
      level: -1,
      job: 0,
      groups: [0, 0],
      firstPosition: 0,
      states: 0,
      cut: false,
    },
  ]);
  sent = new Array<number>(shards).fill(0);

  let seconds: number;
  try {
    const outcome = await queued.ended();
    seconds = outcome.seconds;
    if (outcome.ended !== 'done') stoppedBy = outcome.ended;
  } finally {
    clearInterval(renewing);
  }
  const counted = {
    distinctStates: distinct,
    statesGenerated,
    depth,
    seconds,
    coverage: { fired, neverFired: model.actionKinds.filter((kind) => fired[kind] === 0) },
  };
  const result: Result =
    trace !== undefined
      ? { ...counted, status: 'violation', violation: trace }
      : stoppedBy === undefined
        ? { ...counted, status: 'ok' }
        : { ...counted, status: 'incomplete', stoppedBy };
  return { result, workers: walkers.size };
}
