// One mutant per property at least: a rule broken on purpose, and the smallest spec (model
// parameters only) under which the checker catches it. The mutant test runs each pair, and the
// same spec without the mutant, to show the kill is the mutant's doing.
import type { SwitchName } from '../../model/kafka/variants.ts';

export interface MutantCase {
  readonly mutant: SwitchName;
  readonly property: string;
  readonly params: Readonly<Record<string, unknown>>;
}

export const mutantCases: readonly MutantCase[] = [
  { mutant: 'mutantReadPastLso', property: 'ReadCommittedIsolation', params: { partitions: 1 } },
  {
    mutant: 'mutantTimeoutAbortsPrepared',
    property: 'AtomicCommit',
    params: { partitions: 2, recordsPerTransaction: 2, consumers: { readCommitted: 0 }, faults: { transactionTimeouts: 1, requestLoss: 1 } },
  },
  { mutant: 'mutantTimeoutAbortsPrepared', property: 'NoLostWrite', params: { partitions: 1, faults: { transactionTimeouts: 1, requestLoss: 1 } } },
  { mutant: 'mutantNoCoordinatorEpochCheck', property: 'ZombieFencing', params: { partitions: 2, instancesPerId: 2, consumers: { readCommitted: 0 } } },
  { mutant: 'mutantNoDedup', property: 'Idempotence', params: { partitions: 1, faults: { requestTimeouts: 1 } } },
  {
    mutant: 'mutantOffsetsOutsideTransaction',
    property: 'ExactlyOnce',
    params: { app: 'consume-transform-produce', inputRecords: 1, consumers: { readCommitted: 0 } },
  },
  { mutant: 'mutantEndTxnIgnoresState', property: 'CoordinatorTransitions', params: { partitions: 1, faults: { responseLoss: 1, requestTimeouts: 1 } } },
  {
    mutant: 'mutantLosePartitionsOnFailover',
    property: 'NoHangingTransaction',
    params: { partitions: 2, faults: { coordinatorFailovers: 1, requestLoss: 1 } },
  },
];
