// The transaction coordinator (TransactionCoordinator + TransactionMetadata + its
// __transaction_state log), transaction version 0/1 as in Kafka 2.5-3.5.
//
// A state-changing request prepares a transition (pendingState) and appends its record
// (appendTransactionToLog); when the append completes the transition is installed and the answer
// sent. With atomic appends (the default) both happen in the request's own step; with
// asynchronous appends the completion, or a failure, is a step of its own, and requests in between
// meet the pending state. pendingState is also set for the marker phase (PrepareX with
// pendingState CompleteX).
import {
  type KafkaConfig,
  type Rules,
  forRequest,
  serverTransactionVersion,
  transactionVersion,
} from './config.ts';
import { noteEpochGrant, noteExcuse, noteExpiry, noteTxn } from './ghost.ts';
import { type Connection, hasMessage, reply, request, response, send } from './network.ts';
import {
  type Channel,
  type Coordinator,
  type Request,
  type Response,
  type State,
  type TxnAppend,
  type TxnMetadata,
  Api,
  Err,
  Excuse,
  LEADER_BASE,
  NO_EPOCH,
  NO_PID,
  NO_STATE,
  SUPPORTS_ALL,
  Supports,
  TC_NODE,
  TxnState,
  withField,
} from './state.ts';
import { bit, bits, setAt } from './util.ts';

/** `leaders`: the data partitions, plus the group's __consumer_offsets partition with the transform app. */
export function emptyCoordinator(transactionalIds: number, leaders: number): Coordinator {
  const none = Array.from({ length: transactionalIds }, () => null);
  return {
    epoch: 0,
    loading: false,
    nextPid: 0,
    metadata: none,
    log: none,
    appends: [],
    markerConns: Array.from({ length: leaders }, () => 0),
  };
}

function isPrepare(state: number): boolean {
  return state === TxnState.PrepareCommit || state === TxnState.PrepareAbort;
}

function isComplete(state: number): boolean {
  return state === TxnState.CompleteCommit || state === TxnState.CompleteAbort;
}

/**
 * TransactionMetadata.isEpochExhausted: the coordinator hands out at most maxEpoch - 1, so that it
 * can always fence a producer by one more bump.
 */
export function isEpochExhausted(cfg: KafkaConfig, epoch: number): boolean {
  return epoch >= cfg.maxEpoch - 1;
}

/** Installs `md` in memory and appends its record to __transaction_state. */
function persist(rules: Rules, c: Coordinator, txnId: number, md: TxnMetadata): Coordinator {
  return { ...writeRecord(rules, c, txnId, md), metadata: setAt(c.metadata, txnId, md) };
}

/** Appends the record of `md` to __transaction_state alone (ghost: what it replaced). */
function writeRecord(rules: Rules, c: Coordinator, txnId: number, md: TxnMetadata): Coordinator {
  const prev = c.log[txnId] ?? null;
  const record = {
    pid: md.pid,
    epoch: md.epoch,
    state: md.state,
    partitions: md.partitions,
    ghostTxn: md.ghostTxn,
    prevPid: rules.persistProducerIds ? md.prevPid : NO_PID,
    nextPid: rules.persistProducerIds ? md.nextPid : NO_PID,
    lastEpoch: rules.persistLastEpoch ? md.lastEpoch : NO_EPOCH,
    transactionVersion: md.transactionVersion,
    ghostPrevState: prev === null ? NO_STATE : prev.state,
    ghostPrevPid: prev === null ? NO_PID : prev.pid,
    ghostPrevEpoch: prev === null ? NO_EPOCH : prev.epoch,
  };
  return { ...c, log: setAt(c.log, txnId, record) };
}

function setMetadata(s: State, txnId: number, md: TxnMetadata): State {
  return withField(s, 'coordinator', {
    ...s.coordinator,
    metadata: setAt(s.coordinator.metadata, txnId, md),
  });
}

function sendMarkers(s: State, txnId: number, md: TxnMetadata, partitions: number): State {
  let network = s.network;
  const commit = md.pendingState === TxnState.CompleteCommit;
  for (const p of bits(partitions)) {
    const marker = request(Api.WriteTxnMarkers, {
      txnId,
      pid: md.pid,
      epoch: md.epoch,
      partitions: p,
      commit,
      coordinatorEpoch: s.coordinator.epoch,
      ghostTxn: md.ghostTxn,
      // WriteTxnMarkers v2 names the transaction's version (KIP-1228).
      supports: md.transactionVersion === 2 ? SUPPORTS_ALL : SUPPORTS_ALL & ~Supports.TransactionVersion2,
    });
    network = send(network, TC_NODE, LEADER_BASE + p, s.coordinator.markerConns[p]!, marker);
  }
  return withField(s, 'network', network);
}

/**
 * The previous producer id a transition other than InitProducerId keeps: before 4.0 only
 * InitProducerId sets it (TransactionMetadata.scala@3.9); from 4.0 every transition records the
 * id it leaves, which is the current one (prepareTransitionTo, TransactionMetadata.java@4.1).
 */
function sincePreviousTransition(rules: Rules, md: TxnMetadata): number {
  return rules.tv2 ? NO_PID : md.prevPid;
}

/** prepareAbortOrCommit: the PrepareCommit/PrepareAbort transition at `epoch` with `lastEpoch`. */
function prepareAbortOrCommit(
  md: TxnMetadata,
  commit: boolean,
  epoch: number,
  lastEpoch: number,
): TxnMetadata {
  return {
    ...md,
    epoch,
    lastEpoch,
    state: commit ? TxnState.PrepareCommit : TxnState.PrepareAbort,
    pendingState: NO_STATE,
  };
}

