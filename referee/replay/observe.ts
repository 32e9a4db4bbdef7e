// What a replay compares after each step, read the same way from the model and from the broker:
// the coordinator's transactions (DescribeTransactions), each data partition's log, high
// watermark, LSO and producer state (a read_uncommitted Fetch, DescribeProducers), and the
// offsets a read_committed consumer reads (a read_committed Fetch). Producer ids are the model's:
// the broker's are translated through the ids bound so far (ProducerIds).
import type { KafkaConfig } from '../../model/kafka/config.ts';
import type { State } from '../../model/kafka/state.ts';
import { kafkaView } from '../../model/kafka/view.ts';
import type { Connection } from '../driver/connection.ts';
import { fetchCommitted } from '../driver/driver.ts';
import { DescribeProducers, DescribeTransactions, Fetch, IsolationLevel } from '../driver/messages.ts';
import type { RecordBatch } from '../driver/records.ts';

/** A producer id as the model names it; a broker id not bound to one shows as `broker pid N`. */
export type ProducerId = number | string;

export interface TransactionObservation {
  readonly transactionalId: string;
  readonly known: boolean;
  readonly state?: string;
  readonly producerId?: ProducerId;
  readonly producerEpoch?: number;
  /** The partitions still in the transaction (no marker written yet). */
  readonly partitions?: readonly string[];
}
export interface BatchObservation {
  readonly offset: number;
  readonly kind: string;
  readonly producerId: ProducerId;
  readonly producerEpoch: number;
  readonly sequence: number;
}
export interface ProducerObservation {
  readonly producerId: ProducerId;
  readonly producerEpoch: number;
  readonly lastSequence: number;
  readonly currentTxnStartOffset: number;
}
export interface PartitionObservation {
  readonly partition: string;
  readonly highWatermark: number;
  readonly lastStableOffset: number;
  readonly log: readonly BatchObservation[];
  readonly producers: readonly ProducerObservation[];
  /** The offsets a read_committed consumer reads from the start. */
  readonly readCommitted: readonly number[];
}
export interface Observation {
  readonly transactions: readonly TransactionObservation[];
  readonly partitions: readonly PartitionObservation[];
}

/** Where the replay's names live on the broker: one topic, and one transactional.id per model id. */
export interface BrokerNames {
  readonly topic: string;
  transactionalId(t: number): string;
}

/** The producer ids of the model and of the broker, bound one to one as the replay meets them. */
export class ProducerIds {
  private readonly toModel = new Map<number, number>();
  private readonly toBroker = new Map<number, number>();

  /** Binds a model id to a broker id when neither is bound yet; false when either is bound elsewhere. */
  bind(model: number, broker: number): boolean {
    if (model < 0 || broker < 0) return model === broker;
    const known = this.toBroker.get(model);
    if (known !== undefined) return known === broker;
    if (this.toModel.has(broker)) return false;
    this.toBroker.set(model, broker);
    this.toModel.set(broker, model);
    return true;
  }
  /** The broker's id for a model id the replay sends; -1 stays -1. */
  broker(model: number): number {
    if (model < 0) return model;
    const id = this.toBroker.get(model);
    if (id === undefined) throw new Error(`model producer id ${model} was never bound to a broker id`);
    return id;
  }
  model(broker: number): ProducerId {
    return broker < 0 ? broker : (this.toModel.get(broker) ?? `broker pid ${broker}`);
  }
}

const byOffset = (a: { offset: number }, b: { offset: number }): number => a.offset - b.offset;
const byProducer = (a: ProducerObservation, b: ProducerObservation): number =>
  String(a.producerId).localeCompare(String(b.producerId), 'en', { numeric: true });

/** The model's side of a step: its view's coordinator and data partitions. */
export function observeModel(cfg: KafkaConfig, s: State): Observation {
  const view = kafkaView(cfg, s);
  const transactions = view.coordinator.transactions.map((t) =>
    t.known
      ? {
          transactionalId: t.transactionalId,
          known: true,
          state: t.state,
          producerId: t.producerId,
          producerEpoch: t.producerEpoch,
          partitions: [...t.partitions].sort(),
        }
      : { transactionalId: t.transactionalId, known: false },
  );
  const partitions = view.partitions.slice(0, cfg.partitions).map((p) => {
    const log = p.log.map((e) => ({
      offset: e.offset,
      kind: e.kind,
      producerId: e.pid,
      producerEpoch: e.epoch,
      sequence: e.sequence,
    }));
    // What a read_committed consumer reads: data below the LSO that is not transactional, or whose
    // producer's next marker is a commit (Kafka's aborted-transaction index says the same).
    const readCommitted = log
      .filter((e) => e.kind === 'Data' && e.offset < p.lastStableOffset)
      .filter((e) => {
        const entry = p.log[e.offset]!;
        if (!entry.transactional) return true;
        const marker = log.find(
          (m) => m.offset > e.offset && m.producerId === e.producerId && m.kind !== 'Data',
        );
        return marker?.kind === 'Commit';
      })
      .map((e) => e.offset);
    return {
      partition: p.name,
      highWatermark: p.highWatermark,
      lastStableOffset: p.lastStableOffset,
      log,
      producers: p.producers
        .map((e) => ({
          producerId: e.pid,
          producerEpoch: e.epoch,
          lastSequence: e.lastSequences.at(-1) ?? -1,
          currentTxnStartOffset: e.currentTxnFirstOffset,
        }))
        .sort(byProducer),
      readCommitted,
    };
  });
  return { transactions, partitions };
}

