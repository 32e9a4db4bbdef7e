// The coordinator of a distributed breadth-first search: level by level, as one machine searches.
// A level's states wait here, in the order one machine discovers them (a state's position in
// its level is its id there, less the level's first id); they go on the queue as jobs of
// consecutive positions (each job's states a binary value beside it, and so its answer's
// successors), and the answers (level.ts) are merged in job order, each successor kept
// when its fingerprint is new to this level and the one before it (the visited set in Redis
// holds the older ones). So each new state gets its least key (parent position, action index),
// the key of its first discovery on one machine, and its position there; the violation reported
// is the event of least key, a deadlock of the state at position p counting as (p, -1). A level
// in which one is found is finished first, as on one machine: the counts, the verdict and the
// trace are those of `--workers 1` whatever the number of workers.
//
// Per state, its parent's position and its action index go to Redis, one binary string per level
// (trailKey); a counterexample is read back from them and replayed here from its initial state.
// Every round trip that reads or writes the run's keys looks at the run's mark too (epoch.ts), so
// that a server that lost them stops the run rather than make it count from what is left.
import { IntList } from '../engine/int-list.ts';
import { type Model, PACK_WORDS } from '../engine/model.ts';
import {
  DEADLOCK,
  type Limit,
  type Result,
  brokenInvariant,
  rebuildTrace,
  stateFingerprint,
} from '../engine/search.ts';
import { VisitedSet } from '../engine/visited.ts';
import type { DistributedRun } from './coordinator.ts';
import type { RunDigest } from './digest.ts';
import {
  LEVEL_JOB,
  type LevelJob,
  type LevelJobAnswer,
  RUN_KEY_SECONDS,
  type WalkJob,
  bytesOf,
  chunkKey,
  int32sOfBytes,
  successorParts,
  trailKey,
  visitedKey,
} from './jobs.ts';
import { QueueRun, type QueueRunOptions } from './queue-run.ts';
import type { RedisAddress } from './redis.ts';

export interface DistributedBfsOptions extends QueueRunOptions {
  readonly maxDepth?: number;
  readonly deadlockAllowed: boolean;
}

/** Jobs a level is cut into when it is large enough: a few per worker of a small cluster, so that none waits long at the level's end. */
const JOBS_PER_LEVEL = 16;
/** States per job: enough to outweigh its round trip through Redis, few enough for a job of some hundred kilobytes. */
const MIN_STATES_PER_JOB = 128;
const MAX_STATES_PER_JOB = 1024;
/** How often the run's trail keys have their expiry renewed (the workers renew the visited set's with each job). */
const RENEW_EVERY_MS = 60_000;

/** The states of one level, as they wait for their jobs: packed, in position order, with their keys. */
class Level {
  readonly fingerprints = new VisitedSet(1 << 10);
  /** Packed words, each state's preceded by its length. */
  readonly words = new IntList(1 << 12);
  /** Where each state's words start. */
  readonly starts = new IntList();
  /** Per state: its parent's position in the level before (-1 at level 0) and its action index (its index in init() at level 0). */
  readonly trail = new IntList();

  get size(): number {
    return this.starts.length;
  }

  /** Adds the state of `words` (its length first), with its key. */
  push(words: Int32Array, parent: number, action: number): void {
    this.starts.push(this.words.length);
    this.words.pushAll(words, words.length);
    this.trail.push(parent);
    this.trail.push(action);
  }

  /** The packed words of the states from position `from` to `to`. */
  slice(from: number, to: number): Int32Array {
    return this.words.subarray(
      this.starts.get(from),
      to === this.size ? this.words.length : this.starts.get(to),
    );
  }
}

/** The reply of a round trip's one command. */
function replyOf(replies: readonly [Error | null, unknown][]): unknown {
  const [error, reply] = replies[0]!;
  if (error !== null) throw error;
  return reply;
}

/** The first event one machine would meet: a violation of the state (level, position), discovered with key (parent, action). */
interface Found {
  readonly property: string;
  readonly level: number;
  readonly position: number;
  readonly parent: number;
  readonly action: number;
}

