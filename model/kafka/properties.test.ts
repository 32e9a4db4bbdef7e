// The eleven safety properties on hand-built states: each case sets the few fields a property
// reads so that it holds, then changes one of them across the boundary its description draws.
import { describe, expect, it } from 'vitest';
import { bfs } from '../../checker/engine/bfs.ts';
import type { Property } from '../../checker/engine/model.ts';
import { modelOf } from '../../specs/build.ts';
import { parseSpec } from '../../specs/load.ts';
import { clientTxnIndex } from './config.ts';
import {
  batch,
  initial,
  kafkaConfig,
  leader,
  TC,
  withCoordinator,
  withPartition,
  withProducer,
  withProducerEntry,
  withTxn,
} from './conformance/harness.ts';
import { handleWriteTxnMarkersResponse } from './coordinator.ts';
import { noteTxn } from './ghost.ts';
import { request, response, send } from './network.ts';
import { kafkaProperties } from './properties.ts';
import {
  type LogBatch,
  type State,
  type TxnLogRecord,
  Api,
  BatchKind,
  Decision,
  Err,
  Excuse,
  Instance,
  NO_EPOCH,
  NO_PID,
  NO_STATE,
  Tm,
  Told,
  TxnState,
  txnStateName,
} from './state.ts';

function holds(name: string, s: State): boolean {
  const property: Property<State> | undefined = kafkaProperties.find((p) => p.name === name);
  if (property === undefined) throw new Error(`no property ${name}`);
  return property.holds(s);
}

// Transactional.id 0 has instances 0 and 1 (producer ids 5 and 6 below); each runs two client transactions.
const cfg = kafkaConfig('kafka-latest', {
  instancesPerId: 2,
  partitions: 2,
  consumers: { readCommitted: 1, readUncommitted: 1 },
});
const T0 = clientTxnIndex(cfg, 0, 0);
const T1 = clientTxnIndex(cfg, 0, 1);
const T2 = clientTxnIndex(cfg, 1, 0);
const T3 = clientTxnIndex(cfg, 1, 1);

const data = (pid: number, txn: number, record: number, value = -1): LogBatch =>
  batch({ pid, epoch: 0, seq: record, ghostTxn: txn, ghostRecord: record, value });
const commit = (pid: number, txn: number): LogBatch =>
  batch({ kind: BatchKind.Commit, pid, epoch: 0, seq: -1, ghostTxn: txn });
const abort = (pid: number, txn: number): LogBatch =>
  batch({ kind: BatchKind.Abort, pid, epoch: 0, seq: -1, ghostTxn: txn });
const offsetCommit = (pid: number, txn: number, offset: number): LogBatch =>
  batch({ kind: BatchKind.OffsetCommit, pid, epoch: 0, seq: -1, ghostTxn: txn, value: offset });
/** A record of idempotent producer j (producer id 100 + j), outside any transaction. */
const idempotent = (j: number, record: number): LogBatch =>
  batch({ pid: 100 + j, epoch: 0, seq: record, transactional: false, ghostTxn: j, ghostRecord: record });

function withLogs(s: State, ...logs: LogBatch[][]): State {
  return logs.reduce((t, log, p) => withPartition(t, p, { log }), s);
}

describe('ReadCommittedIsolation', () => {
  const name = 'ReadCommittedIsolation';
  // T0 wrote a record to partition 1 and committed it; T1 has a record open at offset 2.
  const base = (decision: Decision = Decision.Commit): State => {
    let s = withLogs(initial(cfg), [], [data(5, T0, 0), commit(5, T0), data(5, T1, 0)]);
    s = withProducerEntry(s, 1, { pid: 5, txnFirstOffset: 2 });
    return noteTxn(s, T0, { decision });
  };
  const consumer = (s: State, i: number, position: number[], offsets: number[]): State => ({
    ...s,
    consumers: s.consumers.map((c, j) =>
      j === i
        ? {
            ...c,
            position,
            delivered: offsets.map((offset) => ({
              partition: 1,
              offset,
              ghostTxn: s.partitions[1]!.log[offset]!.ghostTxn,
              ghostRecord: 0,
            })),
          }
        : c,
    ),
  });

  it('a read_committed consumer at the LSO holds, one past it fails', () => {
    expect(holds(name, consumer(base(), 0, [0, 2], [0]))).toBe(true);
    expect(holds(name, consumer(base(), 0, [0, 3], [0]))).toBe(false);
  });

  it('the LSO is the high watermark once no transaction is open', () => {
    const s = withProducerEntry(withLogs(base(), [data(5, T1, 0)], [data(5, T0, 0), commit(5, T0)]), 1, {
      pid: 5,
    });
    expect(holds(name, consumer(s, 0, [0, 2], [0]))).toBe(true);
    expect(holds(name, consumer(s, 0, [0, 3], [0]))).toBe(false);
  });

  it('a read_committed consumer that delivered a record of a transaction the application aborted, or never ended, fails', () => {
    expect(holds(name, consumer(base(Decision.Abort), 0, [0, 2], [0]))).toBe(false);
    expect(holds(name, consumer(base(Decision.None), 0, [0, 2], [0]))).toBe(false);
  });

  it('a read_uncommitted consumer may read anything up to the high watermark', () => {
    expect(holds(name, consumer(base(Decision.Abort), 1, [0, 3], [0, 2]))).toBe(true);
  });

  it('a record of an idempotent producer needs no commit', () => {
    // Idempotent producer 0's record sits where T0's was; T0 (history entry 0) is not committed.
    const s = withLogs(base(Decision.None), [], [idempotent(0, 0)]);
    expect(holds(name, consumer(withProducerEntry(s, 1, { pid: 5 }), 0, [0, 1], [0]))).toBe(true);
  });
});

