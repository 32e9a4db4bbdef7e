// A TCP proxy in front of one broker's listener that reads Kafka's request frames, so that the
// driver can hold, delay, release or drop single requests: the client's EndTxn or Produce, or,
// with the broker advertising the proxy as its inter-broker address, the coordinator's
// WriteTxnMarkers and a leader's verifying AddPartitionsToTxn.
//
// A Kafka connection answers its requests in order, so a held request holds the requests behind
// it on the same connection too; the answers flow back untouched. Dropping a request closes its
// connection as well: a client that never gets an answer, and no later one out of order, sees
// what a lost request and its timeout give it. A held request whose sender times it out and
// closes the connection still reaches the broker when released: a late first copy.
import { type AddressInfo, type Server, type Socket, connect, createServer } from 'node:net';
import { parseAddress } from './driver/connection.ts';

/** The request header fields every version has: API key, its version, the correlation id. */
export interface RequestInfo {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  /** The proxy's number for the client connection the request came on (from 1). */
  readonly connection: number;
}

export interface HeldRequest extends RequestInfo {
  /** Forwards the request, and whatever waits behind it on its connection. */
  release(): void;
  /** Discards the request and closes its connection. */
  drop(): void;
}

/** What to do with the requests a rule matches; `once` (the default) retires the rule on its first match. */
export interface Rule {
  readonly apiKey: number;
  readonly match?: (request: RequestInfo) => boolean;
  readonly once?: boolean;
}

const FRAME_HEADER = 4;
/** Size, API key, API version and correlation id: the bytes the proxy reads of a request. */
const REQUEST_PREFIX = FRAME_HEADER + 8;

class ProxiedConnection {
  private received: Buffer = Buffer.alloc(0);
  private readonly queue: { frame: Buffer; info: RequestInfo }[] = [];
  private held = false;
  private clientGone = false;
  private readonly upstream: Socket;

  constructor(
    private readonly proxy: KafkaProxy,
    readonly id: number,
    private readonly client: Socket,
    upstreamAddress: string,
  ) {
    const { host, port } = parseAddress(upstreamAddress);
    this.upstream = connect({ host, port });
    for (const socket of [client, this.upstream]) socket.setNoDelay(true);
    this.upstream.on('error', () => this.close());
    this.upstream.on('close', () => this.close());
    // A sender that gives up on its connection does not take back the bytes already on their
    // way: while a request is held, the closed client's requests still reach the broker when
    // released (a late first copy), and their answers go nowhere.
    const clientGone = () => (this.held ? (this.clientGone = true) : this.close());
    client.on('error', clientGone);
    client.on('close', clientGone);
    this.upstream.on('data', (chunk: Buffer) => {
      if (this.clientGone) this.upstream.end();
      else client.write(chunk);
    });
    client.on('data', (chunk: Buffer) => this.onRequestBytes(chunk));
  }

  private onRequestBytes(chunk: Buffer): void {
    this.received = this.received.length === 0 ? chunk : Buffer.concat([this.received, chunk]);
    while (this.received.length >= FRAME_HEADER) {
      const end = FRAME_HEADER + this.received.readInt32BE(0);
      if (this.received.length < end) break;
      const frame = this.received.subarray(0, end);
      this.received = this.received.subarray(end);
      if (frame.length < REQUEST_PREFIX) {
        this.close();
        return;
      }
      const info = {
        apiKey: frame.readInt16BE(4),
        apiVersion: frame.readInt16BE(6),
        correlationId: frame.readInt32BE(8),
        connection: this.id,
      };
      this.proxy.count(info);
      this.queue.push({ frame, info });
    }
    this.forward();
  }

  /** Sends the queued requests in order up to the first one a rule holds. */
  private forward(): void {
    while (!this.held && this.queue.length > 0) {
      const { frame, info } = this.queue[0]!;
      if (this.proxy.holds(info)) {
        this.held = true;
        this.proxy.hold({
          ...info,
          release: () => {
            if (!this.held || this.queue[0]?.info !== info) return;
            this.held = false;
            this.queue.shift();
            this.upstream.write(frame);
            this.forward();
          },
          drop: () => this.close(),
        });
        return;
      }
      this.queue.shift();
      this.upstream.write(frame);
    }
  }

