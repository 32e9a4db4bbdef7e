// The steps of walks over the shipped Kafka specs, of every action kind, are said by a participant
// of the sequence diagram (or the network, for a loss), their events stay on its lifelines, and a
// step is never said as its bare label: node names in labels and in views agree.
import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { stateView } from '../../../checker/engine/trace.ts';
import { loadSpecFile } from '../../../specs/load.ts';
import { benchmarks, shippedSpecFiles } from '../../../specs/shipped.ts';
import { actionKindNames } from '../labels.ts';
import { kafkaRenderer } from './index.ts';

const specs = shippedSpecFiles().filter((f) => f.startsWith('specs/kafka/') && !benchmarks.includes(f));
const kindsSaid = new Set<string>();

/**
 * What is wrong with the steps of seeded random walks of a spec, one line each. The walks take an
 * action of a kind they have not taken yet whenever one is enabled, so that rare kinds get said.
 */
function misspoken(file: string): string[] {
  const spec = loadSpecFile(file);
  const model = spec.entry.build(spec.params, spec.properties);
  const rng = seedrandom(file);
  const taken = new Set<string>();
  const wrong: string[] = [];
  for (let walk = 0; walk < 6; walk++) {
    let s: unknown = model.init()[0];
    const states = [s];
    const labels: string[] = [];
    for (let depth = 0; depth < 40; depth++) {
      const actions = model.actions(s);
      if (actions.length === 0) break;
      const fresh = actions.filter((a) => !taken.has(model.kind(a)));
      const pool = fresh.length > 0 ? fresh : actions;
      const a = pool[Math.floor(rng() * pool.length)]!;
      taken.add(model.kind(a));
      kindsSaid.add(model.kind(a));
      labels.push(model.label(a));
      s = model.next(s, a);
      states.push(s);
    }
    const views = states.map((x) => stateView(model, x));
    const lifelines = new Set(kafkaRenderer.participants(views));
    kafkaRenderer.steps(views, labels).forEach((meaning, i) => {
      const at = `${labels[i]}: `;
      if (!lifelines.has(meaning.actor) && meaning.actor !== 'network')
        wrong.push(`${at}actor ${meaning.actor}`);
      if (meaning.action === labels[i] || meaning.action === '')
        wrong.push(`${at}said as "${meaning.action}"`);
      for (const e of meaning.events) {
        const ends = e.kind === 'note' ? [e.over] : [e.from, e.to];
        for (const end of ends) if (!lifelines.has(end)) wrong.push(`${at}event on ${end}`);
      }
    });
  }
  return wrong;
}

describe('Kafka steps, said', () => {
  it.each(specs)('%s: by the diagram participants, in their own words', (file) => {
    expect(misspoken(file)).toEqual([]);
  });

  it('of every action kind', () => {
    expect(actionKindNames.filter((kind) => !kindsSaid.has(kind))).toEqual([]);
  });
});
