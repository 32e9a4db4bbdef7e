// The bounds and protocol rules one model instance is built with.
import type { Connection } from './network.ts';
import { type FaultBudget, type Request, type Response, type State, Supports } from './state.ts';

/**
 * Named protocol switches. A generation (kafka-3.5, ...) is a preset of these; a mutant turns one
 * rule off or on to break a property on purpose.
 */
export interface Rules {
  /** KIP-360 (2.5): the client bumps its epoch with InitProducerId(pid, epoch) after an abortable error. */
  readonly kip360: boolean;
  /** KIP-588 (2.7): INVALID_PRODUCER_EPOCH on Produce is abortable; before, the client read it as ProducerFencedException. */
  readonly kip588: boolean;
  /**
   * KAFKA-18019 (4.0.0 client, PR #17822): INVALID_PRODUCER_ID_MAPPING is fatal on
   * AddPartitionsToTxn, AddOffsetsToTxn, EndTxn and Produce whatever the transaction version; the
   * 2.5-3.9 client recovered with an epoch bump.
   */
  readonly invalidPidMappingFatal: boolean;
  /**
   * KAFKA-18227 (4.0.0 client, PR #18176): the client reads the finalized transaction.version when
   * it begins completing a transaction and once after initTransactions, and on an upgrade to
   * version 2 bumps its epoch with InitProducerId before the next transaction. Before (trunk
   * 2024-10, never released) it read the version at beginTransaction, with no bump.
   */
  readonly tv2UpgradeBump: boolean;
  /** KAFKA-6119 (1.0): a transaction-timeout abort bumps the epoch, fencing the old producer. */
  readonly timeoutFence: boolean;
  /** KIP-447 (2.5): TxnOffsetCommit carries the member's generation; older generations are fenced. */
  readonly kip447: boolean;
  /**
   * KIP-890 part 1 (3.6): a leader verifies with the coordinator that a transactional Produce
   * belongs to an ongoing transaction before it opens one, guarded per attempt.
   */
  readonly verification: boolean;
  /**
   * KAFKA-14884 (3.6.0, PR #13787): a verified request may append only while the verification
   * entry made for it (its guard, with the lowest sequence seen) is still the producer's. Without
   * it, the verification of KAFKA-14561 (trunk 2023-04-12 to 07-14, never released) appended
   * whatever happened between the coordinator's answer and the append.
   */
  readonly verificationGuard: boolean;
  /** KAFKA-15449 (3.7): the group coordinator verifies a TxnOffsetCommit's __consumer_offsets partition too. */
  readonly verifyOffsetCommit: boolean;
  /**
   * Before KAFKA-14904 (trunk 2023-03-07 to 04-20, never released): verification checked the
   * coordinator's pending transition after the epoch and answered CONCURRENT_TRANSACTIONS
   * (getTransactionMetadata at ef09a2e3fc1^); from the fix on it does not.
   */
  readonly verifyChecksPending: boolean;
  /**
   * KAFKA-16314 (3.8, KIP-890 part 1 client side): a partition that fails verification is answered
   * TRANSACTION_ABORTABLE (was INVALID_TXN_STATE) to clients that know it; the client aborts and goes on.
   */
  readonly transactionAbortable: boolean;
  /**
   * KIP-890 part 2, transaction version 2 (4.0): the epoch is bumped at every EndTxn and markers
   * carry the bumped epoch; partitions join a transaction implicitly through the leader.
   */
  readonly tv2: boolean;
  /**
   * KIP-1228 with KAFKA-19999 (4.2.0): a transaction-version-2 marker must carry an epoch above the
   * producer's, except as an idempotent retry (equal epoch, no open transaction).
   */
  readonly strictMarkerEpoch: boolean;
  /**
   * KAFKA-18464 and KAFKA-18660 (4.0.0): EndTxn v5 and AddPartitionsToTxn answer
   * CONCURRENT_TRANSACTIONS for a pending transition before they check the producer id and epoch.
   */
  readonly pendingCheckFirst: boolean;
  /**
   * KAFKA-18202 (4.1.0): a transaction-version-2 batch that the leader verifies
   * with no batch of its producer in the partition must start at sequence 0.
   */
  readonly tv2SequenceZero: boolean;
  /**
   * KAFKA-18042 (4.1.0): a leader refuses a batch of an epoch below its
   * producer's before verifying it (INVALID_PRODUCER_EPOCH), so no verification entry is made.
   */
  readonly earlyEpochCheck: boolean;
  /**
   * KAFKA-19367 (4.0.1 and 4.1.0, PRs #19910 and #19976): a fence under transaction version 2 leaves
   * the epoch in memory as it was while its PrepareAbort (epoch + 1, lastProducerEpoch the old
   * one) is appended, and a failed one is not remembered, so the next fence bumps from the old
   * epoch again. 4.0.0 bumped memory first, then bumped again in prepareAbortOrCommit.
   */
  readonly tv2FenceKeepsEpoch: boolean;
  /**
   * Kafka 4.0.0 alone (KAFKA-19367): a fence under transaction version 2 bumps memory first, then
   * prepareAbortOrCommit bumps again, so the PrepareAbort and its markers carry epoch + 2 and the
   * fencing InitProducerId is granted epoch + 3. tv2FenceKeepsEpoch, the fix, supersedes it.
   */
  readonly tv2FenceBumpsTwice: boolean;
  /**
   * KAFKA-18654 [1/2] (4.0.0, PR #18720): a marker keeps the producer's verification entry when the
   * entry was made by a transaction-version-2 request at the marker's epoch (the next transaction's,
   * since the marker carries the bumped epoch); any other transactional append clears it.
   */
  readonly keepGuardAcrossV2Marker: boolean;
  /**
   * KAFKA-9666 (2.6): a fence whose PrepareAbort append failed is remembered (hasFailedEpochFence),
   * so the next fence reuses the epoch it already bumped in memory instead of bumping again.
   */
  readonly rememberFailedFence: boolean;
  /**
   * KAFKA-20310 (4.3.0, PR #21828): __transaction_state records carry PreviousProducerId and
   * NextProducerId, so a failover keeps them. The fields are in TransactionLogValue v1 from 4.0.0,
   * but TransactionLog.valueToBytes@4.0.0-4.2.1 never sets them: a load reads them back as -1.
   */
  readonly persistProducerIds: boolean;
  /**
   * KAFKA-20357 (2026, after the generations): records carry lastProducerEpoch, so a retried
   * InitProducerId after a failover is still recognised as a retry.
   */
  readonly persistLastEpoch: boolean;
  /**
   * KAFKA-20090 (4.3.0, PRs #21469 and #21506): under transaction version 2 a fence at an exhausted
   * epoch rotates the producer id too, and a fence or abort at the maximum epoch stays there
   * instead of failing; before, the fence's abort leaves the producer at the maximum epoch.
   */
  readonly fenceRotatesProducerId: boolean;
  /**
   * KAFKA-9144 (2.5; 0.11.0 did the same): a transaction marker sets the producer's lastTimestamp
   * at the leader. From 1.0 to 2.4.0 only data batches did, so an entry whose epoch holds no batch
   * had no timestamp and expired at the next check.
   */
  readonly markerTimestamp: boolean;
  /**
   * KIP-360 (2.5), the leader's half: a batch of a producer id the leader has no state for is
   * accepted at any sequence. Before, 0.11.0 wanted sequence 0 (OUT_OF_ORDER_SEQUENCE_NUMBER) and
   * 1.0 to 2.4 answered UNKNOWN_PRODUCER_ID (ProducerStateManager.checkSequence).
   */
  readonly unknownProducerAnySequence: boolean;
  /** Mutant: the coordinator skips the producer-epoch check on AddPartitionsToTxn and EndTxn. */
  readonly mutantNoCoordinatorEpochCheck: boolean;
  /** Mutant: read_committed fetches up to the high watermark instead of the LSO. */
  readonly mutantReadPastLso: boolean;
  /** Mutant: the partition leader forgets sequence de-duplication. */
  readonly mutantNoDedup: boolean;
  /** Mutant: failover reloads Prepare* transactions without their partition set. */
  readonly mutantLosePartitionsOnFailover: boolean;
  /** Mutant: the transaction timeout may also abort a PrepareCommit transaction. */
  readonly mutantTimeoutAbortsPrepared: boolean;
  /** Mutant: EndTxn treats every state as Ongoing (a retried EndTxn prepares again). */
  readonly mutantEndTxnIgnoresState: boolean;
  /** Mutant: the app commits its input offsets outside the transaction (a plain offset commit). */
  readonly mutantOffsetsOutsideTransaction: boolean;
  /** Mutant: InitProducerId that fences an Ongoing transaction answers NONE (and no producer id) instead of CONCURRENT_TRANSACTIONS. */
  readonly mutantFenceAnswersNone: boolean;
  /**
   * Mutant (KAFKA-18660 before its fix in 4.0.0): EndTxn v5 answers the prepared transaction's
   * producer id and epoch, not the ones its completion rotates to.
   */
  readonly mutantEndTxnAnswersPreparedEpoch: boolean;
  /** Mutant: a leader refuses a marker at the producer's own epoch (KIP-1228's rule without its retry exception, for every version). */
  readonly mutantMarkerNeedsHigherEpoch: boolean;
  /** Mutant: the client fails for good on CONCURRENT_TRANSACTIONS instead of retrying. */
  readonly mutantConcurrentTransactionsFatal: boolean;
  /** Mutant: a failover answers the appends in flight as if written, not NOT_COORDINATOR. */
  readonly mutantResignedAppendAnswersNone: boolean;
  /** Mutant: a leader accepts a Produce at an epoch below its producer's (no epoch fence on data). */
  readonly mutantNoProduceEpochFence: boolean;
}