/**
 * Starts appending `transit` (TransactionStateManager.appendTransactionToLog,
 * TransactionStateManager.scala@3.9): meanwhile the metadata is `pending`, its pendingState the
 * transition's state. `answer` goes back on `channel` once the record is written.
 */
function appendTransactionToLog(
  cfg: KafkaConfig,
  s: State,
  txnId: number,
  pending: TxnMetadata,
  transit: TxnMetadata,
  epochFence: boolean,
  channel: Connection | null,
  req: Request | null,
  answer: Response | null,
): State {
  const append: TxnAppend = {
    txnId,
    transit,
    epochFence,
    request: req,
    response: answer,
    from: channel?.from ?? -1,
    conn: channel?.conn ?? -1,
  };
  const started = setMetadata(s, txnId, { ...pending, pendingState: transit.state });
  if (cfg.coordinatorAppends === 'atomic') return appendSucceeded(cfg, started, append);
  const appends = [...started.coordinator.appends, append].sort((x, y) => x.txnId - y.txnId);
  return withField(started, 'coordinator', { ...started.coordinator, appends });
}

/** The append of transactional.id `txnId` in flight, if any. */
export function pendingAppend(s: State, txnId: number): TxnAppend | undefined {
  return s.coordinator.appends.find((a) => a.txnId === txnId);
}

/** Answers the request an append serves, on the connection it came on. */
function answerAppend(s: State, append: TxnAppend, answer: Response): State {
  return reply(s, { from: append.from, to: TC_NODE, conn: append.conn }, answer);
}

/**
 * The record is written: completeTransitionTo installs the transition; after PrepareX,
 * prepareComplete starts the marker phase and clears hasFailedEpochFence
 * (TransactionCoordinator.endTransaction, TransactionMetadata.prepareComplete, 3.9).
 */
function appendSucceeded(cfg: KafkaConfig, s: State, append: TxnAppend): State {
  const t = append.txnId;
  const md = append.transit;
  let next: State = noteWritten(
    cfg,
    withField(s, 'coordinator', persist(cfg.rules, s.coordinator, t, md)),
    append,
  );
  if (isPrepare(md.state)) {
    const complete: TxnMetadata = {
      ...md,
      pendingState: md.state === TxnState.PrepareCommit ? TxnState.CompleteCommit : TxnState.CompleteAbort,
      hasFailedEpochFence: false,
    };
    next = sendMarkers(setMetadata(next, t, complete), t, complete, complete.partitions);
  }
  return append.response === null ? next : answerAppend(next, append, append.response);
}

/** Ghost: a written PrepareCommit decides its transaction; a written InitProducerId grants an epoch. */
function noteWritten(cfg: KafkaConfig, s: State, append: TxnAppend): State {
  const md = append.transit;
  const req = append.request;
  if (md.state === TxnState.PrepareCommit && md.ghostTxn >= 0)
    return noteTxn(s, md.ghostTxn, { prepared: true });
  if (req !== null && req.api === Api.InitProducerId && md.state === TxnState.Empty)
    return noteEpochGrant(cfg, s, req.ghostProducer, req.ghostTxn);
  return s;
}

/** The append of `txnId` is written and replicated (its own step with asynchronous appends). */
export function completeAppend(cfg: KafkaConfig, s: State, txnId: number): State {
  const append = pendingAppend(s, txnId)!;
  return appendSucceeded(cfg, withoutAppend(s, txnId), append);
}

/**
 * The append fails with NOT_ENOUGH_REPLICAS, which the coordinator answers as
 * COORDINATOR_NOT_AVAILABLE (TransactionStateManager.appendTransactionToLog, 3.9): the pending
 * transition is dropped. A failed fence keeps the epoch it bumped in memory and, from 2.6, is
 * remembered so the next fence does not bump again (KAFKA-9666; TransactionCoordinator.scala@2.6);
 * a version-2 fence that bumped nothing in memory is not (KAFKA-19367, 4.0.1 and 4.1.0).
 */
export function failAppend(rules: Rules, s: State, txnId: number): State {
  const append = pendingAppend(s, txnId)!;
  const md = s.coordinator.metadata[txnId]!;
  const failedFence =
    append.epochFence &&
    rules.rememberFailedFence &&
    !fenceKeepsEpoch(rules, append.transit.transactionVersion);
  const next = setMetadata(withoutAppend(s, txnId), txnId, {
    ...md,
    pendingState: NO_STATE,
    hasFailedEpochFence: md.hasFailedEpochFence || failedFence,
  });
  if (append.response === null) return next;
  const error = Err.COORDINATOR_NOT_AVAILABLE;
  // initTransactionError: an InitProducerId error carries no producer id or epoch.
  const answer =
    append.response.api === Api.InitProducerId
      ? response(Api.InitProducerId, { txnId, error })
      : { ...append.response, error };
  return answerAppend(next, append, answer);
}

function withoutAppend(s: State, txnId: number): State {
  return withField(s, 'coordinator', {
    ...s.coordinator,
    appends: s.coordinator.appends.filter((a) => a.txnId !== txnId),
  });
}

/**
 * The answer of a coordinator that cannot read the transactional.id's metadata
 * (getTransactionState returns an error): an InitProducerId error carries no producer id or epoch
 * (initTransactionError); the others echo the request, which a leader needs to match its
 * verification attempt.
 */
function coordinatorError(req: Request, error: Err): Response {
  if (req.api === Api.InitProducerId) return response(Api.InitProducerId, { txnId: req.txnId, error });
  return response(req.api, {
    txnId: req.txnId,
    error,
    pid: req.pid,
    epoch: req.epoch,
    partitions: req.partitions,
    seq: req.seq,
    guard: req.guard,
  });
}

