// The proxy: first against stand-in brokers that answer each frame with its correlation id
// (frames named by their headers, held, dropped, delayed and released, in order per connection,
// a request held past its sender's departure still delivered), then in front of a real broker
// that advertises it, whose own markers then pass it too.
import { type AddressInfo, type Server, type Socket, connect, createServer } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Broker, cachedClasspath, haveJavaAndMaven, startBroker } from './broker.ts';
import { Writer } from './driver/codec.ts';
import { KafkaProxy, readRequestHeader, requestOf, sourceNode } from './proxy.ts';
import { Lab, atLeast } from './questions-experiments.ts';
import { TEST_RELEASE, skipWithoutKafka } from './testing.ts';

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
  let proxy: KafkaProxy;
  const clients: Socket[] = [];

  beforeEach(async () => {
    received = [];
    broker = createServer((socket) => {
      const got = frames(socket);
      socket.on('data', () => {
        while (got.length > 0) {
          const correlationId = readRequestHeader(got.shift()!)!.correlationId;
          received.push(correlationId);
          const answer = Buffer.alloc(8);
          answer.writeInt32BE(4, 0);
          answer.writeInt32BE(correlationId, 4);
          socket.write(answer);
        }
      });
    });
    await new Promise<void>((resolve) => broker.listen(0, '127.0.0.1', resolve));
    proxy = await KafkaProxy.start(`127.0.0.1:${(broker.address() as { port: number }).port}`, { node: 2 });
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
    expect([Object.fromEntries(proxy.seen), Object.fromEntries(proxy.answered)]).toEqual([
      { 27: 1, 0: 1 },
      { 27: 1, 0: 1 },
    ]);
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

  it('loses what it holds when it closes, and says it closed', async () => {
    proxy.add({ match: () => true, action: { kind: 'hold' }, times: 1 });
    const { socket } = await client();
    socket.write(request(0, 1, 'c'));
    const held = await proxy.nextHeld(() => true, 1000);
    const closed = new Promise((resolve) => socket.once('close', resolve));
    let over = false;
    void proxy.closed.then(() => (over = true));
    await Promise.resolve();
    expect(over).toBe(false);
    await proxy.close();
    expect(await held.settled).toBe('lost');
    await closed;
    expect(over).toBe(true);
  });

  it('times out waiting for a frame it never holds', async () => {
    await expect(proxy.nextHeld(() => true, 50)).rejects.toThrow(
      "node 2's proxy held no matching frame in 50 ms",
    );
  });
});

/** A bare request frame: size, API key, API version, correlation id, a byte of body. */
function frame(apiKey: number, correlationId: number): Buffer {
  const b = Buffer.alloc(4 + 9);
  b.writeInt32BE(9, 0);
  b.writeInt16BE(apiKey, 4);
  b.writeInt16BE(0, 6);
  b.writeInt32BE(correlationId, 8);
  return b;
}