export type App = 'produce' | 'consume-transform-produce';

/**
 * 'atomic': a __transaction_state append and the reply after it are one step. 'async': the append
 * is pending (pendingState set) until its own completion step, and may fail (appendFailures).
 */
export type CoordinatorAppends = 'atomic' | 'async';

/**
 * 'atomic': a coordinator failover rebuilds the new coordinator's memory from __transaction_state
 * in the failover step. 'async': the new coordinator answers COORDINATOR_LOAD_IN_PROGRESS until
 * its own loadTransactions step.
 */
export type CoordinatorLoading = 'atomic' | 'async';

/**
 * When the next instance of a transactional.id may start: any time after the previous one
 * started (which then runs on as a zombie), or only after it crashed.
 */
export type InstanceStart = 'anytime' | 'after-crash';

export interface KafkaConfig {
  readonly variant: string;
  readonly rules: Rules;
  readonly transactionalIds: number;
  readonly instancesPerId: number;
  /** Producers without a transactional.id (enable.idempotence=true), beside the transactional ones. */
  readonly idempotentProducers: number;
  /** Records each idempotent producer sends. */
  readonly recordsPerIdempotentProducer: number;
  /** The rules of the idempotent producers' client (its generation's; no request of theirs is negotiated). */
  readonly idempotentClientRules: Rules;
  readonly instanceStart: InstanceStart;
  readonly partitions: number;
  readonly transactionsPerInstance: number;
  readonly recordsPerTransaction: number;
  readonly app: App;
  /** consume-transform-produce: records in the input partition. */
  readonly inputRecords: number;
  readonly consumers: { readonly readCommitted: number; readonly readUncommitted: number };
  /**
   * "off": consumers are not part of the state. A read_committed consumer only watches; what it
   * could deliver at any moment is what lies below the LSO, so ReadCommittedIsolation is checked
   * on the logs directly (properties.ts readCommittedIsolationOnLogs), with the same verdicts.
   */
  readonly observers?: 'off';
  readonly faults: FaultBudget;
  readonly coordinatorAppends: CoordinatorAppends;
  readonly coordinatorLoading: CoordinatorLoading;
  /** The finalized transaction.version at the start: 2 where the brokers have version 2, unless a spec says 1. */
  readonly transactionVersion: number;
  /**
   * The largest producer epoch (Short.MaxValue in Kafka). A coordinator gives a client at most
   * maxEpoch - 1 and rotates the producer id after that (TransactionMetadata.isEpochExhausted).
   */
  readonly maxEpoch: number;
  /**
   * The rules of each instance's client (index: the instance of its transactional.id): the
   * brokers' rules met with the client's generation (variants.ts withClient).
   */
  readonly clientRules: readonly Rules[];
  /** The brokers' request handlers: the defaults, or a user-defined variant's overrides of them. */
  readonly handlers: RequestHandlers;
  /** The client's reactions: the Java client's, or a user-defined variant's overrides of them. */
  readonly clientHandlers: ClientHandlers;
}

