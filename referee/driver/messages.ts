// The requests and responses the driver sends and reads, written from Kafka's message schemas
// (clients/src/main/resources/common/message/*.json, the same in every 4.x release for the
// versions here). Field names are the schemas' in camelCase; error codes become Kafka's names.
import type { Api } from './api.ts';
import { Reader, type Writer } from './codec.ts';
import { errorName } from './errors.ts';
import { type AbortedTransaction, type RecordBatch, decodeBatches } from './records.ts';

// ---- ApiVersions (key 18) -----------------------------------------------------------------

export interface ApiVersionsRequest {
  readonly clientSoftwareName: string;
  readonly clientSoftwareVersion: string;
}
export interface ApiVersionRange {
  readonly apiKey: number;
  readonly minVersion: number;
  readonly maxVersion: number;
}
export interface FinalizedFeature {
  readonly name: string;
  readonly maxVersionLevel: number;
  readonly minVersionLevel: number;
}
export interface ApiVersionsResponse {
  error: string;
  apiKeys: ApiVersionRange[];
  throttleTimeMs: number;
  supportedFeatures: { name: string; minVersion: number; maxVersion: number }[];
  /** -1 until the broker knows the cluster's finalized features. */
  finalizedFeaturesEpoch: number;
  finalizedFeatures: FinalizedFeature[];
}

export const ApiVersions: Api<ApiVersionsRequest, ApiVersionsResponse> = {
  key: 18,
  name: 'ApiVersions',
  versions: [3, 4],
  flexibleFrom: 3,
  encode(w, req) {
    w.struct((w) => w.string(req.clientSoftwareName).string(req.clientSoftwareVersion));
  },
  decode(r) {
    return r.struct<ApiVersionsResponse>(
      (r) => ({
        error: errorName(r.int16()),
        apiKeys: r.array((r) =>
          r.struct((r) => ({ apiKey: r.int16(), minVersion: r.int16(), maxVersion: r.int16() })),
        ),
        throttleTimeMs: r.int32(),
        supportedFeatures: [],
        finalizedFeaturesEpoch: -1,
        finalizedFeatures: [],
      }),
      {
        0: (r, into) => {
          into.supportedFeatures = r.array((r) =>
            r.struct((r) => ({ name: r.string(), minVersion: r.int16(), maxVersion: r.int16() })),
          );
        },
        1: (r, into) => {
          into.finalizedFeaturesEpoch = r.int64();
        },
        2: (r, into) => {
          into.finalizedFeatures = r.array((r) =>
            r.struct((r) => ({ name: r.string(), maxVersionLevel: r.int16(), minVersionLevel: r.int16() })),
          );
        },
      },
    );
  },
};

// ---- FindCoordinator (key 10) -------------------------------------------------------------

export const CoordinatorType = { GROUP: 0, TRANSACTION: 1 } as const;

export interface FindCoordinatorRequest {
  readonly keyType: (typeof CoordinatorType)[keyof typeof CoordinatorType];
  readonly coordinatorKeys: readonly string[];
}
export interface Coordinator {
  key: string;
  nodeId: number;
  host: string;
  port: number;
  error: string;
  errorMessage: string | null;
}
export interface FindCoordinatorResponse {
  throttleTimeMs: number;
  coordinators: Coordinator[];
}

export const FindCoordinator: Api<FindCoordinatorRequest, FindCoordinatorResponse> = {
  key: 10,
  name: 'FindCoordinator',
  versions: [4, 6],
  flexibleFrom: 3,
  encode(w, req) {
    w.struct((w) => w.int8(req.keyType).array(req.coordinatorKeys, (w, key) => w.string(key)));
  },
  decode(r) {
    return r.struct((r) => ({
      throttleTimeMs: r.int32(),
      coordinators: r.array((r) =>
        r.struct((r) => ({
          key: r.string(),
          nodeId: r.int32(),
          host: r.string(),
          port: r.int32(),
          error: errorName(r.int16()),
          errorMessage: r.nullableString(),
        })),
      ),
    }));
  },
};

// ---- InitProducerId (key 22) --------------------------------------------------------------

export interface InitProducerIdRequest {
  readonly transactionalId: string | null;
  readonly transactionTimeoutMs: number;
  /** The producer's id and epoch when it re-initializes (v3+), or -1 for a new producer. */
  readonly producerId: number;
  readonly producerEpoch: number;
}
export interface InitProducerIdResponse {
  throttleTimeMs: number;
  error: string;
  producerId: number;
  producerEpoch: number;
}

