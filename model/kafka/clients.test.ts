// The producers' client of another generation than the brokers ("client" in a spec): the verdicts
// a client version changes (the rules it meets, step by step: client-rules.test.ts).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main } from '../../checker/cli.ts';
import { clientOverrides } from '../../specs/kafka/clients/franz-go.ts';
import type { KafkaConfig } from './config.ts';
import {
  EPOCH,
  PID,
  TC,
  act,
  clientConfig,
  leader,
  producer,
  ready,
  respond,
} from './conformance/client-support.ts';
import { take } from './conformance/harness.ts';
import { defaultClientHandlers } from './handlers.ts';
import { type State, Api, Err, Tm, Told } from './state.ts';
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
  it('takes an upgrade at BeginTransaction at the same epoch: its first version-2 Produce joins the version-1 transaction; the Java 4.x client bumps first', async () => {
    const spec = shipped('franz-go-transaction-version-upgrade');
    expect(await verdict('fg-upgrade', spec)).toBe('ReadCommittedIsolation');
    expect(await verdict('java-upgrade', javaClient(spec))).toBe('holds');
  });

  it('gives up an EndTxn and starts the next transaction at the same epoch; the late EndTxn commits it; the Java client waits', async () => {
    const spec = shipped('franz-go-end-txn-unconfirmed');
    expect(await verdict('fg-unconfirmed', spec)).toBe('ReadCommittedIsolation');
    const trace = JSON.stringify(JSON.parse(readFileSync(join(dir, 'fg-unconfirmed.itf.json'), 'utf8')));
    expect(trace).toContain('P0.0: requestTimeout(EndTxn)');
    expect(await verdict('java-unconfirmed', javaClient(spec))).toBe('holds');
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

// franz-go's reactions one step at a time (pkg/kgo at v1.21.5), beside the 4.x Java client's.
describe("franz-go's client rules, step by step, on kafka-4.0 brokers", () => {
  const franzGo = (cfg: KafkaConfig): KafkaConfig => ({
    ...cfg,
    clientRules: cfg.clientRules.map((r) => ({ ...r, tv2UpgradeBump: false })),
    clientHandlers: { ...defaultClientHandlers, ...clientOverrides },
  });
  const at = (level: number): KafkaConfig =>
    clientConfig('kafka-4.0', {
      transactionVersion: level,
      faults: { ...clientConfig('kafka-4.0').faults, transactionVersionChanges: 1 },
    });
  /** A transaction with one record acknowledged, its commit's EndTxn in flight. */
  const committing = (cfg: KafkaConfig): State => {
    let s = act(cfg, act(cfg, ready(cfg), 'beginTransaction'), 'send(p0)');
    if (!producer(s).transactionV2)
      s = respond(cfg, act(cfg, s, 'sendTxnRequest'), TC, Api.AddPartitionsToTxn);
    s = respond(cfg, act(cfg, s, 'sendProduce(p0)'), leader(0), Api.Produce);
    return act(cfg, act(cfg, s, 'commitTransaction'), 'sendTxnRequest');
  };
  const told = (s: State): Told => s.history[0]!.told;

  it('INVALID_PRODUCER_ID_MAPPING on EndTxn at version 1: the error is returned and the producer id reloaded with a bump; the Java client is fatal', () => {
    const cfg = franzGo(at(1));
    const s = respond(cfg, committing(cfg), TC, Api.EndTxn, { error: Err.INVALID_PRODUCER_ID_MAPPING });
    expect(producer(s)).toMatchObject({ tm: Tm.INITIALIZING, bumpRequired: true, epoch: EPOCH });
    expect(told(s)).toBe(Told.Failed);
    expect(
      respond(at(1), committing(at(1)), TC, Api.EndTxn, { error: Err.INVALID_PRODUCER_ID_MAPPING })
        .producers[0]!.tm,
    ).toBe(Tm.FATAL_ERROR);
  });

  it('INVALID_PRODUCER_ID_MAPPING on EndTxn at version 2 is unrecoverable', () => {
    const cfg = franzGo(at(2));
    const s = respond(cfg, committing(cfg), TC, Api.EndTxn, { error: Err.INVALID_PRODUCER_ID_MAPPING });
    expect(producer(s).tm).toBe(Tm.FATAL_ERROR);
  });

  it('an EndTxn of version 1 that sees the cluster at version 2 reloads the producer id before the next transaction', () => {
    const cfg = franzGo(at(1));
    let s = take(cfg, committing(cfg), 'TC: finalizeTransactionVersion(2)');
    s = respond(cfg, s, TC, Api.EndTxn);
    expect(producer(s)).toMatchObject({ tm: Tm.INITIALIZING, bumpRequired: true });
    s = respond(cfg, act(cfg, s, 'sendTxnRequest'), TC, Api.InitProducerId, { pid: PID, epoch: EPOCH + 1 });
    expect(producer(act(cfg, s, 'beginTransaction'))).toMatchObject({
      transactionV2: true,
      epoch: EPOCH + 1,
    });
  });

  it('an EndTxn that times out is given up: the application is told it failed, the next transaction starts at the same epoch', () => {
    const cfg = franzGo(at(2));
    const s = take(cfg, committing(cfg), 'P0.0: requestTimeout(EndTxn)');
    expect(producer(s)).toMatchObject({ tm: Tm.READY, request: null, epoch: EPOCH });
    expect(told(s)).toBe(Told.Failed);
    // The copy already sent is still on its way.
    expect(s.network.some((c) => c.to === TC && c.messages.some((m) => m.api === Api.EndTxn))).toBe(true);
    const java = take(at(2), committing(at(2)), 'P0.0: requestTimeout(EndTxn)');
    expect(producer(java)).toMatchObject({ tm: Tm.COMMITTING_TRANSACTION, request: { api: Api.EndTxn } });
  });

  it('OUT_OF_ORDER_SEQUENCE_NUMBER on a Produce fails the producer id for good; the Java client aborts', () => {
    const cfg = franzGo(at(2));
    const inFlight = (c: KafkaConfig) =>
      act(c, act(c, act(c, ready(c), 'beginTransaction'), 'send(p0)'), 'sendProduce(p0)');
    const s = respond(cfg, inFlight(cfg), leader(0), Api.Produce, {
      error: Err.OUT_OF_ORDER_SEQUENCE_NUMBER,
    });
    expect(producer(s).tm).toBe(Tm.FATAL_ERROR);
    const java = respond(at(2), inFlight(at(2)), leader(0), Api.Produce, {
      error: Err.OUT_OF_ORDER_SEQUENCE_NUMBER,
    });
    expect(producer(java).tm).toBe(Tm.ABORTABLE_ERROR);
  });

  it('INVALID_PRODUCER_EPOCH on a Produce: abortable with a bump at version 1, unrecoverable at version 2', () => {
    const v1 = franzGo(at(1));
    let s = act(v1, act(v1, act(v1, ready(v1), 'beginTransaction'), 'send(p0)'), 'sendTxnRequest');
    s = act(v1, respond(v1, s, TC, Api.AddPartitionsToTxn), 'sendProduce(p0)');
    s = respond(v1, s, leader(0), Api.Produce, { error: Err.INVALID_PRODUCER_EPOCH });
    expect(producer(s)).toMatchObject({ tm: Tm.ABORTABLE_ERROR, bumpRequired: true });
    const v2 = franzGo(at(2));
    const t = act(v2, act(v2, act(v2, ready(v2), 'beginTransaction'), 'send(p0)'), 'sendProduce(p0)');
    expect(producer(respond(v2, t, leader(0), Api.Produce, { error: Err.INVALID_PRODUCER_EPOCH })).tm).toBe(
      Tm.FATAL_ERROR,
    );
  });
});
