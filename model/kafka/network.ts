// In-flight requests and responses. A channel is one direction of one connection: FIFO inside,
// no order between channels. A client that times out a request opens a new connection, so the
// retry and the old copy travel on different channels and may arrive in either order.
import {
  type Api,
  type Channel,
  type Message,
  type Request,
  type Response,
  type State,
  Err,
  IDEMPOTENT_BASE,
  LEADER_BASE,
  SUPPORTS_ALL,
  TC_NODE,
  withField,
} from './state.ts';

function compareChannel(a: Channel, from: number, to: number, conn: number): number {
  return a.from - from || a.to - to || a.conn - conn;
}

export function send(
  network: readonly Channel[],
  from: number,
  to: number,
  conn: number,
  message: Message,
): readonly Channel[] {
  let i = 0;
  while (i < network.length && compareChannel(network[i]!, from, to, conn) < 0) i++;
  const out = network.slice();
  const found = network[i];
  if (found !== undefined && compareChannel(found, from, to, conn) === 0) {
    out[i] = { ...found, messages: [...found.messages, message] };
  } else {
    out.splice(i, 0, { from, to, conn, messages: [message] });
  }
  return out;
}

/** Removes the head message of channel `index`; an emptied channel disappears. */
export function removeHead(network: readonly Channel[], index: number): readonly Channel[] {
  const channel = network[index]!;
  const out = network.slice();
  if (channel.messages.length === 1) out.splice(index, 1);
  else out[index] = { ...channel, messages: channel.messages.slice(1) };
  return out;
}

/** A transactional producer instance. */
export function isProducerNode(node: number): boolean {
  return node < TC_NODE;
}

export function isIdempotentNode(node: number): boolean {
  return node >= IDEMPOTENT_BASE;
}

/** Where a client keeps its connection generation to `node`: 0 = TC, 1 + p = leader p. */
export function connSlot(node: number): number {
  return node === TC_NODE ? 0 : 1 + node - LEADER_BASE;
}

/** The connection a request arrived on; an answer goes back on it. */
export interface Connection {
  readonly from: number;
  readonly to: number;
  readonly conn: number;
}

/**
 * A server answers on the connection the request came in on. If the client has since closed that
 * connection (after a timeout), the answer is lost with it.
 */
export function reply(s: State, request: Connection, response: Message): State {
  if (isProducerNode(request.from)) {
    const client = s.producers[request.from]!;
    if (client.conns[connSlot(request.to)] !== request.conn) return s;
  }
  if (isIdempotentNode(request.from)) {
    const client = s.idempotentProducers[request.from - IDEMPOTENT_BASE]!;
    if (client.conns[request.to - LEADER_BASE] !== request.conn) return s;
  }
  return withField(s, 'network', send(s.network, request.to, request.from, request.conn, response));
}

export function hasMessage(network: readonly Channel[], test: (c: Channel, m: Message) => boolean): boolean {
  for (const c of network) for (const m of c.messages) if (test(c, m)) return true;
  return false;
}

const NO_REQUEST_FIELDS = {
  txnId: -1,
  pid: -1,
  epoch: -1,
  partitions: 0,
  commit: false,
  seq: -1,
  coordinatorEpoch: -1,
  value: -1,
  generation: -1,
  verifyOnly: false,
  guard: -1,
  supports: SUPPORTS_ALL,
  ghostProducer: -1,
  ghostTxn: -1,
  ghostRecord: -1,
};

export function request(api: Api, fields: Partial<Omit<Request, 'api' | 'response'>>): Request {
  return { api, response: false, ...NO_REQUEST_FIELDS, ...fields };
}

const NO_RESPONSE_FIELDS = {
  txnId: -1,
  error: Err.NONE,
  pid: -1,
  epoch: -1,
  partitions: 0,
  seq: -1,
  coordinatorEpoch: -1,
  guard: -1,
};

export function response(api: Api, fields: Partial<Omit<Response, 'api' | 'response'>>): Response {
  return { api, response: true, ...NO_RESPONSE_FIELDS, ...fields };
}