export const InitProducerId: Api<InitProducerIdRequest, InitProducerIdResponse> = {
  key: 22,
  name: 'InitProducerId',
  // v6 (two-phase commit, KIP-939) is still unstable in 4.1.
  versions: [3, 5],
  flexibleFrom: 2,
  encode(w, req) {
    w.struct((w) =>
      w
        .nullableString(req.transactionalId)
        .int32(req.transactionTimeoutMs)
        .int64(req.producerId)
        .int16(req.producerEpoch),
    );
  },
  decode(r) {
    return r.struct((r) => ({
      throttleTimeMs: r.int32(),
      error: errorName(r.int16()),
      producerId: r.int64(),
      producerEpoch: r.int16(),
    }));
  },
};

// ---- AddPartitionsToTxn (key 24) ----------------------------------------------------------

export interface TopicPartitions {
  readonly name: string;
  readonly partitions: readonly number[];
}
export interface PartitionResult {
  partitionIndex: number;
  error: string;
}
export interface TopicResult {
  name: string;
  resultsByPartition: PartitionResult[];
}

function writeTopicPartitions(w: Writer, topics: readonly TopicPartitions[]): void {
  w.array(topics, (w, t) => w.struct((w) => w.string(t.name).array(t.partitions, (w, p) => w.int32(p))));
}
function readTopicResults(r: Reader): TopicResult[] {
  return r.array((r) =>
    r.struct((r) => ({
      name: r.string(),
      resultsByPartition: r.array((r) =>
        r.struct((r) => ({ partitionIndex: r.int32(), error: errorName(r.int16()) })),
      ),
    })),
  );
}

export interface AddPartitionsToTxnRequest {
  readonly transactionalId: string;
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly topics: readonly TopicPartitions[];
}
export interface AddPartitionsToTxnResponse {
  throttleTimeMs: number;
  resultsByTopic: TopicResult[];
}

/** The client's form: one transaction (versions 3 and below are the clients'). */
export const AddPartitionsToTxn: Api<AddPartitionsToTxnRequest, AddPartitionsToTxnResponse> = {
  key: 24,
  name: 'AddPartitionsToTxn',
  versions: [3, 3],
  flexibleFrom: 3,
  encode(w, req) {
    w.struct((w) => {
      w.string(req.transactionalId).int64(req.producerId).int16(req.producerEpoch);
      writeTopicPartitions(w, req.topics);
    });
  },
  decode(r) {
    return r.struct((r) => ({ throttleTimeMs: r.int32(), resultsByTopic: readTopicResults(r) }));
  },
};

export interface AddPartitionsToTxnTransaction {
  readonly transactionalId: string;
  readonly producerId: number;
  readonly producerEpoch: number;
  /** Only check that the partitions are in the transaction, as a partition leader does. */
  readonly verifyOnly: boolean;
  readonly topics: readonly TopicPartitions[];
}
export interface AddPartitionsToTxnBrokerRequest {
  readonly transactions: readonly AddPartitionsToTxnTransaction[];
}
export interface AddPartitionsToTxnBrokerResponse {
  throttleTimeMs: number;
  error: string;
  resultsByTransaction: { transactionalId: string; topicResults: TopicResult[] }[];
}

/** The brokers' form (versions 4+): a batch of transactions, with `verifyOnly`. */
export const AddPartitionsToTxnBroker: Api<
  AddPartitionsToTxnBrokerRequest,
  AddPartitionsToTxnBrokerResponse
> = {
  key: 24,
  name: 'AddPartitionsToTxn',
  versions: [4, 5],
  flexibleFrom: 3,
  encode(w, req) {
    w.struct((w) =>
      w.array(req.transactions, (w, t) =>
        w.struct((w) => {
          w.string(t.transactionalId).int64(t.producerId).int16(t.producerEpoch).bool(t.verifyOnly);
          writeTopicPartitions(w, t.topics);
        }),
      ),
    );
  },
  decode(r) {
    return r.struct((r) => ({
      throttleTimeMs: r.int32(),
      error: errorName(r.int16()),
      resultsByTransaction: r.array((r) =>
        r.struct((r) => ({ transactionalId: r.string(), topicResults: readTopicResults(r) })),
      ),
    }));
  },
};

// ---- AddOffsetsToTxn (key 25) -------------------------------------------------------------

export interface AddOffsetsToTxnRequest {
  readonly transactionalId: string;
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly groupId: string;
}
export interface ThrottleAndError {
  throttleTimeMs: number;
  error: string;
}

export const AddOffsetsToTxn: Api<AddOffsetsToTxnRequest, ThrottleAndError> = {
  key: 25,
  name: 'AddOffsetsToTxn',
  versions: [3, 4],
  flexibleFrom: 3,
  encode(w, req) {
    w.struct((w) =>
      w.string(req.transactionalId).int64(req.producerId).int16(req.producerEpoch).string(req.groupId),
    );
  },
  decode(r) {
    return r.struct((r) => ({ throttleTimeMs: r.int32(), error: errorName(r.int16()) }));
  },
};

