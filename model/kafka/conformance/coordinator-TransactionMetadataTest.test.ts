// TransactionMetadataTest: Kafka tests the metadata's transitions directly; the model has no
// separate TransactionMetadata, so each case drives the transition through the request (or the
// coordinator action) that makes it, and checks the epochs and state Kafka's test checks.
// Timestamps are not modelled: the time-shift tests keep only their epoch and state assertions.
import { describe, expect, it } from 'vitest';
import { Err, NO_EPOCH, txnStateName } from '../state.ts';
import { Api, P0, P1, TxnState, ask, askAndClear, at, logged } from './coordinator-support.ts';
import { initial, kafkaConfig, take, txn } from './harness.ts';

const producerId = 23423;

describe('TransactionMetadataTest (apache/kafka 3.9 c821449f, kafka-3.8)', () => {
  const cfg = kafkaConfig('kafka-3.8');
  const s0 = initial(cfg);

  it('testInitializeEpoch', () => {
    const { s } = ask(
      cfg,
      at(s0, { pid: producerId, epoch: NO_EPOCH, state: TxnState.Empty }),
      Api.InitProducerId,
      {},
    );
    expect(txn(s, 0)).toMatchObject({ pid: producerId, epoch: 0, lastEpoch: NO_EPOCH });
  });

  it('testNormalEpochBump', () => {
    const { s } = ask(
      cfg,
      at(s0, { pid: producerId, epoch: 735, state: TxnState.Empty }),
      Api.InitProducerId,
      {},
    );
    expect(txn(s, 0)).toMatchObject({ pid: producerId, epoch: 736, lastEpoch: NO_EPOCH });
  });

  it('testTolerateUpdateTimeShiftDuringEpochBump', () => {
    const { s } = ask(cfg, at(s0, { pid: producerId, epoch: 1, state: TxnState.Empty }), Api.InitProducerId, {
      pid: producerId,
      epoch: 1,
    });
    expect(txn(s, 0)).toMatchObject({ pid: producerId, epoch: 2, lastEpoch: 1 });
  });

  it('testTolerateTimeShiftDuringAddPartitions', () => {
    const first = askAndClear(
      cfg,
      at(s0, { pid: producerId, epoch: 1, state: TxnState.Empty }),
      Api.AddPartitionsToTxn,
      { pid: producerId, epoch: 1, partitions: P0 },
    );
    expect(txn(first.s, 0)).toMatchObject({
      state: TxnState.Ongoing,
      partitions: P0,
      pid: producerId,
      epoch: 1,
      lastEpoch: NO_EPOCH,
    });
    const { s } = ask(cfg, first.s, Api.AddPartitionsToTxn, { pid: producerId, epoch: 1, partitions: P1 });
    expect(txn(s, 0)).toMatchObject({
      state: TxnState.Ongoing,
      partitions: P0 | P1,
      pid: producerId,
      epoch: 1,
      lastEpoch: NO_EPOCH,
    });
  });

  it.each([
    ['testTolerateTimeShiftDuringPrepareCommit', true, TxnState.PrepareCommit],
    ['testTolerateTimeShiftDuringPrepareAbort', false, TxnState.PrepareAbort],
  ])('%s', (_, commit, state) => {
    const { s } = ask(cfg, at(s0, { pid: producerId, epoch: 1, state: TxnState.Ongoing }), Api.EndTxn, {
      pid: producerId,
      epoch: 1,
      commit,
    });
    expect(txn(s, 0)).toMatchObject({ state, pid: producerId, epoch: 1, lastEpoch: NO_EPOCH });
  });

  it.each([
    ['testTolerateTimeShiftDuringCompleteCommit', TxnState.PrepareCommit, TxnState.CompleteCommit],
    ['testTolerateTimeShiftDuringCompleteAbort', TxnState.PrepareAbort, TxnState.CompleteAbort],
  ])('%s', (_, prepared, completed) => {
    // Every marker acknowledged: the coordinator writes CompleteX (prepareComplete).
    const s1 = at(s0, { pid: producerId, epoch: 1, state: prepared, pendingState: completed });
    const s = take(cfg, s1, 'TC: completeTransaction(t0)');
    expect(txn(s, 0)).toMatchObject({ state: completed, pid: producerId, epoch: 1, lastEpoch: NO_EPOCH });
    expect(logged(s)).toMatchObject({ state: completed, epoch: 1 });
  });

  it('testAttemptedEpochBumpWithNewlyCreatedMetadata', () => {
    const { s } = ask(
      cfg,
      at(s0, { pid: producerId, epoch: NO_EPOCH, state: TxnState.Empty }),
      Api.InitProducerId,
      { pid: producerId, epoch: 735 },
    );
    expect(txn(s, 0)).toMatchObject({ pid: producerId, epoch: 0, lastEpoch: NO_EPOCH });
  });

  it('testEpochBumpWithCurrentEpochProvided', () => {
    const { s } = ask(
      cfg,
      at(s0, { pid: producerId, epoch: 735, state: TxnState.Empty }),
      Api.InitProducerId,
      { pid: producerId, epoch: 735 },
    );
    expect(txn(s, 0)).toMatchObject({ pid: producerId, epoch: 736, lastEpoch: 735 });
  });

  it('testAttemptedEpochBumpWithLastEpoch', () => {
    const { s, reply } = ask(
      cfg,
      at(s0, { pid: producerId, epoch: 735, lastEpoch: 734, state: TxnState.Empty }),
      Api.InitProducerId,
      { pid: producerId, epoch: 734 },
    );
    expect(reply).toMatchObject({ error: Err.NONE, epoch: 735 });
    expect(txn(s, 0)).toMatchObject({ pid: producerId, epoch: 735, lastEpoch: 734 });
  });

  it('testAttemptedEpochBumpWithFencedEpoch', () => {
    const { reply } = ask(
      cfg,
      at(s0, { pid: producerId, epoch: 735, lastEpoch: 734, state: TxnState.Empty }),
      Api.InitProducerId,
      { pid: producerId, epoch: 733 },
    );
    expect(reply.error).toBe(Err.PRODUCER_FENCED);
  });

  // Kafka's TransactionState ids and names (TransactionMetadata.scala@3.9, the ids of the log format).
  const kafkaStates: [string, number][] = [
    ['Empty', 0],
    ['Ongoing', 1],
    ['PrepareCommit', 2],
    ['PrepareAbort', 3],
    ['CompleteCommit', 4],
    ['CompleteAbort', 5],
    ['Dead', 6],
    ['PrepareEpochFence', 7],
  ];

  it('testTransactionStateIdAndNameMapping', () => {
    for (const [name, id] of kafkaStates) {
      expect(TxnState[name as keyof typeof TxnState]).toBe(id);
      expect(txnStateName[id]).toBe(name);
    }
  });

  it('testAllTransactionStatesAreMapped', () => {
    expect(Object.keys(TxnState).sort()).toEqual(kafkaStates.map(([name]) => name).sort());
  });
});

