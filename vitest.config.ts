// `npx vitest run` behaves as `npm test`: the same time limits and the same fast-check seed.
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // out/ holds run artifacts, among them the sandboxes of a mutation run.
    exclude: [...configDefaults.exclude, 'out/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    setupFiles: ['./checker/vitest.setup.ts'],
  },
});
