// The Kafka renderer explains the counterexample of every property's mutant in Kafka's terms.
import { describe, expect, it } from 'vitest';
import { bfs } from '../../../checker/engine/bfs.ts';
import { stateView } from '../../../checker/engine/trace.ts';
import { loadMutatedSpec } from '../../../specs/load.ts';
import { mutantCases } from '../mutants.ts';
import { kafkaRenderer } from './index.ts';

describe('Kafka explanations', () => {
  it.each(mutantCases)('$property (broken by $mutant) is explained', (c) => {
    const spec = loadMutatedSpec(c.spec, c.mutant, c.property);
    const model = spec.entry.build(spec.params, spec.properties);
    const { trace } = bfs(model, { deadlockAllowed: true }).violation!;
    const states = trace.states.map((s) => stateView(model, s));
    const explanation = kafkaRenderer.explain(c.property, states, trace.actions);
    expect(explanation?.text).toMatch(/offset|epoch|record|__transaction_state/);
    expect(explanation?.over.length).toBeGreaterThan(0);
    expect(kafkaRenderer.steps(states, trace.actions)).toHaveLength(trace.actions.length);
  });
});
