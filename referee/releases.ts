// Which generation of the model each served Kafka release is checked against, with the rules a
// patch release adds to it. The mapping follows the releases' own answers and their source
// (docs/guides/real-kafka.md): KAFKA-19367's version-2 fence that keeps the old epoch is in 4.0.1
// (PR #19958) and 4.1.0; KIP-1228's marker rule is first in 4.2.0; the producer ids are written to
// __transaction_state from 4.3.0 (KAFKA-20310); KAFKA-19690's epoch check before the guard is in
// 4.0.2, 4.1.1 and 4.2.0.
export const SERVED_RELEASES = [
  '4.0.0',
  '4.0.1',
  '4.0.2',
  '4.1.0',
  '4.1.1',
  '4.1.2',
  '4.2.0',
  '4.2.2',
  '4.3.0',
  '4.3.2',
  '4.4.0',
] as const;

/** A generation and the switches a release turns on beyond it. */
export interface ReleaseVariant {
  readonly base: string;
  readonly enable: readonly string[];
}

/** The model a release is matched to; at transaction version 1 it runs at that level. */
export function variantOf(release: string): ReleaseVariant {
  const [major, minor, patch] = release.split('.').map(Number) as [number, number, number];
  if (major > 4 || (major === 4 && minor >= 4)) return { base: 'kafka-latest', enable: [] };
  if (major === 4 && minor === 3) return { base: 'kafka-4.3', enable: [] };
  if (major === 4 && minor === 2)
    return { base: 'kafka-4.1', enable: ['strictMarkerEpoch', 'epochBeforeGuard'] };
  // KAFKA-19690 was picked to 4.1.1 and 4.0.2.
  if (major === 4 && minor === 1)
    return { base: 'kafka-4.1', enable: patch >= 1 ? ['epochBeforeGuard'] : [] };
  if (major === 4 && minor === 0)
    return {
      base: 'kafka-4.0',
      enable: [
        patch >= 1 ? 'tv2FenceKeepsEpoch' : 'tv2FenceBumpsTwice',
        ...(patch >= 2 ? ['epochBeforeGuard'] : []),
      ],
    };
  return { base: 'kafka-3.8', enable: [] };
}

/** How a report names the model a release is checked against. */
export function variantName(v: ReleaseVariant): string {
  return [v.base, ...v.enable].join(' + ');
}

/** A spec's raw object under a release's model, keeping the switches the spec turns on itself. */
export function atRelease(raw: Readonly<Record<string, unknown>>, release: string): Record<string, unknown> {
  const { base, enable } = variantOf(release);
  const own = raw.variant;
  const spec = typeof own === 'object' && own !== null ? (own as Record<string, unknown>) : {};
  const ownEnable = Array.isArray(spec.enable) ? (spec.enable as string[]) : [];
  const all = [...new Set([...ownEnable, ...enable])];
  return { ...raw, variant: { ...spec, base, ...(all.length > 0 ? { enable: all } : {}) } };
}