/**
 * While a new coordinator loads __transaction_state, getTransactionState answers every request
 * COORDINATOR_LOAD_IN_PROGRESS (TransactionStateManager.scala@0.11.0 and @3.9, loadingPartitions).
 */
function answerLoading(s: State, channel: Connection, req: Request): State {
  return reply(s, channel, coordinatorError(req, Err.COORDINATOR_LOAD_IN_PROGRESS));
}

/**
 * What the coordinator knows of transactional.id `txnId`: its memory, or while it loads, the
 * record it is loading. Properties read it, so that the loading window hides nothing.
 */
export function knownTransaction(
  s: State,
  txnId: number,
): Pick<TxnMetadata, 'pid' | 'epoch' | 'state' | 'partitions' | 'prevPid' | 'nextPid'> | null {
  return (s.coordinator.loading ? s.coordinator.log[txnId] : s.coordinator.metadata[txnId]) ?? null;
}

/** A new producer id from the ProducerIdManager. */
export function generateProducerId(c: Coordinator): [Coordinator, number] {
  return [{ ...c, nextPid: c.nextPid + 1 }, c.nextPid];
}

/**
 * InitProducerId (TransactionCoordinator.handleInitProducerId, TV1; KIP-360 expected pid/epoch).
 * At an exhausted epoch the producer id rotates: a new id at epoch 0 (0.11 on, KAFKA-5283); an
 * expected pid/epoch that names the id before the rotation at an exhausted epoch is a retry of it
 * (isValidProducerId, 2.5 on). Elsewhere an exhausted epoch cannot be bumped: Kafka's
 * prepareIncrementProducerEpoch throws, and the client gets UNKNOWN_SERVER_ERROR
 * (TransactionCoordinator.scala@3.9).
 */
export function handleInitProducerId(cfg: KafkaConfig, s: State, channel: Connection, req: Request): State {
  if (s.coordinator.loading) return answerLoading(s, channel, req);
  const t = req.txnId;
  const answer = (state: State, error: Err, pid = NO_PID, epoch = NO_EPOCH): State =>
    reply(state, channel, response(Api.InitProducerId, { txnId: t, error, pid, epoch }));
  let c = s.coordinator;
  let md = c.metadata[t] ?? null;
  if (md === null) {
    let pid: number;
    [c, pid] = generateProducerId(c);
    md = {
      pid,
      epoch: NO_EPOCH,
      lastEpoch: NO_EPOCH,
      state: TxnState.Empty,
      pendingState: NO_STATE,
      partitions: 0,
      ghostTxn: -1,
      hasFailedEpochFence: false,
      prevPid: NO_PID,
      nextPid: NO_PID,
      transactionVersion: serverTransactionVersion(cfg, s),
    };
  }
  const expected = req.pid !== NO_PID;
  const validProducerId =
    !expected ||
    md.epoch === NO_EPOCH ||
    req.pid === md.pid ||
    (req.pid === md.prevPid && isEpochExhausted(cfg, req.epoch));
  if (md.pendingState !== NO_STATE) return answer(s, Err.CONCURRENT_TRANSACTIONS);
  if (!validProducerId) return answer(s, Err.PRODUCER_FENCED);
  if (isPrepare(md.state)) return answer(s, Err.CONCURRENT_TRANSACTIONS);
  // Fence the running transaction; the client is told CONCURRENT_TRANSACTIONS and retries once the abort completes.
  if (md.state === TxnState.Ongoing)
    return fenceProducerEpoch(
      cfg,
      noteExcuse(withField(s, 'coordinator', c), t, Excuse.OtherInstance, req.ghostProducer),
      t,
      md,
      channel,
      req,
    );
  let empty: TxnMetadata;
  if (isEpochExhausted(cfg, md.epoch) && (!expected || req.epoch === md.epoch)) {
    // prepareProducerIdRotation: the last epoch is kept when the client named it.
    let pid: number;
    [c, pid] = generateProducerId(c);
    empty = {
      ...md,
      pid,
      prevPid: md.pid,
      epoch: 0,
      lastEpoch: expected ? md.epoch : NO_EPOCH,
      state: TxnState.Empty,
      partitions: 0,
      ghostTxn: -1,
    };
  } else if (isEpochExhausted(cfg, md.epoch)) {
    return answer(s, Err.UNKNOWN_SERVER_ERROR);
  } else {
    // prepareIncrementProducerEpoch(expectedEpoch).
    let epoch: number;
    let lastEpoch: number;
    if (!expected) [epoch, lastEpoch] = [md.epoch + 1, NO_EPOCH];
    else if (req.epoch === md.epoch || md.epoch === NO_EPOCH) [epoch, lastEpoch] = [md.epoch + 1, md.epoch];
    else if (req.epoch === md.lastEpoch) [epoch, lastEpoch] = [md.epoch, md.lastEpoch];
    else return answer(s, Err.PRODUCER_FENCED);
    empty = { ...md, prevPid: NO_PID, epoch, lastEpoch, state: TxnState.Empty, partitions: 0, ghostTxn: -1 };
  }
  const granted = response(Api.InitProducerId, {
    txnId: t,
    error: Err.NONE,
    pid: empty.pid,
    epoch: empty.epoch,
  });
  return appendTransactionToLog(
    cfg,
    withField(s, 'coordinator', c),
    t,
    md,
    empty,
    false,
    channel,
    req,
    granted,
  );
}

