// The readable form of a state, for traces and reports: Kafka's names instead of enum numbers,
// partition lists instead of bitmasks, node names instead of node numbers, derived HW and LSO.
import { asMap, asSet } from '../../checker/engine/model.ts';
import type { KafkaConfig } from './config.ts';
import {
  consumerName,
  dataPartitionName,
  idempotentName,
  nodeName,
  producerName,
  transactionalIdName,
} from './labels.ts';
import { highWatermark, lastStableOffset } from './partition.ts';
import {
  type FaultBudget,
  type Message,
  type State,
  Api,
  BatchStatus,
  Decision,
  Instance,
  LEADER_BASE,
  NO_STATE,
  Told,
  apiName,
  batchKindName,
  errName,
  KAFKA_MAX_EPOCH,
  tmName,
  txnStateName,
} from './state.ts';
import { bits } from './util.ts';

// The shape of the view, for renderers that read traces.
export type ProducerView = {
  name: string;
  status: string;
  state: string;
  pid: number;
  epoch: number;
  epochBumpRequired: boolean;
  transactionStarted: boolean;
  partitionsInTransaction: string[];
  newPartitionsInTransaction: string[];
  inFlightRequest: string;
  nextSequence: readonly number[];
  batches: { partition: string; sequence: number; status: string; value: number }[];
  connections: readonly number[];
  transactionsBegun: number;
  recordsSent: number;
  /** When the transaction versions of a run vary: the version of the producer's current (or next) transaction. */
  transactionVersion?: number;
  /** While a completion has read a different version for the next transaction (KAFKA-18227). */
  nextTransactionVersion?: number;
  generation?: number;
  inputPosition?: number;
  offsetToCommit?: number;
  offsetsAdded?: boolean;
  offsetsCommitted?: boolean;
};
export type TransactionView =
  | { transactionalId: string; known: false }
  | {
      transactionalId: string;
      known: true;
      producerId: number;
      producerEpoch: number;
      lastProducerEpoch: number;
      state: string;
      pendingState: string;
      partitions: string[];
      clientTransaction: string;
      /** With asynchronous appends only. */
      hasFailedEpochFence?: boolean;
      /** With a maxEpoch below Kafka's only (the producer id can rotate). */
      previousProducerId?: number;
      nextProducerId?: number;
      /** When the instances' clients differ in transaction version only. */
      transactionVersion?: number;
    };
export type TransactionLogView =
  | { transactionalId: string; written: false }
  | {
      transactionalId: string;
      written: true;
      producerId: number;
      producerEpoch: number;
      state: string;
      partitions: string[];
      previousState: string;
      /** With a maxEpoch below Kafka's only. */
      previousProducerId?: number;
      nextProducerId?: number;
      /** When the generation writes it (persistLastEpoch). */
      lastProducerEpoch?: number;
    };
