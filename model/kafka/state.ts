// The global state of the Kafka transaction model: types and enums only.
//
// Enums are small integers (fast to hash and compare); the name tables at the bottom give them
// back their Kafka names at the edges (labels, traces, reports). Error codes and API keys are
// Kafka's own numbers (org.apache.kafka.common.protocol.Errors / ApiKeys).

/** The coordinator's TransactionState (TransactionState.java; ids as in the txn log). */
export const TxnState = {
  Empty: 0,
  Ongoing: 1,
  PrepareCommit: 2,
  PrepareAbort: 3,
  CompleteCommit: 4,
  CompleteAbort: 5,
  Dead: 6,
  PrepareEpochFence: 7,
} as const;
export type TxnState = (typeof TxnState)[keyof typeof TxnState];
export const NO_STATE = -1;

/** The client's TransactionManager.State. */
export const Tm = {
  UNINITIALIZED: 0,
  INITIALIZING: 1,
  READY: 2,
  IN_TRANSACTION: 3,
  COMMITTING_TRANSACTION: 4,
  ABORTING_TRANSACTION: 5,
  ABORTABLE_ERROR: 6,
  FATAL_ERROR: 7,
} as const;
export type Tm = (typeof Tm)[keyof typeof Tm];

/** org.apache.kafka.common.protocol.Errors codes used by the model. */
export const Err = {
  /** An exception in a broker's handler (Errors.forException of an IllegalStateException). */
  UNKNOWN_SERVER_ERROR: -1,
  NONE: 0,
  COORDINATOR_LOAD_IN_PROGRESS: 14,
  COORDINATOR_NOT_AVAILABLE: 15,
  NOT_COORDINATOR: 16,
  NOT_ENOUGH_REPLICAS: 19,
  ILLEGAL_GENERATION: 22,
  OUT_OF_ORDER_SEQUENCE_NUMBER: 45,
  DUPLICATE_SEQUENCE_NUMBER: 46,
  INVALID_PRODUCER_EPOCH: 47,
  INVALID_TXN_STATE: 48,
  INVALID_PRODUCER_ID_MAPPING: 49,
  CONCURRENT_TRANSACTIONS: 51,
  TRANSACTION_COORDINATOR_FENCED: 52,
  UNSTABLE_OFFSET_COMMIT: 88,
  PRODUCER_FENCED: 90,
  TRANSACTION_ABORTABLE: 120,
} as const;
export type Err = (typeof Err)[keyof typeof Err];

/** Kafka ApiKeys of the RPCs the model sends. */
export const Api = {
  Produce: 0,
  OffsetFetch: 9,
  InitProducerId: 22,
  AddPartitionsToTxn: 24,
  AddOffsetsToTxn: 25,
  EndTxn: 26,
  WriteTxnMarkers: 27,
  TxnOffsetCommit: 28,
} as const;
export type Api = (typeof Api)[keyof typeof Api];

export const NO_PID = -1;
/** Short.MaxValue: the largest producer epoch. */
export const KAFKA_MAX_EPOCH = 32767;
export const NO_EPOCH = -1;
export const NO_OFFSET = -1;

// ---- Network -------------------------------------------------------------------------------
// Nodes: producer instance i is node i; the others sit at fixed bases. With the
// consume-transform-produce app, the partition after the data partitions is the group's
// __consumer_offsets partition, and its leader is the group coordinator.
export const TC_NODE = 1000;
export const LEADER_BASE = 2000;
/** Idempotent (non-transactional) producer j is node IDEMPOTENT_BASE + j. */
export const IDEMPOTENT_BASE = 3000;

/**
 * What a request's version lets its receiver use: transaction version 2 (EndTxn v5, Produce v12,
 * TxnOffsetCommit v5; WriteTxnMarkers v2 names the transaction's version), TRANSACTION_ABORTABLE
 * (Produce v11, TxnOffsetCommit v5) and KIP-447's group generation (TxnOffsetCommit v3). Kafka reads
 * these from the request's version; a request the model builds for its own checks supports all.
 */
export const Supports = { TransactionVersion2: 1, TransactionAbortable: 2, GroupGeneration: 4 } as const;
export const SUPPORTS_ALL = 7;