describe('AtomicCommit', () => {
  const name = 'AtomicCommit';

  it('a transaction with both records committed holds; one committed and one aborted fails', () => {
    expect(
      holds(name, withLogs(initial(cfg), [data(5, T0, 0), commit(5, T0)], [data(5, T0, 1), commit(5, T0)])),
    ).toBe(true);
    expect(
      holds(name, withLogs(initial(cfg), [data(5, T0, 0), commit(5, T0)], [data(5, T0, 1), abort(5, T0)])),
    ).toBe(false);
  });

  it('a record whose marker is not written yet is neither committed nor aborted', () => {
    expect(holds(name, withLogs(initial(cfg), [data(5, T0, 0), commit(5, T0)], [data(5, T0, 1)]))).toBe(true);
    expect(holds(name, withLogs(initial(cfg), [data(5, T0, 0), abort(5, T0)], [data(5, T0, 1)]))).toBe(true);
  });

  it('a marker decides only the records of its own producer id before it', () => {
    // Producer 6's abort comes after T0's record, producer 5's commit after that.
    expect(
      holds(
        name,
        withLogs(
          initial(cfg),
          [data(5, T0, 0), data(6, T2, 0), abort(6, T2), commit(5, T0)],
          [data(5, T0, 1), commit(5, T0)],
        ),
      ),
    ).toBe(true);
    // The same producer's next transaction aborting leaves the earlier commit alone.
    expect(
      holds(
        name,
        withLogs(
          initial(cfg),
          [data(5, T0, 0), commit(5, T0), data(5, T1, 0), abort(5, T1)],
          [data(5, T0, 1), commit(5, T0)],
        ),
      ),
    ).toBe(true);
  });

  it('an offset commit counts as a record of its transaction (consume-transform-produce)', () => {
    expect(
      holds(
        name,
        withLogs(initial(cfg), [data(5, T0, 0), commit(5, T0)], [offsetCommit(5, T0, 1), abort(5, T0)]),
      ),
    ).toBe(false);
    expect(
      holds(
        name,
        withLogs(initial(cfg), [data(5, T0, 0), commit(5, T0)], [offsetCommit(5, T0, 1), commit(5, T0)]),
      ),
    ).toBe(true);
  });

  it('two different transactions may end differently', () => {
    expect(
      holds(name, withLogs(initial(cfg), [data(5, T0, 0), commit(5, T0)], [data(6, T2, 0), abort(6, T2)])),
    ).toBe(true);
  });
});

