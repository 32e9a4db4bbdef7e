// The producers' client of another generation than the brokers ("client" in a spec): which rules
// follow the client, which need both halves, and the verdicts a client version changes.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main } from '../../checker/cli.ts';
import { clientSupports, forRequest } from './config.ts';
import { TC, initial, kafkaConfig, labels, requestsFrom, take, txn } from './conformance/harness.ts';
import { type Request, type State, Api, Supports, TxnState } from './state.ts';
import { generations, withClient } from './variants.ts';

const rules = (generation: string) => generations[generation]!.rules;

const dir = mkdtempSync(join(tmpdir(), 'txcheck-clients-'));
const shipped = (name: string) => JSON.parse(readFileSync(fileURLToPath(new URL(`../../specs/kafka/${name}.json`, import.meta.url)), 'utf8'));

/** Checks `spec` (its expect left out) on one thread; the trace goes to <dir>/<name>.itf.json. */
async function check(name: string, spec: Record<string, unknown>) {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ ...spec, expect: undefined }));
  let out = '';
  const code = await main(['check', file, '--json', '--workers', '1', '--out', join(dir, `${name}.itf.json`)], { out: (t) => (out += t), err: () => {}, errIsTTY: false });
  return { file, code, result: JSON.parse(out) };
}

/** "holds" or the property violated first. */
async function verdict(name: string, spec: Record<string, unknown>): Promise<string> {
  const { result } = await check(name, spec);
  return result.status === 'ok' ? 'holds' : result.violation.property;
}

