// The producers' client of another generation than the brokers ("client" in a spec): the verdicts
// a client version changes (the rules it meets, step by step: client-rules.test.ts).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main } from '../../checker/cli.ts';
const dir = mkdtempSync(join(tmpdir(), 'txcheck-clients-'));
const shipped = (name: string) =>
  JSON.parse(readFileSync(fileURLToPath(new URL(`../../specs/kafka/${name}.json`, import.meta.url)), 'utf8'));

/** Checks `spec` (its expect left out) on one thread; the trace goes to <dir>/<name>.itf.json. */
async function check(name: string, spec: Record<string, unknown>) {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ ...spec, expect: undefined }));
  let out = '';
  const code = await main(
    ['check', file, '--json', '--workers', '1', '--out', join(dir, `${name}.itf.json`)],
    { out: (t) => (out += t), err: () => {}, errIsTTY: false },
  );
  return { file, code, result: JSON.parse(out) };
}

/** "holds" or the property violated first. */
async function verdict(name: string, spec: Record<string, unknown>): Promise<string> {
  const { result } = await check(name, spec);
  return result.status === 'ok' ? 'holds' : result.violation.property;
}

describe('the client field of a spec', () => {
  it('an older client brings B2 back on kafka-4.0 brokers (old-client.json); a 4.0 client does not', async () => {
    const spec = shipped('old-client');
    expect((await check('old', spec)).result.violation.property).toBe('ReadCommittedIsolation');
    expect((await check('new', { ...spec, client: 'kafka-4.0' })).result.status).toBe('ok');
  });

  it('a client without KIP-360 goes fatal on an expired retried batch (old-client-expired-batch.json); a KIP-360 client does not', async () => {
    const spec = shipped('old-client-expired-batch');
    expect((await check('no-kip360', spec)).result.violation.property).toBe('NoSpuriousFatal');
    expect((await check('kip360', { ...spec, client: 'kafka-3.5' })).result.status).toBe('ok');
  });

  it('refuses an unknown client in one line', async () => {
    const { file, code, result } = await check('bad', {
      model: 'kafka',
      client: 'kafka-9.9',
      deadlock: true,
    });
    expect(code).toBe(2);
    expect(result.message).toMatch(
      new RegExp(
        `^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: client: expected one of "kafka-0.11", .*got "kafka-9.9"$`,
      ),
    );
  });
});

describe("an alternative client rule set: franz-go's (specs/kafka/clients/franz-go.ts)", () => {
  const javaClient = (spec: Record<string, unknown>) => ({
    ...spec,
    variant: (spec.variant as { base: string }).base,
  });

  it('never expires a batch in flight, so the delayed Produce of B2 never happens; the Java client breaks ReadCommittedIsolation', async () => {
    const spec = shipped('franz-go-delayed-produce');
    expect(await verdict('fg-delayed', spec)).toBe('holds');
    expect(await verdict('java-delayed', javaClient(spec))).toBe('ReadCommittedIsolation');
  });

  // The refusal comes from a COMMIT marker clearing the next transaction's verification guard,
  // which 4.0.0 no longer does (KAFKA-18654, keepGuardAcrossV2Marker).
  it('commits after a refused send and loses the record only where a marker clears the next guard; the Java client aborts instead', async () => {
    const spec = shipped('franz-go-commit-after-failed-send');
    expect(await verdict('fg-commit', spec)).toBe('holds');
    const clearing = {
      ...spec,
      variant: { ...(spec.variant as object), disable: ['keepGuardAcrossV2Marker'] },
    };
    expect(await verdict('fg-commit-cleared', clearing)).toBe('NoLostWrite');
    expect(
      await verdict('java-commit-cleared', {
        ...clearing,
        variant: { ...clearing.variant, overrides: undefined },
      }),
    ).toBe('holds');
  });
});

describe('transactions of one transactional.id at two transaction versions (per-instance clients)', () => {
  it('mixed-transaction-versions.json holds', async () => {
    expect(await verdict('mixed', shipped('mixed-transaction-versions'))).toBe('holds');
  });
});

describe('the finalized transaction.version changing at run time (transactionVersionChanges)', () => {
  it('transaction-version-downgrade.json: B2 returns after a downgrade, and the spec holds without the change', async () => {
    const spec = shipped('transaction-version-downgrade');
    expect(await verdict('downgrade', spec)).toBe('ReadCommittedIsolation');
    const trace = JSON.parse(readFileSync(join(dir, 'downgrade.itf.json'), 'utf8'));
    expect(JSON.stringify(trace)).toContain('TC: finalizeTransactionVersion(1)');
    expect(await verdict('steady', { ...spec, faults: { batchExpiries: 1 } })).toBe('holds');
  });

  // KAFKA-18227 (4.0.0 client): the version is read when a transaction ends, and an upgrade bumps the epoch.
  it('transaction-version-upgrade.json holds; a client that takes the upgrade at beginTransaction, at the same epoch, breaks ReadCommittedIsolation', async () => {
    const spec = shipped('transaction-version-upgrade');
    expect(await verdict('upgrade', spec)).toBe('holds');
    const atBegin = { ...spec, variant: { base: spec.variant, disable: ['tv2UpgradeBump'] } };
    expect(await verdict('upgrade-at-begin', atBegin)).toBe('ReadCommittedIsolation');
  });

  it('transaction-version-downgrade-abort.json: an abort after a commit that read a downgrade ends a version-2 transaction at version 1, fatal; without the expiry it holds', async () => {
    const spec = shipped('transaction-version-downgrade-abort');
    expect(await verdict('downgrade-abort', spec)).toBe('NoSpuriousFatal');
    const trace = JSON.stringify(JSON.parse(readFileSync(join(dir, 'downgrade-abort.itf.json'), 'utf8')));
    expect(trace).toContain('TC: finalizeTransactionVersion(1)');
    expect(trace).toContain('P0.0: batchExpired(p0)');
    expect(await verdict('downgrade-no-expiry', { ...spec, faults: { transactionVersionChanges: 1 } })).toBe(
      'holds',
    );
  });
});
