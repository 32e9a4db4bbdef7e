// Verdicts per property for one spec, and the two commands built on them: `compare` (one spec
// under several variants) and `mutants` (every mutant of the model against some specs, until
// one kills it).
import { InputError } from './engine/input.ts';
import { modelOf } from '../specs/build.ts';
import { type Spec, parseSpec } from '../specs/load.ts';
import { bfs } from './engine/bfs.ts';
import { DEADLOCK } from './engine/search.ts';

export type Verdict =
  | { readonly status: 'holds' }
  | { readonly status: 'violated'; readonly length: number }
  | { readonly status: 'incomplete' };

export interface Verdicts {
  readonly variant: string;
  /** Per property checked (and Deadlock when the spec forbids it). */
  readonly properties: Readonly<Record<string, Verdict>>;
  /** Distinct states of the last, most complete run. */
  readonly distinctStates: number;
  readonly seconds: number;
}

export interface Limits {
  readonly maxStates?: number;
  readonly maxSeconds?: number;
}

/**
 * Breadth-first runs of `raw` until every property has a verdict: after each violation the
 * violated property is set aside and the search starts again, so each violation reported is
 * that property's shortest counterexample.
 */
export function verdictsOf(
  file: string,
  raw: Readonly<Record<string, unknown>>,
  limits: Limits,
  variant: string,
): Verdicts {
  const first = parseSpec(file, raw, '');
  const properties: Record<string, Verdict> = {};
  let remaining = [...first.properties];
  let deadlockAllowed = first.deadlockAllowed;
  let distinctStates: number;
  let seconds = 0;
  for (;;) {
    const spec: Spec = parseSpec(file, { ...raw, properties: remaining }, '');
    const result = bfs(modelOf(spec), { deadlockAllowed, ...limits });
    seconds += result.seconds;
    distinctStates = result.distinctStates;
    if (result.status === 'violation') {
      const property = result.violation!.property;
      properties[property] = { status: 'violated', length: result.violation!.trace.actions.length };
      if (property === DEADLOCK) deadlockAllowed = true;
      else remaining = remaining.filter((p) => p !== property);
      if (remaining.length === 0 && deadlockAllowed) break;
      continue;
    }
    const status = result.status === 'ok' ? 'holds' : 'incomplete';
    for (const p of remaining) properties[p] = { status };
    if (!deadlockAllowed) properties[DEADLOCK] = { status };
    break;
  }
  return { variant, properties, distinctStates, seconds };
}

export function compareVariants(
  file: string,
  raw: Readonly<Record<string, unknown>>,
  variants: readonly string[],
  limits: Limits,
): Verdicts[] {
  const spec = parseSpec(file, raw, '');
  const known = spec.entry.variants?.map((v) => v.name) ?? [];
  if (spec.entry.withVariant === undefined || known.length === 0)
    throw new InputError(file, 'model', `a model with variants (${spec.entry.name} has none)`);
  for (const v of variants)
    if (!known.includes(v))
      throw new InputError('command line', '--variants', `names from ${known.join(', ')}`, JSON.stringify(v));
  return variants.map((v) => verdictsOf(file, spec.entry.withVariant!(raw, v), limits, v));
}

export interface MutantRow {
  readonly mutant: string;
  /** The property, spec and trace length of the kill, or null if the mutant survived. */
  readonly killedBy: { readonly property: string; readonly spec: string; readonly length: number } | null;
}

/**
 * Every mutant of the specs' model against the specs, in order, until one kills it: a property
 * that holds on the spec as written is violated with the mutant applied.
 */
