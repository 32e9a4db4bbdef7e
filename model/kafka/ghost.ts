// Ghost history: what happened at the level of the application's transactions. Properties read
// it; protocol handlers only write it, through these functions, and never branch on it.
import { type KafkaConfig, clientTxnIndex } from './config.ts';
import { type ClientTxnHistory, type State, Excuse, Instance } from './state.ts';
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
  const grantee = s.producers[producer]!;
  const txnId = grantee.txnId;
  // A fresh grant starts a new session: an earlier excuse no longer covers it.
  const renewed = grantee.ghostExcuses === 0 ? s : { ...s, producers: setAt(s.producers, producer, { ...grantee, ghostExcuses: 0 }) };
  const excused = noteExcuse(renewed, txnId, Excuse.OtherInstance, producer);
  let history = excused.history;
  s.producers.forEach((p, j) => {
    if (p.txnId !== txnId) return;
    for (let k = 0; k < cfg.transactionsPerInstance; k++) {
      const t = clientTxnIndex(cfg, j, k);
      const h = history[t]!;
      const fenced = j === producer ? (t >= firstUnbegun ? false : h.fenced) : h.fenced || !h.prepared;
      if (fenced !== h.fenced) history = setAt(history, t, { ...h, fenced });
    }
  });
  return history === excused.history ? excused : { ...excused, history };
}

/**
 * Every started instance of `txnId` but `except` may now be fenced or fail through no fault of
 * its own (until it is granted an epoch again).
 */
export function noteExcuse(s: State, txnId: number, excuse: Excuse, except = -1): State {
  let producers = s.producers;
  producers.forEach((p, j) => {
    if (p.txnId !== txnId || j === except || p.status === Instance.NotStarted || (p.ghostExcuses & excuse) !== 0) return;
    producers = setAt(producers, j, { ...p, ghostExcuses: p.ghostExcuses | excuse });
  });
  return producers === s.producers ? s : { ...s, producers };
}
