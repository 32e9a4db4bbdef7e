// A TCP proxy in front of one broker's listener that reads Kafka's framing, so that the driver
// can hold, delay, release or drop single requests (or answers): a client's EndTxn or Produce,
// or, with the broker advertising the proxy as its own address, the WriteTxnMarkers and the
// verifying AddPartitionsToTxn other brokers (and the broker itself) send it. One proxy serves a
// single broker (broker.ts's `advertise`); a cluster (cluster.ts) puts one before each node.
//
// A Kafka connection answers its requests in order, so a held frame holds the frames behind it on
// the same connection too. A held request whose sender times it out and closes the connection
// still reaches the broker when released: a late first copy.
import { type Server, type Socket, connect, createServer } from 'node:net';
import { Reader } from './driver/codec.ts';
import { parseAddress } from './driver/connection.ts';

/** The request header every API shares (RequestHeader.json: key, version, correlation id, client id). */
export interface RequestHeader {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly clientId: string | null;
}

/** Size, API key, API version and correlation id: the least of a request the proxy reads. */
const REQUEST_PREFIX = 8;

/** Reads the header of a request frame (the bytes after its size); undefined when too short. */
export function readRequestHeader(frame: Buffer): RequestHeader | undefined {
  if (frame.length < REQUEST_PREFIX) return undefined;
  // The client id keeps its two-byte length in every header version.
  const length = frame.length >= 10 ? frame.readInt16BE(8) : -1;
  return {
    apiKey: frame.readInt16BE(0),
    apiVersion: frame.readInt16BE(2),
    correlationId: frame.readInt32BE(4),
    clientId: length < 0 || 10 + length > frame.length ? null : frame.toString('utf8', 10, 10 + length),
  };
}

/**
 * A reader of a request frame's body, past its header: header v2 (a flexible version) ends with
 * tagged fields, v1 does not.
 */
export function requestBody(frame: Buffer, flexible: boolean): Reader {
  const clientIdLength = frame.readInt16BE(8);
  const rest = frame.subarray(10 + Math.max(clientIdLength, 0));
  const r = new Reader(rest, flexible);
  if (flexible) r.struct(() => undefined);
  return r;
}

/** A broker's own clients name themselves `broker-<id>-...` (markers, verification, fetchers). */
export function sourceNode(clientId: string | null): number | null {
  const m = /^broker-(\d+)-/.exec(clientId ?? '');
  return m === null ? null : Number(m[1]);
}

/** One frame passing the proxy, with where it goes. */
export interface FrameInfo {
  readonly direction: 'request' | 'response';
  /** The request's header (for an answer, its request's). */
  readonly header: RequestHeader;
  /** The node whose proxy the frame passes. */
  readonly node: number;
  /** The node that sent the request, when a broker did; null for other clients. */
  readonly from: number | null;
  /** The proxied connection, numbered per proxy from 1. */
  readonly connection: number;
  /** The frame without its size. */
  readonly body: Buffer;
}

/** Matches the requests of one API, and of them those `match` takes. */
export const requestOf =
  (apiKey: number, match?: (f: FrameInfo) => boolean) =>
  (f: FrameInfo): boolean =>
    f.direction === 'request' && f.header.apiKey === apiKey && (match === undefined || match(f));

/**
 * `drop` discards the frame alone and the connection goes on: a frame lost on a link that stays
 * up, which its sender finds out by its own time-out.
 */
export type Action =
  { readonly kind: 'hold' } | { readonly kind: 'drop' } | { readonly kind: 'delay'; readonly ms: number };

export interface Rule {
  readonly match: (frame: FrameInfo) => boolean;
  readonly action: Action;
  /** How many frames the rule takes before it lapses; unbounded when absent. */
  readonly times?: number;
}

export type Settled = 'released' | 'dropped' | 'lost';

/** A frame the proxy is holding: it goes on when released, or never when dropped. */
export interface Held {
  readonly frame: FrameInfo;
  /** Settles once released, dropped, or lost with its connection. */
  readonly settled: Promise<Settled>;
  release(): void;
  /**
   * Discards the frame. With `sever`, the connection's client side is closed too: a client that
   * gets no answer, and no later one out of order, sees what a lost request and its time-out
   * give it.
   */
  drop(options?: { readonly sever?: boolean }): void;
}

/** A frame in its connection's queue: it waits until those before it went on. */
interface Queued {
  readonly bytes: Buffer;
  gate: 'open' | 'held' | 'dropped';
}

/** One direction of a proxied connection: frames read from `from`, written in order to `to`. */
class Lane {
  private received: Buffer = Buffer.alloc(0);
  readonly queue: Queued[] = [];

  constructor(
    readonly direction: 'request' | 'response',
    private readonly to: () => Socket | undefined,
    private readonly onFrame: (lane: Lane, body: Buffer, item: Queued) => void,
  ) {}