export async function distributedBfs<S, A>(
  model: Model<S, A>,
  spec: WalkJob['spec'],
  digest: RunDigest,
  shards: readonly RedisAddress[],
  options: DistributedBfsOptions,
): Promise<DistributedRun> {
  const fingerprintOf = stateFingerprint(model);
  const maxDepth = options.maxDepth ?? Infinity;
  const fired: Record<string, number> = Object.fromEntries(model.actionKinds.map((k) => [k, 0]));
  const walkers = new Set<string>();
  let statesGenerated = 0;
  /** States of the levels before `current`. */
  let before = 0;
  let depth = 0;
  let current = new Level();
  let next = new Level();
  let found: Found | undefined;
  let stoppedBy: Limit | undefined;
  let trace: Result['violation'] | undefined;

  // This level's jobs: the first one's index on the queue, where each starts, and the answers not merged yet.
  let firstJob = 0;
  let jobStarts: number[] = [];
  let merged = 0;
  const answers = new Map<number, { answer: LevelJobAnswer; successors: Int32Array }>();
  let cut = false;
  let cutOff = false;

  /** The states met so far: a level stopped half-way counts the new states of the jobs merged, as one machine counts those of the states it expanded. */
  const discovered = (): number => before + current.size + next.size;

  const consider = (f: Found): void => {
    if (
      found === undefined ||
      f.parent < found.parent ||
      (f.parent === found.parent && f.action < found.action)
    )
      found = f;
  };

  const merge = (answer: LevelJobAnswer, successors: Int32Array): void => {
    statesGenerated += answer.statesGenerated;
    for (const kind of model.actionKinds) fired[kind]! += answer.fired[kind] ?? 0;
    walkers.add(answer.walker);
    cutOff ||= answer.cutOff;
    if (answer.deadlock !== -1)
      consider({
        property: DEADLOCK,
        level: depth,
        position: answer.deadlock,
        parent: answer.deadlock,
        action: -1,
      });
    const { fingerprints, keys, states: words } = successorParts(successors);
    for (let c = 0, at = 0; c < keys.length / 2; c++, at += 1 + words[at]!) {
      const high = fingerprints[2 * c]!;
      const low = fingerprints[2 * c + 1]!;
      if (current.fingerprints.has(high, low) || !next.fingerprints.add(high, low)) continue;
      const parent = keys[2 * c]!;
      const action = keys[2 * c + 1]!;
      if (answer.violation?.index === c)
        consider({
          property: answer.violation.property,
          level: depth + 1,
          position: next.size,
          parent,
          action,
        });
      next.push(words.subarray(at, at + 1 + words[at]!), parent, action);
    }
  };

  const queued: QueueRun<LevelJob, LevelJobAnswer> = new QueueRun(shards[0]!, options, {
    others: shards.slice(1),
    answered(index, answer) {
      const job = index - firstJob;
      const level = depth;
      void queued
        .roundTrip((p) => void p.getBuffer(chunkKey(queued.id, level, job, 'successors')))
        .then((replies) => {
          const bytes = replyOf(replies);
          if (bytes === null)
            throw new Error(`distributed run: the successors of job ${index} are not in Redis`);
          // Merged, the job's keys are of no more use; the answer of a retry that comes later is dropped.
          void queued.redis
            .del(chunkKey(queued.id, level, job, 'states'), chunkKey(queued.id, level, job, 'successors'))
            .catch(() => {});
          answers.set(job, { answer, successors: int32sOfBytes(bytes as Buffer) });
          for (let a = answers.get(merged); a !== undefined; a = answers.get(merged)) {
            answers.delete(merged++);
            merge(a.answer, a.successors);
          }
          if (merged === jobStarts.length) return levelDone();
        })
        .catch((e: unknown) => queued.fail(e));
    },
    describe: (index) =>
      `job ${index} (level ${depth}, states from position ${jobStarts[index - firstJob] ?? '?'})`,
    progress: () => ({
      distinctStates: discovered(),
      statesGenerated,
      queue: current.size - (jobStarts[merged] ?? current.size),
      depth,
    }),
    cleanUp: async (clients) => {
      // The queue's server is the first shard.
      const chunks = jobStarts.flatMap((_, job) => [
        chunkKey(queued.id, depth, job, 'states'),
        chunkKey(queued.id, depth, job, 'successors'),
      ]);
      await Promise.all([
        clients[0]!.del(...levelKeys(), ...chunks),
        ...clients.map((client) => client.del(visitedKey(queued.id))),
      ]);
    },
  });

  const levelKeys = (): string[] =>
    Array.from({ length: depth + 2 }, (_, level) => trailKey(queued.id, level));
  const renew = async (): Promise<void> => {
    await queued.roundTrip((p) => {
      for (const key of levelKeys()) p.expire(key, RUN_KEY_SECONDS);
    });
  };
  const renewing = setInterval(() => void renew().catch(() => {}), RENEW_EVERY_MS);

  /** The trail of `level` into Redis. */
  const saveTrail = async (level: number, of: Level): Promise<void> => {
    const trail = bytesOf(of.trail.subarray(0, of.trail.length));
    replyOf(
      await queued.roundTrip((p) => void p.set(trailKey(queued.id, level), trail, 'EX', RUN_KEY_SECONDS)),
    );
  };

  /** The initial state's index and the action indices that lead to the state (level, position), read back from Redis. */
  const pathOf = async (level: number, position: number): Promise<{ init: number; actions: number[] }> => {
    const actions: number[] = [];
    for (; ; level--) {
      const record = replyOf(
        await queued.roundTrip(
          (p) => void p.getrangeBuffer(trailKey(queued.id, level), position * 8, position * 8 + 7),
        ),
      ) as Buffer;
      if (level === 0) return { init: record.readInt32LE(4), actions: actions.reverse() };
      actions.push(record.readInt32LE(4));
      position = record.readInt32LE(0);
    }
  };

  const end = async (): Promise<void> => {
    if (found !== undefined) {
      const { init, actions } = await pathOf(found.level, found.position);
      trace = { property: found.property, trace: rebuildTrace(model, init, actions) };
    }
    queued.done();
  };

  const addLevel = async (): Promise<void> => {
    cut = depth >= maxDepth;
    cutOff = false;
    merged = 0;
    const size = current.size;
    const per = Math.min(MAX_STATES_PER_JOB, Math.max(MIN_STATES_PER_JOB, Math.ceil(size / JOBS_PER_LEVEL)));
    jobStarts = [];
    const jobs: LevelJob[] = [];
    const chunks: [string, Int32Array][] = [];
    for (let from = 0; from < size; from += per) {
      const job = jobStarts.length;
      const states = chunkKey(queued.id, depth, job, 'states');
      jobStarts.push(from);
      chunks.push([states, current.slice(from, Math.min(size, from + per))]);
      jobs.push({
        run: queued.id,
        spec,
        digest,
        deadlockAllowed: options.deadlockAllowed,
        shards,
        level: depth,
        firstPosition: from,
        cut,
        states,
        successors: chunkKey(queued.id, depth, job, 'successors'),
      });
    }
    const replies = await queued.roundTrip((p) => {
      for (const [key, words] of chunks) p.set(key, bytesOf(words), 'EX', RUN_KEY_SECONDS);
    });
    for (const [error] of replies) if (error) throw error;
    firstJob = queued.add(LEVEL_JOB, jobs);
  };

  const levelDone = async (): Promise<void> => {
    await saveTrail(depth + 1, next);
    if (found !== undefined) {
      if (next.size > 0) depth++;
      return end();
    }
    if (cut) {
      if (cutOff) stoppedBy = 'maxDepth';
      return end();
    }
    if (next.size === 0) return end();
    before += current.size;
    depth++;
    current = next;
    next = new Level();
    return addLevel();
  };

  // The initial states, in the order of init(), as one machine takes them.
  const words = new Int32Array(PACK_WORDS + 1);
  const fingerprint = new Int32Array(2);
  model.init().forEach((s, i) => {
    statesGenerated++;
    fingerprintOf(s, fingerprint);
    if (!current.fingerprints.add(fingerprint[0]!, fingerprint[1]!)) return;
    const broken = brokenInvariant(model, s);
    if (broken !== undefined && found === undefined)
      found = { property: broken, level: 0, position: current.size, parent: -1, action: i };
    words[0] = model.pack!(s, words.subarray(1));
    current.push(words.subarray(0, 1 + words[0]), -1, i);
  });
  const started = saveTrail(0, current).then(() => (found === undefined ? addLevel() : end()));
  started.catch((e: unknown) => queued.fail(e));

  let seconds: number;
  try {
    const outcome = await queued.ended();
    seconds = outcome.seconds;
    if (outcome.ended !== 'done') stoppedBy = outcome.ended;
  } finally {
    clearInterval(renewing);
  }
  const counted = {
    distinctStates: discovered(),
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
