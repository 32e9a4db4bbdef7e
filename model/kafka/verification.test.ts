// KIP-890 part 1: a leader holds a Produce while the coordinator verifies it; a verification
// lost on the way is timed out, so the held Produce is answered and the client retries.
import { describe, expect, it } from 'vitest';
import { bfs } from '../../checker/engine/bfs.ts';
import type { Model } from '../../checker/engine/model.ts';
import { parseSpec } from '../../specs/load.ts';
import { type State, Err } from './state.ts';

function model(): Model<State, unknown> {
  const s = parseSpec('verification.json', { model: 'kafka', variant: 'kafka-3.6', partitions: 1, deadlock: true, faults: { requestLoss: 1 } }, '');
  return s.entry.build(s.params, s.properties) as Model<State, unknown>;
}

/** Runs the actions with these labels from the initial state. */
function walk(m: Model<State, unknown>, labels: string[]): State {
  let s = m.init()[0]!;
  for (const label of labels) {
    const a = m.actions(s).find((x) => m.label(x) === label);
    if (a === undefined) throw new Error(`not enabled: ${label}; enabled: ${m.actions(s).map((x) => m.label(x)).join(' | ')}`);
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
