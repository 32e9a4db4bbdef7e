import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Fairness, type TemporalProperty, checkLiveness, unfairOnCycle } from './liveness.ts';
import type { Goal } from './model.ts';
import type { Model } from './model.ts';
import { readTraceFile, replay, writeTraceFile } from './trace.ts';

interface Node {
  readonly at: number;
}
type Edge = readonly [from: number, to: number, kind: string, label?: string];

/** States are graph nodes; the actions of a node are its out-edges, labelled "kind n->m" unless they say otherwise. */
function graphModel(edges: readonly Edge[], kinds: readonly string[]): Model<Node, Edge> {
  return {
    init: () => [{ at: 0 }],
    actions: (s) => edges.filter(([from]) => from === s.at),
    next: (_s, [, to]) => ({ at: to }),
    label: ([from, to, kind, label]) => label ?? `${kind} ${from}->${to}`,
    kind: ([, , kind]) => kind,
    actionKinds: kinds,
    invariants: [],
  };
}

const at = (n: number) => (s: Node) => s.at === n;
const eventually = (n: number): Goal<Node> => ({ kind: 'eventually', label: `<>at${n}`, q: at(n) });
const leadsTo = (from: number, to: number): Goal<Node> => ({
  kind: 'leadsTo',
  label: `at${from}~>at${to}`,
  p: at(from),
  q: at(to),
});
const property = (...goals: Goal<Node>[]): TemporalProperty<Node> => ({
  name: 'Live',
  description: '',
  goals,
});
const each = (...kinds: string[]): Fairness => ({ kinds, perAction: true });

// 0 may spin forever or finish in 1, where nothing is enabled.
const spinOrFinish = graphModel(
  [
    [0, 0, 'spin'],
    [0, 1, 'finish'],
  ],
  ['spin', 'finish'],
);