// ---- Produce (key 0) ----------------------------------------------------------------------

export interface ProduceRequest {
  readonly transactionalId: string | null;
  /** 0 (no answer: not supported here), 1 (the leader) or -1 (all in-sync replicas). */
  readonly acks: 1 | -1;
  readonly timeoutMs: number;
  readonly topicData: readonly {
    readonly name: string;
    readonly partitionData: readonly { readonly index: number; readonly records: Buffer | null }[];
  }[];
}
export interface PartitionProduceResponse {
  index: number;
  error: string;
  baseOffset: number;
  logAppendTimeMs: number;
  logStartOffset: number;
  recordErrors: { batchIndex: number; batchIndexErrorMessage: string | null }[];
  errorMessage: string | null;
  currentLeader?: { leaderId: number; leaderEpoch: number };
}
export interface ProduceResponse {
  responses: { name: string; partitionResponses: PartitionProduceResponse[] }[];
  throttleTimeMs: number;
}

/**
 * Produce by topic name: v11 within a transaction of version 1; v12 signals transaction
 * version 2, where the leader adds the partition to the transaction itself.
 */
export const Produce: Api<ProduceRequest, ProduceResponse> = {
  key: 0,
  name: 'Produce',
  versions: [9, 12],
  flexibleFrom: 9,
  encode(w, req) {
    w.struct((w) =>
      w
        .nullableString(req.transactionalId)
        .int16(req.acks)
        .int32(req.timeoutMs)
        .array(req.topicData, (w, t) =>
          w.struct((w) =>
            w
              .string(t.name)
              .array(t.partitionData, (w, p) => w.struct((w) => w.int32(p.index).nullableBytes(p.records))),
          ),
        ),
    );
  },
  decode(r) {
    return r.struct((r) => ({
      responses: r.array((r) =>
        r.struct((r) => ({
          name: r.string(),
          partitionResponses: r.array((r) =>
            r.struct<PartitionProduceResponse>(
              (r) => ({
                index: r.int32(),
                error: errorName(r.int16()),
                baseOffset: r.int64(),
                logAppendTimeMs: r.int64(),
                logStartOffset: r.int64(),
                recordErrors: r.array((r) =>
                  r.struct((r) => ({ batchIndex: r.int32(), batchIndexErrorMessage: r.nullableString() })),
                ),
                errorMessage: r.nullableString(),
              }),
              {
                0: (r, into) => {
                  into.currentLeader = r.struct((r) => ({ leaderId: r.int32(), leaderEpoch: r.int32() }));
                },
              },
            ),
          ),
        })),
      ),
      throttleTimeMs: r.int32(),
    }));
  },
};

// ---- TxnOffsetCommit (key 28) -------------------------------------------------------------

export interface TxnOffsetCommitRequest {
  readonly transactionalId: string;
  readonly groupId: string;
  readonly producerId: number;
  readonly producerEpoch: number;
  /** The consumer group's generation and member (KIP-447), or -1 and '' outside a group. */
  readonly generationId: number;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly topics: readonly {
    readonly name: string;
    readonly partitions: readonly {
      readonly partitionIndex: number;
      readonly committedOffset: number;
      readonly committedLeaderEpoch: number;
      readonly committedMetadata: string | null;
    }[];
  }[];
}
export interface TxnOffsetCommitResponse {
  throttleTimeMs: number;
  topics: TopicResult[];
}

/** v4 within a transaction of version 1; v5 signals transaction version 2 (no AddOffsetsToTxn). */
export const TxnOffsetCommit: Api<TxnOffsetCommitRequest, TxnOffsetCommitResponse> = {
  key: 28,
  name: 'TxnOffsetCommit',
  versions: [3, 5],
  flexibleFrom: 3,
  encode(w, req) {
    w.struct((w) =>
      w
        .string(req.transactionalId)
        .string(req.groupId)
        .int64(req.producerId)
        .int16(req.producerEpoch)
        .int32(req.generationId)
        .string(req.memberId)
        .nullableString(req.groupInstanceId)
        .array(req.topics, (w, t) =>
          w.struct((w) =>
            w
              .string(t.name)
              .array(t.partitions, (w, p) =>
                w.struct((w) =>
                  w
                    .int32(p.partitionIndex)
                    .int64(p.committedOffset)
                    .int32(p.committedLeaderEpoch)
                    .nullableString(p.committedMetadata),
                ),
              ),
          ),
        ),
    );
  },
  decode(r) {
    return r.struct((r) => ({ throttleTimeMs: r.int32(), topics: readTopicResults(r) }));
  },
};

// ---- EndTxn (key 26) ----------------------------------------------------------------------

export interface EndTxnRequest {
  readonly transactionalId: string;
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly committed: boolean;
}
export interface EndTxnResponse {
  throttleTimeMs: number;
  error: string;
  /** v5: the producer id and epoch to use next (the epoch is bumped on every transaction). */
  producerId?: number;
  producerEpoch?: number;
}

