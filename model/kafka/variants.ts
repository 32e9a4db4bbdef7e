// Protocol generations as presets of the named switches, and the switches' descriptions.
import type { Rules } from './config.ts';

export type SwitchName = keyof Rules;

export const switchDescriptions: Readonly<Record<SwitchName, string>> = {
  kip360:
    'KIP-360 (2.5): the client bumps its epoch with InitProducerId(pid, epoch) after an abortable error',
  kip588:
    'KIP-588 (2.7): INVALID_PRODUCER_EPOCH on Produce is an abortable error for the client; before 2.7 it meant ProducerFencedException, fatal',
  invalidPidMappingFatal:
    'KAFKA-18019 (4.0.0 client): INVALID_PRODUCER_ID_MAPPING is fatal for the client under every transaction version; 2.5-3.9 aborted and bumped the epoch',
  tv2UpgradeBump:
    'KAFKA-18227 (4.0.0 client): the client reads the finalized transaction.version when it begins completing a transaction (and after initTransactions) and bumps its epoch on an upgrade to version 2; before, it read it at beginTransaction and took an upgrade at the same epoch',
  timeoutFence:
    'KAFKA-6119 (1.0): a transaction-timeout abort bumps the producer epoch, fencing the producer',
  kip447:
    'KIP-447 (2.5): TxnOffsetCommit carries the group generation; a member of an older generation is fenced',
  verification:
    'KIP-890 part 1 (3.6): a leader verifies a Produce that would open a transaction with the coordinator, guarded per attempt',
  verificationGuard:
    "KAFKA-14884 (3.6.0): a verified Produce or TxnOffsetCommit appends only while the verification entry (guard) made for its attempt is still the producer's; off, the unreleased trunk verification of 2023-04 to 07 (KAFKA-14561), which appended whatever landed between the answer and the append",
  verifyChecksPending:
    'trunk 2023-03 to 04, before KAFKA-14904 (never released): verification answers CONCURRENT_TRANSACTIONS while the transaction has a pending transition; off in every generation',
  verifyOffsetCommit:
    'KAFKA-15449 (3.7): the group coordinator verifies the __consumer_offsets partition of a TxnOffsetCommit as a leader verifies a Produce',
  transactionAbortable:
    'KAFKA-16314 (3.8): verification answers TRANSACTION_ABORTABLE (not INVALID_TXN_STATE) for a partition outside the transaction; the client aborts, a TxnOffsetCommit no longer fails fatally',
  tv2: 'KIP-890 part 2, transaction version 2 (4.0): epoch bump at every EndTxn, markers at the bumped epoch, implicit partition add on Produce and TxnOffsetCommit',
  strictMarkerEpoch:
    "KIP-1228 with KAFKA-19999 (4.2.0): a marker must carry an epoch above the producer state's, except an idempotent retry",
  pendingCheckFirst:
    'KAFKA-18464 / KAFKA-18660 (4.0.0): EndTxn v5 and AddPartitionsToTxn answer CONCURRENT_TRANSACTIONS for a pending transition before the producer-id and epoch checks',
  tv2SequenceZero:
    'KAFKA-18202 (4.1.0): a transaction-version-2 batch verified with no batch of its producer at the leader must start at sequence 0',
  earlyEpochCheck:
    "KAFKA-18042 (4.1.0): a leader refuses a batch of an epoch below its producer's before verifying it, so no verification entry is made",
  keepGuardAcrossV2Marker:
    "KAFKA-18654 (4.0.0): a marker at the epoch of a transaction-version-2 verification entry keeps it, so the next transaction's verified Produce or TxnOffsetCommit still holds its guard",
  rememberFailedFence:
    'KAFKA-9666 (2.6): a fence whose PrepareAbort append failed is remembered (hasFailedEpochFence), so a retried InitProducerId or timeout abort does not bump the epoch again',
  tv2FenceKeepsEpoch:
    'KAFKA-19367 (4.0.1, 4.1.0): a transaction-version-2 fence keeps the old epoch in memory while its PrepareAbort at epoch + 1 is appended, and a failed one is not remembered (hasFailedEpochFence)',
  tv2FenceBumpsTwice:
    'Kafka 4.0.0 alone (KAFKA-19367): a transaction-version-2 fence bumps the epoch in memory and again in prepareAbortOrCommit, so its PrepareAbort and markers carry epoch + 2; tv2FenceKeepsEpoch supersedes it',
  persistProducerIds:
    'KAFKA-20310 (4.3.0): __transaction_state records keep PreviousProducerId and NextProducerId, so a failover does not lose them; 4.0.0-4.2.1 read the fields but never write them',
  persistLastEpoch:
    'KAFKA-20357 (2026, after the generations): __transaction_state records keep lastProducerEpoch, so an InitProducerId retried across a failover is still a retry',
  fenceRotatesProducerId:
    'KAFKA-20090 (4.3.0): a transaction-version-2 fence at an exhausted epoch rotates the producer id, and an abort at the maximum epoch stays there instead of failing',
  markerTimestamp:
    "KAFKA-9144 (2.5, as in 0.11.0): a transaction marker refreshes the producer's idle time at the leader; from 1.0 to 2.4.0 an entry left with no batch at its epoch expired at the next check",
  unknownProducerAnySequence:
    'KIP-360 (2.5), leader side: a batch of a producer id the leader has no state for is accepted at any sequence; 0.11.0 wanted sequence 0',
  mutantNoCoordinatorEpochCheck: 'mutant: AddPartitionsToTxn and EndTxn accept any producer epoch',
  mutantReadPastLso: 'mutant: read_committed fetches up to the high watermark',
  mutantNoDedup: 'mutant: the partition leader forgets sequence de-duplication',
  mutantLosePartitionsOnFailover: 'mutant: failover reloads Prepare* transactions without their partitions',
  mutantTimeoutAbortsPrepared: 'mutant: the transaction timeout may abort a PrepareCommit transaction',
  mutantEndTxnIgnoresState: 'mutant: EndTxn prepares from any state (a retried EndTxn prepares again)',
  mutantOffsetsOutsideTransaction:
    'mutant: the transform app commits its input offsets outside the transaction',
  mutantFenceAnswersNone:
    'mutant: InitProducerId that fences an Ongoing transaction answers NONE with no producer id instead of CONCURRENT_TRANSACTIONS',
  mutantEndTxnAnswersPreparedEpoch:
    'mutant (KAFKA-18660 before its fix): EndTxn v5 answers the prepared epoch, not the producer id and epoch its completion rotates to',
  mutantMarkerNeedsHigherEpoch:
    "mutant: a leader refuses a marker at the producer's own epoch, in every transaction version",
  mutantConcurrentTransactionsFatal:
    'mutant: the client fails for good on CONCURRENT_TRANSACTIONS instead of retrying',
  mutantResignedAppendAnswersNone:
    'mutant: a coordinator failover answers the __transaction_state appends in flight with their success, whether or not the record survived',
  mutantNoProduceEpochFence: "mutant: a leader accepts a Produce at an epoch below its producer's",
};

