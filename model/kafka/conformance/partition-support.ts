// Helpers for the partition leader's conformance cases: a client's Produce, a coordinator's
// WriteTxnMarkers, the coordinator's answer to a leader's verification, each taken through the
// model's own step; and reading the answer back off the connection it went out on.
import type { KafkaConfig } from '../config.ts';
import { VERIFICATION_CONN } from '../partition.ts';
import { type Message, type Response, type State, Api, Err, LEADER_BASE, TC_NODE } from '../state.ts';
import { bit } from '../util.ts';
import { deliver, handle, leader, request, response, take } from './harness.ts';

/** The client that sends every request of these cases. */
export const CLIENT = 0;

/** Removes and returns the oldest message on `from → to` (generation `conn`). */
export function pop(s: State, from: number, to: number, conn = 0): { message: Message; state: State } {
  const index = s.network.findIndex((c) => c.from === from && c.to === to && c.conn === conn);
  if (index < 0) throw new Error(`nothing on ${from}→${to}#${conn}`);
  const channel = s.network[index]!;
  const network =
    channel.messages.length === 1
      ? s.network.filter((_, k) => k !== index)
      : s.network.map((c, k) => (k === index ? { ...c, messages: c.messages.slice(1) } : c));
  return { message: channel.messages[0]!, state: { ...s, network } };
}

/** Removes and returns the response waiting for the client from partition p's leader. */
export function produceAnswer(s: State, p: number): { response: Response; state: State } {
  const { message, state } = pop(s, leader(p), CLIENT);
  if (!message.response)
    throw new Error(`expected a response from ${leader(p)}, found ${JSON.stringify(message)}`);
  return { response: message, state };
}

export interface BatchFields {
  readonly pid: number;
  readonly epoch: number;
  readonly seq: number;
  readonly txnId?: number;
}

/** A transactional Produce of one record to partition p from the client. */
export function produce(cfg: KafkaConfig, s: State, p: number, b: BatchFields): State {
  return handle(
    cfg,
    s,
    CLIENT,
    leader(p),
    request(Api.Produce, { txnId: b.txnId ?? 0, pid: b.pid, epoch: b.epoch, partitions: p, seq: b.seq }),
  );
}

/** Produce, then take the leader's answer off the connection: the error and the state after it. */
export function produced(
  cfg: KafkaConfig,
  s: State,
  p: number,
  b: BatchFields,
): { error: Err; state: State } {
  const answered = produceAnswer(produce(cfg, s, p, b), p);
  return { error: answered.response.error, state: answered.state };
}

export interface MarkerFields {
  readonly pid: number;
  readonly epoch: number;
  readonly commit: boolean;
  readonly coordinatorEpoch?: number;
}

/** WriteTxnMarkers for partition p from the coordinator; returns the leader's error and the state after it. */
export function marker(cfg: KafkaConfig, s: State, p: number, m: MarkerFields): { error: Err; state: State } {
  const coordinatorEpoch = m.coordinatorEpoch ?? 0;
  const req = request(Api.WriteTxnMarkers, {
    txnId: 0,
    pid: m.pid,
    epoch: m.epoch,
    partitions: p,
    commit: m.commit,
    coordinatorEpoch,
  });
  const after = deliver(cfg, s, TC_NODE, leader(p), req, coordinatorEpoch);
  const { message, state } = pop(after, leader(p), TC_NODE, coordinatorEpoch);
  if (!message.response) throw new Error('expected the WriteTxnMarkers response');
  return { error: message.error, state };
}

/** The AddPartitionsToTxn requests partition p's leader has sent the coordinator, oldest first. */
export function verificationsSent(s: State, p: number): readonly Message[] {
  return (
    s.network.find((c) => c.from === LEADER_BASE + p && c.to === TC_NODE && c.conn === VERIFICATION_CONN)
      ?.messages ?? []
  );
}

/**
 * The coordinator answers the oldest verification partition p's leader sent it with `error`
 * (as Kafka's ReplicaManagerTest completes the AddPartitionsToTxnManager callback).
 */
export function verified(cfg: KafkaConfig, s: State, p: number, error: Err = Err.NONE): State {
  const { message, state } = pop(s, leader(p), TC_NODE, VERIFICATION_CONN);
  if (message.response || message.api !== Api.AddPartitionsToTxn)
    throw new Error(`expected a verification, found ${JSON.stringify(message)}`);
  const answer = response(Api.AddPartitionsToTxn, {
    txnId: message.txnId,
    error,
    pid: message.pid,
    epoch: message.epoch,
    partitions: bit(p),
    seq: message.seq,
    guard: message.guard,
  });
  return deliver(cfg, state, TC_NODE, leader(p), answer, VERIFICATION_CONN);
}

/**
 * Produce through whatever the leader does first: when it holds the batch to ask the coordinator
 * (KIP-890), the coordinator answers NONE, as it does for a partition of the ongoing transaction.
 */
export function producedVerified(
  cfg: KafkaConfig,
  s: State,
  p: number,
  b: BatchFields,
): { error: Err; state: State } {
  const sent = produce(cfg, s, p, b);
  const asked = verificationsSent(sent, p).length > verificationsSent(s, p).length;
  const answered = produceAnswer(asked ? verified(cfg, sent, p) : sent, p);
  return { error: answered.response.error, state: answered.state };
}

/**
 * The oldest verification of partition p's leader is lost on its way and the leader's
 * AddPartitionsToTxnManager times it out (Kafka: a disconnected response, NETWORK_EXCEPTION).
 */
export function verificationLost(cfg: KafkaConfig, s: State, p: number): State {
  const { message, state } = pop(s, leader(p), TC_NODE, VERIFICATION_CONN);
  if (message.response) throw new Error('expected a verification request');
  return take(
    cfg,
    state,
    `${p === cfg.partitions ? 'GC' : `L${p}`}: verificationTimeout(attempt ${message.guard}, seq ${message.seq})`,
  );
}

/**
 * The coordinator itself handles the oldest verification of partition p's leader (its own
 * handler, on the state's TransactionMetadata) and its answer reaches the leader.
 */
export function coordinatorAnswers(cfg: KafkaConfig, s: State, p: number): State {
  const asked = pop(s, leader(p), TC_NODE, VERIFICATION_CONN);
  const handled = deliver(cfg, asked.state, leader(p), TC_NODE, asked.message, VERIFICATION_CONN);
  const answered = pop(handled, TC_NODE, leader(p), VERIFICATION_CONN);
  return deliver(cfg, answered.state, TC_NODE, leader(p), answered.message, VERIFICATION_CONN);
}
