// A producer instance: the application's calls, the client's TransactionManager and its Sender
// (the Java client, its generation's rules read through the switches). The client's reactions to
// answers and timeouts are defaultClientHandlers, which a variant file may override.
//
// Modelling bound: a transaction sends at least one record before the application ends it.
import {
  type ClientContext,
  type ClientHandlers,
  type KafkaConfig,
  type Rules,
  clientSupports,
  clientTxnIndex,
} from './config.ts';
import { noteTxn } from './ghost.ts';
import { committedOffset, hasPendingOffsets, joinGroup } from './group.ts';
import { connSlot, request, send } from './network.ts';
import {
  type ClientBatch,
  type Producer,
  type Response,
  type State,
  type TxnRequestSlot,
  Api,
  BatchStatus,
  Decision,
  Err,
  Instance,
  LEADER_BASE,
  NO_EPOCH,
  NO_PID,
  TC_NODE,
  Tm,
  Told,
  withField,
} from './state.ts';
import { bit, setAt } from './util.ts';

const versionOne = new WeakMap<Rules, Rules>();

/**
 * The rules of the client this producer instance runs, for its current transaction: a client
 * that has transaction version 2 uses it only when it last read the cluster's finalized version
 * as 2 (transactionV2).
 */
export function clientRules(cfg: KafkaConfig, p: Producer): Rules {
  const rules = cfg.clientRules[p.instance]!;
  if (p.transactionV2 || !rules.tv2) return rules;
  let v1 = versionOne.get(rules);
  if (v1 === undefined) versionOne.set(rules, (v1 = { ...rules, tv2: false }));
  return v1;
}

/**
 * Whether instance `instance` takes transaction version 2 when it reads the finalized version: its
 * client has it and the cluster has finalized it (maybeUpdateTransactionV2Enabled,
 * TransactionManager.java trunk 1eb76443 and 4.0.0).
 */
function takesTransactionV2(cfg: KafkaConfig, instance: number, finalized: number): boolean {
  return cfg.clientRules[instance]!.tv2 && finalized === 2;
}

export function initialProducer(cfg: KafkaConfig, txnId: number, instance: number): Producer {
  return {
    txnId,
    instance,
    status: Instance.NotStarted,
    tm: Tm.UNINITIALIZED,
    pid: NO_PID,
    epoch: NO_EPOCH,
    bumpRequired: false,
    txnStarted: false,
    added: 0,
    pendingAdd: 0,
    request: null,
    nextSeq: new Array<number>(cfg.partitions).fill(0),
    batches: [],
    conns: new Array<number>(cfg.partitions + 2).fill(0),
    txnsBegun: 0,
    recordsSent: 0,
    generation: -1,
    inputPosition: -1,
    offsetToCommit: -1,
    offsetsAdded: false,
    offsetsCommitted: false,
    ghostExcuses: 0,
    ghostFatalError: Err.NONE,
    transactionV2: takesTransactionV2(cfg, instance, cfg.transactionVersion),
    nextTransactionV2: takesTransactionV2(cfg, instance, cfg.transactionVersion),
  };
}

function put(s: State, i: number, p: Producer): State {
  return withField(s, 'producers', setAt(s.producers, i, p));
}

function isActive(p: Producer): boolean {
  return p.status === Instance.Running && p.tm !== Tm.FATAL_ERROR;
}

function currentTxn(cfg: KafkaConfig, i: number, p: Producer): number {
  return clientTxnIndex(cfg, i, p.txnsBegun - 1);
}

// ---- Application calls -----------------------------------------------------------------------

/** A new instance may start once the previous instance of its transactional.id has started (or crashed). */
export function canStart(cfg: KafkaConfig, s: State, i: number): boolean {
  const p = s.producers[i]!;
  if (p.status !== Instance.NotStarted) return false;
  if (p.instance === 0) return true;
  const previous = s.producers[i - 1]!.status;
  return cfg.instanceStart === 'anytime' ? previous !== Instance.NotStarted : previous === Instance.Crashed;
}

/**
 * KafkaProducer construction + initTransactions(): InitProducerId(txnId) with no pid. The
 * consume-transform-produce app's consumer joins the group at the same time.
 */
export function start(cfg: KafkaConfig, s: State, i: number): State {
  let p: Producer = { ...s.producers[i]!, status: Instance.Running, tm: Tm.INITIALIZING };
  let state = s;
  if (cfg.app === 'consume-transform-produce') {
    const joined = joinGroup(s);
    state = joined.state;
    p = { ...p, generation: joined.generation };
  }
  return sendTxnRequest(cfg, put(state, i, p), i);
}

function isTransform(cfg: KafkaConfig): boolean {
  return cfg.app === 'consume-transform-produce';
}

