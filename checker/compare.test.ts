// The compare, mutants and list commands through the command line.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from './cli.ts';

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(args, { out: (t) => (out += t), err: (t) => (err += t), errIsTTY: false });
  return { code, out, err };
}

describe('compare', () => {
  it('prints one markdown row per variant with a verdict per property', async () => {
    const { code, out } = await run([
      'compare',
      'specs/kafka/hanging-transaction.json',
      '--variants',
      'kafka-3.5,kafka-3.6',
      '--markdown',
    ]);
    expect(code).toBe(0);
    const lines = out.trim().split('\n');
    expect(lines[0]).toMatch(/^\| variant \| NoHangingTransaction \|/);
    expect(lines[2]).toMatch(/^\| kafka-3\.5 \| violated \(16\) \|/);
    expect(lines[3]).toMatch(/^\| kafka-3\.6 \| holds \|/);
  });

  it.each([
    [
      ['compare', 'specs/kafka/hanging-transaction.json', '--variants', 'kafka-9'],
      /command line: --variants: expected names from kafka-0\.11/,
    ],
    [
      ['compare', 'specs/kafka/hanging-transaction.json'],
      /command line: --variants: expected a comma-separated list/,
    ],
    [
      ['compare', 'specs/kafka/hanging-transaction.json', '--variants', 'kafka-3.5,kafka-3.6,kafka-3.5'],
      /^command line: --variants: expected each variant once, got "kafka-3\.5" 2 times$/m,
    ],
    [['list', 'foo'], /^command line: foo: expected nothing after list but --json/],
    [['list', '--markdown'], /^command line: --markdown: expected no such option for list \(only --json\)/],
    [
      ['compare', 'specs/two-phase/tp3.json', '--variants', 'x'],
      /specs\/two-phase\/tp3\.json: model: expected a model with variants/,
    ],
    [
      ['mutants', 'specs/kafka/commit-abort.json', 'specs/two-phase/tp3.json'],
      /specs\/two-phase\/tp3\.json: model: expected the model of the first spec/,
    ],
  ])('bad input %j gives one line and exit 2, before any search', async (args, message) => {
    const started = performance.now();
    const { code, err, out } = await run(args);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(out).toBe('');
    expect(code).toBe(2);
    expect(err.trim().split('\n')).toHaveLength(1);
    expect(err).toMatch(message);
  });
});

describe('mutants', () => {
  it('kills the two-phase mutant on three resource managers', async () => {
    const { code, out } = await run(['mutants', 'specs/two-phase/tp3.json']);
    expect(out).toMatch(/commit-without-all-prepared\s+killed\s+TCConsistent/);
    expect(code).toBe(0);
  });

  it('reports a survivor and exits 1 when no spec can kill a mutant', async () => {
    // With one resource manager nobody can disagree, however early the TM commits.
    const file = join(mkdtempSync(join(tmpdir(), 'txcheck-mutants-')), 'tp1.json');
    writeFileSync(file, JSON.stringify({ model: 'two-phase', resourceManagers: 1 }));
    const { code, out } = await run(['mutants', file]);
    expect(out).toMatch(/commit-without-all-prepared\s+SURVIVED/);
    expect(code).toBe(1);
  });
});

describe('list', () => {
  it('names every generation, property, mutant and shipped spec', async () => {
    const { code, out } = await run(['list']);
    expect(code).toBe(0);
    for (const name of [
      'kafka-0.11',
      'kafka-3.5',
      'kafka-3.6',
      'kafka-4.0',
      'kafka-latest',
      'verification',
      'tv2',
      'NoHangingTransaction',
      'mutantReadPastLso',
      'specs/kafka/delayed-produce.json',
    ]) {
      expect(out).toContain(name);
    }
  });

  it('--json gives what the text shows, as one object', async () => {
    const text = (await run(['list'])).out;
    const { code, out } = await run(['list', '--json']);
    expect(code).toBe(0);
    expect(out.trim().split('\n')).toHaveLength(1);
    const listed = JSON.parse(out) as {
      models: { name: string; [section: string]: unknown }[];
      specs: { file: string; description: string; expect?: string }[];
    };
    expect(listed.models.map((m) => m.name)).toEqual(['kafka', 'two-phase']);
    const kafka = listed.models[0]!;
    type Listed = { name: string; description: string; stable?: boolean };
    for (const section of ['variants', 'switches', 'properties', 'liveness', 'mutants'])
      for (const { name, description, stable } of kafka[section] as Listed[])
        expect(text).toMatch(
          new RegExp(
            `^  ${name} +${description.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}${stable ? ' \\(stable\\)' : ''}$`,
            'm',
          ),
        );
    expect((kafka.properties as Listed[]).filter((p) => p.stable).map((p) => p.name)).toEqual([
      'AtomicCommit',
      'ZombieFencing',
      'Idempotence',
    ]);
    expect(listed.specs.map((s) => s.file)).toEqual(
      [...text.split('Shipped specs:\n')[1]!.matchAll(/^ {2}(\S+)/gm)].map((m) => m[1]),
    );
    expect(listed.specs).toContainEqual(
      expect.objectContaining({
        file: 'specs/kafka/hanging-transaction.json',
        expect: 'NoHangingTransaction',
      }),
    );
  });

  it('names the variant files the shipped specs use, client rule sets included, with their first sentence', async () => {
    const text = (await run(['list'])).out;
    const { out } = await run(['list', '--json']);
    const files = (JSON.parse(out) as { variantFiles: { file: string; description: string }[] }).variantFiles;
    expect(files.map((f) => f.file)).toEqual([
      'specs/kafka/clients/franz-go.ts',
      'specs/kafka/clients/librdkafka.ts',
      'specs/kafka/examples/lenient-produce.ts',
    ]);
    expect(files[1]!.description).toMatch(/^An alternative client rule set: .*librdkafka.*tag v2\.15\.0/);
    const escape = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    for (const { file, description } of files)
      expect(text).toMatch(new RegExp(`^  ${escape(file)} +${escape(description)}$`, 'm'));
  });
});
