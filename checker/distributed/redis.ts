// The Redis server a distributed run meets on: its address from --redis, and a first look that
// it answers, so that a wrong address is one line at once rather than endless reconnecting; and
// the bound on every later wait for an answer.
import { Redis } from 'ioredis';
import { InputError } from '../engine/input.ts';

export interface RedisAddress {
  readonly host: string;
  readonly port: number;
  /** As the user wrote it, for messages. */
  readonly url: string;
}

const DEFAULT_PORT = 6379;
/** How long a first connection may take before the server counts as unreachable. */
export const CONNECT_TIMEOUT_MS = 3000;

/** Reads `redis://host:port` (the port defaults to 6379); `source` and `option` name where it came from. */
export function redisAddress(text: string, source: string, option: string): RedisAddress {
  const expected = 'a redis://host:port URL';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InputError(source, option, expected, JSON.stringify(text));
  }
  if (url.protocol !== 'redis:' || url.hostname === '')
    throw new InputError(source, option, expected, JSON.stringify(text));
  if (
    url.username !== '' ||
    url.password !== '' ||
    (url.pathname !== '' && url.pathname !== '/') ||
    url.search !== '' ||
    url.hash !== ''
  ) {
    throw new InputError(
      source,
      option,
      `${expected}, with no user, password, database or parameters`,
      JSON.stringify(text),
    );
  }
  // URL keeps the brackets of an IPv6 address, which a socket does not take.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return { host, port: url.port === '' ? DEFAULT_PORT : Number(url.port), url: text };
}

/** The connection options BullMQ takes for `address`; a worker's blocking reads need no retry limit. */
export function connectionOf(address: RedisAddress): {
  host: string;
  port: number;
  maxRetriesPerRequest: null;
  connectTimeout: number;
} {
  return {
    host: address.host,
    port: address.port,
    maxRetriesPerRequest: null,
    connectTimeout: CONNECT_TIMEOUT_MS,
  };
}

/** What a failed first look at a server says of it. */
function describeFailure(e: Error & { code?: string }, where: string): { expected?: string; got: string } {
  if (/^(NOAUTH|WRONGPASS)\b/.test(e.message))
    return {
      expected: 'a Redis server that takes commands without a password (a --redis URL carries none)',
      got: `NOAUTH at ${where}`,
    };
  if (/Unknown RESP type|Protocol error/i.test(e.message))
    return { got: `a server that does not speak Redis's protocol at ${where}` };
  return { got: `${e.code ?? e.message} at ${where}` };
}

/**
 * Throws an InputError unless a Redis server answers at `address` within CONNECT_TIMEOUT_MS,
 * without a password, and keeps every key (a server that may evict keys under memory pressure
 * would lose a run's states without a word).
 */
export async function checkServer(address: RedisAddress, source: string, option: string): Promise<void> {
  const where = `${address.host}:${address.port}`;
  const expected = `a Redis server that answers within ${CONNECT_TIMEOUT_MS / 1000} s`;
  const client = new Redis({
    host: address.host,
    port: address.port,
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  // Without a listener, ioredis reports each failed attempt on stderr.
  let failure: NodeJS.ErrnoException | undefined;
  client.on('error', (e: NodeJS.ErrnoException) => (failure ??= e));
  let memory: string | undefined;
  try {
    memory = await within(
      client.connect().then(() => client.info('memory')),
      CONNECT_TIMEOUT_MS,
    );
  } catch (e) {
    const why = describeFailure(failure ?? (e as NodeJS.ErrnoException), where);
    throw new InputError(source, option, why.expected ?? expected, why.got);
  } finally {
    client.disconnect();
  }
  if (memory === undefined)
    throw new InputError(
      source,
      option,
      expected,
      `no answer at ${where} (it took the connection and said nothing)`,
    );
  const maxmemory = /^maxmemory:(\d+)/m.exec(memory)?.[1];
  const policy = /^maxmemory_policy:(\S+)/m.exec(memory)?.[1];
  if (maxmemory !== undefined && maxmemory !== '0' && policy !== undefined && policy !== 'noeviction')
    throw new InputError(
      source,
      option,
      'a Redis server that never evicts keys (no maxmemory, or maxmemory-policy noeviction)',
      `maxmemory-policy ${policy} with maxmemory ${maxmemory} at ${where}`,
    );
}

/** How long a run's coordinator waits for Redis to come back before it gives up. */
export const LOST_AFTER_MS = 5000;

/** How long any round trip to Redis may take, once a run is under way, before the server counts as not answering. */
export const ANSWER_WITHIN_MS = 15_000;

/** A run cannot go on with its Redis server: lost for longer than LOST_AFTER_MS, not answering, or its keys gone. */
export class RedisLost extends Error {
  constructor(
    readonly why: string,
    readonly expected = 'a Redis server that stays reachable for the whole run',
  ) {
    super(`lost Redis: ${why}`);
    this.name = 'RedisLost';
  }
}

/**
 * What `promise` gives, or undefined when `ms` pass first. A late answer already received counts:
 * the event loop may have been busy, so the decision waits for the pending input to be read.
 */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  let settled = false;
  const watched = promise.finally(() => (settled = true));
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => setImmediate(() => !settled && resolve(undefined)), ms);
  });
  try {
    return await Promise.race([watched, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** What `promise` gives, or a RedisLost naming `where` when it does not come within `ms`. */
export async function answerFrom<T>(promise: Promise<T>, where: string, ms = ANSWER_WITHIN_MS): Promise<T> {
  let answered = false;
  const answer = await within(
    promise.then((value) => {
      answered = true;
      return value;
    }),
    ms,
  );
  if (!answered)
    throw new RedisLost(
      `no answer from ${where} for ${ms / 1000} s`,
      'a Redis server that answers for the whole run',
    );
  return answer as T;
}

/** Whether `promise` settled within `ms`: closing a connection to a Redis that is gone would wait for ever. */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