  push(chunk: Buffer): void {
    this.received = this.received.length === 0 ? chunk : Buffer.concat([this.received, chunk]);
    while (this.received.length >= 4) {
      const size = this.received.readInt32BE(0);
      if (this.received.length < 4 + size) return;
      const bytes = this.received.subarray(0, 4 + size);
      this.received = this.received.subarray(4 + size);
      const item: Queued = { bytes, gate: 'open' };
      this.queue.push(item);
      this.onFrame(this, bytes.subarray(4), item);
    }
    this.flush();
  }

  /** Writes every frame at the head of the queue that is no longer held. */
  flush(): void {
    while (this.queue.length > 0 && this.queue[0]!.gate !== 'held') {
      const item = this.queue.shift()!;
      const socket = this.to();
      if (item.gate === 'open' && socket !== undefined && !socket.destroyed) socket.write(item.bytes);
    }
  }

  get holding(): boolean {
    return this.queue.some((q) => q.gate === 'held');
  }
}

export interface ProxyOptions {
  /** The node.id of the broker behind the proxy, named in its frames; 1 when absent. */
  readonly node?: number;
  /** The port to listen on; any free one when absent. */
  readonly port?: number;
}

/** A proxy in front of one broker: it listens on its own port and forwards to the broker's. */
export class KafkaProxy {
  private readonly rules: { rule: Rule; left: number }[] = [];
  private readonly heldFrames = new Set<Held>();
  private readonly sockets = new Set<Socket>();
  private readonly waiters: { match: (f: FrameInfo) => boolean; resolve: (h: Held) => void }[] = [];
  /** Per connection: ends the broker's side once the client left and nothing is held. */
  private readonly lanes = new Map<number, () => void>();
  private readonly byItem = new Map<Queued, { held: Held; settle: (how: Settled) => void }>();
  private connections = 0;
  private target: { host: string; port: number } | undefined;
  /** Clients that came before the upstream was known. */
  private readonly pendingClients: Socket[] = [];
  /** The client side of each open connection. */
  private readonly clients = new Map<number, Socket>();
  /** Connections whose client closed them; `sever` adds its own. */
  readonly closedByClient = new Set<number>();
  readonly severed = new Set<number>();
  /** Requests seen, and answers, by API key: what a test or a run reports. */
  readonly seen = new Map<number, number>();
  readonly answered = new Map<number, number>();
  private markClosed!: () => void;
  /** Settles once the proxy is closed: its broker is cut off from then on. */
  readonly closed = new Promise<void>((resolve) => (this.markClosed = resolve));

  private constructor(
    readonly node: number,
    private readonly server: Server,
    readonly port: number,
  ) {
    // Attached in the same turn as listen's callback: no connection can come before it.
    server.on('connection', (client) => {
      this.track(client);
      if (this.target === undefined) this.pendingClients.push(client);
      else this.accept(client);
    });
  }

  /**
   * A proxy listening on 127.0.0.1 for the broker at `upstream` (HOST:PORT). The upstream may be
   * given later, with setUpstream (a broker that advertises the proxy starts after it);
   * connections wait for it.
   */
  static async start(upstream?: string, options: ProxyOptions = {}): Promise<KafkaProxy> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    const proxy = new KafkaProxy(options.node ?? 1, server, (server.address() as { port: number }).port);
    if (upstream !== undefined) proxy.setUpstream(upstream);
    return proxy;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Where the proxy forwards to; connections that came before are forwarded from now. */
  setUpstream(address: string): void {
    this.target = parseAddress(address);
    for (const client of this.pendingClients.splice(0)) if (!client.destroyed) this.accept(client);
  }

  /** Takes frames matching `rule` from now on; returns a function that lifts the rule. */
  add(rule: Rule): () => void {
    const entry = { rule, left: rule.times ?? Infinity };
    this.rules.push(entry);
    return () => {
      const at = this.rules.indexOf(entry);
      if (at >= 0) this.rules.splice(at, 1);
    };
  }

  /** Frames held now, oldest first. */
  held(): Held[] {
    return [...this.heldFrames];
  }

