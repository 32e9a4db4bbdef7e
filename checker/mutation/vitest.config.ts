// The tests of one mutation group (groups.json, picked by TXCHECK_MUTATION_GROUP).
import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

const groups = JSON.parse(readFileSync(new URL('./groups.json', import.meta.url), 'utf8')) as Record<
  string,
  { tests: string[] }
>;
const group = groups[process.env.TXCHECK_MUTATION_GROUP ?? 'model'];
if (!group) throw new Error(`TXCHECK_MUTATION_GROUP: no group ${process.env.TXCHECK_MUTATION_GROUP}`);

export default defineConfig({
  test: {
    include: group.tests,
    // One module graph for all the files of a run: a mutant's run then loads the model once, not per file.
    isolate: false,
    testTimeout: 30_000,
    setupFiles: ['./checker/vitest.setup.ts'],
  },
});
