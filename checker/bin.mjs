#!/usr/bin/env node
// The package's `txcheck` command: the command line as built into dist/ (`npm run build`, which
// `npm ci` and `npm pack` run), on Node alone. A file of its own, so a rebuild keeps it executable.
const { runProcess } = await import('../dist/checker/cli.js');
await runProcess();
