// `txcheck list`: what a new user can name in a spec, one line each.
import { join, relative } from 'node:path';
import { isPlainObject, readJsonFile } from './engine/input.ts';
import { models } from '../specs/models.ts';
import type { PropertyInfo } from '../specs/registry.ts';
import { projectRoot, shippedSpecFiles } from '../specs/shipped.ts';

function section(title: string, items: readonly PropertyInfo[] | undefined): string[] {
  if (items === undefined || items.length === 0) return [];
  const width = Math.max(...items.map((i) => i.name.length));
  return [`${title}:`, ...items.map((i) => `  ${i.name.padEnd(width)}  ${i.description}`)];
}

function shippedSpecs(): PropertyInfo[] {
  return shippedSpecFiles().map((f) => {
    const spec = readJsonFile(join(projectRoot, f));
    const text = isPlainObject(spec) && typeof spec.description === 'string' ? spec.description : '';
    const expect = isPlainObject(spec) && typeof spec.expect === 'string' ? ` [expects ${spec.expect}]` : '';
    return {
      name: relative(process.cwd(), join(projectRoot, f)),
      description: `${text.split('. ')[0]!.replace(/\.$/, '')}${expect}`,
    };
  });
}

export function listText(): string {
  const lines = section('Models', models);
  for (const m of models) {
    lines.push('', ...section(`${m.name}: generations ("variant")`, m.variants));
    lines.push(
      ...section(`${m.name}: switches ("variant": { "enable": [...], "disable": [...] })`, m.switches),
    );
    lines.push(...section(`${m.name}: properties`, m.properties));
    lines.push(...section(`${m.name}: liveness properties`, m.liveness));
    lines.push(...section(`${m.name}: mutants`, m.mutants));
  }
  lines.push('', ...section('Shipped specs', shippedSpecs()));
  return `${lines.join('\n')}\n`;
}
