// Helpers for the client cases: the producer's requests are answered by hand, as
// TransactionManagerTest answers them with MockClient.prepareResponse, and the client's actions are
// taken by their labels.
import type { KafkaConfig, Rules } from '../config.ts';
import { producerName } from '../labels.ts';
import { connSlot } from '../network.ts';
import { type Producer, type Request, type Response, type State, Api, Tm } from '../state.ts';
import { type Bounds, TC, initial, kafkaConfig, labels, leader, response, take } from './harness.ts';
import { deliver } from './harness.ts';

/** The producer of the cases (transactional.id 0, first instance), named P0.0 in labels. */
export const P0 = 0;
/** TransactionManagerTest's producerId and epoch. */
export const PID = 13131;
export const EPOCH = 1;

/** Bounds with the faults a case needs to take timeouts and expiries, and three records a transaction. */
export function clientConfig(
  generation: string,
  bounds: Bounds = {},
  rules: Partial<Rules> = {},
): KafkaConfig {
  const faults = { ...kafkaConfig(generation).faults, requestTimeouts: 3, batchExpiries: 2 };
  return kafkaConfig(generation, { faults, recordsPerTransaction: 3, ...bounds }, rules);
}

/** The consume-transform-produce app: TxnOffsetCommit goes to the group coordinator, leader(partitions). */
export function transformConfig(generation: string): KafkaConfig {
  return clientConfig(generation, { app: 'consume-transform-produce', inputRecords: 2 });
}

/** The group coordinator of a transform config. */
export function groupCoordinator(cfg: KafkaConfig): number {
  return leader(cfg.partitions);
}

export function producer(s: State): Producer {
  return s.producers[P0]!;
}

/** The producer's client action, e.g. act(cfg, s, 'send(p0)') for 'P0.0: send(p0)'. */
export function act(cfg: KafkaConfig, s: State, action: string): State {
  return take(cfg, s, `${producerName(cfg, P0)}: ${action}`);
}

export function enabled(cfg: KafkaConfig, s: State, action: string): boolean {
  return labels(cfg, s).includes(`${producerName(cfg, P0)}: ${action}`);
}

/** The requests P0 has on the wire to `to` (every connection), oldest first. */
export function sentTo(s: State, to: number): Request[] {
  return s.network
    .filter((c) => c.from === P0 && c.to === to)
    .flatMap((c) => c.messages.filter((m): m is Request => !m.response));
}

/**
 * Answers P0's oldest request of `api` to `from`: the request is taken off the wire and the
 * response is delivered on the connection the client now uses to `from` (its old connections
 * answer nothing after a timeout; use `respondOn` for those).
 */
export function respond(
  cfg: KafkaConfig,
  s: State,
  from: number,
  api: Api,
  fields: Partial<Omit<Response, 'api' | 'response'>> = {},
): State {
  return respondOn(cfg, s, from, api, producer(s).conns[connSlot(from)]!, fields);
}

export function respondOn(
  cfg: KafkaConfig,
  s: State,
  from: number,
  api: Api,
  conn: number,
  fields: Partial<Omit<Response, 'api' | 'response'>> = {},
): State {
  const index = s.network.findIndex(
    (c) => c.from === P0 && c.to === from && c.messages.some((m) => m.api === api && !m.response),
  );
  if (index < 0) throw new Error(`P0 has no ${api} request to ${from}`);
  const channel = s.network[index]!;
  const at = channel.messages.findIndex((m) => m.api === api && !m.response);
  const req = channel.messages[at] as Request;
  const rest = channel.messages.filter((_, k) => k !== at);
  const network =
    rest.length === 0
      ? s.network.filter((_, k) => k !== index)
      : s.network.map((c, k) => (k === index ? { ...c, messages: rest } : c));
  const base = { txnId: req.txnId, pid: req.pid, epoch: req.epoch, partitions: req.partitions, seq: req.seq };
  return deliver(cfg, { ...s, network }, from, P0, response(api, { ...base, ...fields }), conn);
}

/** doInitTransactions: initTransactions answered with (PID, EPOCH); READY. */
export function ready(cfg: KafkaConfig, pid = PID, epoch = EPOCH): State {
  let s = act(cfg, initial(cfg), 'initTransactions');
  s = respond(cfg, s, TC, Api.InitProducerId, { pid, epoch });
  // The transform app's consumer learns its position before the first transaction.
  return cfg.app === 'consume-transform-produce' ? act(cfg, s, 'fetchOffsets') : s;
}

/** beginTransaction, send(p) for each partition, AddPartitionsToTxn sent and answered NONE. */
export function withPartitionsAdded(cfg: KafkaConfig, s: State, partitions: number[]): State {
  let t = act(cfg, s, 'beginTransaction');
  for (const p of partitions) t = act(cfg, t, `send(p${p})`);
  t = act(cfg, t, 'sendTxnRequest');
  return respond(cfg, t, TC, Api.AddPartitionsToTxn);
}

/** TransactionManager.hasOngoingTransaction. */
export function hasOngoingTransaction(s: State): boolean {
  const tm = producer(s).tm;
  return (
    tm === Tm.IN_TRANSACTION ||
    tm === Tm.COMMITTING_TRANSACTION ||
    tm === Tm.ABORTING_TRANSACTION ||
    tm === Tm.ABORTABLE_ERROR
  );
}

export { TC, leader };
