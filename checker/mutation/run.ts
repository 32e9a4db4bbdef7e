// Mutation testing, one group of groups.json at a time, then the score of each file mutated.
//
//   npm run mutation                                 every group, one after the other
//   npm run mutation -- model engine                 those groups
//   npm run mutation -- model/kafka/coordinator.ts   that file, in the group that mutates it
//   options: --concurrency N (Stryker's test runners, default 2), --incremental (re-test only
//   what changed since the group's last run)
//
// Each group writes out/mutation/<group>/ (mutation.json, index.html, incremental.json).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('../..', import.meta.url));

interface Group {
  readonly mutate: readonly string[];
  readonly tests: readonly string[];
}
export type Groups = Readonly<Record<string, Group>>;

export const groups: Groups = JSON.parse(readFileSync(join(root, 'checker/mutation/groups.json'), 'utf8'));

const globPattern = (glob: string): RegExp =>
  new RegExp(
    `^${glob
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*\*\//g, '\0')
      .replace(/\*/g, '[^/]*')
      .replace(/\0/g, '(?:.*/)?')}$`,
  );

/** Whether `file` (relative to the project) is one a group mutates: a positive glob matches it and no negated one. */
export function mutates(group: Group, file: string): boolean {
  const positive = group.mutate.filter((g) => !g.startsWith('!'));
  const negative = group.mutate.filter((g) => g.startsWith('!')).map((g) => g.slice(1));
  return positive.some((g) => globPattern(g).test(file)) && !negative.some((g) => globPattern(g).test(file));
}

export class UsageError extends Error {}

/** Which groups to run, and which files of each (none: the whole group), from the command line's words. */
export function selection(words: readonly string[], all: Groups = groups): Map<string, string[]> {
  const chosen = new Map<string, string[]>();
  if (words.length === 0) for (const name of Object.keys(all)) chosen.set(name, []);
  for (const word of words) {
    if (all[word] !== undefined) {
      chosen.set(word, []);
      continue;
    }
    const file = word.replace(/^\.\//, '');
    const name = Object.keys(all).find((g) => mutates(all[g]!, file));
    if (name === undefined)
      throw new UsageError(
        `npm run mutation: ${word} is neither a group (${Object.keys(all).join(', ')}) nor a file a group mutates`,
      );
    const files = chosen.get(name);
    if (files === undefined) chosen.set(name, [file]);
    else if (files.length > 0) files.push(file);
  }
  return chosen;
}

/** What Stryker never copies into its sandbox, so need not resolve. */
const NOT_COPIED = /^(node_modules|\.git|\.stryker-tmp.*)$/;

/**
 * The symbolic links under `dir` that do not resolve (dangling, or in a loop), as paths from
 * `dir` with their targets. Stryker copies the project into a sandbox and stops at such a link.
 */
export function unresolvedLinks(dir: string = root): { path: string; target: string }[] {
  const found: { path: string; target: string }[] = [];
  const visit = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (NOT_COPIED.test(entry.name)) continue;
      const path = join(folder, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.isSymbolicLink()) {
        try {
          statSync(path);
        } catch {
          found.push({ path: relative(dir, path), target: readlinkSync(path) });
        }
      }
    }
  };
  visit(dir);
  return found.sort((a, b) => a.path.localeCompare(b.path));
}

/** Stryker's patterns for exactly these paths from the project's root, glob characters escaped. */
export const ignorePatterns = (paths: readonly string[]): string =>
  paths.map((p) => `/${p.replace(/[\\*?[\]{}()!#]/g, '\\$&')}`).join(',');

export interface FileScore {
  readonly file: string;
  readonly killed: number;
  readonly survived: number;
  readonly noCoverage: number;
  /** Killed, timed out, survived or without coverage: the mutants that compile and ran. */
  readonly valid: number;
}

/** The score of each file of a Stryker JSON report (mutation-testing-report-schema). */
export function scores(report: { files: Record<string, { mutants: { status: string }[] }> }): FileScore[] {
  return Object.entries(report.files)
    .map(([file, { mutants }]) => {
      const count = (...statuses: string[]): number =>
        mutants.filter((m) => statuses.includes(m.status)).length;
      const killed = count('Killed', 'Timeout');
      const survived = count('Survived');
      const noCoverage = count('NoCoverage');
      return {
        file: file.startsWith(root) ? file.slice(root.length) : file,
        killed,
        survived,
        noCoverage,
        valid: killed + survived + noCoverage,
      };
    })
    .sort((a, b) => a.file.localeCompare(b.file));
}

const percent = (killed: number, valid: number): string =>
  valid === 0 ? '-' : `${((100 * killed) / valid).toFixed(1)} %`;

/** The table docs/testing.md keeps, as markdown rows. */
export function table(rows: readonly FileScore[]): string {
  const lines = [
    '| file | score | killed + timed out / valid | survived | no coverage |',
    '|---|---|---|---|---|',
  ];
  for (const r of rows)
    lines.push(
      `| \`${r.file}\` | ${percent(r.killed, r.valid)} | ${r.killed} / ${r.valid} | ${r.survived} | ${r.noCoverage} |`,
    );
  const sum = (key: 'killed' | 'survived' | 'noCoverage' | 'valid'): number =>
    rows.reduce((n, r) => n + r[key], 0);
  lines.push(
    `| together | ${percent(sum('killed'), sum('valid'))} | ${sum('killed')} / ${sum('valid')} | ${sum('survived')} | ${sum('noCoverage')} |`,
  );
  return lines.join('\n');
}

function main(): number {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: { concurrency: { type: 'string' }, incremental: { type: 'boolean' } },
    });
  } catch (e) {
    throw new UsageError(`npm run mutation: ${(e as Error).message}`);
  }
  const { values, positionals } = parsed;
  if (values.concurrency !== undefined && !/^[1-9]\d*$/.test(values.concurrency))
    throw new UsageError(
      `npm run mutation: --concurrency ${values.concurrency}: expected a whole number from 1`,
    );
  const chosen = selection(positionals);
  const links = unresolvedLinks();
  for (const { path, target } of links)
    console.error(`npm run mutation: skipping ${path}, a symbolic link to ${target}, which does not resolve`);
  const rows: FileScore[] = [];
  for (const [name, files] of chosen) {
    const args = ['run', 'checker/mutation/stryker.config.mjs'];
    if (files.length > 0) args.push('--mutate', files.join(','));
    if (values.concurrency !== undefined) args.push('--concurrency', values.concurrency);
    if (values.incremental) args.push('--incremental');
    if (links.length > 0) args.push('--ignorePatterns', ignorePatterns(links.map((l) => l.path)));
    console.log(`\n# mutation group ${name}${files.length > 0 ? `: ${files.join(', ')}` : ''}`);
    const started = performance.now();
    const stryker = spawnSync(
      process.execPath,
      [join(root, 'node_modules/@stryker-mutator/core/bin/stryker.js'), ...args],
      {
        cwd: root,
        stdio: 'inherit',
        env: { ...process.env, TXCHECK_MUTATION_GROUP: name },
      },
    );
    if (stryker.status !== 0) return stryker.status ?? 1;
    const report = join(root, 'out/mutation', name, 'mutation.json');
    if (!existsSync(report)) return 1;
    rows.push(...scores(JSON.parse(readFileSync(report, 'utf8'))));
    console.log(`# group ${name}: ${((performance.now() - started) / 60_000).toFixed(1)} minutes`);
  }
  console.log(`\n${table(rows)}`);
  return 0;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    process.exitCode = main();
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(e.message);
    process.exitCode = 2;
  }
}
