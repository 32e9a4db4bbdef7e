// Temporal properties checked under weak fairness, as TLA+ states them: `<>Q` (eventually, from
// every initial state) and `P ~> Q` (leads-to: [](P => <>Q)).
//
// A behaviour is an infinite path through the reachable state graph: it takes some enabled action
// whenever there is one, and stutters forever only in a state where no action is enabled. Weak
// fairness of a class: the class is not enabled forever from some point on without being taken.
//
// The check: a goal fails when some reachable state satisfies P and not Q, and from it a path
// through states where Q never holds reaches a fair cycle. Under weak fairness a strongly
// connected component (SCC) of that sub-graph holds a fair cycle if and only if, for every fair
// class, the class is disabled in one of its states or taken by one of its inner edges (a cycle
// can then visit every state and edge of the SCC); a state without successors is a fair one-state
// cycle (stuttering). The counterexample is a lasso: a shortest prefix and a cycle.
import { type ExploreOptions, type StateGraph, exploreGraph } from './graph.ts';
import type { Goal, Model } from './model.ts';
import { type Trace, rebuildTrace } from './search.ts';

/** A named temporal property: the conjunction of its goals (one per parameter value). */
export interface TemporalProperty<S> {
  readonly name: string;
  readonly description: string;
  readonly goals: readonly Goal<S>[];
}

/**
 * A weakly fair class of actions. `perAction`: each action of these kinds, told apart by its
 * label, is weakly fair on its own (TLA+'s \A x: WF(A(x))); otherwise the class as a whole is
 * (WF(A \/ B)), and any action of it satisfies it.
 */
export interface Fairness {
  readonly kinds: readonly string[];
  readonly perAction: boolean;
}

export function describeFairness(f: Fairness): string {
  return f.perAction ? `each ${f.kinds.join(', each ')} action` : `the class {${f.kinds.join(', ')}}`;
}

export interface Lasso extends Trace {
  /** The goal that fails (its label). */
  readonly goal: string;
  /** The index of the state where P held (0 for eventually) and after which Q never holds. */
  readonly trigger: number;
  /** The index of the cycle's first state; the last state's successor is states[loop]. */
  readonly loop: number;
  /** The label of the action from the last state back to states[loop]; absent: it stutters. */
  readonly loopAction?: string;
}

export interface Verdict {
  readonly property: string;
  readonly goals: number;
  /** Absent when the property holds. */
  readonly lasso?: Lasso;
}

export interface LivenessResult {
  readonly status: 'ok' | 'violation' | 'incomplete';
  readonly stoppedBy?: 'maxStates' | 'maxSeconds' | 'maxMemory';
  readonly states: number;
  readonly edges: number;
  readonly seconds: number;
  /** Bytes of the stored graph. */
  readonly bytes: number;
  readonly verdicts: readonly Verdict[];
}

export interface LivenessOptions extends ExploreOptions {
  readonly fairness: readonly Fairness[];
}

export function checkLiveness<S, A>(
  model: Model<S, A>,
  properties: readonly TemporalProperty<S>[],
  options: LivenessOptions,
): LivenessResult {
  const start = performance.now();
  // Predicates 2g and 2g + 1 are goal g's P and Q.
  const predicates: ((s: S) => boolean)[] = [];
  for (const p of properties) {
    for (const g of p.goals) predicates.push(g.kind === 'leadsTo' ? g.p : () => false, g.q);
  }
  const explored = exploreGraph(model, predicates, options);
  const seconds = () => (performance.now() - start) / 1000;
  if (!('graph' in explored)) {
    return {
      status: 'incomplete',
      stoppedBy: explored.stoppedBy,
      states: explored.states,
      edges: 0,
      seconds: seconds(),
      bytes: 0,
      verdicts: [],
    };
  }
  const graph = explored.graph;
  const fairness = compileFairness(model, options.fairness);
  const verdicts: Verdict[] = [];
  let predicate = 0;
  for (const p of properties) {
    let lasso: Lasso | undefined;
    for (const g of p.goals) {
      const at = predicate;
      predicate += 2;
      if (lasso !== undefined) continue;
      const found = findLasso(
        graph,
        fairness,
        (v) => (g.kind === 'leadsTo' ? graph.holds(at, v) : graph.parentOf[v] === -1),
        (v) => graph.holds(at + 1, v),
      );
      if (found !== undefined) lasso = toLasso(model, graph, found, g.label);
    }
    verdicts.push({ property: p.name, goals: p.goals.length, ...(lasso === undefined ? {} : { lasso }) });
  }
  return {
    status: verdicts.some((v) => v.lasso !== undefined) ? 'violation' : 'ok',
    states: graph.states,
    edges: graph.edges,
    seconds: seconds(),
    bytes: graph.bytes,
    verdicts,
  };
}

