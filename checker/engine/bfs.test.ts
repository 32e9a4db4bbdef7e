import { freemem } from 'node:os';
import { describe, expect, it } from 'vitest';
import { bfs } from './bfs.ts';
import { ChunkPool, Ends, Frontier, Spill } from './frontier.ts';
import type { Model, Property } from './model.ts';
import type { Progress } from './search.ts';
import { DEADLOCK } from './search.ts';

interface Node {
  readonly at: number;
}

/**
 * A model whose states are the nodes of a directed graph: the actions of node n are its
 * out-edges, in order, labelled "n->m". Edges from odd nodes are of kind "odd", others "even";
 * kind "never" has no edge.
 */
function graphModel(
  edges: Record<number, number[]>,
  invariants: Property<Node>[] = [],
  inits = [0],
): Model<Node, [number, number]> {
  return {
    init: () => inits.map((at) => ({ at })),
    actions: (s) => (edges[s.at] ?? []).map((to): [number, number] => [s.at, to]),
    next: (_s, [, to]) => ({ at: to }),
    label: ([from, to]) => `${from}->${to}`,
    kind: ([from]) => (from % 2 === 1 ? 'odd' : 'even'),
    actionKinds: ['even', 'odd', 'never'],
    invariants,
  };
}

/** An invariant that never fails and records the order states are checked in. */
function recorder(): { seen: number[]; property: Property<Node> } {
  const seen: number[] = [];
  return { seen, property: { name: 'Record', description: '', holds: (s) => (seen.push(s.at), true) } };
}

const notAt = (bad: number): Property<Node> => ({
  name: `NotAt${bad}`,
  description: '',
  holds: (s) => s.at !== bad,
});

// 0 -> 1, 2;  1 -> 3, 0;  2 -> 3, 4;  3 -> 5;  4 -> 4;  5 -> 5, 1
const diamond = { 0: [1, 2], 1: [3, 0], 2: [3, 4], 3: [5], 4: [4], 5: [5, 1] };

/** n -> n + 1 forever. */
const endless: Model<Node, number> = {
  init: () => [{ at: 0 }],
  actions: () => [1],
  next: (s, step) => ({ at: s.at + step }),
  label: () => 'inc',
  kind: () => 'inc',
  actionKinds: ['inc'],
  invariants: [],
};

