// The project's Markdown stays true: every relative link resolves to a file and every #anchor to a
// heading (GitHub's slugs), the README stays a short router, and every state count, verdict and
// trace length the docs quote is checked against the reviewed table (specs/counts.json), a saved
// trace, the generations in the model's code, or a small search run here.
//
// How the docs mark a figure (the marker is an HTML comment, so it does not show):
//   <!-- count: specs/kafka/commit-abort.json kafka-3.5 -->2,412     distinct states in counts.json
//   <!-- result: specs/kafka/hanging-transaction.json kafka-3.5 -->NoHangingTransaction
//   <!-- expect: specs/kafka/hanging-transaction-liveness.json -->LsoAdvances
//                                   what a shipped spec expects, which specs/shipped.test.ts checks
//   <!-- steps: traces/kafka-3.5-hanging-transaction.itf.json -->16  the steps of a saved trace
//   <!-- run: specs/two-phase/tp3.json generated -->1,146             a search run by this test
//   <!-- run: {"model":"two-phase","resourceManagers":6} distinct -->50,816
// A spec without generations (two-phase) leaves the variant out. Before a table:
//   <!-- counts-table -->    a row per spec (its path or link in the first cell), a column per
//                            generation (kafka-0.11 ...), each cell "result (distinct states)"
//   <!-- switches-table -->  a row per switch (`name` first), a column per generation, on/off
//   <!-- mutants-table -->   a row per mutant case: `mutant`, `property`, a link to its spec
// Outside docs/performance.md (measurements, with the commit and machine they were taken on), a
// number followed by "states" that carries no marker fails the test.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bfs } from '../checker/engine/bfs.ts';
import { readCounts } from '../checker/counts.ts';
import { mutantCases } from '../model/kafka/mutants.ts';
import { generationNames, generations, switchNames } from '../model/kafka/variants.ts';
import { modelOf } from '../specs/build.ts';
import { loadSpecFile, parseSpec } from '../specs/load.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const README_MAX_LINES = 250;
/** A figure checked by running its search here must stay small. */
const RUN_MAX_STATES = 100_000;
const skippedFolders = new Set(['node_modules', 'dist', 'out', '.git']);

/** Every Markdown file of the project, as paths from its root. */
function markdownFiles(dir = ''): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return skippedFolders.has(e.name) ? [] : markdownFiles(path);
    return e.name.endsWith('.md') ? [path] : [];
  });
}

const files = markdownFiles().sort();
const text = new Map(files.map((f) => [f, readFileSync(join(root, f), 'utf8')]));

/** The lines of `md` outside fenced code blocks, with their line numbers (from 1). */
function proseLines(md: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | undefined;
  md.split('\n').forEach((t, i) => {
    const opener = /^ {0,3}(`{3,}|~{3,})/.exec(t)?.[1];
    if (opener !== undefined && (fence === undefined || opener.startsWith(fence))) {
      fence = fence === undefined ? opener : undefined;
      return;
    }
    if (fence === undefined) out.push({ line: i + 1, text: t });
  });
  return out;
}

/** A heading's anchor as GitHub makes it: its text in lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown file's headings; a repeated slug gets -1, -2, ... as on GitHub. */
export function anchors(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { text: t } of proseLines(md)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(t)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The targets of the inline links, images and link definitions of `md`, outside code. */
export function linkTargets(md: string): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  for (const { line, text: t } of proseLines(md)) {
    const prose = t.replace(/(`+)(?:(?!\1).)+?\1/g, '');
    for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
      out.push({ line, target: m[1]! });
    const definition = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(prose);
    if (definition !== null) out.push({ line, target: definition[1]! });
  }
  return out;
}