export type LogEntryView = {
  offset: number;
  kind: string;
  pid: number;
  epoch: number;
  sequence: number;
  transactional: boolean;
  value: number;
  clientTransaction: string;
  record: number;
};
export type PartitionView = {
  name: string;
  highWatermark: number;
  lastStableOffset: number;
  log: LogEntryView[];
  producers: {
    pid: number;
    epoch: number;
    lastSequences: readonly number[];
    coordinatorEpoch: number;
    currentTxnFirstOffset: number;
  }[];
};
/** A request has every field; a response has api (ending in " response"), error, pid, epoch, partitions. */
export type MessageView = {
  api: string;
  error?: string;
  transactionalId?: string;
  pid: number;
  epoch: number;
  partitions: string[];
  commit?: boolean;
  sequence?: number;
  coordinatorEpoch?: number;
  value?: number;
  generation?: number;
  clientTransaction?: string;
};
export type AppendView = {
  transactionalId: string;
  state: string;
  producerId: number;
  producerEpoch: number;
  partitions: string[];
  epochFence: boolean;
  answers: string;
};
export type ChannelView = { from: string; to: string; connection: number; messages: MessageView[] };
export type ConsumerView = {
  name: string;
  isolation: string;
  position: readonly number[];
  delivered: { partition: string; offset: number; clientTransaction: string; record: number }[];
};
export type HistoryView = {
  clientTransaction: string;
  decision: string;
  told: string;
  recordsSent: number;
  prepared: boolean;
  fenced: boolean;
  /** With transactional.id expiries only. */
  expired?: boolean;
};
export type IdempotentProducerView = {
  name: string;
  pid: number;
  epoch: number;
  fatal: boolean;
  /** TxnPartitionEntry per partition. */
  sequences: {
    partition: string;
    pid: number;
    epoch: number;
    nextSequence: number;
    lastAckedSequence: number;
  }[];
  batches: {
    partition: string;
    status: string;
    pid: number;
    epoch: number;
    sequence: number;
    retried: boolean;
    record: number;
  }[];
  connections: readonly number[];
  recordsSent: number;
};
export type KafkaView = {
  producers: ProducerView[];
  /** With idempotent producers only. */
  idempotentProducers?: IdempotentProducerView[];
  coordinator: {
    coordinatorEpoch: number;
    /** With asynchronous loading only: the coordinator is reading __transaction_state. */
    loading?: boolean;
    nextProducerId: number;
    transactions: TransactionView[];
    transactionLog: TransactionLogView[];
    /** With asynchronous appends only: the __transaction_state appends in flight. */
    pendingAppends?: AppendView[];
    /** With marker timeouts only: the marker channel's connection to each leader. */
    markerConnections?: Record<string, number>;
  };
  partitions: PartitionView[];
  consumers: ConsumerView[];
  network: ChannelView[];
  /** Faults added after the first traces were saved show only when the spec allows them. */
  faultsLeft: Partial<FaultBudget>;
  /** With transactionVersionChanges only: the finalized transaction.version. */
  finalizedTransactionVersion?: number;
  history: HistoryView[];
  group?: { generation: number };
};

const names = <T extends Record<string, number>>(table: T): Record<number, string> =>
  Object.fromEntries(Object.entries(table).map(([k, v]) => [v, k]));
const instanceName = names(Instance);
const batchStatusName = names(BatchStatus);
const decisionName = names(Decision);
const toldName = names(Told);

/** Whose a record is: its client transaction, or for a non-transactional record its idempotent producer. */
function recordOwner(cfg: KafkaConfig, transactional: boolean, ghostTxn: number): string {
  return transactional ? clientTxnName(cfg, ghostTxn) : idempotentName(ghostTxn);
}

export function clientTxnName(cfg: KafkaConfig, txn: number): string {
  if (txn < 0) return 'none';
  return `${producerName(cfg, Math.floor(txn / cfg.transactionsPerInstance))}/T${txn % cfg.transactionsPerInstance}`;
}

export function partitionName(cfg: KafkaConfig, p: number): string {
  return p === cfg.partitions ? '__consumer_offsets' : dataPartitionName(p);
}

/**
 * A set of partitions (a bitmask) by name, written to traces as a set, as Kafka keeps them:
 * TransactionManager's partitionsInTransaction and newPartitionsInTransaction (Set, 3.9),
 * TransactionMetadata.topicPartitions and TxnTransitMetadata's (mutable and immutable Set, 3.9).
 */
function partitionSet(cfg: KafkaConfig, mask: number): string[] {
  return asSet(bits(mask).map((q) => partitionName(cfg, q)));
}

function stateName(state: number): string {
  return state === NO_STATE ? 'none' : txnStateName[state]!;
}

/** AddPartitionsToTxn and AddOffsetsToTxn carry a set of partitions; the others one partition. */
function messagePartitions(cfg: KafkaConfig, m: Message): string[] {
  const isSet = m.api === Api.AddPartitionsToTxn || m.api === Api.AddOffsetsToTxn;
  if (isSet) return partitionSet(cfg, m.partitions);
  return asSet(
    m.api === Api.Produce || m.api === Api.WriteTxnMarkers || m.api === Api.TxnOffsetCommit
      ? [partitionName(cfg, m.partitions)]
      : [],
  );
}