/** v4 ends a transaction of version 1; v5 signals transaction version 2. */
export const EndTxn: Api<EndTxnRequest, EndTxnResponse> = {
  key: 26,
  name: 'EndTxn',
  versions: [3, 5],
  flexibleFrom: 3,
  encode(w, req) {
    w.struct((w) =>
      w.string(req.transactionalId).int64(req.producerId).int16(req.producerEpoch).bool(req.committed),
    );
  },
  decode(r, version) {
    return r.struct((r) => {
      const response: EndTxnResponse = { throttleTimeMs: r.int32(), error: errorName(r.int16()) };
      if (version >= 5) {
        response.producerId = r.int64();
        response.producerEpoch = r.int16();
      }
      return response;
    });
  },
};

// ---- Fetch (key 1) ------------------------------------------------------------------------

export const IsolationLevel = { READ_UNCOMMITTED: 0, READ_COMMITTED: 1 } as const;
type Isolation = (typeof IsolationLevel)[keyof typeof IsolationLevel];

export interface FetchRequest {
  readonly maxWaitMs: number;
  readonly minBytes: number;
  readonly maxBytes: number;
  readonly isolationLevel: Isolation;
  readonly topics: readonly {
    readonly topic: string;
    readonly partitions: readonly {
      readonly partition: number;
      readonly fetchOffset: number;
      readonly partitionMaxBytes: number;
    }[];
  }[];
}
export interface FetchPartitionData {
  partitionIndex: number;
  error: string;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
  abortedTransactions: AbortedTransaction[] | null;
  preferredReadReplica: number;
  /** The record batches, the last one dropped when the fetch cut it short. */
  batches: RecordBatch[];
}
export interface FetchResponse {
  throttleTimeMs: number;
  error: string;
  sessionId: number;
  responses: { topic: string; partitions: FetchPartitionData[] }[];
}

/**
 * A consumer's full fetch by topic name (v12, the last version with names), outside any fetch
 * session, from no particular leader epoch.
 */
export const Fetch: Api<FetchRequest, FetchResponse> = {
  key: 1,
  name: 'Fetch',
  versions: [12, 12],
  flexibleFrom: 12,
  encode(w, req) {
    w.struct(
      (w) =>
        w
          .int32(-1) // ReplicaId: a consumer
          .int32(req.maxWaitMs)
          .int32(req.minBytes)
          .int32(req.maxBytes)
          .int8(req.isolationLevel)
          .int32(0) // SessionId: none
          .int32(-1) // SessionEpoch: a full fetch, no session
          .array(req.topics, (w, t) =>
            w.struct((w) =>
              w.string(t.topic).array(t.partitions, (w, p) =>
                w.struct((w) =>
                  w
                    .int32(p.partition)
                    .int32(-1) // CurrentLeaderEpoch: unknown
                    .int64(p.fetchOffset)
                    .int32(-1) // LastFetchedEpoch: none
                    .int64(-1) // LogStartOffset: a follower's only
                    .int32(p.partitionMaxBytes),
                ),
              ),
            ),
          )
          .array([], () => undefined) // ForgottenTopicsData
          .string(''), // RackId
    );
  },
  decode(r) {
    return r.struct((r) => ({
      throttleTimeMs: r.int32(),
      error: errorName(r.int16()),
      sessionId: r.int32(),
      responses: r.array((r) =>
        r.struct((r) => ({
          topic: r.string(),
          partitions: r.array((r) =>
            r.struct((r) => ({
              partitionIndex: r.int32(),
              error: errorName(r.int16()),
              highWatermark: r.int64(),
              lastStableOffset: r.int64(),
              logStartOffset: r.int64(),
              abortedTransactions: r.nullableArray((r) =>
                r.struct((r) => ({ producerId: r.int64(), firstOffset: r.int64() })),
              ),
              preferredReadReplica: r.int32(),
              batches: decodeBatches(r.nullableBytes()),
            })),
          ),
        })),
      ),
    }));
  },
};

// ---- ListOffsets (key 2) ------------------------------------------------------------------

/** ListOffsets' special timestamps: the log end (HW, or the LSO at read_committed) and start. */
export const OffsetSpec = { LATEST: -1, EARLIEST: -2 } as const;

export interface ListOffsetsRequest {
  readonly isolationLevel: Isolation;
  readonly topics: readonly {
    readonly name: string;
    readonly partitions: readonly { readonly partitionIndex: number; readonly timestamp: number }[];
  }[];
}
export interface ListOffsetsResponse {
  throttleTimeMs: number;
  topics: {
    name: string;
    partitions: {
      partitionIndex: number;
      error: string;
      timestamp: number;
      offset: number;
      leaderEpoch: number;
    }[];
  }[];
}

