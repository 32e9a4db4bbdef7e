// What a job's walks depend on besides their indices: the spec and the code that builds and
// explores its model. Each job carries both digests, and a worker whose own differ refuses it,
// since its walks would not be the coordinator's.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join, sep } from 'node:path';

export interface RunDigest {
  /** sha256 of the spec's JSON. */
  readonly spec: string;
  /** sha256 of the source files of the model and the engine. */
  readonly model: string;
}

export function specDigest(raw: unknown): string {
  return createHash('sha256').update(JSON.stringify(raw)).digest('hex');
}

const isSource = (name: string) => /\.(ts|js|mjs)$/.test(name) && !/\.test\.[a-z]+$/.test(name);

/** sha256 of every source file under `folders` of `root`, by path (with /, as on every system) and content, in path order. */
export function sourceDigest(root: string, folders: readonly string[]): string {
  const hash = createHash('sha256');
  const files = folders.flatMap((folder) => readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' }).filter(isSource).map((f) => `${folder}/${f.split(sep).join('/')}`));
  for (const file of files.sort()) hash.update(`${file}\0`).update(readFileSync(join(root, file))).update('\0');
  return hash.digest('hex');
}
