// An idempotent producer: a KafkaProducer with enable.idempotence and no transactional.id. It
// takes a producer id with InitProducerId, numbers its batches per partition and never talks to a
// transaction coordinator. Its Sender follows the Java client of its generation:
// - KIP-360 (2.5+, TransactionManager/Sender@3.9): a gap in the sequences bumps the epoch on the
//   client (bumpIdempotentProducerEpoch) and the partition's sequences restart at 0; the other
//   partitions restart once their batch in flight completes (maybeUpdateProducerIdAndEpoch).
// - 0.11.0 (Sender@0.11.0): OUT_OF_ORDER_SEQUENCE_NUMBER or an expired batch that was retried
//   resets the producer id (resetProducerId): a new InitProducerId, every sequence from 0.
// Modelling bound: max.in.flight.requests.per.connection=1 (0.11.0 required it with idempotence),
// so a partition has at most one batch in flight.
import type { KafkaConfig, Rules } from './config.ts';
import { generateProducerId } from './coordinator.ts';
import { request, send } from './network.ts';
import {
  type IdempotentBatch,
  type IdempotentProducer,
  type PartitionSequences,
  type Response,
  type State,
  Api,
  BatchStatus,
  Err,
  IDEMPOTENT_BASE,
  LEADER_BASE,
  NO_EPOCH,
  NO_PID,
  withField,
} from './state.ts';
import { setAt } from './util.ts';

/** A partition's sequences from the beginning under (pid, epoch). */
function sequencesFrom(pid: number, epoch: number): PartitionSequences {
  return { pid, epoch, nextSeq: 0, lastAcked: -1 };
}

/** The partition's sequences belong to the batch's (or producer's) producer id and epoch. */
function sequencesOf(seqs: PartitionSequences, pid: number, epoch: number): boolean {
  return seqs.pid === pid && seqs.epoch === epoch;
}

/** What a batch waiting in the accumulator carries: no producer id, epoch or sequence yet. */
const UNSENT = { status: BatchStatus.Queued, pid: NO_PID, epoch: NO_EPOCH, seq: -1 } as const;

export function initialIdempotentProducer(partitions: number): IdempotentProducer {
  return {
    pid: NO_PID,
    epoch: NO_EPOCH,
    fatal: false,
    sequences: new Array<PartitionSequences>(partitions).fill(sequencesFrom(NO_PID, NO_EPOCH)),
    batches: [],
    conns: new Array<number>(partitions).fill(0),
    recordsSent: 0,
  };
}

function put(s: State, j: number, p: IdempotentProducer): State {
  return withField(s, 'idempotentProducers', setAt(s.idempotentProducers, j, p));
}

function inFlight(p: IdempotentProducer, partition: number): number {
  return p.batches.findIndex((b) => b.partition === partition && b.status === BatchStatus.InFlight);
}

// ---- InitProducerId ---------------------------------------------------------------------------

/**
 * The Sender asks for a producer id when it has none (bumpIdempotentEpochAndResetIdIfNeeded). Any
 * broker answers an InitProducerId without transactional.id from its ProducerIdManager with epoch 0
 * (TransactionCoordinator.handleInitProducerId, 0.11.0 onwards); nothing on the way reads or
 * changes protocol state, so the model takes request and answer as one step.
 */
export function canInitProducerId(p: IdempotentProducer): boolean {
  return !p.fatal && p.pid === NO_PID;
}

export function initProducerId(s: State, j: number): State {
  const [coordinator, pid] = generateProducerId(s.coordinator);
  return put(withField(s, 'coordinator', coordinator), j, { ...s.idempotentProducers[j]!, pid, epoch: 0 });
}

// ---- Application and Sender --------------------------------------------------------------------

export function canSend(cfg: KafkaConfig, p: IdempotentProducer): boolean {
  return !p.fatal && p.recordsSent < cfg.recordsPerIdempotentProducer;
}

/** send(record to partition): the record waits in the accumulator. */
export function sendRecord(s: State, j: number, partition: number): State {
  const p = s.idempotentProducers[j]!;
  const batch: IdempotentBatch = { partition, ...UNSENT, retried: false, record: p.recordsSent };
  return put(s, j, { ...p, batches: [...p.batches, batch], recordsSent: p.recordsSent + 1 });
}