describe('withClient', () => {
  it("takes the client's own rules from the client and the brokers' from the brokers", () => {
    const oldBrokers = withClient(rules('kafka-0.11'), rules('kafka-3.5'));
    expect(oldBrokers.kip588).toBe(true);
    expect(oldBrokers.timeoutFence).toBe(false);
    const newBrokers = withClient(rules('kafka-3.6'), rules('kafka-0.11'));
    expect(newBrokers.kip588).toBe(false);
    expect(newBrokers).toMatchObject({ verification: true, timeoutFence: true, rememberFailedFence: true });
  });

  it('turns a negotiated feature on only when both halves have it', () => {
    for (const [brokers, client] of [['kafka-0.11', 'kafka-3.5'], ['kafka-3.5', 'kafka-0.11']]) {
      expect(withClient(rules(brokers!), rules(client!))).toMatchObject({ kip360: false, kip447: false });
    }
    expect(withClient(rules('kafka-4.0'), rules('kafka-3.8'))).toMatchObject({ tv2: false, transactionAbortable: true, pendingCheckFirst: true });
    expect(withClient(rules('kafka-3.8'), rules('kafka-3.6')).transactionAbortable).toBe(false);
    expect(withClient(rules('kafka-4.0'), rules('kafka-4.1'))).toEqual(rules('kafka-4.0'));
  });

  it("keeps the brokers' mutants", () => {
    expect(withClient({ ...rules('kafka-3.5'), mutantNoDedup: true }, rules('kafka-3.5')).mutantNoDedup).toBe(true);
  });
});

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
    const { file, code, result } = await check('bad', { model: 'kafka', client: 'kafka-9.9', deadlock: true });
    expect(code).toBe(2);
    expect(result.message).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: client: expected one of "kafka-0.11", .*got "kafka-9.9"$`));
  });
});

describe("an alternative client rule set: franz-go's (specs/kafka/clients/franz-go.ts)", () => {  const javaClient = (spec: Record<string, unknown>) => ({ ...spec, variant: (spec.variant as { base: string }).base });

  it('never expires a batch in flight, so the delayed Produce of B2 never happens; the Java client breaks ReadCommittedIsolation', async () => {
    const spec = shipped('franz-go-delayed-produce');
    expect(await verdict('fg-delayed', spec)).toBe('holds');
    expect(await verdict('java-delayed', javaClient(spec))).toBe('ReadCommittedIsolation');
  });

  it('commits after a refused send and loses the record under kafka-4.0; the Java client aborts instead', async () => {
    const spec = shipped('franz-go-commit-after-failed-send');
    expect(await verdict('fg-commit', spec)).toBe('NoLostWrite');
    expect(await verdict('java-commit', javaClient(spec))).toBe('holds');
  });
});

describe('transactions of one transactional.id at two transaction versions (per-instance clients)', () => {
  const brokers = rules('kafka-4.0');
  const cfg = kafkaConfig('kafka-4.0', { instancesPerId: 2, partitions: 1, transactionsPerInstance: 1, recordsPerTransaction: 1, clientRules: [withClient(brokers, rules('kafka-3.8')), brokers] });

  /** Takes the labelled steps in order. */
  const run = (s: State, steps: string[]): State => steps.reduce((t, label) => take(cfg, t, label), s);

  it('the old instance runs a version-1 transaction and the new one a version-2 transaction, each marked at its own version', () => {
    let s = run(initial(cfg), ['P0.0: initTransactions', 'deliver P0.0→TC: InitProducerId', 'deliver TC→P0.0: InitProducerId response', 'P0.0: beginTransaction', 'P0.0: send(p0)', 'P0.0: sendTxnRequest']);
    // The version-1 client adds its partition itself; the coordinator records version 1.
    expect(s.network.find((c) => c.from === 0 && c.to === TC)!.messages[0]).toMatchObject({ api: Api.AddPartitionsToTxn, supports: Supports.TransactionAbortable | Supports.GroupGeneration });
    s = run(s, ['deliver P0.0→TC: AddPartitionsToTxn', 'deliver TC→P0.0: AddPartitionsToTxn response', 'P0.0: sendProduce(p0)', 'deliver P0.0→L0: Produce']);
    s = run(s, ['deliver L0→TC (verification): AddPartitionsToTxn', 'deliver TC→L0 (verification): AddPartitionsToTxn response', 'deliver L0→P0.0: Produce response', 'P0.0: commitTransaction', 'P0.0: sendTxnRequest', 'deliver P0.0→TC: EndTxn']);
    expect(txn(s, 0)).toMatchObject({ state: TxnState.PrepareCommit, epoch: 0, transactionVersion: 1 });
    expect(requestsFrom(s, TC)[0]!.request.supports & Supports.TransactionVersion2).toBe(0);
    s = run(s, ['deliver TC→L0: WriteTxnMarkers', 'deliver L0→TC: WriteTxnMarkers response', 'TC: completeTransaction(t0)']);
    // The new instance takes over with a version-2 client: no AddPartitionsToTxn, EndTxn v5 bumps the epoch.
    s = run(s, ['P0.1: initTransactions', 'deliver P0.1→TC: InitProducerId', 'deliver TC→P0.1: InitProducerId response', 'P0.1: beginTransaction', 'P0.1: send(p0)', 'P0.1: sendProduce(p0)', 'deliver P0.1→L0: Produce']);
    s = run(s, ['deliver L0→TC (verification): AddPartitionsToTxn', 'deliver TC→L0 (verification): AddPartitionsToTxn response', 'deliver L0→P0.1: Produce response', 'P0.1: commitTransaction', 'P0.1: sendTxnRequest', 'deliver P0.1→TC: EndTxn']);
    expect(txn(s, 0)).toMatchObject({ state: TxnState.PrepareCommit, epoch: 2, transactionVersion: 2 });
    expect(requestsFrom(s, TC)[0]!.request.supports & Supports.TransactionVersion2).toBe(Supports.TransactionVersion2);
  });

  it('a version-1 request meets the brokers at version 1 (forRequest), a version-2 one at version 2', () => {
    const v1 = forRequest(brokers, { supports: clientSupports(withClient(brokers, rules('kafka-3.8'))) } as Request);
    expect(v1).toMatchObject({ tv2: false, transactionAbortable: true, verification: true, pendingCheckFirst: true });
    expect(forRequest(brokers, { supports: clientSupports(brokers) } as Request)).toEqual(brokers);
  });

  it('mixed-transaction-versions.json holds', async () => {
    expect(await verdict('mixed', shipped('mixed-transaction-versions'))).toBe('holds');
  });
});

describe('the finalized transaction.version changing at run time (transactionVersionChanges)', () => {
  const cfg = kafkaConfig('kafka-4.0', { partitions: 1, transactionsPerInstance: 2, recordsPerTransaction: 1, faults: { ...kafkaConfig('kafka-4.0').faults, transactionVersionChanges: 1 } });
  const run = (s: State, steps: string[]): State => steps.reduce((t, label) => take(cfg, t, label), s);
  const ready = run(initial(cfg), ['P0.0: initTransactions', 'deliver P0.0→TC: InitProducerId', 'deliver TC→P0.0: InitProducerId response']);

  it('a transaction begun at version 2 keeps it after a downgrade; the next one takes version 1', () => {
    let s = run(ready, ['P0.0: beginTransaction', 'TC: finalizeTransactionVersion(1)', 'P0.0: send(p0)']);
    expect(s.transactionVersion).toBe(1);
    // Still version 2: no AddPartitionsToTxn, the leader adds the partition.
    expect(s.producers[0]).toMatchObject({ transactionV2: true, added: 1, pendingAdd: 0 });
    expect(labels(cfg, s)).not.toContain('TC: finalizeTransactionVersion(2)');
    s = run(s, ['P0.0: sendProduce(p0)', 'deliver P0.0→L0: Produce', 'deliver L0→TC (verification): AddPartitionsToTxn', 'deliver TC→L0 (verification): AddPartitionsToTxn response']);
    s = run(s, ['deliver L0→P0.0: Produce response', 'P0.0: commitTransaction', 'P0.0: sendTxnRequest', 'deliver P0.0→TC: EndTxn', 'deliver TC→P0.0: EndTxn response']);
    expect(s.producers[0]).toMatchObject({ tm: 2 /* READY */, epoch: 1 });
    s = run(s, ['P0.0: beginTransaction', 'P0.0: send(p0)']);
    // Version 1 now: the client adds the partition itself.
    expect(s.producers[0]).toMatchObject({ transactionV2: false, added: 0, pendingAdd: 1 });
  });

  it('is offered only on brokers that have version 2, and only while the budget lasts', () => {
    const old = kafkaConfig('kafka-3.8', { faults: { ...kafkaConfig('kafka-3.8').faults, transactionVersionChanges: 1 } });
    expect(labels(old, initial(old)).filter((l) => l.includes('finalizeTransactionVersion'))).toEqual([]);
    expect(labels(cfg, ready)).toContain('TC: finalizeTransactionVersion(1)');
    expect(labels(cfg, { ...ready, faults: { ...ready.faults, transactionVersionChanges: 0 } })).not.toContain('TC: finalizeTransactionVersion(1)');
  });

  it('transaction-version-downgrade.json: B2 returns after a downgrade, and the spec holds without the change', async () => {
    const spec = shipped('transaction-version-downgrade');
    expect(await verdict('downgrade', spec)).toBe('ReadCommittedIsolation');
    const trace = JSON.parse(readFileSync(join(dir, 'downgrade.itf.json'), 'utf8'));
    expect(JSON.stringify(trace)).toContain('TC: finalizeTransactionVersion(1)');
    expect(await verdict('steady', { ...spec, faults: { batchExpiries: 1 } })).toBe('holds');
  });
});