export function killMatrix(
  specs: readonly { file: string; raw: Readonly<Record<string, unknown>> }[],
  limits: Limits,
): MutantRow[] {
  const entry = parseSpec(specs[0]!.file, specs[0]!.raw, '').entry;
  for (const { file, raw } of specs) {
    if (parseSpec(file, raw, '').entry !== entry)
      throw new InputError(file, 'model', `the model of the first spec, ${entry.name}`);
  }
  const mutants = entry.mutants ?? [];
  if (entry.withMutant === undefined || mutants.length === 0)
    throw new InputError(specs[0]!.file, 'model', `a model with mutants (${entry.name} has none)`);
  const holding = specs.map(({ file, raw }) => {
    const baseline = verdictsOf(file, raw, limits, 'baseline');
    return Object.keys(baseline.properties).filter(
      (p) => p !== DEADLOCK && baseline.properties[p]!.status === 'holds',
    );
  });
  return mutants.map(({ name }) => {
    for (const [i, { file, raw }] of specs.entries()) {
      if (holding[i]!.length === 0) continue;
      const spec = parseSpec(file, { ...entry.withMutant!(raw, name), properties: holding[i] }, '');
      const result = bfs(modelOf(spec), { deadlockAllowed: true, ...limits });
      const violation = result.violation;
      if (violation !== undefined)
        return {
          mutant: name,
          killedBy: { property: violation.property, spec: file, length: violation.trace.actions.length },
        };
    }
    return { mutant: name, killedBy: null };
  });
}

function verdictText(v: Verdict | undefined): string {
  if (v === undefined) return '-';
  return v.status === 'violated' ? `violated (${v.length})` : v.status;
}

/** One table as aligned text or as markdown. */
export function table(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  markdown: boolean,
): string {
  if (markdown) {
    const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
    return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n') + '\n';
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

export function compareTable(results: readonly Verdicts[], markdown: boolean): string {
  const properties = [...new Set(results.flatMap((r) => Object.keys(r.properties)))];
  const rows = results.map((r) => [
    r.variant,
    ...properties.map((p) => verdictText(r.properties[p])),
    r.distinctStates.toLocaleString('en-US'),
    r.seconds.toFixed(1),
  ]);
  return table(['variant', ...properties, 'distinct states', 'seconds'], rows, markdown);
}

export function killTable(rows: readonly MutantRow[], markdown: boolean): string {
  const cells = rows.map((r) =>
    r.killedBy === null
      ? [r.mutant, 'SURVIVED', '-', '-', '-']
      : [r.mutant, 'killed', r.killedBy.property, String(r.killedBy.length), r.killedBy.spec],
  );
  return table(['mutant', 'verdict', 'property', 'trace length', 'spec'], cells, markdown);
}

/** `compare` and `mutants` read limits the way `check` does, from the spec and the flags. */
export interface CommandIo {
  out(text: string): void;
}

export function compareCommand(
  file: string,
  raw: Readonly<Record<string, unknown>>,
  variants: readonly string[],
  limits: Limits,
  format: 'text' | 'markdown' | 'json',
  io: CommandIo,
): number {
  const results = compareVariants(file, raw, variants, limits);
  if (format === 'json') io.out(`${JSON.stringify({ spec: file, variants: results })}\n`);
  else io.out(`${format === 'markdown' ? '' : `${file}\n`}${compareTable(results, format === 'markdown')}`);
  return results.some((r) => Object.values(r.properties).some((v) => v.status === 'incomplete')) ? 3 : 0;
}

export function mutantsCommand(
  specs: readonly { file: string; raw: Readonly<Record<string, unknown>> }[],
  limits: Limits,
  format: 'text' | 'markdown' | 'json',
  io: CommandIo,
): number {
  const rows = killMatrix(specs, limits);
  const survivors = rows.filter((r) => r.killedBy === null).map((r) => r.mutant);
  if (format === 'json')
    io.out(`${JSON.stringify({ specs: specs.map((s) => s.file), mutants: rows, survivors })}\n`);
  else {
    io.out(killTable(rows, format === 'markdown'));
    if (format === 'text')
      io.out(survivors.length === 0 ? `Every mutant is killed.\n` : `Survived: ${survivors.join(', ')}.\n`);
  }
  return survivors.length === 0 ? 0 : 1;
}
