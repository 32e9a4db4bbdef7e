// The ghost history the properties read: which transactions an epoch grant fences, which
// instances an event excuses, which transaction meets an expiry. The coordinator's handlers call
// these; the cases set up instances of two transactional.ids by hand and call them once.
import { describe, expect, it } from 'vitest';
import { clientTxnIndex } from './config.ts';
import { noteEpochGrant, noteExcuse, noteExpiry, noteTxn } from './ghost.ts';
import { response, send } from './network.ts';
import { type State, Api, Excuse, Instance, TC_NODE, Told } from './state.ts';
import { initial, kafkaConfig, withProducer } from './conformance/harness.ts';

// Producers 0 and 1 are the instances of transactional.id 0, 2 and 3 those of transactional.id 1.
const cfg = kafkaConfig('kafka-3.5', { transactionalIds: 2, instancesPerId: 2, transactionsPerInstance: 2 });
const txn = (producer: number, k: number): number => clientTxnIndex(cfg, producer, k);

function running(s: State, ...producers: number[]): State {
  return producers.reduce((t, i) => withProducer(t, i, { status: Instance.Running }), s);
}

describe("noteEpochGrant: a new epoch for one instance fences the other instances' unprepared transactions", () => {
  const base = (): State => {
    let s = running(initial(cfg), 0, 1, 2);
    s = withProducer(s, 1, { ghostExcuses: Excuse.TransactionTimedOut });
    s = noteTxn(s, txn(0, 0), { prepared: true });
    // The grantee's first transaction was fenced by an earlier grant; its second is not begun yet.
    s = noteTxn(s, txn(1, 0), { fenced: true });
    return noteTxn(s, txn(1, 1), { fenced: true });
  };

  it('the other instance: its prepared transaction is not fenced, its unprepared one is; it is excused', () => {
    const s = noteEpochGrant(cfg, base(), 1, txn(1, 1));
    expect([s.history[txn(0, 0)]!.fenced, s.history[txn(0, 1)]!.fenced]).toEqual([false, true]);
    expect(s.producers[0]!.ghostExcuses).toBe(Excuse.OtherInstance);
  });

  it('the grantee: transactions from the first unbegun on are unfenced, earlier ones keep their mark; its old excuses end', () => {
    const s = noteEpochGrant(cfg, base(), 1, txn(1, 1));
    expect([s.history[txn(1, 0)]!.fenced, s.history[txn(1, 1)]!.fenced]).toEqual([true, false]);
    expect(s.producers[1]!.ghostExcuses).toBe(0);
  });

  it('another transactional.id is untouched', () => {
    const before = base();
    const s = noteEpochGrant(cfg, before, 1, txn(1, 1));
    expect(s.history.slice(txn(2, 0))).toEqual(before.history.slice(txn(2, 0)));
    expect(s.producers[2]).toEqual(before.producers[2]);
  });
});

describe('noteExcuse', () => {
  it('excuses every started instance of the transactional.id but the one named, keeping earlier excuses', () => {
    let s = running(initial(cfg), 0, 2);
    s = withProducer(s, 0, { ghostExcuses: Excuse.OtherInstance });
    const once = noteExcuse(s, 0, Excuse.TransactionTimedOut);
    expect(once.producers.map((p) => p.ghostExcuses)).toEqual([
      Excuse.OtherInstance | Excuse.TransactionTimedOut,
      0,
      0,
      0,
    ]);
    expect(noteExcuse(once, 0, Excuse.TransactionTimedOut)).toEqual(once);
    expect(noteExcuse(s, 0, Excuse.TransactionTimedOut, 0)).toEqual(s);
  });

  it('a crashed instance is excused too', () => {
    const s = withProducer(initial(cfg), 1, { status: Instance.Crashed });
    expect(noteExcuse(s, 0, Excuse.TransactionalIdExpired).producers[1]!.ghostExcuses).toBe(
      Excuse.TransactionalIdExpired,
    );
  });
});

describe('noteExpiry: the expiry of a transactional.id meets the transaction of each instance holding its producer id', () => {
  const PID = 7;
  const expired = (s: State): number[] => s.history.flatMap((h, t) => (h.expired ? [t] : []));

  it('an open transaction, else the next one; none past the last', () => {
    let s = running(initial(cfg), 0, 1);
    s = withProducer(withProducer(s, 0, { pid: PID, txnsBegun: 1 }), 1, { pid: PID, txnsBegun: 1 });
    s = noteTxn(s, txn(1, 0), { told: Told.Committed });
    expect(expired(noteExpiry(cfg, s, 0, PID))).toEqual([txn(0, 0), txn(1, 1)]);
    const done = noteTxn(withProducer(s, 1, { txnsBegun: 2 }), txn(1, 1), { told: Told.Aborted });
    expect(expired(noteExpiry(cfg, done, 0, PID))).toEqual([txn(0, 0)]);
  });

  it('an instance being granted the producer id meets it in its first transaction', () => {
    let s = running(initial(cfg), 0);
    s = {
      ...s,
      network: send(s.network, TC_NODE, 0, 0, response(Api.InitProducerId, { pid: PID, epoch: 0 })),
    };
    expect(expired(noteExpiry(cfg, s, 0, PID))).toEqual([txn(0, 0)]);
    // An answer with another producer id, or of another request, grants nothing.
    const other = {
      ...s,
      network: send([], TC_NODE, 0, 0, response(Api.InitProducerId, { pid: PID + 1, epoch: 0 })),
    };
    expect(expired(noteExpiry(cfg, other, 0, PID))).toEqual([]);
    const endTxn = { ...s, network: send([], TC_NODE, 0, 0, response(Api.EndTxn, { pid: PID, epoch: 0 })) };
    expect(expired(noteExpiry(cfg, endTxn, 0, PID))).toEqual([]);
    const toOther = {
      ...s,
      network: send([], TC_NODE, 1, 0, response(Api.InitProducerId, { pid: PID, epoch: 0 })),
    };
    expect(expired(noteExpiry(cfg, toOther, 0, PID))).toEqual([]);
  });

  it('not an instance of another producer id, of another transactional.id, or one that stopped', () => {
    let s = running(initial(cfg), 0, 2);
    s = withProducer(withProducer(s, 0, { pid: PID + 1 }), 2, { pid: PID });
    expect(expired(noteExpiry(cfg, s, 0, PID))).toEqual([]);
    const crashed = withProducer(withProducer(s, 0, { pid: PID }), 0, { status: Instance.Crashed });
    expect(expired(noteExpiry(cfg, crashed, 0, PID))).toEqual([]);
  });
});
