// The tool's name and version, as traces, reports and summaries give it.
import { readFileSync } from 'node:fs';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
export const TOOL = `txcheck ${packageJson.version}`;
