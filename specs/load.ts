// Reading a spec file: the fields the spec layer owns, then the model's own parameters, then
// a check that nothing unknown is left. Every error is one InputError line.
import { basename } from 'node:path';
import type { Fairness, TemporalProperty } from '../checker/engine/liveness.ts';
import { DEADLOCK } from '../checker/engine/search.ts';
import { Fields, InputError, describeValue, isPlainObject, readJsonFile } from '../checker/engine/input.ts';
import { models } from './models.ts';
import type { ModelEntry } from './registry.ts';

const strategies = ['bfs', 'random'] as const;
export type Strategy = (typeof strategies)[number];

/** How a run searches; a spec gives defaults and command-line flags override them. */
export interface RunOptions {
  readonly strategy: Strategy;
  readonly seed: number;
  readonly walks: number;
  readonly maxDepth?: number;
  readonly maxStates?: number;
  readonly maxSeconds?: number;
  /** Megabytes the search may use (SearchOptions.maxMemory). */
  readonly maxMemory?: number;
}

type NumericOption = 'seed' | 'walks' | 'maxDepth' | 'maxStates' | 'maxSeconds' | 'maxMemory';

/** Each numeric option with its allowed range and command-line flag. */
const numericOptions: readonly { name: NumericOption; flag: string; min: number; max: number }[] = [
  { name: 'seed', flag: '--seed', min: 0, max: 2 ** 32 - 1 },
  { name: 'walks', flag: '--walks', min: 1, max: 1e9 },
  { name: 'maxDepth', flag: '--max-depth', min: 0, max: 1e9 },
  { name: 'maxStates', flag: '--max-states', min: 1, max: 2 ** 31 - 1 },
  { name: 'maxSeconds', flag: '--max-seconds', min: 1, max: 1e7 },
  { name: 'maxMemory', flag: '--max-memory', min: 1, max: 2 ** 24 },
];

/** Reads the run options present in `fields`, each under the name `key` picks. */
export function readRunOptions(
  fields: Fields,
  key: (o: { name: string; flag: string }) => string,
): Partial<RunOptions> {
  const options: Partial<Record<keyof RunOptions, unknown>> = {};
  const strategyKey = key({ name: 'strategy', flag: '--strategy' });
  if (fields.has(strategyKey)) options.strategy = fields.oneOf(strategyKey, strategies);
  for (const o of numericOptions) {
    if (fields.has(key(o))) options[o.name] = fields.int(key(o), o.min, o.max);
  }
  return options as Partial<RunOptions>;
}

export interface Spec {
  /** Where the spec came from, for messages. */
  readonly file: string;
  /** The file name without its extension, for default output names. */
  readonly name: string;
  /** The spec object as loaded, to embed in traces. */
  readonly raw: Readonly<Record<string, unknown>>;
  readonly entry: ModelEntry;
  readonly params: unknown;
  readonly description?: string;
  readonly properties: readonly string[];
  /** Names of the temporal properties to check after the invariants. */
  readonly liveness: readonly string[];
  /** The weakly fair action classes liveness is checked under; given whenever liveness is. */
  readonly fairness: readonly Fairness[];
  readonly deadlockAllowed: boolean;
  /** Explore one representative per class of states that differ only by interchangeable parts. */
  readonly symmetry: boolean;
  /** "reduction": "por": partial-order reduction of the breadth-first search (stubborn sets). */
  readonly reduction: boolean;
  /** "reduction": "sleep": sleep sets in the breadth-first search (the same states, fewer transitions). */
  readonly sleep: boolean;
  /** "holds", or the property a shipped spec is expected to violate. */
  readonly expect?: string;
  readonly defaults: Partial<RunOptions>;
}

/** The files besides itself that a spec object makes its model read, as it names them; read without loading the spec. */
export function filesReadBy(raw: unknown): readonly string[] {
  if (!isPlainObject(raw)) return [];
  return models.find((m) => m.name === raw.model)?.filesRead?.(raw) ?? [];
}

export function loadSpecFile(file: string): Spec {
  return parseSpec(file, readJsonFile(file), '');
}

/** The spec in `file` with `mutant` switched on, checking `property` alone (to see the mutant caught). */
export function loadMutatedSpec(file: string, mutant: string, property: string): Spec {
  const written = loadSpecFile(file);
  return parseSpec(file, { ...written.entry.withMutant!(written.raw, mutant), properties: [property] }, '');
}

