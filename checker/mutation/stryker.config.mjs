// One Stryker configuration for every group of groups.json; TXCHECK_MUTATION_GROUP picks one
// (checker/mutation/run.ts sets it). A group pairs the files it mutates with the tests that
// are worth running against them: a whole-spec search covers every model line, so in the
// model's group it would run against every mutant at hundreds of times a step test's cost.
import { readFileSync } from 'node:fs';

const groups = JSON.parse(readFileSync(new URL('./groups.json', import.meta.url), 'utf8'));
const name = process.env.TXCHECK_MUTATION_GROUP ?? 'model';
const group = groups[name];
if (!group)
  throw new Error(
    `TXCHECK_MUTATION_GROUP: no group ${name}; expected one of ${Object.keys(groups).join(', ')}`,
  );
const out = `out/mutation/${name}`;

export default {
  testRunner: 'vitest',
  vitest: { configFile: 'checker/mutation/vitest.config.ts' },
  checkers: ['typescript'],
  // The sources a group mutates without the tests: a mutant valid for them is valid.
  tsconfigFile: 'checker/mutation/tsconfig.json',
  coverageAnalysis: 'perTest',
  mutate: group.mutate,
  ignoreStatic: true,
  concurrency: 2,
  timeoutMS: 5000,
  reporters: ['clear-text', 'progress', 'json', 'html'],
  jsonReporter: { fileName: `${out}/mutation.json` },
  htmlReporter: { fileName: `${out}/index.html` },
  incrementalFile: `${out}/incremental.json`,
  tempDirName: `out/.stryker-tmp-${name}`,
  cleanTempDir: 'always',
};