describe('NoLostWrite', () => {
  const name = 'NoLostWrite';
  // T1 (the second client transaction, so its records' keys are not its record numbers) sent two records.
  const told = (s: State, t: Told = Told.Committed): State => noteTxn(s, T1, { told: t, recordsSent: 2 });

  it('told committed with both records committed holds; one record missing fails', () => {
    expect(
      holds(
        name,
        told(withLogs(initial(cfg), [data(5, T1, 0), commit(5, T1)], [data(5, T1, 1), commit(5, T1)])),
      ),
    ).toBe(true);
    expect(holds(name, told(withLogs(initial(cfg), [data(5, T1, 0), commit(5, T1)], [commit(5, T1)])))).toBe(
      false,
    );
    expect(holds(name, told(withLogs(initial(cfg), [], [data(5, T1, 1), commit(5, T1)])))).toBe(false);
  });

  it('told committed with a record aborted fails; with its marker still to come holds', () => {
    expect(
      holds(
        name,
        told(withLogs(initial(cfg), [data(5, T1, 0), commit(5, T1)], [data(5, T1, 1), abort(5, T1)])),
      ),
    ).toBe(false);
    expect(holds(name, told(withLogs(initial(cfg), [data(5, T1, 0), commit(5, T1)], [data(5, T1, 1)])))).toBe(
      true,
    );
  });

  it('a transaction the client was told aborted or failed may lose its records', () => {
    expect(holds(name, told(withLogs(initial(cfg), [data(5, T1, 0), abort(5, T1)], []), Told.Aborted))).toBe(
      true,
    );
    expect(holds(name, told(withLogs(initial(cfg), [], []), Told.Failed))).toBe(true);
  });

  it('a record of another transaction does not stand in for a missing one', () => {
    // T0's record 1 and T2's record 1 sit where T1's record 1 is missing.
    const s = told(
      withLogs(
        initial(cfg),
        [data(5, T1, 0), commit(5, T1)],
        [data(5, T0, 1), data(6, T2, 1), commit(5, T1), commit(6, T2)],
      ),
    );
    expect(holds(name, s)).toBe(false);
  });

  it("an idempotent producer's record does not stand in for a transactional one", () => {
    // Idempotent producer T1 (the same index) wrote a record 1.
    const s = told(withLogs(initial(cfg), [data(5, T1, 0), commit(5, T1)], [idempotent(T1, 1)]));
    expect(holds(name, s)).toBe(false);
  });

  it('an aborted offset commit is not a lost write (AtomicCommit covers it)', () => {
    expect(
      holds(
        name,
        told(
          withLogs(
            initial(cfg),
            [data(5, T1, 0), data(5, T1, 1), commit(5, T1)],
            [offsetCommit(5, T1, 1), abort(5, T1)],
          ),
        ),
      ),
    ).toBe(true);
  });
});

describe('ZombieFencing', () => {
  const name = 'ZombieFencing';
  const committed = withLogs(initial(cfg), [data(5, T0, 0), commit(5, T0)], []);
  const aborted = withLogs(initial(cfg), [data(5, T0, 0), abort(5, T0)], []);
  const open = withLogs(initial(cfg), [data(5, T0, 0)], []);

  it('a fenced transaction that commits a record fails; the same commit unfenced holds', () => {
    expect(holds(name, noteTxn(committed, T0, { fenced: true }))).toBe(false);
    expect(holds(name, committed)).toBe(true);
  });

  it('a fenced transaction whose records are aborted or still open holds', () => {
    expect(holds(name, noteTxn(aborted, T0, { fenced: true }))).toBe(true);
    expect(holds(name, noteTxn(open, T0, { fenced: true }))).toBe(true);
  });

  it("a fenced transaction's committed offset commit fails too", () => {
    const s = withLogs(initial(cfg), [], [offsetCommit(5, T0, 1), commit(5, T0)]);
    expect(holds(name, noteTxn(s, T0, { fenced: true }))).toBe(false);
  });
});

describe('Idempotence', () => {
  const name = 'Idempotence';
  const log = (...batches: LogBatch[]): State => withLogs(initial(cfg), batches);

  it('the same transactional record written twice to a partition fails; in two partitions, once each, holds', () => {
    expect(holds(name, log(data(5, T1, 0), data(5, T1, 0)))).toBe(false);
    expect(holds(name, withLogs(initial(cfg), [data(5, T1, 0)], [data(5, T1, 0)]))).toBe(true);
    expect(holds(name, log(data(5, T1, 0), data(5, T1, 1)))).toBe(true);
  });

  it('the same record of an idempotent producer written twice fails', () => {
    expect(holds(name, log(idempotent(1, 0), idempotent(1, 0)))).toBe(false);
  });

  it('a record of an idempotent producer after a later record of the same producer fails; in order holds', () => {
    expect(holds(name, log(idempotent(1, 1), idempotent(1, 0)))).toBe(false);
    expect(holds(name, log(idempotent(1, 0), idempotent(1, 1)))).toBe(true);
    expect(holds(name, log(idempotent(1, 0), idempotent(1, 2)))).toBe(true);
  });

  it('the order is per producer: two idempotent producers interleave freely', () => {
    expect(holds(name, log(idempotent(0, 1), idempotent(1, 0)))).toBe(true);
  });

  it('a transactional record and an idempotent record with the same indexes are different records', () => {
    expect(holds(name, log(data(5, 0, 0), idempotent(0, 0)))).toBe(true);
    expect(holds(name, log(data(5, 0, 0), idempotent(1, 0)))).toBe(true);
    // Idempotent producer 1's record 1 does not order transaction 1's record 0 after it.
    expect(holds(name, log(idempotent(1, 1), data(5, 1, 0)))).toBe(true);
  });

  it('a control marker written twice (a re-sent WriteTxnMarkers) is no duplicate record', () => {
    expect(holds(name, log(data(5, T0, 0), commit(5, T0), commit(5, T0)))).toBe(true);
  });

  it('a duplicate in the second partition fails too', () => {
    expect(holds(name, withLogs(initial(cfg), [], [idempotent(0, 0), idempotent(0, 0)]))).toBe(false);
  });
});

