// The known protocol bugs flip where history says they flip: the spec that shows a bug under the
// generation that had it holds, exhaustively, under the generation that fixed it.
import { describe, expect, it } from 'vitest';
import { compareVariants } from '../../checker/compare.ts';
import { bfs } from '../../checker/engine/bfs.ts';
import { loadSpecFile, parseSpec } from '../../specs/load.ts';

/** The verdict on `property` alone, per variant. */
function statusOf(file: string, property: string, variants: string[]): Record<string, string> {
  const results = compareVariants(file, { ...loadSpecFile(file).raw, properties: [property] }, variants, {});
  return Object.fromEntries(results.map((r) => [r.variant, r.properties[property]!.status]));
}

/** The verdict of `file` as written but under `variant` (a name or a composed variant) and `changes`. */
function verdictUnder(file: string, variant: unknown, changes: Record<string, unknown> = {}): string {
  const spec = parseSpec(file, { ...loadSpecFile(file).raw, variant, ...changes }, '');
  const result = bfs(spec.entry.build(spec.params, spec.properties), { deadlockAllowed: true });
  return result.status === 'violation' ? result.violation!.property : 'holds';
}

describe('generations', () => {
  it('B1, the hanging transaction: broken before KIP-890, fixed by partition verification (3.6)', () => {
    expect(
      statusOf('specs/kafka/hanging-transaction.json', 'NoHangingTransaction', [
        'kafka-0.11',
        'kafka-3.5',
        'kafka-3.6',
        'kafka-4.0',
      ]),
    ).toEqual({
      'kafka-0.11': 'violated',
      'kafka-3.5': 'violated',
      'kafka-3.6': 'holds',
      'kafka-4.0': 'holds',
    });
  });

  it('B2, the delayed Produce that joins the next transaction: still broken in 3.6 and 3.8, fixed by transaction version 2 (4.0)', () => {
    expect(
      statusOf('specs/kafka/delayed-produce.json', 'ReadCommittedIsolation', [
        'kafka-3.5',
        'kafka-3.6',
        'kafka-3.8',
        'kafka-4.0',
        'kafka-latest',
      ]),
    ).toEqual({
      'kafka-3.5': 'violated',
      'kafka-3.6': 'violated',
      'kafka-3.8': 'violated',
      'kafka-4.0': 'holds',
      'kafka-latest': 'holds',
    });
  });

  it('the stale EndTxn commits the next transaction until transaction version 2 (4.0)', () => {
    expect(
      statusOf('specs/kafka/stale-end-txn.json', 'ReadCommittedIsolation', [
        'kafka-3.5',
        'kafka-3.6',
        'kafka-3.8',
        'kafka-4.0',
        'kafka-4.1',
      ]),
    ).toEqual({
      'kafka-3.5': 'violated',
      'kafka-3.6': 'violated',
      'kafka-3.8': 'violated',
      'kafka-4.0': 'holds',
      'kafka-4.1': 'holds',
    });
  });

  it('a commit retried after its transactional.id expired is reported aborted by a KIP-360 client, until INVALID_PRODUCER_ID_MAPPING is fatal (KAFKA-18019, 4.0)', () => {
    expect(
      statusOf('specs/kafka/transactional-id-expiry.json', 'ReadCommittedIsolation', [
        'kafka-0.11',
        'kafka-3.5',
        'kafka-3.6',
        'kafka-3.8',
        'kafka-4.0',
        'kafka-latest',
      ]),
    ).toEqual({
      'kafka-0.11': 'holds',
      'kafka-3.5': 'violated',
      'kafka-3.6': 'violated',
      'kafka-3.8': 'violated',
      'kafka-4.0': 'holds',
      'kafka-latest': 'holds',
    });
  });

  it('the 4.0 client is fatal on INVALID_PRODUCER_ID_MAPPING at transaction version 1 too (KAFKA-18019, invalidPidMappingFatal)', () => {
    const file = 'specs/kafka/transactional-id-expiry.json';
    const tv1 = { transactionVersion: 1 };
    expect(verdictUnder(file, 'kafka-3.8', tv1)).toBe('ReadCommittedIsolation');
    expect(verdictUnder(file, 'kafka-4.0', tv1)).toBe('holds');
    expect(verdictUnder(file, { base: 'kafka-4.0', disable: ['invalidPidMappingFatal'] }, tv1)).toBe(
      'ReadCommittedIsolation',
    );
  });

  it('an EndTxn with the rotated producer id waits while the old id completes (KAFKA-18660, 4.0.0, pendingCheckFirst)', () => {
    const file = 'specs/kafka/epoch-exhaustion.json';
    expect(verdictUnder(file, 'kafka-4.0')).toBe('holds');
    expect(verdictUnder(file, { base: 'kafka-4.0', disable: ['pendingCheckFirst'] })).toBe('NoSpuriousFatal');
  });

  it('a failover in the marker phase of an exhausted epoch loses the rotated producer id until KAFKA-20310 (4.3.0)', () => {
    expect(
      statusOf('specs/kafka/epoch-exhaustion-failover.json', 'NoSpuriousFatal', [
        'kafka-3.8',
        'kafka-4.0',
        'kafka-4.1',
        'kafka-4.3',
        'kafka-latest',
      ]),
    ).toEqual({
      'kafka-3.8': 'holds',
      'kafka-4.0': 'violated',
      'kafka-4.1': 'violated',
      'kafka-4.3': 'holds',
      'kafka-latest': 'holds',
    });
    expect(
      verdictUnder('specs/kafka/epoch-exhaustion-failover.json', {
        base: 'kafka-4.1',
        enable: ['persistProducerIds'],
      }),
    ).toBe('holds');
  });

  it("a COMMIT marker keeps the next transaction's version-2 verification guard from 4.0.0 (KAFKA-18654, keepGuardAcrossV2Marker)", () => {
    const file = 'specs/kafka/transform-next-transaction.json';
    expect(verdictUnder(file, 'kafka-4.0')).toBe('holds');
    expect(verdictUnder(file, { base: 'kafka-4.0', disable: ['keepGuardAcrossV2Marker'] })).toBe(
      'NoSpuriousFatal',
    );
  });

  it('a leader that forgot an expired producer accepts its fenced epoch until partition verification (3.6)', () => {
    expect(
      statusOf('specs/kafka/producer-state-expiry.json', 'NoHangingTransaction', [
        'kafka-3.5',
        'kafka-3.6',
        'kafka-4.0',
        'kafka-latest',
      ]),
    ).toEqual({
      'kafka-3.5': 'violated',
      'kafka-3.6': 'holds',
      'kafka-4.0': 'holds',
      'kafka-latest': 'holds',
    });
  });

  it('a transaction-timeout abort without an epoch bump hangs a partition (before KAFKA-6119)', () => {
    expect(
      statusOf('specs/kafka/transaction-timeout.json', 'NoHangingTransaction', ['kafka-0.11', 'kafka-3.5']),
    ).toEqual({
      'kafka-0.11': 'violated',
      'kafka-3.5': 'holds',
    });
  });
});
