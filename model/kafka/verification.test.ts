// KIP-890 part 1: a leader holds a Produce while the coordinator verifies it; a verification
// lost on the way is timed out, so the held Produce is answered and the client retries.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bfs } from '../../checker/engine/bfs.ts';
import type { Model } from '../../checker/engine/model.ts';
import { parseSpec } from '../../specs/load.ts';
import { type State, Api, BatchKind, Err, NO_OFFSET, TxnState } from './state.ts';
import { bit } from './util.ts';
import { VERIFICATION_CONN } from './partition.ts';
import {
  TC,
  deliver,
  handle,
  initial,
  kafkaConfig,
  leader,
  request,
  response,
  withProducer,
} from './conformance/harness.ts';
import { marker, produce, verified } from './conformance/partition-support.ts';
import { ask, at } from './conformance/coordinator-support.ts';

function model(): Model<State, unknown> {
  const s = parseSpec(
    'verification.json',
    { model: 'kafka', variant: 'kafka-3.6', partitions: 1, deadlock: true, faults: { requestLoss: 1 } },
    '',
  );
  return s.entry.build(s.params, s.properties) as Model<State, unknown>;
}

/** Runs the actions with these labels from the initial state. */
function walk(m: Model<State, unknown>, labels: string[]): State {
  let s = m.init()[0]!;
  for (const label of labels) {
    const a = m.actions(s).find((x) => m.label(x) === label);
    if (a === undefined)
      throw new Error(
        `not enabled: ${label}; enabled: ${m
          .actions(s)
          .map((x) => m.label(x))
          .join(' | ')}`,
      );
    s = m.next(s, a);
  }
  return s;
}

describe('partition verification', () => {
  it('times out a lost verification and keeps every property', () => {
    const result = bfs(model(), { deadlockAllowed: true });
    expect(result.status).toBe('ok');
    expect(result.coverage.fired.verificationTimeout).toBeGreaterThan(0);
  });

  it('answers the held Produce with NOT_ENOUGH_REPLICAS once its verification is lost', () => {
    const m = model();
    const toLeader = [
      'P0.0: initTransactions',
      'deliver P0.0→TC: InitProducerId',
      'deliver TC→P0.0: InitProducerId response',
      'P0.0: beginTransaction',
      'P0.0: send(p0)',
      'P0.0: sendTxnRequest',
      'deliver P0.0→TC: AddPartitionsToTxn',
      'deliver TC→P0.0: AddPartitionsToTxn response',
      'P0.0: sendProduce(p0)',
      'deliver P0.0→L0: Produce',
    ];
    const held = walk(m, toLeader);
    expect(held.partitions[0]!.held).toHaveLength(1);
    const timeout = 'L0: verificationTimeout(attempt 0, seq 0)';
    // While the verification is on its way, the leader waits for it.
    expect(m.actions(held).map((a) => m.label(a))).not.toContain(timeout);
    const lost = walk(m, [...toLeader, 'lose L0→TC (verification): AddPartitionsToTxn', timeout]);
    expect(lost.partitions[0]!.held).toHaveLength(0);
    const answer = lost.network.find((c) => c.to === 0)?.messages[0];
    expect(answer?.response && answer.error).toBe(Err.NOT_ENOUGH_REPLICAS);
  });
});

describe("which held request a verification answer releases (the model's own matching)", () => {
  const cfg = kafkaConfig('kafka-3.6');
  const PID = 24;
  // Two batches of one producer wait under one guard: the second came at a bumped epoch while the
  // first was held (the verification entry keeps its guard across the bump).
  const twoHeld = (): State => {
    const first = produce(cfg, initial(cfg), 0, { pid: PID, epoch: 0, seq: 0 });
    // The client sent the second batch on a new connection to the leader (slot 1).
    const reconnected = withProducer(first, 0, {
      conns: first.producers[0]!.conns.map((c, slot) => (slot === 1 ? 1 : c)),
    });
    return handle(
      cfg,
      reconnected,
      0,
      leader(0),
      request(Api.Produce, { txnId: 0, pid: PID, epoch: 1, partitions: 0, seq: 0 }),
      1,
    );
  };
  const answer = (s: State, epoch: number, seq: number, guard: number): State =>
    deliver(
      cfg,
      s,
      TC,
      leader(0),
      response(Api.AddPartitionsToTxn, {
        txnId: 0,
        error: Err.INVALID_TXN_STATE,
        pid: PID,
        epoch,
        partitions: 1,
        seq,
        guard,
      }),
      VERIFICATION_CONN,
    );

  it('releases the one held request whose guard, sequence and epoch the answer names', () => {
    const s = twoHeld();
    const held = s.partitions[0]!.held;
    expect(held.map((h) => [h.guard, h.request.epoch, h.request.seq])).toEqual([
      [held[0]!.guard, 0, 0],
      [held[0]!.guard, 1, 0],
    ]);
    const released = answer(s, 1, 0, held[0]!.guard);
    expect(released.partitions[0]!.held.map((h) => h.request.epoch)).toEqual([0]);
    // The epoch-1 batch's connection carries the answer.
    expect(
      released.network.find((c) => c.from === leader(0) && c.to === 0 && c.conn === 1)?.messages,
    ).toMatchObject([{ api: Api.Produce, epoch: 1, error: Err.INVALID_TXN_STATE }]);
  });

  it('releases nothing for another guard or another sequence', () => {
    const s = twoHeld();
    const guard = s.partitions[0]!.held[0]!.guard;
    expect(answer(s, 0, 0, guard + 1).partitions[0]!.held).toHaveLength(2);
    expect(answer(s, 0, 1, guard).partitions[0]!.held).toHaveLength(2);
  });
});