  /**
   * The first held frame matching `which` (a request's API key, or a test of the frame), once
   * there is one; rejects after `timeoutMs`.
   */
  nextHeld(which: number | ((f: FrameInfo) => boolean), timeoutMs = 30_000): Promise<Held> {
    const match = typeof which === 'number' ? requestOf(which) : which;
    const now = this.held().find((h) => match(h.frame));
    if (now !== undefined) return Promise.resolve(now);
    return new Promise((resolve, reject) => {
      const waiter = {
        match,
        resolve: (h: Held) => {
          clearTimeout(timer);
          resolve(h);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(
          new Error(
            typeof which === 'number'
              ? `no request of API key ${which} was held within ${timeoutMs} ms`
              : `node ${this.node}'s proxy held no matching frame in ${timeoutMs} ms`,
          ),
        );
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /** Releases every held frame and lifts every rule: the proxy forwards everything again. */
  releaseAll(): void {
    this.rules.length = 0;
    for (const h of this.held()) h.release();
  }

  /**
   * Closes a connection's client side, as a failed link would: the client sees a disconnection,
   * while the frames held on it stay held, to be released to the broker or dropped later.
   */
  sever(connection: number): void {
    this.severed.add(connection);
    this.clients.get(connection)?.destroy();
  }

  /** Stops listening and closes every connection; held frames are lost. */
  async close(): Promise<void> {
    this.markClosed();
    this.rules.length = 0;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.setNoDelay(true);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  }

  private accept(client: Socket): void {
    const connection = ++this.connections;
    // Node queues what is written before the broker's side connects.
    const upstream = connect(this.target!);
    this.track(upstream);
    let clientGone = false;
    /** Correlation id → request header, to name each answer by its request. */
    const asked = new Map<number, RequestHeader>();

    const onFrame = (lane: Lane, body: Buffer, item: Queued): void => {
      let header: RequestHeader;
      if (lane.direction === 'request') {
        const read = readRequestHeader(body);
        if (read === undefined) {
          // Not a Kafka request: the broker would close the connection on it too.
          client.destroy();
          return;
        }
        header = read;
        asked.set(header.correlationId, header);
      } else {
        if (body.length < 4) return; // too short to name its request: pass it on
        const correlationId = body.readInt32BE(0);
        const request = asked.get(correlationId);
        if (request === undefined) return; // not a request this proxy saw: pass it on
        asked.delete(correlationId);
        header = request;
      }
      const frame: FrameInfo = {
        direction: lane.direction,
        header,
        node: this.node,
        from: sourceNode(header.clientId),
        connection,
        body,
      };
      const counts = lane.direction === 'request' ? this.seen : this.answered;
      counts.set(header.apiKey, (counts.get(header.apiKey) ?? 0) + 1);
      const entry = this.rules.find((e) => e.left > 0 && e.rule.match(frame));
      if (entry === undefined) return;
      if (--entry.left === 0) this.rules.splice(this.rules.indexOf(entry), 1);
      const { action } = entry.rule;
      if (action.kind === 'drop') {
        item.gate = 'dropped';
        return;
      }
      item.gate = 'held';
      const held = this.hold(frame, item, lane);
      if (action.kind === 'delay') setTimeout(() => held.release(), action.ms).unref();
    };

    const requests = new Lane('request', () => upstream, onFrame);
    const answers = new Lane('response', () => (clientGone ? undefined : client), onFrame);
    client.on('data', (chunk: Buffer) => requests.push(chunk));
    this.clients.set(connection, client);
    client.on('close', () => {
      clientGone = true;
      this.clients.delete(connection);
      if (!this.severed.has(connection)) this.closedByClient.add(connection);
      // A request held past its sender's time-out may still reach the broker when released.
      if (!requests.holding) upstream.end();
    });
    this.lanes.set(connection, () => {
      if (clientGone && !requests.holding) upstream.end();
    });

    upstream.on('data', (chunk: Buffer) => answers.push(chunk));
    upstream.on('close', () => {
      for (const lane of [requests, answers])
        for (const item of lane.queue) if (item.gate === 'held') this.lose(item);
      this.lanes.delete(connection);
      client.destroy();
    });
  }

  private hold(frame: FrameInfo, item: Queued, lane: Lane): Held {
    let settle!: (how: Settled) => void;
    const settled = new Promise<Settled>((resolve) => (settle = resolve));
    const finish = (gate: 'open' | 'dropped', how: 'released' | 'dropped'): boolean => {
      if (item.gate !== 'held') return false;
      item.gate = gate;
      this.heldFrames.delete(held);
      this.byItem.delete(item);
      settle(how);
      lane.flush();
      this.lanes.get(frame.connection)?.();
      return true;
    };
    const held: Held = {
      frame,
      settled,
      release: () => void finish('open', 'released'),
      drop: (options) => {
        if (finish('dropped', 'dropped') && options?.sever === true) this.sever(frame.connection);
      },
    };
    this.heldFrames.add(held);
    this.byItem.set(item, { held, settle });
    const at = this.waiters.findIndex((w) => w.match(frame));
    if (at >= 0) this.waiters.splice(at, 1)[0]!.resolve(held);
    return held;
  }

  private lose(item: Queued): void {
    const entry = this.byItem.get(item);
    if (entry === undefined) return;
    item.gate = 'dropped';
    this.heldFrames.delete(entry.held);
    this.byItem.delete(item);
    entry.settle('lost');
  }
}