/** The consumer learns where to start from the group's committed offset (OffsetFetch, requireStable). */
export function canFetchOffsets(cfg: KafkaConfig, s: State, p: Producer): boolean {
  return (
    isTransform(cfg) &&
    isActive(p) &&
    p.tm === Tm.READY &&
    p.inputPosition < 0 &&
    !hasPendingOffsets(s.partitions[cfg.partitions]!)
  );
}

export function fetchOffsets(cfg: KafkaConfig, s: State, i: number): State {
  return put(s, i, { ...s.producers[i]!, inputPosition: committedOffset(s.partitions[cfg.partitions]!) });
}

export function canBegin(cfg: KafkaConfig, p: Producer): boolean {
  const hasInput = !isTransform(cfg) || (p.inputPosition >= 0 && p.inputPosition < cfg.inputRecords);
  return (
    isActive(p) &&
    p.tm === Tm.READY &&
    p.request === null &&
    p.txnsBegun < cfg.transactionsPerInstance &&
    hasInput
  );
}

/**
 * beginTransaction. Without KAFKA-18227 the client reads the finalized transaction.version here
 * and keeps it for the whole transaction, with no epoch bump on an upgrade (trunk 1eb76443).
 */
export function beginTransaction(cfg: KafkaConfig, s: State, i: number): State {
  const p = s.producers[i]!;
  const readsHere = !cfg.clientRules[p.instance]!.tv2UpgradeBump;
  const transactionV2 = readsHere
    ? takesTransactionV2(cfg, p.instance, s.transactionVersion)
    : p.transactionV2;
  return put(s, i, {
    ...p,
    tm: Tm.IN_TRANSACTION,
    txnsBegun: p.txnsBegun + 1,
    recordsSent: 0,
    txnStarted: false,
    added: 0,
    pendingAdd: 0,
    transactionV2,
    nextTransactionV2: transactionV2,
  });
}

/** The transform app writes one output per input record, before it sends its offsets. */
export function canSend(cfg: KafkaConfig, p: Producer): boolean {
  const inputLeft =
    !isTransform(cfg) || (p.offsetToCommit < 0 && p.inputPosition + p.recordsSent < cfg.inputRecords);
  return isActive(p) && p.tm === Tm.IN_TRANSACTION && p.recordsSent < cfg.recordsPerTransaction && inputLeft;
}

/** send(record to p): the record waits in the accumulator; p joins newPartitionsInTransaction. */
export function sendRecord(cfg: KafkaConfig, s: State, i: number, partition: number): State {
  const p = s.producers[i]!;
  const rules = clientRules(cfg, p);
  const known = (p.added | p.pendingAdd) & bit(partition);
  const value = isTransform(cfg) ? p.inputPosition + p.recordsSent : -1;
  const batch: ClientBatch = {
    partition,
    seq: -1,
    status: BatchStatus.Queued,
    retried: false,
    value,
    ghostRecord: p.recordsSent,
  };
  const txn = currentTxn(cfg, i, p);
  // Transaction version 2: no AddPartitionsToTxn; the leader adds the partition when the batch arrives.
  const implicit = rules.tv2
    ? { added: p.added | bit(partition), txnStarted: true }
    : { pendingAdd: known ? p.pendingAdd : p.pendingAdd | bit(partition) };
  const next = put(s, i, {
    ...p,
    ...implicit,
    batches: [...p.batches, batch],
    recordsSent: p.recordsSent + 1,
  });
  return noteTxn(next, txn, { recordsSent: s.history[txn]!.recordsSent + 1 });
}

/** sendOffsetsToTransaction(offset after the last input processed, group metadata). */
export function canSendOffsets(cfg: KafkaConfig, p: Producer): boolean {
  return (
    isTransform(cfg) && isActive(p) && p.tm === Tm.IN_TRANSACTION && p.recordsSent > 0 && p.offsetToCommit < 0
  );
}

export function sendOffsetsToTransaction(s: State, i: number): State {
  const p = s.producers[i]!;
  return put(s, i, { ...p, offsetToCommit: p.inputPosition + p.recordsSent });
}

export function canCommit(cfg: KafkaConfig, p: Producer): boolean {
  return (
    isActive(p) &&
    p.tm === Tm.IN_TRANSACTION &&
    p.recordsSent > 0 &&
    (!isTransform(cfg) || p.offsetToCommit >= 0)
  );
}

export function commitTransaction(cfg: KafkaConfig, s: State, i: number): State {
  const p = s.producers[i]!;
  const next = beginCompletingTransaction(cfg, s, { ...p, tm: Tm.COMMITTING_TRANSACTION });
  return noteTxn(put(s, i, next), currentTxn(cfg, i, p), { decision: Decision.Commit });
}

