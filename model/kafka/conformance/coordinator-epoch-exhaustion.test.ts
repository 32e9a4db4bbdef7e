// Epoch exhaustion and producer-id rotation at the coordinator: the cases of TransactionCoordinatorTest
// and TransactionMetadataTest that need an epoch near Short.MaxValue, and the rules read in
// TransactionCoordinator / TransactionMetadata where Kafka's tests assert nothing. Where Kafka's
// TransactionMetadata throws, the request is answered UNKNOWN_SERVER_ERROR (KafkaApis turns the
// exception into that error) and nothing changes.
import { describe, expect, it } from 'vitest';
import { type State, Err, KAFKA_MAX_EPOCH, NO_EPOCH, NO_PID, TxnState } from '../state.ts';
import { Api, P0, ask, askAndClear, at, logged } from './coordinator-support.ts';
import { initial, kafkaConfig, labels, take, txn } from './harness.ts';

const producerId = 10;
const exhausted = KAFKA_MAX_EPOCH - 1;
const timeouts = (generation: string, rules = {}) =>
  kafkaConfig(
    generation,
    { faults: { ...kafkaConfig(generation).faults, transactionTimeouts: 1, coordinatorFailovers: 1 } },
    rules,
  );

describe.each([
  ['apache/kafka 3.5 1361d5cd, kafka-3.5', 'kafka-3.5'],
  ['apache/kafka 3.9 c821449f, kafka-3.8', 'kafka-3.8'],
])('TransactionCoordinatorTest, epoch exhaustion (%s)', (_, generation) => {
  const cfg = timeouts(generation);
  const s0 = initial(cfg);
  const empty = (s: State = s0): State =>
    at(s, { pid: producerId, epoch: exhausted, lastEpoch: exhausted - 1, state: TxnState.Empty });

  it('shouldGenerateNewProducerIdIfEpochsExhausted', () => {
    const { s, reply } = ask(cfg, empty(), Api.InitProducerId, {});
    expect(reply.error).toBe(Err.NONE);
    expect(reply.pid).not.toBe(producerId);
    expect(reply.epoch).toBe(0);
    // prepareProducerIdRotation without an expected epoch: no last epoch; the old id is kept as the previous one.
    expect(txn(s, 0)).toMatchObject({ pid: reply.pid, epoch: 0, lastEpoch: NO_EPOCH, prevPid: producerId });
  });

  it('shouldUseLastEpochToFenceWhenEpochsAreExhausted', () => {
    const ongoing = at(s0, {
      pid: producerId,
      epoch: exhausted,
      lastEpoch: exhausted - 1,
      state: TxnState.Ongoing,
      partitions: P0,
    });
    const { s, reply } = ask(cfg, ongoing, Api.InitProducerId, {});
    expect(reply).toMatchObject({ error: Err.CONCURRENT_TRANSACTIONS, pid: NO_PID, epoch: NO_EPOCH });
    expect(logged(s)).toMatchObject({
      pid: producerId,
      epoch: KAFKA_MAX_EPOCH,
      state: TxnState.PrepareAbort,
      partitions: P0,
    });
    expect(txn(s, 0)).toMatchObject({ epoch: KAFKA_MAX_EPOCH, lastEpoch: NO_EPOCH });
  });

  it('testRetryInitProducerIdAfterProducerIdRotation', () => {
    const first = askAndClear(cfg, empty(), Api.InitProducerId, { pid: producerId, epoch: exhausted });
    expect(first.reply).toMatchObject({ error: Err.NONE, pid: producerId + 1, epoch: 0 });
    // The retry names the id before the rotation at an exhausted epoch (isValidProducerId) and its
    // epoch is the recorded last epoch: the current id and epoch come back.
    const retry = ask(cfg, first.s, Api.InitProducerId, { pid: producerId, epoch: exhausted });
    expect(retry.reply).toMatchObject({ error: Err.NONE, pid: producerId + 1, epoch: 0 });
  });

  it('testInitProducerIdWithInvalidEpochAfterProducerIdRotation', () => {
    const first = askAndClear(cfg, empty(), Api.InitProducerId, { pid: producerId, epoch: exhausted });
    expect(first.reply).toMatchObject({ error: Err.NONE, pid: producerId + 1, epoch: 0 });
    const stale = ask(cfg, first.s, Api.InitProducerId, { pid: producerId, epoch: exhausted - 1 });
    expect(stale.reply).toMatchObject({ error: Err.PRODUCER_FENCED, pid: NO_PID, epoch: NO_EPOCH });
  });

  it('TransactionCoordinator.prepareInitProducerIdTransit (source): an exhausted epoch that a retry does not name cannot be bumped', () => {
    // prepareIncrementProducerEpoch throws when the epoch is exhausted (testBumpEpochNotAllowedIfEpochsExhausted).
    const { s, reply } = ask(cfg, empty(), Api.InitProducerId, { pid: producerId, epoch: exhausted - 1 });
    expect(reply.error).toBe(Err.UNKNOWN_SERVER_ERROR);
    expect(txn(s, 0)).toMatchObject({ pid: producerId, epoch: exhausted, state: TxnState.Empty });
  });

  it('TransactionCoordinator.scala@3.9 (source): a retry across a failover is fenced, the previous id and last epoch are not in the log', () => {
    const first = askAndClear(cfg, empty(), Api.InitProducerId, { pid: producerId, epoch: exhausted });
    const failedOver = take(cfg, first.s, 'TC: coordinatorFailover');
    expect(txn(failedOver, 0)).toMatchObject({ pid: producerId + 1, prevPid: NO_PID, lastEpoch: NO_EPOCH });
    expect(ask(cfg, failedOver, Api.InitProducerId, { pid: producerId, epoch: exhausted }).reply.error).toBe(
      Err.PRODUCER_FENCED,
    );
  });

  it('KAFKA-20357 (switch persistLastEpoch): with the last epoch in the log, the retry after a failover is recognised', () => {
    const kept = timeouts(generation, { persistProducerIds: true, persistLastEpoch: true });
    const first = askAndClear(kept, empty(initial(kept)), Api.InitProducerId, {
      pid: producerId,
      epoch: exhausted,
    });
    const failedOver = take(kept, first.s, 'TC: coordinatorFailover');
    expect(
      ask(kept, failedOver, Api.InitProducerId, { pid: producerId, epoch: exhausted }).reply,
    ).toMatchObject({ error: Err.NONE, pid: producerId + 1, epoch: 0 });
  });
});

