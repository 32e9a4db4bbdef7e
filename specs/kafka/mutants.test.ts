// Every Kafka property can fail: its mutant is caught by breadth-first search, while the same
// spec with the rule intact holds that property.
import { describe, expect, it } from 'vitest';
import { bfs } from '../../checker/bfs.ts';
import { parseSpec } from '../load.ts';
import { kafkaProperties } from './properties.ts';
import { type MutantCase, mutantCases } from './mutants.ts';

function check(c: MutantCase, withMutant: boolean) {
  const variant = withMutant ? { base: 'kafka-3.5', enable: [c.mutant] } : 'kafka-3.5';
  const spec = parseSpec('mutants.ts', { model: 'kafka', variant, properties: [c.property], deadlock: true, ...c.params }, '');
  const model = spec.entry.build(spec.params, spec.properties);
  return bfs(model, { deadlockAllowed: true });
}

describe('Kafka mutants', () => {
  it('cover every property', () => {
    const covered = new Set(mutantCases.map((c) => c.property));
    expect([...covered].sort()).toEqual(kafkaProperties.map((p) => p.name).sort());
  });

  it.each(mutantCases)('$mutant breaks $property', (c) => {
    const killed = check(c, true);
    expect(killed.status).toBe('violation');
    expect(killed.violation?.property).toBe(c.property);
    expect(check(c, false).status).toBe('ok');
  });
});
