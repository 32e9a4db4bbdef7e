// The reviewed table of distinct-state counts: every shipped spec under every generation of its
// model (a spec of a model without generations: as written). A change of the model that moves a
// count shows up as a difference here and must be explained in the commit that rewrites the table.
//
//   npm run counts            recount every row and compare with specs/counts.json (exit 1 on a difference)
//   npm run counts -- --write recount and rewrite specs/counts.json
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bfs } from './engine/bfs.ts';
import { writeFileAtomic } from './engine/trace.ts';
import { modelOf } from '../specs/build.ts';
import { loadSpecFile, parseSpec } from '../specs/load.ts';
import { benchmarks, countsFile, projectRoot, shippedSpecFiles } from '../specs/shipped.ts';

export interface Count {
  readonly distinctStates: number;
  /** "holds", the property violated first, or "incomplete" when a limit of the spec stopped the search. */
  readonly result: string;
}

/** Spec file → variant ("" for a model without generations) → count. */
export type CountTable = Record<string, Record<string, Count>>;

/** The rows of the table: each shipped spec with each generation of its model. */
export function rows(): { file: string; variant: string }[] {
  return shippedSpecFiles()
    .filter((f) => !benchmarks.includes(f))
    .flatMap((file) => {
      const spec = loadSpecFile(join(projectRoot, file));
      const variants =
        spec.entry.withVariant === undefined ? [] : (spec.entry.variants ?? []).map((v) => v.name);
      return variants.length === 0 ? [{ file, variant: '' }] : variants.map((variant) => ({ file, variant }));
    });
}

/** One breadth-first run of the spec (under `variant`), on this thread. */
export function count(file: string, variant: string): Count {
  const spec = loadSpecFile(join(projectRoot, file));
  const raw = variant === '' ? spec.raw : spec.entry.withVariant!(spec.raw, variant);
  const run = parseSpec(file, raw, '');
  const result = bfs(modelOf(run), {
    deadlockAllowed: run.deadlockAllowed,
    maxStates: run.defaults.maxStates,
    maxDepth: run.defaults.maxDepth,
  });
  return {
    distinctStates: result.distinctStates,
    result:
      result.status === 'violation'
        ? result.violation!.property
        : result.status === 'ok'
          ? 'holds'
          : 'incomplete',
  };
}

export function readCounts(): CountTable {
  return JSON.parse(readFileSync(join(projectRoot, countsFile), 'utf8')) as CountTable;
}

async function main(argv: string[]): Promise<number> {
  const write = argv.includes('--write');
  const recorded = write ? {} : readCounts();
  const table: CountTable = {};
  const differences: string[] = [];
  for (const { file, variant } of rows()) {
    const now = count(file, variant);
    (table[file] ??= {})[variant] = now;
    const before = recorded[file]?.[variant];
    const line = `${file} ${variant || '(as written)'}: ${now.distinctStates} states, ${now.result}`;
    if (!write && JSON.stringify(before) !== JSON.stringify(now))
      differences.push(
        `${line} (table: ${before === undefined ? 'no row' : `${before.distinctStates} states, ${before.result}`})`,
      );
    process.stdout.write(`${line}\n`);
  }
  if (write) {
    writeFileAtomic(join(projectRoot, countsFile), `${JSON.stringify(table, null, 2)}\n`);
    process.stdout.write(`Written: ${countsFile}\n`);
    return 0;
  }
  process.stdout.write(
    differences.length === 0
      ? 'Every count matches the table.\n'
      : `Differences from the table:\n${differences.join('\n')}\n`,
  );
  return differences.length === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
