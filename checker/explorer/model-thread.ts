// The explorer's model thread, seen from the server: API calls go to it one at a time, and an
// answer that takes longer than its bound ends the thread (a variant's handler that never
// returns cannot be stopped any other way) and starts a fresh one for the next call.
import { InputError } from '../engine/input.ts';
import { WorkerHandle } from '../engine/parallel/handle.ts';
import type { ApiAnswer, ApiRequest } from './answers.ts';

const explorerWorker = new URL('./explorer-worker.ts', import.meta.url);
/** Past the bound, how long a search that looks at its clock between states has to answer itself. */
const GRACE_MS = 2000;

export class ModelThread {
  private handle: WorkerHandle;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly setup: { readonly file: string; readonly outDir: string },
    private readonly maxSeconds: number,
  ) {
    this.handle = new WorkerHandle(explorerWorker, setup);
  }

  /** The answer to one API call, after the calls before it; the bound counts from its own start. */
  ask(route: string, body: unknown): Promise<ApiAnswer> {
    const run = (): Promise<ApiAnswer> => this.bounded({ route, body, maxSeconds: this.maxSeconds });
    const answer = this.queue.then(run, run);
    this.queue = answer.catch(() => {});
    return answer;
  }

  close(): Promise<number> {
    this.closed = true;
    return this.handle.terminate();
  }

  private async bounded(request: ApiRequest): Promise<ApiAnswer> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.maxSeconds * 1000 + GRACE_MS);
    });
    try {
      const answer = await Promise.race([this.handle.request<ApiAnswer>(request), late]);
      if (answer !== 'late') return answer;
      this.restart();
      return {
        status: 503,
        json: {
          error: `the model did not answer within ${this.maxSeconds} s (explore --max-seconds), so its thread was ended and a new one started: a variant's handler that never returns?`,
        },
      };
    } catch (e) {
      // Bad input is the spec's, and a fresh thread would only say it again.
      if (!(e instanceof InputError)) this.restart();
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  private restart(): void {
    void this.handle.terminate();
    // A thread started after close would keep the process alive.
    if (this.closed) return;
    this.handle = new WorkerHandle(explorerWorker, this.setup);
  }
}
