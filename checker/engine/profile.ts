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

/**
 * Components one level finer: an object-valued component split into its fields
 * (`producer P0.0.epoch`), to see which part of an actor tells its states apart.
 */
export function splitFields<S>(
  components: (s: S) => Readonly<Record<string, unknown>>,
): (s: S) => Record<string, unknown> {
  return (s) => {
    const out: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(components(s))) {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) out[name] = value;
      else for (const [field, v] of Object.entries(value)) out[`${name}.${field}`] = v;
    }
    return out;
  };
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
    // Each row's hash is the XOR of one random 52-bit key per (component, value), an absent
    // value's key 0; forgetting component c is one more XOR. Two different rows share a hash
    // with odds near rows² / 2^53: a profile is a measurement, not a verdict.
    const full = rows.map((row) => {
      let h = 0n;
      for (let c = 0; c < row.length; c++) h ^= key(c, row[c]!);
      return h;
    });
    const profiles = names.map((name, c) => {
      const rest = new Set<bigint>();
      rows.forEach((row, i) => rest.add(full[i]! ^ key(c, at(row, c))));
      const used = new Set<number>(rows.map((row) => at(row, c)));
      return { name, values: used.size, multiplier: rows.length / rest.size };
    });
    profiles.sort((a, b) => b.multiplier - a.multiplier || a.name.localeCompare(b.name));
    return { states: rows.length, components: profiles };
  }
}

/** MurmurHash3's 32-bit finalizer. */
function fmix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** A fixed pseudo-random 52-bit key for value `id` of component `c`; 0 for an absent value. */
function key(c: number, id: number): bigint {
  if (id === -1) return 0n;
  const hi = fmix(Math.imul(c + 1, 0x9e3779b1) ^ fmix(id + 1));
  const lo = fmix(hi ^ Math.imul(id + 1, 0x27d4eb2f));
  return (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
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
  fields = false,
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
  return { status: result.status, ...profileStates(seen, fields ? splitFields(components) : components) };
}
