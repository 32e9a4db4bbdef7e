// Four questions about Kafka 4.x releases (issue 30), each answered by one driver-level experiment
// against a running broker at transaction.version 2. Each experiment uses fresh transactional
// ids and topics, so all four can run on one broker in any order.
import { Connection } from './driver/connection.ts';
import {
  createTopic,
  fetchCommitted,
  findCoordinator,
  isNotYet,
  listOffsets,
  produceBatch,
  waitFor,
} from './driver/driver.ts';
import {
  AddPartitionsToTxn,
  DescribeTransactions,
  EndTxn,
  InitProducerId,
  Produce,
  type TransactionDescription,
  type TransactionLogValue,
  WriteTxnMarkers,
  decodeTransactionLogRecord,
} from './driver/messages.ts';
import type { RecordBatch } from './driver/records.ts';

/** Whether release `version` is `since` or later (both x.y.z). */
export function atLeast(version: string, since: string): boolean {
  const [a, b] = [version, since].map((v) => v.split('.').map(Number));
  for (let i = 0; i < 3; i++) if (a![i] !== b![i]) return a![i]! > b![i]!;
  return true;
}

/** The internal topic of the coordinator; the brokers here give it one partition. */
const TRANSACTION_STATE = '__transaction_state';

export interface ProducerIdAndEpoch {
  producerId: number;
  producerEpoch: number;
}

/** Two connections to one broker: the coordinator's requests and the partition leader's. */
export class Lab {
  private names = 0;

  private constructor(
    readonly coordinator: Connection,
    readonly leader: Connection,
  ) {}

  static async open(address: string): Promise<Lab> {
    const coordinator = await Connection.open(address);
    return new Lab(coordinator, await Connection.open(address));
  }

  close(): void {
    this.coordinator.close();
    this.leader.close();
  }

  /** Whether the broker speaks transaction version 2: EndTxn v5 and Produce v12 (4.0). */
  speaksVersion2(): boolean {
    return this.coordinator.supports(EndTxn, 5) && this.leader.supports(Produce, 12);
  }

  /** A name no earlier experiment on this broker used. */
  fresh(what: string): string {
    return `${what}-${++this.names}`;
  }

  /** A topic of one partition, made and served. */
  async topic(what: string): Promise<string> {
    const name = this.fresh(what);
    const error = await createTopic(this.leader, name, 1);
    if (error !== 'NONE') throw new Error(`CreateTopics ${name}: ${error}`);
    return name;
  }

  /**
   * InitProducerId (no producer id) on `connection`, retried while the coordinator loads or
   * completes a fence (CONCURRENT_TRANSACTIONS); the answer.
   */
  async init(transactionalId: string, connection = this.coordinator): Promise<ProducerIdAndEpoch> {
    await findCoordinator(connection, 'transaction', transactionalId);
    const answer = await waitFor(
      `InitProducerId ${transactionalId}`,
      () =>
        connection.send(InitProducerId, {
          transactionalId,
          transactionTimeoutMs: 60_000,
          producerId: -1,
          producerEpoch: -1,
        }),
      (a) => !isNotYet(a.error) && a.error !== 'CONCURRENT_TRANSACTIONS',
    );
    if (answer.error !== 'NONE') throw new Error(`InitProducerId ${transactionalId}: ${answer.error}`);
    return { producerId: answer.producerId, producerEpoch: answer.producerEpoch };
  }

  /** Produce v12 (transaction version 2, or `version`) of one record to partition 0; the error name. */
  async produce(
    transactionalId: string,
    topic: string,
    producer: ProducerIdAndEpoch,
    baseSequence: number,
    value: string,
    version = 12,
  ): Promise<string> {
    const answer = await produceBatch(
      this.leader,
      version,
      { transactionalId, topic, partition: 0 },
      { ...producer, baseSequence, transactional: true, records: [{ key: null, value }] },
    );
    return answer.error;
  }

  /** EndTxn v5 (transaction version 2); its answer. */
  endTxn(transactionalId: string, producer: ProducerIdAndEpoch, committed: boolean) {
    return this.coordinator.send(EndTxn, { transactionalId, ...producer, committed }, 5);
  }