export interface Request {
  readonly api: Api;
  readonly response: false;
  readonly txnId: number; // transactional.id index, or -1
  readonly pid: number;
  readonly epoch: number;
  /** AddPartitionsToTxn: partitions (bitmask). WriteTxnMarkers: the one partition. Produce: partition. */
  readonly partitions: number;
  /** EndTxn / WriteTxnMarkers: commit (true) or abort. */
  readonly commit: boolean;
  readonly seq: number; // Produce: base sequence
  readonly coordinatorEpoch: number; // WriteTxnMarkers
  /** Produce: the input record an output derives from. TxnOffsetCommit: the offset committed. */
  readonly value: number;
  /** TxnOffsetCommit: the member's group generation (KIP-447). */
  readonly generation: number;
  /** AddPartitionsToTxn sent by a partition leader (KIP-890): only verify, do not add. */
  readonly verifyOnly: boolean;
  /** AddPartitionsToTxn sent by a partition leader: the verification attempt it serves. */
  readonly guard: number;
  /** Supports bits: what the sender's request version allows (a leader passes its client's on). */
  readonly supports: number;
  /** Ghost: the producer instance that sent it (never read by protocol logic). */
  readonly ghostProducer: number;
  /**
   * Ghost: the client transaction this request belongs to; for InitProducerId, the sender's first
   * client transaction not yet begun; for a Produce without transactional.id, the idempotent producer.
   */
  readonly ghostTxn: number;
  /** Ghost: Produce: the record index within its client transaction (or among its idempotent producer's records). */
  readonly ghostRecord: number;
}

export interface Response {
  readonly api: Api;
  readonly response: true;
  readonly txnId: number;
  readonly error: Err;
  readonly pid: number;
  readonly epoch: number;
  readonly partitions: number;
  readonly seq: number; // Produce: the sequence acknowledged
  readonly coordinatorEpoch: number; // WriteTxnMarkers: the epoch the marker was sent with
  readonly guard: number; // AddPartitionsToTxn from a partition leader: the attempt it answers
}

export type Message = Request | Response;

/** One connection direction: FIFO inside; nothing orders two channels. */
export interface Channel {
  readonly from: number;
  readonly to: number;
  /** The connection's generation: a client opens a new one after a request timeout. */
  readonly conn: number;
  readonly messages: readonly Message[];
}

// ---- Producer client (TransactionManager) --------------------------------------------------
export const BatchStatus = { Queued: 0, InFlight: 1, Acked: 2, Failed: 3 } as const;
export type BatchStatus = (typeof BatchStatus)[keyof typeof BatchStatus];

export interface ClientBatch {
  readonly partition: number;
  readonly seq: number;
  readonly status: BatchStatus;
  /** Sent again after a retriable failure (ProducerBatch.inRetry): its fate at the leader is unknown. */
  readonly retried: boolean;
  /** The input record an output derives from (consume-transform-produce), else -1. */
  readonly value: number;
  readonly ghostRecord: number;
}

export const Instance = { NotStarted: 0, Running: 1, Crashed: 2 } as const;
export type Instance = (typeof Instance)[keyof typeof Instance];

/** The transactional request the client has in flight (at most one, as in the Java client). */
export interface TxnRequestSlot {
  readonly api: Api;
  readonly partitions: number;
  readonly commit: boolean;
}

/**
 * Ghost: why a producer instance may be fenced or fail without a fault of its own (bits): another
 * instance of its transactional.id bumped the epoch with InitProducerId (a grant, or the fence of
 * an Ongoing transaction), the coordinator timed out a transaction of the id, or expired the id.
 */
export const Excuse = { OtherInstance: 1, TransactionTimedOut: 2, TransactionalIdExpired: 4 } as const;
export type Excuse = (typeof Excuse)[keyof typeof Excuse];

export interface Producer {
  readonly txnId: number;
  readonly instance: number; // 0, 1, ... for the same transactional.id
  readonly status: Instance;
  readonly tm: Tm;
  readonly pid: number;
  readonly epoch: number;
  /** KIP-360 epochBumpRequired. */
  readonly bumpRequired: boolean;
  /** An AddPartitionsToTxn succeeded in this transaction (TransactionManager.transactionStarted). */
  readonly txnStarted: boolean;
  /** partitionsInTransaction (bitmask). */
  readonly added: number;
  /** newPartitionsInTransaction: to be sent in the next AddPartitionsToTxn (bitmask). */
  readonly pendingAdd: number;
  readonly request: TxnRequestSlot | null;
  /** Next sequence per partition. */
  readonly nextSeq: readonly number[];
  readonly batches: readonly ClientBatch[];
  /** Generation of this client's connection to each node (index: 0 = TC, 1 + p = leader p). */
  readonly conns: readonly number[];
  /** Client transactions begun so far by this instance. */
  readonly txnsBegun: number;
  readonly recordsSent: number;
  // consume-transform-produce only:
  /** The member's group generation (KIP-447), from its join. */
  readonly generation: number;
  /** The next input offset to process, or -1 until fetched from the group (OffsetFetch). */
  readonly inputPosition: number;
  /** sendOffsetsToTransaction: the offset to commit in this transaction, or -1. */
  readonly offsetToCommit: number;
  /** AddOffsetsToTxn succeeded in this transaction. */
  readonly offsetsAdded: boolean;
  /** TxnOffsetCommit succeeded in this transaction. */
  readonly offsetsCommitted: boolean;
  /** Ghost: the Excuse bits recorded for this instance. */
  readonly ghostExcuses: number;
  /** Ghost: the answer whose handling made this instance FATAL; NONE while it is not, or when no answer did. */
  readonly ghostFatalError: Err;
  /** The current (or next) transaction runs under transaction version 2. */
  readonly transactionV2: boolean;
  /**
   * The version the client read when it began completing the current transaction, which the next
   * one takes (KAFKA-18227); equal to transactionV2 at any other time.
   */
  readonly nextTransactionV2: boolean;
}

