// A data partition's leader: the log of data batches and control markers, the producer state
// (ProducerStateManager / ProducerAppendInfo), the high watermark and the LSO. One replica, so
// the high watermark is the log end.
import { type Rules, forRequest } from './config.ts';
import { type Connection, hasMessage, reply, request, response, send } from './network.ts';
import {
  type LogBatch,
  type Partition,
  type ProducerEntry,
  type Request,
  type Response,
  type State,
  type HeldProduce,
  type Verification,
  Api,
  BatchKind,
  Err,
  LEADER_BASE,
  NO_EPOCH,
  NO_OFFSET,
  Outcome,
  Supports,
  TC_NODE,
  withField,
} from './state.ts';
import { bit, setAt } from './util.ts';

/** ProducerStateEntry keeps the metadata of the last five batches (NUM_BATCHES_TO_RETAIN). */
const BATCHES_TO_RETAIN = 5;

export function emptyPartition(): Partition {
  return { log: [], producers: [], verifications: [], held: [], nextGuard: 0 };
}

export function highWatermark(p: Partition): number {
  return p.log.length;
}

/** UnifiedLog.lastStableOffset: the first offset of the oldest open transaction, else the HW. */
export function lastStableOffset(p: Partition): number {
  let lso = highWatermark(p);
  for (const e of p.producers)
    if (e.txnFirstOffset !== NO_OFFSET && e.txnFirstOffset < lso) lso = e.txnFirstOffset;
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

/**
 * ProducerAppendInfo.checkSequence for a batch from a client (sequences of one record), with the
 * producer's verification entry if it has one.
 */
function sequenceOk(
  rules: Rules,
  entry: ProducerEntry,
  verification: Verification | undefined,
  epoch: number,
  seq: number,
): boolean {
  // KAFKA-18202 (4.1): a transaction-version-2 producer with no batch here starts at sequence 0.
  if (
    rules.tv2SequenceZero &&
    rules.tv2 &&
    verification !== undefined &&
    seq !== 0 &&
    entry.lastSeqs.length === 0
  )
    return false;
  // KAFKA-14920 (3.6): nothing above the lowest sequence seen while verifying, even with verification off.
  if (verification !== undefined && seq > verification.lowestSeq) return false;
  if (epoch !== entry.epoch)
    return seq === 0 || (rules.unknownProducerAnySequence && entry.epoch === NO_EPOCH);
  // Same epoch: the next sequence; with only a marker at this epoch (no batch), that is 0 (0.11 onwards).
  const last = entry.lastSeqs[entry.lastSeqs.length - 1] ?? -1;
  return seq === last + 1;
}

/** The leader's own connection to the coordinator for verification, apart from the marker channel. */
export const VERIFICATION_CONN = -1;

/**
 * UnifiedLog.hasOngoingTransaction: the producer has an open transaction here (3.6); with
 * transaction version 2, at the request's epoch too (4.0).
 */
export function hasOngoingTransaction(rules: Rules, entry: ProducerEntry, epoch: number): boolean {
  return entry.txnFirstOffset !== NO_OFFSET && (!rules.tv2 || entry.epoch === epoch);
}

/** Answers a client's Produce or TxnOffsetCommit. */
export function answerClient(s: State, connection: Connection, req: Request, error: Err): State {
  return reply(
    s,
    connection,
    response(req.api, { error, pid: req.pid, epoch: req.epoch, partitions: req.partitions, seq: req.seq }),
  );
}

/** A Produce from a producer with a transactional.id carries a transactional batch; an idempotent producer's does not. */
export function isTransactionalProduce(req: Request): boolean {
  return req.txnId >= 0;
}

/**
 * Produce of one batch (ReplicaManager.appendRecords). With KIP-890 part 1, a transactional batch
 * that would open a transaction is first verified with the coordinator.
 */
export function handleProduce(brokers: Rules, s: State, connection: Connection, req: Request): State {
  const rules = forRequest(brokers, req);
  const entry = producerEntry(s.partitions[req.partitions]!, req.pid) ?? newEntry(req.pid);
  if (
    isTransactionalProduce(req) &&
    asksCoordinator(rules) &&
    !hasOngoingTransaction(rules, entry, req.epoch)
  )
    return startVerification(rules, s, connection, req);
  return appendProduce(rules, s, connection, req, null);
}

/**
 * Whether a batch that would open a transaction goes to the coordinator first: to be verified
 * (KIP-890 part 1, transaction.partition.verification.enable), or under transaction version 2 to
 * be added whatever that setting says (ReplicaManager.maybeSendPartitionsToTransactionCoordinator, 4.0).
 */
export function asksCoordinator(rules: Rules): boolean {
  return rules.verification || rules.tv2;
}

/**
 * ProducerStateManager.maybeCreateVerificationStateEntry: one entry (one guard) per producer until
 * a transactional append clears it; it keeps the lowest sequence of the highest epoch seen
 * (VerificationStateEntry.maybeUpdateLowestSequenceAndEpoch, 3.6).
 */
function verificationEntry(
  existing: Verification | undefined,
  guard: number,
  req: Request,
  supportsEpochBump: boolean,
): Verification {
  const { pid, epoch, seq } = req;
  if (existing === undefined) return { pid, epoch, guard, lowestSeq: seq, supportsEpochBump };
  if (epoch > existing.epoch) return { ...existing, epoch, lowestSeq: seq };
  if (epoch === existing.epoch && seq < existing.lowestSeq) return { ...existing, lowestSeq: seq };
  return existing;
}

/**
 * maybeStartTransactionVerification: create or update the producer's verification entry, hold the
 * request (Produce or TxnOffsetCommit) under its guard and ask the coordinator with
 * AddPartitionsToTxn: verifyOnly (3.6), or a real add under transaction version 2 (4.0: the
 * partition joins the transaction implicitly).
 */
export function startVerification(rules: Rules, s: State, connection: Connection, req: Request): State {
  const p = req.partitions;
  const part = s.partitions[p]!;
  // KAFKA-18042 (4.1): UnifiedLog.maybeStartTransactionVerification refuses a lower epoch at once.
  const known = producerEntry(part, req.pid);
  if (rules.earlyEpochCheck && known !== undefined && req.epoch < known.epoch)
    return answerClient(s, connection, req, Err.INVALID_PRODUCER_EPOCH);
  const existing = part.verifications.find((v) => v.pid === req.pid);
  // supportsEpochBump is set when the entry is made (ProducerStateManager.maybeCreateVerificationStateEntry@4.0.0).
  const entry = verificationEntry(existing, part.nextGuard, req, rules.tv2);
  const guard = entry.guard;
  const next: Partition = {
    ...part,
    verifications: sortedByPid([...part.verifications.filter((v) => v.pid !== req.pid), entry]),
    held: [...part.held, { guard, from: connection.from, conn: connection.conn, request: req }],
    nextGuard: existing === undefined ? part.nextGuard + 1 : part.nextGuard,
  };
  const verify = request(Api.AddPartitionsToTxn, {
    txnId: req.txnId,
    pid: req.pid,
    epoch: req.epoch,
    partitions: bit(p),
    seq: req.seq,
    verifyOnly: !rules.tv2,
    guard,
    supports: req.supports,
    ghostTxn: req.ghostTxn,
  });
  return withField(
    withField(s, 'partitions', setAt(s.partitions, p, next)),
    'network',
    send(s.network, LEADER_BASE + p, TC_NODE, VERIFICATION_CONN, verify),
  );
}

/**
 * The coordinator answered a verification: the held request leaves the leader's hold. The caller
 * appends it under its guard on NONE, or answers the client with `verificationError`.
 */
export function releaseHeld(
  s: State,
  p: number,
  resp: Response,
): { state: State; held: HeldProduce; connection: Connection } | null {
  const part = s.partitions[p]!;
  // The guard outlives an epoch bump, so the epoch tells two held requests of one producer apart.
  const index = part.held.findIndex(
    (h) =>
      h.guard === resp.guard &&
      h.request.seq === resp.seq &&
      (resp.epoch === NO_EPOCH || h.request.epoch === resp.epoch),
  );
  if (index < 0) return null;
  const held = part.held[index]!;
  const state: State = withField(
    s,
    'partitions',
    setAt(s.partitions, p, { ...part, held: part.held.filter((_, k) => k !== index) }),
  );
  return { state, held, connection: { from: held.from, to: LEADER_BASE + p, conn: held.conn } };
}

/**
 * The verification of a held request was lost on its way to or from the coordinator: the
 * leader's AddPartitionsToTxnManager times it out (NETWORK_EXCEPTION, which the client sees as
 * NOT_ENOUGH_REPLICAS and retries).
 */
export function canTimeOutVerification(s: State, p: number, guard: number, seq: number): boolean {
  const held = s.partitions[p]!.held.some((h) => h.guard === guard && h.request.seq === seq);
  if (!held) return false;
  return !hasMessage(
    s.network,
    (ch, m) =>
      ch.conn === VERIFICATION_CONN &&
      (ch.from === LEADER_BASE + p || ch.to === LEADER_BASE + p) &&
      m.guard === guard &&
      m.seq === seq,
  );
}

export function verificationTimeout(s: State, p: number, guard: number, seq: number): State {
  const lost = response(Api.AddPartitionsToTxn, { error: Err.NOT_COORDINATOR, guard, seq });
  const released = releaseHeld(s, p, lost)!;
  return answerClient(released.state, released.connection, released.held.request, Err.NOT_ENOUGH_REPLICAS);
}

/**
 * AddPartitionsToTxnManager / ReplicaManager: PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH;
 * TRANSACTION_ABORTABLE becomes INVALID_TXN_STATE for a request whose version predates it
 * (AddPartitionsToTxnManager@3.8, transactionSupportedOperation); CONCURRENT_TRANSACTIONS and the
 * coordinator errors (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS)
 * become NOT_ENOUGH_REPLICAS, which the client retries (ReplicaManager.scala@3.6 and @3.9).
 */
export function verificationError(error: Err, req: Request): Err {
  switch (error) {
    case Err.PRODUCER_FENCED:
      return Err.INVALID_PRODUCER_EPOCH;
    case Err.TRANSACTION_ABORTABLE:
      return (req.supports & Supports.TransactionAbortable) === 0 ? Err.INVALID_TXN_STATE : error;
    case Err.CONCURRENT_TRANSACTIONS:
    case Err.COORDINATOR_LOAD_IN_PROGRESS:
    case Err.COORDINATOR_NOT_AVAILABLE:
    case Err.NOT_COORDINATOR:
      return Err.NOT_ENOUGH_REPLICAS;
    default:
      return error;
  }
}

/**
 * UnifiedLog.analyzeAndValidateProducerState + ProducerAppendInfo for a client batch. `guard` is
 * the verification attempt the append belongs to, or null when none was needed.
 */
export function appendProduce(
  rules: Rules,
  s: State,
  connection: Connection,
  req: Request,
  guard: number | null,
): State {
  const p = req.partitions;
  const part = s.partitions[p]!;
  const entry = producerEntry(part, req.pid) ?? newEntry(req.pid);
  // Duplicate of one of the last five batches: acknowledge again, append nothing.
  if (!rules.mutantNoDedup && req.epoch === entry.epoch && entry.lastSeqs.includes(req.seq))
    return answerClient(s, connection, req, Err.NONE);
  const transactional = isTransactionalProduce(req);
  if (transactional && staleBeforeGuard(rules, entry, req) && !rules.mutantNoProduceEpochFence)
    return answerClient(s, connection, req, Err.INVALID_PRODUCER_EPOCH);
  if (!guardHolds(rules, part, entry, req, guard))
    return answerClient(s, connection, req, Err.INVALID_TXN_STATE);
  // Since 2.7 a fenced epoch on Produce is INVALID_PRODUCER_EPOCH (abortable), not PRODUCER_FENCED.
  if (req.epoch < entry.epoch && !rules.mutantNoProduceEpochFence)
    return answerClient(s, connection, req, Err.INVALID_PRODUCER_EPOCH);
  // KAFKA-14561's verification kept no entry, so no lowest sequence either.
  const verification = rules.verificationGuard
    ? part.verifications.find((v) => v.pid === req.pid)
    : undefined;
  if (!rules.mutantNoDedup && !sequenceOk(rules, entry, verification, req.epoch, req.seq))
    return answerClient(s, connection, req, Err.OUT_OF_ORDER_SEQUENCE_NUMBER);
  // A non-transactional write while the producer id has a transaction open here (ProducerAppendInfo.appendDataBatch, 0.11.0 onwards).
  if (!transactional && entry.txnFirstOffset !== NO_OFFSET)
    return answerClient(s, connection, req, Err.INVALID_TXN_STATE);
  const batch: LogBatch = {
    kind: BatchKind.Data,
    pid: req.pid,
    epoch: req.epoch,
    seq: req.seq,
    transactional,
    value: req.value,
    ghostTxn: req.ghostTxn,
    ghostRecord: req.ghostRecord,
  };
  return answerClient(appendDataBatch(s, p, entry, batch), connection, req, Err.NONE);
}

/**
 * KAFKA-19690 (4.0.2, 4.1.1, 4.2.0; UnifiedLog.append): a transactional append below the producer's
 * epoch, outside an ongoing transaction, is INVALID_PRODUCER_EPOCH before the guard is checked.
 */
export function staleBeforeGuard(rules: Rules, entry: ProducerEntry, req: Request): boolean {
  if (!rules.epochBeforeGuard || rules.mutantGuardBeforeEpoch) return false;
  return !hasOngoingTransaction(rules, entry, req.epoch) && req.epoch < entry.epoch;
}

/**
 * KIP-890 part 1: a request verified under `guard` may open a transaction only while that guard
 * is still the producer's; a marker or another append in between ended the attempt.
 */
export function guardHolds(
  rules: Rules,
  part: Partition,
  entry: ProducerEntry,
  req: Request,
  guard: number | null,
): boolean {
  // UnifiedLog.batchMissingRequiredVerification: no guard is checked with verification disabled.
  if (!rules.verification || !rules.verificationGuard || guard === null) return true;
  if (hasOngoingTransaction(rules, entry, req.epoch)) return true;
  return part.verifications.find((v) => v.pid === req.pid)?.guard === guard;
}

function sortedByPid<T extends { pid: number }>(items: T[]): T[] {
  return items.sort((a, b) => a.pid - b.pid);
}

/**
 * Appends a client batch that passed validation and updates its producer's entry: the epoch, the
 * last sequences (client batches only) and, for a transactional batch, the first offset of the
 * open transaction. Any append ends the producer's verification attempt (UnifiedLog.updateProducers).
 */
export function appendDataBatch(s: State, p: number, entry: ProducerEntry, batch: LogBatch): State {
  const part = s.partitions[p]!;
  const offset = part.log.length;
  const sameEpoch = batch.epoch === entry.epoch;
  const lastSeqs = sameEpoch ? entry.lastSeqs : [];
  const updated: ProducerEntry = {
    ...entry,
    epoch: batch.epoch,
    lastSeqs:
      batch.seq < 0
        ? lastSeqs
        : [...lastSeqs.slice(Math.max(0, lastSeqs.length - BATCHES_TO_RETAIN + 1)), batch.seq],
    txnFirstOffset: entry.txnFirstOffset === NO_OFFSET && batch.transactional ? offset : entry.txnFirstOffset,
  };
  return withField(s, 'partitions', setAt(s.partitions, p, appendWithEntry(part, batch, updated)));
}

/** The append clears the producer's verification entry unless `keep` says otherwise (UnifiedLog.updateProducers). */
function appendWithEntry(
  part: Partition,
  batch: LogBatch,
  entry: ProducerEntry,
  keep: (v: Verification) => boolean = () => false,
): Partition {
  return {
    ...part,
    log: [...part.log, batch],
    producers: putEntry(part, entry),
    verifications: part.verifications.filter((v) => v.pid !== entry.pid || keep(v)),
  };
}

export function appendNonTransactional(s: State, p: number, batch: LogBatch): State {
  const part = s.partitions[p]!;
  return withField(s, 'partitions', setAt(s.partitions, p, { ...part, log: [...part.log, batch] }));
}

/**
 * TV0/TV1: the marker's epoch may not be below the producer's. KIP-1228: a transaction-version-2
 * marker (WriteTxnMarkers v2 names the version) strictly above, but for a retry; a marker of a
 * version-1 transaction keeps the old rule.
 */
function markerEpochOk(rules: Rules, entry: ProducerEntry, epoch: number): boolean {
  if (rules.mutantMarkerNeedsHigherEpoch) return epoch > entry.epoch;
  if (!rules.strictMarkerEpoch || !rules.tv2) return epoch >= entry.epoch;
  return epoch > entry.epoch || (epoch === entry.epoch && entry.txnFirstOffset === NO_OFFSET);
}

/** WriteTxnMarkers for one partition (ProducerAppendInfo.appendEndTxnMarker, TV0/TV1 epoch rule). */
export function handleWriteTxnMarkers(brokers: Rules, s: State, channel: Connection, req: Request): State {
  const rules = forRequest(brokers, req);
  const p = req.partitions;
  const part = s.partitions[p]!;
  const entry = producerEntry(part, req.pid) ?? newEntry(req.pid);
  const answer = (state: State, error: Err): State =>
    reply(
      state,
      channel,
      response(Api.WriteTxnMarkers, {
        txnId: req.txnId,
        error,
        pid: req.pid,
        epoch: req.epoch,
        partitions: p,
        coordinatorEpoch: req.coordinatorEpoch,
      }),
    );

  if (!markerEpochOk(rules, entry, req.epoch)) return answer(s, Err.INVALID_PRODUCER_EPOCH);
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
  // KAFKA-18654 [1/2] (4.0.0; UnifiedLog.updateProducers): a marker keeps a transaction-version-2
  // entry at its own epoch, which under version 2 is the next transaction's.
  const keepsGuard = (v: Verification): boolean =>
    rules.keepGuardAcrossV2Marker && v.supportsEpochBump && v.epoch === req.epoch;
  return answer(
    withField(s, 'partitions', setAt(s.partitions, p, appendWithEntry(part, marker, updated, keepsGuard))),
    Err.NONE,
  );
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
    if (isMarker(b) && b.pid === pid)
      return b.kind === BatchKind.Commit ? Outcome.Committed : Outcome.Aborted;
  }
  return Outcome.Open;
}

