// One mutant per property at least: a rule broken on purpose, and the small spec in
// specs/kafka/mutants/ (which holds as written) under which the checker catches it.
import type { SwitchName } from './variants.ts';

export interface MutantCase {
  readonly mutant: SwitchName;
  readonly property: string;
  readonly spec: string;
}

const dir = 'specs/kafka/mutants';

export const mutantCases: readonly MutantCase[] = [
  { mutant: 'mutantReadPastLso', property: 'ReadCommittedIsolation', spec: `${dir}/read-past-lso.json` },
  {
    mutant: 'mutantTimeoutAbortsPrepared',
    property: 'AtomicCommit',
    spec: `${dir}/timeout-after-prepare.json`,
  },
  { mutant: 'mutantTimeoutAbortsPrepared', property: 'NoLostWrite', spec: `${dir}/commit-then-timeout.json` },
  { mutant: 'mutantNoCoordinatorEpochCheck', property: 'ZombieFencing', spec: `${dir}/two-instances.json` },
  { mutant: 'mutantNoDedup', property: 'Idempotence', spec: `${dir}/produce-retry.json` },
  { mutant: 'mutantOffsetsOutsideTransaction', property: 'ExactlyOnce', spec: `${dir}/transform.json` },
  {
    mutant: 'mutantEndTxnIgnoresState',
    property: 'CoordinatorTransitions',
    spec: `${dir}/end-txn-retry.json`,
  },
  {
    mutant: 'mutantLosePartitionsOnFailover',
    property: 'NoHangingTransaction',
    spec: `${dir}/failover-with-loss.json`,
  },
  { mutant: 'mutantFenceAnswersNone', property: 'ProducerIdAgreement', spec: `${dir}/two-instances.json` },
  {
    mutant: 'mutantConcurrentTransactionsFatal',
    property: 'NoSpuriousFatal',
    spec: `${dir}/two-instances.json`,
  },
  {
    mutant: 'mutantEndTxnAnswersPreparedEpoch',
    property: 'ProducerIdAgreement',
    spec: `${dir}/epoch-exhaustion.json`,
  },
  {
    mutant: 'mutantMarkerNeedsHigherEpoch',
    property: 'CoordinatorNotStuck',
    spec: `${dir}/two-instances.json`,
  },
  {
    mutant: 'mutantResignedAppendAnswersNone',
    property: 'NoLostWrite',
    spec: `${dir}/failover-during-commit.json`,
  },
  { mutant: 'mutantNoProduceEpochFence', property: 'Idempotence', spec: `${dir}/idempotent-retry.json` },
  {
    mutant: 'mutantGuardBeforeEpoch',
    property: 'TimedOutProducerFenced',
    spec: `${dir}/timed-out-offset-commit.json`,
  },
];