describe('bfs', () => {
  it('discovers states in breadth-first order and checks each once', () => {
    const { seen, property } = recorder();
    const result = bfs(graphModel(diamond, [property]), { deadlockAllowed: false });
    expect(result.status).toBe('ok');
    expect(seen).toEqual([0, 1, 2, 3, 4, 5]);
    expect(result.depth).toBe(3);
  });

  it('counts generated states as TLC does: initial states plus every successor, duplicates included', () => {
    const result = bfs(graphModel(diamond), { deadlockAllowed: false });
    expect(result.distinctStates).toBe(6);
    // 1 initial + out-degrees 2 + 2 + 2 + 1 + 1 + 2
    expect(result.statesGenerated).toBe(11);
  });

  it('counts a duplicate initial state as generated but not distinct', () => {
    const result = bfs(graphModel({ 0: [0] }, [], [0, 0]), { deadlockAllowed: false });
    expect(result.distinctStates).toBe(1);
    expect(result.statesGenerated).toBe(3);
  });

  it('returns a shortest counterexample, rebuilt from the recorded actions', () => {
    // 0 -> 1 -> 2 -> 3 -> 9 is long; 0 -> 4 -> 9 is short, but found later in the first level.
    const edges = { 0: [1, 4], 1: [2], 2: [3], 3: [9], 4: [9], 9: [9] };
    const result = bfs(graphModel(edges, [notAt(9)]), { deadlockAllowed: false });
    expect(result.status).toBe('violation');
    expect(result.violation?.property).toBe('NotAt9');
    expect(result.violation?.trace.states).toEqual([{ at: 0 }, { at: 4 }, { at: 9 }]);
    expect(result.violation?.trace.actions).toEqual(['0->4', '4->9']);
  });

  it('reports a violation in an initial state with a one-state trace', () => {
    const result = bfs(graphModel(diamond, [notAt(0)]), { deadlockAllowed: false });
    expect(result.violation?.trace).toEqual({ states: [{ at: 0 }], actions: [] });
  });

  it('stops at a violation in an initial state without expanding it', () => {
    expect(bfs(graphModel(diamond, [notAt(0)]), { deadlockAllowed: false }).statesGenerated).toBe(1);
  });

  it('reports the depth of the level a stop ends in: the violating state, or the last level it kept states of', () => {
    // Levels: {0}, {1, 2}, {3, 4}, {5}.
    expect(bfs(graphModel(diamond, [notAt(3)]), { deadlockAllowed: false }).depth).toBe(2);
    expect(bfs(graphModel(diamond, [notAt(5)]), { deadlockAllowed: false }).depth).toBe(3);
    // The fourth state (3) is kept while level 1 is expanded; 4 is over the limit.
    expect(bfs(graphModel(diamond), { deadlockAllowed: false, maxStates: 4 }).depth).toBe(2);
    expect(bfs(graphModel(diamond), { deadlockAllowed: false, maxStates: 3 }).depth).toBe(1);
  });

  it('stops at maxStates among the initial states', () => {
    const result = bfs(graphModel(diamond, [], [0, 1, 2]), { deadlockAllowed: false, maxStates: 2 });
    expect(result).toMatchObject({
      status: 'incomplete',
      stoppedBy: 'maxStates',
      distinctStates: 2,
      depth: 0,
    });
  });

  it('refuses a checkpoint or a resume for a model that does not pack its states', () => {
    const file = 'never-written.ckpt';
    expect(() =>
      bfs(graphModel(diamond), {
        deadlockAllowed: false,
        checkpoint: { file, everySeconds: 1, identity: 'x' },
      }),
    ).toThrow('checkpoints need a model that packs and unpacks its states');
    expect(() =>
      bfs(graphModel(diamond), { deadlockAllowed: false, resume: { file, identity: 'x' } }),
    ).toThrow('checkpoints need a model that packs and unpacks its states');
  });

  it('reports a reachable state without actions as a deadlock, unless deadlock is allowed', () => {
    const edges = { 0: [1, 2], 1: [0], 2: [3] };
    const result = bfs(graphModel(edges), { deadlockAllowed: false });
    expect(result.status).toBe('violation');
    expect(result.violation?.property).toBe(DEADLOCK);
    expect(result.violation?.trace.actions).toEqual(['0->2', '2->3']);
    const allowed = bfs(graphModel(edges), { deadlockAllowed: true });
    expect(allowed.status).toBe('ok');
    expect(allowed.distinctStates).toBe(4);
  });

  it('counts coverage per action kind and names the kinds that never fired', () => {
    const result = bfs(graphModel(diamond), { deadlockAllowed: false });
    // edges from even nodes 0, 2, 4: 2 + 2 + 1; from odd nodes 1, 3, 5: 2 + 1 + 2
    expect(result.coverage.fired).toEqual({ even: 5, odd: 5, never: 0 });
    expect(result.coverage.neverFired).toEqual(['never']);
  });

  it('stops at maxStates with status incomplete and what it covered', () => {
    const result = bfs(graphModel(diamond), { deadlockAllowed: false, maxStates: 4 });
    expect(result.status).toBe('incomplete');
    expect(result.stoppedBy).toBe('maxStates');
    expect(result.distinctStates).toBe(4);
    expect(result.violation).toBeUndefined();
  });

  it('finishes when maxStates equals the number of reachable states', () => {
    expect(bfs(graphModel(diamond), { deadlockAllowed: false, maxStates: 6 }).status).toBe('ok');
  });

  it('stops at maxDepth when states beyond it exist, and not otherwise', () => {
    const chain = { 0: [1], 1: [2], 2: [3], 3: [4], 4: [5] };
    const cut = bfs(graphModel(chain), { deadlockAllowed: true, maxDepth: 3 });
    expect(cut).toMatchObject({ status: 'incomplete', stoppedBy: 'maxDepth', depth: 3, distinctStates: 4 });
    expect(bfs(graphModel(chain), { deadlockAllowed: true, maxDepth: 5 }).status).toBe('ok');
    // A deadlock at the depth bound is still reported.
    expect(bfs(graphModel(chain), { deadlockAllowed: false, maxDepth: 5 }).violation?.property).toBe(
      DEADLOCK,
    );
  });

  it('stops at maxSeconds and reports progress on the way', () => {
    const reports: Progress[] = [];
    // A simulated clock that moves 1 ms each time the search reads it: no dependence on the machine.
    let ms = 0;
    const result = bfs(endless, {
      deadlockAllowed: false,
      maxSeconds: 0.2,
      progressEveryMs: 50,
      onProgress: (p) => reports.push(p),
      now: () => ms++,
    });
    expect(result.status).toBe('incomplete');
    expect(result.stoppedBy).toBe('maxSeconds');
    expect(result.seconds).toBeGreaterThanOrEqual(0.2);
    expect(reports.map((p) => p.seconds)).toEqual([0.05, 0.1, 0.15, 0.2]);
    const last = reports.at(-1)!;
    expect(last.distinctStates).toBeGreaterThan(reports[0]!.distinctStates);
    expect(last.statesPerSecond).toBeGreaterThan(0);
    // The level being expanded; the states it discovers are one deeper.
    expect(last.depth).toBe(last.distinctStates - 2);
  });

  // Simulated memory figures: a search that grows by 1 MB each time it looks.
  const growing = (from: { heapUsed: number; rss: number }) => {
    let looks = 0;
    return () => {
      looks++;
      return {
        heapUsed: from.heapUsed + looks * 2 ** 20,
        heapLimit: 100 * 2 ** 20,
        rss: from.rss + looks * 2 ** 20,
      };
    };
  };

  it('stops cleanly at --max-memory, on the resident memory of the process', () => {
    let ms = 0;
    const result = bfs(endless, {
      deadlockAllowed: false,
      maxMemory: 20,
      memory: growing({ heapUsed: 0, rss: 10 * 2 ** 20 }),
      now: () => (ms += 100),
    });
    expect(result).toMatchObject({ status: 'incomplete', stoppedBy: 'maxMemory' });
    // 256 expansions between two looks; the tenth look finds 20 MB passed.
    expect(result.distinctStates).toBeGreaterThan(256 * 10);
    expect(result.distinctStates).toBeLessThan(256 * 12);
  });

  it('stops before the next growth of its lists would pass --max-memory', () => {
    let ms = 0;
    // Resident memory stays 1 KB short of the limit: only the growth to come can pass it.
    const justBelow = () => ({ heapUsed: 0, heapLimit: 100 * 2 ** 20, rss: 20 * 2 ** 20 - 1024 });
    const result = bfs(endless, {
      deadlockAllowed: false,
      maxMemory: 20,
      memory: justBelow,
      now: () => (ms += 100),
    });
    expect(result).toMatchObject({ status: 'incomplete', stoppedBy: 'maxMemory' });
    expect(result.distinctStates).toBeLessThanOrEqual(257);
  });

  it('stops before the machine runs out of memory, with no --max-memory', () => {
    let ms = 0;
    let looks = 0;
    // The first look (at the start) sees 1 GB; later ones see it grown past what the machine had free.
    const machine = () => ({
      heapUsed: 0,
      heapLimit: 2 ** 40,
      rss: 2 ** 30 + (looks++ < 3 ? 0 : freemem()),
    });
    const result = bfs(endless, { deadlockAllowed: false, memory: machine, now: () => (ms += 100) });
    expect(result).toMatchObject({ status: 'incomplete', stoppedBy: 'maxMemory' });
    expect(result.distinctStates).toBeGreaterThan(256);
    expect(result.memory?.peakResidentBytes).toBeGreaterThan(0);
  });

  it('stops on its own before the heap is nearly full, with no --max-memory', () => {
    let ms = 0;
    const result = bfs(endless, {
      deadlockAllowed: false,
      memory: growing({ heapUsed: 80 * 2 ** 20, rss: 0 }),
      now: () => (ms += 100),
    });
    expect(result).toMatchObject({ status: 'incomplete', stoppedBy: 'maxMemory' });
    // 85 % of a 100 MB heap: the sixth look, at 86 MB.
    expect(result.distinctStates).toBeLessThan(256 * 7);
  });
});

