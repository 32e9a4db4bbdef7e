// Breadth-first search on worker threads, level by level (see protocol.ts). The coordinator
// routes the workers' buffers, merges each new level's keys into global ranks, keeps the trail
// of parent ranks and actions, and rebuilds a counterexample as the one-thread search does. The
// ranks are the ids the one-thread search gives, so the counts, the verdict and the trace do
// not depend on the number of workers.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Model } from '../model.ts';
import {
  DEADLOCK,
  SearchRun,
  memoryBound,
  memoryInUse,
  rebuildTrace,
  type Limit,
  type Result,
  type SearchOptions,
} from '../search.ts';
import { Trail } from '../trail.ts';
import { WorkerHandle } from './handle.ts';
import { mergeByKey } from './merge.ts';
import type { Decided, Expanded, Held, Released } from './protocol.ts';
import type { ModelRecipe } from './recipe.ts';

const bfsWorker = new URL('./worker.ts', import.meta.url);

export interface ParallelOptions extends SearchOptions {
  readonly workers: number;
}

export async function parallelBfs<S, A>(
  model: Model<S, A>,
  recipe: ModelRecipe,
  options: ParallelOptions,
): Promise<Result> {
  const run = new SearchRun(model, options);
  const n = options.workers;
  const maxDepth = options.maxDepth ?? Infinity;
  const maxStates = options.maxStates ?? Infinity;
  // The workers' lists share the one-thread search's spill size: theirs add up to its two levels.
  const spill =
    options.spillBytes === undefined
      ? undefined
      : {
          bytes: Math.max(1, Math.floor(options.spillBytes / n)),
          folder: mkdtempSync(join(tmpdir(), 'txcheck-parallel-')),
        };
  const workers = Array.from(
    { length: n },
    (_, me) =>
      new WorkerHandle(bfsWorker, {
        recipe,
        workers: n,
        me,
        deadlockAllowed: options.deadlockAllowed,
        ...(options.sleep === true ? { sleep: true } : {}),
        ...(spill === undefined ? {} : { spill }),
      }),
  );
  const trail = new Trail();
  let distinct = 0;
  let visitedBytes = 0;
  let spilledBytes = 0;
  // A request to stop, or the resident memory (every thread's) reaching its bound, does not wait
  // for the level under way: the workers are terminated, and the counts are those of the levels
  // merged so far. The margin is the trail's next piece and the workers' visited sets growing at once.
  const memory = options.memory ?? memoryInUse;
  const maxBytes = memoryBound(options.maxMemory, memory);
  // Whether the level under way is the initial states. The memory is not watched then: a run
  // always reports at least them, as on one thread.
  let seeding = true;
  // Nor is the clock: a level can take minutes, and --max-seconds must not wait for its end.
  const maxSeconds = options.maxSeconds ?? Infinity;
  const overLimit = () =>
    seeding
      ? undefined
      : memory().rss + trail.growthBytes + visitedBytes * 1.5 > maxBytes
        ? 'maxMemory'
        : run.clock.seconds >= maxSeconds
          ? 'maxSeconds'
          : undefined;
  const stopped = midLevelStop(options.stop, overLimit);
  const all = <T>(f: (w: WorkerHandle, i: number) => Promise<T>): Promise<T[] | MidLevelStop> =>
    Promise.race([Promise.all(workers.map(f)), stopped.promise]);

  const finish = (
    status: 'ok' | 'violation' | 'incomplete',
    extra: { found?: { property: string; id: number }; stoppedBy?: Limit },
  ): Result => {
    const memory = {
      visitedBytes,
      traceBytes: trail.bytes,
      ...(spill === undefined ? {} : { spilledBytes }),
    };
    const counts = { distinctStates: distinct };
    if (extra.found !== undefined) {
      const { init, actions } = trail.path(extra.found.id);
      return {
        ...run.finish('violation', {
          violation: { property: extra.found.property, trace: rebuildTrace(model, init, actions) },
          memory,
        }),
        ...counts,
      };
    }
    return {
      ...run.finish(status, {
        memory,
        ...(extra.stoppedBy === undefined ? {} : { stoppedBy: extra.stoppedBy }),
      }),
      ...counts,
    };
  };

  try {
    run.statesGenerated += model.init().length;
    const seeded = await all((w) => w.request<Expanded>({ type: 'seed' }));
    if (seeded instanceof MidLevelStop) return finish('incomplete', { stoppedBy: seeded.limit });
    let expanded: Expanded[] = seeded;
    // The id of the first state of the level just expanded.
    let expandedStart = 0;
    for (;;) {
      for (const e of expanded) {
        run.statesGenerated += e.statesGenerated;
        run.coverage.add(e.coverage);
      }
      const level = expanded;
      const decided = await all((w, to) => {
        const inboxes = level.map((e) => e.outboxes[to]!);
        const inboxSets = level.map((e) => e.outboxSets?.[to] ?? null);
        return w.request<Decided>(
          { type: 'decide', inboxes, ...(options.sleep === true ? { inboxSets } : {}) },
          [...inboxes, ...inboxSets],
        );
      });
      if (decided instanceof MidLevelStop) return finish('incomplete', { stoppedBy: decided.limit });
      const give = rebalance(workers.map((_, h) => decided.reduce((k, d) => k + d.counts[h]!, 0)));
      const released = await all((w, h) => {
        const winners = decided.map((d) => d.winners[h]!);
        const winnerSets = decided.map((d) => d.winnerSets?.[h] ?? null);
        return w.request<Released>(
          {
            type: 'release',
            winners,
            ...(options.sleep === true ? { winnerSets } : {}),
            give: give[h]!,
          },
          [...winners, ...winnerSets],
        );
      });
      if (released instanceof MidLevelStop) return finish('incomplete', { stoppedBy: released.limit });
      const held = await all((w, to) => {
        const given = released.map((r) => r.given[to]!);
        return w.request<Held>(
          { type: 'hold', given },
          given.flatMap((g) => (g === null ? [] : [g.states, g.parentRanks, g.actions, g.sets ?? null])),
        );
      });
      if (held instanceof MidLevelStop) return finish('incomplete', { stoppedBy: held.limit });
      const newStart = distinct;
      const parentBase = seeding ? 0 : expandedStart;
      const ranks = mergeRanks(held, (rank, parentRank, action) =>
        trail.set(newStart + rank, seeding ? -1 : parentBase + parentRank, action),
      );
      const size = ranks.reduce((k, r) => k + r.length, 0);
      distinct += size;
      visitedBytes = held.reduce((b, a) => b + a.visitedBytes, 0);
      spilledBytes = Math.max(
        spilledBytes,
        held.reduce((b, a) => b + a.spilledBytes, 0),
      );
      if (size > 0 && !seeding) run.depth++;

      // The first event a one-thread search meets: least key (parent rank, action), where a
      // deadlock of a state of rank r comes before its successors, as key (r, -1).
      let found: { property: string; id: number; parentRank: number; action: number } | undefined;
      const consider = (property: string, id: number, parentRank: number, action: number) => {
        if (
          found === undefined ||
          parentRank < found.parentRank ||
          (parentRank === found.parentRank && action < found.action)
        ) {
          found = { property, id, parentRank, action };
        }
      };
      for (const e of expanded)
        if (e.deadlock !== -1) consider(DEADLOCK, expandedStart + e.deadlock, e.deadlock, -1);
      held.forEach((a, w) => {
        if (a.violation !== null) {
          const i = a.violation.index;
          consider(a.violation.property, newStart + ranks[w]![i]!, a.parentRanks[i]!, a.actions[i]!);
        }
      });
      if (distinct > maxStates) {
        // As one thread would: stop at the first state beyond the limit, with what came before it.
        const beyond = trail.parentOf(maxStates) - (seeding ? 0 : expandedStart);
        const before =
          found !== undefined &&
          (found.property === DEADLOCK ? found.parentRank <= beyond : found.id < maxStates);
        // The depth counts this level only if one of its states is kept.
        if (newStart === maxStates && !seeding) run.depth--;
        distinct = maxStates;
        return before ? finish('violation', { found }) : finish('incomplete', { stoppedBy: 'maxStates' });
      }
      if (found !== undefined) return finish('violation', { found });
      if (size === 0) return finish('ok', {});
      const limit = run.clock.check(
        () => ({
          distinctStates: distinct,
          statesGenerated: run.statesGenerated,
          queue: size,
          depth: run.depth,
        }),
        () => trail.growthBytes,
      );
      if (limit !== undefined) return finish('incomplete', { stoppedBy: limit });
      seeding = false;
      expandedStart = newStart;
      const cut = run.depth >= maxDepth;
      const next = await all((w, i) =>
        w.request<Expanded>({ type: 'expand', ranks: ranks[i]!, cut }, [ranks[i]!]),
      );
      if (next instanceof MidLevelStop) return finish('incomplete', { stoppedBy: next.limit });
      expanded = next;
      if (cut) {
        const deadlock = expanded.map((e) => e.deadlock).filter((r) => r !== -1);
        if (deadlock.length > 0)
          return finish('violation', {
            found: { property: DEADLOCK, id: expandedStart + Math.min(...deadlock) },
          });
        return expanded.some((e) => e.cutOff)
          ? finish('incomplete', { stoppedBy: 'maxDepth' })
          : finish('ok', {});
      }
    }
  } finally {
    stopped.cancel();
    await Promise.all(workers.map((w) => w.terminate()));
    if (spill !== undefined) rmSync(spill.folder, { recursive: true, force: true });
  }
}

