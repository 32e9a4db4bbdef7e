// The enabled actions of a state, in a fixed order, and the step each one takes.
import { type KafkaConfig, type RequestApi, forRequest } from './config.ts';
import * as consumer from './consumer.ts';
import * as coordinator from './coordinator.ts';
import * as group from './group.ts';
import * as idempotent from './idempotent.ts';
import { canLose, lose, spend } from './faults.ts';
import { isIdempotentNode, isProducerNode, removeHead } from './network.ts';
import { defaultHandlers } from './handlers.ts';
import * as partition from './partition.ts';
import { type Action, ActionKind } from './labels.ts';
import * as producer from './producer.ts';
import {
  type Response,
  type State,
  Api,
  Err,
  IDEMPOTENT_BASE,
  LEADER_BASE,
  TC_NODE,
  apiName,
  withField,
} from './state.ts';
import { bit, bits } from './util.ts';

// The action kinds and the Action record are declared with their labels.
export { type Action, ActionKind, actionKindNames } from './labels.ts';

/** Every subset of the bits of `mask`, the empty one first. */
function subsets(mask: number): number[] {
  return bits(mask).reduce((out, b) => out.flatMap((m) => [m, m | bit(b)]), [0]);
}

function act(kind: ActionKind, actor = 0, target = 0, conn = 0, api = 0): Action {
  return { kind, actor, target, conn, api };
}

export function enabledActions(cfg: KafkaConfig, s: State): Action[] {
  const out: Action[] = [];
  const rules = cfg.rules;
  const P = cfg.partitions;
  s.producers.forEach((p, i) => {
    if (producer.canStart(cfg, s, i)) out.push(act(ActionKind.initTransactions, i));
    if (producer.canFetchOffsets(cfg, s, p)) out.push(act(ActionKind.fetchOffsets, i));
    if (producer.canBegin(cfg, p)) out.push(act(ActionKind.beginTransaction, i));
    if (producer.canSend(cfg, p)) for (let t = 0; t < P; t++) out.push(act(ActionKind.send, i, t));
    if (producer.canSendOffsets(cfg, p)) out.push(act(ActionKind.sendOffsetsToTransaction, i));
    if (producer.canCommit(cfg, p)) out.push(act(ActionKind.commitTransaction, i));
    if (producer.canAbort(p)) out.push(act(ActionKind.abortTransaction, i));
    if (producer.canSendTxnRequest(cfg, p)) out.push(act(ActionKind.sendTxnRequest, i));
    for (let t = 0; t < P; t++)
      if (producer.canSendProduce(p, t)) out.push(act(ActionKind.sendProduce, i, t));
    if (s.faults.requestTimeouts > 0 && producer.canTimeOutTxnRequest(p))
      out.push(act(ActionKind.requestTimeout, i, 0, 0, p.request!.api));
    for (let t = 0; t < P; t++) {
      if (!producer.canTimeOutProduce(p, t)) continue;
      if (s.faults.requestTimeouts > 0) out.push(act(ActionKind.produceTimeout, i, t));
      if (s.faults.batchExpiries > 0) out.push(act(ActionKind.batchExpired, i, t));
    }
    if (s.faults.producerCrashes > 0 && p.status === 1) out.push(act(ActionKind.crash, i));
  });
  s.idempotentProducers.forEach((p, j) => {
    if (idempotent.canInitProducerId(p)) out.push(act(ActionKind.idempotentInitProducerId, j));
    if (idempotent.canSend(cfg, p))
      for (let t = 0; t < P; t++) out.push(act(ActionKind.idempotentSend, j, t));
    for (let t = 0; t < P; t++) {
      if (idempotent.canSendProduce(p, t)) out.push(act(ActionKind.idempotentSendProduce, j, t));
      if (!idempotent.canTimeOutProduce(p, t)) continue;
      if (s.faults.requestTimeouts > 0) out.push(act(ActionKind.idempotentProduceTimeout, j, t));
      if (s.faults.batchExpiries > 0) out.push(act(ActionKind.idempotentBatchExpired, j, t));
    }
  });
  s.network.forEach((ch, index) => {
    const api = ch.messages[0]!.api;
    out.push(act(ActionKind.deliver, ch.from, ch.to, ch.conn, api));
    if (canLose(s, index)) out.push(act(ActionKind.lose, ch.from, ch.to, ch.conn, api));
  });
  for (let t = 0; t < cfg.transactionalIds; t++) {
    if (s.faults.transactionTimeouts > 0 && coordinator.canTimeOut(cfg, s, t))
      out.push(act(ActionKind.transactionTimeout, t));
  }
  if (s.faults.coordinatorFailovers > 0) {
    // Each append in flight is kept in the log or lost with the failover: target the kept ones, conn the lost ones.
    const all = s.coordinator.appends.reduce((mask, append) => mask | bit(append.txnId), 0);
    for (const kept of subsets(all)) out.push(act(ActionKind.coordinatorFailover, 0, kept, all & ~kept));
  }
  if (s.coordinator.loading) out.push(act(ActionKind.loadTransactions));
  // kafka-features upgrade/downgrade of transaction.version, on brokers that have version 2.
  if (s.faults.transactionVersionChanges > 0 && rules.tv2)
    out.push(act(ActionKind.finalizeTransactionVersion, 0, 3 - s.transactionVersion));
  for (const append of s.coordinator.appends) {
    out.push(act(ActionKind.completeAppend, append.txnId));
    if (s.faults.appendFailures > 0) out.push(act(ActionKind.failAppend, append.txnId));
  }
  if (s.faults.markerTimeouts > 0) {
    for (let q = 0; q < s.partitions.length; q++)
      if (coordinator.canTimeOutTxnMarker(s, q)) out.push(act(ActionKind.markerTimeout, 0, q));
  }
  if (s.faults.transactionalIdExpiries > 0) {
    for (let t = 0; t < cfg.transactionalIds; t++)
      if (coordinator.canExpireTransactionalId(s, t)) out.push(act(ActionKind.transactionalIdExpiry, t));
  }
  if (s.faults.producerStateExpiries > 0) {
    for (let q = 0; q < s.partitions.length; q++)
      for (const pid of partition.expirableProducerIds(rules, s, q))
        out.push(act(ActionKind.producerStateExpiry, q, pid));
  }
  for (let t = 0; t < cfg.transactionalIds; t++) {
    for (let q = 0; q < P; q++)
      if (coordinator.canRetryTxnMarker(s, t, q)) out.push(act(ActionKind.resendTxnMarker, t, q));
    if (coordinator.canCompleteTransaction(s, t)) out.push(act(ActionKind.completeTransaction, t));
  }
  s.partitions.forEach((part, q) => {
    for (const h of part.held)
      if (partition.canTimeOutVerification(s, q, h.guard, h.request.seq))
        out.push(act(ActionKind.verificationTimeout, q, h.guard, h.request.seq));
  });
  s.consumers.forEach((_, c) => {
    for (let q = 0; q < P; q++) if (consumer.canFetch(rules, s, c, q)) out.push(act(ActionKind.fetch, c, q));
  });
  return out;
}

