// The reachable state graph, explored breadth-first and kept compactly for liveness checking:
// states are ids (discovery order), edges live in typed arrays (target, action index, label id),
// and per state only its BFS parent, its depth and a few mark bits are stored. Full states exist
// only while they wait in the frontier; a trace is rebuilt by re-running action indices.
import { FingerprintMap } from './fingerprint-map.ts';
import {
  type MemoryUse,
  heapNearlyFull,
  kindIndexOf,
  memoryBound,
  memoryInUse,
  stateFingerprint,
} from './search.ts';
import { IntList } from './int-list.ts';
import type { Model } from './model.ts';

export interface StateGraph {
  readonly states: number;
  readonly edges: number;
  /** Out-edges of state v are edgeStart[v] .. edgeStart[v + 1] - 1. */
  readonly edgeStart: Int32Array;
  readonly edgeTarget: Int32Array;
  /** The index of the edge's action in `actions(state)`. */
  readonly edgeAction: Int32Array;
  /** The edge's action label, as an index into `labels`. */
  readonly edgeLabel: Int32Array;
  readonly labels: readonly string[];
  /** The action kind of each label, as an index into the model's actionKinds. */
  readonly labelKind: Int32Array;
  /** BFS tree: the parent id (-1 for an initial state) and the action index that led here. */
  readonly parentOf: Int32Array;
  /** For an initial state, its index in init(); otherwise the action index from the parent. */
  readonly viaAction: Int32Array;
  readonly depth: Int32Array;
  /** Whether predicate `p` (an index into the explored predicates) holds in `state`. */
  holds(p: number, state: number): boolean;
  /** Bytes held by the graph while it was built and checked. */
  readonly bytes: number;
}

export interface ExploreOptions {
  readonly maxStates?: number;
  readonly maxSeconds?: number;
  /** Megabytes of resident memory the process may use (the heap's safe share applies whatever this says). */
  readonly maxMemory?: number;
  /** Memory in use (default: V8's and the process's figures); a test can pass its own. */
  readonly memory?: () => MemoryUse;
}

export type Explored =
  | { readonly graph: StateGraph }
  | { readonly stoppedBy: 'maxStates' | 'maxSeconds' | 'maxMemory'; readonly states: number };

/**
 * Explores every reachable state of `model`, evaluating each of `predicates` once per state: the
 * states themselves are not kept, so whatever is asked about them later must be asked now.
 */
export function exploreGraph<S, A>(
  model: Model<S, A>,
  predicates: readonly ((s: S) => boolean)[],
  options: ExploreOptions = {},
): Explored {
  const start = performance.now();
  const maxStates = options.maxStates ?? Infinity;
  const maxMs = (options.maxSeconds ?? Infinity) * 1000;
  const memory = options.memory ?? memoryInUse;
  const maxBytes = memoryBound(options.maxMemory, memory);
  const overMemory = (): boolean => {
    const m = memory();
    return heapNearlyFull(m) || m.rss > maxBytes;
  };
  const ids = new FingerprintMap();
  const fingerprint = new Int32Array(2);
  const fingerprintOf = stateFingerprint(model);
  const parentOf = new IntList();
  const viaAction = new IntList();
  const depth = new IntList();
  const marks = new IntList();
  const words = Math.ceil(predicates.length / 32);
  const edgeStart = new IntList();
  const edgeTarget = new IntList();
  const edgeAction = new IntList();
  const edgeLabel = new IntList();
  const labelIds = new Map<string, number>();
  const labelKind = new IntList(64);
  const kindOf = kindIndexOf(model);

  /** The id of `s`, recording it when new; -1 when the state limit forbids a new one. */
  const discover = (s: S, parent: number, action: number, level: number, frontier: S[]): number => {
    fingerprintOf(s, fingerprint);
    const before = ids.size;
    if (before >= maxStates) {
      const seen = ids.get(fingerprint[0]! | 0, fingerprint[1]! | 0);
      return seen === -1 ? -2 : seen;
    }
    const id = ids.idOf(fingerprint[0]! | 0, fingerprint[1]! | 0);
    if (id === before) {
      parentOf.push(parent);
      viaAction.push(action);
      depth.push(level);
      for (let w = 0; w < words; w++) {
        let bits = 0;
        for (let b = 0; b < 32 && w * 32 + b < predicates.length; b++)
          if (predicates[w * 32 + b]!(s)) bits |= 1 << b;
        marks.push(bits);
      }
      frontier.push(s);
    }
    return id;
  };
  const labelId = (a: A): number => {
    const label = model.label(a);
    let id = labelIds.get(label);
    if (id === undefined) {
      id = labelIds.size;
      labelIds.set(label, id);
      labelKind.push(kindOf(a));
    }
    return id;
  };

  let level: S[] = [];
  const inits = model.init();
  for (let i = 0; i < inits.length; i++) {
    if (discover(inits[i]!, -1, i, 0, level) === -2) return { stoppedBy: 'maxStates', states: ids.size };
  }
  let d = 0;
  while (level.length > 0) {
    const next: S[] = [];
    for (let i = 0; i < level.length; i++) {
      const s = level[i]!;
      const id = edgeStart.length;
      edgeStart.push(edgeTarget.length);
      const actions = model.actions(s);
      for (let j = 0; j < actions.length; j++) {
        const t = discover(model.next(s, actions[j]!), id, j, d + 1, next);
        if (t === -2) return { stoppedBy: 'maxStates', states: ids.size };
        edgeTarget.push(t);
        edgeAction.push(j);
        edgeLabel.push(labelId(actions[j]!));
      }
      if ((id & 255) === 255) {
        if (performance.now() - start >= maxMs) return { stoppedBy: 'maxSeconds', states: ids.size };
        // The graph's lists grow with every state: stop before the heap is nearly full, never abort.
        if (overMemory()) return { stoppedBy: 'maxMemory', states: ids.size };
      }
    }
    level = next;
    d++;
  }
  edgeStart.push(edgeTarget.length);

  const arrays = [edgeStart, edgeTarget, edgeAction, edgeLabel, parentOf, viaAction, depth, marks].map((l) =>
    l.take(),
  );
  const [starts, targets, actionIdx, labelIdx, parents, via, depths, markBits] = arrays as [
    Int32Array,
    Int32Array,
    Int32Array,
    Int32Array,
    Int32Array,
    Int32Array,
    Int32Array,
    Int32Array,
  ];
  return {
    graph: {
      states: ids.size,
      edges: targets.length,
      edgeStart: starts,
      edgeTarget: targets,
      edgeAction: actionIdx,
      edgeLabel: labelIdx,
      labels: [...labelIds.keys()],
      labelKind: labelKind.take(),
      parentOf: parents,
      viaAction: via,
      depth: depths,
      holds: (p, state) => (markBits[state * words + (p >>> 5)]! & (1 << (p & 31))) !== 0,
      bytes: ids.bytes + arrays.reduce((sum, a) => sum + a.byteLength, 0),
    },
  };
}
