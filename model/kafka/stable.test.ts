// A property marked stable stays broken once broken, so partial-order reduction makes no step
// visible for it (Property.stable). Checked where its mutants break it: from the last state of
// the counterexample, every state a few steps on breaks it too.
import { describe, expect, it } from 'vitest';
import { bfs } from '../../checker/engine/bfs.ts';
import { loadMutatedSpec } from '../../specs/load.ts';
import { mutantCases } from './mutants.ts';
import { kafkaProperties } from './properties.ts';

const STATES_ON = 3_000;

describe('stable Kafka properties', () => {
  const stable = kafkaProperties.filter((p) => p.stable === true).map((p) => p.name);

  it('are the ones over the logs alone and the fencing of begun transactions', () => {
    expect(stable).toEqual(['AtomicCommit', 'ZombieFencing', 'Idempotence']);
  });

  it.each(mutantCases.filter((c) => stable.includes(c.property)))(
    '$property stays broken on every run on from where $mutant breaks it',
    (c) => {
      const mutated = loadMutatedSpec(c.spec, c.mutant, c.property);
      const model = mutated.entry.build(mutated.params, mutated.properties);
      const property = model.invariants[0]!;
      const result = bfs(model, { deadlockAllowed: true });
      expect(result.violation?.property).toBe(c.property);
      let level: unknown[] = [result.violation!.trace.states.at(-1)];
      let checked = 0;
      while (level.length > 0 && checked < STATES_ON) {
        const next: unknown[] = [];
        for (const s of level) {
          expect(property.holds(s as never)).toBe(false);
          checked++;
          for (const a of model.actions(s)) next.push(model.next(s, a));
        }
        level = next;
      }
      expect(checked).toBeGreaterThan(10);
    },
  );
});
