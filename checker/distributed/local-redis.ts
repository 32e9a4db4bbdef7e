// A redis-server of this process's own on 127.0.0.1, saving nothing to disk: what the tests and
// the distributed benchmark run against.
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';

/** A TCP port free on 127.0.0.1 just now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface LocalRedis {
  readonly server: ChildProcess;
  readonly port: number;
  readonly url: string;
  stop(): Promise<void>;
}

/** Starts redis-server on `port` (or a free one), `extra` its further arguments; resolves once it serves. */
export async function startLocalRedis(port?: number, ...extra: string[]): Promise<LocalRedis> {
  port ??= await freePort();
  const server = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extra],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise<void>((resolve) => server.on('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let log = '';
    server.stdout!.on('data', (d) => {
      log += d;
      if (log.includes('Ready to accept connections')) resolve();
    });
    server.on('exit', (code) => reject(new Error(`redis-server exited with code ${code}: ${log}`)));
  });
  const stop = async () => {
    if (server.exitCode === null && server.signalCode === null) server.kill('SIGTERM');
    await exited;
  };
  return { server, port, url: `redis://127.0.0.1:${port}`, stop };
}
