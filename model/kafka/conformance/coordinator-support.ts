// Helpers for the coordinator cases: one transactional.id (t0), requests from producer P0.0 to the
// coordinator, and the coordinator's answer, its in-memory metadata and its last log record.
import type { KafkaConfig } from '../config.ts';
import {
  type Request,
  type Response,
  type State,
  type TxnLogRecord,
  type TxnMetadata,
  Api,
  TxnState,
} from '../state.ts';
import { TC, answer, handle, request, withTxn } from './harness.ts';

export { Api, TxnState };

/** Kafka's topic1-0 and topic2-0 are the model's partitions 0 and 1 (bitmasks). */
export const P0 = 1;
export const P1 = 2;

/** The coordinator holds this TransactionMetadata for t0. */
export function at(s: State, md: Partial<TxnMetadata>): State {
  return withTxn(s, 0, md);
}

/** P0.0 sends `api` for t0 to the coordinator; returns the next state and the coordinator's answer. */
export function ask(
  cfg: KafkaConfig,
  s: State,
  api: Api,
  fields: Partial<Omit<Request, 'api' | 'response'>>,
): { s: State; reply: Response } {
  const next = handle(cfg, s, 0, TC, request(api, { txnId: 0, ...fields }));
  return { s: next, reply: answer(next, TC, 0) };
}

/** Like `ask`, then takes the answer off the connection so that the next request gets its own. */
export function askAndClear(
  cfg: KafkaConfig,
  s: State,
  api: Api,
  fields: Partial<Omit<Request, 'api' | 'response'>>,
): { s: State; reply: Response } {
  const { s: next, reply } = ask(cfg, s, api, fields);
  return { s: { ...next, network: next.network.filter((c) => !(c.from === TC && c.to === 0)) }, reply };
}

/** t0's last __transaction_state record. */
export function logged(s: State): TxnLogRecord | null {
  return s.coordinator.log[0] ?? null;
}
