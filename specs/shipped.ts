// The spec files shipped with the project: every JSON file under specs/ except the table of
// state counts, as paths from the project's root.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project's (or installed package's) root: the build runs one folder deeper, from dist/specs/. */
export const projectRoot = fileURLToPath(
  new URL(import.meta.url.endsWith('.js') ? '../..' : '..', import.meta.url),
);
/** The reviewed table of state counts (`npm run counts`). */
export const countsFile = 'specs/counts.json';
/** Specs sized for `npm run bench`: too big for the test suite and the counts table. */
export const benchmarks = [
  'specs/kafka/bench-large.json',
  'specs/kafka/bench-symmetry.json',
  'specs/kafka/bench.json',
  'specs/two-phase/tp8.json',
];

export function shippedSpecFiles(): string[] {
  return readdirSync(join(projectRoot, 'specs'), { recursive: true, encoding: 'utf8' })
    .map((f) => join('specs', f))
    .filter((f) => f.endsWith('.json') && f !== countsFile)
    .sort();
}
