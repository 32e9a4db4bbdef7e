// The schedule of a replay: the trace's client steps in its order, the broker's own work at once
// after each, the trace's later labels for that work passed over, and a stop at a step one broker
// cannot take. No broker is needed.
import { describe, expect, it } from 'vitest';
import { readTraceFile } from '../../checker/engine/trace.ts';
import type { KafkaConfig } from '../../model/kafka/config.ts';
import { firstDifference } from './replay.ts';
import { walkRandom } from '../../checker/engine/random.ts';
import { loadSpecFile, parseSpec } from '../../specs/load.ts';
import { noTimings, randomLabels, walkTrace } from './walk.ts';

function load(file: string, variant?: string): { cfg: KafkaConfig; labels: readonly string[] } {
  const trace = readTraceFile(file);
  const raw = variant === undefined ? trace.meta.spec : { ...trace.meta.spec, variant };
  return { cfg: parseSpec(file, raw, '#meta.spec').params as KafkaConfig, labels: trace.actions };
}

describe('walkTrace', () => {
  it("does the broker's markers at once and passes over the trace's own labels for them", () => {
    const { cfg, labels } = load('traces/kafka-3.5-stale-end-txn.itf.json');
    const walk = walkTrace(cfg, labels);
    expect(walk.stop).toBeUndefined();
    expect(walk.steps.map((s) => s.index)).toEqual(labels.map((_, i) => i + 1));
    const retriedEndTxn = walk.steps[14]!;
    expect(retriedEndTxn.label).toBe('deliver P0.0→TC#1: EndTxn');
    expect(retriedEndTxn.broker.map((m) => m.label)).toEqual([
      'deliver TC→L0: WriteTxnMarkers',
      'deliver L0→TC: WriteTxnMarkers response',
      'TC: completeTransaction(t0)',
    ]);
    for (const passed of [20, 21, 22]) expect(walk.steps[passed - 1]!.taken).toBeUndefined();
    // Every step the model took is one its actions allow, each from the state the last one left.
    const taken = walk.steps.flatMap((s) => (s.taken === undefined ? [] : [s.taken, ...s.broker]));
    for (let i = 1; i < taken.length; i++) expect(taken[i]!.before).toBe(taken[i - 1]!.after);
  });

  it('stops at a step one broker cannot take at a chosen moment', () => {
    const { cfg, labels } = load('traces/kafka-3.5-marker-timeout.itf.json');
    const walk = walkTrace(cfg, labels);
    const at = labels.findIndex((l) => l.includes('markerTimeout')) + 1;
    expect(walk.stop).toEqual({
      index: at,
      label: labels[at - 1],
      why: 'one broker cannot be made to take this step at a chosen moment',
    });
    expect(walk.steps).toHaveLength(at - 1);
  });

  it("stops where another generation cannot take the trace's step", () => {
    const { cfg, labels } = load('traces/kafka-3.5-stale-end-txn.itf.json', 'kafka-4.1');
    const walk = walkTrace(cfg, labels);
    // A transaction-version-2 client adds partitions through the leader: no AddPartitionsToTxn of its own.
    expect(walk.stop).toMatchObject({ index: 7, label: 'P0.0: sendTxnRequest' });
  });
});

describe('walkTrace against a cluster', () => {
  it('holds the markers for the trace, drives the marker time-out and re-sends at once', () => {
    const { cfg, labels } = load('traces/kafka-3.5-marker-timeout.itf.json');
    const walk = walkTrace(cfg, labels, 'cluster');
    expect(walk.stop).toBeUndefined();
    const at = (label: string) => walk.steps.find((s) => s.label === label)!;
    // The EndTxn answer leaves the COMMIT marker in flight: no broker work after it.
    expect(at('deliver TC→P0.0: EndTxn response').broker).toEqual([]);
    expect(at('TC: markerTimeout(L0)').broker.map((m) => m.label)).toEqual(['TC: resendTxnMarker(t0, p0)']);
    expect(at('TC: resendTxnMarker(t0, p0)').taken).toBeUndefined();
    expect(at('deliver TC→L0#1: WriteTxnMarkers').broker.map((m) => m.label)).toEqual([
      'deliver L0→TC#1: WriteTxnMarkers response',
      'TC: completeTransaction(t0)',
    ]);
    // The first request, late, is a step of its own too.
    expect(at('deliver TC→L0: WriteTxnMarkers').taken).toBeDefined();
    const taken = walk.steps.flatMap((s) => (s.taken === undefined ? [] : [s.taken, ...s.broker]));
    for (let i = 1; i < taken.length; i++) expect(taken[i]!.before).toBe(taken[i - 1]!.after);
  });

  it('takes a coordinator failover and loads the log at once', () => {
    const { cfg, labels } = load('traces/kafka-4.0-epoch-exhaustion-failover.itf.json');
    const walk = walkTrace(cfg, labels, 'cluster');
    expect(walk.stop).toBeUndefined();
    const failover = walk.steps.find((s) => s.label === 'TC: coordinatorFailover')!;
    expect(failover.taken?.after.coordinator.epoch).toBe(failover.taken!.before.coordinator.epoch + 1);
  });

  it('stops at a step the cluster does not take yet, saying why', () => {
    const { cfg, labels } = load('traces/kafka-3.5-transactional-id-expiry.itf.json');
    expect(walkTrace(cfg, labels, 'cluster').stop).toMatchObject({
      label: 'TC: transactionalIdExpiry(t0)',
      why: 'the replay does not drive transactional.id expiry yet',
    });
  });
});

describe('randomLabels', () => {
  it("counts the broker's own work and the moments of its own it passes over, and walks alike without", () => {
    const raw = { ...loadSpecFile('specs/kafka/commit-abort.json').raw, faults: { transactionTimeouts: 1 } };
    const cfg = parseSpec('spec.json', raw, '').params as KafkaConfig;
    const timings = noTimings();
    const walks = [0, 1, 2].map((walk) => randomLabels(cfg, walkRandom(3, walk), 30, 'broker', timings));
    expect(walks.map((_, walk) => randomLabels(cfg, walkRandom(3, walk), 30))).toEqual(walks);
    expect(timings.brokerWork.get('WriteTxnMarkers')).toBeGreaterThan(0);
    expect(timings.brokerWork.get('WriteTxnMarkers response')).toBe(
      timings.brokerWork.get('WriteTxnMarkers'),
    );
    expect(timings.brokerWork.get('completeTransaction')).toBeGreaterThan(0);
    expect(timings.passedOver.get('transactionTimeout')).toBeGreaterThan(0);
    // Nothing a walk drives is counted as the broker's.
    const driven = new Set(walks.flat().map((label) => /^deliver [^:]+: (.+)$/.exec(label)?.[1]));
    for (const name of timings.brokerWork.keys()) expect(driven.has(name)).toBe(false);
  });
});

describe('firstDifference', () => {
  it('names the path of the first difference and both sides', () => {
    expect(firstDifference({ a: [1, { b: 2 }] }, { a: [1, { b: 3 }] }, '')).toEqual({
      what: 'a[1].b',
      model: 2,
      kafka: 3,
    });
    expect(firstDifference({ a: [1] }, { a: [1, 2] }, '')).toEqual({
      what: 'a[1]',
      model: undefined,
      kafka: 2,
    });
    expect(firstDifference({ a: 'x' }, { a: 'x' }, '')).toBeUndefined();
  });
});