describe('ExactlyOnce', () => {
  const name = 'ExactlyOnce';
  // Data partitions 0 and 1, then __consumer_offsets (partition 2); an offset commit's value is the next input to process.
  const transform = kafkaConfig('kafka-latest', {
    app: 'consume-transform-produce',
    inputRecords: 3,
    partitions: 2,
  });
  const state = (...logs: LogBatch[][]): State => withLogs(initial(transform), ...logs);
  const out = (pid: number, txn: number, input: number): LogBatch => data(pid, txn, 0, input);

  it("an output committed with its input's offset holds", () => {
    expect(
      holds(name, state([out(5, T0, 0), commit(5, T0)], [], [offsetCommit(5, T0, 1), commit(5, T0)])),
    ).toBe(true);
  });

  it('two committed outputs of one input fail', () => {
    const s = state(
      [out(5, T0, 0), commit(5, T0)],
      [out(5, T1, 0), commit(5, T1)],
      [offsetCommit(5, T0, 1), commit(5, T0)],
    );
    expect(holds(name, s)).toBe(false);
  });

  it('a second output of an input that aborted, or is still open, holds', () => {
    expect(
      holds(
        name,
        state(
          [out(5, T0, 0), commit(5, T0)],
          [out(5, T1, 0), abort(5, T1)],
          [offsetCommit(5, T0, 1), commit(5, T0)],
        ),
      ),
    ).toBe(true);
    expect(
      holds(
        name,
        state([out(5, T0, 0), commit(5, T0)], [out(5, T1, 0)], [offsetCommit(5, T0, 1), commit(5, T0)]),
      ),
    ).toBe(true);
  });

  it('a committed output whose offset is neither committed nor pending fails; pending holds', () => {
    expect(holds(name, state([out(5, T0, 0), commit(5, T0)], [], []))).toBe(false);
    expect(holds(name, state([out(5, T0, 0), commit(5, T0)], [], [offsetCommit(5, T0, 1)]))).toBe(true);
  });

  it("the committed offset must pass the output's input: at it fails, one past holds", () => {
    const offsets = (offset: number): LogBatch[] => [
      offsetCommit(6, T2, 1),
      commit(6, T2),
      offsetCommit(5, T0, offset),
      commit(5, T0),
    ];
    // T2 committed input 0; T0 committed input 1.
    const s = (offset: number): State =>
      state([out(6, T2, 0), commit(6, T2)], [out(5, T0, 1), commit(5, T0)], offsets(offset));
    expect(holds(name, s(1))).toBe(false);
    expect(holds(name, s(2))).toBe(true);
  });

  it('only an open offset commit of __consumer_offsets is pending', () => {
    // T2 committed input 0 and its offset; T0 committed its output of input 1.
    const outputs = [out(6, T2, 0), commit(6, T2), out(5, T0, 1), commit(5, T0)];
    const offsets = [offsetCommit(6, T2, 1), commit(6, T2)];
    // T1's aborted offset commit past input 1 does not cover T0's output; nor does T3's open output of input 2.
    expect(
      holds(name, state(outputs, [out(6, T3, 2)], [...offsets, offsetCommit(5, T1, 2), abort(5, T1)])),
    ).toBe(false);
    // T0's own offset commit, its marker still to come, does; a lower open one after it does not lower it.
    expect(
      holds(name, state(outputs, [], [...offsets, offsetCommit(5, T0, 2), offsetCommit(6, T3, 1)])),
    ).toBe(true);
  });

  it('the committed offset passing an input whose outputs all aborted fails; an open output holds', () => {
    // T0's output of input 0 aborted, T2 committed the offset past it without an output.
    expect(
      holds(name, state([out(5, T0, 0), abort(5, T0)], [], [offsetCommit(6, T2, 1), commit(6, T2)])),
    ).toBe(false);
    expect(holds(name, state([out(5, T0, 0)], [], [offsetCommit(6, T2, 1), commit(6, T2)]))).toBe(true);
    // The input after the committed offset may still be without output.
    expect(
      holds(
        name,
        state(
          [out(5, T0, 0), commit(5, T0), out(5, T1, 1), abort(5, T1)],
          [],
          [offsetCommit(5, T0, 1), commit(5, T0)],
        ),
      ),
    ).toBe(true);
  });

  it('the produce app has no inputs: two committed records are no two outputs', () => {
    expect(
      holds(name, withLogs(initial(cfg), [data(5, T0, 0), commit(5, T0)], [data(5, T1, 0), commit(5, T1)])),
    ).toBe(true);
  });
});