/** A fairness class as the set of action-kind indices it covers. */
interface FairClass {
  readonly kinds: ReadonlySet<number>;
  readonly perAction: boolean;
}

function compileFairness(model: Model<unknown, unknown>, fairness: readonly Fairness[]): FairClass[] {
  return fairness.map((f) => ({
    perAction: f.perAction,
    kinds: new Set(
      f.kinds.map((k) => {
        const i = model.actionKinds.indexOf(k);
        if (i < 0) throw new Error(`fairness: ${JSON.stringify(k)} is not an action kind of the model`);
        return i;
      }),
    ),
  }));
}

/**
 * Something a fair cycle must do for one class: take an edge of it, or pass a state where it
 * is disabled. `label` is -1 for a whole class, else the one action (label id) it is about.
 */
interface Obligation {
  readonly cls: FairClass;
  readonly label: number;
}

interface FoundLasso {
  readonly trigger: number;
  /** Edges from the trigger to the cycle's first state. */
  readonly stem: number[];
  /** Edges of the cycle, back to its first state; empty when it stutters. */
  readonly cycle: number[];
}

function findLasso(
  graph: StateGraph,
  fairness: readonly FairClass[],
  p: (v: number) => boolean,
  q: (v: number) => boolean,
): FoundLasso | undefined {
  const { states, edgeStart, edgeTarget } = graph;
  // The region: states reachable from a trigger (P and not Q) without passing a Q state.
  const triggers: number[] = [];
  const inRegion = new Uint8Array(states);
  for (let v = 0; v < states; v++) {
    if (p(v) && !q(v)) {
      triggers.push(v);
      inRegion[v] = 1;
    }
  }
  if (triggers.length === 0) return undefined;
  const queue = triggers.slice();
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i]!;
    for (let e = edgeStart[v]!; e < edgeStart[v + 1]!; e++) {
      const w = edgeTarget[e]!;
      if (inRegion[w] === 0 && !q(w)) {
        inRegion[w] = 1;
        queue.push(w);
      }
    }
  }
  const sccOf = strongComponents(graph, inRegion);
  const fair = fairComponents(graph, fairness, sccOf, inRegion);
  if (fair.size === 0) return undefined;

  // Shortest stem overall: a BFS inside the region where each trigger joins at its own depth.
  const dist = new Int32Array(states).fill(-1);
  const viaEdge = new Int32Array(states).fill(-1);
  const sources = triggers.slice().sort((a, b) => graph.depth[a]! - graph.depth[b]! || a - b);
  let next = 0;
  let level: number[] = [];
  let d = 0;
  for (;;) {
    if (level.length === 0) {
      if (next === sources.length)
        throw new Error('liveness: a fair component is unreachable from every trigger');
      d = Math.max(d, graph.depth[sources[next]!]!);
    }
    while (next < sources.length && graph.depth[sources[next]!]! <= d) {
      const v = sources[next++]!;
      if (dist[v] === -1) {
        dist[v] = d;
        level.push(v);
      }
    }
    const entry = level.find((v) => fair.has(sccOf[v]!));
    if (entry !== undefined) {
      const stem: number[] = [];
      let v = entry;
      for (; viaEdge[v] !== -1; v = edgeSource(graph, viaEdge[v]!)) stem.push(viaEdge[v]!);
      return { trigger: v, stem: stem.reverse(), cycle: fairCycle(graph, fairness, sccOf, entry) };
    }
    const following: number[] = [];
    for (const v of level) {
      for (let e = edgeStart[v]!; e < edgeStart[v + 1]!; e++) {
        const w = edgeTarget[e]!;
        if (inRegion[w] === 1 && dist[w] === -1) {
          dist[w] = d + 1;
          viaEdge[w] = e;
          following.push(w);
        }
      }
    }
    level = following;
    d++;
  }
}