export const ListOffsets: Api<ListOffsetsRequest, ListOffsetsResponse> = {
  key: 2,
  name: 'ListOffsets',
  versions: [6, 9],
  flexibleFrom: 6,
  encode(w, req) {
    w.struct((w) =>
      w
        .int32(-1) // ReplicaId: a consumer
        .int8(req.isolationLevel)
        .array(req.topics, (w, t) =>
          w.struct((w) =>
            w
              .string(t.name)
              .array(t.partitions, (w, p) =>
                w.struct((w) => w.int32(p.partitionIndex).int32(-1).int64(p.timestamp)),
              ),
          ),
        ),
    );
  },
  decode(r) {
    return r.struct((r) => ({
      throttleTimeMs: r.int32(),
      topics: r.array((r) =>
        r.struct((r) => ({
          name: r.string(),
          partitions: r.array((r) =>
            r.struct((r) => ({
              partitionIndex: r.int32(),
              error: errorName(r.int16()),
              timestamp: r.int64(),
              offset: r.int64(),
              leaderEpoch: r.int32(),
            })),
          ),
        })),
      ),
    }));
  },
};

// ---- DescribeTransactions (key 65) --------------------------------------------------------

export interface DescribeTransactionsRequest {
  readonly transactionalIds: readonly string[];
}
export interface TransactionDescription {
  error: string;
  transactionalId: string;
  /** The coordinator's TransactionState name, e.g. Ongoing, CompleteCommit. */
  transactionState: string;
  transactionTimeoutMs: number;
  transactionStartTimeMs: number;
  producerId: number;
  producerEpoch: number;
  /** The partitions in the transaction that have no marker yet. */
  topics: { topic: string; partitions: number[] }[];
}
export interface DescribeTransactionsResponse {
  throttleTimeMs: number;
  transactionStates: TransactionDescription[];
}

export const DescribeTransactions: Api<DescribeTransactionsRequest, DescribeTransactionsResponse> = {
  key: 65,
  name: 'DescribeTransactions',
  versions: [0, 0],
  flexibleFrom: 0,
  encode(w, req) {
    w.struct((w) => w.array(req.transactionalIds, (w, id) => w.string(id)));
  },
  decode(r) {
    return r.struct((r) => ({
      throttleTimeMs: r.int32(),
      transactionStates: r.array((r) =>
        r.struct((r) => ({
          error: errorName(r.int16()),
          transactionalId: r.string(),
          transactionState: r.string(),
          transactionTimeoutMs: r.int32(),
          transactionStartTimeMs: r.int64(),
          producerId: r.int64(),
          producerEpoch: r.int16(),
          topics: r.array((r) =>
            r.struct((r) => ({ topic: r.string(), partitions: r.array((r) => r.int32()) })),
          ),
        })),
      ),
    }));
  },
};

// ---- DescribeProducers (key 61) -----------------------------------------------------------

export interface DescribeProducersRequest {
  readonly topics: readonly { readonly name: string; readonly partitionIndexes: readonly number[] }[];
}
export interface ProducerState {
  producerId: number;
  producerEpoch: number;
  lastSequence: number;
  lastTimestamp: number;
  coordinatorEpoch: number;
  /** The first offset of the producer's open transaction, or -1. */
  currentTxnStartOffset: number;
}
export interface DescribeProducersResponse {
  throttleTimeMs: number;
  topics: {
    name: string;
    partitions: {
      partitionIndex: number;
      error: string;
      errorMessage: string | null;
      activeProducers: ProducerState[];
    }[];
  }[];
}

export const DescribeProducers: Api<DescribeProducersRequest, DescribeProducersResponse> = {
  key: 61,
  name: 'DescribeProducers',
  versions: [0, 0],
  flexibleFrom: 0,
  encode(w, req) {
    w.struct((w) =>
      w.array(req.topics, (w, t) =>
        w.struct((w) => w.string(t.name).array(t.partitionIndexes, (w, p) => w.int32(p))),
      ),
    );
  },
  decode(r) {
    return r.struct((r) => ({
      throttleTimeMs: r.int32(),
      topics: r.array((r) =>
        r.struct((r) => ({
          name: r.string(),
          partitions: r.array((r) =>
            r.struct((r) => ({
              partitionIndex: r.int32(),
              error: errorName(r.int16()),
              errorMessage: r.nullableString(),
              activeProducers: r.array((r) =>
                r.struct((r) => ({
                  producerId: r.int64(),
                  producerEpoch: r.int32(),
                  lastSequence: r.int32(),
                  lastTimestamp: r.int64(),
                  coordinatorEpoch: r.int32(),
                  currentTxnStartOffset: r.int64(),
                })),
              ),
            })),
          ),
        })),
      ),
    }));
  },
};