export const switchNames = Object.keys(switchDescriptions) as SwitchName[];

const noMutants = {
  mutantNoCoordinatorEpochCheck: false,
  mutantReadPastLso: false,
  mutantNoDedup: false,
  mutantLosePartitionsOnFailover: false,
  mutantTimeoutAbortsPrepared: false,
  mutantEndTxnIgnoresState: false,
  mutantOffsetsOutsideTransaction: false,
  mutantFenceAnswersNone: false,
  mutantEndTxnAnswersPreparedEpoch: false,
  mutantMarkerNeedsHigherEpoch: false,
  mutantConcurrentTransactionsFatal: false,
  mutantResignedAppendAnswersNone: false,
  mutantNoProduceEpochFence: false,
} as const;

// Each generation is the one before it plus the rules its release added.
const kafka011: Rules = {
  kip360: false,
  kip588: false,
  invalidPidMappingFatal: false,
  tv2UpgradeBump: false,
  timeoutFence: false,
  kip447: false,
  verification: false,
  verificationGuard: false,
  verifyChecksPending: false,
  verifyOffsetCommit: false,
  transactionAbortable: false,
  tv2: false,
  pendingCheckFirst: false,
  strictMarkerEpoch: false,
  tv2SequenceZero: false,
  earlyEpochCheck: false,
  rememberFailedFence: false,
  keepGuardAcrossV2Marker: false,
  tv2FenceKeepsEpoch: false,
  tv2FenceBumpsTwice: false,
  persistProducerIds: false,
  persistLastEpoch: false,
  fenceRotatesProducerId: false,
  markerTimestamp: true,
  unknownProducerAnySequence: false,
  ...noMutants,
};
const kafka35: Rules = {
  ...kafka011,
  kip360: true,
  kip588: true,
  timeoutFence: true,
  kip447: true,
  rememberFailedFence: true,
  unknownProducerAnySequence: true,
};
const kafka36: Rules = { ...kafka35, verification: true, verificationGuard: true };
const kafka38: Rules = { ...kafka36, verifyOffsetCommit: true, transactionAbortable: true };
// 4.0.0 to 4.2.1 read PreviousProducerId/NextProducerId back but never write them
// (TransactionLog.valueToBytes@4.0.0-4.2.1): persistProducerIds waits for 4.3.0.
const kafka40: Rules = {
  ...kafka38,
  tv2: true,
  pendingCheckFirst: true,
  invalidPidMappingFatal: true,
  tv2UpgradeBump: true,
  keepGuardAcrossV2Marker: true,
};
// kafka-4.0 stands for 4.0.0 but its double bump (tv2FenceBumpsTwice, a switch so that the
// generation's counts stay those of one bump); 4.0.1 and 4.0.2 also have tv2FenceKeepsEpoch
// (KAFKA-19367, PR #19958, #19991).
const kafka41: Rules = { ...kafka40, tv2SequenceZero: true, earlyEpochCheck: true, tv2FenceKeepsEpoch: true };
// 4.2.0 adds KIP-1228's marker rule (no generation of its own); 4.3.0 writes the producer ids
// (KAFKA-20310, PR #21828) and rotates them at a fence of an exhausted epoch (KAFKA-20090).
const kafka43: Rules = {
  ...kafka41,
  strictMarkerEpoch: true,
  persistProducerIds: true,
  fenceRotatesProducerId: true,
};
// Trunk as read (d79bd502ec, 2026-08) adds no rule the model has beyond 4.3.0.
const kafkaLatest: Rules = { ...kafka43 };

