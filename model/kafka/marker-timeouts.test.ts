// Marker request timeouts: the marker channel's connections, and where a late marker breaks
// read_committed isolation (every generation before KIP-1228's marker epoch rule).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main } from '../../checker/cli.ts';
import { P0, at } from './conformance/coordinator-support.ts';
import { initial, kafkaConfig, take } from './conformance/harness.ts';
import { TxnState } from './state.ts';

describe('the marker channel connections', () => {
  it('follow the coordinator epoch when no marker times out, so failover opens the same connections as before', () => {
    const cfg = kafkaConfig('kafka-3.5', {
      faults: { ...kafkaConfig('kafka-3.5').faults, coordinatorFailovers: 2 },
    });
    const prepared = at(initial(cfg), { pid: 0, epoch: 0, state: TxnState.PrepareCommit, partitions: P0 });
    const twice = take(cfg, take(cfg, prepared, 'TC: coordinatorFailover'), 'TC: coordinatorFailover');
    expect(twice.coordinator.epoch).toBe(2);
    expect(twice.coordinator.markerConns).toEqual([2, 2]);
  });
});

describe('marker-timeouts.json across generations', () => {
  const spec = JSON.parse(
    readFileSync(fileURLToPath(new URL('../../specs/kafka/marker-timeouts.json', import.meta.url)), 'utf8'),
  );
  const dir = mkdtempSync(join(tmpdir(), 'txcheck-markers-'));
  async function verdict(variant: string, mutate: Record<string, unknown> = {}) {
    const file = join(dir, `${variant}.json`);
    writeFileSync(file, JSON.stringify({ ...spec, variant, expect: undefined, ...mutate }));
    let out = '';
    await main(['check', file, '--json', '--workers', '1', '--out', join(dir, `${variant}.itf.json`)], {
      out: (t) => (out += t),
      err: () => {},
      errIsTTY: false,
    });
    const result = JSON.parse(out);
    return result.status === 'violation' ? result.violation.property : result.status;
  }

  it('a late COMMIT marker ends the next transaction under transaction version 2 without the marker epoch rule', async () => {
    expect(await verdict('kafka-4.1')).toBe('ReadCommittedIsolation');
  });

  it('KIP-1228 (kafka-latest) fences it', async () => {
    expect(await verdict('kafka-latest')).toBe('ok');
  });

  it('needs the timeout: without it every generation holds', async () => {
    expect(await verdict('kafka-3.5', { faults: {} })).toBe('ok');
  });
});
