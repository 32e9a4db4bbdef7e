// Breadth-first search. A state's id is its discovery order; per id only the parent id and the
// index of the action that led to it are kept, in typed arrays, and full states only while
// they wait in the frontier. Invariants are checked when a state is first discovered, so the
// first violation found has a shortest trace. The level in which it is found is finished before
// reporting, so the counts are those of whole levels, as the parallel search reports them.
// Optionally the search is reduced (reduction.ts), saved and resumed between two states
// (checkpoint.ts), and its waiting levels spill to disk (frontier.ts).
import { readCheckpoint, writeCheckpoint } from './checkpoint.ts';
import { Frontier, Spill } from './frontier.ts';
import { InputError } from './input.ts';
import type { Model } from './model.ts';
import { Reducer } from './reduction.ts';
import {
  DEADLOCK,
  Discovery,
  SearchRun,
  brokenInvariant,
  rebuildTrace,
  successorsOf,
  type Limit,
  type Result,
  type SearchOptions,
} from './search.ts';
import { Trail } from './trail.ts';
import { VisitedSet } from './visited.ts';

/** Expansions between two looks at the clock. */
const CLOCK_EVERY = 256;

/** Breadth-first search of `model`; whatever it spilled to disk is removed when it returns. */
export function bfs<S, A>(model: Model<S, A>, options: SearchOptions): Result {
  const spill = options.spillBytes === undefined ? undefined : new Spill(options.spillBytes);
  try {
    return breadthFirst(model, options, spill);
  } finally {
    spill?.remove();
  }
}