/** The source state of edge `e` (a binary search over edgeStart). */
function edgeSource(graph: StateGraph, e: number): number {
  let lo = 0;
  let hi = graph.states - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (graph.edgeStart[mid]! <= e) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Tarjan's algorithm without recursion, on the states in `inRegion`: the SCC id of each (-1 outside). */
function strongComponents(graph: StateGraph, inRegion: Uint8Array): Int32Array {
  const { states, edgeStart, edgeTarget } = graph;
  const index = new Int32Array(states).fill(-1);
  const low = new Int32Array(states);
  const sccOf = new Int32Array(states).fill(-1);
  const onStack = new Uint8Array(states);
  const stack = new Int32Array(states);
  const calls = new Int32Array(states);
  const nextEdge = new Int32Array(states);
  let stackTop = 0;
  let counter = 0;
  let components = 0;
  for (let root = 0; root < states; root++) {
    if (inRegion[root] === 0 || index[root] !== -1) continue;
    let depth = 0;
    const enter = (v: number) => {
      index[v] = low[v] = counter++;
      stack[stackTop++] = v;
      onStack[v] = 1;
      nextEdge[v] = edgeStart[v]!;
      calls[depth++] = v;
    };
    enter(root);
    while (depth > 0) {
      const v = calls[depth - 1]!;
      if (nextEdge[v]! < edgeStart[v + 1]!) {
        const w = edgeTarget[nextEdge[v]!++]!;
        if (inRegion[w] === 0) continue;
        if (index[w] === -1) enter(w);
        else if (onStack[w] === 1) low[v] = Math.min(low[v]!, index[w]!);
        continue;
      }
      depth--;
      if (depth > 0) {
        const parent = calls[depth - 1]!;
        low[parent] = Math.min(low[parent]!, low[v]!);
      }
      if (low[v] === index[v]) {
        let w: number;
        do {
          w = stack[--stackTop]!;
          onStack[w] = 0;
          sccOf[w] = components;
        } while (w !== v);
        components++;
      }
    }
  }
  return sccOf;
}

function isEnabled(graph: StateGraph, v: number, o: Obligation): boolean {
  for (let e = graph.edgeStart[v]!; e < graph.edgeStart[v + 1]!; e++) if (isOf(graph, e, o)) return true;
  return false;
}

function isOf(graph: StateGraph, e: number, o: Obligation): boolean {
  const label = graph.edgeLabel[e]!;
  return o.label === -1 ? o.cls.kinds.has(graph.labelKind[label]!) : label === o.label;
}

/** The obligations a cycle through `members` must meet: one per class, or per action of a per-action class enabled there. */
function obligations(
  graph: StateGraph,
  fairness: readonly FairClass[],
  members: readonly number[],
): Obligation[] {
  const out: Obligation[] = [];
  for (const cls of fairness) {
    if (!cls.perAction) {
      out.push({ cls, label: -1 });
      continue;
    }
    const labels = new Set<number>();
    for (const v of members) {
      for (let e = graph.edgeStart[v]!; e < graph.edgeStart[v + 1]!; e++) {
        const label = graph.edgeLabel[e]!;
        if (cls.kinds.has(graph.labelKind[label]!)) labels.add(label);
      }
    }
    for (const label of [...labels].sort((a, b) => a - b)) out.push({ cls, label });
  }
  return out;
}

/** The SCC ids that hold a fair cycle (or are a state without successors), in time linear in the region. */
function fairComponents(
  graph: StateGraph,
  fairness: readonly FairClass[],
  sccOf: Int32Array,
  inRegion: Uint8Array,
): Set<number> {
  const { edgeStart, edgeTarget, edgeLabel, labelKind } = graph;
  const members = new Map<number, number[]>();
  for (let v = 0; v < graph.states; v++) {
    if (inRegion[v] === 0) continue;
    const list = members.get(sccOf[v]!);
    if (list === undefined) members.set(sccOf[v]!, [v]);
    else list.push(v);
  }
  // Per label: the last state that counted it, in how many states of the SCC it is enabled, and
  // the SCC whose inner edge last took it.
  const lastState = new Int32Array(graph.labels.length).fill(-1);
  const enabledIn = new Int32Array(graph.labels.length);
  const takenIn = new Int32Array(graph.labels.length).fill(-1);
  const fair = new Set<number>();
  for (const [c, vs] of members) {
    const v0 = vs[0]!;
    if (edgeStart[v0] === edgeStart[v0 + 1]) {
      fair.add(c);
      continue;
    }
    const seen: number[] = [];
    let innerEdge = false;
    for (const v of vs) {
      for (let e = edgeStart[v]!; e < edgeStart[v + 1]!; e++) {
        const label = edgeLabel[e]!;
        if (lastState[label] !== v) {
          if (enabledIn[label] === 0) seen.push(label);
          lastState[label] = v;
          enabledIn[label]!++;
        }
        if (sccOf[edgeTarget[e]!] === c) {
          innerEdge = true;
          takenIn[label] = c;
        }
      }
    }
    // A class is met when one of its actions is taken inside, or (whole class) when in some state
    // none of its actions is enabled, or (per action) when each enabled-everywhere action is taken.
    const met = (cls: FairClass) => {
      const ofClass = seen.filter((label) => cls.kinds.has(labelKind[label]!));
      if (cls.perAction)
        return ofClass.every((label) => enabledIn[label]! < vs.length || takenIn[label] === c);
      if (ofClass.some((label) => takenIn[label] === c)) return true;
      return vs.some((v) => {
        for (let e = edgeStart[v]!; e < edgeStart[v + 1]!; e++)
          if (cls.kinds.has(labelKind[edgeLabel[e]!]!)) return false;
        return true;
      });
    };
    if (innerEdge && fairness.every(met)) fair.add(c);
    for (const label of seen) enabledIn[label] = 0;
  }
  return fair;
}

/** Edges of a shortest path inside SCC `c` from `from` to a state `goal` accepts (empty if `from` does). */
function pathInside(
  graph: StateGraph,
  sccOf: Int32Array,
  c: number,
  from: number,
  goal: (v: number) => boolean,
): number[] {
  const viaEdge = new Map<number, number>([[from, -1]]);
  const queue = [from];
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i]!;
    if (goal(v)) {
      const path: number[] = [];
      for (let w = v; viaEdge.get(w)! !== -1; w = edgeSource(graph, viaEdge.get(w)!))
        path.push(viaEdge.get(w)!);
      return path.reverse();
    }
    for (let e = graph.edgeStart[v]!; e < graph.edgeStart[v + 1]!; e++) {
      const w = graph.edgeTarget[e]!;
      if (sccOf[w] === c && !viaEdge.has(w)) {
        viaEdge.set(w, e);
        queue.push(w);
      }
    }
  }
  throw new Error('liveness: no path inside a strongly connected component');
}