describe('CoordinatorTransitions', () => {
  const name = 'CoordinatorTransitions';
  const two = kafkaConfig('kafka-latest', { transactionalIds: 2 });
  // Transactional.id 0 is unknown; 1 has this last __transaction_state record.
  const record = (fields: Partial<TxnLogRecord>): State => {
    const r: TxnLogRecord = {
      pid: 5,
      epoch: 1,
      state: TxnState.Ongoing,
      partitions: 1,
      ghostTxn: 0,
      prevPid: NO_PID,
      nextPid: NO_PID,
      lastEpoch: NO_EPOCH,
      transactionVersion: 2,
      ghostPrevState: TxnState.Empty,
      ghostPrevPid: 5,
      ghostPrevEpoch: 1,
      ...fields,
    };
    return withCoordinator(initial(two), { log: [null, r] });
  };

  // TransactionState.validPreviousStates (transaction version 2 lets an empty abort start from Empty and Complete*).
  const valid: [number, TxnState][] = [
    [NO_STATE, TxnState.Empty],
    [TxnState.Empty, TxnState.Empty],
    [TxnState.CompleteCommit, TxnState.Empty],
    [TxnState.CompleteAbort, TxnState.Empty],
    [TxnState.Empty, TxnState.Ongoing],
    [TxnState.Ongoing, TxnState.Ongoing],
    [TxnState.CompleteCommit, TxnState.Ongoing],
    [TxnState.CompleteAbort, TxnState.Ongoing],
    [TxnState.Ongoing, TxnState.PrepareCommit],
    [TxnState.Ongoing, TxnState.PrepareAbort],
    [TxnState.PrepareEpochFence, TxnState.PrepareAbort],
    [TxnState.Empty, TxnState.PrepareAbort],
    [TxnState.CompleteCommit, TxnState.PrepareAbort],
    [TxnState.CompleteAbort, TxnState.PrepareAbort],
    [TxnState.PrepareCommit, TxnState.CompleteCommit],
    [TxnState.PrepareAbort, TxnState.CompleteAbort],
  ];
  const states = Object.values(TxnState);
  const label = (x: number): string => (x === NO_STATE ? 'none' : txnStateName[x]!);

  it.each(valid.map(([from, to]): [string, number, TxnState] => [`${label(from)} → ${label(to)}`, from, to]))(
    '%s holds',
    (_, from, to) => {
      expect(holds(name, record({ ghostPrevState: from, state: to }))).toBe(true);
    },
  );

  it('every other change fails (e.g. Empty → PrepareCommit, PrepareCommit → PrepareAbort), and so does any record in Dead', () => {
    const invalid = [NO_STATE, ...states]
      .flatMap((from) => states.map((to): [number, TxnState] => [from, to]))
      .filter(([from, to]) => !valid.some(([f, t]) => f === from && t === to));
    const holding = invalid.filter(([from, to]) => holds(name, record({ ghostPrevState: from, state: to })));
    expect(holding.map(([from, to]) => `${label(from)} → ${label(to)}`)).toEqual([]);
    expect(invalid).toContainEqual([TxnState.Empty, TxnState.PrepareCommit]);
    expect(invalid).toContainEqual([TxnState.PrepareCommit, TxnState.PrepareAbort]);
    expect(invalid).toContainEqual([TxnState.Ongoing, TxnState.Dead]);
  });

  it('an epoch that decreases for the same producer id fails; equal holds; for a new producer id it holds', () => {
    expect(holds(name, record({ epoch: 2, ghostPrevEpoch: 3 }))).toBe(false);
    expect(holds(name, record({ epoch: 3, ghostPrevEpoch: 3 }))).toBe(true);
    expect(holds(name, record({ pid: 6, epoch: 0, ghostPrevPid: 5, ghostPrevEpoch: 3 }))).toBe(true);
  });
});

