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

/** Reads distinct states one at a time, keeping a row of small integers per state, not the state. */
class Profiler<S> {
  private readonly names: string[] = [];
  private readonly column = new Map<string, number>();
  private readonly values: Values[] = [];
  private readonly rows: Int32Array[] = [];

  constructor(private readonly components: (s: S) => Readonly<Record<string, unknown>>) {}

  add(s: S): void {
    const ids: [number, number][] = [];
    for (const [name, v] of Object.entries(this.components(s))) {
      let c = this.column.get(name);
      if (c === undefined) {
        this.column.set(name, (c = this.names.length));
        this.names.push(name);
        this.values.push(new Values());
      }
      ids.push([c, this.values[c]!.id(v)]);
    }
    // -1: the state lacks the component (an item past the end of its list, say).
    const row = new Int32Array(this.names.length).fill(-1);
    for (const [c, id] of ids) row[c] = id;
    this.rows.push(row);
  }

  result(): StateProfile {
    const { names, rows } = this;
    const at = (row: Int32Array, c: number) => (c < row.length ? row[c]! : -1);
    const profiles = names.map((name, c) => {
      const rest = new Set<string>();
      for (const row of rows) {
        let k = '';
        for (let d = 0; d < names.length; d++) if (d !== c) k += `${at(row, d)},`;
        rest.add(k);
      }
      const used = new Set<number>(rows.map((row) => at(row, c)));
      return { name, values: used.size, multiplier: rows.length / rest.size };
    });
    profiles.sort((a, b) => b.multiplier - a.multiplier || a.name.localeCompare(b.name));
    return { states: rows.length, components: profiles };
  }
}

/** The profile of a set of distinct states, read through `components`. */
export function profileStates<S>(
  states: Iterable<S>,
  components: (s: S) => Readonly<Record<string, unknown>> = fieldComponents,
): StateProfile {
  const profiler = new Profiler(components);
  for (const s of states) profiler.add(s);
  return profiler.result();
}

/**
 * Every reachable state of `model` (breadth-first, as `options` bound it), profiled. The states
 * are read by a property that always holds: the search checks it once on each distinct state.
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