describe('liveness under weak fairness', () => {
  it('a goal that holds only under fairness holds with it and fails without it', () => {
    const live = [property(eventually(1))];
    expect(checkLiveness(spinOrFinish, live, { fairness: [each('finish')] }).status).toBe('ok');
    const unfair = checkLiveness(spinOrFinish, live, { fairness: [] });
    expect(unfair.status).toBe('violation');
    expect(unfair.verdicts[0]!.lasso).toMatchObject({
      goal: '<>at1',
      trigger: 0,
      loop: 0,
      loopAction: 'spin 0->0',
      actions: [],
    });
  });

  it('a state without successors is a stuttering cycle, fair whatever the fairness', () => {
    const result = checkLiveness(spinOrFinish, [property(leadsTo(0, 2))], {
      fairness: [each('spin', 'finish')],
    });
    const lasso = result.verdicts[0]!.lasso!;
    expect(lasso.actions).toEqual(['finish 0->1']);
    expect(lasso).toMatchObject({ trigger: 0, loop: 1 });
    expect(lasso.loopAction).toBeUndefined();
  });

  it('eventually looks from the initial states only; leads-to from every state where its trigger holds', () => {
    // 0 -> 1 -> 2, and 2 idles forever; only `go` is fair.
    const line = graphModel(
      [
        [0, 1, 'go'],
        [1, 2, 'go'],
        [2, 2, 'idle'],
      ],
      ['go', 'idle'],
    );
    const fair = { fairness: [each('go')] };
    expect(checkLiveness(line, [property(eventually(0))], fair).status).toBe('ok');
    expect(checkLiveness(line, [property(eventually(2))], fair).status).toBe('ok');
    const back = checkLiveness(line, [property(leadsTo(1, 0))], fair).verdicts[0]!.lasso!;
    expect(back).toMatchObject({
      trigger: 1,
      loop: 2,
      loopAction: 'idle 2->2',
      actions: ['go 0->1', 'go 1->2'],
    });
    // Without a trigger state a leads-to holds vacuously.
    expect(checkLiveness(line, [property(leadsTo(5, 0))], fair).status).toBe('ok');
  });

  it('per-action fairness serves every action of a kind; a class is served by any of its actions', () => {
    // Two channels: a ping on channel a comes back forever, while channel b holds one message
    // whose delivery (one action, so one label) leads to 9.
    const channels = graphModel(
      [
        [0, 1, 'deliver-a'],
        [1, 0, 'reply'],
        [0, 9, 'deliver-b', 'deliver b'],
        [1, 9, 'deliver-b', 'deliver b'],
      ],
      ['deliver-a', 'deliver-b', 'reply'],
    );
    const live = [property(eventually(9))];
    const perAction = { kinds: ['deliver-a', 'deliver-b', 'reply'], perAction: true };
    const wholeClass = { kinds: ['deliver-a', 'deliver-b', 'reply'], perAction: false };
    expect(checkLiveness(channels, live, { fairness: [perAction] }).status).toBe('ok');
    const starved = checkLiveness(channels, live, { fairness: [wholeClass] }).verdicts[0]!.lasso!;
    expect(starved).toMatchObject({ loop: 0, actions: ['deliver-a 0->1'], loopAction: 'reply 1->0' });
  });

  it('a fair cycle passes a state where a continuously enabled action is disabled', () => {
    // 0 <-> 1 forever; `leave` (to 2) is enabled at 0 only, so cycling is fair to it.
    const blinking = graphModel(
      [
        [0, 1, 'tick'],
        [1, 0, 'tick'],
        [0, 2, 'leave'],
      ],
      ['tick', 'leave'],
    );
    const result = checkLiveness(blinking, [property(eventually(2))], { fairness: [each('tick', 'leave')] });
    expect(result.verdicts[0]!.lasso).toMatchObject({
      loop: 0,
      actions: ['tick 0->1'],
      loopAction: 'tick 1->0',
    });
  });

  it('reports the shortest prefix to a fair cycle, and every property separately', () => {
    // Trigger 0; a long way to the cycle at 5 and a short way to the cycle at 3.
    const graph = graphModel(
      [
        [0, 1, 'a'],
        [1, 4, 'a'],
        [4, 5, 'a'],
        [5, 5, 'a'],
        [0, 2, 'b'],
        [2, 3, 'b'],
        [3, 3, 'b'],
      ],
      ['a', 'b'],
    );
    const result = checkLiveness(
      graph,
      [property(eventually(7)), { ...property(eventually(0)), name: 'Other' }],
      { fairness: [] },
    );
    expect(result.verdicts.map((v) => [v.property, v.lasso === undefined])).toEqual([
      ['Live', false],
      ['Other', true],
    ]);
    expect(result.verdicts[0]!.lasso).toMatchObject({
      actions: ['b 0->2', 'b 2->3'],
      loop: 2,
      loopAction: 'b 3->3',
    });
    expect(result).toMatchObject({ states: 6, edges: 7 });
  });

  it('stops at the state limit without a verdict', () => {
    expect(
      checkLiveness(spinOrFinish, [property(eventually(1))], { fairness: [], maxStates: 1 }),
    ).toMatchObject({ status: 'incomplete', stoppedBy: 'maxStates' });
  });

  it('tells a fair cycle from an unfair one on concrete states', () => {
    const s0 = { at: 0 };
    const spin: Edge = [0, 0, 'spin'];
    expect(unfairOnCycle(spinOrFinish, [each('finish')], [s0], [spin])).toBe(
      'finish 0->1 is enabled in every state of the cycle and never taken',
    );
    expect(unfairOnCycle(spinOrFinish, [each('spin')], [s0], [spin])).toBeUndefined();
    expect(unfairOnCycle(spinOrFinish, [], [s0], [])).toBe('stuttering although an action is enabled');
  });
});