// ---- producer.id.expiration.ms ------------------------------------------------------------------
//
// ProducerStateManager.removeExpiredProducers (ProducerStateManager.java@3.9, .scala@0.11.0): an
// entry with no ongoing transaction expires producer.id.expiration.ms after its lastTimestamp, and
// a verification entry that long after it was made, whatever happened since. Model time is not
// explicit: that long has passed once nothing of the producer id is still on its way to the leader
// or held there (Kafka advises an expiration no shorter than delivery.timeout.ms). Before
// KAFKA-9144 (1.0 to 2.4.0) an entry whose epoch holds no batch had no timestamp and went at the
// next periodic check, with its requests still on the way.

/** Nothing of producer id `pid` is on its way to partition p's leader or held there. */
function quietAt(s: State, p: number, pid: number): boolean {
  if (s.partitions[p]!.held.some((h) => h.request.pid === pid)) return false;
  return !hasMessage(s.network, (ch, m) => ch.to === LEADER_BASE + p && !m.response && m.pid === pid);
}

/**
 * The entry's epoch holds a batch of its producer here: a data batch (its sequence is in lastSeqs)
 * or an offset commit of __consumer_offsets, whose sequences the leader does not keep (addBatch
 * gives both a timestamp, ProducerAppendInfo.appendDataBatch@2.4).
 */