export interface HandlerContext {
  readonly cfg: KafkaConfig;
  /** The handlers of the generation the variant is based on. */
  readonly base: RequestHandlers;
}

export type RequestHandler = (ctx: HandlerContext, s: State, connection: Connection, req: Request) => State;

export const requestApis = [
  'InitProducerId',
  'AddPartitionsToTxn',
  'AddOffsetsToTxn',
  'EndTxn',
  'Produce',
  'WriteTxnMarkers',
  'TxnOffsetCommit',
] as const;
export type RequestApi = (typeof requestApis)[number];
export type RequestHandlers = Readonly<Record<RequestApi, RequestHandler>>;

export interface ClientContext {
  readonly cfg: KafkaConfig;
  /** The Java client's reactions of the generation the variant is based on. */
  readonly base: ClientHandlers;
}

/** The client's reaction to the answer `resp` of a request of producer instance `producer`. */
export type ResponseHandler = (ctx: ClientContext, s: State, producer: number, resp: Response) => State;
/** The client's reaction when its transactional request in flight times out. */
export type RequestTimeoutHandler = (ctx: ClientContext, s: State, producer: number) => State;
/** The client's reaction when delivery.timeout.ms expires for its batches in flight to `partition`. */
export type BatchExpiryHandler = (ctx: ClientContext, s: State, producer: number, partition: number) => State;

