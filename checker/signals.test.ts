// SIGINT and SIGTERM stop a run within a second, with the partial summary and exit 3, and leave
// no process behind: started with node, through npm run (npm, then tsx), and as a terminal's Ctrl-C
// reaches npx (the whole process group).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'txcheck-signals-'));
// Far too big to finish: 12 resource managers. The time limit only guards against a stuck test.
const spec = join(dir, 'tp12.json');
writeFileSync(spec, JSON.stringify({ model: 'two-phase', resourceManagers: 12, maxSeconds: 120 }));

/** How long a run searches before it is signalled. */
const SEARCHING_MS = 1000;
/** "Within a second", with room for a machine busy with other tests. */
const STOPPED_MS = 2000;

function processesLeft(): string {
  try {
    return execFileSync('pgrep', ['-af', spec], { encoding: 'utf8' });
  } catch {
    return '';
  }
}

let started = 0;

/**
 * Starts `command args check <spec> -o <a new folder>/t.itf.json ...more`. Just before it
 * searches, txcheck makes sure it can write in that folder by creating a probe file there; its
 * signal handlers are in place by then, so that is when the test may signal it.
 */
function start(
  command: string,
  args: readonly string[],
  more: readonly string[],
  detached = false,
): { child: ChildProcess; ready: Promise<void> } {
  const folder = join(dir, `run-${started++}`);
  mkdirSync(folder);
  const ready = new Promise<void>((resolve) => {
    const watcher = watch(folder, (_event, name) => {
      if (name?.endsWith('.probe') === true) {
        watcher.close();
        resolve();
      }
    });
  });
  const child = spawn(command, [...args, 'check', spec, '-o', join(folder, 't.itf.json'), ...more], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'ignore'],
    detached,
  });
  return { child, ready };
}

async function stopWith(
  child: ChildProcess,
  ready: Promise<void>,
  send: () => void,
): Promise<{ code: number | null; out: string; ms: number }> {
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const closed = new Promise((resolve) => child.stdout!.on('close', resolve));
  await ready;
  // Let the search get going.
  await new Promise((resolve) => setTimeout(resolve, SEARCHING_MS));
  const start = performance.now();
  send();
  const code = await exited;
  const ms = performance.now() - start;
  await closed;
  return { code, out, ms };
}

// [launcher, signal, workers, command, arguments]: each launcher, each signal, the one-thread and the parallel search.
const runs: [string, NodeJS.Signals, string, string, string[]][] = [
  ['node --import tsx', 'SIGINT', '1', process.execPath, ['--import', 'tsx', 'checker/cli.ts']],
  ['npm run txcheck (npm, then tsx)', 'SIGTERM', '2', 'npm', ['run', '-s', 'txcheck', '--']],
];

describe('a signal stops a run', { timeout: 40_000 }, () => {
  it.each(runs)(
    'started with %s, %s on %s worker(s): the partial summary, exit 3, nothing left running',
    async (_name, signal, workers, command, args) => {
      const { child, ready } = start(command, args, ['--workers', workers]);
      const { code, out, ms } = await stopWith(child, ready, () => child.kill(signal));
      expect(out).toMatch(/^\d[\d,]* distinct states, \d[\d,]* states generated, depth \d+/m);
      expect(out).toContain(`Result: incomplete. Stopped by signal (${signal})`);
      expect(code).toBe(3);
      expect(ms).toBeLessThan(STOPPED_MS);
      expect(processesLeft()).toBe('');
    },
  );

  it('Ctrl-C on a terminal running npx tsx (SIGINT to the process group): exit 3, nothing left running', async () => {
    const { child, ready } = start('npx', ['tsx', 'checker/cli.ts'], ['--json', '--workers', '1'], true);
    const { out, ms } = await stopWith(child, ready, () => process.kill(-child.pid!, 'SIGINT'));
    const summary = JSON.parse(out);
    expect(summary).toMatchObject({ status: 'incomplete', stoppedBy: 'signal', signal: 'SIGINT' });
    expect(summary.distinctStates).toBeTypeOf('number');
    expect(ms).toBeLessThan(STOPPED_MS);
    expect(processesLeft()).toBe('');
  });
});
