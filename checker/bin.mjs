#!/usr/bin/env node
// The package's `txcheck` command: the command line as built into dist/ (`npm run build`, which
// `npm ci` and `npm pack` run), on Node alone. A file of its own, so a rebuild keeps it executable.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { clearInterval, setInterval } from 'node:timers';
import { fileURLToPath } from 'node:url';

/** The parent of process `pid`, from /proc (Linux); undefined where that cannot be read. */
function parentOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

// npx passes neither SIGTERM nor SIGKILL on to the command it started (through `sh -c`), which
// would then run on, holding its port or taking jobs. Started by npm, txcheck watches its
// launchers (its parent and the one above a shell) and stops as on SIGTERM when one goes.
if (process.env.npm_command !== undefined) {
  const launchers = [process.ppid, parentOf(process.ppid)].filter((pid) => pid !== undefined && pid > 1);
  const gone = (pid) => {
    try {
      process.kill(pid, 0);
      return false;
    } catch (e) {
      return e.code === 'ESRCH';
    }
  };
  const watch = setInterval(() => {
    if (process.ppid !== launchers[0] || launchers.some(gone)) {
      clearInterval(watch);
      process.kill(process.pid, 'SIGTERM');
    }
  }, 100);
  watch.unref();
}

// A clone whose build is missing (installed with --ignore-scripts, or dist/ removed) builds it
// here, saying so on stderr, the build's own output with it: stdout stays the command's.
const root = fileURLToPath(new URL('..', import.meta.url));
if (!existsSync(`${root}dist/checker/cli.js`) && existsSync(`${root}tsconfig.build.json`)) {
  process.stderr.write('txcheck: building dist/ first (npm run build, about 10 s; once per clone)\n');
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const build = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: ['ignore', 2, 2],
  });
  if (build.status !== 0) {
    process.stderr.write('txcheck: the build failed (npm run build shows why)\n');
    process.exit(4);
  }
}

const { runProcess } = await import('../dist/checker/cli.js');
await runProcess();
