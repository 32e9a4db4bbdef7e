// Whether a process still runs, as the tests that stop processes ask it.
import { readFileSync } from 'node:fs';

/**
 * Whether process `pid` still runs. A process that has exited but is not reaped yet (a zombie)
 * does not: an orphan's reaper is the machine's init, which may take seconds to reap it, and
 * kill(pid, 0) still succeeds on it.
 */
export function isRunning(pid: number): boolean {
  try {
    if (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z')) return false;
  } catch {
    // No /proc (not Linux), or the process is gone: kill(pid, 0) tells.
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