// KAFKA-14884 (3.6.0) added the guard; KAFKA-14561's verification (trunk 2023-04 to 07) had none.
describe('the verification guard (switch verificationGuard)', () => {
  const answered = (s: State) =>
    s.network.find((c) => c.from === leader(0) && c.to === 0)!.messages[0] as { error: Err };
  const markerBetween = (guarded: boolean) => {
    const cfg = kafkaConfig('kafka-3.6', {}, { verificationGuard: guarded });
    let s = produce(cfg, initial(cfg), 0, { pid: 23, epoch: 1, seq: 0 });
    // The ABORT marker of the attempt's transaction lands while the coordinator is asked.
    s = marker(cfg, s, 0, { pid: 23, epoch: 1, commit: false }).state;
    return verified(cfg, s, 0);
  };

  it('hanging-transaction.json: B1 is back without the guard under kafka-3.6', () => {
    const spec = JSON.parse(
      readFileSync(new URL('../../specs/kafka/hanging-transaction.json', import.meta.url), 'utf8'),
    );
    const build = (variant: unknown) => {
      const run = parseSpec('hanging-transaction.json', { ...spec, variant }, '');
      return run.entry.build(run.params, run.properties) as Model<State, unknown>;
    };
    expect(bfs(build('kafka-3.6'), { deadlockAllowed: true }).status).toBe('ok');
    const unguarded = bfs(build({ base: 'kafka-3.6', disable: ['verificationGuard'] }), {
      deadlockAllowed: true,
    });
    expect(unguarded.violation?.property).toBe('NoHangingTransaction');
  });

  it('a marker between the answer and the append ends the attempt: INVALID_TXN_STATE', () => {
    const s = markerBetween(true);
    expect(answered(s).error).toBe(Err.INVALID_TXN_STATE);
    expect(s.partitions[0]!.log.filter((b) => b.kind === BatchKind.Data)).toEqual([]);
  });

  it('without the guard the batch is appended and opens a transaction no coordinator will end', () => {
    const s = markerBetween(false);
    expect(answered(s).error).toBe(Err.NONE);
    expect(s.partitions[0]!.producers.find((e) => e.pid === 23)!.txnFirstOffset).not.toBe(NO_OFFSET);
  });
});

// KAFKA-14904 (trunk 2023-04-20, before 3.5.0 shipped the verify API) dropped the pending check.
describe('verification and a pending transition (switch verifyChecksPending)', () => {
  const verify = (checksPending: boolean): Err => {
    const cfg = kafkaConfig('kafka-3.6', {}, { verifyChecksPending: checksPending });
    const pending = at(initial(cfg), {
      pid: 23,
      epoch: 1,
      state: TxnState.Ongoing,
      pendingState: TxnState.PrepareCommit,
      partitions: bit(0),
    });
    const fields = { pid: 23, epoch: 1, partitions: bit(0), verifyOnly: true };
    return ask(cfg, pending, Api.AddPartitionsToTxn, fields).reply.error;
  };

  it('3.6.0 and later answer by partition membership alone: NONE', () => {
    expect(verify(false)).toBe(Err.NONE);
  });

  it('the code before the fix answers CONCURRENT_TRANSACTIONS', () => {
    expect(verify(true)).toBe(Err.CONCURRENT_TRANSACTIONS);
  });
});
