// The explorer: its API replays paths of action labels, marks violated properties, saves traces
// that `replay` accepts, searches from the current state, and answers bad requests with an error
// while it keeps running; in headless Chromium a person's clicks take the B1 trace's steps.
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../cli.ts';
import { type RunningExplorer, startExplorer } from './server.ts';
import { explorerSource } from './source.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const spec = join(root, 'specs/kafka/hanging-transaction.json');
const traceFile = join(root, 'traces/kafka-3.5-hanging-transaction.itf.json');
const b1: string[] = JSON.parse(readFileSync(traceFile, 'utf8'))
  .states.slice(1)
  .map((s: { '#meta': { action: string } }) => s['#meta'].action);
const io = { out: () => {}, err: () => {}, errIsTTY: false };
const CHROMIUM = '/usr/bin/chromium';
const browserAvailable = existsSync(CHROMIUM) || process.env.CI !== undefined;

let explorer: RunningExplorer;
let outDir: string;

async function post(name: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${explorer.url}api/${name}`, {
    method: 'POST',
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const violated = (json: Record<string, unknown>) =>
  (json.properties as { name: string; holds: boolean }[]).filter((p) => !p.holds).map((p) => p.name);

beforeAll(async () => {
  outDir = mkdtempSync(join(tmpdir(), 'txcheck-explore-'));
  explorer = await startExplorer(explorerSource(spec, outDir));
});
afterAll(async () => {
  await explorer?.close();
});

describe('the explorer API', () => {
  it('shows the initial state with its enabled actions in protocol terms and every property holding', async () => {
    const { status, json } = await post('state', { path: [] });
    expect(status).toBe(200);
    expect(json.actions).toContainEqual({
      label: 'P0.0: initTransactions',
      action: expect.stringContaining('initTransactions'),
    });
    expect(violated(json)).toEqual([]);
  });

  it('replays the B1 trace step by step and marks NoHangingTransaction at its end, not before', async () => {
    expect(violated((await post('state', { path: b1.slice(0, -1) })).json)).toEqual([]);
    const { json } = await post('state', { path: b1 });
    expect(violated(json)).toEqual(['NoHangingTransaction']);
    expect((json.path as unknown[]).length).toBe(b1.length);
  });

  it('saves the path as a trace that replay reproduces, and refuses to save a path with nothing violated', async () => {
    const { status, json } = await post('save', { path: b1 });
    expect(status).toBe(200);
    expect(json.property).toBe('NoHangingTransaction');
    expect(await main(['replay', json.saved as string], io)).toBe(0);
    const refused = await post('save', { path: [] });
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatch(/no property is violated/);
  });

  it('searches breadth-first from the current state for the nearest violation', async () => {
    const { json } = await post('search', { path: b1.slice(0, 3) });
    expect(json).toMatchObject({ found: true, property: 'NoHangingTransaction' });
    const path = json.path as string[];
    expect(path.slice(0, 3)).toEqual(b1.slice(0, 3));
    // Breadth-first: no longer than the shortest counterexample the checker writes.
    expect(path.length).toBeLessThanOrEqual(b1.length);
    expect(violated((await post('state', { path })).json)).toEqual(['NoHangingTransaction']);
  });

  it('answers bad requests with one error line and keeps running', async () => {
    const unknown = await post('state', { path: ['P0.0: initTransactions', 'no such action'] });
    expect(unknown).toEqual({
      status: 400,
      json: { error: 'step 2: no action labelled "no such action" is enabled here' },
    });
    expect((await post('state', '{not json')).status).toBe(400);
    expect((await post('state', { path: 'P0.0' })).json.error).toBe('path: expected a list of action labels');
    expect((await fetch(`${explorer.url}nowhere`)).status).toBe(404);
    expect((await post('state', { path: [] })).status).toBe(200);
  });

  it("opened on a trace, offers the trace's steps as the way forward", async () => {
    const onTrace = await startExplorer(explorerSource(traceFile, outDir));
    try {
      const info = (await (await fetch(`${onTrace.url}api/info`, { method: 'POST' })).json()) as {
        suggested: string[];
      };
      expect(info.suggested).toEqual(b1);
    } finally {
      await onTrace.close();
    }
  });
});

describe('txcheck explore on the command line', () => {
  const run = async (...argv: string[]) => {
    let err = '';
    const code = await main(argv, { out: () => {}, err: (t) => (err += t), errIsTTY: false });
    return { code, err };
  };

  it('refuses bad input in one line, exit 2: no file, a port out of range, a port in use', async () => {
    expect(await run('explore')).toEqual({
      code: 2,
      err: 'command line: explore: expected a spec or trace file\n',
    });
    expect(await run('explore', spec, '--port', '70000')).toEqual({
      code: 2,
      err: 'command line: --port: expected an integer from 1 to 65535, got 70000\n',
    });
    const busy = new URL(explorer.url).port;
    expect(await run('explore', spec, '--port', busy)).toEqual({
      code: 2,
      err: 'command line: --port: expected a free port on 127.0.0.1, got EADDRINUSE\n',
    });
  });
});

describe.skipIf(!browserAvailable)('the explorer in Chromium', { timeout: 90_000 }, () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('takes the B1 steps by clicking, marks NoHangingTransaction, saves a trace that replays, and shows a bad address as an error', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(explorer.url);
    for (const label of b1) {
      await page.locator(`button.action[data-label="${label.replace(/"/g, '\\"')}"]`).click();
      await page.locator('ol#path li.current').filter({ hasText: /./ }).waitFor();
    }
    await page.locator('li.violated[data-property="NoHangingTransaction"]').waitFor();
    expect(decodeURIComponent(new URL(page.url()).hash)).toBe(`#path=${JSON.stringify(b1)}`);
    await page.locator('#save').click();
    await page.locator('#notice', { hasText: 'Saved' }).waitFor();
    const saved = /Saved (\S+)/.exec(await page.locator('#notice').innerText())![1]!;
    expect(await main(['replay', saved], io)).toBe(0);
    mkdirSync(join(root, 'out'), { recursive: true });
    await page.screenshot({ path: join(root, 'out', 'explorer.png') });
    // Back goes one step, and the hint shows the way forward again.
    await page.locator('#back').click();
    await page.locator('li.violated').waitFor({ state: 'detached' });
    await page.goto(`${explorer.url}#path=${encodeURIComponent(JSON.stringify(['no such action']))}`);
    await page.reload();
    await page.locator('#error', { hasText: 'no action labelled "no such action"' }).waitFor();
    await page.goto(`${explorer.url}#path=%7Bbroken`);
    await page.reload();
    await page.locator('#error', { hasText: 'not a list of action labels' }).waitFor();
    expect(errors).toEqual([]);
  });
});
