// A worker thread started on one of the engine's modules, with promise-based requests; and,
// inside the worker, the loop that answers them.
import { type ResourceLimits, Worker, parentPort } from 'node:worker_threads';
import { InputError } from '../input.ts';

/** An error on its way out of a worker: bad input keeps its fields, so it still reads as one line. */
interface Failure {
  readonly failure: {
    readonly message: string;
    readonly input?: readonly [string, string, string, string | undefined];
  };
}

function isFailure(m: unknown): m is Failure {
  return typeof m === 'object' && m !== null && 'failure' in m;
}

function rebuild({ failure }: Failure): Error {
  return failure.input === undefined ? new Error(failure.message) : new InputError(...failure.input);
}

export interface Reply {
  readonly message: unknown;
  /** Typed arrays handed over rather than copied. */
  readonly transfer?: readonly (Int32Array | Uint8Array | Float64Array | null)[];
}

const buffers = (arrays: readonly (Int32Array | Uint8Array | Float64Array | null)[]) =>
  arrays.flatMap((a) => (a === null ? [] : [a.buffer as ArrayBuffer]));

/** In a worker: answers each request with `answer(request)`, or with the error it throws. */
export function answerRequests<R>(answer: (request: R) => Reply | Promise<Reply>): void {
  const fail = (e: unknown): void => {
    const input = e instanceof InputError ? ([e.file, e.field, e.expected, e.got] as const) : undefined;
    parentPort!.postMessage({
      failure: { message: e instanceof Error ? (e.stack ?? e.message) : String(e), input },
    } satisfies Failure);
  };
  const send = (reply: Reply): void => parentPort!.postMessage(reply.message, buffers(reply.transfer ?? []));
  parentPort!.on('message', (request: R) => {
    let reply: Reply | Promise<Reply>;
    try {
      reply = answer(request);
    } catch (e) {
      fail(e);
      return;
    }
    if (reply instanceof Promise) reply.then(send, fail);
    else send(reply);
  });
}

/** True when this runs as the build's JavaScript (dist/), where every `.ts` module is a `.js` file. */
const built = import.meta.url.endsWith('.js');
/** From the sources, a worker first lets tsx hook it (Node 20 loads no TypeScript by itself). */
const start = new URL('./start.mjs', import.meta.url);

/** A worker thread running the module `entry` (named by its source, `.ts`), answering one request at a time. */
export class WorkerHandle {
  private readonly worker: Worker;
  private pending: { resolve: (v: unknown) => void; reject: (e: unknown) => void } | undefined;
  private failure: unknown;

  constructor(entry: URL, setup: unknown, resourceLimits?: ResourceLimits) {
    const options = { workerData: setup, ...(resourceLimits === undefined ? {} : { resourceLimits }) };
    this.worker = built
      ? new Worker(new URL(entry.href.replace(/\.ts$/, '.js')), options)
      : new Worker(start, { argv: [entry.href], ...options });
    this.worker.on('message', (m) =>
      this.settle((p) => (isFailure(m) ? p.reject(rebuild(m)) : p.resolve(m))),
    );
    this.worker.on('error', (e) => this.fail(e));
    this.worker.on('exit', (code) =>
      this.fail(new Error(`parallel search: a worker exited with code ${code}`)),
    );
  }

  /** Sends `command`, handing over `transfer`, and resolves with the worker's answer. */
  request<T>(
    command: unknown,
    transfer: readonly (Int32Array | Uint8Array | Float64Array | null)[] = [],
  ): Promise<T> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return new Promise<T>((resolve, reject) => {
      this.pending = { resolve: resolve as (v: unknown) => void, reject };
      this.worker.postMessage(command, buffers(transfer));
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
