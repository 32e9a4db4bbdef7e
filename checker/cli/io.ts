// What a command writes to and what it returns: the output channels, the exit codes, and the
// one line an internal error is reported as.
import { TOOL } from '../version.ts';

export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** True when progress lines can be redrawn in place on the error channel. */
  readonly errIsTTY: boolean;
  /** Set when a signal asked the run to stop: a flag the search threads read, and the signal's name. */
  readonly stop?: { readonly flag: Int32Array; readonly received: string | undefined };
}

export const ExitCode = { Ok: 0, Violation: 1, BadInput: 2, Incomplete: 3, Internal: 4 } as const;

/** A failure that is not the input's fault, in one line: a bug, or a limit of the machine. */
export function internalErrorLine(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  const first = (e instanceof Error ? e.message : String(e)).split('\n')[0]!;
  if (code === 'ERR_WORKER_OUT_OF_MEMORY' || /out of memory/i.test(first)) {
    return `${TOOL}: out of memory: ${first}; bound the run (--max-states, --max-depth) or give Node more heap (NODE_OPTIONS=--max-old-space-size=MB)`;
  }
  return `${TOOL}: internal error: ${first} (exit 4; --debug prints the stack trace)`;
}

/** The stack of an error; one from a worker carries the worker's stack as its message. */
export function stackOf(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  return e.message.includes('\n    at ') ? e.message : (e.stack ?? e.message);
}
