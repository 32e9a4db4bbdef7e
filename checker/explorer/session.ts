// What the explorer shows of one path through a model: the state it reaches, that state's
// tables, every property's verdict there, and the enabled actions in the protocol's terms. A path
// is a list of action labels from an initial state, as in a trace file, so it can be shared in a
// URL and saved as a trace that `replay` accepts.
import { bfs } from '../engine/bfs.ts';
import type { Model } from '../engine/model.ts';
import type { Limit } from '../engine/search.ts';
import { stateView } from '../engine/trace.ts';
import type { Table, TraceRenderer, View } from '../report/renderer.ts';

export interface Explored<S> {
  readonly states: readonly S[];
  readonly labels: readonly string[];
}

export interface StepInfo {
  readonly step: number;
  readonly label: string;
  /** The step in the protocol's terms, when the model has a renderer. */
  readonly action: string;
}

export interface StateInfo {
  readonly path: readonly StepInfo[];
  readonly tables: readonly Table[];
  /** The state's variables as a trace records them, when there is no renderer to tabulate them. */
  readonly view: View;
  readonly properties: readonly { readonly name: string; readonly holds: boolean }[];
  readonly actions: readonly { readonly label: string; readonly action: string }[];
}

/** A path that does not replay: the index of the first label that is not enabled, and why. */
export class PathError extends Error {
  constructor(
    readonly index: number,
    message: string,
  ) {
    super(message);
  }
}

/** Takes the actions labelled `labels` from the model's first initial state. */
export function walk<S>(model: Model<S, unknown>, labels: readonly string[]): Explored<S> {
  const states: S[] = [model.init()[0]!];
  labels.forEach((label, i) => {
    const s = states[i] as S;
    const action = model.actions(s).find((a) => model.label(a) === label);
    if (action === undefined)
      throw new PathError(i, `step ${i + 1}: no action labelled ${JSON.stringify(label)} is enabled here`);
    states.push(model.next(s, action));
  });
  return { states, labels };
}

export function describeState<S>(
  model: Model<S, unknown>,
  renderer: TraceRenderer | undefined,
  explored: Explored<S>,
): StateInfo {
  const { states, labels } = explored;
  const s = states[states.length - 1]!;
  const views = states.map((x) => stateView(model, x));
  const meanings = renderer?.steps(views, labels as string[]);
  const path = labels.map((label, i) => ({ step: i + 1, label, action: meanings?.[i]?.action ?? label }));
  const actions = model.actions(s).map((a) => {
    const label = model.label(a);
    const meaning = renderer?.steps(
      [views[views.length - 1]!, stateView(model, model.next(s, a))],
      [label],
    )[0];
    return { label, action: meaning?.action ?? label };
  });
  const current = views[views.length - 1]!;
  return {
    path,
    tables: renderer?.tables(current) ?? [],
    view: current,
    properties: model.invariants.map((p) => ({ name: p.name, holds: p.holds(s) })),
    actions,
  };
}

/**
 * Breadth-first search from the end of a path (at most `maxStates` states and `maxSeconds`
 * seconds): the labels that lead from there to the nearest state violating a property; or, when
 * none is found, whether the search covered every state reachable from there or what stopped it.
 */
export function searchFrom<S>(
  model: Model<S, unknown>,
  from: S,
  maxStates: number,
  maxSeconds?: number,
):
  | { readonly labels: readonly string[]; readonly property: string }
  | { readonly exhausted: boolean; readonly stoppedBy?: Limit } {
  const result = bfs({ ...model, init: () => [from] }, { deadlockAllowed: true, maxStates, maxSeconds });
  if (result.status === 'violation')
    return { labels: result.violation!.trace.actions, property: result.violation!.property };
  return result.status === 'ok' ? { exhausted: true } : { exhausted: false, stoppedBy: result.stoppedBy };
}
