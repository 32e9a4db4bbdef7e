// Every served release is matched to a model the spec loader accepts, and a patch release's
// extra rule reaches the rules the checker runs.
import { describe, expect, it } from 'vitest';
import { loadSpecFile, parseSpec } from '../specs/load.ts';
import { SERVED_RELEASES, atRelease, variantName, variantOf } from './releases.ts';

function rulesAt(release: string, file = 'specs/kafka/zombie-fencing.json'): Record<string, boolean> {
  const spec = loadSpecFile(file);
  const params = parseSpec(file, atRelease(spec.raw, release), '').params as {
    rules: Record<string, boolean>;
  };
  return params.rules;
}

describe('release to model', () => {
  it.each(SERVED_RELEASES)('%s loads as a Kafka spec', (release) => {
    expect(() => rulesAt(release)).not.toThrow();
  });

  it('4.0.0 bumps twice on a fence, and lacks the KAFKA-19367 fix that 4.0.1 has', () => {
    expect(rulesAt('4.0.0').tv2FenceKeepsEpoch).toBe(false);
    expect(rulesAt('4.0.0').tv2FenceBumpsTwice).toBe(true);
    expect(rulesAt('4.0.1').tv2FenceKeepsEpoch).toBe(true);
    expect(variantName(variantOf('4.0.1'))).toBe('kafka-4.0 + tv2FenceKeepsEpoch');
  });

  it('KAFKA-19690 (epochBeforeGuard) from 4.0.2, 4.1.1 and 4.2.0', () => {
    expect(
      ['4.0.1', '4.0.2', '4.1.0', '4.1.1', '4.2.0', '4.3.0'].map((r) => rulesAt(r).epochBeforeGuard),
    ).toEqual([false, true, false, true, true, true]);
  });

  it('4.2.x is kafka-4.1 with the KIP-1228 marker rule and without the producer ids kept', () => {
    const r = rulesAt('4.2.2');
    expect([r.strictMarkerEpoch, r.persistProducerIds]).toEqual([true, false]);
    expect(rulesAt('4.3.0').persistProducerIds).toBe(true);
  });

  it('keeps the switches a spec turns on itself', () => {
    const raw = { variant: { base: 'kafka-3.5', enable: ['fenceRotatesProducerId'] } };
    expect(atRelease(raw, '4.0.1').variant).toEqual({
      base: 'kafka-4.0',
      enable: ['fenceRotatesProducerId', 'tv2FenceKeepsEpoch'],
    });
  });
});