export const generations: Readonly<Record<string, { readonly description: string; readonly rules: Rules }>> =
  {
    'kafka-0.11': {
      description:
        'KIP-98 as first shipped: no client epoch bump after abortable errors, no epoch bump on timeout abort',
      rules: kafka011,
    },
    'kafka-3.5': {
      description:
        'Kafka 2.7-3.5: TV0/TV1 coordinator, KIP-360 client, KIP-588 abortable producer-epoch errors, timeout abort with epoch fence, no partition verification',
      rules: kafka35,
    },
    'kafka-3.6': {
      description:
        'Kafka 3.6: kafka-3.5 plus KIP-890 part 1, partition verification of Produce with its per-attempt guard',
      rules: kafka36,
    },
    'kafka-3.8': {
      description:
        'Kafka 3.8-3.9: kafka-3.6 plus verification of TxnOffsetCommit (3.7) and TRANSACTION_ABORTABLE for a partition outside the transaction (3.8)',
      rules: kafka38,
    },
    'kafka-4.0': {
      description:
        'Kafka 4.0.0: kafka-3.8 plus KIP-890 part 2 (transaction version 2), the pending-state check first (KAFKA-18464, KAFKA-18660), a client fatal on INVALID_PRODUCER_ID_MAPPING (KAFKA-18019), a client that bumps its epoch when it learns of an upgrade to transaction version 2 (KAFKA-18227) and the guard kept across a version-2 marker (KAFKA-18654); producer ids are not kept in __transaction_state until 4.3',
      rules: kafka40,
    },
    'kafka-4.1': {
      description:
        'Kafka 4.1: kafka-4.0 plus sequence 0 first for a verified transaction-version-2 batch (KAFKA-18202), no verification for a lower epoch (KAFKA-18042) and a version-2 fence that keeps the old epoch in memory (KAFKA-19367)',
      rules: kafka41,
    },
    'kafka-4.3': {
      description:
        'Kafka 4.3: kafka-4.1 plus the marker-epoch rule of KIP-1228 with its KAFKA-19999 retry exception (4.2.0), producer ids kept in __transaction_state (KAFKA-20310) and the producer-id rotation at a fence of an exhausted epoch (KAFKA-20090)',
      rules: kafka43,
    },
    'kafka-latest': {
      description: 'the newest code read (trunk d79bd502ec, 2026-08): kafka-4.3, no later rule modelled',
      rules: kafkaLatest,
    },
  };

export const generationNames = Object.keys(generations);

/** The switches that are mutants: each breaks one rule on purpose. */
export const mutantNames = switchNames.filter((n) => n.startsWith('mutant'));

/** Rules of the client alone: how the Java client of its generation reacts, whatever the brokers. */
const clientSwitches: readonly SwitchName[] = ['kip588', 'invalidPidMappingFatal', 'tv2UpgradeBump'];

/**
 * Rules that need both halves: the client uses a feature only when the brokers have the request
 * version for it (ApiVersions), and the brokers answer an older client in that client's version:
 * KIP-360's epoch bump (InitProducerId v3), KIP-447's group generation (TxnOffsetCommit v3),
 * TRANSACTION_ABORTABLE (Produce v11, TxnOffsetCommit v5; older versions get INVALID_TXN_STATE,
 * AddPartitionsToTxnManager@3.8) and transaction version 2 (EndTxn v5).
 */
const negotiatedSwitches: readonly SwitchName[] = ['kip360', 'kip447', 'transactionAbortable', 'tv2'];

/**
 * The rules of brokers of one generation serving clients of another: the client's own rules, the
 * negotiated ones where both have them, the brokers' everywhere else (mutants included).
 */
export function withClient(brokers: Rules, client: Rules): Rules {
  const rules: Record<string, boolean> = { ...brokers };
  for (const n of clientSwitches) rules[n] = client[n];
  for (const n of negotiatedSwitches) rules[n] = brokers[n] && client[n];
  return rules as unknown as Rules;
}
