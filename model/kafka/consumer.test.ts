// A consumer's fetches accumulate: what poll() returned once stays returned, and the next fetch
// starts at the position the last one left (KafkaConsumer's fetch position).
import { describe, expect, it } from 'vitest';
import { BatchKind } from './state.ts';
import {
  batch,
  initial,
  kafkaConfig,
  take,
  withPartition,
  withProducerEntry,
} from './conformance/harness.ts';

const cfg = kafkaConfig('kafka-3.5', { partitions: 1, consumers: { readCommitted: 1, readUncommitted: 0 } });

describe('consecutive fetches of a read_committed consumer', () => {
  it('keep the records already returned and return only the newly committed ones', () => {
    const committed = [
      batch({ pid: 1, epoch: 0 }),
      batch({ pid: 1, epoch: 0, kind: BatchKind.Commit, seq: -1 }),
    ];
    let s = withProducerEntry(withPartition(initial(cfg), 0, { log: committed }), 0, { pid: 1 });
    s = take(cfg, s, 'C0: fetch(p0)');
    expect(s.consumers[0]!.delivered.map((d) => d.offset)).toEqual([0]);
    s = withPartition(s, 0, {
      log: [
        ...committed,
        batch({ pid: 1, epoch: 0, seq: 1 }),
        batch({ pid: 1, epoch: 0, kind: BatchKind.Commit, seq: -1 }),
      ],
    });
    s = take(cfg, s, 'C0: fetch(p0)');
    expect(s.consumers[0]!.delivered.map((d) => d.offset)).toEqual([0, 2]);
    expect(s.consumers[0]!.position[0]).toBe(4);
  });
});
