// A test run keeps its temporary files (specs written on the fly, checkpoints, spilled levels,
// servers' folders) under one folder of its own, removed when the run ends: tests that make a
// folder and never remove it, or a worker stopped halfway, leave nothing in the system's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): (() => void) | undefined {
  // Each project of the run calls this: the first makes the folder, the others keep it (a path
  // nested deeper would pass the length of a Unix socket's path, which Chromium's profile needs).
  if (process.env.TXCHECK_TESTS_TMPDIR !== undefined) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'txcheck-tests-'));
  const before = process.env.TMPDIR;
  process.env.TXCHECK_TESTS_TMPDIR = dir;
  // os.tmpdir() reads TMPDIR, and the test workers and the processes they start inherit it.
  process.env.TMPDIR = dir;
  return () => {
    delete process.env.TXCHECK_TESTS_TMPDIR;
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    rmSync(dir, { recursive: true, force: true });
  };
}