describe('TransactionMetadataTest, epoch exhaustion (apache/kafka 3.9 c821449f, kafka-3.8)', () => {
  const cfg = timeouts('kafka-3.8');
  const s0 = initial(cfg);

  it('testFenceProducerAfterEpochsExhausted', () => {
    const ongoing = at(s0, { pid: producerId, epoch: exhausted, state: TxnState.Ongoing });
    const s = take(cfg, ongoing, 'TC: transactionTimeout(t0)');
    expect(txn(s, 0)).toMatchObject({
      pid: producerId,
      epoch: KAFKA_MAX_EPOCH,
      lastEpoch: NO_EPOCH,
      state: TxnState.PrepareAbort,
    });
  });

  it('testFenceProducerNotAllowedIfItWouldOverflow', () => {
    // The fence throws: the timeout abort does nothing, an InitProducerId gets UNKNOWN_SERVER_ERROR.
    const atMax = at(s0, { pid: producerId, epoch: KAFKA_MAX_EPOCH, state: TxnState.Ongoing });
    expect(labels(cfg, atMax)).not.toContain('TC: transactionTimeout(t0)');
    const { s, reply } = ask(cfg, atMax, Api.InitProducerId, {});
    expect(reply.error).toBe(Err.UNKNOWN_SERVER_ERROR);
    expect(txn(s, 0)).toMatchObject({ epoch: KAFKA_MAX_EPOCH, state: TxnState.Ongoing });
  });

  it('testRotateProducerId', () => {
    const { s } = ask(
      cfg,
      at(s0, { pid: producerId, epoch: exhausted, state: TxnState.Empty }),
      Api.InitProducerId,
      { pid: producerId, epoch: exhausted },
    );
    expect(txn(s, 0)).toMatchObject({
      pid: producerId + 1,
      prevPid: producerId,
      epoch: 0,
      lastEpoch: exhausted,
    });
  });
});

