// One TCP connection to a broker: size-prefixed frames, request and response headers, answers
// matched to requests by correlation id. The caller chooses which connection carries what.
import { type Socket, connect } from 'node:net';
import { type Api, requestHeaderVersion, responseHeaderVersion } from './api.ts';
import { Reader, Writer } from './codec.ts';
import { ApiVersions, type ApiVersionRange, type ApiVersionsResponse } from './messages.ts';

/** host:port → its parts; only a numeric port is taken. */
export function parseAddress(address: string): { host: string; port: number } {
  const m = /^(.+):(\d+)$/.exec(address);
  if (m === null) throw new Error(`not a HOST:PORT address: ${address}`);
  return { host: m[1]!, port: Number(m[2]) };
}

/** The broker does not speak the version the driver was asked to send. */
export class UnsupportedVersionError extends Error {}

/** The connection closed (or was closed) before the answer came. */
export class ConnectionClosedError extends Error {}

interface Pending {
  readonly api: Api<unknown, unknown>;
  readonly version: number;
  readonly resolve: (response: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

export interface ConnectionOptions {
  readonly clientId?: string;
  /** How long to wait for an answer, per request. */
  readonly requestTimeoutMs?: number;
  /** Ask ApiVersions on connect and refuse versions the broker does not speak (the default). */
  readonly negotiate?: boolean;
}

export class Connection {
  private nextCorrelationId = 0;
  private readonly pending = new Map<number, Pending>();
  private received: Buffer = Buffer.alloc(0);
  private closedBy: Error | undefined;
  /** The broker's versions by API key, once negotiated. */
  private ranges: ReadonlyMap<number, ApiVersionRange> | undefined;
  /** The ApiVersions answer of the negotiation, if there was one. */
  apiVersions: ApiVersionsResponse | undefined;
  /** Settles when the socket has closed, for whatever reason. */
  readonly closed: Promise<void>;

  private constructor(
    private readonly socket: Socket,
    readonly address: string,
    private readonly options: ConnectionOptions,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (e) => this.fail(new ConnectionClosedError(`connection to ${address}: ${e.message}`)));
    this.closed = new Promise((resolve) =>
      socket.on('close', () => {
        this.fail(new ConnectionClosedError(`connection to ${address} closed`));
        resolve();
      }),
    );
  }

  /** Connects to `host:port` and, unless told not to, negotiates versions with ApiVersions. */
  static async open(address: string, options: ConnectionOptions = {}): Promise<Connection> {
    const { host, port } = parseAddress(address);
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = connect({ host, port });
      s.once('connect', () => {
        s.off('error', reject);
        resolve(s);
      });
      s.once('error', reject);
    });
    const connection = new Connection(socket, address, options);
    if (options.negotiate !== false) {
      const answer = await connection.send(ApiVersions, {
        clientSoftwareName: 'txcheck-referee',
        clientSoftwareVersion: '0',
      });
      if (answer.error !== 'NONE') {
        connection.close();
        throw new UnsupportedVersionError(`${address} answered ApiVersions with ${answer.error}`);
      }
      connection.apiVersions = answer;
      connection.ranges = new Map(answer.apiKeys.map((k) => [k.apiKey, k]));
    }
    return connection;
  }

  /** Whether the broker speaks `version` of `api` (true before negotiation). */
  supports(api: Api<unknown, unknown>, version: number): boolean {
    if (this.ranges === undefined) return true;
    const range = this.ranges.get(api.key);
    return range !== undefined && range.minVersion <= version && version <= range.maxVersion;
  }

  /** Sends one request now and resolves with its decoded answer. */
  send<Request, Response>(
    api: Api<Request, Response>,
    request: Request,
    version: number = api.versions[1],
  ): Promise<Response> {
    if (this.closedBy !== undefined) return Promise.reject(this.closedBy);
    const [lowest, highest] = api.versions;
    if (version < lowest || version > highest)
      return Promise.reject(
        new RangeError(`the driver writes ${api.name} v${lowest}-v${highest}, not v${version}`),
      );
    if (!this.supports(api, version)) {
      const range = this.ranges?.get(api.key);
      const speaks = range === undefined ? 'no versions' : `v${range.minVersion}-v${range.maxVersion}`;
      return Promise.reject(
        new UnsupportedVersionError(`${this.address} speaks ${api.name} ${speaks}, not v${version}`),
      );
    }
    const correlationId = this.nextCorrelationId++;
    const w = new Writer(version >= api.flexibleFrom);
    w.int32(0); // the frame's size, filled in below
    w.int16(api.key).int16(version).int32(correlationId);
    // The client id keeps its two-byte length even in header v2.
    const clientId = Buffer.from(this.options.clientId ?? 'txcheck-referee', 'utf8');
    w.int16(clientId.length).raw(clientId);
    if (requestHeaderVersion(api, version) >= 2) w.unsignedVarint(0);
    api.encode(w, request, version);
    const frame = Buffer.from(w.bytes());
    frame.writeInt32BE(frame.length - 4, 0);
    return new Promise<Response>((resolve, reject) => {
      const timeoutMs = this.options.requestTimeoutMs ?? 30_000;
      const timer = setTimeout(() => {
        this.pending.delete(correlationId);
        reject(new Error(`no answer to ${api.name} v${version} from ${this.address} in ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(correlationId, {
        api: api as Api<unknown, unknown>,
        version,
        resolve: resolve as (response: unknown) => void,
        reject,
        timer,
      });
      this.socket.write(frame);
    });
  }

  /** Closes the socket; requests still waiting fail with ConnectionClosedError. */
  close(): void {
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    this.received = this.received.length === 0 ? chunk : Buffer.concat([this.received, chunk]);
    while (this.received.length >= 4) {
      const size = this.received.readInt32BE(0);
      if (this.received.length < 4 + size) return;
      const frame = this.received.subarray(4, 4 + size);
      this.received = this.received.subarray(4 + size);
      this.onFrame(frame);
    }
  }

  private onFrame(frame: Buffer): void {
    const correlationId = frame.readInt32BE(0);
    const pending = this.pending.get(correlationId);
    if (pending === undefined) return; // an answer that came after its request timed out
    this.pending.delete(correlationId);
    clearTimeout(pending.timer);
    const { api, version } = pending;
    try {
      const r = new Reader(frame.subarray(4), version >= api.flexibleFrom);
      if (responseHeaderVersion(api, version) >= 1) r.struct(() => undefined);
      const response = api.decode(r, version);
      if (r.remaining() !== 0) throw new RangeError(`${r.remaining()} bytes left over`);
      pending.resolve(response);
    } catch (e) {
      pending.reject(new Error(`cannot read the ${api.name} v${version} answer: ${(e as Error).message}`));
    }
  }

  private fail(error: Error): void {
    this.closedBy ??= error;
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(error);
      this.pending.delete(id);
    }
  }
}
