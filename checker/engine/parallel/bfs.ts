// Breadth-first search on worker threads, level by level (see protocol.ts). The coordinator
// routes the workers' buffers, merges each new level's keys into global ranks, keeps the trail
// of parent ranks and actions, and rebuilds a counterexample as the one-thread search does. The
// ranks are the ids the one-thread search gives, so the counts, the verdict and the trace do
// not depend on the number of workers.
import { Trail } from '../bfs.ts';
import type { Model } from '../model.ts';
import { DEADLOCK, SearchRun, rebuildTrace, type Limit, type Result, type SearchOptions } from '../search.ts';
import { WorkerHandle } from './handle.ts';
import { mergeByKey } from './merge.ts';
import type { Decided, Expanded, Held, Released } from './protocol.ts';
import type { ModelRecipe } from './recipe.ts';

const bfsWorker = new URL('./worker.ts', import.meta.url);

export interface ParallelOptions extends SearchOptions {
  readonly workers: number;
}

export async function parallelBfs<S, A>(model: Model<S, A>, recipe: ModelRecipe, options: ParallelOptions): Promise<Result> {
  const run = new SearchRun(model, options);
  const n = options.workers;
  const maxDepth = options.maxDepth ?? Infinity;
  const maxStates = options.maxStates ?? Infinity;
  const workers = Array.from({ length: n }, (_, me) => new WorkerHandle(bfsWorker, { recipe, workers: n, me, deadlockAllowed: options.deadlockAllowed }));
  // A request to stop does not wait for the level under way: the workers are terminated, and the
  // counts are those of the levels merged so far.
  const stopped = stopRequested(options.stop);
  const all = <T>(f: (w: WorkerHandle, i: number) => Promise<T>): Promise<T[] | typeof STOP> => Promise.race([Promise.all(workers.map(f)), stopped.promise]);
  const trail = new Trail();
  let distinct = 0;
  let visitedBytes = 0;

  const finish = (status: 'ok' | 'violation' | 'incomplete', extra: { found?: { property: string; id: number }; stoppedBy?: Limit }): Result => {
    const memory = { visitedBytes, traceBytes: trail.bytes };
    const counts = { distinctStates: distinct };
    if (extra.found !== undefined) {
      const { init, actions } = trail.path(extra.found.id);
      return { ...run.finish('violation', { violation: { property: extra.found.property, trace: rebuildTrace(model, init, actions) }, memory }), ...counts };
    }
    return { ...run.finish(status, { memory, ...(extra.stoppedBy === undefined ? {} : { stoppedBy: extra.stoppedBy }) }), ...counts };
  };

  try {
    run.statesGenerated += model.init().length;
    const seeded = await all((w) => w.request<Expanded>({ type: 'seed' }));
    if (seeded === STOP) return finish('incomplete', { stoppedBy: 'signal' });
    let expanded: Expanded[] = seeded;
    let seeding = true;
    // The id of the first state of the level just expanded.
    let expandedStart = 0;
    for (;;) {
      for (const e of expanded) {
        run.statesGenerated += e.statesGenerated;
        run.coverage.add(e.coverage);
      }
      const level = expanded;
      const decided = await all((w, to) => w.request<Decided>({ type: 'decide', inboxes: level.map((e) => e.outboxes[to]!) }, level.map((e) => e.outboxes[to]!)));
      if (decided === STOP) return finish('incomplete', { stoppedBy: 'signal' });
      const give = rebalance(workers.map((_, h) => decided.reduce((k, d) => k + d.counts[h]!, 0)));
      const released = await all((w, h) => w.request<Released>({ type: 'release', winners: decided.map((d) => d.winners[h]!), give: give[h]! }, decided.map((d) => d.winners[h]!)));
      if (released === STOP) return finish('incomplete', { stoppedBy: 'signal' });
      const held = await all((w, to) => {
        const given = released.map((r) => r.given[to]!);
        return w.request<Held>({ type: 'hold', given }, given.flatMap((g) => (g === null ? [] : [g.states, g.parentRanks, g.actions])));
      });
      if (held === STOP) return finish('incomplete', { stoppedBy: 'signal' });
      const newStart = distinct;
      const parentBase = seeding ? 0 : expandedStart;
      const ranks = mergeRanks(held, (rank, parentRank, action) => trail.set(newStart + rank, seeding ? -1 : parentBase + parentRank, action));
      const size = ranks.reduce((k, r) => k + r.length, 0);
      distinct += size;
      visitedBytes = held.reduce((b, a) => b + a.visitedBytes, 0);
      if (size > 0 && !seeding) run.depth++;

      // The first event a one-thread search meets: least key (parent rank, action), where a
      // deadlock of a state of rank r comes before its successors, as key (r, -1).
      let found: { property: string; id: number; parentRank: number; action: number } | undefined;
      const consider = (property: string, id: number, parentRank: number, action: number) => {
        if (found === undefined || parentRank < found.parentRank || (parentRank === found.parentRank && action < found.action)) {
          found = { property, id, parentRank, action };
        }
      };
      for (const e of expanded) if (e.deadlock !== -1) consider(DEADLOCK, expandedStart + e.deadlock, e.deadlock, -1);
      held.forEach((a, w) => {
        if (a.violation !== null) {
          const i = a.violation.index;
          consider(a.violation.property, newStart + ranks[w]![i]!, a.parentRanks[i]!, a.actions[i]!);
        }
      });
      if (distinct > maxStates) {
        // As one thread would: stop at the first state beyond the limit, with what came before it.
        const beyond = trail.parentOf(maxStates) - (seeding ? 0 : expandedStart);
        const before = found !== undefined && (found.property === DEADLOCK ? found.parentRank <= beyond : found.id < maxStates);
        // The depth counts this level only if one of its states is kept.
        if (newStart === maxStates && !seeding) run.depth--;
        distinct = maxStates;
        return before ? finish('violation', { found }) : finish('incomplete', { stoppedBy: 'maxStates' });
      }
      if (found !== undefined) return finish('violation', { found });
      if (size === 0) return finish('ok', {});
      const limit = run.clock.check(
        () => ({ distinctStates: distinct, statesGenerated: run.statesGenerated, queue: size, depth: run.depth }),
        () => trail.growthBytes,
      );
      if (limit !== undefined) return finish('incomplete', { stoppedBy: limit });
      seeding = false;
      expandedStart = newStart;
      const cut = run.depth >= maxDepth;
      const next = await all((w, i) => w.request<Expanded>({ type: 'expand', ranks: ranks[i]!, cut }, [ranks[i]!]));
      if (next === STOP) return finish('incomplete', { stoppedBy: 'signal' });
      expanded = next;
      if (cut) {
        const deadlock = expanded.map((e) => e.deadlock).filter((r) => r !== -1);
        if (deadlock.length > 0) return finish('violation', { found: { property: DEADLOCK, id: expandedStart + Math.min(...deadlock) } });
        return expanded.some((e) => e.cutOff) ? finish('incomplete', { stoppedBy: 'maxDepth' }) : finish('ok', {});
      }
    }
  } finally {
    stopped.cancel();
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

const STOP = Symbol('stop');
/** How often the coordinator looks at the stop flag while the workers are busy. */
const STOP_POLL_MS = 50;

/** A promise of STOP once `flag` is set, and a way to stop watching it. */
function stopRequested(flag: Int32Array | undefined): { promise: Promise<typeof STOP>; cancel(): void } {
  if (flag === undefined) return { promise: new Promise(() => {}), cancel: () => {} };
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<typeof STOP>((resolve) => {
    timer = setInterval(() => {
      if (Atomics.load(flag, 0) !== 0) resolve(STOP);
    }, STOP_POLL_MS);
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
function mergeRanks(held: readonly Held[], record: (rank: number, parentRank: number, action: number) => void): Int32Array[] {
  const ranks = held.map((h) => new Int32Array(h.parentRanks.length));
  let rank = 0;
  mergeByKey(held, (w, i) => {
    ranks[w]![i] = rank;
    record(rank++, held[w]!.parentRanks[i]!, held[w]!.actions[i]!);
  });
  return ranks;
}
