// The tests a mutation run uses: the step-level ones (the conformance cases, each one request or
// action through the model's handlers), the safety properties on hand-built states and the
// engine's unit tests on small graphs. Searches over whole specs (shipped specs, mutants,
// generations, symmetry, liveness) would see the same rules at hundreds of times the cost per
// mutant, and a mutant that breaks their termination only times out.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['model/kafka/conformance/**/*.test.ts', 'model/kafka/coordinator-steps.test.ts', 'model/kafka/partition-steps.test.ts', 'model/kafka/verification.test.ts', 'model/kafka/producer.test.ts', 'model/kafka/producer-steps.test.ts', 'model/kafka/network.test.ts', 'model/kafka/consumer.test.ts', 'model/kafka/ghost.test.ts', 'model/kafka/next.test.ts', 'model/kafka/pack.test.ts', 'model/kafka/properties.test.ts', 'checker/engine/*.test.ts'],
    testTimeout: 30_000,
    setupFiles: ['./checker/vitest.setup.ts'],
  },
});
