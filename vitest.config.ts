// `npx vitest run` behaves as `npm test`: the same time limits and the same fast-check seed.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    setupFiles: ['./checker/vitest.setup.ts'],
  },
});
