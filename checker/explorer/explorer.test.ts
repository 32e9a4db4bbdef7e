// The explorer: its API replays paths of action labels, marks violated properties, saves traces
// that `replay` accepts, searches from the current state, and answers bad requests with an error
// while it keeps running; in headless Chromium a person's clicks take the B1 trace's steps.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../cli.ts';
import { type RunningExplorer, startExplorer } from './server.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const spec = join(root, 'specs/kafka/hanging-transaction.json');
const traceFile = join(root, 'traces/kafka-3.5-hanging-transaction.itf.json');
const b1: string[] = JSON.parse(readFileSync(traceFile, 'utf8'))
  .states.slice(1)
  .map((s: { '#meta': { action: string } }) => s['#meta'].action);
const io = { out: () => {}, err: () => {}, errIsTTY: false };
const CHROMIUM = '/usr/bin/chromium';
const browserAvailable = existsSync(CHROMIUM) || process.env.CI !== undefined;
const scratch = mkdtempSync(join(tmpdir(), 'txcheck-explore-'));
/** A folder of this file's own, for saved traces and written specs. */
const outDirOf = () => scratch;

let explorer: RunningExplorer;
let outDir: string;

async function post(name: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${explorer.url}api/${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const violated = (json: Record<string, unknown>) =>
  (json.properties as { name: string; holds: boolean }[]).filter((p) => !p.holds).map((p) => p.name);

beforeAll(async () => {
  outDir = outDirOf();
  explorer = await startExplorer(spec, outDir);
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
    const onTrace = await startExplorer(traceFile, outDir);
    try {
      const info = (await (
        await fetch(`${onTrace.url}api/info`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
        })
      ).json()) as {
        suggested: string[];
      };
      expect(info.suggested).toEqual(b1);
    } finally {
      await onTrace.close();
    }
  });
});

