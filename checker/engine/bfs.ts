// Breadth-first search. A state's id is its discovery order; per id only the parent id and the
// index of the action that led to it are kept, in typed arrays, and full states only while
// they wait in a level. Invariants are checked when a state is first discovered, so the
// first violation found has a shortest trace. The level in which it is found is finished before
// reporting, so the counts are those of whole levels, as the parallel search reports them.
// Beside the loop: the levels and their spill to disk (levels.ts), partial-order reduction
// (reduction.ts), checkpoints to save and resume between two states (saving.ts), and the clock
// that enforces the time and memory limits (search.ts).
import type { Checkpoint } from './checkpoint.ts';
import { Levels } from './levels.ts';
import type { Model } from './model.ts';
import { Reducer } from './reduction.ts';
import { CheckpointSaver, type SavedSearch, checkpointToResume } from './saving.ts';
import { SleepSets } from './sleep.ts';
import {
  DEADLOCK,
  Discovery,
  type Emit,
  type Limit,
  type Result,
  SearchRun,
  type SearchOptions,
  brokenInvariant,
  rebuildTrace,
  successorsOf,
} from './search.ts';
import { Trail } from './trail.ts';
import { VisitedSet } from './visited.ts';

/** Expansions between two looks at the clock. */
const CLOCK_EVERY = 256;

/** Breadth-first search of `model`; whatever it spilled to disk is removed when it returns. */
export function bfs<S, A>(model: Model<S, A>, options: SearchOptions): Result {
  const levels = new Levels(model, options.spillBytes);
  try {
    return breadthFirst(model, options, levels);
  } finally {
    levels.removeSpilled();
  }
}

function breadthFirst<S, A>(model: Model<S, A>, options: SearchOptions, levels: Levels<S>): Result {
  const resumed = checkpointToResume(model, options);
  const search = new LevelSearch(model, options, levels, resumed);
  const { run } = search;
  if (resumed === undefined && !search.discoverInitialStates())
    return search.finish(search.overLimit ? 'maxStates' : undefined);
  const saver =
    options.checkpoint === undefined
      ? undefined
      : new CheckpointSaver(options.checkpoint, options.now ?? (() => performance.now()));
  const maxDepth = options.maxDepth ?? Infinity;
  let firstIndex = resumed?.counters.nextIndex ?? 0;
  let sinceClock = 0;
  while (levels.current.length > 0) {
    if (firstIndex === 0) search.startLevel();
    for (let i = firstIndex; i < levels.current.length; i++) {
      search.expand(i, run.depth >= maxDepth);
      if (++sinceClock === CLOCK_EVERY) {
        sinceClock = 0;
        const limit = search.limitReached(i);
        // A stop between two states can be taken up again; past the state limit states were dropped.
        const resumable = saver !== undefined && !search.overLimit;
        if (limit !== undefined) {
          if (resumable) saver.save(search.saved(i + 1));
          return search.finish(limit);
        }
        if (resumable && saver.due) saver.save(search.saved(i + 1));
      }
    }
    firstIndex = 0;
    if (search.found !== undefined || search.overLimit) {
      if (levels.next.length > 0) run.depth++;
      return search.finish(search.found === undefined ? 'maxStates' : undefined);
    }
    if (search.cutOffByDepth) return search.finish('maxDepth');
    search.advance();
    if (levels.current.length > 0) run.depth++;
  }
  return search.finish();
}

/**
 * What a breadth-first search holds between two states: the counts and visited set, the trail
 * back to the initial states, the levels, and what the expansions found; and the expansion of
 * one state.
 */