describe('the breadth-first frontier', () => {
  const edges = { 0: [1, 2], 1: [3, 4], 2: [4, 5], 3: [6], 4: [6, 7], 5: [7], 6: [8], 7: [8] };
  // The same graph with states packed as one word each.
  const packing = (): Model<Node, [number, number]> => ({
    ...graphModel(edges),
    pack: (s, words) => ((words[0] = s.at), 1),
    unpack: (words) => ({ at: words[0]! }),
  });

  it('keeps packed states as words and gives them back as they were', () => {
    const frontier = new Frontier(packing());
    for (let at = 0; at < 5000; at++) frontier.push({ at: at * 7 });
    expect(frontier.length).toBe(5000);
    expect(frontier.bytes).toBeGreaterThanOrEqual(5000 * 8);
    expect([0, 1, 4999].map((i) => frontier.take(i))).toEqual([{ at: 0 }, { at: 7 }, { at: 4999 * 7 }]);
  });

  it('with a spill, keeps no more words in memory than its size and gives every state back in order', () => {
    const spill = new Spill(4096);
    try {
      const frontier = new Frontier(packing(), spill);
      let most = 0;
      for (let at = 0; at < 50_000; at++) {
        frontier.push({ at });
        most = Math.max(most, frontier.bytes);
      }
      expect(frontier.spilledBytes).toBeGreaterThan(49_000 * 4);
      const held = [frontier.wordsAt(0), frontier.wordsAt(1)];
      const back = Array.from({ length: 50_000 }, (_, i) => frontier.take(i).at);
      expect(back).toEqual(Array.from({ length: 50_000 }, (_, i) => i));
      // A view handed out earlier still holds its state after later reads.
      expect([...held[0]!, ...held[1]!]).toEqual([0, 1]);
      // The words list stays within the spill's size, beside the ends (a double per state, 65,536 of room).
      expect(most).toBeLessThanOrEqual(4096 + 65_536 * 8);
      expect(Int32Array.from([...frontier.saved().words.pieces()].flatMap((piece) => [...piece]))).toEqual(
        Int32Array.from({ length: 50_000 }, (_, i) => i),
      );
    } finally {
      spill.remove();
    }
  });

  it('keeps states of many chunks whole, in any order asked, and a cleared level’s chunks hold the next', () => {
    // States of 1,000 words: a megabyte's chunk holds 262 of them, and its last 144 words stay empty.
    const wide = (): Model<Node, [number, number]> => ({
      ...graphModel(edges),
      pack: (s, words) => (words.fill(s.at, 0, 1000), 1000),
      unpack: (words) => {
        if (words.length !== 1000 || words.some((w) => w !== words[0])) throw new Error('a torn state');
        return { at: words[0]! };
      },
    });
    const pool = new ChunkPool();
    const level = new Frontier(wide(), undefined, pool);
    for (let at = 0; at < 1000; at++) level.push({ at });
    const order = [999, 0, 262, 261, 263, 524, 500, 998, 1, 786, 787];
    expect(order.map((i) => level.take(i).at)).toEqual(order);
    expect(Array.from({ length: 1000 }, (_, i) => level.take(i).at)).toEqual(
      Array.from({ length: 1000 }, (_, i) => i),
    );
    expect(level.bytes).toBeGreaterThanOrEqual(4 * 2 ** 20);
    level.clear();
    expect(pool.idleChunks).toBe(4);
    const next = new Frontier(wide(), undefined, pool);
    next.push({ at: 5 });
    // The next level took a chunk the cleared one gave back, not fresh memory.
    expect(pool.idleChunks).toBe(3);
    expect(next.take(0)).toEqual({ at: 5 });
  });

  it('holds the ends of a level past 2^31 words, and refuses to checkpoint one', () => {
    const ends = new Ends();
    for (let i = 1; i <= 3000; i++) ends.push(i * 1_000_000);
    expect(ends.get(2999)).toBe(3_000_000_000);
    expect(() => ends.toInt32()).toThrow(/past what a checkpoint holds/);
    ends.clear();
    ends.push(7);
    expect([...ends.toInt32()]).toEqual([7]);
  });

  it('keeps the objects themselves for a model that does not pack', () => {
    const frontier = new Frontier(graphModel(edges));
    const s = { at: 3 };
    frontier.push(s);
    expect(frontier.take(0)).toBe(s);
    expect(frontier.bytes).toBe(0);
  });

  it('gives the same search, and counts the queue, when the states are packed', () => {
    const plain = bfs(graphModel(edges), { deadlockAllowed: true });
    const packed = bfs(packing(), { deadlockAllowed: true });
    expect({ ...packed, seconds: 0, memory: undefined }).toEqual({ ...plain, seconds: 0, memory: undefined });
    expect(packed.memory!.queueBytes).toBeGreaterThan(0);
    expect(plain.memory!.queueBytes).toBe(0);
  });
});