  async describe(transactionalId: string): Promise<TransactionDescription> {
    const answer = await this.coordinator.send(DescribeTransactions, { transactionalIds: [transactionalId] });
    return answer.transactionStates[0]!;
  }

  /** Waits until the coordinator has written every marker of the transaction (CompleteCommit/Abort). */
  async completed(transactionalId: string): Promise<TransactionDescription> {
    return waitFor(
      `the transaction of ${transactionalId} completing`,
      () => this.describe(transactionalId),
      (t) => t.transactionState.startsWith('Complete'),
    );
  }

  /**
   * One transaction of version 2 on a fresh transactional id and topic, committed and completed:
   * InitProducerId, Produce v12 of one record to partition 0, EndTxn v5. The producer's next
   * producer id and epoch are EndTxn's answer.
   */
  async commitOne(what: string): Promise<{ id: string; topic: string; next: ProducerIdAndEpoch }> {
    const id = this.fresh(what);
    const topic = await this.topic(what);
    const producer = await this.init(id);
    const produced = await this.produce(id, topic, producer, 0, 'first');
    if (produced !== 'NONE') throw new Error(`Produce v12: ${produced}`);
    const commit = await this.endTxn(id, producer, true);
    if (commit.error !== 'NONE') throw new Error(`EndTxn v5: ${commit.error}`);
    await this.completed(id);
    return { id, topic, next: { producerId: commit.producerId!, producerEpoch: commit.producerEpoch! } };
  }

  /** The last marker of `producerId` on partition 0 of `topic`. */
  async lastMarker(topic: string, producerId: number): Promise<RecordBatch | undefined> {
    const { batches } = await fetchCommitted(this.leader, topic, 0);
    return batches.filter((b) => b.control && b.producerId === producerId).at(-1);
  }

  /** What a read_committed consumer reads from partition 0 of `topic`. */
  async committedValues(topic: string): Promise<string[]> {
    const { records } = await fetchCommitted(this.leader, topic, 0);
    return records.map((r) => r.value?.toString() ?? '');
  }
}

// ---- 1. PreviousProducerId / NextProducerId in __transaction_state ------------------------

export interface TransactionLogAnswer {
  /** Every record of the transactional id, in log order. */
  records: TransactionLogValue[];
  /** Whether any record carries the tagged field (a tagged field is written only when set). */
  previousProducerIdWritten: boolean;
  nextProducerIdWritten: boolean;
}

/**
 * One transaction of version 2 committed (InitProducerId, Produce v12, EndTxn v5), then the
 * coordinator's own records of it read back from __transaction_state and decoded.
 */
export async function transactionLogProducerIds(lab: Lab): Promise<TransactionLogAnswer> {
  const { id } = await lab.commitOne('persisted');
  const { batches } = await fetchCommitted(lab.leader, TRANSACTION_STATE, 0);
  const records = batches
    .flatMap((b) => b.records)
    .map((r) => decodeTransactionLogRecord(r.key!, r.value))
    .filter((r) => r.transactionalId === id && r.value !== null)
    .map((r) => r.value!);
  return {
    records,
    previousProducerIdWritten: records.some((r) => r.previousProducerId !== undefined),
    nextProducerIdWritten: records.some((r) => r.nextProducerId !== undefined),
  };
}

// ---- 2. A retried InitProducerId ----------------------------------------------------------

export interface RetriedInitAnswer {
  /** The answer to the first InitProducerId, and to its copy sent after it was answered. */
  first: ProducerIdAndEpoch;
  copy: ProducerIdAndEpoch;
  /** The first instance's next request at the epoch it was given, each on a fresh id. */
  addPartitionsV3: string;
  endTxnV4: string;
  /** "not spoken" before 4.0. */
  endTxnV5: string;
  /** Produce v12, or v11 before 4.0 (verified at the coordinator since 3.6). */
  produce: { version: number; error: string };
  /** The same AddPartitionsToTxn v3 after one InitProducerId alone. */
  addPartitionsWithoutCopy: string;
}