/** The first queued batch of a partition drains once there is a producer id and nothing in flight there. */
export function canSendProduce(p: IdempotentProducer, partition: number): boolean {
  if (p.fatal || p.pid === NO_PID || inFlight(p, partition) >= 0) return false;
  return p.batches.some((b) => b.partition === partition && b.status === BatchStatus.Queued);
}

function produceRequest(j: number, b: IdempotentBatch) {
  return request(Api.Produce, {
    pid: b.pid,
    epoch: b.epoch,
    partitions: b.partition,
    seq: b.seq,
    ghostTxn: j,
    ghostRecord: b.record,
  });
}

function transmit(s: State, j: number, p: IdempotentProducer, b: IdempotentBatch): State {
  const network = send(
    s.network,
    IDEMPOTENT_BASE + j,
    LEADER_BASE + b.partition,
    p.conns[b.partition]!,
    produceRequest(j, b),
  );
  return withField(put(s, j, p), 'network', network);
}

/**
 * RecordAccumulator.drain: sequences that belong to an older producer id or epoch restart at 0
 * (maybeUpdateProducerIdAndEpoch); the batch takes the next one.
 */
export function sendProduce(s: State, j: number, partition: number): State {
  const p = s.idempotentProducers[j]!;
  const index = p.batches.findIndex((b) => b.partition === partition && b.status === BatchStatus.Queued);
  const current = p.sequences[partition]!;
  const seqs = sequencesOf(current, p.pid, p.epoch) ? current : sequencesFrom(p.pid, p.epoch);
  const batch: IdempotentBatch = {
    ...p.batches[index]!,
    status: BatchStatus.InFlight,
    pid: p.pid,
    epoch: p.epoch,
    seq: seqs.nextSeq,
  };
  const next: IdempotentProducer = {
    ...p,
    batches: setAt(p.batches, index, batch),
    sequences: setAt(p.sequences, partition, { ...seqs, nextSeq: seqs.nextSeq + 1 }),
  };
  return transmit(s, j, next, batch);
}

export function canTimeOutProduce(p: IdempotentProducer, partition: number): boolean {
  return !p.fatal && inFlight(p, partition) >= 0;
}

/** request.timeout.ms: the connection is closed and the batch sent again, as it was, on a new one. */
export function produceTimeout(s: State, j: number, partition: number): State {
  const p = s.idempotentProducers[j]!;
  const index = inFlight(p, partition);
  const batch: IdempotentBatch = { ...p.batches[index]!, retried: true };
  const next: IdempotentProducer = {
    ...p,
    batches: setAt(p.batches, index, batch),
    conns: setAt(p.conns, partition, p.conns[partition]! + 1),
  };
  return transmit(s, j, next, batch);
}

/**
 * delivery.timeout.ms: the batch in flight fails although its bytes may still reach the leader.
 * A batch that was retried leaves its sequence unresolved; with nothing else in flight there,
 * maybeResolveSequences finds the gap at once and bumps the epoch (KIP-360), where 0.11.0 reset
 * the producer id.
 */
export function batchExpired(cfg: KafkaConfig, s: State, j: number, partition: number): State {
  const p = s.idempotentProducers[j]!;
  const index = inFlight(p, partition);
  const expired = p.batches[index]!;
  const failed: IdempotentProducer = {
    ...withoutBatch(p, index),
    conns: setAt(p.conns, partition, p.conns[partition]! + 1),
  };
  if (!expired.retried) return put(s, j, failed);
  return put(
    s,
    j,
    cfg.idempotentClientRules.kip360 ? bumpEpoch(cfg, failed, partition) : resetProducerId(failed),
  );
}

/** resetProducerId (0.11.0): the producer id is dropped and a new one asked for; every sequence restarts. */
function resetProducerId(p: IdempotentProducer): IdempotentProducer {
  return { ...p, pid: NO_PID, epoch: NO_EPOCH };
}

/**
 * requestEpochBumpForPartition + bumpIdempotentProducerEpoch (KIP-360): the epoch goes up by one
 * on the client, or at the largest epoch the producer id is reset; the partition's sequences
 * start at the beginning under the new epoch.
 */
function bumpEpoch(cfg: KafkaConfig, p: IdempotentProducer, partition: number): IdempotentProducer {
  if (p.epoch >= cfg.maxEpoch) return resetProducerId(p);
  const epoch = p.epoch + 1;
  return { ...p, epoch, sequences: setAt(p.sequences, partition, sequencesFrom(p.pid, epoch)) };
}

// ---- Produce answers ----------------------------------------------------------------------------

