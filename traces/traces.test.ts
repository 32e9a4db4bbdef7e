// Every saved counterexample still replays step by step and still violates its property.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { main } from '../checker/cli.ts';

const dir = new URL('.', import.meta.url).pathname;
const traceFiles = readdirSync(dir)
  .filter((f) => f.endsWith('.itf.json'))
  .sort();

describe('saved traces', () => {
  it('exist', () => {
    expect(traceFiles.length).toBeGreaterThan(0);
  });

  it.each(traceFiles)('%s replays and still shows its violation', async (file) => {
    let out = '';
    const code = await main(['replay', `${dir}${file}`, '--json'], { out: (t) => (out += t), err: () => {}, errIsTTY: false });
    expect(code).toBe(0);
    expect(JSON.parse(out).status).toBe('reproduced');
  });
});
