// The HTML report in a real headless Chromium: it loads without a console error, clicking a
// step shows that step's partition logs, and a screenshot is kept under out/.
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../cli.ts';

const CHROMIUM = '/usr/bin/chromium';
const root = fileURLToPath(new URL('../../', import.meta.url));
const out = join(root, 'out');
const traces = readdirSync(join(root, 'traces'))
  .filter((f) => f.endsWith('.itf.json'))
  .sort();

// CI installs Chromium (.ci/run) and must run this; elsewhere a missing browser skips it.
const available = existsSync(CHROMIUM) || process.env.CI !== undefined;
if (!available)
  console.warn(`report browser test skipped: ${CHROMIUM} is missing (apt-get install chromium)`);

async function report(trace: string): Promise<string> {
  const file = join(out, trace.replace(/\.itf\.json$/, '.html'));
  const code = await main(['report', join(root, 'traces', trace), '-o', file], {
    out: () => {},
    err: () => {},
    errIsTTY: false,
  });
  expect(code).toBe(0);
  return file;
}

// Starting a browser and rendering take seconds on a busy machine: generous time limits.
describe.skipIf(!available)('the HTML report in Chromium', { timeout: 60_000 }, () => {
  let browser: Browser;
  beforeAll(async () => {
    mkdirSync(out, { recursive: true });
    browser = await chromium.launch({ executablePath: CHROMIUM });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  async function open(file: string, viewport = { width: 1500, height: 1000 }) {
    const page = await browser.newPage({ viewport });
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`file://${file}`);
    return { page, errors };
  }

  it.each(traces)('%s loads without a console error and opens at the violating step', async (trace) => {
    const { page, errors } = await open(await report(trace));
    await expect(page.locator('.detail:not([hidden]) .why').count()).resolves.toBe(1);
    await page.screenshot({ path: join(out, trace.replace(/\.itf\.json$/, '.png')) });
    expect(errors).toEqual([]);
    await page.close();
  });

  it("clicking a step of the B1 trace shows that step's partition logs", async () => {
    const { page, errors } = await open(await report('kafka-3.5-hanging-transaction.itf.json'));
    await page.click('.steps button[data-step="14"]');
    const shown = page.locator('.detail:not([hidden])');
    await expect(shown.getAttribute('data-step')).resolves.toBe('14');
    await expect(shown.locator('[data-table="log:p0"] h4').innerText()).resolves.toContain(
      'p0 log at L0: HW 1, LSO 1',
    );

    await page.click('g.step[data-step="15"]');
    await expect(shown.getAttribute('data-step')).resolves.toBe('15');
    const log = shown.locator('[data-table="log:p0"]');
    await expect(log.locator('h4').innerText()).resolves.toContain(
      'p0 log at L0: HW 2, LSO 1; pid 0 open from offset 1',
    );
    await expect(log.locator('tr.marked').first().innerText()).resolves.toMatch(
      /^1\s+data\s+0\s+0\s+0\s+open\s+P0\.0\/T0 r0\s+LSO$/,
    );
    await page.screenshot({ path: join(out, 'report-b1-step15.png') });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('draws each lifeline head once, in the strip above the diagram', async () => {
    const { page, errors } = await open(await report('kafka-3.5-hanging-transaction.itf.json'));
    // The B1 trace has three participants: P0.0, TC and L0.
    await expect(page.locator('svg .head').count()).resolves.toBe(3);
    await expect(page.locator('.heads svg .head').count()).resolves.toBe(3);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('follows #step-N when the address changes after loading', async () => {
    const { page, errors } = await open(await report('kafka-3.5-hanging-transaction.itf.json'));
    await page.evaluate("location.hash = '#step-3'");
    await expect(page.locator('.detail:not([hidden])').getAttribute('data-step')).resolves.toBe('3');
    await expect(page.locator('.steps button[aria-current="true"]').getAttribute('data-step')).resolves.toBe(
      '3',
    );
    expect(errors).toEqual([]);
    await page.close();
  });

  it('does not scroll sideways in a narrow window', async () => {
    const { page, errors } = await open(await report('kafka-3.5-hanging-transaction.itf.json'), {
      width: 420,
      height: 800,
    });
    const [scroll, client] = await page.evaluate<number[]>(
      '[document.documentElement.scrollWidth, document.documentElement.clientWidth]',
    );
    expect(scroll).toBeLessThanOrEqual(client!);
    expect(errors).toEqual([]);
    await page.close();
  });
});
