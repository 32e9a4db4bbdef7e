// Shrinking long random-search counterexamples of the lossy-network spec. With one transaction
// a walk breaks NoHangingTransaction within about 25 steps, so the walks here may run two
// transactions of two records with two request timeouts: their counterexamples take up to 48 steps.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../checker/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'txcheck-shrink-'));
const lossy = 'specs/kafka/lossy-network.json';
const longer = join(dir, 'lossy-longer.json');
writeFileSync(
  longer,
  JSON.stringify({
    ...JSON.parse(readFileSync(lossy, 'utf8')),
    transactionsPerInstance: 2,
    recordsPerTransaction: 2,
    faults: { requestLoss: 1, responseLoss: 1, requestTimeouts: 2, batchExpiries: 1 },
  }),
);

/** Runs the CLI on one thread, so the walks and counts do not depend on the machine's cores. */
async function txcheck(...argv: string[]) {
  let out = '';
  const code = await main(argv[0] === 'check' ? [...argv, '--workers', '1'] : argv, {
    out: (t) => (out += t),
    err: () => {},
    errIsTTY: false,
  });
  return { code, json: JSON.parse(out) };
}

const random = (seed: number, ...more: string[]) => [
  'check',
  longer,
  '--strategy',
  'random',
  '--seed',
  String(seed),
  '--walks',
  '5000',
  '--max-depth',
  '100',
  '--json',
  ...more,
];

describe('shrink on random counterexamples of at least 30 steps', { timeout: 60_000 }, () => {
  let shortest: number;
  beforeAll(async () => {
    // BFS of the spec with one transaction; the longer spec allows every run of it, and its own
    // BFS (121,634 states, too slow for this suite) also finds 16 steps.
    shortest = (await txcheck('check', lossy, '--json', '--out', join(dir, 'bfs.itf.json'))).json.violation
      .length;
  });

  // Seeds whose walks break the property in many more steps than breadth-first search needs.
  it.each([24, 27, 16])(
    'seed %i: the walk shrinks, never grows, replays, and breaks the same property',
    async (seed) => {
      const original = join(dir, `seed${seed}.itf.json`);
      const { json: run } = await txcheck(...random(seed, '--out', original));
      expect(run.violation.property).toBe('NoHangingTransaction');
      const found = run.violation.length;
      expect(found).toBeGreaterThanOrEqual(30);
      const out = join(dir, `seed${seed}.shrunk.itf.json`);
      const { code, json } = await txcheck('shrink', original, '-o', out, '--json');
      expect(code).toBe(0);
      expect(json).toMatchObject({
        status: 'shrunk',
        property: 'NoHangingTransaction',
        before: found,
        traceFile: out,
      });
      expect(json.after).toBeLessThan(found);
      // No counterexample is shorter than the breadth-first one.
      expect(json.after).toBeGreaterThanOrEqual(shortest);
      const replayed = await txcheck('replay', out, '--json');
      expect(replayed.code).toBe(0);
      expect(replayed.json).toMatchObject({
        status: 'reproduced',
        property: 'NoHangingTransaction',
        steps: json.after,
      });
      expect(JSON.parse(readFileSync(out, 'utf8'))['#meta']).toMatchObject({
        shrunkFrom: found,
        seed,
        strategy: 'random',
      });
    },
  );

  it('seed 24 reaches the breadth-first shortest length', async () => {
    const { json } = await txcheck(
      'shrink',
      join(dir, 'seed24.itf.json'),
      '-o',
      join(dir, 'again.itf.json'),
      '--json',
    );
    expect(json.after).toBe(shortest);
  });

  it('check --shrink shrinks the first counterexample before writing it', async () => {
    const out = join(dir, 'checked.itf.json');
    const { code, json } = await txcheck(...random(24, '--shrink', '--out', out));
    expect(code).toBe(1);
    const unshrunk = JSON.parse(readFileSync(join(dir, 'seed24.itf.json'), 'utf8'));
    expect(json.violation).toMatchObject({
      property: 'NoHangingTransaction',
      length: shortest,
      shrunkFrom: unshrunk.states.length - 1,
      traceFile: out,
    });
    expect((await txcheck('replay', out, '--json')).code).toBe(0);
  });
});