/**
 * prepareFenceProducerEpoch, then endTransaction(ABORT, isFromClient = false): the epoch is bumped
 * in memory before the PrepareAbort append (TransactionCoordinator.scala@0.11.0, @3.9), except
 * after a fence whose append failed (hasFailedEpochFence, TransactionMetadata.scala@2.6, KAFKA-9666).
 * `channel` is the InitProducerId that fences, or null for a timeout abort. At the maximum epoch
 * Kafka throws instead (the InitProducerId gets UNKNOWN_SERVER_ERROR, the timeout does nothing),
 * until KAFKA-20090 keeps the epoch there and, under transaction version 2, also rotates the
 * producer id on completion when the epoch is exhausted. From KAFKA-19367 (4.0.1, 4.1.0) a fence at
 * the brokers' transaction version 2 leaves memory at the old epoch: prepareAbortOrCommit alone
 * bumps, so the PrepareAbort carries epoch + 1 with the old epoch as lastProducerEpoch
 * (TransactionCoordinator.scala@4.1.0 endTransaction, TransactionMetadata.scala@4.1.0).
 */
function fenceProducerEpoch(
  cfg: KafkaConfig,
  s: State,
  t: number,
  md: TxnMetadata,
  channel: Connection | null,
  req: Request | null,
): State {
  const rules = cfg.rules;
  const atMax = md.epoch >= cfg.maxEpoch;
  if (atMax && !rules.fenceRotatesProducerId)
    return req === null
      ? s
      : reply(s, channel!, response(Api.InitProducerId, { txnId: t, error: Err.UNKNOWN_SERVER_ERROR }));
  // Not from a client: the brokers' transaction version (TransactionCoordinator, 4.0).
  const version = serverTransactionVersion(cfg, s);
  const keepsEpoch = fenceKeepsEpoch(rules, version);
  const epoch = (md.hasFailedEpochFence && !keepsEpoch) || atMax ? md.epoch : md.epoch + 1;
  const lastEpoch = keepsEpoch ? md.epoch : fenceLastEpoch;
  let c = s.coordinator;
  let nextPid = NO_PID;
  if (rules.tv2 && rules.fenceRotatesProducerId && isEpochExhausted(cfg, md.epoch))
    [c, nextPid] = generateProducerId(c);
  const fenced: TxnMetadata = {
    ...md,
    epoch: keepsEpoch ? md.epoch : epoch,
    lastEpoch: keepsEpoch ? md.lastEpoch : lastEpoch,
    prevPid: sincePreviousTransition(rules, md),
    transactionVersion: version,
  };
  const error = rules.mutantFenceAnswersNone ? Err.NONE : Err.CONCURRENT_TRANSACTIONS;
  const answer = req === null ? null : response(Api.InitProducerId, { txnId: t, error });
  // 4.0.0's second bump, in prepareAbortOrCommit (TransactionMetadata.scala@4.0.0); not past the
  // largest epoch, where the model has no record of what 4.0.0 did.
  const twice = rules.tv2FenceBumpsTwice && version === 2 && !keepsEpoch && epoch < cfg.maxEpoch;
  const transit = {
    ...(twice
      ? prepareAbortOrCommit(fenced, false, epoch + 1, epoch)
      : prepareAbortOrCommit(fenced, false, epoch, lastEpoch)),
    nextPid,
  };
  return appendTransactionToLog(
    cfg,
    withField(s, 'coordinator', c),
    t,
    fenced,
    transit,
    true,
    channel,
    req,
    answer,
  );
}

/** KAFKA-19367 (4.0.1, 4.1.0): a fence at transaction version 2 leaves the epoch in memory as it was. */
function fenceKeepsEpoch(rules: Rules, serverVersion: number): boolean {
  return rules.tv2FenceKeepsEpoch && serverVersion === 2;
}

/**
 * The fence forgets the last epoch (but a version-2 fence under tv2FenceKeepsEpoch), so
 * InitProducerId with the pre-fence epoch is fenced, not a retry (prepareFenceProducerEpoch,
 * TransactionMetadata.scala@2.5; no lastProducerEpoch before 2.5).
 */
const fenceLastEpoch = NO_EPOCH;

/** Checks shared by AddPartitionsToTxn and EndTxn (TV1). */
function producerCheck(rules: Rules, md: TxnMetadata | null, req: Request): Err {
  if (md === null || md.pid !== req.pid) return Err.INVALID_PRODUCER_ID_MAPPING;
  if (!rules.mutantNoCoordinatorEpochCheck && md.epoch !== req.epoch) return Err.PRODUCER_FENCED;
  if (md.pendingState !== NO_STATE) return Err.CONCURRENT_TRANSACTIONS;
  return Err.NONE;
}

/**
 * AddPartitionsToTxn (handleAddPartitionsToTransaction), and AddOffsetsToTxn, which adds the
 * group's __consumer_offsets partition the same way.
 */