describe('NoHangingTransaction', () => {
  const name = 'NoHangingTransaction';
  const two = kafkaConfig('kafka-latest', { transactionalIds: 2, partitions: 2 });
  // Producer id 5 has a transaction open at partition 1 (bit 2); transactional.id 0 is unknown.
  const open = withProducerEntry(withPartition(initial(two), 1, { log: [data(5, 2, 0)] }), 1, {
    pid: 5,
    txnFirstOffset: 0,
  });
  const listed = (fields: Parameters<typeof withTxn>[2]): State =>
    withTxn(open, 1, { pid: 5, epoch: 1, state: TxnState.Ongoing, partitions: 0b10, ...fields });
  const marker = (s: State, fields: Parameters<typeof request>[1], p = 1): State => ({
    ...s,
    network: send(
      s.network,
      TC,
      leader(p),
      0,
      request(Api.WriteTxnMarkers, { txnId: 1, pid: 5, epoch: 1, partitions: 1, commit: true, ...fields }),
    ),
  });

  it('an open transaction whose Ongoing, PrepareCommit or PrepareAbort transaction lists the partition holds', () => {
    for (const state of [TxnState.Ongoing, TxnState.PrepareCommit, TxnState.PrepareAbort])
      expect(holds(name, listed({ state }))).toBe(true);
  });

  it('an open transaction whose coordinator transaction does not list the partition, or completed, or is unknown, fails', () => {
    expect(holds(name, listed({ partitions: 0b01 }))).toBe(false);
    for (const state of [
      TxnState.Empty,
      TxnState.CompleteCommit,
      TxnState.CompleteAbort,
      TxnState.PrepareEpochFence,
    ])
      expect(holds(name, listed({ state }))).toBe(false);
    expect(holds(name, open)).toBe(false);
  });

  it('a transaction of another producer id does not cover it', () => {
    expect(holds(name, listed({ pid: 6 }))).toBe(false);
  });

  it('a WriteTxnMarkers request for the partition on the way covers it', () => {
    expect(holds(name, marker(listed({ state: TxnState.CompleteCommit, partitions: 0 }), {}))).toBe(true);
    expect(holds(name, marker(open, { commit: false }))).toBe(true);
  });

  it('a marker queued behind other messages on the same connection covers it', () => {
    // The coordinator's connection to the leader also carries the marker of another transactional.id and a verification answer.
    const other = marker(open, { txnId: 0, pid: 6 });
    const answered = {
      ...other,
      network: send(
        other.network,
        TC,
        leader(1),
        0,
        response(Api.AddPartitionsToTxn, { txnId: 1, pid: 5, epoch: 1, partitions: 0b10 }),
      ),
    };
    expect(holds(name, marker(answered, {}))).toBe(true);
    expect(holds(name, answered)).toBe(false);
  });

  it('a marker for another partition or producer id, its answer, or another request does not', () => {
    expect(holds(name, marker(open, { partitions: 0 }, 0))).toBe(false);
    expect(holds(name, marker(open, { pid: 6 }))).toBe(false);
    expect(
      holds(name, {
        ...open,
        network: send(
          [],
          leader(1),
          TC,
          0,
          response(Api.WriteTxnMarkers, { txnId: 1, pid: 5, epoch: 1, partitions: 1 }),
        ),
      }),
    ).toBe(false);
    expect(
      holds(name, {
        ...open,
        network: send(
          [],
          TC,
          leader(1),
          0,
          request(Api.AddPartitionsToTxn, { txnId: 1, pid: 5, epoch: 1, partitions: 1 }),
        ),
      }),
    ).toBe(false);
  });

  it('a loading coordinator covers it through the transaction in its __transaction_state record', () => {
    const s = listed({});
    expect(holds(name, withCoordinator(s, { loading: true, metadata: [null, null] }))).toBe(true);
    expect(holds(name, withCoordinator(s, { loading: true, log: [null, null] }))).toBe(false);
  });

  it('a producer entry with no open transaction needs no cover', () => {
    expect(holds(name, withProducerEntry(open, 1, { pid: 5 }))).toBe(true);
  });
});