/** The client's rule set, by the answer it reacts to (a response API) or the event (a timeout). */
export interface ClientHandlers {
  readonly InitProducerId: ResponseHandler;
  readonly AddPartitionsToTxn: ResponseHandler;
  readonly AddOffsetsToTxn: ResponseHandler;
  readonly EndTxn: ResponseHandler;
  readonly TxnOffsetCommit: ResponseHandler;
  readonly Produce: ResponseHandler;
  readonly requestTimeout: RequestTimeoutHandler;
  readonly batchExpired: BatchExpiryHandler;
}

export const clientReactions = [
  'InitProducerId',
  'AddPartitionsToTxn',
  'AddOffsetsToTxn',
  'EndTxn',
  'TxnOffsetCommit',
  'Produce',
  'requestTimeout',
  'batchExpired',
] as const;

/** Client transaction k of producer instance i. */
export function clientTxnIndex(cfg: KafkaConfig, producer: number, k: number): number {
  return producer * cfg.transactionsPerInstance + k;
}

const perRequest = new WeakMap<Rules, Map<number, Rules>>();

/**
 * The brokers' rules as they apply to one request: a feature the request's version does not
 * support is off for it (transaction version 2, TRANSACTION_ABORTABLE, KIP-447's generation).
 */
export function forRequest(rules: Rules, req: Request): Rules {
  let variants = perRequest.get(rules);
  if (variants === undefined) perRequest.set(rules, (variants = new Map()));
  let r = variants.get(req.supports);
  if (r === undefined) {
    const has = (bit: number): boolean => (req.supports & bit) !== 0;
    r = {
      ...rules,
      tv2: rules.tv2 && has(Supports.TransactionVersion2),
      transactionAbortable: rules.transactionAbortable && has(Supports.TransactionAbortable),
      kip447: rules.kip447 && has(Supports.GroupGeneration),
    };
    variants.set(req.supports, r);
  }
  return r;
}

/** What a client with these rules tells the brokers its requests support. */
export function clientSupports(rules: Rules): number {
  return (
    (rules.tv2 ? Supports.TransactionVersion2 : 0) |
    (rules.transactionAbortable ? Supports.TransactionAbortable : 0) |
    (rules.kip447 ? Supports.GroupGeneration : 0)
  );
}

/** 2 under transaction version 2, else 1 (TransactionVersion). */
export function transactionVersion(rules: Rules): number {
  return rules.tv2 ? 2 : 1;
}

/** The brokers' own transaction version, for what no client request decides (a fence, a timeout abort). */
export function serverTransactionVersion(cfg: KafkaConfig, s: State): number {
  return cfg.rules.tv2 && s.transactionVersion === 2 ? 2 : 1;
}

/** The consumers the state holds: none when observers are off. */
export function modelledConsumers(cfg: KafkaConfig): KafkaConfig['consumers'] {
  return cfg.observers === 'off' ? { readCommitted: 0, readUncommitted: 0 } : cfg.consumers;
}
