// The tool's name and version, as traces, reports and summaries give it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../specs/shipped.ts';

const packageJson = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as {
  version: string;
};
export const TOOL = `txcheck ${packageJson.version}`;