describe('ProducerIdAgreement', () => {
  const name = 'ProducerIdAgreement';
  // Instance 0 of transactional.id 0 runs READY with producer id 5 at epoch 3.
  const client = (
    fields: Parameters<typeof withProducer>[2],
    md: Parameters<typeof withTxn>[2] | null = {},
  ): State => {
    const s = withProducer(initial(cfg), 0, {
      status: Instance.Running,
      tm: Tm.READY,
      pid: 5,
      epoch: 3,
      ...fields,
    });
    return md === null ? s : withTxn(s, 0, { pid: 5, epoch: 3, state: TxnState.Empty, ...md });
  };

  it("the coordinator's current producer id at an epoch not above the coordinator's holds; one above fails", () => {
    expect(holds(name, client({}))).toBe(true);
    expect(holds(name, client({ epoch: 2 }))).toBe(true);
    expect(holds(name, client({ epoch: 4 }))).toBe(false);
  });

  it('another producer id fails', () => {
    expect(holds(name, client({ pid: 4, epoch: 0 }))).toBe(false);
  });

  it('the next producer id (nextProducerId) at epoch 0 holds; at epoch 1 fails', () => {
    expect(holds(name, client({ pid: 6, epoch: 0 }, { nextPid: 6 }))).toBe(true);
    expect(holds(name, client({ pid: 6, epoch: 1 }, { nextPid: 6 }))).toBe(false);
  });

  it('the previous producer id with an EndTxn in flight holds; without it, or with another request, fails', () => {
    const rotated = { pid: 6, epoch: 0, prevPid: 5, state: TxnState.CompleteCommit };
    expect(
      holds(
        name,
        client(
          { tm: Tm.COMMITTING_TRANSACTION, request: { api: Api.EndTxn, partitions: 0, commit: true } },
          rotated,
        ),
      ),
    ).toBe(true);
    expect(holds(name, client({ tm: Tm.COMMITTING_TRANSACTION }, rotated))).toBe(false);
    expect(
      holds(
        name,
        client(
          { tm: Tm.IN_TRANSACTION, request: { api: Api.AddPartitionsToTxn, partitions: 1, commit: false } },
          rotated,
        ),
      ),
    ).toBe(false);
    expect(
      holds(
        name,
        client(
          { tm: Tm.COMMITTING_TRANSACTION, request: { api: Api.EndTxn, partitions: 0, commit: true } },
          { ...rotated, prevPid: NO_PID },
        ),
      ),
    ).toBe(false);
  });

  it('a replaced producer id with an excuse (another instance, an expiry, a timeout that rotated it) holds; without, fails', () => {
    const replaced = { pid: 6, epoch: 0 };
    expect(holds(name, client({ ghostExcuses: Excuse.OtherInstance }, replaced))).toBe(true);
    expect(holds(name, client({ ghostExcuses: Excuse.TransactionalIdExpired }, replaced))).toBe(true);
    // KAFKA-20090: the abort of a timed-out transaction at an exhausted epoch completes on a new producer id.
    expect(
      holds(name, client({ ghostExcuses: Excuse.TransactionTimedOut }, { ...replaced, prevPid: 5 })),
    ).toBe(true);
    expect(holds(name, client({}, replaced))).toBe(false);
  });

  it('a timeout at an exhausted epoch that rotates the producer id (KAFKA-20090) breaks no property', () => {
    const spec = parseSpec(
      'rotation.json',
      {
        model: 'kafka',
        variant: { base: 'kafka-4.1', enable: ['fenceRotatesProducerId'] },
        transactionsPerInstance: 2,
        maxEpoch: 2,
        consumers: { readCommitted: 0 },
        faults: { transactionTimeouts: 1 },
        // A version-2 commit after any timeout abort is INVALID_TXN_STATE, rotation or not: the
        // finding TimedOutProducerFenced is for, left out here.
        properties: kafkaProperties.map((p) => p.name).filter((n) => n !== 'TimedOutProducerFenced'),
        deadlock: true,
      },
      '',
    );
    const result = bfs(modelOf(spec), { deadlockAllowed: true });
    expect(result.violation?.property).toBeUndefined();
    expect(result.status).toBe('ok');
    // The timeout is taken; without the excuse this search ends at ProducerIdAgreement.
    expect(result.coverage.fired.transactionTimeout).toBeGreaterThan(0);
  });

  it("an excuse does not cover an epoch above the coordinator's for the same producer id", () => {
    expect(
      holds(name, client({ epoch: 4, ghostExcuses: Excuse.OtherInstance | Excuse.TransactionalIdExpired })),
    ).toBe(false);
  });

  it('a transactional.id the coordinator forgot holds only with an expiry excuse', () => {
    expect(holds(name, client({ ghostExcuses: Excuse.TransactionalIdExpired }, null))).toBe(true);
    expect(holds(name, client({ ghostExcuses: Excuse.OtherInstance }, null))).toBe(false);
    expect(holds(name, client({}, null))).toBe(false);
  });

  it('every state that holds a grant is checked; the others, and instances not running, are not', () => {
    const disagreeing = { pid: 4, epoch: 0 };
    for (const tm of [
      Tm.READY,
      Tm.IN_TRANSACTION,
      Tm.COMMITTING_TRANSACTION,
      Tm.ABORTING_TRANSACTION,
      Tm.ABORTABLE_ERROR,
    ])
      expect(holds(name, client({ tm, ...disagreeing }))).toBe(false);
    for (const tm of [Tm.UNINITIALIZED, Tm.INITIALIZING, Tm.FATAL_ERROR])
      expect(holds(name, client({ tm, ...disagreeing }))).toBe(true);
    for (const status of [Instance.NotStarted, Instance.Crashed])
      expect(holds(name, client({ status, ...disagreeing }))).toBe(true);
  });

  it('the second instance is checked too', () => {
    const s = withProducer(client({}), 1, { status: Instance.Running, tm: Tm.READY, pid: 4, epoch: 0 });
    expect(holds(name, s)).toBe(false);
  });
});

