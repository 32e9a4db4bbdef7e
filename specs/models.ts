// Every model a spec file can name in its "model" field.
import type { ModelEntry } from './registry.ts';
import { kafkaEntry } from './kafka/entry.ts';
import { twoPhaseEntry } from './two-phase/entry.ts';

export const models: readonly ModelEntry[] = [kafkaEntry, twoPhaseEntry];