class LevelSearch<S, A> {
  readonly run: SearchRun<S, A>;
  private readonly trail: Trail;
  private readonly reducer: Reducer<S, A> | undefined;
  private readonly sleepSets: SleepSets<S, A> | undefined;
  private readonly successors: (s: S, emit: Emit<S>) => void;
  /** The seconds of the runs before a resume. */
  private readonly secondsBefore: number;
  /** The first violation in discovery order: the property and the state id. */
  found: { property: string; id: number } | undefined;
  /** Some new state was dropped at the distinct-state limit. */
  overLimit = false;
  /** A state of the level at the depth bound has successors, which were not kept. */
  cutOffByDepth = false;
  /** The id of the state being expanded, and how many successors it has had so far. */
  private parent = 0;
  private emitted = 0;

  constructor(
    private readonly model: Model<S, A>,
    private readonly options: SearchOptions,
    private readonly levels: Levels<S>,
    resumed: Checkpoint | undefined,
  ) {
    const counters = resumed?.counters;
    this.run = new SearchRun(
      model,
      resumed === undefined
        ? options
        : { ...options, visited: VisitedSet.restore(resumed.visited, resumed.counters.distinctStates) },
    );
    this.reducer = options.reduction === true ? new Reducer(model) : undefined;
    this.sleepSets = options.sleep === true ? new SleepSets(model) : undefined;
    if (this.sleepSets !== undefined && (resumed !== undefined || options.checkpoint !== undefined))
      throw new Error('sleep sets: a checkpoint does not save the sleep sets');
    this.successors = successorsOf(model);
    this.trail = resumed === undefined ? new Trail() : Trail.restore(resumed.parents, resumed.actions);
    this.secondsBefore = counters?.seconds ?? 0;
    this.found = counters?.found ?? undefined;
    if (resumed !== undefined) {
      const c = resumed.counters;
      this.run.statesGenerated = c.statesGenerated;
      this.run.depth = c.depth;
      this.run.coverage.add(c.coverage);
      levels.restore(resumed);
      this.overLimit = c.overLimit;
      this.cutOffByDepth = c.cutOffByDepth;
      this.reducer?.restore(resumed.nextLevelSeen, resumed.nextLevelSeenCount, c.reducedStates);
    }
  }

  /** Makes the initial states the first level; false when the search ends there (a violation, or the state limit). */
  discoverInitialStates(): boolean {
    const { model, run } = this;
    const inits = model.init();
    for (let i = 0; i < inits.length; i++) {
      const s = inits[i]!;
      run.statesGenerated++;
      const discovery = run.discover(s);
      if (discovery === Discovery.Seen) continue;
      if (discovery === Discovery.OverLimit) {
        this.overLimit = true;
        return false;
      }
      const id = run.distinctStates - 1;
      this.trail.set(id, -1, i);
      const broken = brokenInvariant(model, s);
      if (broken !== undefined) this.found ??= { property: broken, id };
      this.levels.current.push(s);
      this.sleepSets?.keepInitial();
    }
    return this.found === undefined;
  }

  /** The next level becomes the one to expand. */
  advance(): void {
    this.levels.advance();
    this.sleepSets?.advance();
  }

  startLevel(): void {
    this.levels.next.clear();
    this.reducer?.startLevel();
    this.cutOffByDepth = false;
  }

  /** Expands the level's state `i`; at the depth bound its successors are counted, not kept. */
  expand(i: number, atDepthBound: boolean): void {
    const s = this.levels.current.take(i);
    this.parent = this.levels.startId + i;
    this.emitted = 0;
    const beyondLimit = this.overLimit;
    if (atDepthBound) this.successors(s, this.countOnly);
    else if (this.sleepSets !== undefined) {
      // Slept actions count as enabled: a state whose every action sleeps is no deadlock. (Read
      // `emitted` after the expansion, which counts what it emits.)
      const slept = this.sleepSets.expand(s, i, this.emit);
      this.emitted += slept;
    } else if (this.reducer === undefined || !this.reducer.expand(s, this.run.visited, this.emit))
      this.successors(s, this.emit);
    // Past the state limit nothing new is kept, but the level is expanded to its end, as on workers.
    if (this.emitted === 0 && !this.options.deadlockAllowed && !beyondLimit)
      this.found ??= { property: DEADLOCK, id: this.parent };
    this.cutOffByDepth ||= atDepthBound && this.emitted > 0;
  }