/**
 * KAFKA-18227 (TransactionManager.beginCompletingTransaction@4.0.0): the EndTxn is built with the
 * version the client holds, which a completion begun earlier in this transaction may have
 * changed; then the client reads the finalized version for the next transaction, and an upgrade
 * to version 2 requires an epoch bump, the InitProducerId chained after the EndTxn. The rationale
 * (the JIRA): without it, a version-2 Produce at the epoch of the version-1 transaction still
 * waiting for its markers joins that transaction. The Java client's Produce of this transaction
 * drained after the read already takes the new version; its partition is in the transaction, so
 * the coordinator answers it as the model's version-1 one (NONE), and the model keeps the old.
 */
function beginCompletingTransaction(cfg: KafkaConfig, s: State, p: Producer): Producer {
  if (!cfg.clientRules[p.instance]!.tv2UpgradeBump) return p;
  const transactionV2 = p.nextTransactionV2;
  const nextTransactionV2 = takesTransactionV2(cfg, p.instance, s.transactionVersion);
  const upgraded = !transactionV2 && nextTransactionV2;
  return { ...p, transactionV2, nextTransactionV2, bumpRequired: p.bumpRequired || upgraded };
}

export function canAbort(p: Producer): boolean {
  return isActive(p) && ((p.tm === Tm.IN_TRANSACTION && p.recordsSent > 0) || p.tm === Tm.ABORTABLE_ERROR);
}

/** abortTransaction(): undrained batches are dropped (abortUndrainedBatches). */
export function abortTransaction(cfg: KafkaConfig, s: State, i: number): State {
  const p = s.producers[i]!;
  const next = beginCompletingTransaction(cfg, s, {
    ...p,
    tm: Tm.ABORTING_TRANSACTION,
    batches: p.batches.filter((b) => b.status !== BatchStatus.Queued),
    pendingAdd: 0,
  });
  return noteTxn(put(s, i, next), currentTxn(cfg, i, p), { decision: Decision.Abort });
}

// ---- Sender: transactional requests ---------------------------------------------------------

/** TransactionManager.nextRequest: what the client sends next, or null when it must wait. */
function nextTxnRequest(cfg: KafkaConfig, p: Producer): TxnRequestSlot | 'complete-locally' | null {
  if (p.tm === Tm.INITIALIZING) return { api: Api.InitProducerId, partitions: 0, commit: false };
  const adding = p.tm === Tm.IN_TRANSACTION || p.tm === Tm.COMMITTING_TRANSACTION;
  if (adding && p.pendingAdd !== 0)
    return { api: Api.AddPartitionsToTxn, partitions: p.pendingAdd, commit: false };
  // Transaction version 2 skips AddOffsetsToTxn: the group coordinator adds its partition.
  if (adding && p.offsetToCommit >= 0 && !p.offsetsAdded && !clientRules(cfg, p).tv2)
    return { api: Api.AddOffsetsToTxn, partitions: bit(cfg.partitions), commit: false };
  if (adding && p.offsetToCommit >= 0 && !p.offsetsAdded)
    return { api: Api.TxnOffsetCommit, partitions: cfg.partitions, commit: false };
  if (adding && p.offsetsAdded && !p.offsetsCommitted)
    return { api: Api.TxnOffsetCommit, partitions: cfg.partitions, commit: false };
  const commit = p.tm === Tm.COMMITTING_TRANSACTION;
  if (!commit && p.tm !== Tm.ABORTING_TRANSACTION) return null;
  // EndTxn only once every batch is acknowledged or failed.
  if (p.batches.length !== 0) return null;
  // No partition was ever added: there is nothing for the coordinator to end.
  if (!p.txnStarted) return 'complete-locally';
  return { api: Api.EndTxn, partitions: 0, commit };
}

export function canSendTxnRequest(cfg: KafkaConfig, p: Producer): boolean {
  return isActive(p) && p.request === null && nextTxnRequest(cfg, p) !== null;
}

/** TxnOffsetCommit goes to the group coordinator; every other transactional request to the TC. */
function txnRequestNode(cfg: KafkaConfig, api: Api): number {
  return api === Api.TxnOffsetCommit ? LEADER_BASE + cfg.partitions : TC_NODE;
}

/** Sends the request of `slot` (a first send, or the same request again). */
export function transmit(cfg: KafkaConfig, s: State, i: number, slot: TxnRequestSlot): State {
  const p = s.producers[i]!;
  // InitProducerId carries the current pid/epoch only to bump it (KIP-360).
  const bump = slot.api === Api.InitProducerId && p.pid !== NO_PID;
  const message = request(slot.api, {
    txnId: p.txnId,
    pid: slot.api === Api.InitProducerId && !bump ? NO_PID : p.pid,
    epoch: slot.api === Api.InitProducerId && !bump ? NO_EPOCH : p.epoch,
    partitions: slot.partitions,
    commit: slot.commit,
    value: p.offsetToCommit,
    generation: p.generation,
    supports: clientSupports(clientRules(cfg, p)),
    ghostProducer: i,
    ghostTxn: slot.api === Api.InitProducerId ? clientTxnIndex(cfg, i, p.txnsBegun) : currentTxn(cfg, i, p),
  });
  const node = txnRequestNode(cfg, slot.api);
  const network = send(s.network, i, node, p.conns[connSlot(node)]!, message);
  return withField(put(s, i, { ...p, request: slot }), 'network', network);
}

