// Shrinking a counterexample by delta debugging (Zeller's ddmin) over its action labels: drop
// chunks of steps, re-execute the rest by label from the same initial state, and keep the
// candidate when every step still finds its action and the same property is violated. A run
// that violates the property early is cut there (its shortest violating prefix).
import type { Model } from './model.ts';
import { DEADLOCK, type Trace } from './search.ts';

/** Whether a state violates `property` (an invariant's name, or DEADLOCK). */
export function violates<S>(model: Model<S, unknown>, property: string): (s: S) => boolean {
  if (property === DEADLOCK) return (s) => model.actions(s).length === 0;
  const invariant = model.invariants.find((p) => p.name === property);
  if (invariant === undefined) throw new Error(`shrink: the model has no property ${property}`);
  return (s) => !invariant.holds(s);
}

export interface ShrinkResult {
  readonly trace: Trace;
  /** Candidates re-executed. */
  readonly tried: number;
}

function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next.push(Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    row = next;
  }
  return row[b.length]!;
}

/**
 * The enabled action labelled `label`; failing that, the enabled action of the same kind whose
 * label is closest to it. Dropping steps can rename the steps after them (a label that counts
 * connections or retries, say); the candidate is then judged by what it really does, and the
 * labels written are those of the actions taken.
 */
function pick<S, A>(model: Model<S, A>, s: S, label: string, kinds: Map<string, string>): A | undefined {
  const enabled = model.actions(s);
  const exact = enabled.find((a) => model.label(a) === label);
  if (exact !== undefined) return exact;
  let best: A | undefined;
  let bestDistance = Infinity;
  for (const a of enabled) {
    if (model.kind(a) !== kinds.get(label)) continue;
    const distance = editDistance(model.label(a), label);
    if (distance < bestDistance) [best, bestDistance] = [a, distance];
  }
  return best;
}

/**
 * Runs `labels` from `init`, matching each as `pick` does; undefined when no action matches.
 * Stops at the first state where `violated` holds, or fails when none does. `kinds` learns the
 * kind of every label taken.
 */
export function execute<S, A>(
  model: Model<S, A>,
  init: S,
  labels: readonly string[],
  violated: (s: S) => boolean,
  kinds = new Map<string, string>(),
): Trace | undefined {
  let s = init;
  const states: S[] = [s];
  const actions: string[] = [];
  if (violated(s)) return { states, actions };
  for (const label of labels) {
    const action = pick(model, s, label, kinds);
    if (action === undefined) return undefined;
    const taken = model.label(action);
    kinds.set(taken, model.kind(action));
    s = model.next(s, action);
    states.push(s);
    actions.push(taken);
    if (violated(s)) return { states, actions };
  }
  return undefined;
}

/** Zeller's ddmin: drops ever smaller contiguous chunks of steps while the violation stays. */
function ddmin(run: (labels: readonly string[]) => Trace | undefined, best: Trace): Trace {
  let granularity = 2;
  while (best.actions.length >= 2) {
    const current = best.actions;
    const chunk = Math.ceil(current.length / granularity);
    let smaller: Trace | undefined;
    for (let start = 0; start < current.length && smaller === undefined; start += chunk) {
      smaller = run([...current.slice(0, start), ...current.slice(start + chunk)]);
    }
    if (smaller !== undefined) {
      best = smaller;
      granularity = Math.max(granularity - 1, 2);
    } else if (granularity < current.length) {
      granularity = Math.min(granularity * 2, current.length);
    } else {
      break;
    }
  }
  return best;
}

/** Drops two steps that are not adjacent (a fault and the retry it caused, say); undefined when no pair goes. */
function dropPair(run: (labels: readonly string[]) => Trace | undefined, best: Trace): Trace | undefined {
  const current = best.actions;
  for (let i = 0; i < current.length; i++) {
    for (let j = i + 2; j < current.length; j++) {
      const smaller = run(current.filter((_, k) => k !== i && k !== j));
      if (smaller !== undefined) return smaller;
    }
  }
  return undefined;
}

/** A trace from `init` no longer than `labels` that still ends in a state where `violated` holds. */
export function shrink<S, A>(
  model: Model<S, A>,
  init: S,
  labels: readonly string[],
  violated: (s: S) => boolean,
): ShrinkResult {
  let tried = 0;
  const kinds = new Map<string, string>();
  const run = (candidate: readonly string[]) => {
    tried++;
    return execute(model, init, candidate, violated, kinds);
  };
  const first = run(labels);
  if (first === undefined) throw new Error('shrink: the trace to shrink does not violate the property');
  let best = ddmin(run, first);
  for (let smaller = dropPair(run, best); smaller !== undefined; smaller = dropPair(run, best))
    best = ddmin(run, smaller);
  return { trace: best, tried };
}