function messageView(cfg: KafkaConfig, m: Message): MessageView {
  const partitions = messagePartitions(cfg, m);
  if (m.response) {
    return {
      api: `${apiName[m.api]} response`,
      error: errName[m.error]!,
      pid: m.pid,
      epoch: m.epoch,
      partitions,
    };
  }
  return {
    api: apiName[m.api]!,
    transactionalId: m.txnId < 0 ? 'none' : transactionalIdName(m.txnId),
    pid: m.pid,
    epoch: m.epoch,
    partitions,
    commit: m.commit,
    sequence: m.seq,
    coordinatorEpoch: m.coordinatorEpoch,
    value: m.value,
    generation: m.generation,
    clientTransaction: recordOwner(cfg, m.api !== Api.Produce || m.txnId >= 0, m.ghostTxn),
  };
}

const laterFaults: readonly (keyof FaultBudget)[] = [
  'appendFailures',
  'markerTimeouts',
  'transactionalIdExpiries',
  'producerStateExpiries',
  'transactionVersionChanges',
];

function faultsLeft(cfg: KafkaConfig, faults: FaultBudget): Partial<FaultBudget> {
  const hidden = laterFaults.filter((k) => cfg.faults[k] === 0);
  if (hidden.length === 0) return faults;
  const out: Partial<FaultBudget> = { ...faults };
  for (const k of hidden) delete out[k];
  return out;
}

