// Breadth-first search. A state's id is its discovery order; per id only the parent id and the
// index of the action that led to it are kept, in typed arrays, and full states only while
// they wait in the frontier. Invariants are checked when a state is first discovered, so the
// first violation found has a shortest trace.
import { fingerprintInto } from './fingerprint.ts';
import type { Model } from './model.ts';
import {
  Clock,
  CoverageCounter,
  DEADLOCK,
  brokenInvariant,
  rebuildTrace,
  type Limit,
  type Result,
  type SearchOptions,
} from './search.ts';
import { VisitedSet } from './visited.ts';

/** Expansions between two looks at the clock. */
const CLOCK_EVERY = 256;

export function bfs<S, A>(model: Model<S, A>, options: SearchOptions): Result {
  const clock = new Clock(options);
  const coverage = new CoverageCounter(model);
  const visited = new VisitedSet();
  const fingerprint = new Uint32Array(2);
  const maxStates = options.maxStates ?? Infinity;
  const maxDepth = options.maxDepth ?? Infinity;

  // parentOf[id] is -1 for an initial state, whose viaAction[id] is then its index in init().
  let parentOf = new Int32Array(1 << 12);
  let viaAction = new Int32Array(1 << 12);
  let distinct = 0;
  let generated = 0;
  let depth = 0;

  const finish = (extra: Partial<Result> & Pick<Result, 'status'>): Result => ({
    distinctStates: distinct,
    statesGenerated: generated,
    depth,
    seconds: clock.seconds,
    coverage: coverage.result(),
    ...extra,
  });

  const traceTo = (id: number) => {
    const indices: number[] = [];
    for (; parentOf[id]! !== -1; id = parentOf[id]!) indices.push(viaAction[id]!);
    return rebuildTrace(model, viaAction[id]!, indices.reverse());
  };

  const violation = (property: string, id: number): Result =>
    finish({ status: 'violation', violation: { property, trace: traceTo(id) } });

  const stopped = (limit: Limit): Result => finish({ status: 'incomplete', stoppedBy: limit });

  const isNew = (s: S): boolean => {
    fingerprintInto(model.canonical === undefined ? s : model.canonical(s), fingerprint);
    return visited.add(fingerprint[0]!, fingerprint[1]!);
  };

  const record = (parent: number, action: number): number => {
    if (distinct === parentOf.length) {
      const biggerParents = new Int32Array(distinct * 2);
      biggerParents.set(parentOf);
      parentOf = biggerParents;
      const biggerActions = new Int32Array(distinct * 2);
      biggerActions.set(viaAction);
      viaAction = biggerActions;
    }
    parentOf[distinct] = parent;
    viaAction[distinct] = action;
    return distinct++;
  };

  let level: (S | undefined)[] = [];
  const inits = model.init();
  for (let i = 0; i < inits.length; i++) {
    const s = inits[i]!;
    generated++;
    if (!isNew(s)) continue;
    if (distinct >= maxStates) return stopped('maxStates');
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
      if (depth >= maxDepth) {
        cutOffByDepth ||= actions.length > 0;
        continue;
      }
      for (let j = 0; j < actions.length; j++) {
        const action = actions[j]!;
        const t = model.next(s, action);
        generated++;
        coverage.fired(action);
        if (!isNew(t)) continue;
        if (distinct >= maxStates) return stopped('maxStates');
        const tid = record(id, j);
        const broken = brokenInvariant(model, t);
        if (broken !== undefined) {
          depth++;
          return violation(broken, tid);
        }
        nextLevel.push(t);
      }
      if (++sinceClock === CLOCK_EVERY) {
        sinceClock = 0;
        const queue = level.length - i - 1 + nextLevel.length;
        if (clock.check(() => ({ distinctStates: distinct, statesGenerated: generated, queue, depth }))) {
          return stopped('maxSeconds');
        }
      }
    }
    if (cutOffByDepth) return stopped('maxDepth');
    levelStartId += level.length;
    level = nextLevel;
    if (level.length > 0) depth++;
  }
  return finish({ status: 'ok' });
}