export function sendTxnRequest(cfg: KafkaConfig, s: State, i: number): State {
  const p = s.producers[i]!;
  const next = nextTxnRequest(cfg, p)!;
  if (next === 'complete-locally') return completeTransaction(cfg, s, i);
  return transmit(cfg, s, i, next);
}

/** The transaction ended. The transform app moves past its input on commit and rewinds on abort. */
function completeTransaction(
  cfg: KafkaConfig,
  s: State,
  i: number,
  bumped?: { pid: number; epoch: number },
): State {
  const committed = s.producers[i]!.tm === Tm.COMMITTING_TRANSACTION;
  return endTransaction(cfg, s, i, committed ? Told.Committed : Told.Aborted, bumped);
}

/**
 * Another client's building block: the client stops waiting for the EndTxn in flight and ends the
 * transaction with its outcome unknown, so the application is told it failed. The client goes on
 * at its producer id and epoch, or first bumps them with InitProducerId when `reinitialize`.
 */
export function leaveTransactionUnconfirmed(
  cfg: KafkaConfig,
  s: State,
  i: number,
  reinitialize: boolean,
): State {
  const p = s.producers[i]!;
  return endTransaction(
    cfg,
    put(s, i, { ...p, bumpRequired: p.bumpRequired || reinitialize }),
    i,
    Told.Failed,
  );
}

function endTransaction(
  cfg: KafkaConfig,
  s: State,
  i: number,
  told: Told,
  bumped?: { pid: number; epoch: number },
): State {
  const p = s.producers[i]!;
  // Transaction version 2: EndTxn v5 answers with the bumped epoch, and sequences restart.
  const epoch =
    bumped === undefined || (bumped.pid === p.pid && bumped.epoch === p.epoch)
      ? {}
      : { pid: bumped.pid, epoch: bumped.epoch, nextSeq: p.nextSeq.map(() => 0) };
  const next: Producer = {
    ...p,
    ...epoch,
    tm: p.bumpRequired ? Tm.INITIALIZING : Tm.READY,
    request: null,
    txnStarted: false,
    added: 0,
    pendingAdd: 0,
    inputPosition: nextInputPosition(cfg, p, told),
    offsetToCommit: -1,
    offsetsAdded: false,
    offsetsCommitted: false,
    transactionV2: p.nextTransactionV2,
  };
  return noteTxn(put(s, i, next), currentTxn(cfg, i, p), { told });
}

/**
 * Where the transform app reads next: past its inputs on a commit; after an abort, as its
 * `afterAbort` says; after an outcome it was not told, the group's committed offset (-1: fetch it).
 */
function nextInputPosition(cfg: KafkaConfig, p: Producer, told: Told): number {
  if (!isTransform(cfg)) return -1;
  if (told === Told.Committed) return p.offsetToCommit;
  if (told !== Told.Aborted || cfg.afterAbort === 'rewind-committed') return -1;
  return cfg.afterAbort === 'rewind-memory' ? p.inputPosition : p.inputPosition + p.recordsSent;
}

/** A request timeout closes the connection; the same request is re-sent on a new one. */
export function canTimeOutTxnRequest(p: Producer): boolean {
  return isActive(p) && p.request !== null;
}

export function txnRequestTimeout(cfg: KafkaConfig, s: State, i: number): State {
  return cfg.clientHandlers.requestTimeout(clientContext(cfg), s, i);
}

/** The Java client: the connection is closed and the same request sent again on a new one. */
function resendOnNewConnection(cfg: KafkaConfig, s: State, i: number): State {
  const p = s.producers[i]!;
  const slot = connSlot(txnRequestNode(cfg, p.request!.api));
  const reopened = put(s, i, { ...p, conns: setAt(p.conns, slot, p.conns[slot]! + 1) });
  return transmit(cfg, reopened, i, p.request!);
}

// ---- Sender: produce --------------------------------------------------------------------------

/** The next queued batch for `partition`, sendable once the partition is in the transaction. */
export function canSendProduce(p: Producer, partition: number): boolean {
  return (
    isActive(p) &&
    (p.added & bit(partition)) !== 0 &&
    p.batches.some((b) => b.partition === partition && b.status === BatchStatus.Queued)
  );
}

function produceRequest(cfg: KafkaConfig, i: number, p: Producer, b: ClientBatch) {
  return request(Api.Produce, {
    txnId: p.txnId,
    pid: p.pid,
    epoch: p.epoch,
    partitions: b.partition,
    seq: b.seq,
    value: b.value,
    supports: clientSupports(clientRules(cfg, p)),
    ghostProducer: i,
    ghostTxn: currentTxn(cfg, i, p),
    ghostRecord: b.ghostRecord,
  });
}