function breadthFirst<S, A>(model: Model<S, A>, options: SearchOptions, spill: Spill | undefined): Result {
  const saving = options.checkpoint;
  if (
    (saving !== undefined || options.resume !== undefined) &&
    (model.pack === undefined || model.unpack === undefined)
  ) {
    throw new Error('checkpoints need a model that packs and unpacks its states');
  }
  const resumed =
    options.resume === undefined ? undefined : readCheckpoint(options.resume.file, options.resume.identity);
  if (resumed !== undefined && resumed.identity !== options.resume!.identity) {
    throw new InputError(
      options.resume!.file,
      'identity',
      'a checkpoint of this spec with these options',
      'one of another search',
    );
  }
  const counters = resumed?.counters;
  const run = new SearchRun(
    model,
    resumed === undefined
      ? options
      : { ...options, visited: VisitedSet.restore(resumed.visited, resumed.counters.distinctStates) },
  );
  const reducer = options.reduction === true ? new Reducer(model) : undefined;
  const successors = successorsOf(model);
  const maxDepth = options.maxDepth ?? Infinity;
  const trail = resumed === undefined ? new Trail() : Trail.restore(resumed.parents, resumed.actions);
  const secondsBefore = counters?.seconds ?? 0;
  // The first violation in discovery order: the property and the state id.
  let found: { property: string; id: number } | undefined = counters?.found ?? undefined;

  let queueBytes = counters?.queueBytes ?? 0;
  let spilledBytes = 0;
  const finish = (stoppedBy?: Limit): Result => {
    const memory = {
      visitedBytes: run.visited.bytes,
      traceBytes: trail.bytes,
      queueBytes,
      ...(spill === undefined ? {} : { spilledBytes }),
    };
    const extra = { memory, ...(reducer === undefined ? {} : { reducedStates: reducer.reducedStates }) };
    let result: Result;
    if (found !== undefined) {
      const { init, actions } = trail.path(found.id);
      result = run.finish('violation', {
        violation: { property: found.property, trace: rebuildTrace(model, init, actions) },
        ...extra,
      });
    } else
      result =
        stoppedBy === undefined ? run.finish('ok', extra) : run.finish('incomplete', { stoppedBy, ...extra });
    return secondsBefore === 0 ? result : { ...result, seconds: result.seconds + secondsBefore };
  };

  let level = new Frontier(model, spill);
  let nextLevel = new Frontier(model, spill);
  let levelStartId = 0;
  let firstIndex = 0;
  let overLimit = false;
  let cutOffByDepth = false;
  if (resumed === undefined) {
    const inits = model.init();
    for (let i = 0; i < inits.length; i++) {
      const s = inits[i]!;
      run.statesGenerated++;
      const discovery = run.discover(s);
      if (discovery === Discovery.Seen) continue;
      if (discovery === Discovery.OverLimit) return finish('maxStates');
      const id = run.distinctStates - 1;
      trail.set(id, -1, i);
      const broken = brokenInvariant(model, s);
      if (broken !== undefined) found ??= { property: broken, id };
      level.push(s);
    }
    if (found !== undefined) return finish();
  } else {
    const c = counters!;
    run.statesGenerated = c.statesGenerated;
    run.depth = c.depth;
    run.coverage.add(c.coverage);
    level = Frontier.restore(model, resumed.levelWords, resumed.levelEnds, spill);
    nextLevel = Frontier.restore(model, resumed.nextWords, resumed.nextEnds, spill);
    levelStartId = c.levelStartId;
    firstIndex = c.nextIndex;
    overLimit = c.overLimit;
    cutOffByDepth = c.cutOffByDepth;
    reducer?.restore(resumed.nextLevelSeen, resumed.nextLevelSeenCount, c.reducedStates);
  }

  let parent = 0;
  const visit = (t: S, action: number): void => {
    run.statesGenerated++;
    const discovery = run.discover(t);
    if (discovery === Discovery.Seen) return;
    if (discovery === Discovery.OverLimit) {
      overLimit = true;
      return;
    }
    const tid = run.distinctStates - 1;
    trail.set(tid, parent, action);
    reducer?.seenInNextLevel(run.fingerprint);
    if (found === undefined) {
      const broken = brokenInvariant(model, t);
      if (broken !== undefined) found = { property: broken, id: tid };
    }
    nextLevel.push(t, run.packed.words, run.packed.length);
  };
  let emitted = 0;
  const emit = (t: S, action: number, kind: number): void => {
    emitted++;
    run.coverage.firedKind(kind);
    visit(t, action);
  };
  const countOnly = (): void => void emitted++;

  const expandReduced = (s: S): boolean => {
    const kept = reducer!.keptSuccessors(s, run.visited);
    if (kept === undefined) return false;
    for (const { state, action, kind } of kept) emit(state, action, kind);
    return true;
  };

  const now = options.now ?? (() => performance.now());
  let lastSave = now();
  /** Saves the search as it stands before expanding the level's state `nextIndex`. */
  const save = (nextIndex: number): void => {
    const visited = run.visited.snapshot();
    const { parents, actions } = trail.saved(run.distinctStates);
    const current = level.saved();
    const next = nextLevel.saved();
    const seen = reducer?.snapshot() ?? { table: new Int32Array(0), count: 0 };
    writeCheckpoint(saving!.file, {
      identity: saving!.identity,
      counters: {
        distinctStates: run.distinctStates,
        statesGenerated: run.statesGenerated,
        depth: run.depth,
        levelStartId,
        nextIndex,
        queueBytes,
        seconds: secondsBefore + run.clock.seconds,
        coverage: run.coverage.raw,
        found: found ?? null,
        overLimit,
        cutOffByDepth,
        reducedStates: reducer?.reducedStates ?? 0,
      },
      visited: visited.table,
      parents,
      actions,
      levelWords: current.words,
      levelEnds: current.ends,
      nextWords: next.words,
      nextEnds: next.ends,
      nextLevelSeen: seen.table,
      nextLevelSeenCount: seen.count,
    });
    lastSave = now();
  };

  let sinceClock = 0;
  while (level.length > 0) {
    if (firstIndex === 0) {
      nextLevel.clear();
      reducer?.startLevel();
      cutOffByDepth = false;
    }
    for (let i = firstIndex; i < level.length; i++) {
      const s = level.take(i);
      parent = levelStartId + i;
      emitted = 0;
      const beyondLimit = overLimit;
      if (run.depth >= maxDepth) successors(s, countOnly);
      else if (reducer === undefined || !expandReduced(s)) successors(s, emit);
      // Past the state limit nothing new is kept, but the level is expanded to its end, as on workers.
      if (emitted === 0 && !options.deadlockAllowed && !beyondLimit)
        found ??= { property: DEADLOCK, id: parent };
      cutOffByDepth ||= run.depth >= maxDepth && emitted > 0;
      if (++sinceClock === CLOCK_EVERY) {
        sinceClock = 0;
        const limit = run.clock.check(
          () => run.progress(level.length - i - 1 + nextLevel.length),
          () => run.visited.growthBytes + trail.growthBytes + level.growthBytes + nextLevel.growthBytes,
        );
        // A stop between two states can be taken up again; past the state limit states were dropped.
        const resumable = saving !== undefined && !overLimit;
        if (limit !== undefined) {
          if (resumable) save(i + 1);
          return finish(limit);
        }
        if (resumable && now() - lastSave >= saving.everySeconds * 1000) save(i + 1);
      }
    }
    firstIndex = 0;
    if (found !== undefined || overLimit) {
      if (nextLevel.length > 0) run.depth++;
      return finish(found === undefined ? 'maxStates' : undefined);
    }
    if (cutOffByDepth) return finish('maxDepth');
    levelStartId += level.length;
    queueBytes = Math.max(queueBytes, level.bytes + nextLevel.bytes);
    spilledBytes = Math.max(spilledBytes, level.spilledBytes + nextLevel.spilledBytes);
    // The expanded level's lists take the level after next.
    [level, nextLevel] = [nextLevel, level];
    if (level.length > 0) run.depth++;
  }
  return finish();
}
