// Where the commands write their files: an output path is checked before any work is done, and
// written atomically at the end.
import { type Stats, closeSync, lstatSync, mkdirSync, openSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { InputError } from '../engine/input.ts';
import { COMMAND_LINE } from './args.ts';
import { writeFileAtomic } from '../engine/trace.ts';

const errorCode = (e: unknown) => (e as NodeJS.ErrnoException).code ?? String(e);

function fileKind(stat: Stats): string {
  if (stat.isDirectory()) return 'a folder';
  if (stat.isSymbolicLink()) return 'a symbolic link';
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  return stat.isSocket() ? 'a socket' : 'not a regular file';
}

/**
 * Refuses, before any work is done, an output path that is not a regular file or a new name in
 * an existing folder this user can write: the atomic rename would replace a link, a FIFO or a
 * device with a plain file, and a path that cannot be written would lose the result at the end.
 */
export function checkOutput(file: string, flag = '--out', folderMade = false): void {
  if (file === '') throw new InputError(COMMAND_LINE, flag, 'a file name', 'an empty string');
  const existing = lstatOrUndefined(file);
  if (existing !== undefined && !existing.isFile()) {
    throw new InputError(
      file,
      flag,
      'a regular file or a new name in an existing folder',
      fileKind(existing),
    );
  }
  checkOutputFolder(file, dirname(file), folderMade, flag);
}

/**
 * Refuses a folder that does not exist (unless `made`: then the nearest folder that exists must
 * be one this user can write in, where the folder is made when there is something to write) or
 * that this user cannot write in. A run that writes nothing leaves no empty folder behind.
 */
export function checkOutputFolder(file: string, folder: string, made: boolean, flag = '--out'): void {
  const refuse = (expected: string, got: string): never => {
    throw new InputError(file, flag, expected, got);
  };
  if (made && lstatOrUndefined(folder) === undefined) {
    const above = nearestExisting(folder);
    if (above !== undefined && above !== folder) return checkOutputFolder(file, above, false, flag);
  }
  let parent: Stats | undefined;
  try {
    parent = statSync(folder);
  } catch (e) {
    if (errorCode(e) !== 'ENOENT' && errorCode(e) !== 'ENOTDIR')
      refuse('a new name in an existing folder', `${errorCode(e)} for ${folder}`);
  }
  if (parent === undefined) {
    const above = ancestorFile(folder);
    refuse(
      'a new name in an existing folder',
      above === undefined ? `no folder ${folder}` : `${above}, which is a file`,
    );
  }
  if (!parent!.isDirectory())
    refuse(
      'a new name in an existing folder',
      `${folder}, which is ${parent!.isFile() ? 'a file' : fileKind(parent!)}`,
    );
  // Creating a file is the only test that holds for every user, root included.
  const probe = join(folder, `.txcheck-${process.pid}.probe`);
  try {
    closeSync(openSync(probe, 'wx'));
    rmSync(probe);
  } catch (e) {
    refuse('a path this user can write', `${errorCode(e)} in ${folder}`);
  }
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/** `folder` or its nearest ancestor that exists, if any. */
function nearestExisting(folder: string): string | undefined {
  for (let p = folder; ; p = dirname(p)) {
    if (lstatOrUndefined(p) !== undefined) return p;
    if (p === dirname(p)) return undefined;
  }
}

/** The nearest ancestor of `folder` that exists as something other than a folder, if any. */
function ancestorFile(folder: string): string | undefined {
  for (let p = folder; p !== dirname(p); p = dirname(p)) {
    const stat = lstatOrUndefined(p);
    if (stat !== undefined) return stat.isDirectory() ? undefined : p;
  }
  return undefined;
}

/** Writes `text` to `file` atomically, making its folder first if `makeFolder`; a failure is bad input naming the file. */
export function writeOutput(file: string, text: string, makeFolder = false): void {
  if (makeFolder) {
    try {
      mkdirSync(dirname(file), { recursive: true });
    } catch (e) {
      throw new InputError(file, '--out', 'a path whose folder can be created', errorCode(e));
    }
  }
  checkOutput(file);
  try {
    writeFileAtomic(file, text);
  } catch (e) {
    throw new InputError(file, '--out', 'a writable file path', errorCode(e));
  }
}