export function sendProduce(cfg: KafkaConfig, s: State, i: number, partition: number): State {
  const p = s.producers[i]!;
  const index = p.batches.findIndex((b) => b.partition === partition && b.status === BatchStatus.Queued);
  const batch: ClientBatch = {
    ...p.batches[index]!,
    seq: p.nextSeq[partition]!,
    status: BatchStatus.InFlight,
  };
  const next: Producer = {
    ...p,
    batches: setAt(p.batches, index, batch),
    nextSeq: setAt(p.nextSeq, partition, p.nextSeq[partition]! + 1),
  };
  const slot = connSlot(LEADER_BASE + partition);
  const network = send(
    s.network,
    i,
    LEADER_BASE + partition,
    p.conns[slot]!,
    produceRequest(cfg, i, next, batch),
  );
  return withField(put(s, i, next), 'network', network);
}

export function canTimeOutProduce(p: Producer, partition: number): boolean {
  return isActive(p) && p.batches.some((b) => b.partition === partition && b.status === BatchStatus.InFlight);
}

/** The batch at `index` goes again after a retriable error (Sender.reenqueueBatch): it is now in retry. */
function resendBatch(cfg: KafkaConfig, s: State, i: number, index: number): State {
  const p = s.producers[i]!;
  const b: ClientBatch = { ...p.batches[index]!, retried: true };
  const node = LEADER_BASE + b.partition;
  const next: Producer = { ...p, batches: setAt(p.batches, index, b) };
  return withField(
    put(s, i, next),
    'network',
    send(s.network, i, node, p.conns[connSlot(node)]!, produceRequest(cfg, i, p, b)),
  );
}

/** Produce request timeout with retries left: same pid, epoch and sequence on a new connection. */
export function produceTimeout(cfg: KafkaConfig, s: State, i: number, partition: number): State {
  const p = s.producers[i]!;
  const slot = connSlot(LEADER_BASE + partition);
  const conns = setAt(p.conns, slot, p.conns[slot]! + 1);
  const inFlight = (b: ClientBatch): boolean =>
    b.partition === partition && b.status === BatchStatus.InFlight;
  let network = s.network;
  for (const b of p.batches.filter(inFlight))
    network = send(network, i, LEADER_BASE + partition, conns[slot]!, produceRequest(cfg, i, p, b));
  // The disconnect fails the request with a retriable error: the batch is re-enqueued (inRetry).
  const batches = p.batches.map((b) => (inFlight(b) ? { ...b, retried: true } : b));
  return withField(put(s, i, { ...p, conns, batches }), 'network', network);
}

/**
 * delivery.timeout.ms expired: the in-flight batches fail although their bytes may still reach
 * the leader (the delayed Produce behind KIP-890). A batch that was in retry leaves its sequence
 * unresolved (Sender.sendProducerData, 2.5+); with nothing of the partition left in flight,
 * maybeResolveSequences finds the gap: abortable if the epoch will be bumped, else FATAL
 * (TransactionManagerTest.testTransitionToFatalErrorWhenRetriedBatchIsExpired, 2.5+; 4.0:
 * canHandleAbortableError, KAFKA-17898).
 */
export function batchExpired(cfg: KafkaConfig, s: State, i: number, partition: number): State {
  return cfg.clientHandlers.batchExpired(clientContext(cfg), s, i, partition);
}

function failExpiredBatches(cfg: KafkaConfig, s: State, i: number, partition: number): State {
  const p = s.producers[i]!;
  const rules = clientRules(cfg, p);
  const slot = connSlot(LEADER_BASE + partition);
  const expired = (b: ClientBatch): boolean => b.partition === partition && b.status === BatchStatus.InFlight;
  const failed = batchFailed(rules, {
    ...p,
    conns: setAt(p.conns, slot, p.conns[slot]! + 1),
    batches: p.batches.filter((b) => !expired(b)),
  });
  if (!p.batches.some((b) => expired(b) && b.retried)) return put(s, i, failed);
  if (!canHandleAbortableError(rules)) return fatal(cfg, put(s, i, failed), i);
  // The bump is required even while completing: the unacknowledged batch may still be written.
  return put(
    s,
    i,
    transitionToAbortableError({
      ...failed,
      bumpRequired: failed.bumpRequired || needToTriggerEpochBumpFromClient(rules),
    }),
  );
}

/** KIP-360: the client bumps its own epoch; not under TV2, where every EndTxn bumps it (KAFKA-17898, 4.0). */
function needToTriggerEpochBumpFromClient(rules: Rules): boolean {
  return rules.kip360 && !rules.tv2;
}

/** An epoch bump, by the client (KIP-360) or by EndTxn (TV2), makes aborting safe (KAFKA-17898, 4.0). */
function canHandleAbortableError(rules: Rules): boolean {
  return rules.kip360 || rules.tv2;
}