function deliver(cfg: KafkaConfig, s: State, a: Action): State {
  const index = s.network.findIndex((c) => c.from === a.actor && c.to === a.target && c.conn === a.conn);
  const channel = s.network[index]!;
  const m = channel.messages[0]!;
  const rest: State = withField(s, 'network', removeHead(s.network, index));
  if (m.response) {
    if (isProducerNode(channel.to)) {
      return producer.acceptsResponse(rest, channel.to, channel.from, channel.conn)
        ? producer.handleResponse(cfg, rest, channel.to, m)
        : rest;
    }
    if (isIdempotentNode(channel.to)) {
      const j = channel.to - IDEMPOTENT_BASE;
      return idempotent.acceptsResponse(rest, j, channel.from, channel.conn)
        ? idempotent.handleProduceResponse(cfg, rest, j, m)
        : rest;
    }
    if (channel.to === TC_NODE) return coordinator.handleWriteTxnMarkersResponse(rest, channel.conn, m);
    return verificationAnswered(cfg, rest, channel.to - LEADER_BASE, m);
  }
  const handler = cfg.handlers[apiName[m.api] as RequestApi];
  return handler({ cfg, base: defaultHandlers }, rest, channel, m);
}

/** A leader's held Produce or TxnOffsetCommit goes on once the coordinator answered for it. */
function verificationAnswered(cfg: KafkaConfig, s: State, p: number, resp: Response): State {
  const released = partition.releaseHeld(s, p, resp);
  if (released === null) return s;
  const { state, held, connection } = released;
  if (resp.error !== Err.NONE)
    return partition.answerClient(
      state,
      connection,
      held.request,
      partition.verificationError(resp.error, held.request),
    );
  const rules = forRequest(cfg.rules, held.request);
  return held.request.api === Api.Produce
    ? partition.appendProduce(rules, state, connection, held.request, held.guard)
    : group.appendOffsetCommit(rules, state, connection, held.request, held.guard);
}

