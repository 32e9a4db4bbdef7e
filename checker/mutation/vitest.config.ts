// The tests a mutation run uses: those that check protocol steps, properties and mutants on small
// state spaces. Whole-suite tests through the CLI (shipped specs, traces, reports) and the bench-sized
// searches would only repeat what these see, at many times the cost per mutant.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['model/**/*.test.ts', 'checker/engine/*.test.ts'],
    exclude: ['model/kafka/symmetry.test.ts', 'model/two-phase/symmetry.test.ts'],
    testTimeout: 30_000,
    setupFiles: ['./checker/vitest.setup.ts'],
  },
});