/** transitionToAbortableError: a transaction already aborting stays aborting. */
export function transitionToAbortableError(p: Producer): Producer {
  return p.tm === Tm.ABORTING_TRANSACTION ? p : { ...p, tm: Tm.ABORTABLE_ERROR };
}

/**
 * A batch failed with a non-fatal error (maybeTransitionToErrorState, 2.5+): abortable, and with
 * KIP-360 an epoch bump is required unless the transaction is already completing.
 */
function batchFailed(rules: Rules, p: Producer): Producer {
  const completing = p.tm === Tm.COMMITTING_TRANSACTION || p.tm === Tm.ABORTING_TRANSACTION;
  return transitionToAbortableError({
    ...p,
    bumpRequired: p.bumpRequired || (needToTriggerEpochBumpFromClient(rules) && !completing),
  });
}

/**
 * INVALID_PRODUCER_ID_MAPPING on AddPartitionsToTxn, AddOffsetsToTxn or EndTxn:
 * abortableErrorIfPossible (2.5+) requires a bump, even while completing, or is fatal without
 * KIP-360 (0.11.0 handlers: fatal); the 4.0.0 client makes it fatal under every transaction
 * version (KAFKA-18019, invalidPidMappingFatal; TransactionsExpirationTest runs it under both).
 *
 * While aborting, the error is the EndTxn's: beginAbort has cleared lastError, so
 * beginCompletingTransaction's skip to InitProducerId never fires (KAFKA-10504) and the EndTxn is
 * sent. When the abort began with a bump due, the InitProducerId queued behind the EndTxn goes
 * next and the abort succeeds; otherwise abortTransaction fails and cannot be called again (no
 * transition from ABORTING_TRANSACTION to itself), so the producer can only be closed
 * (TransactionManager.java@3.9).
 */
function invalidProducerIdMapping(cfg: KafkaConfig, rules: Rules, s: State, i: number): State {
  if (!rules.kip360 || rules.invalidPidMappingFatal) return fatal(cfg, s, i);
  const p = s.producers[i]!;
  if (p.tm === Tm.ABORTING_TRANSACTION)
    return p.bumpRequired ? completeTransaction(cfg, s, i) : fatal(cfg, s, i);
  return put(s, i, transitionToAbortableError({ ...p, request: null, bumpRequired: true }));
}

/** The producer fails for good (transitionToFatalError); an open transaction is told failed. */
export function fatal(cfg: KafkaConfig, s: State, i: number): State {
  const p = s.producers[i]!;
  const next = put(s, i, { ...p, tm: Tm.FATAL_ERROR, request: null });
  const inTxn = p.tm !== Tm.READY && p.tm !== Tm.INITIALIZING && p.txnsBegun > 0;
  return inTxn ? noteTxn(next, currentTxn(cfg, i, p), { told: Told.Failed }) : next;
}

export function crash(s: State, i: number): State {
  return put(s, i, { ...s.producers[i]!, status: Instance.Crashed });
}

// ---- Responses ------------------------------------------------------------------------------

/** The client has closed the connection a response travels on, or has stopped: it is ignored. */
export function acceptsResponse(s: State, i: number, from: number, conn: number): boolean {
  const p = s.producers[i]!;
  return isActive(p) && p.conns[connSlot(from)] === conn;
}

/**
 * Retriable errors of a transactional request: the request is sent again (NOT_COORDINATOR and
 * COORDINATOR_NOT_AVAILABLE after a coordinator lookup the model folds into the re-send;
 * COORDINATOR_LOAD_IN_PROGRESS and CONCURRENT_TRANSACTIONS as they are; every handler of
 * TransactionManager.java since 0.11.0). TxnOffsetCommit retries every RetriableException since 3.8
 * (PR #15266), e.g. NOT_ENOUGH_REPLICAS that partition verification answers; before, only the
 * coordinator errors.
 */
function isRetriable(error: Err): boolean {
  return (
    error === Err.CONCURRENT_TRANSACTIONS ||
    error === Err.NOT_COORDINATOR ||
    error === Err.COORDINATOR_NOT_AVAILABLE ||
    error === Err.COORDINATOR_LOAD_IN_PROGRESS ||
    error === Err.NOT_ENOUGH_REPLICAS
  );
}

function clientContext(cfg: KafkaConfig): ClientContext {
  return { cfg, base: defaultClientHandlers };
}

/** An answer reaches the client: a Produce answer, or the answer of the transactional request in flight. */
export function handleResponse(cfg: KafkaConfig, s: State, i: number, resp: Response): State {
  const p = s.producers[i]!;
  const handlers = cfg.clientHandlers;
  const ctx = clientContext(cfg);
  const handler = resp.api === Api.Produce ? handlers.Produce : responseHandler(handlers, resp.api);
  if (handler === undefined || (resp.api !== Api.Produce && p.request?.api !== resp.api)) return s;
  const next = handler(ctx, s, i, resp);
  const q = next.producers[i]!;
  if (p.tm === Tm.FATAL_ERROR || q.tm !== Tm.FATAL_ERROR) return next;
  return put(next, i, { ...q, ghostFatalError: resp.error });
}

