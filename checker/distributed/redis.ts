// The Redis server a distributed run meets on: its address from --redis, and a first look that
// it answers, so that a wrong address is one line at once rather than endless reconnecting.
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

/** Throws an InputError unless a Redis server answers at `address` within CONNECT_TIMEOUT_MS. */
export async function checkReachable(address: RedisAddress, source: string, option: string): Promise<void> {
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
  try {
    await client.connect();
    await client.ping();
  } catch (e) {
    const why = failure ?? (e as NodeJS.ErrnoException);
    throw new InputError(
      source,
      option,
      `a Redis server that answers within ${CONNECT_TIMEOUT_MS / 1000} s`,
      `${why.code ?? why.message} at ${address.host}:${address.port}`,
    );
  } finally {
    client.disconnect();
  }
}

/** How long a run's coordinator waits for Redis to come back before it gives up. */
export const LOST_AFTER_MS = 5000;

/** The coordinator lost Redis for longer than LOST_AFTER_MS. */
export class RedisLost extends Error {
  constructor(readonly why: string) {
    super(`lost Redis: ${why}`);
    this.name = 'RedisLost';
  }
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