export function handleAddPartitionsToTxn(
  cfg: KafkaConfig,
  s: State,
  channel: Connection,
  req: Request,
): State {
  const rules = forRequest(cfg.rules, req);
  if (s.coordinator.loading) return answerLoading(s, channel, req);
  if (req.verifyOnly) return handleVerifyPartitionsInTransaction(rules, s, channel, req);
  const t = req.txnId;
  const md = s.coordinator.metadata[t] ?? null;
  // A leader adding its partition (transaction version 2) needs its attempt back with the answer.
  const answerWith = (error: Err): Response =>
    response(req.api, {
      txnId: t,
      error,
      pid: req.pid,
      epoch: req.epoch,
      partitions: req.partitions,
      seq: req.seq,
      guard: req.guard,
    });
  const answer = (state: State, error: Err): State => reply(state, channel, answerWith(error));
  // A pending transition is answered before the producer checks from 4.0 (KAFKA-18660, PR #18758).
  if (rules.pendingCheckFirst && md !== null && md.pendingState !== NO_STATE)
    return answer(s, Err.CONCURRENT_TRANSACTIONS);
  const error = producerCheck(rules, md, req);
  if (error !== Err.NONE || md === null) return answer(s, error);
  if (isPrepare(md.state)) return answer(s, Err.CONCURRENT_TRANSACTIONS);
  if (md.state === TxnState.Ongoing && (req.partitions & ~md.partitions) === 0) return answer(s, Err.NONE);
  const ongoing: TxnMetadata = {
    ...md,
    epoch: rules.mutantNoCoordinatorEpochCheck ? md.epoch : req.epoch,
    state: TxnState.Ongoing,
    // What the brokers' code keeps, whatever the request's version.
    prevPid: sincePreviousTransition(cfg.rules, md),
    partitions: md.state === TxnState.Ongoing ? md.partitions | req.partitions : req.partitions,
    ghostTxn: req.ghostTxn,
    transactionVersion: transactionVersion(rules),
  };
  return appendTransactionToLog(cfg, s, t, md, ongoing, false, channel, req, answerWith(Err.NONE));
}

/**
 * AddPartitionsToTxn with verifyOnly from a partition leader (KIP-890 part 1,
 * handleVerifyPartitionsInTransaction). The pending state is deliberately not checked
 * (KAFKA-14904), nor the state beyond Prepare*: a partition is verified by membership alone
 * (TransactionCoordinator.scala@3.6). A partition not in the transaction is INVALID_TXN_STATE
 * (3.6), TRANSACTION_ABORTABLE from 3.8 (KAFKA-16314; TransactionCoordinator.scala@3.8), which the
 * leader passes on to clients whose Produce or TxnOffsetCommit version knows it.
 */
function handleVerifyPartitionsInTransaction(
  rules: Rules,
  s: State,
  channel: Connection,
  req: Request,
): State {
  const md = s.coordinator.metadata[req.txnId] ?? null;
  let error: Err;
  if (md === null || md.pid !== req.pid) error = Err.INVALID_PRODUCER_ID_MAPPING;
  else if (md.epoch !== req.epoch) error = Err.PRODUCER_FENCED;
  else if (rules.verifyChecksPending && md.pendingState !== NO_STATE) error = Err.CONCURRENT_TRANSACTIONS;
  else if (isPrepare(md.state)) error = Err.CONCURRENT_TRANSACTIONS;
  else if ((md.partitions & req.partitions) === req.partitions) error = Err.NONE;
  else error = rules.transactionAbortable ? Err.TRANSACTION_ABORTABLE : Err.INVALID_TXN_STATE;
  return reply(
    s,
    channel,
    response(Api.AddPartitionsToTxn, {
      txnId: req.txnId,
      error,
      pid: req.pid,
      epoch: req.epoch,
      partitions: req.partitions,
      seq: req.seq,
      guard: req.guard,
    }),
  );
}

/** EndTxn (endTransaction, TV0/TV1: the epoch stays; markers carry it). */
export function handleEndTxn(cfg: KafkaConfig, s: State, channel: Connection, req: Request): State {
  const rules = forRequest(cfg.rules, req);
  if (s.coordinator.loading) return answerLoading(s, channel, req);
  if (rules.tv2) return handleEndTxnV2(cfg, s, channel, req);
  const t = req.txnId;
  const md = s.coordinator.metadata[t] ?? null;
  const answerWith = (error: Err): Response =>
    response(Api.EndTxn, { txnId: t, error, pid: req.pid, epoch: req.epoch });
  const answer = (state: State, error: Err): State => reply(state, channel, answerWith(error));
  const error = producerCheck(rules, md, req);
  if (error !== Err.NONE || md === null) return answer(s, error);
  if (md.state === TxnState.Ongoing || rules.mutantEndTxnIgnoresState) {
    const prepared = {
      ...prepareAbortOrCommit(md, req.commit, md.epoch, md.lastEpoch),
      transactionVersion: 1,
    };
    return appendTransactionToLog(cfg, s, t, md, prepared, false, channel, req, answerWith(Err.NONE));
  }
  if (md.state === (req.commit ? TxnState.CompleteCommit : TxnState.CompleteAbort))
    return answer(s, Err.NONE);
  if (md.state === (req.commit ? TxnState.PrepareCommit : TxnState.PrepareAbort))
    return answer(s, Err.CONCURRENT_TRANSACTIONS);
  return answer(s, Err.INVALID_TXN_STATE);
}

/**
 * EndTxn v5, transaction version 2 (KIP-890 part 2, 4.0 TransactionCoordinator.endTransaction):
 * the epoch is bumped when the transaction is prepared and the answer carries the new epoch. A
 * retry is recognised by its epoch being one below the coordinator's. In Empty and Complete*
 * states the answer follows Kafka's table (Retry = epoch + 1 = stored, Current = epoch = stored):
 *
 *   state           Abort/Retry  Abort/Current  Commit/Retry  Commit/Current
 *   Empty           (fenced)     epoch bump     (fenced)      INVALID_TXN_STATE
 *   CompleteAbort   NONE         epoch bump     INVALID_TXN_STATE  INVALID_TXN_STATE
 *   CompleteCommit  INVALID_TXN_STATE  epoch bump  NONE        INVALID_TXN_STATE
 *
 * "epoch bump" writes an empty PrepareAbort at epoch + 1 (the client cannot know whether its
 * transaction was already ended). In Prepare* the same result is CONCURRENT_TRANSACTIONS and the
 * other INVALID_TXN_STATE (TransactionCoordinator.scala bb126f2d, 4.0 era). From 4.0.0 a pending
 * transition is answered first, before the producer id and the epoch (KAFKA-18464, PR #18467,
 * moved it above the epoch check; KAFKA-18660, PRs #18730 and #18758, above the producer-id check;
 * TransactionCoordinator.scala@4.0.0 endTransaction): an EndTxn with the id a rotation answered
 * ahead of its completion, or an empty abort racing the end of the previous transaction, waits
 * instead of failing. Before, the order was pid, epoch, pending.
 */
