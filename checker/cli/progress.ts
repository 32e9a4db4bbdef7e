// The line that shows a search's progress on a terminal, redrawn in place on the error channel.
import type { Progress } from '../engine/search.ts';
import type { Io } from './io.ts';
import { count } from './summary.ts';

export class ProgressLine {
  private shown = false;
  constructor(private readonly io: Io) {}

  show = (p: Progress): void => {
    this.shown = true;
    this.io.err(
      `\r${count(p.distinctStates)} distinct, ${count(p.statesGenerated)} generated, queue ${count(p.queue)}, ` +
        `depth ${p.depth}, ${count(p.statesPerSecond)} states/s, ${p.seconds.toFixed(0)} s\x1b[K`,
    );
  };

  clear(): void {
    if (this.shown) this.io.err('\r\x1b[K');
  }

  /** A line of news, below which the progress line is drawn again. */
  say = (line: string): void => this.io.err(`${this.shown ? '\r\x1b[K' : ''}txcheck: ${line}\n`);
}
