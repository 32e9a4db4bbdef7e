#!/usr/bin/env node
// The package's `txcheck` command: lets Node load the TypeScript sources, then runs the CLI.
import { register } from 'tsx/esm/api';

register();
const { runProcess } = await import('./cli.ts');
await runProcess();