function handleEndTxnV2(cfg: KafkaConfig, s: State, channel: Connection, req: Request): State {
  const rules = cfg.rules;
  const t = req.txnId;
  const md = s.coordinator.metadata[t] ?? null;
  const answer = (state: State, error: Err): State => {
    const now = state.coordinator.metadata[t] ?? null;
    return reply(
      state,
      channel,
      response(Api.EndTxn, { txnId: t, error, pid: now?.pid ?? req.pid, epoch: now?.epoch ?? req.epoch }),
    );
  };
  // A retry of an EndTxn whose completion rotated the producer id (retryOnOverflow, KAFKA-18660).
  const retryOnOverflow =
    md !== null && md.prevPid === req.pid && req.epoch === cfg.maxEpoch - 1 && md.epoch === 0;
  if (md === null) return answer(s, Err.INVALID_PRODUCER_ID_MAPPING);
  const pending = md.pendingState !== NO_STATE;
  if (pending && rules.pendingCheckFirst) return answer(s, Err.CONCURRENT_TRANSACTIONS);
  if (md.pid !== req.pid && !retryOnOverflow) return answer(s, Err.INVALID_PRODUCER_ID_MAPPING);
  const retry = md.epoch === req.epoch + 1 || retryOnOverflow;
  const current = md.epoch === req.epoch && !retryOnOverflow;
  const validEpoch =
    md.state === TxnState.Ongoing || md.state === TxnState.Empty
      ? current
      : isPrepare(md.state)
        ? retry
        : retry || current;
  if (!validEpoch && !rules.mutantNoCoordinatorEpochCheck) return answer(s, Err.PRODUCER_FENCED);
  if (pending) return answer(s, Err.CONCURRENT_TRANSACTIONS);
  // prepareAbortOrCommit with epoch bump: the new epoch, the old one as the last epoch, and a next
  // producer id when the old epoch is exhausted. Past the maximum epoch Kafka throws (UNKNOWN_SERVER_ERROR);
  // KAFKA-20090 lets an abort stay at the maximum.
  const prepare = (from: TxnMetadata, commit: boolean): State => {
    const atMax = from.epoch >= cfg.maxEpoch;
    if (atMax && (commit || !rules.fenceRotatesProducerId)) return answer(s, Err.UNKNOWN_SERVER_ERROR);
    let c = s.coordinator;
    let nextPid = NO_PID;
    if (isEpochExhausted(cfg, from.epoch)) [c, nextPid] = generateProducerId(c);
    const transit = {
      ...prepareAbortOrCommit(from, commit, atMax ? from.epoch : from.epoch + 1, from.epoch),
      nextPid,
      prevPid: NO_PID,
      transactionVersion: 2,
    };
    const completed = completedTransition(transit);
    const granted = rules.mutantEndTxnAnswersPreparedEpoch ? transit : completed;
    return appendTransactionToLog(
      cfg,
      withField(s, 'coordinator', c),
      t,
      md,
      transit,
      false,
      channel,
      req,
      response(Api.EndTxn, { txnId: t, error: Err.NONE, pid: granted.pid, epoch: granted.epoch }),
    );
  };
  if (md.state === TxnState.Ongoing || rules.mutantEndTxnIgnoresState) return prepare(md, req.commit);
  const sameResult =
    md.state === (req.commit ? TxnState.CompleteCommit : TxnState.CompleteAbort) ||
    md.state === (req.commit ? TxnState.PrepareCommit : TxnState.PrepareAbort);
  if (isPrepare(md.state)) return answer(s, sameResult ? Err.CONCURRENT_TRANSACTIONS : Err.INVALID_TXN_STATE);
  if (!req.commit && current) return prepare({ ...md, partitions: 0 }, false);
  return answer(s, retry && sameResult ? Err.NONE : Err.INVALID_TXN_STATE);
}

/** A WriteTxnMarkers answer (TransactionMarkerRequestCompletionHandler). */
export function handleWriteTxnMarkersResponse(
  s: State,
  conn: number,
  resp: { txnId: number; error: Err; pid: number; partitions: number; coordinatorEpoch: number },
): State {
  // An answer to a previous coordinator epoch reaches a coordinator that has resigned: dropped.
  if (resp.coordinatorEpoch !== s.coordinator.epoch) return s;
  // An answer on a connection the marker channel closed after a timeout is never read.
  if (conn !== s.coordinator.markerConns[resp.partitions]) return s;
  const md = s.coordinator.metadata[resp.txnId] ?? null;
  if (md === null || !isComplete(md.pendingState) || md.pid !== resp.pid) return s;
  if (resp.error === Err.NONE)
    return setMetadata(s, resp.txnId, { ...md, partitions: md.partitions & ~bit(resp.partitions) });
  // Retriable: the partition stays due and the marker is sent again (TransactionMarkerRequestCompletionHandler).
  if (resp.error === Err.NOT_ENOUGH_REPLICAS) return s;
  // INVALID_PRODUCER_EPOCH / TRANSACTION_COORDINATOR_FENCED: stop sending this transaction's
  // markers and never write CompleteX; the transaction stays in Prepare*.
  return setMetadata(s, resp.txnId, { ...md, pendingState: NO_STATE, partitions: 0 });
}

