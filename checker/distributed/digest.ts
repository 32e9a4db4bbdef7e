// What a job's work depends on besides its indices: the spec, the files the spec makes the model
// read (a variant's code, which each worker reads at the path the spec names), and the code that
// builds and explores its model. Each job carries both digests, and a worker whose own differ
// refuses it, since its work would not be the coordinator's.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';

export interface RunDigest {
  /** sha256 of the spec's JSON and of the files it makes the model read. */
  readonly spec: string;
  /** sha256 of the source files of the model and the engine. */
  readonly model: string;
}

/** A file the spec makes the model read: its path as the spec names it, and its contents on this machine (undefined when absent). */
export interface SpecFile {
  readonly path: string;
  readonly content: Buffer | undefined;
}

/** The files at `paths` (relative to the working directory, as a spec names them) as this machine has them. */
export function specFiles(paths: readonly string[]): SpecFile[] {
  return paths.map((path) => {
    try {
      return { path, content: readFileSync(resolve(path)) };
    } catch {
      return { path, content: undefined };
    }
  });
}

export function specDigest(raw: unknown, files: readonly SpecFile[]): string {
  const hash = createHash('sha256').update(JSON.stringify(raw));
  // Each file's length first, so that no two lists of files hash alike; -1 for one that is absent.
  for (const { path, content } of files)
    hash.update(`\0${path}\0${content?.length ?? -1}\0`).update(content ?? '');
  return hash.digest('hex');
}

const isSource = (name: string) => /\.(ts|js|mjs)$/.test(name) && !/\.test\.[a-z]+$/.test(name);

/** sha256 of every source file under `folders` of `root`, by path (with /, as on every system) and content, in path order. */
export function sourceDigest(root: string, folders: readonly string[]): string {
  const hash = createHash('sha256');
  const files = folders.flatMap((folder) =>
    readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
      .filter(isSource)
      .map((f) => `${folder}/${f.split(sep).join('/')}`),
  );
  for (const file of files.sort())
    hash
      .update(`${file}\0`)
      .update(readFileSync(join(root, file)))
      .update('\0');
  return hash.digest('hex');
}
