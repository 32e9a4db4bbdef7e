import { describe, expect, it } from 'vitest';
import { bfs } from '../../checker/engine/bfs.ts';
import { type Model, PACK_WORDS } from '../../checker/engine/model.ts';
import { twoPhaseEntry } from '../../specs/two-phase/entry.ts';
import { Msg, RmState, TmState } from './index.ts';

const allProperties = twoPhaseEntry.properties.map((p) => p.name);
const build = (resourceManagers: number) => twoPhaseEntry.build({ resourceManagers }, allProperties);

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

/**
 * The simplest possible exhaustive search, independent of the engine: states as JSON strings
 * in a Set, a plain queue, every state frozen so a `next` that mutates its input throws.
 */
function naiveCount(model: Model<unknown, unknown>): { distinct: number; generated: number } {
  const seen = new Set<string>();
  const queue: unknown[] = [];
  let generated = 0;
  const visit = (s: unknown) => {
    generated++;
    const key = JSON.stringify(s);
    if (!seen.has(key)) {
      seen.add(key);
      queue.push(deepFreeze(s));
    }
  };
  model.init().forEach(visit);
  for (let i = 0; i < queue.length; i++) {
    const s = queue[i];
    for (const a of model.actions(s)) visit(model.next(s, a));
  }
  return { distinct: seen.size, generated };
}

/**
 * TwoPhase.tla transcribed on its own, with TLA+'s sets as sorted string lists, sharing no code
 * with the model: what TLC would count (distinct states, and every successor generated).
 */
function twoPhaseTla(n: number): { distinct: number; generated: number } {
  type S = { rmState: string[]; tmState: string; tmPrepared: number[]; msgs: string[] };
  const union = <T>(set: T[], x: T): T[] => (set.includes(x) ? set : [...set, x].sort());
  const setRm = (s: S, rm: number, v: string): string[] => s.rmState.map((x, i) => (i === rm ? v : x));
  const next = (s: S): S[] => {
    const out: S[] = [];
    if (s.tmState === 'init' && s.tmPrepared.length === n)
      out.push({ ...s, tmState: 'committed', msgs: union(s.msgs, 'Commit') });
    if (s.tmState === 'init') out.push({ ...s, tmState: 'aborted', msgs: union(s.msgs, 'Abort') });
    for (let rm = 0; rm < n; rm++) {
      if (s.tmState === 'init' && s.msgs.includes(`Prepared${rm}`))
        out.push({ ...s, tmPrepared: union(s.tmPrepared, rm) });
      if (s.rmState[rm] === 'working')
        out.push({ ...s, rmState: setRm(s, rm, 'prepared'), msgs: union(s.msgs, `Prepared${rm}`) });
      if (s.rmState[rm] === 'working') out.push({ ...s, rmState: setRm(s, rm, 'aborted') });
      if (s.msgs.includes('Commit')) out.push({ ...s, rmState: setRm(s, rm, 'committed') });
      if (s.msgs.includes('Abort')) out.push({ ...s, rmState: setRm(s, rm, 'aborted') });
    }
    return out;
  };
  const init: S = { rmState: Array<string>(n).fill('working'), tmState: 'init', tmPrepared: [], msgs: [] };
  const seen = new Set([JSON.stringify(init)]);
  const queue = [init];
  let generated = 1;
  for (let i = 0; i < queue.length; i++) {
    for (const t of next(queue[i]!)) {
      generated++;
      const key = JSON.stringify(t);
      if (!seen.has(key)) {
        seen.add(key);
        queue.push(t);
      }
    }
  }
  return { distinct: seen.size, generated };
}