function hasBatchAtEpoch(part: Partition, e: ProducerEntry): boolean {
  return (
    e.lastSeqs.length > 0 ||
    part.log.some((b) => b.kind === BatchKind.OffsetCommit && b.pid === e.pid && b.epoch === e.epoch)
  );
}

function entryExpired(rules: Rules, s: State, p: number, e: ProducerEntry): boolean {
  if (e.txnFirstOffset !== NO_OFFSET) return false;
  return quietAt(s, p, e.pid) || (!rules.markerTimestamp && !hasBatchAtEpoch(s.partitions[p]!, e));
}

/** The producer ids whose producer state or verification entry partition p's leader may drop, in order. */
export function expirableProducerIds(rules: Rules, s: State, p: number): number[] {
  const part = s.partitions[p]!;
  const pids = new Set<number>();
  for (const e of part.producers) if (entryExpired(rules, s, p, e)) pids.add(e.pid);
  for (const v of part.verifications) if (quietAt(s, p, v.pid)) pids.add(v.pid);
  return [...pids].sort((a, b) => a - b);
}

/** The leader drops what of producer id `pid` has expired: its entry, its verification entry, or both. */
export function producerStateExpiry(rules: Rules, s: State, p: number, pid: number): State {
  const part = s.partitions[p]!;
  const next: Partition = {
    ...part,
    producers: part.producers.filter((e) => e.pid !== pid || !entryExpired(rules, s, p, e)),
    verifications: quietAt(s, p, pid) ? part.verifications.filter((v) => v.pid !== pid) : part.verifications,
  };
  return withField(s, 'partitions', setAt(s.partitions, p, next));
}