/** A request as any client can send it, headers and all; resolves with the status and the error given. */
function raw(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; error?: string; allow?: string }> {
  const { port } = new URL(explorer.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        const allow = res.headers.allow;
        resolve({
          status: res.statusCode!,
          ...(text.startsWith('{') ? { error: (JSON.parse(text) as { error?: string }).error } : {}),
          ...(allow === undefined ? {} : { allow }),
        });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('the explorer trusts no other web page', () => {
  const port = () => new URL(explorer.url).port;
  const json = { 'content-type': 'application/json' };
  const state = JSON.stringify({ path: [] });

  it('answers its own page and API on 127.0.0.1 and localhost, from its own origin or none', async () => {
    for (const host of [`127.0.0.1:${port()}`, `localhost:${port()}`]) {
      expect((await raw('GET', '/', { host })).status).toBe(200);
      for (const origin of [undefined, `http://127.0.0.1:${port()}`, `http://localhost:${port()}`])
        expect(
          (
            await raw(
              'POST',
              '/api/state',
              { host, ...json, ...(origin === undefined ? {} : { origin }) },
              state,
            )
          ).status,
        ).toBe(200);
    }
  });

  it('refuses another Host (DNS rebinding) and another Origin with 403, and does nothing for them', async () => {
    const before = readdirSync(outDir).length;
    for (const host of [
      'attacker.example',
      `attacker.example:${port()}`,
      `127.0.0.1:${Number(port()) + 1}`,
      'localhost',
    ])
      expect(await raw('POST', '/api/save', { host, ...json }, JSON.stringify({ path: b1 }))).toMatchObject({
        status: 403,
        error: expect.stringMatching(/^forbidden: Host /),
      });
    expect((await raw('GET', '/', { host: `attacker.example:${port()}` })).status).toBe(403);
    for (const origin of [
      'http://attacker.example',
      'null',
      `https://127.0.0.1:${port()}`,
      `http://127.0.0.1:${Number(port()) + 1}`,
    ])
      expect(
        await raw(
          'POST',
          '/api/save',
          { host: `127.0.0.1:${port()}`, origin, ...json },
          JSON.stringify({ path: b1 }),
        ),
      ).toMatchObject({ status: 403, error: expect.stringMatching(/^forbidden: Origin /) });
    expect(readdirSync(outDir).length).toBe(before);
  });

  it('takes only JSON in a POST: another content type gets 415', async () => {
    const host = `127.0.0.1:${port()}`;
    for (const type of [undefined, 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data'])
      expect(
        (
          await raw(
            'POST',
            '/api/state',
            { host, ...(type === undefined ? {} : { 'content-type': type }) },
            state,
          )
        ).status,
      ).toBe(415);
    expect(
      (await raw('POST', '/api/state', { host, 'content-type': 'application/json; charset=utf-8' }, state))
        .status,
    ).toBe(200);
  });

  it('answers 405 to other methods, GET on the API and POST on the page', async () => {
    const host = `127.0.0.1:${port()}`;
    for (const method of ['PUT', 'DELETE', 'PATCH', 'OPTIONS'])
      expect(await raw(method, '/api/state', { host, ...json }, state)).toMatchObject({
        status: 405,
        allow: 'POST',
      });
    expect(await raw('GET', '/api/state', { host })).toMatchObject({ status: 405, allow: 'POST' });
    expect(await raw('POST', '/', { host, ...json }, state)).toMatchObject({ status: 405, allow: 'GET' });
    expect(await raw('DELETE', '/', { host })).toMatchObject({ status: 405, allow: 'GET' });
  });

  it('stops reading a body past its limit: 413 and the connection closed, before the body ends', async () => {
    const { port: at } = new URL(explorer.url);
    // Announced too large: refused before a byte of it is read.
    expect(
      (
        await raw('POST', '/api/state', {
          host: `127.0.0.1:${at}`,
          ...json,
          'content-length': String(600 << 20),
        })
      ).status,
    ).toBe(413);
    // Sent without a length, and never ended: the server answers and hangs up once past the limit.
    const socket = connect(Number(at), '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (answer += d));
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write(
      `POST /api/state HTTP/1.1\r\nHost: 127.0.0.1:${at}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    const chunk = 'x'.repeat(64 << 10);
    let sent = 0;
    while (!socket.destroyed && sent < 8 << 20) {
      if (!socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`))
        await new Promise((resolve) => setTimeout(resolve, 5));
      sent += chunk.length;
      if (answer !== '') break;
    }
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(sent).toBeLessThan(8 << 20);
    // And it runs on.
    expect((await post('state', { path: [] })).status).toBe(200);
  });
});

describe("a variant's handler that never returns", () => {
  // InitProducerId loops: the first step is the client's, the coordinator's answer never comes.
  const loops = join(outDirOf(), 'loops.mjs');
  const loopSpec = join(outDirOf(), 'loops.json');
  writeFileSync(loops, 'export const overrides = { InitProducerId: () => { for (;;) {} } };\n');
  writeFileSync(
    loopSpec,
    JSON.stringify({ model: 'kafka', variant: { base: 'kafka-3.5', overrides: loops }, deadlock: true }),
  );
  const ask = async (url: string, name: string, body: unknown) => {
    const res = await fetch(`${url}api/${name}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };

  it('costs one answer (503 at --max-seconds, one line), and the explorer goes on with a new model thread', async () => {
    const stuck = await startExplorer(loopSpec, outDirOf(), { maxSeconds: 1 });
    try {
      expect((await ask(stuck.url, 'state', { path: [] })).status).toBe(200);
      for (const name of ['state', 'search']) {
        const started = performance.now();
        const { status, json } = await ask(stuck.url, name, { path: ['P0.0: initTransactions'] });
        expect(performance.now() - started).toBeLessThan(10_000);
        expect(status).toBe(503);
        expect(json.error).toMatch(
          /^the model did not answer within 1 s \(explore --max-seconds\), so its thread was ended and a new one started/,
        );
        const after = await ask(stuck.url, 'state', { path: [] });
        expect(after.status).toBe(200);
        expect(after.json.actions).toContainEqual(
          expect.objectContaining({ label: 'P0.0: initTransactions' }),
        );
      }
    } finally {
      await stuck.close();
    }
  }, 40_000);

  it('does not hold the process: SIGINT stops txcheck explore at once, its model thread stuck', async () => {
    const port = 20000 + ((process.pid + 7) % 20000);
    const child = spawn(
      join(root, 'node_modules/.bin/tsx'),
      [join(root, 'checker/cli.ts'), 'explore', loopSpec, '--port', String(port), '--max-seconds', '600'],
      // A group of its own, so that a failure can end tsx and the process it started together.
      { cwd: outDirOf(), stdio: ['ignore', 'pipe', 'pipe'], detached: true },
    );
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        const m = /at (http:\S+)/.exec(d.toString());
        if (m !== null) resolve(m[1]!);
      });
      child.on('exit', () => reject(new Error('explore exited before it listened')));
    });
    void ask(url, 'state', { path: ['P0.0: initTransactions'] }).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const signalled = performance.now();
    child.kill('SIGINT');
    const code = await Promise.race([
      exited,
      new Promise((resolve) => setTimeout(() => resolve('running'), 2000)),
    ]);
    if (code === 'running') process.kill(-child.pid!, 'SIGKILL');
    expect(code).toBe(0);
    expect(performance.now() - signalled).toBeLessThan(2000);
  }, 40_000);
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
    expect(await run('explore', join(outDir, 'missing.json'))).toEqual({
      code: 2,
      err: expect.stringMatching(/^\S*missing\.json: .*\n$/),
    });
    expect(await run('explore', spec, '--max-seconds', '0')).toEqual({
      code: 2,
      err: 'command line: --max-seconds: expected an integer from 1 to 86400, got 0\n',
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
