// The proxy reads request frames and holds, releases or drops single requests, in order per
// connection: first against a stand-in server that answers each frame with its correlation id,
// then in front of a real broker that advertises it, whose own markers then pass it too.
import { type AddressInfo, type Server, type Socket, connect, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Broker, cachedClasspath, haveJavaAndMaven, startBroker } from './broker.ts';
import { KafkaProxy } from './proxy.ts';
import { Lab, atLeast } from './questions-experiments.ts';
import { TEST_RELEASE, skipWithoutKafka } from './testing.ts';

/** A request frame: size, API key, API version, correlation id, a byte of body. */
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
async function client(address: string) {
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
    const c = await client(proxy.address);
    proxy.hold({ apiKey: 26 });
    c.socket.write(Buffer.concat([frame(0, 1), frame(26, 2), frame(0, 3)]));
    const held = await proxy.nextHeld(26, 2000);
    expect(held).toMatchObject({ apiKey: 26, correlationId: 2 });
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
    const a = await client(proxy.address);
    const b = await client(proxy.address);
    proxy.hold({ apiKey: 27, match: (r) => r.correlationId === 7 });
    a.socket.write(frame(27, 7));
    const held = await proxy.nextHeld(27, 2000);
    b.socket.write(frame(27, 8));
    await settle();
    expect([a.answered, b.answered]).toEqual([[], [8]]);
    held.drop();
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
      proxy.hold({ apiKey: WRITE_TXN_MARKERS });
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
      proxy.hold({ apiKey: WRITE_TXN_MARKERS });
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