/**
 * InitProducerId with no producer id, answered; then the same request again on another
 * connection, as the copy a client re-sent after a timeout that the coordinator meets late.
 * Then the first answer's holder sends its next request, one kind per transactional id.
 */
export async function retriedInitProducerId(lab: Lab): Promise<RetriedInitAnswer> {
  const topic = await lab.topic('retried');
  const other = await Connection.open(lab.coordinator.address);
  try {
    const retried = async (id: string) => {
      const first = await lab.init(id);
      return { first, copy: await lab.init(id, other) };
    };
    const addPartitions = async (id: string, producer: ProducerIdAndEpoch) => {
      const answer = await lab.coordinator.send(AddPartitionsToTxn, {
        transactionalId: id,
        ...producer,
        topics: [{ name: topic, partitions: [0] }],
      });
      return answer.resultsByTopic[0]!.resultsByPartition[0]!.error;
    };
    const endTxn = async (id: string, producer: ProducerIdAndEpoch, version: number) =>
      (await lab.coordinator.send(EndTxn, { transactionalId: id, ...producer, committed: true }, version))
        .error;

    const a = lab.fresh('retried');
    const { first, copy } = await retried(a);
    const addPartitionsV3 = await addPartitions(a, first);
    const b = lab.fresh('retried');
    const endTxnV4 = await endTxn(b, (await retried(b)).first, 4);
    const c = lab.fresh('retried');
    const endTxnV5 = lab.speaksVersion2() ? await endTxn(c, (await retried(c)).first, 5) : 'not spoken';
    const d = lab.fresh('retried');
    const version = lab.speaksVersion2() ? 12 : 11;
    const error = await lab.produce(d, topic, (await retried(d)).first, 0, 'late', version);
    const produce = { version, error };
    const e = lab.fresh('retried');
    const addPartitionsWithoutCopy = await addPartitions(e, await lab.init(e));
    return { first, copy, addPartitionsV3, endTxnV4, endTxnV5, produce, addPartitionsWithoutCopy };
  } finally {
    other.close();
  }
}

// ---- 3. A fenced producer's lower-epoch batch and the live producer -----------------------

export interface FencedBatchAnswer {
  /** The epoch the fenced transaction was aborted at (its ABORT marker) and the new instance's. */
  abortMarkerEpoch: number;
  grantedEpoch: number;
  /** The live producer's first batch, the fenced producer's late batch, then the live one's next two. */
  liveFirst: string;
  fencedLate: string;
  liveSecond: string;
  liveThird: string;
  /** The live producer's commit, and what read_committed reads afterwards. */
  liveCommit: string;
  committed: string[];
}

/**
 * Instance A at epoch 0 has a transaction open on p; instance B's InitProducerId fences it
 * (KAFKA-19367: one bump since 4.0.1, two in 4.0.0). B opens its own transaction on p; then A's
 * batch at epoch 0 reaches the leader (a late copy of its first batch, sequence 0), and B sends
 * its next two batches and commits.
 */
export async function fencedLowerEpochBatch(lab: Lab): Promise<FencedBatchAnswer> {
  const id = lab.fresh('fenced');
  const topic = await lab.topic('fenced');
  const a = await lab.init(id);
  const opened = await lab.produce(id, topic, a, 0, 'a0');
  if (opened !== 'NONE') throw new Error(`the first instance's Produce v12: ${opened}`);
  const b = await lab.init(id);
  const marker = await lab.lastMarker(topic, b.producerId);
  const liveFirst = await lab.produce(id, topic, b, 0, 'b0');
  const fencedLate = await lab.produce(id, topic, a, 0, 'a0');
  const liveSecond = await lab.produce(id, topic, b, 1, 'b1');
  const liveThird = await lab.produce(id, topic, b, 2, 'b2');
  const liveCommit = (await lab.endTxn(id, b, true)).error;
  if (liveCommit === 'NONE') await lab.completed(id);
  return {
    abortMarkerEpoch: marker?.producerEpoch ?? -1,
    grantedEpoch: b.producerEpoch,
    liveFirst,
    fencedLate,
    liveSecond,
    liveThird,
    liveCommit,
    committed: await lab.committedValues(topic),
  };
}

