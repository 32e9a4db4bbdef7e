// User-defined variants: a worked example that changes the verdict, and broken override files
// that each give one clear line (exit 2) instead of a stack trace.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../checker/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'txcheck-variants-'));

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(args, { out: (t) => (out += t), err: (t) => (err += t), errIsTTY: false });
  return { code, out, err };
}

function specWith(overridesFile: string | null, name: string): string {
  const spec = {
    model: 'kafka',
    variant:
      overridesFile === null
        ? 'kafka-3.5'
        : { base: 'kafka-3.5', overrides: relative(process.cwd(), overridesFile) },
    partitions: 1,
    consumers: { readCommitted: 0 },
    faults: { transactionTimeouts: 1 },
    deadlock: true,
  };
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(spec));
  return file;
}

function variantFile(name: string, source: string): string {
  const file = join(dir, `${name}.ts`);
  writeFileSync(file, source);
  return file;
}

const handlerImport = `import type { RequestHandler } from '${join(process.cwd(), 'model/kafka/handlers.ts')}';\n`;

describe('user-defined variants', () => {
  it('an override that only delegates to the base handlers changes nothing', async () => {
    const same = variantFile(
      'same',
      `${handlerImport}const EndTxn: RequestHandler = (ctx, s, c, r) => ctx.base.EndTxn(ctx, s, c, r);\nexport const overrides = { EndTxn };\n`,
    );
    const withOverride = await run(['check', specWith(same, 'same'), '--json']);
    const without = await run(['check', specWith(null, 'plain'), '--json']);
    expect(withOverride.code).toBe(0);
    expect(JSON.parse(withOverride.out).distinctStates).toBe(JSON.parse(without.out).distinctStates);
  });

  it('the lenient-produce example breaks NoHangingTransaction', async () => {
    const { code, out } = await run([
      'check',
      'specs/kafka/examples/lenient-produce.json',
      '--json',
      '--out',
      join(dir, 'lenient.itf.json'),
    ]);
    expect(code).toBe(1);
    expect(JSON.parse(out).violation.property).toBe('NoHangingTransaction');
    const replay = await run(['replay', join(dir, 'lenient.itf.json')]);
    expect(replay.code).toBe(0);
  });

  it('client overrides that only delegate to the Java client change nothing', async () => {
    const same = variantFile(
      'same-client',
      `${handlerImport.replace('RequestHandler', 'ClientHandlers')}export const clientOverrides: Partial<ClientHandlers> = {\n  EndTxn: (ctx, s, i, r) => ctx.base.EndTxn(ctx, s, i, r),\n  batchExpired: (ctx, s, i, p) => ctx.base.batchExpired(ctx, s, i, p),\n};\n`,
    );
    const withOverride = await run(['check', specWith(same, 'same-client'), '--json']);
    const without = await run(['check', specWith(null, 'plain-client'), '--json']);
    expect(withOverride.code).toBe(0);
    expect(JSON.parse(withOverride.out).distinctStates).toBe(JSON.parse(without.out).distinctStates);
  });

  it('a client override changes what the checker finds: a client that treats PRODUCER_FENCED on EndTxn as retriable', async () => {
    // The transaction timeout fences the producer; retrying the fenced EndTxn forever is a client that never learns.
    const retrying = variantFile(
      'retrying-client',
      `${handlerImport.replace('RequestHandler', 'ClientHandlers')}import { transmit } from '${join(process.cwd(), 'model/kafka/producer.ts')}';\n` +
        `export const clientOverrides: Partial<ClientHandlers> = {\n  EndTxn: (ctx, s, i, r) => (r.error === 90 ? transmit(ctx.cfg, s, i, s.producers[i]!.request!) : ctx.base.EndTxn(ctx, s, i, r)),\n};\n`,
    );
    const base = await run(['check', specWith(null, 'plain-fenced'), '--json']);
    const changed = await run(['check', specWith(retrying, 'retrying-client'), '--json']);
    expect(JSON.parse(changed.out).distinctStates).not.toBe(JSON.parse(base.out).distinctStates);
  });

  const broken: [string, string | null, RegExp][] = [
    ['a missing file', null, /variant\.overrides: expected the path of a variant file/],
    [
      'a syntax error',
      'export const overrides = {\n  EndTxn: 1,,\n};\n',
      /variant\.overrides: expected a variant file that loads, got .*a-syntax-error\.ts: .*a-syntax-error\.ts:2:12: ERROR: /,
    ],
    [
      'no overrides export',
      'export const handlers = {};\n',
      /expected a file exporting "overrides", an object of handlers by API name .*, or "clientOverrides", an object of client reactions/,
    ],
    [
      'an unknown handler',
      'export const overrides = { Fetch: () => 1 };\n',
      /expected handlers named InitProducerId/,
    ],
    [
      'a handler that is not a function',
      'export const overrides = { EndTxn: 3 };\n',
      /EndTxn: expected a function/,
    ],
    [
      'a handler that throws',
      'export const overrides = { InitProducerId: () => { throw new Error("boom"); } };\n',
      /InitProducerId: expected a handler that returns the next state, got it threw: boom/,
    ],
    [
      'a handler that returns no state',
      'export const overrides = { InitProducerId: () => 1 };\n',
      /InitProducerId: expected a handler that returns the next state, shaped as the state it was given, got state is a value of type number/,
    ],
    [
      'a handler that drops a field',
      'export const overrides = { InitProducerId: (ctx, s, c, r) => ({ ...ctx.base.InitProducerId(ctx, s, c, r), network: undefined }) };\n',
      /\(.*handler-that-drops-a-field\.ts\): InitProducerId: expected .*, got state\.network is missing where the state has a value of type array/,
    ],
    [
      'an unknown client reaction',
      'export const clientOverrides = { onFetch: () => 1 };\n',
      /clientOverrides: expected handlers named InitProducerId, .*requestTimeout, batchExpired, got "onFetch"/,
    ],
    [
      'a client reaction that throws',
      'export const clientOverrides = { EndTxn: () => { throw new Error("no"); } };\n',
      /clientOverrides: EndTxn: expected a handler that returns the next state, got it threw: no/,
    ],
    [
      'a handler that sets a field of the wrong type',
      'export const overrides = { EndTxn: (ctx, s, c, r) => ({ ...s, coordinator: { ...s.coordinator, epoch: "1" } }) };\n',
      /EndTxn: expected .*, got state\.coordinator\.epoch is a value of type string where the state has a value of type number/,
    ],
  ];

  it.each(broken)('%s gives one clear line and exit 2', async (name, source, message) => {
    const file = source === null ? join(dir, 'absent.ts') : variantFile(name.replace(/ /g, '-'), source);
    const { code, err } = await run(['check', specWith(file, name.replace(/ /g, '-'))]);
    expect(code).toBe(2);
    const lines = err.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(message);
    expect(err).not.toMatch(/\n\s+at /);
  });
});
