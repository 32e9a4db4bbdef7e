// FetcherTest (clients/src/test/java/org/apache/kafka/clients/consumer/internals/, apache/kafka 3.5
// 1361d5cd): what a consumer returns from a fetched log. Kafka's multi-record batches are one record
// per batch here, so the offsets below are the model's; C0 reads read_committed, C1 read_uncommitted.
import { describe, expect, it } from 'vitest';
import { type LogBatch, type State, BatchKind, NO_OFFSET } from '../state.ts';
import { batch, initial, kafkaConfig, labels, take, withPartition, withProducerEntry } from './harness.ts';

const cfg = kafkaConfig('kafka-3.5', { partitions: 1, consumers: { readCommitted: 1, readUncommitted: 1 } });

const data = (pid: number, transactional = true): LogBatch => batch({ pid, epoch: 0, transactional });
const commit = (pid: number): LogBatch => batch({ pid, epoch: 0, kind: BatchKind.Commit, seq: -1 });
const abort = (pid: number): LogBatch => batch({ pid, epoch: 0, kind: BatchKind.Abort, seq: -1 });

/** Partition 0 holding `log`; a producer whose transaction is still open has it recorded at its first offset. */
function withLog(log: LogBatch[], open: { pid: number; firstOffset: number }[] = []): State {
  let s = withPartition(initial(cfg), 0, { log });
  for (const pid of new Set(log.map((b) => b.pid))) {
    const o = open.find((x) => x.pid === pid);
    s = withProducerEntry(s, 0, {
      pid,
      epoch: 0,
      txnFirstOffset: o === undefined ? NO_OFFSET : o.firstOffset,
    });
  }
  return s;
}

/** The consumer fetches partition 0 once: the offsets it returned and its position after. */
function fetched(s: State, consumer: 0 | 1): { offsets: number[]; position: number } {
  const after = take(cfg, s, `C${consumer}: fetch(p0)`);
  const c = after.consumers[consumer]!;
  return { offsets: c.delivered.map((d) => d.offset), position: c.position[0]! };
}

describe('FetcherTest (apache/kafka 3.5 1361d5cd), kafka-3.5', () => {
  it('testFetcherIgnoresControlRecords', () => {
    expect(fetched(withLog([data(1, false), abort(1)]), 1)).toEqual({ offsets: [0], position: 2 });
  });

  it('testSkippingAbortedTransactions', () => {
    expect(fetched(withLog([data(1), data(1), abort(1)]), 0)).toEqual({ offsets: [], position: 3 });
  });

  it('testReturnCommittedTransactions', () => {
    expect(fetched(withLog([data(1), data(1), commit(1)]), 0).offsets).toEqual([0, 1]);
  });

  it('testReadCommittedWithCommittedAndAbortedTransactions', () => {
    // 0-1 pid 1, 2 pid 2, 3 COMMIT pid 1, 4 pid 2, 5 ABORT pid 2, 6 pid 1, 7 pid 2, 8 pid 1, 9 ABORT pid 1, 10 COMMIT pid 2.
    const log = [
      data(1),
      data(1),
      data(2),
      commit(1),
      data(2),
      abort(2),
      data(1),
      data(2),
      data(1),
      abort(1),
      commit(2),
    ];
    expect(fetched(withLog(log), 0).offsets).toEqual([0, 1, 7]);
  });

  it('testMultipleAbortMarkers', () => {
    // A duplicate ABORT is ignored; the next transaction of the same producer is committed.
    expect(
      fetched(withLog([data(1), data(1), abort(1), abort(1), data(1), data(1), commit(1)]), 0).offsets,
    ).toEqual([4, 5]);
  });

  it('testReadCommittedAbortMarkerWithNoData (adapted: the log starts at offset 0)', () => {
    expect(fetched(withLog([abort(1), data(1), data(1), data(1), commit(1)]), 0).offsets).toEqual([1, 2, 3]);
  });

  it('testReturnAbortedTransactionsinUncommittedMode', () => {
    expect(fetched(withLog([data(1), data(1), abort(1)]), 1).offsets).toEqual([0, 1]);
  });

  it('testConsumerPositionUpdatedWhenSkippingAbortedTransactions', () => {
    expect(fetched(withLog([data(1), data(1), abort(1)]), 0).position).toBe(3);
  });
});

// Fetch isolation (Partition.fetchOffsetSnapshot / UnifiedLog.read with FetchTxnCommitted, 3.5):
// read_committed reads up to the last stable offset, read_uncommitted up to the high watermark.
describe('Fetch isolation: the LSO bounds read_committed, the high watermark read_uncommitted (apache/kafka 3.5), kafka-3.5', () => {
  it('an open transaction at offset 1 holds read_committed at offset 1, and read_uncommitted reads on', () => {
    const s = withLog([data(2), data(1), data(2), commit(2)], [{ pid: 1, firstOffset: 1 }]);
    expect(fetched(s, 0)).toEqual({ offsets: [0], position: 1 });
    expect(fetched(s, 1)).toEqual({ offsets: [0, 1, 2], position: 4 });
  });

  it('nothing below the LSO: read_committed has no fetch to make', () => {
    const s = withLog([data(1)], [{ pid: 1, firstOffset: 0 }]);
    expect(labels(cfg, s)).not.toContain('C0: fetch(p0)');
    expect(labels(cfg, s)).toContain('C1: fetch(p0)');
  });
});
