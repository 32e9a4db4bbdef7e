// Reading a spec file: the fields the spec layer owns, then the model's own parameters, then
// a check that nothing unknown is left. Every error is one InputError line.
import { basename } from 'node:path';
import { DEADLOCK } from '../checker/search.ts';
import { Fields, InputError, describeValue, isPlainObject, readJsonFile } from './fields.ts';
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
}

type NumericOption = 'seed' | 'walks' | 'maxDepth' | 'maxStates' | 'maxSeconds';

/** Each numeric option with its allowed range and command-line flag. */
const numericOptions: readonly { name: NumericOption; flag: string; min: number; max: number }[] = [
  { name: 'seed', flag: '--seed', min: 0, max: 2 ** 32 - 1 },
  { name: 'walks', flag: '--walks', min: 1, max: 1e9 },
  { name: 'maxDepth', flag: '--max-depth', min: 0, max: 1e9 },
  { name: 'maxStates', flag: '--max-states', min: 1, max: 2 ** 31 - 1 },
  { name: 'maxSeconds', flag: '--max-seconds', min: 1, max: 1e7 },
];

/** Reads the run options present in `fields`, each under the name `key` picks. */
export function readRunOptions(fields: Fields, key: (o: { name: string; flag: string }) => string): Partial<RunOptions> {
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
  readonly deadlockAllowed: boolean;
  /** "holds", or the property a shipped spec is expected to violate. */
  readonly expect?: string;
  readonly defaults: Partial<RunOptions>;
}

export function loadSpecFile(file: string): Spec {
  return parseSpec(file, readJsonFile(file), '');
}

/** Reads a spec object found in `file` at `path` ('' for the whole file). */
export function parseSpec(file: string, value: unknown, path: string): Spec {
  if (!isPlainObject(value)) throw new InputError(file, path, 'a JSON object (a spec)', describeValue(value));
  const fields = new Fields(file, value, path);
  const modelName = fields.oneOf('model', models.map((m) => m.name));
  const entry = models.find((m) => m.name === modelName)!;
  const propertyNames = entry.properties.map((p) => p.name);
  const description = fields.has('description') ? fields.string('description') : undefined;
  const properties = fields.stringList('properties', propertyNames, propertyNames);
  const deadlockAllowed = fields.bool('deadlock', false);
  const expect = fields.has('expect') ? fields.oneOf('expect', ['holds', ...propertyNames, DEADLOCK]) : undefined;
  const defaults = readRunOptions(fields, (o) => o.name);
  const params = entry.readParams(fields);
  fields.done();
  return {
    file,
    name: basename(file).replace(/\.json$/, ''),
    raw: value,
    entry,
    params,
    properties,
    deadlockAllowed,
    defaults,
    description,
    expect,
  };
}
