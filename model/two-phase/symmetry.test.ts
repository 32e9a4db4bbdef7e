import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bfs } from '../../checker/engine/bfs.ts';
import { main } from '../../checker/cli.ts';
import type { Model } from '../../checker/engine/model.ts';
import { buildModel } from '../../specs/build.ts';
import { type TwoPhaseState, rmStateOf } from './index.ts';

const dir = mkdtempSync(join(tmpdir(), 'txcheck-symmetry-'));
const spec = (resourceManagers: number, extra: Record<string, unknown> = {}) => ({
  model: 'two-phase',
  resourceManagers,
  ...extra,
});
const check = (raw: Record<string, unknown>) => bfs(buildModel('spec.json', raw), { deadlockAllowed: false });

/** The state with rm i renamed to rm p[i]. */
function rename(s: TwoPhaseState, p: readonly number[]): TwoPhaseState {
  const commitAbort = s.msgs & ~((1 << p.length) - 1);
  let rmState = 0;
  let tmPrepared = 0;
  let msgs = commitAbort;
  p.forEach((to, from) => {
    rmState |= rmStateOf(s, from) << (2 * to);
    tmPrepared |= ((s.tmPrepared >>> from) & 1) << to;
    msgs |= ((s.msgs >>> from) & 1) << to;
  });
  return { msgs, rmState, tmPrepared, tmState: s.tmState };
}

function permutations(n: number): number[][] {
  if (n === 0) return [[]];
  return permutations(n - 1).flatMap((p) =>
    Array.from({ length: n }, (_, at) => [...p.slice(0, at), n - 1, ...p.slice(at)]),
  );
}

/** The reachable states of TwoPhase with n RMs, by a plain search. */
function reachable(n: number): TwoPhaseState[] {
  const model = buildModel('spec.json', spec(n)) as Model<TwoPhaseState, unknown>;
  const seen = new Map<string, TwoPhaseState>(model.init().map((s) => [JSON.stringify(s), s]));
  const queue = [...seen.values()];
  for (let i = 0; i < queue.length; i++) {
    for (const a of model.actions(queue[i]!)) {
      const t = model.next(queue[i]!, a);
      if (!seen.has(JSON.stringify(t))) {
        seen.set(JSON.stringify(t), t);
        queue.push(t);
      }
    }
  }
  return queue;
}

describe('TwoPhase symmetry', () => {
  it.each([3, 4])('explores one state per class of RM renamings (N=%i), and the verdict stays', (n) => {
    const renamings = permutations(n);
    const classes = new Set(
      reachable(n).map((s) => renamings.map((p) => JSON.stringify(rename(s, p))).sort()[0]),
    );
    const reduced = check(spec(n, { symmetry: true }));
    const full = check(spec(n));
    expect(reduced.status).toBe(full.status);
    expect(reduced.distinctStates).toBe(classes.size);
    expect(reduced.distinctStates).toBeLessThan(full.distinctStates);
  });

  it('finds the mutant violation as short as without symmetry, and its trace replays on the real model', async () => {
    const raw = spec(5, { mutant: 'commit-without-all-prepared', symmetry: true });
    const reduced = check(raw);
    const full = check({ ...raw, symmetry: false });
    expect(reduced.violation?.property).toBe('TCConsistent');
    expect(reduced.violation?.trace.actions).toHaveLength(full.violation!.trace.actions.length);
    expect(reduced.distinctStates).toBeLessThan(full.distinctStates);

    const file = join(dir, 'mutant-symmetry.json');
    writeFileSync(file, JSON.stringify(raw));
    const io = { out: () => {}, err: () => {}, errIsTTY: false };
    const trace = join(dir, 'mutant-symmetry.itf.json');
    expect(await main(['check', file, '--workers', '1', '--out', trace], io)).toBe(1);
    expect(await main(['replay', trace], io)).toBe(0);
  });
});
