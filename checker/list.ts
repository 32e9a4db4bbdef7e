// `txcheck list`: what a new user can name in a spec, one line each, or the same as JSON.
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isPlainObject, readJsonFile } from './engine/input.ts';
import { models } from '../specs/models.ts';
import type { PropertyInfo } from '../specs/registry.ts';
import { projectRoot, shippedSpecFiles } from '../specs/shipped.ts';

type Named = { readonly name: string; readonly description: string };

/** One model's names, as list shows them; a section the model lacks is an empty list. */
export interface ListedModel extends Named {
  readonly variants: readonly Named[];
  readonly switches: readonly Named[];
  readonly properties: readonly (Named & { readonly stable: boolean })[];
  readonly liveness: readonly Named[];
  readonly mutants: readonly Named[];
}

export interface ListedSpec {
  /** The path as given to check from the working directory. */
  readonly file: string;
  /** The first sentence of the spec's description. */
  readonly description: string;
  readonly expect?: string;
}

export interface ListedVariantFile {
  /** The path from the working directory. */
  readonly file: string;
  /** The first sentence of the file's opening comment. */
  readonly description: string;
}

const named = (items: readonly PropertyInfo[] | undefined): Named[] =>
  (items ?? []).map(({ name, description }) => ({ name, description }));

function shippedSpecs(): ListedSpec[] {
  return shippedSpecFiles().map((f) => {
    const spec = readJsonFile(join(projectRoot, f));
    const text = isPlainObject(spec) && typeof spec.description === 'string' ? spec.description : '';
    const file = relative(process.cwd(), join(projectRoot, f));
    const description = text.split('. ')[0]!.replace(/\.$/, '');
    return isPlainObject(spec) && typeof spec.expect === 'string'
      ? { file, description, expect: spec.expect }
      : { file, description };
  });
}

/**
 * The variant files the shipped specs name ("variant": { "overrides": ... }), with the first
 * sentence of each file's opening comment; none where the files are not shipped (the package).
 */
function shippedVariantFiles(): ListedVariantFile[] {
  const paths = new Set<string>();
  for (const f of shippedSpecFiles()) {
    const spec = readJsonFile(join(projectRoot, f));
    const variant = isPlainObject(spec) ? spec.variant : undefined;
    if (isPlainObject(variant) && typeof variant.overrides === 'string') paths.add(variant.overrides);
  }
  return [...paths]
    .filter((p) => existsSync(join(projectRoot, p)))
    .sort()
    .map((p) => {
      const text = readFileSync(join(projectRoot, p), 'utf8');
      const comment = /^(?:\/\/.*\n)+/.exec(text)?.[0] ?? '';
      const prose = comment
        .replace(/^\/\/ ?/gm, '')
        .replace(/\s+/g, ' ')
        .trim();
      return {
        file: relative(process.cwd(), join(projectRoot, p)),
        description: prose.split('. ')[0]!.replace(/\.$/, ''),
      };
    });
}

/** What list shows, as data: `txcheck list --json` prints it. */
export function listData(): {
  models: ListedModel[];
  variantFiles: ListedVariantFile[];
  specs: ListedSpec[];
} {
  return {
    models: models.map((m) => ({
      name: m.name,
      description: m.description,
      variants: named(m.variants),
      switches: named(m.switches),
      properties: m.properties.map(({ name, description, stable }) => ({
        name,
        description,
        stable: stable === true,
      })),
      liveness: named(m.liveness),
      mutants: named(m.mutants),
    })),
    variantFiles: shippedVariantFiles(),
    specs: shippedSpecs(),
  };
}

function section(title: string, items: readonly Named[]): string[] {
  if (items.length === 0) return [];
  const width = Math.max(...items.map((i) => i.name.length));
  return [`${title}:`, ...items.map((i) => `  ${i.name.padEnd(width)}  ${i.description}`)];
}

export function listText(): string {
  const { models: listed, variantFiles, specs } = listData();
  const lines = section('Models', listed);
  for (const m of listed) {
    lines.push('', ...section(`${m.name}: generations ("variant")`, m.variants));
    lines.push(
      ...section(`${m.name}: switches ("variant": { "enable": [...], "disable": [...] })`, m.switches),
    );
    lines.push(
      ...section(
        m.properties.some((p) => p.stable)
          ? `${m.name}: properties (stable: once broken, broken for good, so "reduction": "por" needs no step visible for it)`
          : `${m.name}: properties`,
        m.properties.map((p) => (p.stable ? { ...p, description: `${p.description} (stable)` } : p)),
      ),
    );
    lines.push(...section(`${m.name}: liveness properties`, m.liveness));
    lines.push(...section(`${m.name}: mutants`, m.mutants));
  }
  const shipped = specs.map((s) => ({
    name: s.file,
    description: `${s.description}${s.expect === undefined ? '' : ` [expects ${s.expect}]`}`,
  }));
  const files = variantFiles.map((v) => ({ name: v.file, description: v.description }));
  lines.push('', ...section('Variant files of the shipped specs ("variant": { "overrides": ... })', files));
  lines.push('', ...section('Shipped specs', shipped));
  return `${lines.join('\n')}\n`;
}
