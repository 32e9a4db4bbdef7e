import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
const leadsTo = (from: number, to: number): Goal<Node> => ({ kind: 'leadsTo', label: `at${from}~>at${to}`, p: at(from), q: at(to) });
const property = (...goals: Goal<Node>[]): TemporalProperty<Node> => ({ name: 'Live', description: '', goals });
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
    expect(unfair.verdicts[0]!.lasso).toMatchObject({ goal: '<>at1', trigger: 0, loop: 0, loopAction: 'spin 0->0', actions: [] });
  });

  it('a state without successors is a stuttering cycle, fair whatever the fairness', () => {
    const result = checkLiveness(spinOrFinish, [property(leadsTo(0, 2))], { fairness: [each('spin', 'finish')] });
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
    expect(back).toMatchObject({ trigger: 1, loop: 2, loopAction: 'idle 2->2', actions: ['go 0->1', 'go 1->2'] });
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
    expect(result.verdicts[0]!.lasso).toMatchObject({ loop: 0, actions: ['tick 0->1'], loopAction: 'tick 1->0' });
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
    const result = checkLiveness(graph, [property(eventually(7)), { ...property(eventually(0)), name: 'Other' }], { fairness: [] });
    expect(result.verdicts.map((v) => [v.property, v.lasso === undefined])).toEqual([
      ['Live', false],
      ['Other', true],
    ]);
    expect(result.verdicts[0]!.lasso).toMatchObject({ actions: ['b 0->2', 'b 2->3'], loop: 2, loopAction: 'b 3->3' });
    expect(result).toMatchObject({ states: 6, edges: 7 });
  });

  it('stops at the state limit without a verdict', () => {
    expect(checkLiveness(spinOrFinish, [property(eventually(1))], { fairness: [], maxStates: 1 })).toMatchObject({ status: 'incomplete', stoppedBy: 'maxStates' });
  });

  it('tells a fair cycle from an unfair one on concrete states', () => {
    const s0 = { at: 0 };
    const spin: Edge = [0, 0, 'spin'];
    expect(unfairOnCycle(spinOrFinish, [each('finish')], [s0], [spin])).toBe('finish 0->1 is enabled in every state of the cycle and never taken');
    expect(unfairOnCycle(spinOrFinish, [each('spin')], [s0], [spin])).toBeUndefined();
    expect(unfairOnCycle(spinOrFinish, [], [s0], [])).toBe('stuttering although an action is enabled');
  });
});

describe('lasso traces', () => {
  const dir = mkdtempSync(join(tmpdir(), 'txcheck-lasso-'));
  const meta = { spec: { model: 'graph' }, specFile: 'graph.json', strategy: 'bfs', property: 'Live', description: 'd' };
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
      message: 'all 0 steps replay as recorded, the cycle returns from step 0 to step 0, and <>at1 never reaches its goal after step 0 on this fair run',
      views: trace.states,
    });
    // Under fairness of finish the same cycle is no counterexample.
    const fairReplay = replay(spinOrFinish, trace, { properties: live, fairness: [each('finish')] });
    expect(fairReplay).toEqual({ reproduced: false, message: 'the cycle from step 0 is not fair: finish 0->1 is enabled in every state of the cycle and never taken' });
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
