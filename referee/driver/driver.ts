// The driver's steps as a test or a replay takes them: one request each, on the connection the
// caller names, with a few reads of what a step compares (the coordinator's answer, HW and LSO,
// what a read_committed consumer sees). Only coordinator look-ups are retried.
import type { Connection } from './connection.ts';
import {
  type Coordinator,
  CoordinatorType,
  CreateTopics,
  Fetch,
  FindCoordinator,
  IsolationLevel,
  ListOffsets,
  OffsetSpec,
  type PartitionProduceResponse,
  Produce,
} from './messages.ts';
import {
  type AbortedTransaction,
  type BatchToWrite,
  type Record,
  type RecordBatch,
  encodeBatch,
  readCommitted,
} from './records.ts';

/** Errors that mean "not yet": a coordinator still being created, elected or loaded. */
const NOT_YET = new Set(['COORDINATOR_NOT_AVAILABLE', 'COORDINATOR_LOAD_IN_PROGRESS', 'NOT_COORDINATOR']);

export function isNotYet(error: string): boolean {
  return NOT_YET.has(error);
}

/** Polls `attempt` until `done` holds of its answer, and returns that answer. */
export async function waitFor<T>(
  what: string,
  attempt: () => Promise<T>,
  done: (answer: T) => boolean,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await attempt();
    if (done(answer)) return answer;
    if (Date.now() > deadline)
      throw new Error(`${what}: still ${JSON.stringify(answer)} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The coordinator of a transactional id or group, once the broker has one: the first look-up
 * creates the internal topic, whose partition then has to be elected and loaded.
 */
export async function findCoordinator(
  connection: Connection,
  keyType: 'transaction' | 'group',
  key: string,
): Promise<Coordinator> {
  const answer = await waitFor(
    `FindCoordinator ${keyType} ${key}`,
    () =>
      connection.send(FindCoordinator, {
        keyType: keyType === 'transaction' ? CoordinatorType.TRANSACTION : CoordinatorType.GROUP,
        coordinatorKeys: [key],
      }),
    (a) => !isNotYet(a.coordinators[0]!.error),
  );
  return answer.coordinators[0]!;
}

/**
 * Creates a topic with `replicationFactor` replicas per partition and, when made, waits until its
 * leader serves every partition (the controller's decision reaches the broker a moment later);
 * returns the error name, NONE when made.
 */
export async function createTopic(
  connection: Connection,
  name: string,
  partitions: number,
  replicationFactor = 1,
): Promise<string> {
  const answer = await connection.send(CreateTopics, {
    topics: [{ name, numPartitions: partitions, replicationFactor }],
    timeoutMs: 10_000,
    validateOnly: false,
  });
  const error = answer.topics[0]!.error;
  if (error === 'NONE')
    await waitFor(
      `the partitions of ${name}`,
      () =>
        connection.send(ListOffsets, {
          isolationLevel: IsolationLevel.READ_UNCOMMITTED,
          topics: [
            {
              name,
              partitions: Array.from({ length: partitions }, (_, partitionIndex) => ({
                partitionIndex,
                timestamp: OffsetSpec.LATEST,
              })),
            },
          ],
        }),
      (a) => a.topics[0]!.partitions.every((p) => p.error === 'NONE'),
    );
  return error;
}

/** Sends one batch to one partition with Produce `version`; the partition's answer. */
export async function produceBatch(
  connection: Connection,
  version: number,
  to: { transactionalId: string | null; topic: string; partition: number },
  batch: BatchToWrite,
): Promise<PartitionProduceResponse> {
  const answer = await connection.send(
    Produce,
    {
      transactionalId: to.transactionalId,
      acks: -1,
      timeoutMs: 10_000,
      topicData: [{ name: to.topic, partitionData: [{ index: to.partition, records: encodeBatch(batch) }] }],
    },
    version,
  );
  return answer.responses[0]!.partitionResponses[0]!;
}

export interface PartitionOffsets {
  highWatermark: number;
  lastStableOffset: number;
}

/** HW and LSO by ListOffsets: the latest offset at read_uncommitted, then at read_committed. */
export async function listOffsets(
  connection: Connection,
  topic: string,
  partition: number,
): Promise<PartitionOffsets> {
  const latest = async (isolationLevel: 0 | 1): Promise<number> => {
    const answer = await connection.send(ListOffsets, {
      isolationLevel,
      topics: [{ name: topic, partitions: [{ partitionIndex: partition, timestamp: OffsetSpec.LATEST }] }],
    });
    const p = answer.topics[0]!.partitions[0]!;
    if (p.error !== 'NONE') throw new Error(`ListOffsets ${topic}-${partition}: ${p.error}`);
    return p.offset;
  };
  return {
    highWatermark: await latest(IsolationLevel.READ_UNCOMMITTED),
    lastStableOffset: await latest(IsolationLevel.READ_COMMITTED),
  };
}

export interface CommittedView extends PartitionOffsets {
  abortedTransactions: AbortedTransaction[];
  batches: RecordBatch[];
  /** What a read_committed consumer delivers, in offset order. */
  records: Record[];
}

/** One read_committed fetch of a partition from `fetchOffset`, and what a consumer makes of it. */
export function fetchCommitted(
  connection: Connection,
  topic: string,
  partition: number,
  fetchOffset = 0,
): Promise<CommittedView> {
  return fetchAt(connection, topic, partition, fetchOffset, IsolationLevel.READ_COMMITTED);
}

/**
 * One fetch of a partition from `fetchOffset` at an isolation level, and what a consumer at that
 * level delivers: at read_uncommitted every data record, at read_committed those of no aborted
 * transaction, below the LSO.
 */
export async function fetchAt(
  connection: Connection,
  topic: string,
  partition: number,
  fetchOffset: number,
  isolationLevel: 0 | 1,
): Promise<CommittedView> {
  const answer = await connection.send(Fetch, {
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 1 << 20,
    isolationLevel,
    topics: [{ topic, partitions: [{ partition, fetchOffset, partitionMaxBytes: 1 << 20 }] }],
  });
  const p = answer.responses[0]!.partitions[0]!;
  if (answer.error !== 'NONE' || p.error !== 'NONE')
    throw new Error(`Fetch ${topic}-${partition}: ${answer.error} / ${p.error}`);
  const abortedTransactions = p.abortedTransactions ?? [];
  return {
    highWatermark: p.highWatermark,
    lastStableOffset: p.lastStableOffset,
    abortedTransactions,
    batches: p.batches,
    records:
      isolationLevel === IsolationLevel.READ_COMMITTED
        ? readCommitted(p.batches, abortedTransactions)
        : p.batches.filter((b) => !b.control).flatMap((b) => b.records),
  };
}