// ---- CreateTopics (key 19) ----------------------------------------------------------------

export interface CreateTopicsRequest {
  readonly topics: readonly {
    readonly name: string;
    readonly numPartitions: number;
    readonly replicationFactor: number;
    /** Each partition's replicas, the first its leader; numPartitions and replicationFactor -1 then. */
    readonly assignments?: readonly {
      readonly partitionIndex: number;
      readonly brokerIds: readonly number[];
    }[];
    readonly configs?: readonly { readonly name: string; readonly value: string | null }[];
  }[];
  readonly timeoutMs: number;
  readonly validateOnly: boolean;
}
export interface CreateTopicsResponse {
  throttleTimeMs: number;
  topics: {
    name: string;
    /** v7: the new topic's id (base64url), all zeros on error. */
    topicId?: string;
    error: string;
    errorMessage: string | null;
    numPartitions: number;
    replicationFactor: number;
  }[];
}

export const CreateTopics: Api<CreateTopicsRequest, CreateTopicsResponse> = {
  key: 19,
  name: 'CreateTopics',
  versions: [5, 7],
  flexibleFrom: 5,
  encode(w, req) {
    w.struct((w) =>
      w
        .array(req.topics, (w, t) =>
          w.struct((w) =>
            w
              .string(t.name)
              .int32(t.numPartitions)
              .int16(t.replicationFactor)
              .array(t.assignments ?? [], (w, a) =>
                w.struct((w) => w.int32(a.partitionIndex).array(a.brokerIds, (w, id) => w.int32(id))),
              )
              .array(t.configs ?? [], (w, c) => w.struct((w) => w.string(c.name).nullableString(c.value))),
          ),
        )
        .int32(req.timeoutMs)
        .bool(req.validateOnly),
    );
  },
  decode(r, version) {
    return r.struct((r) => ({
      throttleTimeMs: r.int32(),
      topics: r.array((r) =>
        r.struct((r) => {
          const name = r.string();
          const topicId = version >= 7 ? r.uuid() : undefined;
          const topic = {
            name,
            ...(topicId === undefined ? {} : { topicId }),
            error: errorName(r.int16()),
            errorMessage: r.nullableString(),
            numPartitions: r.int32(),
            replicationFactor: r.int16(),
          };
          // Configs: what the topic was created with; not kept.
          r.nullableArray((r) =>
            r.struct((r) => [r.string(), r.nullableString(), r.bool(), r.int8(), r.bool()]),
          );
          return topic;
        }),
      ),
    }));
  },
};

// ---- Metadata (key 3) ---------------------------------------------------------------------

export interface MetadataRequest {
  /** Topic names, or null for every topic. */
  readonly topics: readonly string[] | null;
}
export interface MetadataPartition {
  error: string;
  partitionIndex: number;
  leaderId: number;
  leaderEpoch: number;
  replicaNodes: number[];
  isrNodes: number[];
}
export interface MetadataResponse {
  brokers: { nodeId: number; host: string; port: number }[];
  controllerId: number;
  topics: { error: string; name: string | null; partitions: MetadataPartition[] }[];
}

/** Which brokers serve, and each partition's leader, replicas and ISR; v12 (flexible, 3.1+). */
export const Metadata: Api<MetadataRequest, MetadataResponse> = {
  key: 3,
  name: 'Metadata',
  versions: [12, 12],
  flexibleFrom: 9,
  encode(w, req) {
    w.struct((w) => {
      if (req.topics === null) w.unsignedVarint(0);
      else w.array(req.topics, (w, name) => w.struct((w) => w.raw(Buffer.alloc(16)).string(name)));
      w.bool(false).bool(false); // AllowAutoTopicCreation, IncludeTopicAuthorizedOperations
    });
  },
  decode(r) {
    return r.struct((r) => {
      r.int32(); // ThrottleTimeMs
      const brokers = r.array((r) =>
        r.struct((r) => {
          const broker = { nodeId: r.int32(), host: r.string(), port: r.int32() };
          r.nullableString(); // Rack
          return broker;
        }),
      );
      r.nullableString(); // ClusterId
      const controllerId = r.int32();
      const topics = r.array((r) =>
        r.struct((r) => {
          const error = errorName(r.int16());
          const name = r.nullableString();
          r.uuid();
          r.bool(); // IsInternal
          const partitions = r.array((r) =>
            r.struct((r) => {
              const partition = {
                error: errorName(r.int16()),
                partitionIndex: r.int32(),
                leaderId: r.int32(),
                leaderEpoch: r.int32(),
                replicaNodes: r.array((r) => r.int32()),
                isrNodes: r.array((r) => r.int32()),
              };
              r.array((r) => r.int32()); // OfflineReplicas
              return partition;
            }),
          );
          r.int32(); // TopicAuthorizedOperations
          return { error, name, partitions };
        }),
      );
      return { brokers, controllerId, topics };
    });
  },
};