function batchKind(b: RecordBatch): string {
  if (!b.control) return 'Data';
  return b.marker?.type === 'COMMIT' ? 'Commit' : b.marker?.type === 'ABORT' ? 'Abort' : 'Control';
}

/** Where the replay reads: the coordinator, and each partition's leader (one broker plays all). */
export interface Readers {
  readonly coordinator: Connection;
  readonly leaders: readonly Connection[];
}

/** The broker's side: producer ids still the broker's (see `translate`). */
export async function observeBroker(
  readers: Readers,
  names: BrokerNames,
  cfg: KafkaConfig,
): Promise<Observation> {
  const ids = Array.from({ length: cfg.transactionalIds }, (_, t) => names.transactionalId(t));
  const described = await readers.coordinator.send(DescribeTransactions, { transactionalIds: ids });
  const transactions = described.transactionStates.map((d, t) => {
    const transactionalId = `t${t}`;
    if (d.error === 'TRANSACTIONAL_ID_NOT_FOUND') return { transactionalId, known: false };
    if (d.error !== 'NONE') throw new Error(`DescribeTransactions ${d.transactionalId}: ${d.error}`);
    return {
      transactionalId,
      known: true,
      state: d.transactionState,
      producerId: d.producerId,
      producerEpoch: d.producerEpoch,
      partitions: d.topics.flatMap((x) => x.partitions.map((p) => `p${p}`)).sort(),
    };
  });
  const indexes = Array.from({ length: cfg.partitions }, (_, p) => p);
  const partitions = [];
  for (const p of indexes) {
    const connection = readers.leaders[p]!;
    const producers = await connection.send(DescribeProducers, {
      topics: [{ name: names.topic, partitionIndexes: [p] }],
    });
    const fetched = await connection.send(Fetch, {
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1 << 20,
      isolationLevel: IsolationLevel.READ_UNCOMMITTED,
      topics: [
        { topic: names.topic, partitions: [{ partition: p, fetchOffset: 0, partitionMaxBytes: 1 << 20 }] },
      ],
    });
    const data = fetched.responses[0]!.partitions[0]!;
    if (fetched.error !== 'NONE' || data.error !== 'NONE')
      throw new Error(`Fetch ${names.topic}-${p}: ${fetched.error} / ${data.error}`);
    const committed = await fetchCommitted(connection, names.topic, p);
    const described = producers.topics[0]!.partitions.find((x) => x.partitionIndex === p)!;
    if (described.error !== 'NONE')
      throw new Error(`DescribeProducers ${names.topic}-${p}: ${described.error}`);
    partitions.push({
      partition: `p${p}`,
      highWatermark: data.highWatermark,
      lastStableOffset: data.lastStableOffset,
      log: data.batches.map((b) => ({
        offset: b.baseOffset,
        kind: batchKind(b),
        producerId: b.producerId,
        producerEpoch: b.producerEpoch,
        sequence: b.baseSequence,
      })),
      producers: described.activeProducers.map((e) => ({
        producerId: e.producerId,
        producerEpoch: e.producerEpoch,
        lastSequence: e.lastSequence,
        currentTxnStartOffset: e.currentTxnStartOffset,
      })),
      readCommitted: committed.records.map((r) => r.offset).sort((a, b) => a - b),
    });
  }
  return { transactions, partitions };
}

/**
 * The broker's observation in the model's producer ids. A coordinator's transaction binds its
 * producer id to the model's when neither is bound yet (the broker picks its own ids).
 */
export function translate(broker: Observation, model: Observation, ids: ProducerIds): Observation {
  broker.transactions.forEach((b, t) => {
    const m = model.transactions[t];
    if (b.known && m?.known === true) ids.bind(m.producerId as number, b.producerId as number);
  });
  const pid = (id: ProducerId): ProducerId => (typeof id === 'number' ? ids.model(id) : id);
  return {
    transactions: broker.transactions.map((t) =>
      t.producerId === undefined ? t : { ...t, producerId: pid(t.producerId) },
    ),
    partitions: broker.partitions.map((p) => ({
      ...p,
      log: p.log.map((b) => ({ ...b, producerId: pid(b.producerId) })).sort(byOffset),
      producers: p.producers.map((e) => ({ ...e, producerId: pid(e.producerId) })).sort(byProducer),
    })),
  };
}
