// The package as a user gets it: `npm pack` (which builds dist/), installed from the tarball into
// an empty folder, where `npx txcheck` runs on plain Node, without tsx or any development tool.
import { type SpawnSyncReturns, execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { isRunning } from './processes.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'txcheck-package-'));
const app = join(dir, 'app');
const installed = 'node_modules/txcheck';
// npm run passes its own settings (the project's prefix among them) to its children in npm_* variables.
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));

function npm(args: readonly string[], cwd: string): string {
  return execFileSync('npm', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function txcheck(...args: string[]): SpawnSyncReturns<string> {
  return spawnSync('npx', ['--offline', 'txcheck', ...args], { cwd: app, env, encoding: 'utf8' });
}

let packed: string[] = [];

beforeAll(() => {
  const [pack] = JSON.parse(npm(['pack', '--json', '--pack-destination', dir], root)) as [
    { filename: string; files: { path: string }[] },
  ];
  packed = pack.files.map((f) => f.path);
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), '{ "private": true }\n');
  npm(['install', '--prefer-offline', '--no-audit', '--no-fund', join(dir, pack.filename)], app);
}, 120_000);

describe('the installed package', () => {
  it('holds the build, the specs and the traces, and no sources or tests', () => {
    expect(packed).toEqual(
      expect.arrayContaining([
        'checker/bin.mjs',
        'dist/checker/cli.js',
        'dist/checker/engine/parallel/worker.js',
        'specs/kafka/commit-abort.json',
        'traces/kafka-3.5-hanging-transaction.itf.json',
      ]),
    );
    expect(packed.filter((f) => f.endsWith('.ts') || f.includes('.test.'))).toEqual([]);
    expect(existsSync(join(app, 'node_modules/tsx'))).toBe(false);
  });

  it('lists only specs it can check: none names a variant file, which the package does not hold', () => {
    const listed = txcheck('list', '--json');
    expect(listed.status).toBe(0);
    const specs = (JSON.parse(listed.stdout) as { specs: { file: string }[] }).specs.map((s) => s.file);
    expect(specs).toContain(join(installed, 'specs/kafka/commit-abort.json'));
    const withVariantFile = specs.filter(
      (f) =>
        (JSON.parse(readFileSync(join(app, f), 'utf8')) as { variant?: { overrides?: string } }).variant
          ?.overrides !== undefined,
    );
    expect(withVariantFile).toEqual([]);
    // The clone has such specs: the package leaves them out rather than list what cannot run.
    expect(readFileSync(join(root, 'specs/kafka/franz-go-delayed-produce.json'), 'utf8')).toContain(
      '"overrides"',
    );
  });

  it('npx txcheck --help lists every command', () => {
    const help = txcheck('--help');
    expect(help.status).toBe(0);
    for (const command of [
      'check',
      'replay',
      'show',
      'report',
      'shrink',
      'compare',
      'mutants',
      'explore',
      'list',
    ])
      expect(help.stdout).toContain(`txcheck ${command} `);
  });

  it('checks a shipped spec on worker threads with the reviewed count', () => {
    const spec = 'specs/kafka/commit-abort.json';
    const generation = (JSON.parse(readFileSync(join(root, spec), 'utf8')) as { variant: string }).variant;
    const expected = (
      JSON.parse(readFileSync(join(root, 'specs/counts.json'), 'utf8')) as Record<
        string,
        Record<string, { distinctStates: number }>
      >
    )[spec]![generation]!;
    const run = txcheck('check', join(installed, spec), '--workers', '2', '--json');
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      status: 'ok',
      distinctStates: expected.distinctStates,
      workers: 2,
    });
  });

  it('finds a shipped violation by random walks on workers, and the trace replays', () => {
    const run = txcheck(
      'check',
      join(installed, 'specs/two-phase/tp3-commit-early-random.json'),
      '--workers',
      '2',
      '-o',
      'early.itf.json',
    );
    expect(run.status).toBe(1);
    expect(run.stdout).toContain('Result: violation. TCConsistent');
    expect(run.stdout).toContain('replay it with: npx txcheck replay early.itf.json');
    const replay = txcheck('replay', 'early.itf.json');
    expect(replay.stdout).toContain('Reproduced');
    expect(replay.status).toBe(0);
  });

  it('loads a JavaScript variant file with Node alone, and says a TypeScript one needs tsx', () => {
    // The lenient-produce example (specs/kafka/examples/lenient-produce.ts) in JavaScript, on the build's helpers.
    const lenient = `import { producerEntry } from 'txcheck/dist/model/kafka/partition.js';
import { NO_OFFSET } from 'txcheck/dist/model/kafka/state.js';
export const overrides = {
  Produce: (ctx, s, connection, req) => {
    const entry = producerEntry(s.partitions[req.partitions], req.pid);
    const idle = entry !== undefined && entry.txnFirstOffset === NO_OFFSET && req.epoch < entry.epoch;
    return ctx.base.Produce(ctx, s, connection, idle ? { ...req, epoch: entry.epoch } : req);
  },
};
`;
    const example = JSON.parse(
      readFileSync(join(root, 'specs/kafka/examples/lenient-produce.json'), 'utf8'),
    ) as { variant: object; expect: string };
    const variant = (file: string): string => {
      writeFileSync(join(app, file), lenient);
      writeFileSync(
        join(app, `${file}.json`),
        JSON.stringify({ ...example, variant: { ...example.variant, overrides: file } }),
      );
      return `${file}.json`;
    };
    const js = txcheck('check', variant('lenient.mjs'), '--workers', '1', '--json');
    expect(js.status).toBe(1);
    expect(JSON.parse(js.stdout).violation.property).toBe(example.expect);
    const ts = txcheck('check', variant('lenient.ts'), '--workers', '1');
    expect(ts.status).toBe(2);
    expect(ts.stderr).toMatch(
      /^lenient\.ts\.json: variant\.overrides: expected a variant file that loads, got lenient\.ts: a TypeScript variant file needs tsx .*\n$/,
    );
  });
});

