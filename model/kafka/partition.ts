// A data partition's leader: the log of data batches and control markers, the producer state
// (ProducerStateManager / ProducerAppendInfo), the high watermark and the LSO. One replica, so
// the high watermark is the log end.
import type { Rules } from './config.ts';
import { reply, response } from './network.ts';
import {
  type LogBatch,
  type Partition,
  type ProducerEntry,
  type Request,
  type State,
  Api,
  BatchKind,
  Err,
  NO_EPOCH,
  NO_OFFSET,
  Outcome,
} from './state.ts';
import { setAt } from './util.ts';

/** ProducerStateEntry keeps the metadata of the last five batches (NUM_BATCHES_TO_RETAIN). */
const BATCHES_TO_RETAIN = 5;

export function emptyPartition(): Partition {
  return { log: [], producers: [] };
}

export function highWatermark(p: Partition): number {
  return p.log.length;
}

/** UnifiedLog.lastStableOffset: the first offset of the oldest open transaction, else the HW. */
export function lastStableOffset(p: Partition): number {
  let lso = highWatermark(p);
  for (const e of p.producers) if (e.txnFirstOffset !== NO_OFFSET && e.txnFirstOffset < lso) lso = e.txnFirstOffset;
  return lso;
}

export function producerEntry(p: Partition, pid: number): ProducerEntry | undefined {
  return p.producers.find((e) => e.pid === pid);
}

function putEntry(p: Partition, entry: ProducerEntry): readonly ProducerEntry[] {
  const rest = p.producers.filter((e) => e.pid !== entry.pid);
  let i = 0;
  while (i < rest.length && rest[i]!.pid < entry.pid) i++;
  return [...rest.slice(0, i), entry, ...rest.slice(i)];
}

export function newEntry(pid: number): ProducerEntry {
  return { pid, epoch: NO_EPOCH, lastSeqs: [], coordinatorEpoch: -1, txnFirstOffset: NO_OFFSET };
}

/** ProducerAppendInfo.checkSequence for a batch from a client (sequences of one record). */
function sequenceOk(entry: ProducerEntry, epoch: number, seq: number): boolean {
  if (epoch !== entry.epoch) return seq === 0 || entry.epoch === NO_EPOCH;
  const last = entry.lastSeqs[entry.lastSeqs.length - 1];
  // Same epoch and no known sequence: only a marker was written at this epoch; any sequence goes.
  return last === undefined || seq === last + 1;
}

/** Produce of one transactional batch (ReplicaManager.appendRecords without KIP-890 verification). */
export function handleProduce(rules: Rules, s: State, channel: { from: number; to: number; conn: number }, req: Request): State {
  const p = req.partitions;
  const part = s.partitions[p]!;
  const entry = producerEntry(part, req.pid) ?? newEntry(req.pid);
  const answer = (state: State, error: Err): State =>
    reply(state, channel, response(Api.Produce, { error, pid: req.pid, epoch: req.epoch, partitions: p, seq: req.seq }));

  // Duplicate of one of the last five batches: acknowledge again, append nothing.
  if (!rules.mutantNoDedup && req.epoch === entry.epoch && entry.lastSeqs.includes(req.seq)) return answer(s, Err.NONE);
  // Since 2.7 a fenced epoch on Produce is INVALID_PRODUCER_EPOCH (abortable), not PRODUCER_FENCED.
  if (req.epoch < entry.epoch) return answer(s, Err.INVALID_PRODUCER_EPOCH);
  if (!rules.mutantNoDedup && !sequenceOk(entry, req.epoch, req.seq)) return answer(s, Err.OUT_OF_ORDER_SEQUENCE_NUMBER);

  const batch: LogBatch = {
    kind: BatchKind.Data,
    pid: req.pid,
    epoch: req.epoch,
    seq: req.seq,
    transactional: true,
    value: req.value,
    ghostTxn: req.ghostTxn,
    ghostRecord: req.ghostRecord,
  };
  return answer(appendTransactional(s, p, entry, batch), Err.NONE);
}

/**
 * Appends a transactional batch that passed validation and updates its producer's entry: the
 * epoch, the last sequences (client batches only) and the first offset of the open transaction.
 */
export function appendTransactional(s: State, p: number, entry: ProducerEntry, batch: LogBatch): State {
  const part = s.partitions[p]!;
  const offset = part.log.length;
  const sameEpoch = batch.epoch === entry.epoch;
  const lastSeqs = sameEpoch ? entry.lastSeqs : [];
  const updated: ProducerEntry = {
    ...entry,
    epoch: batch.epoch,
    lastSeqs: batch.seq < 0 ? lastSeqs : [...lastSeqs.slice(Math.max(0, lastSeqs.length - BATCHES_TO_RETAIN + 1)), batch.seq],
    txnFirstOffset: entry.txnFirstOffset === NO_OFFSET ? offset : entry.txnFirstOffset,
  };
  const next: Partition = { log: [...part.log, batch], producers: putEntry(part, updated) };
  return { ...s, partitions: setAt(s.partitions, p, next) };
}

export function appendNonTransactional(s: State, p: number, batch: LogBatch): State {
  const part = s.partitions[p]!;
  return { ...s, partitions: setAt(s.partitions, p, { ...part, log: [...part.log, batch] }) };
}

/** WriteTxnMarkers for one partition (ProducerAppendInfo.appendEndTxnMarker, TV0/TV1 epoch rule). */
export function handleWriteTxnMarkers(s: State, channel: { from: number; to: number; conn: number }, req: Request): State {
  const p = req.partitions;
  const part = s.partitions[p]!;
  const entry = producerEntry(part, req.pid) ?? newEntry(req.pid);
  const answer = (state: State, error: Err): State =>
    reply(state, channel, response(Api.WriteTxnMarkers, { txnId: req.txnId, error, pid: req.pid, epoch: req.epoch, partitions: p, coordinatorEpoch: req.coordinatorEpoch }));

  if (req.epoch < entry.epoch) return answer(s, Err.INVALID_PRODUCER_EPOCH);
  if (req.coordinatorEpoch < entry.coordinatorEpoch) return answer(s, Err.TRANSACTION_COORDINATOR_FENCED);

  const marker: LogBatch = {
    kind: req.commit ? BatchKind.Commit : BatchKind.Abort,
    pid: req.pid,
    epoch: req.epoch,
    seq: -1,
    transactional: true,
    value: -1,
    ghostTxn: req.ghostTxn,
    ghostRecord: -1,
  };
  const epochChanged = req.epoch !== entry.epoch;
  const updated: ProducerEntry = {
    ...entry,
    epoch: req.epoch,
    lastSeqs: epochChanged ? [] : entry.lastSeqs,
    coordinatorEpoch: req.coordinatorEpoch,
    txnFirstOffset: NO_OFFSET,
  };
  const next: Partition = { log: [...part.log, marker], producers: putEntry(part, updated) };
  return answer({ ...s, partitions: setAt(s.partitions, p, next) }, Err.NONE);
}

export function isMarker(b: LogBatch): boolean {
  return b.kind === BatchKind.Commit || b.kind === BatchKind.Abort;
}

/**
 * How the transaction of the batch at `offset` ended at this partition: the first marker of the
 * same producer id after it decides (as a read_committed consumer sees it).
 */
export function batchOutcome(p: Partition, offset: number): Outcome {
  const pid = p.log[offset]!.pid;
  for (let o = offset + 1; o < p.log.length; o++) {
    const b = p.log[o]!;
    if (isMarker(b) && b.pid === pid) return b.kind === BatchKind.Commit ? Outcome.Committed : Outcome.Aborted;
  }
  return Outcome.Open;
}
