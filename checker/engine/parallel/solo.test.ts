// A search off the calling thread never outlives its time limit or a request to stop by more
// than its grace, even when a step of the model never returns: it ends without a result.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { modelRecipe } from '../../../specs/build.ts';
import { parseSpec } from '../../../specs/load.ts';
import { searchOffThread } from './solo.ts';

const dir = mkdtempSync(join(tmpdir(), 'txcheck-solo-'));
const variant = join(dir, 'loops.mjs');
// A user's variant whose InitProducerId handler never returns.
writeFileSync(variant, 'export const overrides = { InitProducerId: () => { for (;;) {} } };\n');
const raw = { model: 'kafka', variant: { base: 'kafka-3.5', overrides: variant }, deadlock: true };
const recipe = modelRecipe(parseSpec(join(dir, 'loops.json'), raw, ''));

describe('a step that never returns', () => {
  it('ends the search, without a result, its grace after --max-seconds', async () => {
    const started = performance.now();
    await expect(
      searchOffThread(recipe, 'bfs', 1, { deadlockAllowed: true, maxSeconds: 1, graceMs: 500 }),
    ).rejects.toThrow(
      /did not return within 0\.5 s of the time limit, so the search was ended without a result/,
    );
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('ends the search its grace after a request to stop', async () => {
    const stop = new Int32Array(new SharedArrayBuffer(4));
    setTimeout(() => Atomics.store(stop, 0, 1), 500);
    await expect(
      searchOffThread(recipe, 'bfs', 1, { deadlockAllowed: true, stop, graceMs: 500 }),
    ).rejects.toThrow(/of the request to stop/);
  });

  it('leaves a search that answers in time alone', async () => {
    const ok = parseSpec(join(dir, 'ok.json'), { model: 'two-phase', resourceManagers: 2 }, '');
    const result = await searchOffThread(modelRecipe(ok), 'bfs', 1, { deadlockAllowed: false, graceMs: 1 });
    expect(result.status).toBe('ok');
  });
});