describe('lasso traces', () => {
  const dir = mkdtempSync(join(tmpdir(), 'txcheck-lasso-'));
  const meta = {
    spec: { model: 'graph' },
    specFile: 'graph.json',
    strategy: 'bfs',
    property: 'Live',
    description: 'd',
  };
  const live = [property(eventually(1))];

  it('are written with ITF loop and replay: the cycle returns to its first state and is fair', () => {
    const lasso = checkLiveness(spinOrFinish, live, { fairness: [] }).verdicts[0]!.lasso!;
    const path = join(dir, 'spin.itf.json');
    writeTraceFile(path, spinOrFinish, lasso, meta);
    const trace = readTraceFile(path);
    expect(trace.loop).toBe(0);
    expect(trace.meta).toMatchObject({ goal: '<>at1', trigger: 0, loopAction: 'spin 0->0' });
    expect(replay(spinOrFinish, trace, { properties: live, fairness: [] })).toEqual({
      reproduced: true,
      message:
        'all 0 steps replay as recorded, the cycle returns from step 0 to step 0, and <>at1 never reaches its goal after step 0 on this fair run',
      views: trace.states,
    });
    // Under fairness of finish the same cycle is no counterexample.
    const fairReplay = replay(spinOrFinish, trace, { properties: live, fairness: [each('finish')] });
    expect(fairReplay).toEqual({
      reproduced: false,
      message:
        'the cycle from step 0 is not fair: finish 0->1 is enabled in every state of the cycle and never taken',
    });
  });

  it('replay notices a cycle that does not return to its first state', () => {
    const lasso = checkLiveness(spinOrFinish, live, { fairness: [] }).verdicts[0]!.lasso!;
    const path = join(dir, 'broken.itf.json');
    writeTraceFile(path, spinOrFinish, { ...lasso, loopAction: 'finish 0->1' }, meta);
    expect(replay(spinOrFinish, readTraceFile(path), { properties: live, fairness: [] }).message).toBe(
      'the cycle does not return to step 0: at: recorded 0, replayed 1',
    );
  });
});

describe('memory of the state graph', () => {
  // A chain of 600 states: the graph looks at the memory every 256 states.
  const chain = graphModel(
    Array.from({ length: 600 }, (_, n): Edge => [n, n + 1, 'step']),
    ['step'],
  );
  const goal = property(eventually(600));
  const use = (rss: number) => () => ({ heapUsed: 0, heapLimit: 2 ** 30, rss });

  it('stops cleanly at --max-memory, counting the whole process', () => {
    const over = checkLiveness(chain, [goal], { fairness: [], maxMemory: 100, memory: use(101 * 2 ** 20) });
    expect(over).toMatchObject({ status: 'incomplete', stoppedBy: 'maxMemory' });
    const under = checkLiveness(chain, [goal], { fairness: [], maxMemory: 100, memory: use(99 * 2 ** 20) });
    expect(under.status).not.toBe('incomplete');
  });
});