export function kafkaView(cfg: KafkaConfig, s: State): KafkaView {
  const async = cfg.coordinatorAppends === 'async';
  const rotates = cfg.maxEpoch < KAFKA_MAX_EPOCH;
  const mixedVersions = new Set(cfg.clientRules.map((r) => r.tv2)).size > 1;
  const versionsVary = mixedVersions || cfg.faults.transactionVersionChanges > 0;
  const view: KafkaView = {
    producers: s.producers.map((p, i) => ({
      name: producerName(cfg, i),
      status: instanceName[p.status]!,
      state: tmName[p.tm]!,
      pid: p.pid,
      epoch: p.epoch,
      epochBumpRequired: p.bumpRequired,
      transactionStarted: p.txnStarted,
      partitionsInTransaction: partitionSet(cfg, p.added),
      newPartitionsInTransaction: partitionSet(cfg, p.pendingAdd),
      inFlightRequest: p.request === null ? 'none' : apiName[p.request.api]!,
      nextSequence: p.nextSeq,
      batches: p.batches.map((b) => ({
        partition: partitionName(cfg, b.partition),
        sequence: b.seq,
        status: batchStatusName[b.status]!,
        value: b.value,
      })),
      connections: p.conns,
      transactionsBegun: p.txnsBegun,
      recordsSent: p.recordsSent,
      ...(versionsVary ? { transactionVersion: p.transactionV2 ? 2 : 1 } : {}),
      ...(p.nextTransactionV2 !== p.transactionV2
        ? { nextTransactionVersion: p.nextTransactionV2 ? 2 : 1 }
        : {}),
      ...(s.group === null
        ? {}
        : {
            generation: p.generation,
            inputPosition: p.inputPosition,
            offsetToCommit: p.offsetToCommit,
            offsetsAdded: p.offsetsAdded,
            offsetsCommitted: p.offsetsCommitted,
          }),
    })),
    coordinator: {
      coordinatorEpoch: s.coordinator.epoch,
      ...(cfg.coordinatorLoading === 'async' ? { loading: s.coordinator.loading } : {}),
      nextProducerId: s.coordinator.nextPid,
      transactions: s.coordinator.metadata.map((md, t) =>
        md === null
          ? { transactionalId: transactionalIdName(t), known: false }
          : {
              transactionalId: transactionalIdName(t),
              known: true,
              producerId: md.pid,
              producerEpoch: md.epoch,
              lastProducerEpoch: md.lastEpoch,
              state: stateName(md.state),
              pendingState: stateName(md.pendingState),
              partitions: partitionSet(cfg, md.partitions),
              clientTransaction: clientTxnName(cfg, md.ghostTxn),
              ...(async ? { hasFailedEpochFence: md.hasFailedEpochFence } : {}),
              ...(rotates ? { previousProducerId: md.prevPid, nextProducerId: md.nextPid } : {}),
              ...(versionsVary ? { transactionVersion: md.transactionVersion } : {}),
            },
      ),
      transactionLog: s.coordinator.log.map((r, t) =>
        r === null
          ? { transactionalId: transactionalIdName(t), written: false }
          : {
              transactionalId: transactionalIdName(t),
              written: true,
              producerId: r.pid,
              producerEpoch: r.epoch,
              state: stateName(r.state),
              partitions: partitionSet(cfg, r.partitions),
              previousState: stateName(r.ghostPrevState),
              ...(rotates ? { previousProducerId: r.prevPid, nextProducerId: r.nextPid } : {}),
              ...(cfg.rules.persistLastEpoch ? { lastProducerEpoch: r.lastEpoch } : {}),
            },
      ),
    },
    partitions: s.partitions.map((part, q) => ({
      name: partitionName(cfg, q),
      highWatermark: highWatermark(part),
      lastStableOffset: lastStableOffset(part),
      log: part.log.map((b, offset) => ({
        offset,
        kind: batchKindName[b.kind]!,
        pid: b.pid,
        epoch: b.epoch,
        sequence: b.seq,
        transactional: b.transactional,
        value: b.value,
        clientTransaction: recordOwner(cfg, b.transactional, b.ghostTxn),
        record: b.ghostRecord,
      })),
      producers: part.producers.map((e) => ({
        pid: e.pid,
        epoch: e.epoch,
        lastSequences: e.lastSeqs,
        coordinatorEpoch: e.coordinatorEpoch,
        currentTxnFirstOffset: e.txnFirstOffset,
      })),
    })),
    consumers: s.consumers.map((c, i) => ({
      name: consumerName(i),
      isolation: c.readCommitted ? 'read_committed' : 'read_uncommitted',
      position: c.position,
      delivered: c.delivered.map((d) => ({
        partition: partitionName(cfg, d.partition),
        offset: d.offset,
        clientTransaction: recordOwner(
          cfg,
          s.partitions[d.partition]!.log[d.offset]!.transactional,
          d.ghostTxn,
        ),
        record: d.ghostRecord,
      })),
    })),
    network: s.network.map((ch) => ({
      from: nodeName(cfg, ch.from),
      to: nodeName(cfg, ch.to),
      connection: ch.conn,
      messages: ch.messages.map((m) => messageView(cfg, m)),
    })),
    faultsLeft: faultsLeft(cfg, s.faults),
    ...(cfg.faults.transactionVersionChanges > 0
      ? { finalizedTransactionVersion: s.transactionVersion }
      : {}),
    history: s.history.map((h, t) => ({
      clientTransaction: clientTxnName(cfg, t),
      decision: decisionName[h.decision]!,
      told: toldName[h.told]!,
      recordsSent: h.recordsSent,
      prepared: h.prepared,
      fenced: h.fenced,
      ...(cfg.faults.transactionalIdExpiries > 0 ? { expired: h.expired } : {}),
    })),
  };
  if (s.group !== null) view.group = { generation: s.group.generation };
  if (cfg.idempotentProducers > 0) {
    view.idempotentProducers = s.idempotentProducers.map((p, j) => ({
      name: idempotentName(j),
      pid: p.pid,
      epoch: p.epoch,
      fatal: p.fatal,
      sequences: p.sequences.map((q, k) => ({
        partition: partitionName(cfg, k),
        pid: q.pid,
        epoch: q.epoch,
        nextSequence: q.nextSeq,
        lastAckedSequence: q.lastAcked,
      })),
      batches: p.batches.map((b) => ({
        partition: partitionName(cfg, b.partition),
        status: batchStatusName[b.status]!,
        pid: b.pid,
        epoch: b.epoch,
        sequence: b.seq,
        retried: b.retried,
        record: b.record,
      })),
      connections: p.conns,
      recordsSent: p.recordsSent,
    }));
  }
  if (cfg.faults.markerTimeouts > 0) {
    view.coordinator.markerConnections = asMap(
      Object.fromEntries(s.coordinator.markerConns.map((c, q) => [nodeName(cfg, LEADER_BASE + q), c])),
    );
  }
  if (async) {
    view.coordinator.pendingAppends = s.coordinator.appends.map((a) => ({
      transactionalId: transactionalIdName(a.txnId),
      state: stateName(a.transit.state),
      producerId: a.transit.pid,
      producerEpoch: a.transit.epoch,
      partitions: partitionSet(cfg, a.transit.partitions),
      epochFence: a.epochFence,
      answers: a.request === null ? 'none' : `${nodeName(cfg, a.from)} (${apiName[a.request.api]})`,
    }));
  }
  return view;
}