describe('npx txcheck in a clone', () => {
  const inClone = (cwd: string, command: string, args: readonly string[]) =>
    spawnSync(command, args, { cwd, env, encoding: 'utf8' });

  it('runs the build npm ci made, at once: npx installs the clone in its cache without building it again', () => {
    const built = statSync(join(root, 'dist/checker/cli.js')).mtimeMs;
    const cache = mkdtempSync(join(tmpdir(), 'txcheck-npx-cache-'));
    const run = inClone(root, 'npx', ['--offline', '--cache', cache, 'txcheck', 'list', '--json']);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout).specs.length).toBeGreaterThan(0);
    expect(statSync(join(root, 'dist/checker/cli.js')).mtimeMs).toBe(built);
  });

  it('builds a missing dist/ first, saying so in one line on stderr, and only once', () => {
    const clone = mkdtempSync(join(tmpdir(), 'txcheck-clone-'));
    for (const entry of [
      'checker',
      'model',
      'specs',
      'referee',
      'package.json',
      'tsconfig.json',
      'tsconfig.build.json',
    ])
      cpSync(join(root, entry), join(clone, entry), { recursive: true });
    symlinkSync(join(root, 'node_modules'), join(clone, 'node_modules'));
    const first = inClone(clone, process.execPath, ['checker/bin.mjs', 'list', '--json']);
    expect(first.status).toBe(0);
    expect(first.stderr).toBe('txcheck: building dist/ first (npm run build, about 10 s; once per clone)\n');
    expect(JSON.parse(first.stdout).models.length).toBeGreaterThan(0);
    const second = inClone(clone, process.execPath, ['checker/bin.mjs', 'list']);
    expect(second.status).toBe(0);
    expect(second.stderr).toBe('');
  }, 120_000);
});

describe('npx txcheck when npx goes', () => {
  // Far too big to finish: the run must stop because its launcher went, not on its own.
  const big = join(dir, 'tp12.json');
  writeFileSync(big, JSON.stringify({ model: 'two-phase', resourceManagers: 12, maxSeconds: 120 }));

  /** The pid of the txcheck process itself (below npx and its shell), once it runs. */
  function txcheckPid(command: string): number | undefined {
    const ps = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
    const line = ps
      .split('\n')
      .find((l) => l.includes(big) && l.includes(command) && /^\s*\d+ node \S*txcheck /.test(l));
    return line === undefined ? undefined : Number(line.trim().split(' ')[0]);
  }

  // A process that has exited but is not reaped yet (a zombie) is gone: once npx went, its reaper

  async function until<T>(f: () => T | undefined, ms: number): Promise<T | undefined> {
    const end = performance.now() + ms;
    for (;;) {
      const v = f();
      if (v !== undefined || performance.now() > end) return v;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it.each([
    ['check', 'SIGTERM'],
    ['check', 'SIGKILL'],
    ['explore', 'SIGKILL'],
  ] as const)(
    'npx txcheck %s stops within 2 s of %s to npx',
    async (command, signal) => {
      // One search thread: the stop measured is the launcher's going, not a pool's shutdown.
      const more =
        command === 'check' ? ['--workers', '1'] : ['--port', String(20000 + (process.pid % 20000))];
      const npx = spawn('npx', ['--offline', 'txcheck', command, big, ...more], {
        cwd: app,
        env,
        stdio: 'ignore',
      });
      const pid = await until(() => txcheckPid(command), 20_000);
      expect(pid).toBeTypeOf('number');
      // Let it get going (a search under way, a server listening).
      await new Promise((resolve) => setTimeout(resolve, 1000));
      npx.kill(signal);
      const stopped = await until(() => (isRunning(pid!) ? undefined : true), 2000);
      if (stopped === undefined) process.kill(pid!, 'SIGKILL');
      expect(stopped).toBe(true);
    },
    40_000,
  );
});