// ---- 4. The KIP-1228 marker rule ----------------------------------------------------------

export interface MarkerCase {
  /** How the marker was sent: WriteTxnMarkers version, the TransactionVersion it names, its epoch. */
  readonly version: 1 | 2;
  readonly transactionVersion: number;
  /** The marker's epoch against the producer's at the leader: the same, or one below. */
  readonly epoch: 'same' | 'below';
  /** Whether the producer's next transaction has a batch on the partition when the marker comes. */
  readonly nextTransactionOpen: boolean;
}

export interface MarkerAnswer extends MarkerCase {
  /** The leader's answer, or why the marker was not sent. */
  error: string;
  /** Whether the marker closed the open transaction: its record became readable at read_committed. */
  closedOpenTransaction: boolean;
}

export const MARKER_CASES: readonly MarkerCase[] = [
  { version: 2, transactionVersion: 2, epoch: 'same', nextTransactionOpen: true },
  { version: 2, transactionVersion: 2, epoch: 'same', nextTransactionOpen: false },
  { version: 2, transactionVersion: 1, epoch: 'same', nextTransactionOpen: true },
  { version: 1, transactionVersion: 0, epoch: 'same', nextTransactionOpen: true },
  { version: 1, transactionVersion: 0, epoch: 'below', nextTransactionOpen: true },
];

/**
 * A transaction of version 2 committed: its COMMIT marker carries the bumped epoch e+1, the
 * epoch of the producer's next transaction. When that transaction has a batch on the partition,
 * a late copy of the COMMIT marker (e+1) is stale. KIP-1228 makes the leader refuse a
 * version-2 marker that is not above the producer's epoch; KAFKA-19999 still accepts one at the
 * same epoch when no transaction is open, as a retry.
 */
export async function staleMarker(lab: Lab, c: MarkerCase): Promise<MarkerAnswer> {
  const { id, topic, next } = await lab.commitOne('marker');
  const previous = await lab.lastMarker(topic, next.producerId);
  if (previous?.marker?.type !== 'COMMIT') throw new Error(`no COMMIT marker on ${topic}`);
  if (c.nextTransactionOpen) {
    const opened = await lab.produce(id, topic, next, 0, 'next');
    if (opened !== 'NONE') throw new Error(`Produce v12 of the next transaction: ${opened}`);
  }
  const epoch = c.epoch === 'same' ? previous.producerEpoch : previous.producerEpoch - 1;
  if (!lab.leader.supports(WriteTxnMarkers, c.version))
    return { ...c, error: `v${c.version} not spoken`, closedOpenTransaction: false };
  const answer = await lab.leader.send(
    WriteTxnMarkers,
    {
      markers: [
        {
          producerId: next.producerId,
          producerEpoch: epoch,
          transactionResult: true,
          topics: [{ name: topic, partitionIndexes: [0] }],
          coordinatorEpoch: previous.marker.coordinatorEpoch,
          transactionVersion: c.transactionVersion,
        },
      ],
    },
    c.version,
  );
  const error = answer.markers[0]!.topics[0]!.resultsByPartition[0]!.error;
  const { highWatermark, lastStableOffset } = await listOffsets(lab.leader, topic, 0);
  const closed =
    c.nextTransactionOpen &&
    lastStableOffset === highWatermark &&
    (await lab.committedValues(topic)).includes('next');
  return { ...c, error, closedOpenTransaction: closed };
}

export async function staleMarkers(lab: Lab): Promise<MarkerAnswer[]> {
  const answers: MarkerAnswer[] = [];
  for (const c of MARKER_CASES) answers.push(await staleMarker(lab, c));
  return answers;
}

// ---- Beside the four: the first sequence of a producer the leader does not know ------------

export interface FirstSequenceAnswer {
  /** Produce v12 of a fresh producer's first batch at sequence 3, then at sequence 0. */
  atThree: string;
  thenZero: string;
}

