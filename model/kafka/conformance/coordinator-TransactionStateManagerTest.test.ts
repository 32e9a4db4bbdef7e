// TransactionStateManagerTest (core/src/test/scala/unit/kafka/coordinator/transaction/): the
// appends of appendTransactionToLog. Under asynchronous appends a transition stays pending until
// its append completes (installed, answered) or fails (dropped, answered with the coordinator
// error the append error maps to).
import { describe, expect, it } from 'vitest';
import { Err, NO_STATE } from '../state.ts';
import { Api, P0, P1, TxnState, at, logged } from './coordinator-support.ts';
import { TC, answer, handle, initial, kafkaConfig, messages, request, take, txn } from './harness.ts';

const producerId = 10;
const producerEpoch = 1;

describe('TransactionStateManagerTest (apache/kafka 3.9 c821449f, kafka-3.8, asynchronous appends)', () => {
  const cfg = kafkaConfig('kafka-3.8', { coordinatorAppends: 'async', faults: { ...kafkaConfig('kafka-3.8').faults, appendFailures: 1 } });
  const empty = at(initial(cfg), { pid: producerId, epoch: producerEpoch, state: TxnState.Empty });
  const adding = handle(cfg, empty, 0, TC, request(Api.AddPartitionsToTxn, { txnId: 0, pid: producerId, epoch: producerEpoch, partitions: P0 | P1 }));

  it('the transition is pending while its append is in flight (prepareAddPartitions, appendTransactionToLog)', () => {
    expect(txn(adding, 0)).toMatchObject({ state: TxnState.Empty, pendingState: TxnState.Ongoing, partitions: 0 });
    expect(logged(adding)).toMatchObject({ state: TxnState.Empty });
    expect(messages(adding, TC, 0)).toEqual([]);
  });

  it('testCompleteTransitionWhenAppendSucceeded', () => {
    const s = take(cfg, adding, 'TC: completeAppend(t0)');
    expect(answer(s, TC, 0).error).toBe(Err.NONE);
    expect(txn(s, 0)).toMatchObject({ state: TxnState.Ongoing, pendingState: NO_STATE, partitions: P0 | P1 });
    expect(logged(s)).toMatchObject({ state: TxnState.Ongoing, partitions: P0 | P1 });
    expect(s.coordinator.appends).toEqual([]);
  });

  it('testAppendFailToCoordinatorNotAvailableError (part: NOT_ENOUGH_REPLICAS)', () => {
    const s = take(cfg, adding, 'TC: failAppend(t0)');
    expect(answer(s, TC, 0).error).toBe(Err.COORDINATOR_NOT_AVAILABLE);
    expect(txn(s, 0)).toMatchObject({ state: TxnState.Empty, pendingState: NO_STATE, partitions: 0 });
    expect(logged(s)).toMatchObject({ state: TxnState.Empty });
    expect(s.faults.appendFailures).toBe(0);
  });
});
