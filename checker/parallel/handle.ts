// A worker thread started on a TypeScript module (through start.mjs), with promise-based requests.
import { Worker } from 'node:worker_threads';

const start = new URL('./start.mjs', import.meta.url);

/** A worker thread running the TypeScript module `entry`, answering one request at a time. */
export class WorkerHandle {
  private readonly worker: Worker;
  private pending: { resolve: (v: unknown) => void; reject: (e: unknown) => void } | undefined;
  private failure: unknown;

  constructor(entry: URL, setup: unknown) {
    this.worker = new Worker(start, { argv: [entry.href], workerData: setup });
    this.worker.on('message', (m) => this.settle((p) => p.resolve(m)));
    this.worker.on('error', (e) => this.fail(e));
    this.worker.on('exit', (code) => this.fail(new Error(`parallel search: a worker exited with code ${code}`)));
  }

  /** Sends `command`, handing over `buffers`, and resolves with the worker's answer. */
  request<T>(command: unknown, buffers: readonly (Int32Array | Uint8Array | null)[] = []): Promise<T> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return new Promise<T>((resolve, reject) => {
      this.pending = { resolve: resolve as (v: unknown) => void, reject };
      this.worker.postMessage(command, buffers.flatMap((b) => (b === null ? [] : [b.buffer as ArrayBuffer])));
    });
  }

  terminate(): Promise<number> {
    this.failure ??= new Error('parallel search: stopped');
    return this.worker.terminate();
  }

  private fail(e: unknown): void {
    this.failure ??= e;
    this.settle((p) => p.reject(e));
  }

  private settle(with_: (p: NonNullable<WorkerHandle['pending']>) => void): void {
    const p = this.pending;
    this.pending = undefined;
    if (p !== undefined) with_(p);
  }
}
