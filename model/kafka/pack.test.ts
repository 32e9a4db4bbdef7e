// The packed words of a Kafka state must tell every two different states apart: each number or
// boolean anywhere in a reachable state, changed alone, changes the words (so no field is left out
// of pack.ts), two states with the same words are equal, and unpacking gives the state back. The
// fingerprint made from the actors' own fingerprints (fingerprintState) follows the words.
import fc from 'fast-check';
import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { Summary, deepEqual } from '../../checker/engine/fingerprint.ts';
import { kafkaConfig, walkStates } from './conformance/harness.ts';
import type { KafkaConfig } from './config.ts';
import { enabledActions, step } from './next.ts';
import { fingerprintState, packState, unpackState } from './pack.ts';
import type { State } from './state.ts';

const words = new Int32Array(1 << 14);

function packed(s: State): number[] {
  return Array.from(words.subarray(0, packState(s, words)));
}

const summary = new Summary();
const fingerprintOut = new Int32Array(2);

function fingerprint(s: State): string {
  summary.clear();
  fingerprintState(s, summary);
  summary.fingerprint(fingerprintOut);
  return `${fingerprintOut[0]}:${fingerprintOut[1]}`;
}

/** Every path to a number or boolean inside `v`. */
function leaves(
  v: unknown,
  path: (string | number)[] = [],
  out: (string | number)[][] = [],
): (string | number)[][] {
  if (typeof v === 'number' || typeof v === 'boolean') out.push(path);
  else if (Array.isArray(v)) v.forEach((x, i) => leaves(x, [...path, i], out));
  else if (typeof v === 'object' && v !== null)
    for (const [k, x] of Object.entries(v)) leaves(x, [...path, k], out);
  return out;
}

function changedAt(s: State, path: readonly (string | number)[]): State {
  const copy = structuredClone(s) as unknown as Record<string | number, unknown>;
  let at = copy;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  const old = at[last];
  at[last] = typeof old === 'boolean' ? !old : (old as number) + 1;
  return copy as unknown as State;
}

const faults = {
  ...kafkaConfig('kafka-3.8').faults,
  requestTimeouts: 1,
  batchExpiries: 1,
  coordinatorFailovers: 1,
  transactionTimeouts: 1,
  appendFailures: 1,
  markerTimeouts: 1,
  producerStateExpiries: 1,
  responseLoss: 1,
};
const configs: [string, KafkaConfig][] = [
  [
    'kafka-3.8, async appends and loading, every fault kind, an idempotent producer',
    kafkaConfig('kafka-3.8', {
      idempotentProducers: 1,
      instancesPerId: 2,
      faults,
      coordinatorAppends: 'async',
      coordinatorLoading: 'async',
      consumers: { readCommitted: 1, readUncommitted: 1 },
    }),
  ],
  [
    'kafka-4.0, the transform app, a transaction version change',
    kafkaConfig('kafka-4.0', {
      app: 'consume-transform-produce',
      inputRecords: 2,
      faults: { ...faults, transactionVersionChanges: 1, transactionalIdExpiries: 1 },
    }),
  ],
];