function responseHandler(handlers: ClientHandlers, api: Api): ClientHandlers['EndTxn'] | undefined {
  switch (api) {
    case Api.InitProducerId:
      return handlers.InitProducerId;
    case Api.AddPartitionsToTxn:
      return handlers.AddPartitionsToTxn;
    case Api.AddOffsetsToTxn:
      return handlers.AddOffsetsToTxn;
    case Api.TxnOffsetCommit:
      return handlers.TxnOffsetCommit;
    case Api.EndTxn:
      return handlers.EndTxn;
    default:
      return undefined;
  }
}

/** Every transactional answer: a retriable error sends the request again, else `handle` reacts. */
function retriedOr(cfg: KafkaConfig, s: State, i: number, resp: Response, handle: () => State): State {
  const rules = clientRules(cfg, s.producers[i]!);
  if (rules.mutantConcurrentTransactionsFatal && resp.error === Err.CONCURRENT_TRANSACTIONS)
    return fatal(cfg, s, i);
  return isRetriable(resp.error) ? transmit(cfg, s, i, s.producers[i]!.request!) : handle();
}

/**
 * TRANSACTION_ABORTABLE on InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn or EndTxn: from the
 * 3.8 client on, every handler calls abortableError (KAFKA-16314; TransactionManager's handlers in
 * the kafka-clients 3.9.1 and 4.0.0 jars). An EndTxn(abort) answered so is fatal from 4.1
 * (KAFKA-19250); in 3.8-4.0 the abort fails and the producer stays ABORTING_TRANSACTION, from
 * which abortTransaction cannot be called again (no transition to itself), so it can only be
 * closed: fatal here for every release, as for INVALID_PRODUCER_ID_MAPPING there. No Apache
 * broker answers these requests with it; a variant's handlers can. Undefined for another error.
 */
function transactionAbortable(cfg: KafkaConfig, s: State, i: number, resp: Response): State | undefined {
  const p = s.producers[i]!;
  if (resp.error !== Err.TRANSACTION_ABORTABLE || !clientRules(cfg, p).transactionAbortable) return undefined;
  if (p.tm === Tm.ABORTING_TRANSACTION) return fatal(cfg, s, i);
  return put(s, i, transitionToAbortableError({ ...p, request: null }));
}

function handleAddPartitionsToTxnResponse(cfg: KafkaConfig, s: State, i: number, resp: Response): State {
  const p = s.producers[i]!;
  if (resp.error === Err.NONE)
    return put(s, i, {
      ...p,
      request: null,
      added: p.added | resp.partitions,
      pendingAdd: p.pendingAdd & ~resp.partitions,
      txnStarted: true,
    });
  if (resp.error === Err.INVALID_PRODUCER_ID_MAPPING)
    return invalidProducerIdMapping(cfg, clientRules(cfg, s.producers[i]!), s, i);
  return transactionAbortable(cfg, s, i, resp) ?? fatal(cfg, s, i);
}

function handleAddOffsetsToTxnResponse(cfg: KafkaConfig, s: State, i: number, resp: Response): State {
  const p = s.producers[i]!;
  if (resp.error === Err.NONE)
    return put(s, i, { ...p, request: null, offsetsAdded: true, txnStarted: true });
  if (resp.error === Err.INVALID_PRODUCER_ID_MAPPING)
    return invalidProducerIdMapping(cfg, clientRules(cfg, s.producers[i]!), s, i);
  return transactionAbortable(cfg, s, i, resp) ?? fatal(cfg, s, i);
}

function handleTxnOffsetCommitResponse(cfg: KafkaConfig, s: State, i: number, resp: Response): State {
  const p = s.producers[i]!;
  if (resp.error === Err.NONE)
    return put(s, i, { ...p, request: null, offsetsAdded: true, offsetsCommitted: true, txnStarted: true });
  // ILLEGAL_GENERATION: CommitFailedException, abortable without an epoch bump (KIP-447, TxnOffsetCommitHandler 2.5+);
  // TRANSACTION_ABORTABLE likewise (TxnOffsetCommitHandler@3.8, KAFKA-16314).
  if (resp.error === Err.ILLEGAL_GENERATION || resp.error === Err.TRANSACTION_ABORTABLE)
    return put(s, i, transitionToAbortableError({ ...p, request: null }));
  // Fencing and the errors the handler does not expect (INVALID_TXN_STATE, INVALID_PRODUCER_ID_MAPPING).
  return fatal(cfg, s, i);
}