describe('two-phase commit', () => {
  it("the independent transcription of TwoPhase.tla gives TLC's published figures", () => {
    // tlaplus/Examples specifications/transaction_commit/manifest.json (3 RMs) and TwoPhase.tla's closing comment (6 RMs).
    expect(twoPhaseTla(3)).toEqual({ distinct: 288, generated: 1146 });
    expect(twoPhaseTla(6).distinct).toBe(50816);
  });

  it.each([1, 2, 3, 4, 5, 6])(
    'counts what the transcription of TwoPhase.tla counts, with %i resource managers',
    (n) => {
      const result = bfs(build(n), { deadlockAllowed: false });
      expect(result.status).toBe('ok');
      expect({ distinct: result.distinctStates, generated: result.statesGenerated }).toEqual(twoPhaseTla(n));
    },
  );

  it("matches TLC's published counts for 3 resource managers: 288 distinct, 1,146 generated", () => {
    const result = bfs(build(3), { deadlockAllowed: false });
    expect(result.status).toBe('ok');
    expect(result.distinctStates).toBe(288);
    expect(result.statesGenerated).toBe(1146);
    expect(result.coverage.neverFired).toEqual([]);
  });

  it('has the 50,816 reachable states for 6 resource managers that TwoPhase.tla states', () => {
    expect(bfs(build(6), { deadlockAllowed: false }).distinctStates).toBe(50816);
  });

  it.each([1, 2, 3, 4, 5])('counts like an independent naive search with %i resource managers', (n) => {
    const expected = naiveCount(build(n));
    const result = bfs(build(n), { deadlockAllowed: false });
    expect(result.status).toBe('ok');
    expect({ distinct: result.distinctStates, generated: result.statesGenerated }).toEqual(expected);
  });

  it('keeps TMRcvPrepared enabled for an RM already prepared, yielding the same state', () => {
    const model = build(1);
    let s: unknown = model.init()[0];
    const take = (label: string) => {
      const a = model.actions(s).find((x) => model.label(x) === label);
      expect(a, label).toBeDefined();
      s = model.next(s, a!);
    };
    take('RMPrepare(rm1)');
    take('TMRcvPrepared(rm1)');
    const before = JSON.stringify(s);
    take('TMRcvPrepared(rm1)');
    expect(JSON.stringify(s)).toBe(before);
  });

  it('lets an RM receive Commit whatever its own state (no guard on it, as in TwoPhase.tla)', () => {
    const model = twoPhaseEntry.build(
      { resourceManagers: 2, mutant: 'commit-without-all-prepared' },
      allProperties,
    );
    const s = model.next(
      model.init()[0]!,
      model.actions(model.init()[0]!).find((a) => model.label(a) === 'TMCommit')!,
    );
    const labels = model.actions(s).map(model.label);
    expect(labels).toContain('RMRcvCommitMsg(rm1)');
    expect(labels).toContain('RMPrepare(rm1)');
  });

  it('with the commit-early mutant, BFS finds TCConsistent violated in 3 steps', () => {
    const model = twoPhaseEntry.build(
      { resourceManagers: 3, mutant: 'commit-without-all-prepared' },
      allProperties,
    );
    const result = bfs(model, { deadlockAllowed: false });
    expect(result.status).toBe('violation');
    expect(result.violation?.property).toBe('TCConsistent');
    expect(result.violation?.trace.actions).toEqual([
      'TMCommit',
      'RMChooseToAbort(rm1)',
      'RMRcvCommitMsg(rm2)',
    ]);
  });

  it('holds TPTypeOK and TCConsistent only for states of the right shape', () => {
    const [typeOk, consistent] = twoPhaseEntry.build({ resourceManagers: 2 }, allProperties).invariants;
    // rm1 committed, rm2 prepared; Commit and both Prepared messages sent.
    const good = {
      msgs: Msg.Commit | 0b11,
      rmState: RmState.Committed | (RmState.Prepared << 2),
      tmPrepared: 0b11,
      tmState: TmState.Committed,
    };
    expect(typeOk!.holds(good)).toBe(true);
    expect(typeOk!.holds({ ...good, rmState: 1 << 4 })).toBe(false);
    expect(typeOk!.holds({ ...good, tmPrepared: 0b100 })).toBe(false);
    expect(typeOk!.holds({ ...good, msgs: 0b100 })).toBe(false);
    expect(typeOk!.holds({ ...good, tmState: 3 })).toBe(false);
    expect(consistent!.holds(good)).toBe(true);
    expect(consistent!.holds({ ...good, rmState: RmState.Committed | (RmState.Aborted << 2) })).toBe(false);
  });

  it.each([
    [3, undefined],
    [3, 'commit-without-all-prepared'],
  ] as const)(
    'gives through its successors fast path exactly what actions and next give (N=%i, mutant %s)',
    (resourceManagers, mutant) => {
      const model = twoPhaseEntry.build(
        mutant === undefined ? { resourceManagers } : { resourceManagers, mutant },
        allProperties,
      );
      const kinds = model.actionKinds;
      const seen = new Set<string>();
      const queue = [...model.init()];
      for (let i = 0; i < queue.length; i++) {
        const s = queue[i];
        const slow = model
          .actions(s)
          .map((a, j) => ({ t: model.next(s, a), action: j, kind: model.kind(a) }));
        const fast: typeof slow = [];
        model.successors!(s, (t, action, kind) => fast.push({ t, action, kind: kinds[kind]! }));
        expect(fast).toEqual(slow);
        const words = new Int32Array(PACK_WORDS);
        expect(model.unpack!(words.subarray(0, model.pack!(s, words)))).toEqual(s);
        for (const { t } of slow) {
          const key = JSON.stringify(t);
          if (!seen.has(key)) {
            seen.add(key);
            queue.push(t);
          }
        }
      }
      expect(seen.size).toBeGreaterThan(100);
    },
  );
});
