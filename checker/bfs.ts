// Breadth-first search. A state's id is its discovery order; per id only the parent id and the
// index of the action that led to it are kept, in typed arrays, and full states only while
// they wait in the frontier. Invariants are checked when a state is first discovered, so the
// first violation found has a shortest trace.
import type { Model } from './model.ts';
import { DEADLOCK, Discovery, SearchRun, brokenInvariant, rebuildTrace, type Result, type SearchOptions } from './search.ts';

/** Expansions between two looks at the clock. */
const CLOCK_EVERY = 256;

export function bfs<S, A>(model: Model<S, A>, options: SearchOptions): Result {
  const run = new SearchRun(model, options);
  const maxDepth = options.maxDepth ?? Infinity;

  // parentOf[id] is -1 for an initial state, whose viaAction[id] is then its index in init().
  let parentOf = new Int32Array(1 << 12);
  let viaAction = new Int32Array(1 << 12);

  const record = (parent: number, action: number): number => {
    const id = run.distinctStates - 1;
    if (id === parentOf.length) {
      const biggerParents = new Int32Array(id * 2);
      biggerParents.set(parentOf);
      parentOf = biggerParents;
      const biggerActions = new Int32Array(id * 2);
      biggerActions.set(viaAction);
      viaAction = biggerActions;
    }
    parentOf[id] = parent;
    viaAction[id] = action;
    return id;
  };

  const violation = (property: string, id: number): Result => {
    const indices: number[] = [];
    for (; parentOf[id]! !== -1; id = parentOf[id]!) indices.push(viaAction[id]!);
    return run.finish('violation', { violation: { property, trace: rebuildTrace(model, viaAction[id]!, indices.reverse()) } });
  };

  let level: (S | undefined)[] = [];
  const inits = model.init();
  for (let i = 0; i < inits.length; i++) {
    const s = inits[i]!;
    run.statesGenerated++;
    const discovery = run.discover(s);
    if (discovery === Discovery.Seen) continue;
    if (discovery === Discovery.OverLimit) return run.finish('incomplete', { stoppedBy: 'maxStates' });
    const id = record(-1, i);
    const broken = brokenInvariant(model, s);
    if (broken !== undefined) return violation(broken, id);
    level.push(s);
  }

  let levelStartId = 0;
  let sinceClock = 0;
  while (level.length > 0) {
    const nextLevel: S[] = [];
    let cutOffByDepth = false;
    for (let i = 0; i < level.length; i++) {
      const s = level[i]!;
      level[i] = undefined;
      const id = levelStartId + i;
      const actions = model.actions(s);
      if (actions.length === 0 && !options.deadlockAllowed) return violation(DEADLOCK, id);
      if (run.depth >= maxDepth) {
        cutOffByDepth ||= actions.length > 0;
        continue;
      }
      for (let j = 0; j < actions.length; j++) {
        const action = actions[j]!;
        const t = model.next(s, action);
        run.statesGenerated++;
        run.coverage.fired(action);
        const discovery = run.discover(t);
        if (discovery === Discovery.Seen) continue;
        if (discovery === Discovery.OverLimit) return run.finish('incomplete', { stoppedBy: 'maxStates' });
        const tid = record(id, j);
        const broken = brokenInvariant(model, t);
        if (broken !== undefined) {
          run.depth++;
          return violation(broken, tid);
        }
        nextLevel.push(t);
      }
      if (++sinceClock === CLOCK_EVERY) {
        sinceClock = 0;
        if (run.clock.check(() => run.progress(level.length - i - 1 + nextLevel.length))) {
          return run.finish('incomplete', { stoppedBy: 'maxSeconds' });
        }
      }
    }
    if (cutOffByDepth) return run.finish('incomplete', { stoppedBy: 'maxDepth' });
    levelStartId += level.length;
    level = nextLevel;
    if (level.length > 0) run.depth++;
  }
  return run.finish('ok');
}