describe('NoSpuriousFatal', () => {
  const name = 'NoSpuriousFatal';
  const fatal = (ghostExcuses: number): State =>
    withProducer(initial(cfg), 1, { status: Instance.Running, tm: Tm.FATAL_ERROR, ghostExcuses });

  it('a FATAL producer with an excuse holds, without one fails', () => {
    for (const excuse of [Excuse.OtherInstance, Excuse.TransactionTimedOut, Excuse.TransactionalIdExpired])
      expect(holds(name, fatal(excuse))).toBe(true);
    expect(holds(name, fatal(0))).toBe(false);
  });

  it('a producer in an abortable error needs no excuse', () => {
    expect(
      holds(name, withProducer(initial(cfg), 1, { status: Instance.Running, tm: Tm.ABORTABLE_ERROR })),
    ).toBe(true);
  });
});

describe('TimedOutProducerFenced', () => {
  const name = 'TimedOutProducerFenced';
  const fatal = (ghostExcuses: number, ghostFatalError: Err): State =>
    withProducer(initial(cfg), 1, {
      status: Instance.Running,
      tm: Tm.FATAL_ERROR,
      ghostExcuses,
      ghostFatalError,
    });

  it('a producer FATAL after a timeout alone holds on a fencing error, fails on INVALID_TXN_STATE or no answer', () => {
    expect(holds(name, fatal(Excuse.TransactionTimedOut, Err.PRODUCER_FENCED))).toBe(true);
    expect(holds(name, fatal(Excuse.TransactionTimedOut, Err.INVALID_PRODUCER_EPOCH))).toBe(true);
    expect(holds(name, fatal(Excuse.TransactionTimedOut, Err.INVALID_TXN_STATE))).toBe(false);
    expect(holds(name, fatal(Excuse.TransactionTimedOut, Err.NONE))).toBe(false);
  });

  it('another excuse, or none, is left to NoSpuriousFatal', () => {
    const both = Excuse.TransactionTimedOut | Excuse.OtherInstance;
    expect(holds(name, fatal(both, Err.INVALID_TXN_STATE))).toBe(true);
    expect(holds(name, fatal(0, Err.INVALID_TXN_STATE))).toBe(true);
    expect(
      holds(
        name,
        withProducer(initial(cfg), 1, {
          status: Instance.Running,
          tm: Tm.ABORTABLE_ERROR,
          ghostExcuses: Excuse.TransactionTimedOut,
        }),
      ),
    ).toBe(true);
  });
});

describe('CoordinatorNotStuck', () => {
  const name = 'CoordinatorNotStuck';
  const two = kafkaConfig('kafka-latest', { transactionalIds: 2 });
  const md = (state: TxnState, pendingState: number): State =>
    withTxn(initial(two), 1, { pid: 5, epoch: 1, state, pendingState, partitions: 1 });

  it('a PrepareCommit or PrepareAbort transaction with its completion pending holds; with nothing pending fails', () => {
    expect(holds(name, md(TxnState.PrepareCommit, TxnState.CompleteCommit))).toBe(true);
    expect(holds(name, md(TxnState.PrepareAbort, TxnState.CompleteAbort))).toBe(true);
    expect(holds(name, md(TxnState.PrepareCommit, NO_STATE))).toBe(false);
    expect(holds(name, md(TxnState.PrepareAbort, NO_STATE))).toBe(false);
  });

  it('a transaction in another state with nothing pending holds', () => {
    for (const state of [TxnState.Empty, TxnState.Ongoing, TxnState.CompleteCommit, TxnState.CompleteAbort])
      expect(holds(name, md(state, NO_STATE))).toBe(true);
  });

  it('a coordinator still loading __transaction_state holds', () => {
    expect(holds(name, withCoordinator(md(TxnState.PrepareCommit, NO_STATE), { loading: true }))).toBe(true);
  });

  // Kafka keeps the pending CompleteX of a transaction whose markers it gave up; the model clears
  // it, which this property reads. The difference therefore lies only past a violation.
  it('fails in the very state a fencing answer to a marker makes the coordinator give it up', () => {
    const s = md(TxnState.PrepareCommit, TxnState.CompleteCommit);
    const fenced = handleWriteTxnMarkersResponse(s, s.coordinator.markerConns[0]!, {
      txnId: 1,
      error: Err.INVALID_PRODUCER_EPOCH,
      pid: 5,
      partitions: 0,
      coordinatorEpoch: s.coordinator.epoch,
    });
    expect(holds(name, fenced)).toBe(false);
  });
});

describe('every property', () => {
  it('holds on the initial state', () => {
    expect(kafkaProperties.filter((p) => !p.holds(initial(cfg))).map((p) => p.name)).toEqual([]);
    expect(kafkaProperties).toHaveLength(12);
  });
});
