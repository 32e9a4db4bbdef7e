// Every saved counterexample still replays step by step and still violates its property, and
// shows in every format with the facts a reader needs.
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main } from '../checker/cli.ts';
import { checkItf } from '../checker/engine/itf.ts';

const dir = fileURLToPath(new URL('.', import.meta.url));
const traceFiles = readdirSync(dir)
  .filter((f) => f.endsWith('.itf.json'))
  .sort();

async function txcheck(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => (out += t), err: (t) => (err += t), errIsTTY: false });
  return { code, out, err };
}

describe('saved traces', () => {
  it('exist', () => {
    expect(traceFiles.length).toBeGreaterThan(0);
  });

  it.each(traceFiles)('%s follows the ITF rules (ADR-015)', (file) => {
    const trace = JSON.parse(readFileSync(`${dir}${file}`, 'utf8'));
    expect(() => checkItf(file, trace)).not.toThrow();
    expect(trace['#meta']).toMatchObject({ format: 'ITF', tool: expect.stringMatching(/^txcheck /) });
    expect(trace.states.every((s: { '#meta': { index: number } }, i: number) => s['#meta'].index === i)).toBe(true);
  });

  it.each(traceFiles)('%s replays and still shows its violation', async (file) => {
    const { code, out } = await txcheck('replay', `${dir}${file}`, '--json');
    expect(code).toBe(0);
    expect(JSON.parse(out).status).toBe('reproduced');
  });

  it.each(traceFiles)('%s shows as text, mermaid and json', async (file) => {
    const text = await txcheck('show', `${dir}${file}`);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^Why: .+\.$/m);
    const mermaid = await txcheck('show', `${dir}${file}`, '--format', 'mermaid');
    expect(mermaid.code).toBe(0);
    expect(mermaid.out.startsWith('sequenceDiagram\n')).toBe(true);
    expect(mermaid.out).toContain(' violated: ');
    const json = JSON.parse((await txcheck('show', `${dir}${file}`, '--format', 'json')).out);
    const steps = JSON.parse((await txcheck('replay', `${dir}${file}`, '--json')).out).steps;
    expect(json.steps).toHaveLength(steps + 1);
    expect(json.steps.every((s: { actor: string; action: string }) => s.action !== '')).toBe(true);
  });
});

/** Mentions of PROTOCOL.md that do not give its folder, which a reader outside model/kafka/ cannot find. */
const bareProtocolMentions = (text: string): string[] =>
  [...text.matchAll(/(?<!model\/kafka\/)PROTOCOL\.md \S+/g)].map((m) => m[0]);

describe('saved traces cite the protocol notes by path', () => {
  it.each(traceFiles)('%s: show names model/kafka/PROTOCOL.md in full', async (file) => {
    const { out } = await txcheck('show', `${dir}${file}`);
    expect(bareProtocolMentions(out)).toEqual([]);
  });
});

describe('the B1 lasso, shown', () => {
  const lasso = `${dir}kafka-3.5-hanging-transaction-lasso.itf.json`;

  it('says how the run repeats and why the LSO never advances', async () => {
    const { code, out } = await txcheck('show', lasso);
    expect(code).toBe(0);
    expect(out).toMatch(/^Cycle: After step \d+ the run stutters/m);
    expect(out).toMatch(/^Why: p0 offset 1 holds a transactional batch .* the LSO of p0 stays at 1/m);
  });

  it('is not shrunk: exit 2 with one line', async () => {
    const { code, err } = await txcheck('shrink', lasso);
    expect(code).toBe(2);
    expect(err.trim().split('\n')).toHaveLength(1);
    expect(err).toContain(': loop: expected a counterexample without a cycle');
  });
});

describe('the B1 hanging transaction, shown', () => {
  const b1 = `${dir}kafka-3.5-hanging-transaction.itf.json`;

  it('names the late Produce, its offset after the ABORT marker, and the LSO stuck there', async () => {
    const { out } = await txcheck('show', b1);
    expect(out).toContain('P0.0 → L0  Produce(p0, pid 0, epoch 0, seq 0) of P0.0/T0, sent at step 9');
    expect(out).toContain('batch for p0 expired');
    expect(out).toMatch(/0 +ABORT marker +0 +0/);
    expect(out).toMatch(/1 +data +0 +0 +0 +open +P0\.0\/T0 r0 +◀ LSO/);
    expect(out).toMatch(/^Why: p0 offset 1 holds a transactional batch .* after the ABORT marker at offset 0 .* the LSO of p0 stays at 1/m);
  });

  it('draws the delayed Produce arriving after the marker, and the violation over TC and L0', async () => {
    const { out } = await txcheck('show', b1, '--format', 'mermaid');
    const marker = out.indexOf('TC->>L0: 14: WriteTxnMarkers(ABORT');
    const produce = out.indexOf('P0_0->>L0: 15: Produce(p0, pid 0, epoch 0, seq 0)');
    expect(marker).toBeGreaterThan(0);
    expect(produce).toBeGreaterThan(marker);
    expect(out).toMatch(/15: Produce\(p0, pid 0, epoch 0, seq 0\) of P0\.0\/T0 \(sent at(<br\/>| )9\)/);
    expect(out).toMatch(/Note over P0_0,L0: ✗ NoHangingTransaction violated/);
  });
});
