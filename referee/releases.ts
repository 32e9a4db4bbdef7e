// Which generation of the model each served Kafka release is checked against. The mapping
// follows the releases' own answers (docs/guides/real-kafka.md): the KIP-1228 marker rule is
// first in 4.2.0, KAFKA-18042's early epoch check in 4.1.0, and 4.0.0 bumps twice on a fence
// (KAFKA-19367, fixed in 4.0.1), which no generation models yet.
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

/** The generation a release is matched to; at transaction version 1 it runs at that level. */
export function generationOf(release: string): string {
  const [major, minor] = release.split('.').map(Number) as [number, number];
  if (major > 4 || (major === 4 && minor >= 2)) return 'kafka-latest';
  if (major === 4 && minor === 1) return 'kafka-4.1';
  if (major === 4 && minor === 0) return 'kafka-4.0';
  return 'kafka-3.8';
}