describe('packed Kafka states', () => {
  it.each(configs)('every field of a reachable state is packed (%s)', (_, cfg) => {
    const states = walkStates(cfg, 4, 40, seedrandom('pack'));
    let checked = 0;
    for (const s of states.filter((_, i) => i % 4 === 0)) {
      const base = packed(s).join(',');
      const baseFingerprint = fingerprint(s);
      for (const path of leaves(s)) {
        const changed = changedAt(s, path);
        expect(packed(changed).join(','), `changing ${path.join('.')} left the words alike`).not.toBe(base);
        expect(fingerprint(changed), `changing ${path.join('.')} left the fingerprint alike`).not.toBe(
          baseFingerprint,
        );
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(1000);
  });

  it.each(configs)(
    'states with the same words are equal, and equal states have the same words (%s)',
    (_, cfg) => {
      const byWords = new Map<string, State>();
      const wordsByFingerprint = new Map<string, string>();
      for (const s of walkStates(cfg, 20, 40, seedrandom('pack'))) {
        const key = packed(s).join(',');
        const seen = byWords.get(key);
        if (seen === undefined) byWords.set(key, s);
        else expect(deepEqual(seen, s)).toBe(true);
        expect(packed(structuredClone(s))).toEqual(packed(s));
        // One fingerprint per packed state, and no two packed states share one.
        const f = fingerprint(s);
        expect(wordsByFingerprint.get(f) ?? key).toBe(key);
        wordsByFingerprint.set(f, key);
        expect(fingerprint(structuredClone(s))).toBe(f);
      }
      expect(byWords.size).toBeGreaterThan(100);
      expect(wordsByFingerprint.size).toBe(byWords.size);
    },
  );

  it.each(configs)('unpack gives back the state that was packed (%s)', (_, cfg) => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), (seed) => {
        for (const s of walkStates(cfg, 1, 40, seedrandom(String(seed))))
          expect(unpackState(words.slice(0, packState(s, words)))).toEqual(s);
      }),
      { numRuns: 30 },
    );
  });

  it.each(configs)(
    'a successor of an unpacked state packs and fingerprints as its copy does, whatever it shares (%s)',
    (_, cfg) => {
      let copied = 0;
      for (const s of walkStates(cfg, 4, 40, seedrandom('shared'))) {
        const parent = unpackState(words.slice(0, packState(s, words)));
        for (const a of enabledActions(cfg, parent)) {
          const t = step(cfg, parent, a);
          copied += t.producers.filter((p, i) => p === parent.producers[i]).length;
          copied += t.partitions.filter((p, i) => p === parent.partitions[i]).length;
          // A structured clone shares nothing with the parent, so it is packed field by field.
          expect(packed(t)).toEqual(packed(structuredClone(t)));
          // Its fingerprint too: the parent's actors' fingerprints, kept, are those of their words.
          expect(fingerprint(t)).toBe(fingerprint(structuredClone(t)));
        }
      }
      expect(copied).toBeGreaterThan(100);
    },
  );

  it.each(configs)(
    'a state packed just after its fingerprint carries its parts’ fingerprints, and its successors fingerprint as their copies do (%s)',
    (_, cfg) => {
      let successors = 0;
      for (const s of walkStates(cfg, 4, 40, seedrandom('carried'))) {
        const plain = packed(s);
        fingerprint(s);
        const carried = packed(s);
        // The header's fingerprint and each actor's (the coordinator and the history among them),
        // two words each, after the state's own words.
        const lists = [s.producers, s.idempotentProducers, s.partitions, s.consumers, s.network];
        const parts = 1 + 2 + lists.reduce((count, actors) => count + actors.length, 0);
        expect(carried.slice(0, plain.length)).toEqual(plain);
        expect(carried.length - plain.length).toBe(2 * parts);
        const parent = unpackState(Int32Array.from(carried));
        expect(parent).toEqual(s);
        for (const a of enabledActions(cfg, parent)) {
          const t = step(cfg, parent, a);
          expect(fingerprint(t)).toBe(fingerprint(structuredClone(t)));
          successors++;
        }
      }
      expect(successors).toBeGreaterThan(100);
    },
  );

  it('refuses a packed state followed by a wrong number of words', () => {
    const s = walkStates(configs[0]![1], 1, 10, seedrandom('carried'))[0]!;
    const plain = packed(s);
    expect(() => unpackState(Int32Array.from([...plain, 1, 2, 3]))).toThrow(
      /3 words after the state, expected \d+/,
    );
  });

  it('a state that needs more words than given is refused, never cut short', () => {
    const cfg = configs[0]![1];
    for (const s of walkStates(cfg, 2, 30, seedrandom('pack'))) {
      const needed = packState(s, words);
      // One word short, or far short: the pack throws rather than return a prefix of the state.
      for (const room of [8, needed - 1])
        expect(() => packState(s, new Int32Array(room))).toThrow(
          new RangeError(`a Kafka state needs more than ${room} packed words`),
        );
      // Exactly enough is enough.
      const exact = new Int32Array(needed);
      expect(packState(s, exact)).toBe(needed);
      expect(exact).toEqual(words.subarray(0, needed));
    }
  });
});
