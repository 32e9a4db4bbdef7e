// How the command line answers SIGINT and SIGTERM: the first asks the search to stop and report,
// a later one ends the process.

/** A repeated signal within this time is the same request (a terminal and a launcher such as tsx both pass it on). */
const SIGNAL_REPEAT_MS = 1000;

/**
 * SIGINT and SIGTERM ask a search to stop (through a flag the search threads read) so that it can
 * still report what it covered; a signal repeated later ends the process at once.
 */
export class StopOnSignal {
  readonly flag = new Int32Array(new SharedArrayBuffer(4));
  received: NodeJS.Signals | undefined;
  private at = 0;
  private readonly handler = (signal: NodeJS.Signals): void => {
    if (this.received === undefined) {
      this.received = signal;
      this.at = performance.now();
      Atomics.store(this.flag, 0, 1);
    } else if (performance.now() - this.at > SIGNAL_REPEAT_MS) {
      this.release();
      process.kill(process.pid, signal);
    }
  };

  constructor() {
    process.on('SIGINT', this.handler);
    process.on('SIGTERM', this.handler);
  }

  release(): void {
    process.off('SIGINT', this.handler);
    process.off('SIGTERM', this.handler);
  }
}