/** Every partition acknowledged its marker: CompleteCommit/CompleteAbort is its own log append. */
export function canCompleteTransaction(s: State, txnId: number): boolean {
  const md = s.coordinator.metadata[txnId] ?? null;
  return md !== null && isComplete(md.pendingState) && md.partitions === 0;
}

/**
 * prepareComplete: CompleteCommit/CompleteAbort, and the producer id a Prepare* at an exhausted
 * epoch took rotates in at epoch 0 (transaction version 2, TransactionMetadata.java@4.1).
 */
function completedTransition(md: TxnMetadata): TxnMetadata {
  const state = md.state === TxnState.PrepareCommit ? TxnState.CompleteCommit : TxnState.CompleteAbort;
  const completed: TxnMetadata = { ...md, state, pendingState: NO_STATE, partitions: 0 };
  if (md.nextPid === NO_PID) return completed;
  return { ...completed, pid: md.nextPid, prevPid: md.pid, nextPid: NO_PID, epoch: 0 };
}

export function completeTransaction(cfg: KafkaConfig, s: State, txnId: number): State {
  const md = s.coordinator.metadata[txnId]!;
  const done = completedTransition({ ...md, prevPid: sincePreviousTransition(cfg.rules, md) });
  return withField(s, 'coordinator', persist(cfg.rules, s.coordinator, txnId, done));
}

/** The marker for `p` is due and no copy of it (or of its answer) is on the way. */
export function canRetryTxnMarker(s: State, txnId: number, p: number): boolean {
  const md = s.coordinator.metadata[txnId] ?? null;
  if (md === null || !isComplete(md.pendingState) || (md.partitions & bit(p)) === 0) return false;
  const conn = s.coordinator.markerConns[p];
  return !hasMessage(
    s.network,
    (ch, m) =>
      ch.conn === conn &&
      m.api === Api.WriteTxnMarkers &&
      m.txnId === txnId &&
      m.partitions === p &&
      (ch.from === TC_NODE || ch.to === TC_NODE),
  );
}

/** The marker channel manager re-sends a marker whose request or answer was lost, or timed out. */
export function retryTxnMarker(s: State, txnId: number, p: number): State {
  return sendMarkers(s, txnId, s.coordinator.metadata[txnId]!, bit(p));
}

/** A WriteTxnMarkers request to partition `p`'s leader, or its answer, is on the way on the current connection. */
export function canTimeOutTxnMarker(s: State, p: number): boolean {
  const leader = LEADER_BASE + p;
  const conn = s.coordinator.markerConns[p];
  return hasMessage(
    s.network,
    (ch, m) =>
      ch.conn === conn &&
      m.api === Api.WriteTxnMarkers &&
      ((ch.from === TC_NODE && ch.to === leader) || (ch.from === leader && ch.to === TC_NODE)),
  );
}

/**
 * The marker request to `p`'s leader times out (InterBrokerSendThread, request.timeout.ms): the
 * connection is closed and its markers are re-enqueued for a new one, while the request already
 * sent may still be processed by the leader (TransactionMarkerRequestCompletionHandler.scala@3.9,
 * wasDisconnected).
 */
export function txnMarkerTimeout(s: State, p: number): State {
  return withField(s, 'coordinator', {
    ...s.coordinator,
    markerConns: setAt(s.coordinator.markerConns, p, s.coordinator.markerConns[p]! + 1),
  });
}

/** An Ongoing transaction may time out; at the maximum epoch its fence throws before KAFKA-20090, so nothing happens. */
export function canTimeOut(cfg: KafkaConfig, s: State, txnId: number): boolean {
  const rules = cfg.rules;
  const md = s.coordinator.metadata[txnId] ?? null;
  if (md === null) return false;
  const fenceThrows = rules.timeoutFence && md.epoch >= cfg.maxEpoch && !rules.fenceRotatesProducerId;
  if (md.state === TxnState.Ongoing && md.pendingState === NO_STATE) return !fenceThrows;
  return rules.mutantTimeoutAbortsPrepared && md.state === TxnState.PrepareCommit;
}

/**
 * abortTimedOutTransactions: an Ongoing transaction past its timeout is aborted by the coordinator.
 * Since KAFKA-6119 (1.0) the epoch is bumped first (prepareFenceProducerEpoch), fencing the producer.
 */
export function transactionTimeout(cfg: KafkaConfig, s: State, txnId: number): State {
  const md = s.coordinator.metadata[txnId]!;
  const excused = noteExcuse(s, txnId, Excuse.TransactionTimedOut);
  if (cfg.rules.timeoutFence) return fenceProducerEpoch(cfg, excused, txnId, md, null, null);
  return appendTransactionToLog(
    cfg,
    excused,
    txnId,
    md,
    prepareAbortOrCommit(md, false, md.epoch, md.lastEpoch),
    false,
    null,
    null,
    null,
  );
}

/**
 * transactional.id.expiration.ms: an id in Empty, CompleteCommit or CompleteAbort with no pending
 * transition may be removed (TransactionStateManager.removeExpiredTransactionalIds and shouldExpire,
 * TransactionStateManager.scala@3.9; @0.11.0 selected by state alone, and prepareDead refused a
 * pending transition). Model time is not explicit: the id has been idle long enough once nothing
 * for it is still on its way to the coordinator.
 */