// ---- AlterPartitionReassignments (key 45) -------------------------------------------------

export interface AlterPartitionReassignmentsRequest {
  readonly timeoutMs: number;
  readonly topics: readonly {
    readonly name: string;
    readonly partitions: readonly { readonly partitionIndex: number; readonly replicas: readonly number[] }[];
  }[];
}
export interface PartitionErrors {
  error: string;
  errorMessage: string | null;
  responses: {
    name: string;
    partitions: { partitionIndex: number; error: string; errorMessage: string | null }[];
  }[];
}

/** The per-topic, per-partition errors AlterPartitionReassignments and ElectLeaders answer with. */
function readPartitionErrors(r: Reader): PartitionErrors['responses'] {
  return r.array((r) =>
    r.struct((r) => ({
      name: r.string(),
      partitions: r.array((r) =>
        r.struct((r) => ({
          partitionIndex: r.int32(),
          error: errorName(r.int16()),
          errorMessage: r.nullableString(),
        })),
      ),
    })),
  );
}

/** A new replica list per partition; its first replica becomes the preferred leader. v0. */
export const AlterPartitionReassignments: Api<AlterPartitionReassignmentsRequest, PartitionErrors> = {
  key: 45,
  name: 'AlterPartitionReassignments',
  versions: [0, 0],
  flexibleFrom: 0,
  encode(w, req) {
    w.struct((w) =>
      w
        .int32(req.timeoutMs)
        .array(req.topics, (w, t) =>
          w.struct((w) =>
            w
              .string(t.name)
              .array(t.partitions, (w, p) =>
                w.struct((w) => w.int32(p.partitionIndex).array(p.replicas, (w, id) => w.int32(id))),
              ),
          ),
        ),
    );
  },
  decode(r) {
    return r.struct((r) => {
      r.int32(); // ThrottleTimeMs
      const error = errorName(r.int16());
      const errorMessage = r.nullableString();
      const responses = readPartitionErrors(r);
      return { error, errorMessage, responses };
    });
  },
};

// ---- ElectLeaders (key 43) ----------------------------------------------------------------

export const ElectionType = { PREFERRED: 0, UNCLEAN: 1 } as const;

export interface ElectLeadersRequest {
  readonly electionType: 0 | 1;
  readonly topicPartitions: readonly { readonly topic: string; readonly partitions: readonly number[] }[];
  readonly timeoutMs: number;
}

/** Elects each partition's preferred (first in-sync) replica; v2 (flexible). */
export const ElectLeaders: Api<ElectLeadersRequest, PartitionErrors> = {
  key: 43,
  name: 'ElectLeaders',
  versions: [2, 2],
  flexibleFrom: 2,
  encode(w, req) {
    w.struct((w) =>
      w
        .int8(req.electionType)
        .array(req.topicPartitions, (w, t) =>
          w.struct((w) => w.string(t.topic).array(t.partitions, (w, p) => w.int32(p))),
        )
        .int32(req.timeoutMs),
    );
  },
  decode(r) {
    return r.struct((r) => {
      r.int32(); // ThrottleTimeMs
      const error = errorName(r.int16());
      const responses = readPartitionErrors(r);
      return { error, errorMessage: null, responses };
    });
  },
};

/** Every API the driver writes. */
export const DRIVER_APIS: readonly Api<never, unknown>[] = [
  ApiVersions,
  FindCoordinator,
  InitProducerId,
  AddPartitionsToTxn,
  AddPartitionsToTxnBroker,
  AddOffsetsToTxn,
  Produce,
  TxnOffsetCommit,
  EndTxn,
  Fetch,
  ListOffsets,
  DescribeTransactions,
  DescribeProducers,
  CreateTopics,
  Metadata,
  AlterPartitionReassignments,
  ElectLeaders,
];

// ---- WriteTxnMarkers (key 27) -------------------------------------------------------------

export interface WritableTxnMarker {
  readonly producerId: number;
  readonly producerEpoch: number;
  /** true for COMMIT, false for ABORT. */
  readonly transactionResult: boolean;
  readonly topics: readonly { readonly name: string; readonly partitionIndexes: readonly number[] }[];
  readonly coordinatorEpoch: number;
  /** v2 (KIP-1228): the transaction version of the marker, 0/1 legacy, 2 for version 2. */
  readonly transactionVersion?: number;
}
export interface WriteTxnMarkersRequest {
  readonly markers: readonly WritableTxnMarker[];
}
export interface WriteTxnMarkersResponse {
  markers: { producerId: number; topics: TopicResult[] }[];
}

