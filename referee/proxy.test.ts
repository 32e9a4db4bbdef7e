// The proxy against a stand-in broker that answers every request frame with its correlation id:
// frames are named by their headers, held, dropped, delayed and released, keep their order on
// a connection, and a request held past its sender's departure still reaches the broker.
import { type Server, type Socket, connect, createServer } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Writer } from './driver/codec.ts';
import { Proxy, readRequestHeader, sourceNode } from './proxy.ts';

/** A request frame: header v1 (key, version, correlation id, client id) and a body of text. */
function request(apiKey: number, correlationId: number, clientId: string, body = ''): Buffer {
  const w = new Writer(false).int32(0).int16(apiKey).int16(0).int32(correlationId).string(clientId);
  w.raw(Buffer.from(body));
  const frame = Buffer.from(w.bytes());
  frame.writeInt32BE(frame.length - 4, 0);
  return frame;
}

/** Reads size-prefixed frames from a socket. */
function frames(socket: Socket): Buffer[] {
  const got: Buffer[] = [];
  let pending = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
      got.push(pending.subarray(4, 4 + pending.readInt32BE(0)));
      pending = pending.subarray(4 + pending.readInt32BE(0));
    }
  });
  return got;
}

const until = async (what: string, done: () => boolean, ms = 2000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not ${what} in ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

describe('the proxy', () => {
  let broker: Server;
  /** Correlation ids the stand-in broker received, in order. */
  let received: number[];
  let proxy: Proxy;
  const clients: Socket[] = [];

  beforeEach(async () => {
    received = [];
    broker = createServer((socket) => {
      const got = frames(socket);
      socket.on('data', () => {
        while (got.length > 0) {
          const correlationId = readRequestHeader(got.shift()!).correlationId;
          received.push(correlationId);
          const answer = Buffer.alloc(8);
          answer.writeInt32BE(4, 0);
          answer.writeInt32BE(correlationId, 4);
          socket.write(answer);
        }
      });
    });
    await new Promise<void>((resolve) => broker.listen(0, '127.0.0.1', resolve));
    proxy = await Proxy.start(2, 0, { host: '127.0.0.1', port: (broker.address() as { port: number }).port });
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.destroy();
    await proxy.close();
    await new Promise((resolve) => broker.close(resolve));
  });

  const client = async (): Promise<{ socket: Socket; answers: number[] }> => {
    const socket = connect({ host: '127.0.0.1', port: proxy.port });
    await new Promise((resolve) => socket.once('connect', resolve));
    clients.push(socket);
    const got = frames(socket);
    const answers: number[] = [];
    socket.on('data', () => {
      while (got.length > 0) answers.push(got.shift()!.readInt32BE(0));
    });
    return { socket, answers };
  };

  it('names a broker client by its client id', () => {
    expect(sourceNode('broker-3-txn-marker-sender')).toBe(3);
    expect(sourceNode('txcheck-referee')).toBeNull();
    expect(sourceNode(null)).toBeNull();
  });

  it('passes frames through, split or joined, and reads their headers', async () => {
    const { socket, answers } = await client();
    const both = Buffer.concat([request(27, 7, 'broker-1-txn-marker-sender'), request(0, 8, 'c', 'x')]);
    socket.write(both.subarray(0, 5));
    await new Promise((resolve) => setTimeout(resolve, 20));
    socket.write(both.subarray(5));
    await until('answered', () => answers.length === 2);
    expect(answers).toEqual([7, 8]);
    expect(Object.fromEntries(proxy.seen)).toEqual({
      'request:27': 1,
      'response:27': 1,
      'request:0': 1,
      'response:0': 1,
    });
  });

  it('holds a request, and the ones behind it, until released', async () => {
    proxy.add({
      match: (f) => f.direction === 'request' && f.header.apiKey === 27 && f.from === 1,
      action: { kind: 'hold' },
      times: 1,
    });
    const { socket, answers } = await client();
    socket.write(request(0, 1, 'c'));
    socket.write(request(27, 2, 'broker-1-txn-marker-sender'));
    socket.write(request(0, 3, 'c'));
    const held = await proxy.nextHeld((f) => f.header.correlationId === 2, 1000);
    expect(held.frame).toMatchObject({ node: 2, from: 1, connection: 1, direction: 'request' });
    expect(held.frame.header).toEqual({
      apiKey: 27,
      apiVersion: 0,
      correlationId: 2,
      clientId: 'broker-1-txn-marker-sender',
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(received).toEqual([1]);
    expect(answers).toEqual([1]);
    held.release();
    expect(await held.settled).toBe('released');
    await until('answered', () => answers.length === 3);
    expect(received).toEqual([1, 2, 3]);
    // The rule took one frame: the next marker passes.
    socket.write(request(27, 4, 'broker-1-txn-marker-sender'));
    await until('answered', () => answers.length === 4);
    expect(proxy.held()).toEqual([]);
  });

  it('drops a request, which never reaches the broker, and lets the rest by', async () => {
    proxy.add({ match: (f) => f.header.correlationId === 1, action: { kind: 'drop' } });
    const { socket, answers } = await client();
    socket.write(request(0, 1, 'c'));
    socket.write(request(0, 2, 'c'));
    await until('answered', () => answers.length === 1);
    expect(received).toEqual([2]);
  });

  it('holds an answer, dropped by hand', async () => {
    proxy.add({ match: (f) => f.direction === 'response', action: { kind: 'hold' }, times: 1 });
    const { socket, answers } = await client();
    socket.write(request(0, 1, 'c'));
    const held = await proxy.nextHeld((f) => f.direction === 'response', 1000);
    expect(received).toEqual([1]);
    held.drop();
    expect(await held.settled).toBe('dropped');
    socket.write(request(0, 2, 'c'));
    await until('answered', () => answers.length === 1);
    expect(answers).toEqual([2]);
  });

  it('delays a request by the time asked', async () => {
    proxy.add({ match: () => true, action: { kind: 'delay', ms: 150 }, times: 1 });
    const { socket, answers } = await client();
    const sent = Date.now();
    socket.write(request(0, 1, 'c'));
    await until('answered', () => answers.length === 1);
    expect(Date.now() - sent).toBeGreaterThanOrEqual(140);
  });

  it('still delivers a request released after its sender left', async () => {
    proxy.add({ match: () => true, action: { kind: 'hold' }, times: 1 });
    const { socket } = await client();
    socket.write(request(27, 9, 'broker-1-txn-marker-sender'));
    const held = await proxy.nextHeld(() => true, 1000);
    socket.destroy();
    await until('closed', () => proxy.closedByClient.has(1));
    held.release();
    await until('received', () => received.length === 1);
    expect(received).toEqual([9]);
  });

  it('severs a client, whose held request still reaches the broker when released', async () => {
    proxy.add({ match: () => true, action: { kind: 'hold' }, times: 1 });
    const { socket } = await client();
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write(request(27, 5, 'broker-1-txn-marker-sender'));
    const held = await proxy.nextHeld(() => true, 1000);
    proxy.sever(held.frame.connection);
    await closed;
    expect([...proxy.severed]).toEqual([1]);
    expect([...proxy.closedByClient]).toEqual([]);
    held.release();
    await until('received', () => received.length === 1);
    expect(received).toEqual([5]);
  });

  it('loses what it holds when the broker goes', async () => {
    proxy.add({ match: () => true, action: { kind: 'hold' }, times: 1 });
    const { socket } = await client();
    socket.write(request(0, 1, 'c'));
    const held = await proxy.nextHeld(() => true, 1000);
    const closed = new Promise((resolve) => socket.once('close', resolve));
    await proxy.close();
    expect(await held.settled).toBe('lost');
    await closed;
  });

  it('times out waiting for a frame it never holds', async () => {
    await expect(proxy.nextHeld(() => true, 50)).rejects.toThrow(
      "node 2's proxy held no matching frame in 50 ms",
    );
  });
});
