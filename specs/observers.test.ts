// Observers off the state ("observers": "off") keeps verdicts: on the shipped Kafka specs the
// suite recounts, and on random small Kafka specs, the search without consumers finds the same
// verdict and violated property as the search with them, in no more states, and every violation
// it reports ends in a state that breaks the property. The mutant that breaks a consumer is refused.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bfs } from '../checker/engine/bfs.ts';
import type { Result } from '../checker/engine/search.ts';
import { readCounts } from '../checker/counts.ts';
import { modelOf } from './build.ts';
import { loadSpecFile, parseSpec } from './load.ts';
import { benchmarks, shippedSpecFiles } from './shipped.ts';

const RECOUNT_UP_TO = 20_000;
const table = readCounts();

const withObserversOff = (raw: Readonly<Record<string, unknown>>) => ({ ...raw, observers: 'off' });
const enables = (raw: Readonly<Record<string, unknown>>, mutant: string) =>
  JSON.stringify(raw.variant ?? '').includes(mutant);

const small = shippedSpecFiles().filter((f) => {
  if (!f.startsWith('specs/kafka/') || benchmarks.includes(f)) return false;
  const spec = loadSpecFile(f);
  const count = table[f]?.[String(spec.raw.variant)]?.distinctStates ?? Infinity;
  return spec.liveness.length === 0 && !enables(spec.raw, 'mutantReadPastLso') && count <= RECOUNT_UP_TO;
});

function verdict(r: Result): string {
  return r.violation?.property ?? r.status;
}

function endsBroken(model: ReturnType<typeof modelOf>, r: Result): boolean {
  const last = r.violation!.trace.states.at(-1);
  return model.invariants.some((p) => p.name === r.violation!.property && !p.holds(last));
}

function compare(file: string, raw: Readonly<Record<string, unknown>>, maxStates?: number) {
  const options = { deadlockAllowed: true, ...(maxStates === undefined ? {} : { maxStates }) };
  const full = bfs(modelOf(parseSpec(file, raw, '')), options);
  const model = modelOf(parseSpec(file, withObserversOff(raw), ''));
  const off = bfs(model, options);
  return { full, off, model };
}

describe('observers off the state', () => {
  it('has shipped specs to check, with and without a violation of ReadCommittedIsolation', () => {
    expect(small.length).toBeGreaterThan(10);
    const expected = small.map((f) => loadSpecFile(f).expect);
    expect(expected).toContain('ReadCommittedIsolation');
    expect(expected).toContain('holds');
  });

  it.each(small)('%s: the same verdict, in no more states', (file) => {
    const spec = loadSpecFile(file);
    const { full, off, model } = compare(file, spec.raw);
    expect(verdict(off)).toBe(verdict(full));
    expect(off.distinctStates).toBeLessThanOrEqual(full.distinctStates);
    if (off.violation !== undefined && off.violation.property !== 'Deadlock')
      expect(endsBroken(model, off)).toBe(true);
  });

  it('agrees with the consumers in the state on random small Kafka specs', () => {
    const variants = ['kafka-0.11', 'kafka-3.5', 'kafka-3.8', 'kafka-4.0', 'kafka-latest'];
    const faults = ['requestTimeouts', 'batchExpiries', 'producerCrashes', 'transactionTimeouts'];
    let violations = 0;
    let smaller = 0;
    fc.assert(
      fc.property(
        fc.constantFrom(...variants),
        fc.integer({ min: 1, max: 2 }),
        fc.integer({ min: 1, max: 2 }),
        fc.integer({ min: 0, max: 1 }),
        fc.integer({ min: 0, max: 1 }),
        fc.constantFrom(...faults),
        (variant, partitions, transactionsPerInstance, readCommitted, readUncommitted, fault) => {
          const raw = {
            model: 'kafka',
            variant,
            partitions,
            transactionsPerInstance,
            consumers: { readCommitted, readUncommitted },
            faults: { [fault]: 1 },
            deadlock: true,
          };
          const { full, off, model } = compare('random spec', raw, 30_000);
          if (full.status === 'incomplete' || off.status === 'incomplete') return;
          expect(verdict(off)).toBe(verdict(full));
          expect(off.distinctStates).toBeLessThanOrEqual(full.distinctStates);
          if (off.violation !== undefined) {
            violations++;
            if (off.violation.property !== 'Deadlock') expect(endsBroken(model, off)).toBe(true);
          }
          if (off.distinctStates < full.distinctStates) smaller++;
        },
      ),
      { seed: 20261203, numRuns: 40 },
    );
    expect(violations).toBeGreaterThan(0);
    expect(smaller).toBeGreaterThan(0);
  }, 120_000);

  it('is refused with the mutant that breaks a consumer, and with ConsumersProgress', () => {
    const base = { model: 'kafka', observers: 'off', deadlock: true };
    expect(() =>
      parseSpec('s.json', { ...base, variant: { base: 'kafka-3.5', enable: ['mutantReadPastLso'] } }, ''),
    ).toThrow(/^s\.json: observers: expected "modelled" with mutantReadPastLso/);
    expect(() => parseSpec('s.json', { ...base, liveness: ['ConsumersProgress'] }, '')).toThrow(
      /^s\.json: liveness: expected no ConsumersProgress: it reads the consumers' deliveries/,
    );
    expect(() => parseSpec('s.json', { ...base, observers: 'none' }, '')).toThrow(
      /^s\.json: observers: expected /,
    );
  });
});