// ---- Idempotent producer (no transactional.id) ---------------------------------------------------
/**
 * A batch of one record of an idempotent producer. Queued: in the accumulator, no sequence yet.
 * InFlight: sent as (pid, epoch, seq), at most one per partition (max.in.flight.requests.per.connection=1,
 * which 0.11 required with idempotence and later releases allow).
 */
export interface IdempotentBatch {
  readonly partition: number;
  readonly status: BatchStatus;
  readonly pid: number;
  readonly epoch: number;
  readonly seq: number;
  /** Sent again after a retriable failure (ProducerBatch.inRetry). */
  readonly retried: boolean;
  /** The record's index among those the application sent (ghost; never read by protocol logic). */
  readonly record: number;
}

/** TxnPartitionEntry: the producer id and epoch a partition's sequences belong to, the next one and the last acknowledged. */
export interface PartitionSequences {
  readonly pid: number;
  readonly epoch: number;
  readonly nextSeq: number;
  readonly lastAcked: number;
}

export interface IdempotentProducer {
  /** NO_PID until InitProducerId (without transactional.id) answers, and after the client reset its producer id. */
  readonly pid: number;
  readonly epoch: number;
  /** The producer failed for good (transitionToFatalError). */
  readonly fatal: boolean;
  /** One per data partition. */
  readonly sequences: readonly PartitionSequences[];
  readonly batches: readonly IdempotentBatch[];
  /** Generation of the connection to each partition's leader. */
  readonly conns: readonly number[];
  readonly recordsSent: number;
}

// ---- Transaction coordinator ----------------------------------------------------------------
/** TransactionMetadata (in memory). */
export interface TxnMetadata {
  readonly pid: number;
  readonly epoch: number;
  readonly lastEpoch: number;
  readonly state: TxnState;
  /** NO_STATE when no transition is pending. */
  readonly pendingState: number;
  /** topicPartitions (bitmask); shrinks as markers are acknowledged. */
  readonly partitions: number;
  /** Ghost: the client transaction the coordinator's current transaction belongs to. */
  readonly ghostTxn: number;
  /** A fence whose PrepareAbort append failed: the next fence keeps the epoch (KAFKA-9666). */
  readonly hasFailedEpochFence: boolean;
  /**
   * lastProducerId / prevProducerId: the producer id before a rotation, while the rotation is the
   * last transition; NO_PID otherwise (Kafka keeps the current id there, which no check tells apart).
   */
  readonly prevPid: number;
  /** nextProducerId (transaction version 2): the id a Prepare* at an exhausted epoch rotates to on completion. */
  readonly nextPid: number;
  /** clientTransactionVersion: 2 when the transaction runs under transaction version 2, else 1. */
  readonly transactionVersion: number;
}

/**
 * A __transaction_state append in flight (TransactionStateManager.appendTransactionToLog): the
 * metadata's pendingState is `transit.state` until the append completes or fails.
 */
export interface TxnAppend {
  readonly txnId: number;
  /** TxnTransitMetadata: the metadata once the record is written (pendingState cleared). */
  readonly transit: TxnMetadata;
  /** The PrepareAbort of a fence (InitProducerId on an Ongoing transaction, a timeout abort with KAFKA-6119). */
  readonly epochFence: boolean;
  /** The request the append serves, its answer once written, and the connection it came on; null for a timeout abort. */
  readonly request: Request | null;
  readonly response: Response | null;
  readonly from: number;
  readonly conn: number;
}