/** The client has closed the connection the answer travels on, or has failed: it is ignored. */
export function acceptsResponse(s: State, j: number, from: number, conn: number): boolean {
  const p = s.idempotentProducers[j]!;
  return !p.fatal && p.conns[from - LEADER_BASE] === conn;
}

/** The batch goes to the accumulator again, to be drained under the current producer id and epoch. */
function requeue(p: IdempotentProducer, index: number): IdempotentProducer {
  const b: IdempotentBatch = { ...p.batches[index]!, ...UNSENT, retried: true };
  return { ...p, batches: setAt(p.batches, index, b) };
}

/** TransactionManager.isNextSequence: the batch follows the partition's last acknowledged sequence. */
function isNextSequence(p: IdempotentProducer, b: IdempotentBatch): boolean {
  const seqs = p.sequences[b.partition]!;
  return sequencesOf(seqs, b.pid, b.epoch) && b.seq === seqs.lastAcked + 1;
}

function acknowledge(p: IdempotentProducer, index: number): IdempotentProducer {
  const b = p.batches[index]!;
  const seqs = p.sequences[b.partition]!;
  const sequences = sequencesOf(seqs, b.pid, b.epoch)
    ? setAt(p.sequences, b.partition, { ...seqs, lastAcked: Math.max(seqs.lastAcked, b.seq) })
    : p.sequences;
  return { ...withoutBatch(p, index), sequences };
}

export function handleProduceResponse(cfg: KafkaConfig, s: State, j: number, resp: Response): State {
  const p = s.idempotentProducers[j]!;
  const index = p.batches.findIndex(
    (b) =>
      b.status === BatchStatus.InFlight &&
      b.partition === resp.partitions &&
      b.pid === resp.pid &&
      b.epoch === resp.epoch &&
      b.seq === resp.seq,
  );
  if (index < 0) return s;
  const rules = cfg.idempotentClientRules;
  const b = p.batches[index]!;
  if (resp.error === Err.NONE) return put(s, j, acknowledge(p, index));
  if (isFatal(rules, resp.error)) return put(s, j, { ...withoutBatch(p, index), fatal: true });
  if (retriedAsItIs(rules, p, b, resp.error)) {
    const again: IdempotentBatch = { ...b, retried: true };
    return transmit(s, j, { ...p, batches: setAt(p.batches, index, again) }, again);
  }
  const failed = withoutBatch(p, index);
  if (!rules.kip360)
    return put(
      s,
      j,
      resp.error === Err.OUT_OF_ORDER_SEQUENCE_NUMBER && b.pid === p.pid ? resetProducerId(failed) : failed,
    );
  // KIP-360: a real gap bumps the epoch and the batch goes again under it; any other error fails the batch and bumps too.
  if (resp.error === Err.OUT_OF_ORDER_SEQUENCE_NUMBER)
    return put(s, j, requeue(bumpEpoch(cfg, p, b.partition), index));
  return put(s, j, bumpEpoch(cfg, failed, b.partition));
}

/** The error ends the producer (maybeTransitionToErrorState): fencing, and before KIP-588 an old epoch. */
function isFatal(rules: Rules, error: Err): boolean {
  return error === Err.PRODUCER_FENCED || (error === Err.INVALID_PRODUCER_EPOCH && !rules.kip588);
}

/**
 * The batch goes again as it was (Sender.reenqueueBatch). KIP-360 (TransactionManager.canRetry,
 * 3.9): a retriable error, or OUT_OF_ORDER_SEQUENCE_NUMBER while an earlier sequence may still
 * arrive (the batch is not the next after the last acknowledged). 0.11.0 (Sender.completeBatch): a
 * retriable error while the producer id and epoch are still the batch's.
 */
function retriedAsItIs(rules: Rules, p: IdempotentProducer, b: IdempotentBatch, error: Err): boolean {
  if (!rules.kip360) return error === Err.NOT_ENOUGH_REPLICAS && b.pid === p.pid && b.epoch === p.epoch;
  return (
    error === Err.NOT_ENOUGH_REPLICAS || (error === Err.OUT_OF_ORDER_SEQUENCE_NUMBER && !isNextSequence(p, b))
  );
}

/** The batch at `index` leaves the producer: acknowledged, or failed to the application. */
function withoutBatch(p: IdempotentProducer, index: number): IdempotentProducer {
  return { ...p, batches: p.batches.filter((_, k) => k !== index) };
}