/** Reads a spec object found in `file` at `path` ('' for the whole file). */
export function parseSpec(file: string, value: unknown, path: string): Spec {
  if (!isPlainObject(value)) throw new InputError(file, path, 'a JSON object (a spec)', describeValue(value));
  const fields = new Fields(file, value, path);
  const modelName = fields.oneOf(
    'model',
    models.map((m) => m.name),
  );
  const entry = models.find((m) => m.name === modelName)!;
  const propertyNames = entry.properties.map((p) => p.name);
  const description = fields.has('description') ? fields.string('description') : undefined;
  const properties = fields.stringList('properties', propertyNames, propertyNames);
  const livenessNames = (entry.liveness ?? []).map((p) => p.name);
  if (livenessNames.length === 0 && fields.has('liveness'))
    fields.fail('liveness', `nothing: model ${entry.name} has no liveness properties`);
  const liveness = fields.stringList('liveness', livenessNames, []);
  const deadlockAllowed = fields.bool('deadlock', false);
  const symmetry = fields.bool('symmetry', false);
  if (symmetry && entry.canonical === undefined)
    fields.fail('symmetry', `false (model ${entry.name} has no symmetry reduction)`, symmetry);
  // Liveness goals and per-action fairness name parts one by one (a partition, a transactional.id):
  // on a graph of representatives, a run would switch between the parts a goal follows.
  if (symmetry && liveness.length > 0)
    fields.fail(
      'symmetry',
      'false with "liveness" (liveness is checked on the unreduced state graph)',
      symmetry,
    );
  const reductionName = fields.has('reduction')
    ? fields.oneOf('reduction', ['none', 'por', 'sleep'])
    : 'none';
  const reduction = reductionName === 'por';
  const sleep = reductionName === 'sleep';
  if (reductionName !== 'none' && liveness.length > 0)
    fields.fail(
      'reduction',
      '"none" with "liveness" (the reduced graph keeps invariants and deadlocks, not temporal properties)',
      reductionName,
    );
  // A state's sleep set names its own actions: meeting another member of its class, the set
  // would name the wrong ones.
  if (sleep && symmetry)
    fields.fail(
      'reduction',
      '"none" or "por" with "symmetry" (sleep sets name the actions of one state)',
      'sleep',
    );
  const expect = fields.has('expect')
    ? fields.oneOf('expect', ['holds', ...propertyNames, DEADLOCK, ...liveness])
    : undefined;
  const defaults = readRunOptions(fields, (o) => o.name);
  if (liveness.length > 0 && defaults.strategy === 'random')
    fields.fail('strategy', '"bfs" (liveness needs the whole state graph)', 'random');
  if (reductionName !== 'none' && defaults.strategy === 'random')
    fields.fail(
      'strategy',
      `"bfs" (reduction "${reductionName}" applies to the breadth-first search)`,
      'random',
    );
  const params = entry.readParams(fields);
  for (const name of liveness) {
    const needs = entry.liveness!.find((l) => l.name === name)!.unavailable?.(params);
    if (needs !== undefined) fields.fail('liveness', `no ${name}: it reads ${needs}`, name);
  }
  const bare = entry.build(params, []);
  if (reductionName !== 'none' && bare.independence === undefined)
    fields.fail('reduction', `"none" (model ${entry.name} describes no transition classes)`, reductionName);
  if (sleep && bare.independence?.key === undefined)
    fields.fail('reduction', `"none" or "por" (model ${entry.name} gives its actions no keys)`, 'sleep');
  const fairness = readFairness(fields, liveness, bare.actionKinds);
  fields.done();
  return {
    file,
    name: basename(file).replace(/\.json$/, ''),
    raw: value,
    entry,
    params,
    properties,
    liveness,
    fairness,
    deadlockAllowed,
    symmetry,
    reduction,
    sleep,
    defaults,
    description,
    expect,
  };
}

/**
 * "fairness": the weakly fair action classes, required with "liveness" ([] for none), so that
 * no fairness is ever assumed. An action kind's name makes each action of that kind weakly fair
 * on its own; { "anyOf": [kinds] } makes the group weakly fair as one class.
 */
function readFairness(fields: Fields, liveness: readonly string[], kinds: readonly string[]): Fairness[] {
  const expected =
    'a list of weakly fair action kinds (names, or { "anyOf": [names] } for a group), [] for none';
  if (!fields.has('fairness')) {
    if (liveness.length > 0) fields.fail('fairness', `${expected}: required with "liveness"`);
    return [];
  }
  if (liveness.length === 0)
    fields.fail(
      'fairness',
      'no fairness without "liveness" properties to check it with',
      fields.raw('fairness'),
    );
  const list = fields.raw('fairness');
  if (!Array.isArray(list)) return fields.fail('fairness', expected, list);
  const kind = (name: string, v: unknown): string => {
    if (typeof v !== 'string' || !kinds.includes(v))
      fields.fail(name, `one of the action kinds ${kinds.join(', ')}`, v);
    return v;
  };
  return list.map((item, i): Fairness => {
    if (!isPlainObject(item)) return { kinds: [kind(`fairness[${i}]`, item)], perAction: true };
    const group: Fields = new Fields(fields.file, item, fields.fieldName(`fairness[${i}]`));
    const anyOf = group.raw('anyOf');
    if (!Array.isArray(anyOf) || anyOf.length === 0)
      group.fail('anyOf', 'a non-empty list of action kinds', anyOf);
    group.done();
    return { kinds: anyOf.map((k, j) => kind(`fairness[${i}].anyOf[${j}]`, k)), perAction: false };
  });
}

/** The spec's liveness properties, in the spec's order, built for its parameters. */
export function temporalProperties(spec: Spec): TemporalProperty<unknown>[] {
  return spec.liveness.map((name) => {
    const p = spec.entry.liveness!.find((l) => l.name === name)!;
    return { name, description: p.description, goals: p.goals(spec.params) };
  });
}