function handleEndTxnResponse(cfg: KafkaConfig, s: State, i: number, resp: Response): State {
  if (resp.error === Err.NONE)
    return completeTransaction(cfg, s, i, clientRules(cfg, s.producers[i]!).tv2 ? resp : undefined);
  if (resp.error === Err.INVALID_PRODUCER_ID_MAPPING)
    return invalidProducerIdMapping(cfg, clientRules(cfg, s.producers[i]!), s, i);
  return transactionAbortable(cfg, s, i, resp) ?? fatal(cfg, s, i);
}

function handleInitProducerIdResponse(cfg: KafkaConfig, s: State, i: number, resp: Response): State {
  const p = s.producers[i]!;
  // A first InitProducerId, with no producer id yet, stays fatal here: what the Java client does
  // next with an abortable error and no producer id is not modelled (a known difference).
  if (resp.error !== Err.NONE)
    return (p.pid === NO_PID ? undefined : transactionAbortable(cfg, s, i, resp)) ?? fatal(cfg, s, i);
  // KafkaProducer.initTransactions@4.0.0 reads the finalized version once the first InitProducerId
  // is answered (KAFKA-18227), with no bump: nothing was sent at the old one.
  const transactionV2 =
    p.pid === NO_PID && clientRules(cfg, p).tv2UpgradeBump
      ? takesTransactionV2(cfg, p.instance, s.transactionVersion)
      : p.transactionV2;
  const ready: Producer = {
    ...p,
    tm: Tm.READY,
    request: null,
    pid: resp.pid,
    epoch: resp.epoch,
    bumpRequired: false,
    nextSeq: p.nextSeq.map(() => 0),
    transactionV2,
    nextTransactionV2: transactionV2,
  };
  return put(s, i, ready);
}

function handleProduceResponse(cfg: KafkaConfig, rules: Rules, s: State, i: number, resp: Response): State {
  const p = s.producers[i]!;
  const index = p.batches.findIndex(
    (b) => b.partition === resp.partitions && b.seq === resp.seq && b.status === BatchStatus.InFlight,
  );
  if (index < 0 || resp.epoch !== p.epoch) return s;
  const batches = p.batches.filter((_, k) => k !== index);
  if (resp.error === Err.NONE) return put(s, i, { ...p, batches });
  if (resp.error === Err.PRODUCER_FENCED) return fatal(cfg, put(s, i, { ...p, batches }), i);
  // maybeTransitionToErrorState@4.0.0 (KAFKA-18019): InvalidPidMappingException is fatal on Produce too.
  if (resp.error === Err.INVALID_PRODUCER_ID_MAPPING && rules.invalidPidMappingFatal)
    return fatal(cfg, put(s, i, { ...p, batches }), i);
  // Before KIP-588 (2.7) INVALID_PRODUCER_EPOCH was ProducerFencedException (Errors.java@2.6): fatal.
  if (resp.error === Err.INVALID_PRODUCER_EPOCH && !rules.kip588)
    return fatal(cfg, put(s, i, { ...p, batches }), i);
  // Retriable: the same batch goes again on the same connection.
  if (resp.error === Err.NOT_ENOUGH_REPLICAS) return resendBatch(cfg, s, i, index);
  // INVALID_PRODUCER_EPOCH (2.7+), OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_TXN_STATE, ...
  return put(s, i, batchFailed(rules, { ...p, batches }));
}

/** The Java client's reactions (TransactionManager's handlers and Sender), per generation through the rules. */
export const defaultClientHandlers: ClientHandlers = {
  InitProducerId: (ctx, s, i, resp) =>
    retriedOr(ctx.cfg, s, i, resp, () => handleInitProducerIdResponse(ctx.cfg, s, i, resp)),
  AddPartitionsToTxn: (ctx, s, i, resp) =>
    retriedOr(ctx.cfg, s, i, resp, () => handleAddPartitionsToTxnResponse(ctx.cfg, s, i, resp)),
  AddOffsetsToTxn: (ctx, s, i, resp) =>
    retriedOr(ctx.cfg, s, i, resp, () => handleAddOffsetsToTxnResponse(ctx.cfg, s, i, resp)),
  TxnOffsetCommit: (ctx, s, i, resp) =>
    retriedOr(ctx.cfg, s, i, resp, () => handleTxnOffsetCommitResponse(ctx.cfg, s, i, resp)),
  EndTxn: (ctx, s, i, resp) =>
    retriedOr(ctx.cfg, s, i, resp, () => handleEndTxnResponse(ctx.cfg, s, i, resp)),
  Produce: (ctx, s, i, resp) =>
    handleProduceResponse(ctx.cfg, clientRules(ctx.cfg, s.producers[i]!), s, i, resp),
  requestTimeout: (ctx, s, i) => resendOnNewConnection(ctx.cfg, s, i),
  batchExpired: (ctx, s, i, partition) => failExpiredBatches(ctx.cfg, s, i, partition),
};