describe('TransactionCoordinatorTest, epoch exhaustion under transaction version 2 (TransactionCoordinator.scala bb126f2d with KAFKA-18660, kafka-4.0)', () => {
  const cfg = timeouts('kafka-4.0');
  const s0 = initial(cfg);
  const ongoing = at(s0, {
    pid: producerId,
    epoch: exhausted,
    lastEpoch: exhausted - 1,
    state: TxnState.Ongoing,
  });

  it('testEpochBumpOnEndTxnOverflow (TransactionMetadataTest): Prepare* takes a next producer id and the maximum epoch', () => {
    const { s, reply } = ask(cfg, ongoing, Api.EndTxn, { pid: producerId, epoch: exhausted, commit: true });
    expect(txn(s, 0)).toMatchObject({
      pid: producerId,
      epoch: KAFKA_MAX_EPOCH,
      lastEpoch: exhausted,
      nextPid: producerId + 1,
      state: TxnState.PrepareCommit,
    });
    // KAFKA-18660: the answer carries what the completion installs, the new id at epoch 0.
    expect(reply).toMatchObject({ error: Err.NONE, pid: producerId + 1, epoch: 0 });
    const completed = take(cfg, s, 'TC: completeTransaction(t0)');
    expect(txn(completed, 0)).toMatchObject({
      pid: producerId + 1,
      prevPid: producerId,
      nextPid: NO_PID,
      epoch: 0,
      lastEpoch: exhausted,
      state: TxnState.CompleteCommit,
    });
  });

  it('shouldReturnOkOnEndTxnV2IfEndTxnV2RetryEpochOverflow', () => {
    const prepared = askAndClear(cfg, ongoing, Api.EndTxn, {
      pid: producerId,
      epoch: exhausted,
      commit: true,
    }).s;
    const completed = take(cfg, prepared, 'TC: completeTransaction(t0)');
    const retry = ask(cfg, completed, Api.EndTxn, { pid: producerId, epoch: exhausted, commit: true });
    expect(retry.reply).toMatchObject({ error: Err.NONE, pid: producerId + 1, epoch: 0 });
  });

  it('KAFKA-18660 mutant: answering the prepared id and epoch names an id the completion leaves', () => {
    const mutant = timeouts('kafka-4.0', { mutantEndTxnAnswersPreparedEpoch: true });
    const { reply } = ask(
      mutant,
      at(initial(mutant), { pid: producerId, epoch: exhausted, state: TxnState.Ongoing }),
      Api.EndTxn,
      { pid: producerId, epoch: exhausted, commit: true },
    );
    expect(reply).toMatchObject({ error: Err.NONE, pid: producerId, epoch: KAFKA_MAX_EPOCH });
  });

  it('TransactionCoordinator.endTransaction@4.0.0 (source, KAFKA-18660): the new id while the old one is still completing waits (CONCURRENT_TRANSACTIONS)', () => {
    const newIdWhileCompleting = (c: typeof cfg) => {
      const prepared = askAndClear(
        c,
        at(initial(c), { pid: producerId, epoch: exhausted, state: TxnState.Ongoing }),
        Api.EndTxn,
        { pid: producerId, epoch: exhausted, commit: true },
      ).s;
      return ask(c, prepared, Api.EndTxn, { pid: producerId + 1, epoch: 0, commit: false }).reply.error;
    };
    expect(newIdWhileCompleting(cfg)).toBe(Err.CONCURRENT_TRANSACTIONS);
    // Without pendingCheckFirst (the 3.x order) the producer id is checked first.
    expect(newIdWhileCompleting(timeouts('kafka-4.0', { pendingCheckFirst: false }))).toBe(
      Err.INVALID_PRODUCER_ID_MAPPING,
    );
  });

  it('TransactionLog.valueToBytes@4.0.0-4.2.1 (source): a failover loses the next producer id, so the completion keeps the old one', () => {
    const prepared = askAndClear(cfg, ongoing, Api.EndTxn, {
      pid: producerId,
      epoch: exhausted,
      commit: true,
    }).s;
    const failedOver = take(cfg, prepared, 'TC: coordinatorFailover');
    expect(txn(failedOver, 0)).toMatchObject({ nextPid: NO_PID });
    expect(txn(take(cfg, failedOver, 'TC: completeTransaction(t0)'), 0)).toMatchObject({
      pid: producerId,
      epoch: KAFKA_MAX_EPOCH,
    });
  });

  it('KAFKA-20310 (switch persistProducerIds, 4.3.0): a failover keeps the next producer id, so the completion still rotates', () => {
    const kept = timeouts('kafka-4.0', { persistProducerIds: true });
    const keptPrepared = askAndClear(
      kept,
      at(initial(kept), { pid: producerId, epoch: exhausted, state: TxnState.Ongoing }),
      Api.EndTxn,
      { pid: producerId, epoch: exhausted, commit: true },
    ).s;
    const failedOver = take(kept, keptPrepared, 'TC: coordinatorFailover');
    expect(txn(failedOver, 0)).toMatchObject({ nextPid: producerId + 1 });
    expect(txn(take(kept, failedOver, 'TC: completeTransaction(t0)'), 0)).toMatchObject({
      pid: producerId + 1,
      prevPid: producerId,
      epoch: 0,
    });
  });

  it('KAFKA-20090 (switch fenceRotatesProducerId): a timeout fence at an exhausted epoch rotates too', () => {
    const before = take(cfg, ongoing, 'TC: transactionTimeout(t0)');
    expect(txn(before, 0)).toMatchObject({ epoch: KAFKA_MAX_EPOCH, nextPid: NO_PID });
    const fixed = timeouts('kafka-4.0', { fenceRotatesProducerId: true });
    const after = take(
      fixed,
      at(initial(fixed), { pid: producerId, epoch: exhausted, state: TxnState.Ongoing }),
      'TC: transactionTimeout(t0)',
    );
    expect(txn(after, 0)).toMatchObject({ epoch: KAFKA_MAX_EPOCH, nextPid: producerId + 1 });
    expect(txn(take(fixed, after, 'TC: completeTransaction(t0)'), 0)).toMatchObject({
      pid: producerId + 1,
      epoch: 0,
    });
  });

  it('TransactionMetadata.prepareAbortOrCommit (source): a commit past the maximum epoch throws; KAFKA-20090 lets an abort stay at it', () => {
    const atMax = at(s0, { pid: producerId, epoch: KAFKA_MAX_EPOCH, state: TxnState.Ongoing });
    expect(
      ask(cfg, atMax, Api.EndTxn, { pid: producerId, epoch: KAFKA_MAX_EPOCH, commit: false }).reply.error,
    ).toBe(Err.UNKNOWN_SERVER_ERROR);
    const fixed = timeouts('kafka-4.0', { fenceRotatesProducerId: true });
    const fixedAtMax = at(initial(fixed), {
      pid: producerId,
      epoch: KAFKA_MAX_EPOCH,
      state: TxnState.Ongoing,
    });
    expect(
      ask(fixed, fixedAtMax, Api.EndTxn, { pid: producerId, epoch: KAFKA_MAX_EPOCH, commit: true }).reply
        .error,
    ).toBe(Err.UNKNOWN_SERVER_ERROR);
    const abort = ask(fixed, fixedAtMax, Api.EndTxn, {
      pid: producerId,
      epoch: KAFKA_MAX_EPOCH,
      commit: false,
    });
    expect(txn(abort.s, 0)).toMatchObject({
      epoch: KAFKA_MAX_EPOCH,
      nextPid: producerId + 1,
      state: TxnState.PrepareAbort,
    });
  });
});
