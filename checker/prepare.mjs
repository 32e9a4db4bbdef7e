// npm's prepare step: the build (npm ci, npm install, npm pack), except under npx. The first
// `npx txcheck` in a clone installs the clone into npx's cache, which runs this step again with
// its output hidden: seconds of silence for a build that npm ci already made. The command builds
// dist/ itself, saying so, if it is missing (checker/bin.mjs).
import { spawnSync } from 'node:child_process';

if (process.env.npm_command !== 'exec') {
  const npm = process.env.npm_execpath;
  const build =
    npm === undefined
      ? spawnSync('npm', ['run', 'build'], { stdio: 'inherit' })
      : spawnSync(process.execPath, [npm, 'run', 'build'], { stdio: 'inherit' });
  process.exitCode = build.status ?? 1;
}
