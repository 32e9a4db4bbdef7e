// Every Kafka property can fail: its mutant is caught by breadth-first search on a small spec
// that holds as written (the shipped-spec test checks that), and `txcheck mutants` kills every
// mutant on those specs.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bfs } from '../../checker/engine/bfs.ts';
import { main } from '../../checker/cli.ts';
import { loadMutatedSpec, loadSpecFile } from '../../specs/load.ts';
import { mutantCases } from './mutants.ts';
import { kafkaProperties } from './properties.ts';

describe('Kafka mutants', () => {
  it('cover every property', () => {
    const covered = new Set(mutantCases.map((c) => c.property));
    expect([...covered].sort()).toEqual(kafkaProperties.map((p) => p.name).sort());
  });

  it.each(mutantCases)('$mutant breaks $property', (c) => {
    expect(loadSpecFile(c.spec).expect).toBe('holds');
    const mutated = loadMutatedSpec(c.spec, c.mutant, c.property);
    const result = bfs(mutated.entry.build(mutated.params, mutated.properties), { deadlockAllowed: true });
    expect(result.status).toBe('violation');
    expect(result.violation?.property).toBe(c.property);
  });

  it('txcheck mutants kills every mutant on the mutant specs', async () => {
    const specs = readdirSync('specs/kafka/mutants')
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => `specs/kafka/mutants/${f}`);
    let out = '';
    const code = await main(['mutants', ...specs, '--json'], {
      out: (t) => (out += t),
      err: () => {},
      errIsTTY: false,
    });
    const report = JSON.parse(out);
    expect(report.survivors).toEqual([]);
    expect(report.mutants.map((m: { mutant: string }) => m.mutant).sort()).toEqual(
      [...new Set(mutantCases.map((c) => c.mutant))].sort(),
    );
    expect(code).toBe(0);
  }, 120_000);
});
