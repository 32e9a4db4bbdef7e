// `npx vitest run` behaves as `npm test`: the same time limits and the same fast-check seed.
// Two projects: "unit" (steps, rules, data structures: seconds) and "search" (whole searches,
// the CLI, workers and brokers: minutes). `npm run test:unit` runs the first alone.
import { configDefaults, defineConfig } from 'vitest/config';

/** Test files that run whole searches, start processes or servers. */
const searchTests = [
  'checker/cli.test.ts',
  'checker/package.test.ts',
  'checker/signals.test.ts',
  'checker/distributed/**/*.test.ts',
  'checker/engine/parallel/**/*.test.ts',
  'model/kafka/symmetry.test.ts',
  'model/kafka/mutants.test.ts',
  'model/kafka/generations.test.ts',
  'specs/**/*.test.ts',
  'referee/**/*.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    setupFiles: ['./checker/vitest.setup.ts'],
    globalSetup: ['./checker/vitest.global.ts'],
    projects: [
      {
        extends: true,
        // out/ holds run artifacts, among them the sandboxes of a mutation run.
        test: { name: 'unit', exclude: [...configDefaults.exclude, 'out/**', ...searchTests] },
      },
      {
        extends: true,
        test: { name: 'search', include: searchTests, exclude: [...configDefaults.exclude, 'out/**'] },
      },
    ],
  },
});