/**
 * The coordinator's request to a partition leader (listener "broker"); a broker without an
 * authorizer takes it from anyone. v1 from 4.0 (v0 removed); v2 names the transaction version
 * (KIP-1228, 4.2).
 */
export const WriteTxnMarkers: Api<WriteTxnMarkersRequest, WriteTxnMarkersResponse> = {
  key: 27,
  name: 'WriteTxnMarkers',
  versions: [1, 2],
  flexibleFrom: 1,
  encode(w, req, version) {
    w.struct((w) =>
      w.array(req.markers, (w, m) =>
        w.struct((w) => {
          w.int64(m.producerId).int16(m.producerEpoch).bool(m.transactionResult);
          w.array(m.topics, (w, t) =>
            w.struct((w) => w.string(t.name).array(t.partitionIndexes, (w, p) => w.int32(p))),
          );
          w.int32(m.coordinatorEpoch);
          if (version >= 2) w.int8(m.transactionVersion ?? 0);
        }),
      ),
    );
  },
  decode(r) {
    return r.struct((r) => ({
      markers: r.array((r) =>
        r.struct((r) => ({
          producerId: r.int64(),
          topics: readTopicResults(r),
        })),
      ),
    }));
  },
};

/** A WriteTxnMarkers request body, as a partition leader reads it (a proxy looks inside one). */
export function decodeWriteTxnMarkersRequest(r: Reader, version: number): WriteTxnMarkersRequest {
  return r.struct((r) => ({
    markers: r.array((r) =>
      r.struct((r) => ({
        producerId: r.int64(),
        producerEpoch: r.int16(),
        transactionResult: r.bool(),
        topics: r.array((r) =>
          r.struct((r) => ({ name: r.string(), partitionIndexes: r.array((r) => r.int32()) })),
        ),
        coordinatorEpoch: r.int32(),
        ...(version >= 2 ? { transactionVersion: r.int8() } : {}),
      })),
    ),
  }));
}

// ---- __transaction_state records (TransactionLogKey.json, TransactionLogValue.json) -------

/** TransactionState by the id the log stores (TransactionState.java). */
const TRANSACTION_STATUS = [
  'Empty',
  'Ongoing',
  'PrepareCommit',
  'PrepareAbort',
  'CompleteCommit',
  'CompleteAbort',
  'Dead',
  'PrepareEpochFence',
] as const;

export interface TransactionLogValue {
  /** The record's version: 0 at transaction.version 0, 1 (flexible, tagged fields) from 1. */
  version: number;
  producerId: number;
  producerEpoch: number;
  transactionTimeoutMs: number;
  transactionStatus: string;
  transactionPartitions: { topic: string; partitionIds: number[] }[] | null;
  transactionLastUpdateTimestampMs: number;
  transactionStartTimestampMs: number;
  /** The tagged fields, each only when the coordinator wrote it: tags 0, 1, 2 and (4.1) 3. */
  previousProducerId?: number;
  nextProducerId?: number;
  clientTransactionVersion?: number;
  nextProducerEpoch?: number;
}
export interface TransactionLogRecord {
  transactionalId: string;
  /** null for a tombstone (an expired transactional id). */
  value: TransactionLogValue | null;
}

/** One record of __transaction_state: its key (version 0) and value (version 0 or 1). */
export function decodeTransactionLogRecord(key: Buffer, value: Buffer | null): TransactionLogRecord {
  const k = new Reader(key, false);
  const keyVersion = k.int16();
  if (keyVersion !== 0) throw new RangeError(`a TransactionLogKey of version ${keyVersion}`);
  const transactionalId = k.string();
  if (value === null) return { transactionalId, value: null };
  const version = value.readInt16BE(0);
  if (version > 1) throw new RangeError(`a TransactionLogValue of version ${version}`);
  const r = new Reader(value.subarray(2), version >= 1);
  const decoded = r.struct<TransactionLogValue>(
    (r) => ({
      version,
      producerId: r.int64(),
      producerEpoch: r.int16(),
      transactionTimeoutMs: r.int32(),
      transactionStatus: TRANSACTION_STATUS[r.int8()] ?? 'unknown',
      transactionPartitions: r.nullableArray((r) =>
        r.struct((r) => ({ topic: r.string(), partitionIds: r.array((r) => r.int32()) })),
      ),
      transactionLastUpdateTimestampMs: r.int64(),
      transactionStartTimestampMs: r.int64(),
    }),
    {
      0: (r, into) => void (into.previousProducerId = r.int64()),
      1: (r, into) => void (into.nextProducerId = r.int64()),
      2: (r, into) => void (into.clientTransactionVersion = r.int16()),
      3: (r, into) => void (into.nextProducerEpoch = r.int16()),
    },
  );
  if (r.remaining() !== 0) throw new RangeError(`${r.remaining()} bytes left after a TransactionLogValue`);
  return { transactionalId, value: decoded };
}