export function canExpireTransactionalId(s: State, txnId: number): boolean {
  const md = s.coordinator.metadata[txnId] ?? null;
  if (md === null || md.pendingState !== NO_STATE || (md.state !== TxnState.Empty && !isComplete(md.state)))
    return false;
  return !hasMessage(s.network, (ch, m) => ch.to === TC_NODE && !m.response && m.txnId === txnId);
}

/**
 * prepareDead, the tombstone append and the removal from the cache as one step (a tombstone that
 * fails to append leaves the metadata as it was). The compacted log keeps only the tombstone, so a
 * failover does not bring the id back; requests with the old producer id meet no metadata, and the
 * next InitProducerId creates it afresh with a new producer id (handleInitProducerId).
 */
export function transactionalIdExpiry(cfg: KafkaConfig, s: State, txnId: number): State {
  const c = s.coordinator;
  const removed: State = withField(s, 'coordinator', {
    ...c,
    metadata: setAt(c.metadata, txnId, null),
    log: setAt(c.log, txnId, null),
  });
  return noteExcuse(
    noteExpiry(cfg, removed, txnId, c.metadata[txnId]!.pid),
    txnId,
    Excuse.TransactionalIdExpired,
  );
}

/**
 * A new leader of the __transaction_state partition, at coordinator epoch + 1: the old
 * coordinator resigns (onResignation, removeTransactionsForTxnTopicPartition) and the new one
 * loads the log (onElection, loadTransactionsForTxnTopicPartition; TransactionCoordinator.scala
 * and TransactionStateManager.scala@3.9).
 *
 * An append in flight had either reached the replica that takes over (bit t of `kept`: its record
 * is in the log the new coordinator reads) or is truncated. Either way the old coordinator
 * answers its request NOT_COORDINATOR: the append fails with NOT_LEADER_OR_FOLLOWER, or succeeds
 * after the cached coordinator epoch changed; both map to NOT_COORDINATOR in
 * appendTransactionToLog. A request still on its way to the old coordinator meets a broker that
 * no longer owns the partition, which answers NOT_COORDINATOR too; the client re-sends after
 * FindCoordinator, which the model folds into the re-send.
 */
export function coordinatorFailover(cfg: KafkaConfig, s: State, kept: number): State {
  let next = s;
  for (const append of s.coordinator.appends) {
    if ((kept & bit(append.txnId)) !== 0)
      next = noteWritten(
        cfg,
        withField(
          next,
          'coordinator',
          writeRecord(cfg.rules, next.coordinator, append.txnId, append.transit),
        ),
        append,
      );
    if (append.request === null) continue;
    next = answerAppend(
      next,
      append,
      cfg.rules.mutantResignedAppendAnswersNone
        ? append.response!
        : coordinatorError(append.request, Err.NOT_COORDINATOR),
    );
  }
  next = answerRequestsOnTheirWay(next, Err.NOT_COORDINATOR);
  const c = next.coordinator;
  // The new coordinator's marker channel opens new connections.
  const elected: Coordinator = {
    ...c,
    epoch: c.epoch + 1,
    loading: true,
    metadata: c.metadata.map(() => null),
    appends: [],
    markerConns: c.markerConns.map((m) => m + 1),
  };
  next = withField(next, 'coordinator', elected);
  return cfg.coordinatorLoading === 'atomic' ? loadTransactions(cfg, next) : next;
}

/** Every request travelling to the coordinator is answered `error` (the marker answers stay, to be dropped on arrival). */
function answerRequestsOnTheirWay(s: State, error: Err): State {
  const toCoordinator = s.network.filter((ch) => ch.to === TC_NODE && ch.messages.some((m) => !m.response));
  if (toCoordinator.length === 0) return s;
  const network = s.network.flatMap((ch): Channel[] => {
    if (ch.to !== TC_NODE) return [ch];
    const answers = ch.messages.filter((m) => m.response);
    return answers.length === 0 ? [] : [{ ...ch, messages: answers }];
  });
  let next: State = withField(s, 'network', network);
  for (const ch of toCoordinator)
    for (const m of ch.messages) if (!m.response) next = reply(next, ch, coordinatorError(m, error));
  return next;
}

/**
 * The new coordinator has read __transaction_state: memory is rebuilt from the log, and markers
 * are sent for every Prepare* transaction (loadTransactionsForTxnTopicPartition, then
 * TransactionCoordinator.onElection's sendTxnMarkers, 3.9).
 */
export function loadTransactions(cfg: KafkaConfig, s: State): State {
  const rules = cfg.rules;
  const metadata = s.coordinator.log.map((rec): TxnMetadata | null => {
    if (rec === null) return null;
    const preparing = isPrepare(rec.state);
    return {
      pid: rec.pid,
      epoch: rec.epoch,
      lastEpoch: rec.lastEpoch,
      prevPid: rec.prevPid,
      nextPid: rec.nextPid,
      state: rec.state,
      pendingState: preparing
        ? rec.state === TxnState.PrepareCommit
          ? TxnState.CompleteCommit
          : TxnState.CompleteAbort
        : NO_STATE,
      partitions: preparing && rules.mutantLosePartitionsOnFailover ? 0 : rec.partitions,
      ghostTxn: rec.ghostTxn,
      transactionVersion: rec.transactionVersion,
      hasFailedEpochFence: false, // in memory only
    };
  });
  let next: State = withField(s, 'coordinator', { ...s.coordinator, loading: false, metadata });
  metadata.forEach((md, t) => {
    if (md !== null && isPrepare(md.state)) next = sendMarkers(next, t, md, md.partitions);
  });
  return next;
}