describe('the project’s Markdown links', () => {
  it('finds the Markdown files', () => {
    expect(files).toEqual(
      expect.arrayContaining(['README.md', 'ARCHITECTURE.md', 'CONTRIBUTING.md', 'model/kafka/README.md']),
    );
  });

  it.each(files)('%s: every relative link resolves to a file, every #anchor to a heading', (file) => {
    const broken: string[] = [];
    for (const { line, target } of linkTargets(text.get(file)!)) {
      if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // https:, mailto:
      const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
      const path = pathPart === '' ? file : join(dirname(file), decodeURIComponent(pathPart));
      const where = `${file}:${line}: ${target}`;
      if (relative(root, resolve(root, path)).startsWith('..') || !existsSync(join(root, path))) {
        broken.push(`${where} (no file ${path})`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!path.endsWith('.md') || statSync(join(root, path)).isDirectory()) {
        broken.push(`${where} (an anchor into a file that is not Markdown)`);
        continue;
      }
      const md = text.get(path) ?? readFileSync(join(root, path), 'utf8');
      if (!anchors(md).has(anchor))
        broken.push(`${where} (no heading with the anchor #${anchor} in ${path})`);
    }
    expect(broken).toEqual([]);
  });

  it('slugs headings as GitHub does', () => {
    expect(slug('Exit codes')).toBe('exit-codes');
    expect(slug('`show`: a counterexample step by step')).toBe('show-a-counterexample-step-by-step');
    expect(slug("Conformance with Kafka's tests")).toBe('conformance-with-kafkas-tests');
    expect(slug('Add an action (kind)')).toBe('add-an-action-kind');
    expect([...anchors('# A\n## A\n```\n# not a heading\n```\n## A\n')]).toEqual(['a', 'a-1', 'a-2']);
  });

  it('reads links outside code only', () => {
    const md = 'See [a](a.md#x) and `[b](b.md)`.\n```\n[c](c.md)\n```\n[d]: d.md\n![e](e.png)\n';
    expect(linkTargets(md).map((l) => l.target)).toEqual(['a.md#x', 'd.md', 'e.png']);
  });
});

describe('the README', () => {
  const readme = text.get('README.md')!;

  it(`is a router of at most ${README_MAX_LINES} lines`, () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it('keeps the two quick-start commands', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toMatch(/^npm test\b/m);
  });
});

// ---- Figures ---------------------------------------------------------------------------------

const counts = readCounts();
const number = (digits: string) => Number(digits.replace(/,/g, ''));

/** counts.json's row for a spec under a variant ('' for a model without generations). */
function countRow(spec: string, variant: string, where: string) {
  const row = counts[spec]?.[variant];
  if (row === undefined)
    throw new Error(`${where}: specs/counts.json has no row for ${spec} ${variant || '(as written)'}`);
  return row;
}

const runs = new Map<string, { distinct: number; generated: number }>();
/** Distinct and generated states of a breadth-first search of a small spec (a file, or inline JSON). */
function search(spec: string, where: string): { distinct: number; generated: number } {
  const known = runs.get(spec);
  if (known !== undefined) return known;
  const parsed = spec.startsWith('{')
    ? parseSpec(where, JSON.parse(spec), '')
    : loadSpecFile(join(root, spec));
  const result = bfs(modelOf(parsed), {
    deadlockAllowed: parsed.deadlockAllowed,
    maxStates: RUN_MAX_STATES,
    ...(parsed.reduction ? { reduction: true } : {}),
  });
  if (result.status === 'incomplete') throw new Error(`${where}: ${spec} is too big to search in this test`);
  const figures = { distinct: result.distinctStates, generated: result.statesGenerated };
  runs.set(spec, figures);
  return figures;
}

/** What a marked figure should read, or why it cannot be checked. */
function expected(kind: string, args: string, where: string): string {
  switch (kind) {
    case 'count':
    case 'result': {
      const [spec, variant = ''] = args.split(/\s+/);
      const row = countRow(spec!, variant, where);
      return kind === 'count' ? String(row.distinctStates) : row.result;
    }
    case 'expect':
      return String((JSON.parse(readFileSync(join(root, args), 'utf8')) as { expect?: unknown }).expect);
    case 'steps': {
      const trace = JSON.parse(readFileSync(join(root, args), 'utf8')) as { states: unknown[] };
      return String(trace.states.length - 1);
    }
    case 'run': {
      const m = /^(.*\S)\s+(distinct|generated)$/.exec(args);
      if (m === null) throw new Error(`${where}: a run marker names a spec and "distinct" or "generated"`);
      return String(search(m[1]!, where)[m[2] as 'distinct' | 'generated']);
    }
  }
  throw new Error(`${where}: unknown figure marker "${kind}"`);
}

const MARKER = /<!--\s*(count|result|expect|steps|run):\s*(.*?)\s*-->\s*`?(\d{1,3}(?:,\d{3})+|\w+)`?/g;
const TABLE_MARKER = /^<!--\s*(counts-table|switches-table|mutants-table)\s*-->\s*$/;

interface Table {
  readonly kind: string;
  readonly line: number;
  readonly rows: readonly (readonly string[])[];
}

const cells = (row: string) =>
  row
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((c) => c.trim());

/** The tables a marker announces in `md`: the header first, the delimiter row left out. */
function markedTables(md: string): Table[] {
  const lines = md.split('\n');
  const out: Table[] = [];
  lines.forEach((t, i) => {
    const kind = TABLE_MARKER.exec(t)?.[1];
    if (kind === undefined) return;
    let j = i + 1;
    while (lines[j]?.trim() === '') j++;
    const rows: string[][] = [];
    for (; lines[j]?.trimStart().startsWith('|'); j++) rows.push(cells(lines[j]!));
    out.push({ kind, line: i + 1, rows: rows.filter((_, k) => k !== 1) });
  });
  return out;
}

/** The spec a counts-table row is about: a link to it, or its path in backticks. */
function rowSpec(file: string, first: string): string | undefined {
  const link = /\]\(([^)#\s]+\.json)\)/.exec(first)?.[1];
  if (link !== undefined) return relative(root, resolve(root, dirname(file), link));
  return /`(specs\/[^`]+\.json)`/.exec(first)?.[1];
}

function checkCountsTable(file: string, table: Table): string[] {
  const [header, ...rows] = table.rows;
  const where = `${file}:${table.line}`;
  const columns = (header ?? []).flatMap((h, k) => (generationNames.includes(h) ? [{ k, variant: h }] : []));
  if (columns.length === 0 || rows.length === 0)
    return [`${where}: a counts table needs generation columns and rows`];
  return rows.flatMap((row) => {
    const spec = rowSpec(file, row[0] ?? '');
    if (spec === undefined) return [`${where}: no spec named in the row "${row[0]}"`];
    return columns.flatMap(({ k, variant }) => {
      const cell = row[k] ?? '';
      const m = /^`?(\w+)`? \(([\d,]+)\)$/.exec(cell);
      if (m === null) return [`${where}: ${spec} ${variant}: "${cell}" is not "result (distinct states)"`];
      const want = countRow(spec, variant, where);
      const got = { result: m[1]!, distinctStates: number(m[2]!) };
      return got.result === want.result && got.distinctStates === want.distinctStates
        ? []
        : [
            `${where}: ${spec} ${variant}: the docs say ${cell}, specs/counts.json ${want.result} (${want.distinctStates})`,
          ];
    });
  });
}

function checkSwitchesTable(file: string, table: Table): string[] {
  const [header, ...rows] = table.rows;
  const where = `${file}:${table.line}`;
  const columns = (header ?? []).flatMap((h, k) => (generationNames.includes(h) ? [{ k, variant: h }] : []));
  const listed = rows.map((row) => /^`(\w+)`$/.exec(row[0] ?? '')?.[1]);
  const problems: string[] = [];
  const protocolSwitches = switchNames.filter((n) => !n.startsWith('mutant'));
  if (JSON.stringify([...listed].sort()) !== JSON.stringify([...protocolSwitches].sort()))
    problems.push(
      `${where}: the table lists ${listed.join(', ')}; the model has ${protocolSwitches.join(', ')}`,
    );
  if (columns.length !== generationNames.length) problems.push(`${where}: a column for every generation`);
  rows.forEach((row, r) => {
    const name = listed[r] as keyof (typeof generations)[string]['rules'] | undefined;
    if (name === undefined) return;
    for (const { k, variant } of columns) {
      const on = /^(on|off)\S*$/.exec(row[k] ?? '')?.[1];
      const want = generations[variant]!.rules[name] ? 'on' : 'off';
      if (on !== want)
        problems.push(`${where}: ${name} under ${variant}: the docs say "${row[k]}", the model ${want}`);
    }
  });
  return problems;
}

function checkMutantsTable(file: string, table: Table): string[] {
  const [, ...rows] = table.rows;
  const documented = rows.map((row) => {
    const name = (cell: string | undefined) => /^`(\w+)`$/.exec(cell ?? '')?.[1];
    return `${name(row[0])} ${name(row[1])} ${rowSpec(file, row[2] ?? '')}`;
  });
  const listed = mutantCases.map((c) => `${c.mutant} ${c.property} ${c.spec}`);
  return JSON.stringify(documented) === JSON.stringify(listed)
    ? []
    : [
        `${file}:${table.line}: the table lists ${documented.join('; ')}; model/kafka/mutants.ts ${listed.join('; ')}`,
      ];
}

const tableChecks: Readonly<Record<string, (file: string, table: Table) => string[]>> = {
  'counts-table': checkCountsTable,
  'switches-table': checkSwitchesTable,
  'mutants-table': checkMutantsTable,
};

/** Every figure of `md` with a marker replaced by a mark, and every marked table by nothing. */
function withoutMarkedFigures(md: string): string {
  const lines = md.replace(MARKER, '(checked)').split('\n');
  let inTable = false;
  return lines
    .map((t) => {
      if (TABLE_MARKER.test(t)) inTable = true;
      else if (inTable && t.trim() !== '' && !t.trimStart().startsWith('|')) inTable = false;
      return inTable ? '' : t;
    })
    .join('\n');
}

/** The state counts of `md` that carry no marker. */
function unmarkedCounts(md: string): string[] {
  // A rate (states/s) is a measurement, not a count.
  return [...withoutMarkedFigures(md).matchAll(/\b\d[\d,]*\s+(?:distinct\s+)?states\b(?!\/s)/g)].map(
    (m) => m[0],
  );
}

describe('the figures the docs quote', () => {
  it.each(files)('%s: every marked figure agrees with what it is checked against', (file) => {
    const md = text.get(file)!;
    const problems: string[] = [];
    for (const m of md.matchAll(MARKER)) {
      const line = md.slice(0, m.index).split('\n').length;
      const where = `${file}:${line}`;
      try {
        const want = expected(m[1]!, m[2]!, where);
        const got = m[1] === 'result' || m[1] === 'expect' ? m[3]! : String(number(m[3]!));
        if (got !== want) problems.push(`${where}: ${m[1]} ${m[2]}: the docs say ${m[3]}, it is ${want}`);
      } catch (e) {
        problems.push((e as Error).message);
      }
    }
    for (const table of markedTables(md)) {
      try {
        problems.push(...tableChecks[table.kind]!(file, table));
      } catch (e) {
        problems.push((e as Error).message);
      }
    }
    expect(problems).toEqual([]);
  });

  // A line of prose that starts with "<!--" starts an HTML block, which would cut its paragraph.
  it.each(files)('%s: no figure marker starts a line of prose', (file) => {
    const starting = proseLines(text.get(file)!).filter(
      ({ text: t }) => t.trimStart().startsWith('<!--') && !TABLE_MARKER.test(t.trim()),
    );
    expect(starting.map(({ line }) => `${file}:${line}`)).toEqual([]);
  });

  it.each(files.filter((f) => f !== join('docs', 'performance.md')))(
    '%s: quotes no state count without a marker',
    (file) => {
      expect(unmarkedCounts(text.get(file)!)).toEqual([]);
    },
  );

  it('reads markers and marked tables as documented', () => {
    const spec = 'specs/kafka/commit-abort.json';
    const row = counts[spec]!['kafka-3.5']!;
    const table = (distinct: number) =>
      [
        `a <!-- count: ${spec} kafka-3.5 -->${distinct} states and 7 states`,
        '',
        '<!-- counts-table -->',
        '',
        '| spec | kafka-3.5 |',
        '|---|---|',
        `| \`${spec}\` | ${row.result} (${distinct.toLocaleString('en-US')}) |`,
        'after 8 distinct states',
      ].join('\n');
    const md = table(row.distinctStates);
    expect(unmarkedCounts(md)).toEqual(['7 states', '8 distinct states']);
    expect(unmarkedCounts('9 states/s')).toEqual([]);
    const [marked] = markedTables(md);
    expect(marked!.rows).toEqual([
      ['spec', 'kafka-3.5'],
      [`\`${spec}\``, `${row.result} (${row.distinctStates.toLocaleString('en-US')})`],
    ]);
    expect(checkCountsTable('x.md', marked!)).toEqual([]);
    expect(checkCountsTable('x.md', markedTables(table(row.distinctStates + 1))[0]!)).toHaveLength(1);
  });
});

describe('the fault table', () => {
  const faults = readFileSync(join(root, 'docs/reference/faults.md'), 'utf8');

  it('names test files that exist', () => {
    const named = [...faults.matchAll(/`([\w./-]+\.test\.ts)`/g)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((f) => !existsSync(join(root, f)))).toEqual([]);
  });

  it('gives every fault its test: in the row, or for the whole section', () => {
    for (const section of faults.split(/^## /m).slice(1)) {
      if (/\bTest:\s+`[^`]+\.test\.ts`/.test(section)) continue;
      const rows = section.split('\n').filter((l) => l.startsWith('| ') && !/^\| (injected|---)/.test(l));
      expect(rows.length, section.split('\n')[0]).toBeGreaterThan(0);
      for (const row of rows) expect(row.split(' | ').at(-1), row).toMatch(/\.test\.ts`/);
    }
  });
});