/** A cycle from `entry` through its fair SCC meeting every obligation, closed back at `entry`. */
function fairCycle(
  graph: StateGraph,
  fairness: readonly FairClass[],
  sccOf: Int32Array,
  entry: number,
): number[] {
  const c = sccOf[entry]!;
  if (graph.edgeStart[entry] === graph.edgeStart[entry + 1]) return [];
  const members: number[] = [];
  for (let v = 0; v < graph.states; v++) if (sccOf[v] === c) members.push(v);
  const cycle: number[] = [];
  const passed = [entry];
  let at = entry;
  const walk = (path: number[]) => {
    for (const e of path) {
      cycle.push(e);
      at = graph.edgeTarget[e]!;
      passed.push(at);
    }
  };
  for (const o of obligations(graph, fairness, members)) {
    if (cycle.some((e) => isOf(graph, e, o)) || passed.some((v) => !isEnabled(graph, v, o))) continue;
    const disabledSomewhere = members.some((v) => !isEnabled(graph, v, o));
    if (disabledSomewhere) {
      walk(pathInside(graph, sccOf, c, at, (v) => !isEnabled(graph, v, o)));
    } else {
      // Go to a state with an inner edge of the obligation and take it.
      const inner = (v: number) => {
        for (let e = graph.edgeStart[v]!; e < graph.edgeStart[v + 1]!; e++)
          if (sccOf[graph.edgeTarget[e]!] === c && isOf(graph, e, o)) return e;
        return -1;
      };
      walk(pathInside(graph, sccOf, c, at, (v) => inner(v) !== -1));
      walk([inner(at)]);
    }
  }
  if (cycle.length === 0) {
    // Nothing was needed: any inner edge out of the entry starts the cycle.
    let e = graph.edgeStart[entry]!;
    while (sccOf[graph.edgeTarget[e]!] !== c) e++;
    walk([e]);
  }
  walk(pathInside(graph, sccOf, c, at, (v) => v === entry));
  return cycle;
}

