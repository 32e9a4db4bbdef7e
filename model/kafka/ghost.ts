// Ghost history: what happened at the level of the application's transactions. Properties read
// it; protocol handlers only write it, through these functions, and never branch on it.
import { type KafkaConfig, clientTxnIndex } from './config.ts';
import { hasMessage } from './network.ts';
import { type ClientTxnHistory, type State, Api, Excuse, Instance, Told, withField } from './state.ts';
import { setAt } from './util.ts';

export function noteTxn(s: State, txn: number, change: Partial<ClientTxnHistory>): State {
  return withField(s, 'history', setAt(s.history, txn, { ...s.history[txn]!, ...change }));
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
  const renewed =
    grantee.ghostExcuses === 0
      ? s
      : withField(s, 'producers', setAt(s.producers, producer, { ...grantee, ghostExcuses: 0 }));
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
    if (
      p.txnId !== txnId ||
      j === except ||
      p.status === Instance.NotStarted ||
      (p.ghostExcuses & excuse) !== 0
    )
      return;
    producers = setAt(producers, j, { ...p, ghostExcuses: p.ghostExcuses | excuse });
  });
  return producers === s.producers ? s : withField(s, 'producers', producers);
}

/**
 * The coordinator expired transactional.id `txnId`, whose producer id was `pid`. Each running
 * instance that holds that producer id, or is being granted it, meets the expiry in its open
 * transaction, or in its next one when it has none open.
 */
export function noteExpiry(cfg: KafkaConfig, s: State, txnId: number, pid: number): State {
  const granted = (i: number): boolean =>
    hasMessage(
      s.network,
      (ch, m) => ch.to === i && m.response && m.api === Api.InitProducerId && m.pid === pid,
    );
  let next = s;
  s.producers.forEach((p, i) => {
    if (p.txnId !== txnId || p.status !== Instance.Running || (p.pid !== pid && !granted(i))) return;
    const open = p.txnsBegun > 0 && s.history[clientTxnIndex(cfg, i, p.txnsBegun - 1)]!.told === Told.Nothing;
    const k = open ? p.txnsBegun - 1 : p.txnsBegun;
    if (k < cfg.transactionsPerInstance) next = noteTxn(next, clientTxnIndex(cfg, i, k), { expired: true });
  });
  return next;
}
