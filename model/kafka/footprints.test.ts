// The footprints of footprints.ts, checked on states of seeded random walks of every shipped Kafka
// spec: two enabled actions of independent classes commute and do not disable each other; an
// action outside a disabled class's enablers leaves that class disabled; an action of a class that
// is invisible for a property leaves that property's value as it was.
import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { deepEqual } from '../../checker/engine/fingerprint.ts';
import { loadSpecFile } from '../../specs/load.ts';
import { benchmarks, shippedSpecFiles } from '../../specs/shipped.ts';
import type { KafkaConfig } from './config.ts';
import { walkStates } from './conformance/harness.ts';
import { kafkaIndependence } from './footprints.ts';
import { type Action, enabledActions, step } from './next.ts';
import { kafkaProperties } from './properties.ts';

const specs = shippedSpecFiles().filter((f) => f.startsWith('specs/kafka/') && !benchmarks.includes(f));


const sameAction = (a: Action, b: Action): boolean => a.kind === b.kind && a.actor === b.actor && a.target === b.target && a.conn === b.conn && a.api === b.api;

let independentPairs = 0;

describe('Kafka transition classes', () => {
  it.each(specs)('%s: independent actions commute, enablers and visibility over-approximate', (file) => {
    const cfg = loadSpecFile(file).params as KafkaConfig;
    const all = kafkaIndependence(cfg, kafkaProperties.map((p) => p.name));
    const perProperty = kafkaProperties.map((p) => ({ property: p, independence: kafkaIndependence(cfg, [p.name]) }));
    let pairs = 0;
    for (const s of walkStates(cfg, 6, 40, seedrandom(file))) {
      const actions = enabledActions(cfg, s);
      const classes = actions.map((a) => all.classOf(a));
      const enabledClasses = new Set(classes);
      const after = actions.map((a) => step(cfg, s, a));
      for (let x = 0; x < actions.length; x++) {
        const afterX = enabledActions(cfg, after[x]!);
        for (let y = 0; y < actions.length; y++) {
          if (classes[x] === classes[y] || all.dependent[classes[x]!]!.includes(classes[y]!)) continue;
          pairs++;
          const b = afterX.find((a) => sameAction(a, actions[y]!));
          expect(b, `${all.names[classes[x]!]} disables ${all.names[classes[y]!]}`).toBeDefined();
          if (x < y) expect(deepEqual(step(cfg, after[x]!, b!), step(cfg, after[y]!, actions[x]!)), `${all.names[classes[x]!]} and ${all.names[classes[y]!]} do not commute`).toBe(true);
        }
        for (const c of afterX.map((a) => all.classOf(a))) {
          if (enabledClasses.has(c)) continue;
          expect(all.enablers[c]!.includes(classes[x]!), `${all.names[classes[x]!]} enables ${all.names[c]}`).toBe(true);
        }
        for (const { property, independence } of perProperty) {
          if (independence.visible[classes[x]!]) continue;
          expect(property.holds(after[x]!), `${all.names[classes[x]!]} changes ${property.name}`).toBe(property.holds(s));
        }
      }
    }
    independentPairs += pairs;
  });

  it('met independent pairs on the walks, so the checks above checked something', () => {
    expect(independentPairs).toBeGreaterThan(1000);
  });

  it('declares every class an action of every shipped spec can take', () => {
    for (const file of specs) {
      const cfg = loadSpecFile(file).params as KafkaConfig;
      const independence = kafkaIndependence(cfg, []);
      for (const s of walkStates(cfg, 4, 40, seedrandom(`${file}/classes`))) for (const a of enabledActions(cfg, s)) expect(() => independence.classOf(a)).not.toThrow();
    }
  });
});