export function step(cfg: KafkaConfig, s: State, a: Action): State {
  const rules = cfg.rules;
  switch (a.kind) {
    case ActionKind.initTransactions:
      return producer.start(cfg, s, a.actor);
    case ActionKind.fetchOffsets:
      return producer.fetchOffsets(cfg, s, a.actor);
    case ActionKind.beginTransaction:
      return producer.beginTransaction(cfg, s, a.actor);
    case ActionKind.send:
      return producer.sendRecord(cfg, s, a.actor, a.target);
    case ActionKind.sendOffsetsToTransaction:
      return producer.sendOffsetsToTransaction(s, a.actor);
    case ActionKind.commitTransaction:
      return producer.commitTransaction(cfg, s, a.actor);
    case ActionKind.abortTransaction:
      return producer.abortTransaction(cfg, s, a.actor);
    case ActionKind.sendTxnRequest:
      return producer.sendTxnRequest(cfg, s, a.actor);
    case ActionKind.sendProduce:
      return producer.sendProduce(cfg, s, a.actor, a.target);
    case ActionKind.deliver:
      return deliver(cfg, s, a);
    case ActionKind.lose:
      return lose(
        s,
        s.network.findIndex((c) => c.from === a.actor && c.to === a.target && c.conn === a.conn),
      );
    case ActionKind.requestTimeout:
      return producer.txnRequestTimeout(cfg, spend(s, 'requestTimeouts'), a.actor);
    case ActionKind.produceTimeout:
      return producer.produceTimeout(cfg, spend(s, 'requestTimeouts'), a.actor, a.target);
    case ActionKind.batchExpired:
      return producer.batchExpired(cfg, spend(s, 'batchExpiries'), a.actor, a.target);
    case ActionKind.crash:
      return producer.crash(spend(s, 'producerCrashes'), a.actor);
    case ActionKind.transactionTimeout:
      return coordinator.transactionTimeout(cfg, spend(s, 'transactionTimeouts'), a.actor);
    case ActionKind.coordinatorFailover:
      return coordinator.coordinatorFailover(cfg, spend(s, 'coordinatorFailovers'), a.target);
    case ActionKind.loadTransactions:
      return coordinator.loadTransactions(cfg, s);
    case ActionKind.finalizeTransactionVersion:
      return { ...spend(s, 'transactionVersionChanges'), transactionVersion: a.target };
    case ActionKind.resendTxnMarker:
      return coordinator.retryTxnMarker(s, a.actor, a.target);
    case ActionKind.completeTransaction:
      return coordinator.completeTransaction(cfg, s, a.actor);
    case ActionKind.fetch:
      return consumer.fetch(rules, s, a.actor, a.target);
    case ActionKind.verificationTimeout:
      return partition.verificationTimeout(s, a.actor, a.target, a.conn);
    case ActionKind.completeAppend:
      return coordinator.completeAppend(cfg, s, a.actor);
    case ActionKind.failAppend:
      return coordinator.failAppend(rules, spend(s, 'appendFailures'), a.actor);
    case ActionKind.markerTimeout:
      return coordinator.txnMarkerTimeout(spend(s, 'markerTimeouts'), a.target);
    case ActionKind.transactionalIdExpiry:
      return coordinator.transactionalIdExpiry(cfg, spend(s, 'transactionalIdExpiries'), a.actor);
    case ActionKind.producerStateExpiry:
      return partition.producerStateExpiry(rules, spend(s, 'producerStateExpiries'), a.actor, a.target);
    case ActionKind.idempotentInitProducerId:
      return idempotent.initProducerId(s, a.actor);
    case ActionKind.idempotentSend:
      return idempotent.sendRecord(s, a.actor, a.target);
    case ActionKind.idempotentSendProduce:
      return idempotent.sendProduce(s, a.actor, a.target);
    case ActionKind.idempotentProduceTimeout:
      return idempotent.produceTimeout(spend(s, 'requestTimeouts'), a.actor, a.target);
    case ActionKind.idempotentBatchExpired:
      return idempotent.batchExpired(cfg, spend(s, 'batchExpiries'), a.actor, a.target);
  }
}