/** The value of the last __transaction_state record of a transactional.id (the log is compacted). */
export interface TxnLogRecord {
  readonly pid: number;
  readonly epoch: number;
  readonly state: TxnState;
  readonly partitions: number;
  readonly ghostTxn: number;
  /** PreviousProducerId and NextProducerId (tagged fields, 4.0): NO_PID where the generation does not write them. */
  readonly prevPid: number;
  readonly nextPid: number;
  /** lastProducerEpoch: written from KAFKA-20357 only, else NO_EPOCH. */
  readonly lastEpoch: number;
  /** ClientTransactionVersion (a tagged field from 4.0; the model keeps it in every generation). */
  readonly transactionVersion: number;
  /** Ghost: the state and producer id/epoch of the record this one replaced. */
  readonly ghostPrevState: number;
  readonly ghostPrevPid: number;
  readonly ghostPrevEpoch: number;
}

export interface Coordinator {
  /** Coordinator epoch: the leader epoch of the __transaction_state partition. */
  readonly epoch: number;
  /**
   * A new coordinator is reading __transaction_state (loadingPartitions): its memory is empty and
   * every request is answered COORDINATOR_LOAD_IN_PROGRESS. Only with asynchronous loading.
   */
  readonly loading: boolean;
  readonly nextPid: number;
  /** In-memory TransactionMetadata per transactional.id (null: not known). */
  readonly metadata: readonly (TxnMetadata | null)[];
  /** __transaction_state, compacted: the last record per transactional.id. */
  readonly log: readonly (TxnLogRecord | null)[];
  /** Appends in flight, sorted by transactional.id, at most one each (always empty with atomic appends). */
  readonly appends: readonly TxnAppend[];
  /**
   * The marker channel's connection to each partition's leader (the group coordinator's last): a
   * new one after a failover or a marker request timeout. Without marker timeouts it equals `epoch`.
   */
  readonly markerConns: readonly number[];
}

// ---- Partition leader -----------------------------------------------------------------------
/** Data and OffsetCommit batches are transactional records; Commit and Abort are control markers. */
export const BatchKind = { Data: 0, Commit: 1, Abort: 2, OffsetCommit: 3 } as const;
export type BatchKind = (typeof BatchKind)[keyof typeof BatchKind];

export interface LogBatch {
  readonly kind: BatchKind;
  readonly pid: number;
  readonly epoch: number;
  readonly seq: number;
  readonly transactional: boolean;
  /** Data: the input record it derives from (consume-transform-produce), else -1. OffsetCommit: the offset. */
  readonly value: number;
  /** Ghost: the client transaction of a transactional batch; the idempotent producer of a non-transactional one. */
  readonly ghostTxn: number;
  /** Ghost: the record's index within its client transaction, or among its idempotent producer's records. */
  readonly ghostRecord: number;
}

/** How the transaction of a transactional batch ended at its partition. */
export const Outcome = { Open: 0, Committed: 1, Aborted: 2 } as const;
export type Outcome = (typeof Outcome)[keyof typeof Outcome];

/** ProducerStateEntry. */
export interface ProducerEntry {
  readonly pid: number;
  readonly epoch: number;
  /** Sequences of the last (up to five) batches, oldest first (batchMetadata). */
  readonly lastSeqs: readonly number[];
  readonly coordinatorEpoch: number;
  /** currentTxnFirstOffset, or NO_OFFSET. */
  readonly txnFirstOffset: number;
}

/** VerificationStateEntry (KIP-890 part 1): the guard of the current verification attempt. */
export interface Verification {
  readonly pid: number;
  readonly epoch: number;
  readonly guard: number;
  /** lowestSequence: the lowest sequence seen at `epoch` while verifying. */
  readonly lowestSeq: number;
  /** supportsEpochBump: made by a transaction-version-2 request (Produce v12, TxnOffsetCommit v5; 4.0). */
  readonly supportsEpochBump: boolean;
}

/** A Produce held by the leader until the coordinator answers its verification. */
export interface HeldProduce {
  readonly guard: number;
  readonly from: number;
  readonly conn: number;
  readonly request: Request;
}

export interface Partition {
  readonly log: readonly LogBatch[];
  /** Sorted by pid. */
  readonly producers: readonly ProducerEntry[];
  /** Sorted by pid; at most one per producer id. */
  readonly verifications: readonly Verification[];
  readonly held: readonly HeldProduce[];
  /** The next verification guard (a unique object in Kafka, a counter here). */
  readonly nextGuard: number;
}

// ---- Consumers ------------------------------------------------------------------------------
export interface Delivered {
  readonly partition: number;
  readonly offset: number;
  readonly ghostTxn: number;
  readonly ghostRecord: number;
}

export interface Consumer {
  readonly readCommitted: boolean;
  readonly position: readonly number[];
  readonly delivered: readonly Delivered[];
}