/**
 * KAFKA-18202 (the switch tv2SequenceZero): a verified version-2 batch from a producer the leader
 * has no state for must start at sequence 0. A fresh producer's first batch goes at sequence 3,
 * then another at 0.
 */
export async function firstSequenceOfNewProducer(lab: Lab): Promise<FirstSequenceAnswer> {
  const id = lab.fresh('first-sequence');
  const topic = await lab.topic('first-sequence');
  const producer = await lab.init(id);
  const atThree = await lab.produce(id, topic, producer, 3, 'at three');
  const thenZero = await lab.produce(id, topic, producer, 0, 'at zero');
  return { atThree, thenZero };
}

// ---- All four, and the one-line answers of the table --------------------------------------

/** The answers of one broker; before 4.0 only the second question can be asked. */
export interface Answers {
  retriedInit: RetriedInitAnswer;
  transactionLog?: TransactionLogAnswer;
  fencedBatch?: FencedBatchAnswer;
  markers?: MarkerAnswer[];
}

export async function askAll(address: string): Promise<Answers> {
  const lab = await Lab.open(address);
  try {
    const retriedInit = await retriedInitProducerId(lab);
    if (!lab.speaksVersion2()) return { retriedInit };
    return {
      retriedInit,
      transactionLog: await transactionLogProducerIds(lab),
      fencedBatch: await fencedLowerEpochBatch(lab),
      markers: await staleMarkers(lab),
    };
  } finally {
    lab.close();
  }
}

function summarizeLog(log: TransactionLogAnswer): string {
  const written = [
    log.previousProducerIdWritten && 'PreviousProducerId',
    log.nextProducerIdWritten && 'NextProducerId',
  ].filter(Boolean);
  return written.length > 0
    ? `yes: ${written.join(', ')}`
    : `no: neither tag in ${log.records.length} records`;
}

function summarizeRetriedInit(r: RetriedInitAnswer): string {
  const coordinatorErrors = [...new Set([r.addPartitionsV3, r.endTxnV4, r.endTxnV5])].join('/');
  return (
    `${r.addPartitionsV3 === 'PRODUCER_FENCED' ? 'yes' : 'no'}: copy bumps ${r.first.producerEpoch}→${r.copy.producerEpoch}; ` +
    `AddPartitionsToTxn, EndTxn v4/v5 ${coordinatorErrors}; Produce v${r.produce.version} ${r.produce.error}`
  );
}

function summarizeFencedBatch(f: FencedBatchAnswer): string {
  const live = [...new Set([f.liveSecond, f.liveThird])].join('/');
  return (
    `${live === 'NONE' ? 'not blocked' : `blocked: live next batches ${live}`}; ` +
    `late batch ${f.fencedLate}; fence marker ${f.abortMarkerEpoch}, grant ${f.grantedEpoch}`
  );
}

function summarizeMarkers(markers: MarkerAnswer[]): string {
  const marker = (c: Partial<MarkerCase>) =>
    markers.find((m) => Object.entries(c).every(([k, v]) => m[k as keyof MarkerCase] === v))!;
  const strict = marker({ version: 2, transactionVersion: 2, nextTransactionOpen: true });
  const v1 = marker({ version: 1, epoch: 'same' });
  const closes = v1.closedOpenTransaction ? ', commits the open transaction' : '';
  if (strict.error.endsWith('not spoken')) return `no: v1 only; stale marker ${v1.error}${closes}`;
  const retry = marker({ version: 2, nextTransactionOpen: false }).error;
  return `${strict.error === 'NONE' ? 'no' : 'yes'}: stale v2 marker ${strict.error}; retry ${retry}; v1 ${v1.error}${closes}`;
}

/** The short answers of one release, one per question, for the table. */
export function summarize(a: Answers): [string, string, string, string] {
  const notAsked = 'not asked: no transaction version 2';
  return [
    a.transactionLog === undefined ? notAsked : summarizeLog(a.transactionLog),
    summarizeRetriedInit(a.retriedInit),
    a.fencedBatch === undefined ? notAsked : summarizeFencedBatch(a.fencedBatch),
    a.markers === undefined ? notAsked : summarizeMarkers(a.markers),
  ];
}
