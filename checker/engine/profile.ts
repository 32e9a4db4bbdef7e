// Where the states come from: per component of a state, how many distinct values it takes over
// the reachable states, and how much it multiplies their count. A component's multiplier is the
// number of distinct states over the number left when that component is forgotten: 1 when the
// rest of the state determines it, its number of values when it varies freely beside the rest.
import { bfs } from './bfs.ts';
import type { Model } from './model.ts';
import type { SearchOptions } from './search.ts';

export interface ComponentProfile {
  readonly name: string;
  /** Distinct values of the component over the reachable states (an absent one counts as one). */
  readonly values: number;
  /** Distinct states / distinct states with this component forgotten. */
  readonly multiplier: number;
}

export interface StateProfile {
  readonly states: number;
  /** Most multiplying first. */
  readonly components: readonly ComponentProfile[];
}

/**
 * A state's components when the model names none: each top-level field, a list field split into
 * its items (`producers[0]`, `producers[1]`...), since the items are the actors.
 */
export function fieldComponents(s: unknown): Record<string, unknown> {
  if (typeof s !== 'object' || s === null || Array.isArray(s)) return { state: s };
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(s)) {
    if (Array.isArray(value)) value.forEach((item, i) => (out[`${field}[${i}]`] = item));
    else out[field] = value;
  }
  return out;
}

/** Interns component values: one small integer per distinct value. */
class Values {
  private readonly ids = new Map<string, number>();
  id(v: unknown): number {
    const key = v === undefined ? '' : JSON.stringify(v);
    let id = this.ids.get(key);
    if (id === undefined) this.ids.set(key, (id = this.ids.size));
    return id;
  }
}

/** The profile of a set of distinct states, read through `components`. */
export function profileStates<S>(
  states: Iterable<S>,
  components: (s: S) => Readonly<Record<string, unknown>> = fieldComponents,
): StateProfile {
  const names: string[] = [];
  const column = new Map<string, number>();
  const values: Values[] = [];
  const rows: number[][] = [];
  for (const s of states) {
    const row: number[] = [];
    for (const [name, v] of Object.entries(components(s))) {
      let c = column.get(name);
      if (c === undefined) {
        column.set(name, (c = names.length));
        names.push(name);
        values.push(new Values());
      }
      row[c] = values[c]!.id(v);
    }
    rows.push(row);
  }
  // A component a state lacks has the absent value's id.
  const absent = values.map((v) => v.id(undefined));
  const key = (row: readonly number[], skip: number) => {
    let k = '';
    for (let c = 0; c < names.length; c++) if (c !== skip) k += `${row[c] ?? absent[c]},`;
    return k;
  };
  const profiles = names.map((name, c) => {
    const rest = new Set<string>();
    for (const row of rows) rest.add(key(row, c));
    const used = new Set<number>(rows.map((row) => row[c] ?? absent[c]!));
    return { name, values: used.size, multiplier: rows.length / rest.size };
  });
  profiles.sort((a, b) => b.multiplier - a.multiplier || a.name.localeCompare(b.name));
  return { states: rows.length, components: profiles };
}

/**
 * Every reachable state of `model` (breadth-first, as `options` bound it), profiled. The states
 * are collected by a property that always holds, so the search sees each distinct state once.
 */
export function profileModel<S, A>(
  model: Model<S, A>,
  options: SearchOptions,
): StateProfile & { readonly status: string } {
  const seen: S[] = [];
  const collecting: Model<S, A> = {
    ...model,
    invariants: [
      { name: 'Collect', description: 'holds; records the state', holds: (s) => seen.push(s) > 0 },
    ],
  };
  const result = bfs(collecting, { ...options, reduction: false });
  const components = model.components?.bind(model) ?? fieldComponents;
  return { status: result.status, ...profileStates(seen, components) };
}