/** What ended a search in the middle of a level. */
export class MidLevelStop {
  constructor(readonly limit: 'signal' | 'maxMemory' | 'maxSeconds') {}
}

/** How often the coordinator looks at the stop flag, the memory and the clock while the workers are busy. */
const POLL_MS = 50;

/** A promise of a MidLevelStop once `flag` is set or `overLimit` names a limit, and a way to stop watching. */
export function midLevelStop(
  flag: Int32Array | undefined,
  overLimit: () => 'maxMemory' | 'maxSeconds' | undefined,
): { promise: Promise<MidLevelStop>; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<MidLevelStop>((resolve) => {
    timer = setInterval(() => {
      if (flag !== undefined && Atomics.load(flag, 0) !== 0) return resolve(new MidLevelStop('signal'));
      const limit = overLimit();
      if (limit !== undefined) resolve(new MidLevelStop(limit));
    }, POLL_MS);
  });
  return { promise, cancel: () => clearInterval(timer) };
}

/** Imbalance worth moving states for: above this share of the mean, plus a few states. */
const TOLERANCE = 1.1;
const FEW = 256;

/**
 * How many of its new states each worker hands to each other one (give[from][to]), so that no
 * worker holds much more than its share.
 */
function rebalance(counts: readonly number[]): number[][] {
  const n = counts.length;
  const give = counts.map(() => new Array<number>(n).fill(0));
  const share = Math.ceil(counts.reduce((a, b) => a + b, 0) / n);
  const left = [...counts];
  for (let from = 0; from < n; from++) {
    if (left[from]! <= share * TOLERANCE + FEW) continue;
    for (let to = 0; to < n && left[from]! > share; to++) {
      const room = Math.min(share - left[to]!, left[from]! - share);
      if (room <= 0) continue;
      give[from]![to] = room;
      left[from]! -= room;
      left[to]! += room;
    }
  }
  return give;
}

/**
 * Merges the workers' key-sorted lists into one order and returns each worker's global ranks;
 * `record(rank, parentRank, action)` is called for every state of the level.
 */
function mergeRanks(
  held: readonly Held[],
  record: (rank: number, parentRank: number, action: number) => void,
): Int32Array[] {
  const ranks = held.map((h) => new Int32Array(h.parentRanks.length));
  let rank = 0;
  mergeByKey(held, (w, i) => {
    ranks[w]![i] = rank;
    record(rank++, held[w]!.parentRanks[i]!, held[w]!.actions[i]!);
  });
  return ranks;
}