// ---- Ghost history ------------------------------------------------------------------------
export const Decision = { None: 0, Commit: 1, Abort: 2 } as const;
export type Decision = (typeof Decision)[keyof typeof Decision];
export const Told = { Nothing: 0, Committed: 1, Aborted: 2, Failed: 3 } as const;
export type Told = (typeof Told)[keyof typeof Told];

/** What happened to one client transaction (instance i's k-th transaction). */
export interface ClientTxnHistory {
  readonly decision: Decision;
  readonly told: Told;
  readonly recordsSent: number;
  /** The coordinator wrote PrepareCommit for it. */
  readonly prepared: boolean;
  /** The coordinator granted a newer epoch to another instance before it was prepared. */
  readonly fenced: boolean;
  /** The coordinator expired the transactional.id while this transaction's producer id was the one it held. */
  readonly expired: boolean;
}

export interface FaultBudget {
  readonly requestLoss: number;
  readonly responseLoss: number;
  readonly requestTimeouts: number;
  /** Produce batches whose delivery timeout expires while their request may still arrive. */
  readonly batchExpiries: number;
  readonly producerCrashes: number;
  readonly coordinatorFailovers: number;
  readonly transactionTimeouts: number;
  /** __transaction_state appends that fail (NOT_ENOUGH_REPLICAS); only with asynchronous appends. */
  readonly appendFailures: number;
  /** WriteTxnMarkers requests that time out at the coordinator while they may still reach the leader. */
  readonly markerTimeouts: number;
  /** Idle transactional.ids (Empty or Complete*) the coordinator removes (transactional.id.expiration.ms). */
  readonly transactionalIdExpiries: number;
  /** Idle producer ids whose state a leader drops (producer.id.expiration.ms). */
  readonly producerStateExpiries: number;
  /** Upgrades or downgrades of the finalized transaction.version feature (kafka-features). */
  readonly transactionVersionChanges: number;
}

/** The consumer group of the consume-transform-produce app. */
export interface Group {
  /** Bumped by every member join (a rebalance); KIP-447 fences older generations. */
  readonly generation: number;
}

export interface State {
  /** The cluster's finalized transaction.version feature level: 2 lets clients run version-2 transactions. */
  readonly transactionVersion: number;
  readonly producers: readonly Producer[];
  /** Producers without a transactional.id (enable.idempotence), after the transactional ones. */
  readonly idempotentProducers: readonly IdempotentProducer[];
  /** null unless the app is consume-transform-produce. */
  readonly group: Group | null;
  readonly coordinator: Coordinator;
  readonly partitions: readonly Partition[];
  readonly consumers: readonly Consumer[];
  /** Sorted by (from, to, conn); no empty channel. */
  readonly network: readonly Channel[];
  /** Faults still allowed. */
  readonly faults: FaultBudget;
  /** Ghost: one entry per client transaction (instance * transactionsPerInstance + k). */
  readonly history: readonly ClientTxnHistory[];
}

// ---- A state with one field replaced --------------------------------------------------------------

/**
 * `s` with `field` set to `value`, built as one literal in the field order unpackState uses, so
 * that every state has one shape. Node's spread of an object that was itself made by a spread
 * takes several hundred nanoseconds, against tens for a literal, and a step often replaces fields
 * one after another.
 */
export function withField<K extends keyof State>(s: State, field: K, value: State[K]): State {
  return {
    transactionVersion:
      field === 'transactionVersion' ? (value as State['transactionVersion']) : s.transactionVersion,
    producers: field === 'producers' ? (value as State['producers']) : s.producers,
    idempotentProducers:
      field === 'idempotentProducers' ? (value as State['idempotentProducers']) : s.idempotentProducers,
    group: field === 'group' ? (value as State['group']) : s.group,
    coordinator: field === 'coordinator' ? (value as State['coordinator']) : s.coordinator,
    partitions: field === 'partitions' ? (value as State['partitions']) : s.partitions,
    consumers: field === 'consumers' ? (value as State['consumers']) : s.consumers,
    network: field === 'network' ? (value as State['network']) : s.network,
    faults: field === 'faults' ? (value as State['faults']) : s.faults,
    history: field === 'history' ? (value as State['history']) : s.history,
  };
}

// ---- Names for the edges ---------------------------------------------------------------------
function invert(table: Record<string, number>): Record<number, string> {
  return Object.fromEntries(Object.entries(table).map(([k, v]) => [v, k]));
}
export const txnStateName = invert(TxnState);
export const tmName = invert(Tm);
export const errName = invert(Err);
export const apiName = invert(Api);
export const batchKindName = invert(BatchKind);
export const excuseName = invert(Excuse);
