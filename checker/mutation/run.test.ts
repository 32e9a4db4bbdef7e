import { mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  UsageError,
  groups,
  ignorePatterns,
  mutates,
  scores,
  selection,
  table,
  unresolvedLinks,
} from './run.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const sources = (dir: string): string[] =>
  readdirSync(join(root, dir))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .map((f) => `${dir}/${f}`);

describe('mutation groups', () => {
  it('mutate every Kafka model source once but the renderers and the table of seeded mutants, and the engine search code once', () => {
    const kafka = [...sources('model/kafka'), ...sources('model/kafka/render')];
    for (const file of [...kafka, ...sources('checker/engine')]) {
      const owners = Object.keys(groups).filter((g) => mutates(groups[g]!, file));
      const left =
        file.startsWith('model/kafka/render/') ||
        [
          'model/kafka/view.ts',
          'model/kafka/mutants.ts',
          'checker/engine/itf.ts',
          'checker/engine/input.ts',
        ].includes(file);
      expect(owners, file).toHaveLength(left ? 0 : 1);
    }
    expect(mutates(groups.model!, 'model/kafka/coordinator.test.ts')).toBe(false);
  });

  it('run a file in the group that mutates it, a group whole, and refuse a word that is neither', () => {
    expect([
      ...selection(['model/kafka/pack.ts', './model/kafka/coordinator.ts', 'model/kafka/next.ts']),
    ]).toEqual([
      ['pack', ['model/kafka/pack.ts']],
      ['model', ['model/kafka/coordinator.ts', 'model/kafka/next.ts']],
    ]);
    expect([...selection(['engine', 'checker/engine/bfs.ts'])]).toEqual([['engine', []]]);
    expect([...selection([]).keys()]).toEqual(Object.keys(groups));
    expect(() => selection(['model/kafka/render/steps.ts'])).toThrow(UsageError);
    expect(() => selection(['nonsense'])).toThrow(/neither a group/);
  });

  it('score a file by its killed and timed-out mutants among those that compiled', () => {
    const status = (...s: string[]) => s.map((x) => ({ status: x }));
    const rows = scores({
      files: {
        [`${root}model/kafka/b.ts`]: {
          mutants: status('Killed', 'Timeout', 'Survived', 'NoCoverage', 'CompileError', 'Ignored'),
        },
        [`${root}model/kafka/a.ts`]: { mutants: status('Killed') },
      },
    });
    expect(rows).toEqual([
      { file: 'model/kafka/a.ts', killed: 1, survived: 0, noCoverage: 0, valid: 1 },
      { file: 'model/kafka/b.ts', killed: 2, survived: 1, noCoverage: 1, valid: 4 },
    ]);
    expect(table(rows).split('\n').slice(2)).toEqual([
      '| `model/kafka/a.ts` | 100.0 % | 1 / 1 | 0 | 0 |',
      '| `model/kafka/b.ts` | 50.0 % | 2 / 4 | 1 | 1 |',
      '| together | 60.0 % | 3 / 5 | 1 | 1 |',
    ]);
  });

  it('find the links Stryker would stop at (dangling, or in a loop) and skip exactly those', () => {
    const project = mkdtempSync(join(tmpdir(), 'txcheck-mutation-'));
    mkdirSync(join(project, 'src/deep'), { recursive: true });
    writeFileSync(join(project, 'src/a.ts'), '');
    symlinkSync('a.ts', join(project, 'src/good-link'));
    symlinkSync('/nowhere/at/all', join(project, 'src/deep/gone [1].ts'));
    symlinkSync('loop', join(project, 'loop'));
    // Stryker never copies these, so a broken link there does not matter.
    mkdirSync(join(project, 'node_modules'));
    symlinkSync('/nowhere', join(project, 'node_modules/gone'));
    expect(unresolvedLinks(project)).toEqual([
      { path: 'loop', target: 'loop' },
      { path: 'src/deep/gone [1].ts', target: '/nowhere/at/all' },
    ]);
    expect(ignorePatterns(['loop', 'src/deep/gone [1].ts'])).toBe('/loop,/src/deep/gone \\[1\\].ts');
  });
});