  private readonly emit = (t: S, action: number, kind: number): void => {
    this.emitted++;
    this.run.coverage.firedKind(kind);
    this.visit(t, action);
  };

  private readonly countOnly = (): void => void this.emitted++;

  /** Records a successor of the state being expanded: new, it joins the next level. */
  private visit(t: S, action: number): void {
    const { run } = this;
    run.statesGenerated++;
    const discovery = run.discover(t);
    if (discovery === Discovery.Seen) {
      this.sleepSets?.reachedAgain(run.fingerprint);
      return;
    }
    if (discovery === Discovery.OverLimit) {
      this.overLimit = true;
      return;
    }
    const id = run.distinctStates - 1;
    this.trail.set(id, this.parent, action);
    this.reducer?.seenInNextLevel(run.fingerprint);
    this.sleepSets?.keep(run.fingerprint);
    if (this.found === undefined) {
      const broken = brokenInvariant(this.model, t);
      if (broken !== undefined) this.found = { property: broken, id };
    }
    this.levels.next.push(t, run.packed.words, run.packed.length);
  }

  /** What stops the search now (time, memory, a signal), if anything; `i`: the state just expanded. */
  limitReached(i: number): Limit | undefined {
    const { run, trail, levels } = this;
    return run.clock.check(
      () => run.progress(levels.current.length - i - 1 + levels.next.length),
      // What the lists may take at their next growth counts against --max-memory before it is taken.
      () => run.visited.growthBytes + trail.growthBytes + levels.growthBytes,
    );
  }

  /** The search as it stands before expanding the level's state `nextIndex`. */
  saved(nextIndex: number): SavedSearch {
    const { run, reducer, levels } = this;
    const visited = run.visited.snapshot();
    const { parents, actions } = this.trail.saved(run.distinctStates);
    const levelSections = levels.saved();
    const seen = reducer?.snapshot() ?? { table: new Int32Array(0), count: 0 };
    return {
      counters: {
        distinctStates: run.distinctStates,
        statesGenerated: run.statesGenerated,
        depth: run.depth,
        levelStartId: levels.startId,
        nextIndex,
        queueBytes: levels.queueBytes,
        seconds: this.secondsBefore + run.clock.seconds,
        coverage: run.coverage.raw,
        found: this.found ?? null,
        overLimit: this.overLimit,
        cutOffByDepth: this.cutOffByDepth,
        reducedStates: reducer?.reducedStates ?? 0,
      },
      visited: visited.table,
      parents,
      actions,
      ...levelSections,
      nextLevelSeen: seen.table,
      nextLevelSeenCount: seen.count,
    };
  }

  /** The result: the first violation found, else ok or the limit the search stopped at. */
  finish(stoppedBy?: Limit): Result {
    const { run, trail, levels, reducer, found } = this;
    const memory = {
      visitedBytes: run.visited.bytes,
      traceBytes: trail.bytes,
      queueBytes: levels.queueBytes,
      ...(levels.spills ? { spilledBytes: levels.spilledBytes } : {}),
    };
    const extra = { memory, ...(reducer === undefined ? {} : { reducedStates: reducer.reducedStates }) };
    let result: Result;
    if (found !== undefined) {
      const { init, actions } = trail.path(found.id);
      result = run.finish('violation', {
        violation: { property: found.property, trace: rebuildTrace(this.model, init, actions) },
        ...extra,
      });
    } else
      result =
        stoppedBy === undefined ? run.finish('ok', extra) : run.finish('incomplete', { stoppedBy, ...extra });
    return this.secondsBefore === 0 ? result : { ...result, seconds: result.seconds + this.secondsBefore };
  }
}