  close(): void {
    this.queue.length = 0;
    this.client.destroy();
    this.upstream.destroy();
    this.proxy.forget(this);
  }
}

export class KafkaProxy {
  private readonly connections = new Set<ProxiedConnection>();
  private readonly rules = new Set<Rule>();
  private readonly waiting: HeldRequest[] = [];
  private readonly watchers = new Set<{ rule: Rule; resolve: (held: HeldRequest) => void }>();
  private upstream: string | undefined;
  private lastConnection = 0;
  /** Requests seen, by API key. */
  readonly seen = new Map<number, number>();

  private constructor(
    private readonly server: Server,
    /** 127.0.0.1:PORT the proxy listens on. */
    readonly address: string,
  ) {}

  /**
   * A proxy listening on a free port of 127.0.0.1. Its upstream may be given later (a broker that
   * must advertise the proxy's address is started after it); connections wait for it.
   */
  static async start(upstream?: string): Promise<KafkaProxy> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const proxy = new KafkaProxy(server, `127.0.0.1:${port}`);
    // Attached in the same turn as listen's callback: no connection can come before it.
    server.on('connection', (client: Socket) => proxy.onClient(client));
    if (upstream !== undefined) proxy.setUpstream(upstream);
    return proxy;
  }

  /** Clients that came before the upstream was known. */
  private readonly pendingClients: Socket[] = [];

  private onClient(client: Socket): void {
    if (this.upstream === undefined) this.pendingClients.push(client);
    else this.accept(client);
  }

  /** Where the proxy forwards to; connections that came before are forwarded from now. */
  setUpstream(address: string): void {
    this.upstream = address;
    for (const client of this.pendingClients.splice(0)) this.accept(client);
  }

  private accept(client: Socket): void {
    this.connections.add(new ProxiedConnection(this, ++this.lastConnection, client, this.upstream!));
  }

  /** Holds the next request (every request, with `once: false`) that `rule` matches; a function that retires the rule. */
  hold(rule: Rule): () => void;
  /** Called by a connection: a request is held. */
  hold(held: HeldRequest): void;
  hold(x: Rule | HeldRequest): (() => void) | void {
    if (!('release' in x)) {
      this.rules.add(x);
      return () => void this.rules.delete(x);
    }
    for (const w of this.watchers)
      if (w.rule.apiKey === x.apiKey) {
        this.watchers.delete(w);
        w.resolve(x);
        return;
      }
    this.waiting.push(x);
  }

  /** Whether a rule holds `request`; a rule of one match is retired by it. */
  holds(request: RequestInfo): boolean {
    for (const rule of this.rules) {
      if (rule.apiKey !== request.apiKey || (rule.match !== undefined && !rule.match(request))) continue;
      if (rule.once !== false) this.rules.delete(rule);
      return true;
    }
    return false;
  }

  /** The next request held with API key `apiKey`: one held already, or the next to be, within `timeoutMs`. */
  nextHeld(apiKey: number, timeoutMs = 30_000): Promise<HeldRequest> {
    const at = this.waiting.findIndex((h) => h.apiKey === apiKey);
    if (at >= 0) return Promise.resolve(this.waiting.splice(at, 1)[0]!);
    return new Promise((resolve, reject) => {
      const watcher = {
        rule: { apiKey },
        resolve: (held: HeldRequest) => {
          clearTimeout(timer);
          resolve(held);
        },
      };
      const timer = setTimeout(() => {
        this.watchers.delete(watcher);
        reject(new Error(`no request of API key ${apiKey} was held within ${timeoutMs} ms`));
      }, timeoutMs);
      this.watchers.add(watcher);
    });
  }

  count(request: RequestInfo): void {
    this.seen.set(request.apiKey, (this.seen.get(request.apiKey) ?? 0) + 1);
  }

  forget(connection: ProxiedConnection): void {
    this.connections.delete(connection);
  }

  /** Stops listening and closes every connection, held requests and all. */
  async close(): Promise<void> {
    this.rules.clear();
    for (const client of this.pendingClients.splice(0)) client.destroy();
    for (const connection of [...this.connections]) connection.close();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
