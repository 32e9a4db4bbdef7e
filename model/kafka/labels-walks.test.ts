// Every action enabled on seeded random walks of the shipped Kafka specs writes a label that reads
// back as the step of the action and writes again as the same text, and the walks meet every
// action kind. (Walks over whole specs: the mutation runs keep to labels.test.ts.)
import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { deepEqual } from '../../checker/engine/fingerprint.ts';
import { loadSpecFile } from '../../specs/load.ts';
import { benchmarks, shippedSpecFiles } from '../../specs/shipped.ts';
import type { KafkaConfig } from './config.ts';
import { walkStates } from './conformance/harness.ts';
import { actionKindNames, actionLabel, isLabelError, labelOf, parseLabel, stepOf } from './labels.ts';
import { enabledActions } from './next.ts';

const specs = shippedSpecFiles().filter((f) => f.startsWith('specs/kafka/') && !benchmarks.includes(f));

/** Per spec, the labels of the actions enabled on seeded random walks that do not read back as their step. */
function walk(file: string): { kinds: Set<string>; wrong: string[] } {
  const cfg = loadSpecFile(file).params as KafkaConfig;
  const kinds = new Set<string>();
  const wrong: string[] = [];
  for (const s of walkStates(cfg, 12, 50, seedrandom(file))) {
    for (const a of enabledActions(cfg, s)) {
      kinds.add(actionKindNames[a.kind]!);
      const label = actionLabel(cfg, a);
      const step = parseLabel(label);
      if (isLabelError(step)) wrong.push(step.error);
      else if (labelOf(step) !== label || !deepEqual(step, stepOf(cfg, a)))
        wrong.push(`${label} reads as ${JSON.stringify(step)}`);
    }
  }
  return { kinds, wrong };
}
const walks = new Map(specs.map((file) => [file, walk(file)]));

describe('labels of reachable actions', () => {
  it.each(specs)('%s: each reads back as the step of its action', (file) => {
    expect(walks.get(file)!.wrong).toEqual([]);
  });

  it('cover every action kind', () => {
    const seen = new Set([...walks.values()].flatMap((w) => [...w.kinds]));
    expect(actionKindNames.filter((kind) => !seen.has(kind))).toEqual([]);
  });
});
