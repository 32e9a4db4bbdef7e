// Ghost history: what happened at the level of the application's transactions. Properties read
// it; protocol handlers only write it, through these functions, and never branch on it.
import { type KafkaConfig, clientTxnIndex } from './config.ts';
import type { ClientTxnHistory, State } from './state.ts';
import { setAt } from './util.ts';

export function noteTxn(s: State, txn: number, change: Partial<ClientTxnHistory>): State {
  return { ...s, history: setAt(s.history, txn, { ...s.history[txn]!, ...change }) };
}

/**
 * The coordinator granted a new epoch to `producer` for its transactional.id. Every transaction
 * of the other instances not yet prepared is a zombie's from now on; the grantee's transactions
 * not yet begun (from `firstUnbegun` on) are not.
 */
export function noteEpochGrant(cfg: KafkaConfig, s: State, producer: number, firstUnbegun: number): State {
  const txnId = s.producers[producer]!.txnId;
  let history = s.history;
  s.producers.forEach((p, j) => {
    if (p.txnId !== txnId) return;
    for (let k = 0; k < cfg.transactionsPerInstance; k++) {
      const t = clientTxnIndex(cfg, j, k);
      const h = history[t]!;
      const fenced = j === producer ? (t >= firstUnbegun ? false : h.fenced) : h.fenced || !h.prepared;
      if (fenced !== h.fenced) history = setAt(history, t, { ...h, fenced });
    }
  });
  return history === s.history ? s : { ...s, history };
}