/** The states and labels of a found lasso, rebuilt by re-running action indices from the initial state. */
function toLasso<S, A>(model: Model<S, A>, graph: StateGraph, found: FoundLasso, goal: string): Lasso {
  const treePath: number[] = [];
  let v = found.trigger;
  for (; graph.parentOf[v] !== -1; v = graph.parentOf[v]!) treePath.push(graph.viaAction[v]!);
  treePath.reverse();
  const trigger = treePath.length;
  const edges = [...found.stem, ...found.cycle];
  const trace = rebuildTrace(model, graph.viaAction[v]!, [
    ...treePath,
    ...edges.map((e) => graph.edgeAction[e]!),
  ]);
  const loop = trigger + found.stem.length;
  if (found.cycle.length === 0) return { ...trace, goal, trigger, loop };
  // The last step returns to states[loop]: it is kept as the loop action, not as a state.
  return {
    states: trace.states.slice(0, -1),
    actions: trace.actions.slice(0, -1),
    goal,
    trigger,
    loop,
    loopAction: trace.actions[trace.actions.length - 1]!,
  };
}

/**
 * Checks a cycle given as its states and the actions taken from each (the last one returns to
 * the first; no action: a one-state cycle that stutters). Returns the first fairness class the
 * cycle treats unfairly, described, or undefined when it is fair.
 */
export function unfairOnCycle<S, A>(
  model: Model<S, A>,
  fairness: readonly Fairness[],
  cycle: readonly S[],
  taken: readonly A[],
): string | undefined {
  const enabled = cycle.map((s) => model.actions(s));
  if (taken.length === 0 && enabled[0]!.length > 0) return 'stuttering although an action is enabled';
  for (const f of fairness) {
    const ofClass = (a: A) => f.kinds.includes(model.kind(a));
    if (f.perAction) {
      const takenLabels = new Set(taken.filter(ofClass).map((a) => model.label(a)));
      const always = enabled.map((as) => new Set(as.filter(ofClass).map((a) => model.label(a))));
      const starved = [...always[0]!].find(
        (label) => always.every((set) => set.has(label)) && !takenLabels.has(label),
      );
      if (starved !== undefined) return `${starved} is enabled in every state of the cycle and never taken`;
    } else if (!taken.some(ofClass) && enabled.every((as) => as.some(ofClass))) {
      return `${describeFairness(f)} is enabled in every state of the cycle and never taken`;
    }
  }
  return undefined;
}