describe('TransactionMetadataTest (apache/kafka trunk 1eb76443, kafka-4.0)', () => {
  it('testEpochBumpOnEndTxn', () => {
    const cfg = kafkaConfig('kafka-4.0');
    const s1 = at(initial(cfg), { pid: producerId, epoch: 10, state: TxnState.Ongoing });
    const { s: prepared } = ask(cfg, s1, Api.EndTxn, { pid: producerId, epoch: 10, commit: true });
    expect(txn(prepared, 0)).toMatchObject({ state: TxnState.PrepareCommit, pid: producerId, epoch: 11 });
    const completed = take(cfg, prepared, 'TC: completeTransaction(t0)');
    expect(txn(completed, 0)).toMatchObject({ state: TxnState.CompleteCommit, pid: producerId, epoch: 11 });
  });
});

describe('TransactionMetadataTest (apache/kafka transaction-coordinator TransactionMetadataTest.java 6d535d36, kafka-4.0)', () => {
  const cfg = kafkaConfig('kafka-4.0');
  it.each([
    ['testTransitFromEmptyToPrepareAbortInV2', TxnState.Empty],
    ['testTransitFromCompleteAbortToPrepareAbortInV2', TxnState.CompleteAbort],
    ['testTransitFromCompleteCommitToPrepareAbortInV2', TxnState.CompleteCommit],
  ])('%s', (_, state) => {
    // The transition Kafka's prepareAbortOrCommit(PREPARE_ABORT, TV_2, ...) makes is the one an
    // EndTxn v5 abort at the current epoch takes from these states.
    const { s } = ask(cfg, at(initial(cfg), { pid: producerId, epoch: 735, state }), Api.EndTxn, {
      pid: producerId,
      epoch: 735,
      commit: false,
    });
    expect(txn(s, 0)).toMatchObject({ state: TxnState.PrepareAbort, pid: producerId, epoch: 736 });
  });
});