/** A server that answers each frame with its correlation id as a 4-byte frame. */
async function standIn(): Promise<{ server: Server; address: string }> {
  const server = createServer((socket) => {
    let received = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      while (received.length >= 4 && received.length >= 4 + received.readInt32BE(0)) {
        const answer = Buffer.alloc(8);
        answer.writeInt32BE(4, 0);
        answer.writeInt32BE(received.readInt32BE(8), 4);
        socket.write(answer);
        received = received.subarray(4 + received.readInt32BE(0));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, address: `127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** A client of the proxy: the correlation ids answered so far, in order, and whether it closed. */
async function bareClient(address: string) {
  const [host, port] = address.split(':');
  const socket: Socket = await new Promise((resolve) => {
    const s = connect({ host: host!, port: Number(port) }, () => resolve(s));
  });
  const answered: number[] = [];
  let received = Buffer.alloc(0);
  let closed = false;
  socket.on('data', (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    while (received.length >= 8) {
      answered.push(received.readInt32BE(4));
      received = received.subarray(8);
    }
  });
  socket.on('close', () => (closed = true));
  return { socket, answered, closed: () => closed };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

describe('the proxy, before a stand-in server', () => {
  let server: Server;
  let proxy: KafkaProxy;

  beforeAll(async () => {
    const s = await standIn();
    server = s.server;
    proxy = await KafkaProxy.start(s.address);
  });
  afterAll(async () => {
    await proxy.close();
    server.close();
  });

  it('holds a request and those behind it on its connection, and forwards them in order on release', async () => {
    const c = await bareClient(proxy.address);
    proxy.add({ match: requestOf(26), action: { kind: 'hold' }, times: 1 });
    c.socket.write(Buffer.concat([frame(0, 1), frame(26, 2), frame(0, 3)]));
    const held = await proxy.nextHeld(26, 2000);
    expect(held.frame.header).toMatchObject({ apiKey: 26, correlationId: 2 });
    await settle();
    expect(c.answered).toEqual([1]);
    held.release();
    await settle();
    expect(c.answered).toEqual([1, 2, 3]);
    // The rule held one request only.
    c.socket.write(frame(26, 4));
    await settle();
    expect(c.answered).toEqual([1, 2, 3, 4]);
    expect(proxy.seen.get(26)).toBe(2);
    c.socket.destroy();
  });

  it('holds only on the connection of the held request; a dropped request closes its connection', async () => {
    const a = await bareClient(proxy.address);
    const b = await bareClient(proxy.address);
    proxy.add({
      match: requestOf(27, (f) => f.header.correlationId === 7),
      action: { kind: 'hold' },
      times: 1,
    });
    a.socket.write(frame(27, 7));
    const held = await proxy.nextHeld(27, 2000);
    b.socket.write(frame(27, 8));
    await settle();
    expect([a.answered, b.answered]).toEqual([[], [8]]);
    held.drop({ sever: true });
    await settle();
    expect([a.answered, a.closed(), b.closed()]).toEqual([[], true, false]);
    b.socket.destroy();
  });

  it('waits for a held request for a bounded time', async () => {
    await expect(proxy.nextHeld(99, 50)).rejects.toThrow(/no request of API key 99 was held within 50 ms/);
  });
});

const WRITE_TXN_MARKERS = 27;
const javaAndMaven = haveJavaAndMaven();
const ADD_PARTITIONS_TO_TXN = 24;

describe.skipIf(skipWithoutKafka('referee/proxy.test.ts'))(
  `Kafka ${TEST_RELEASE} advertising the proxy`,
  () => {
    let proxy: KafkaProxy;
    let broker: Broker;
    let lab: Lab;

    beforeAll(async () => {
      proxy = await KafkaProxy.start();
      broker = await startBroker({ version: TEST_RELEASE, tv: 2, advertise: proxy.address });
      proxy.setUpstream(broker.address);
      lab = await Lab.open(proxy.address);
    });
    afterAll(async () => {
      lab?.close();
      await broker?.stop();
      await proxy?.close();
    });

    it("passes the broker's own verification and markers, and a held marker keeps the transaction prepared", async () => {
      const id = lab.fresh('held-marker');
      const topic = await lab.topic('held-marker');
      const producer = await lab.init(id);
      expect(await lab.produce(id, topic, producer, 0, 'v')).toBe('NONE');
      // The leader verified the batch with the coordinator through the proxy.
      expect(proxy.seen.get(ADD_PARTITIONS_TO_TXN)).toBeGreaterThan(0);
      proxy.add({ match: requestOf(WRITE_TXN_MARKERS), action: { kind: 'hold' }, times: 1 });
      expect((await lab.endTxn(id, producer, true)).error).toBe('NONE');
      const held = await proxy.nextHeld(WRITE_TXN_MARKERS, 10_000);
      await settle();
      expect((await lab.describe(id)).transactionState).toBe('PrepareCommit');
      expect(await lab.committedValues(topic)).toEqual([]);
      held.release();
      expect((await lab.completed(id)).transactionState).toBe('CompleteCommit');
      expect(await lab.committedValues(topic)).toEqual(['v']);
    });
  },
);

// The model's marker timeout (marker-timeouts.json) on real brokers: the coordinator's own
// WriteTxnMarkers is held past its request timeout, the coordinator resends it and completes the
// transaction, the producer begins the next one at the bumped epoch, and then the first copy
// arrives. Before KIP-1228's marker rule (4.2.0) the leader takes it and commits the next
// transaction's open record: read_committed reads a record of an ongoing transaction.
describe.each([TEST_RELEASE, '4.2.0'].map((version) => ({ version })))(
  'Kafka $version: a marker that times out and arrives late',
  ({ version }) => {
    const skipped =
      version === TEST_RELEASE
        ? skipWithoutKafka('referee/proxy.test.ts')
        : !javaAndMaven || cachedClasspath(version) === undefined;
    let proxy: KafkaProxy;
    let broker: Broker;
    let lab: Lab;

    beforeAll(async () => {
      if (skipped) return;
      proxy = await KafkaProxy.start();
      broker = await startBroker({
        version,
        tv: 2,
        advertise: proxy.address,
        config: { 'request.timeout.ms': '3000' },
      });
      proxy.setUpstream(broker.address);
      lab = await Lab.open(proxy.address);
    });
    afterAll(async () => {
      lab?.close();
      await broker?.stop();
      await proxy?.close();
    });

    it.skipIf(skipped)("commits the next transaction's record before 4.2.0", async () => {
      const id = lab.fresh('late-marker');
      const topic = await lab.topic('late-marker');
      const producer = await lab.init(id);
      expect(await lab.produce(id, topic, producer, 0, 'first')).toBe('NONE');
      proxy.add({ match: requestOf(WRITE_TXN_MARKERS), action: { kind: 'hold' }, times: 1 });
      const end = await lab.endTxn(id, producer, true);
      expect(end.error).toBe('NONE');
      const late = await proxy.nextHeld(WRITE_TXN_MARKERS, 10_000);
      // The coordinator times the copy out, resends it and completes the transaction.
      expect((await lab.completed(id)).transactionState).toBe('CompleteCommit');
      expect(proxy.seen.get(WRITE_TXN_MARKERS)).toBe(2);
      const next = { producerId: end.producerId!, producerEpoch: end.producerEpoch! };
      expect(await lab.produce(id, topic, next, 0, 'second, not committed')).toBe('NONE');
      late.release();
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect((await lab.describe(id)).transactionState).toBe('Ongoing');
      expect(await lab.committedValues(topic)).toEqual(
        atLeast(version, '4.2.0') ? ['first'] : ['first', 'second, not committed'],
      );
    });
  },
);
