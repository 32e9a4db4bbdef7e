// How a spec file selects the two-phase commit model: { "model": "two-phase", "resourceManagers": N }.
import {
  MAX_RESOURCE_MANAGERS,
  mutantDescriptions,
  mutants,
  twoPhaseModel,
  type TwoPhaseParams,
} from '../../model/two-phase/index.ts';
import { twoPhaseCanonical } from '../../model/two-phase/symmetry.ts';
import type { ModelEntry } from '../registry.ts';
import { twoPhaseProperties } from '../../model/two-phase/properties.ts';

export const twoPhaseEntry: ModelEntry<TwoPhaseParams> = {
  name: 'two-phase',
  description: "Lamport's two-phase commit (TwoPhase.tla), the reference that checks the engine against TLC",
  properties: twoPhaseProperties(1).map(({ name, description }) => ({ name, description })),

  readParams(fields) {
    const resourceManagers = fields.int('resourceManagers', 1, MAX_RESOURCE_MANAGERS);
    const mutant = fields.has('mutant') ? fields.oneOf('mutant', mutants) : undefined;
    return mutant === undefined ? { resourceManagers } : { resourceManagers, mutant };
  },

  mutants: mutants.map((name) => ({ name, description: mutantDescriptions[name] })),

  withMutant(spec, mutant) {
    return { ...spec, mutant };
  },

  build(params, properties) {
    const invariants = twoPhaseProperties(params.resourceManagers).filter((p) => properties.includes(p.name));
    return twoPhaseModel(params, invariants);
  },

  canonical: (params) => twoPhaseCanonical(params.resourceManagers),
};