// The oracle: on small random graphs, a fair cycle found by brute force. A goal P ~> Q fails when
// a reachable state where P holds and Q does not reaches, through states where Q does not hold,
// a state without successors or a set of such states that is strongly connected by its inner
// edges and fair: each weakly fair class (each action, per action) enabled in all its states is
// taken by an inner edge. Taking every inner edge is the best a cycle can do, so sets suffice.
describe('liveness against a brute-force search for fair cycles', () => {
  const kinds = ['a', 'b', 'c'];
  const graph = fc.record({
    // Few nodes and many edges, so that cycles, exits and classes enabled everywhere are common.
    nodes: fc.integer({ min: 1, max: 5 }),
    edges: fc.array(fc.tuple(fc.nat({ max: 4 }), fc.nat({ max: 4 }), fc.constantFrom(...kinds)), {
      minLength: 1,
      maxLength: 10,
    }),
    fairness: fc.array(fc.record({ kinds: fc.subarray(kinds, { minLength: 1 }), perAction: fc.boolean() }), {
      maxLength: 2,
    }),
    p: fc.nat({ max: 63 }),
    q: fc.nat({ max: 63 }),
    leadsTo: fc.boolean(),
  });

  function violatedByBruteForce(
    nodes: number,
    edges: readonly Edge[],
    fairness: readonly Fairness[],
    p: (v: number) => boolean,
    q: (v: number) => boolean,
  ): boolean {
    const out = (v: number) => edges.filter(([from]) => from === v);
    const labelOf = (e: Edge) => `${e[2]} ${e[0]}->${e[1]}`;
    const reach = (from: readonly number[], through: (v: number) => boolean): Set<number> => {
      const seen = new Set(from);
      for (const v of seen) for (const [, to] of out(v)) if (through(to)) seen.add(to);
      return seen;
    };
    const fairSet = (members: readonly number[]): boolean => {
      const inside = new Set(members);
      const inner = edges.filter(([from, to]) => inside.has(from) && inside.has(to));
      if (inner.length === 0 || members.some((v) => reach([v], (w) => inside.has(w)).size !== members.length))
        return false;
      return fairness.every((f) => {
        const ofClass = (e: Edge) => f.kinds.includes(e[2]);
        if (!f.perAction) return members.some((v) => !out(v).some(ofClass)) || inner.some(ofClass);
        const labels = new Set(edges.filter(ofClass).map(labelOf));
        return [...labels].every(
          (l) =>
            members.some((v) => !out(v).some((e) => labelOf(e) === l)) || inner.some((e) => labelOf(e) === l),
        );
      });
    };
    const notQ = Array.from({ length: nodes }, (_, v) => v).filter((v) => !q(v));
    const fairStates = new Set(notQ.filter((v) => out(v).length === 0));
    for (let mask = 1; mask < 1 << notQ.length; mask++) {
      const members = notQ.filter((_, i) => (mask & (1 << i)) !== 0);
      if (fairSet(members)) for (const v of members) fairStates.add(v);
    }
    const reachable = reach([0], () => true);
    const triggers = [...reachable].filter((v) => p(v) && !q(v));
    return [...reach(triggers, (w) => !q(w))].some((v) => fairStates.has(v));
  }

  it('finds a lasso exactly when a fair cycle exists, and the lasso replays as a fair counterexample', () => {
    const dir = mkdtempSync(join(tmpdir(), 'txcheck-lasso-oracle-'));
    fc.assert(
      fc.property(graph, ({ nodes, edges: raw, fairness, p: pMask, q: qMask, leadsTo: isLeadsTo }) => {
        const edges: Edge[] = raw.map(([from, to, kind]) => [from % nodes, to % nodes, kind]);
        const inSet = (mask: number) => (v: number) => (mask & (1 << v)) !== 0;
        const goal: Goal<Node> = isLeadsTo
          ? { kind: 'leadsTo', label: 'P~>Q', p: (s) => inSet(pMask)(s.at), q: (s) => inSet(qMask)(s.at) }
          : { kind: 'eventually', label: '<>Q', q: (s) => inSet(qMask)(s.at) };
        const model = graphModel(edges, kinds);
        const live = [property(goal)];
        const result = checkLiveness(model, live, { fairness });
        const expected = violatedByBruteForce(
          nodes,
          edges,
          fairness,
          isLeadsTo ? inSet(pMask) : (v) => v === 0,
          inSet(qMask),
        );
        expect(result.status).toBe(expected ? 'violation' : 'ok');
        const lasso = result.verdicts[0]!.lasso;
        if (lasso === undefined) return;
        const path = join(dir, 'lasso.itf.json');
        writeTraceFile(path, model, lasso, {
          spec: { model: 'graph' },
          specFile: 'graph.json',
          strategy: 'bfs',
          property: 'Live',
          description: 'd',
        });
        expect(replay(model, readTraceFile(path), { properties: live, fairness }).reproduced).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
