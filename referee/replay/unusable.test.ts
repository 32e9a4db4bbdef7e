// A "broker" that speaks none of the versions a replay needs: the replay refuses it in one line
// (exit 2) before it sends anything that matters. A fake server stands in for an old broker: it
// answers ApiVersions, naming ApiVersions as the only API it speaks, and nothing else.
import { type Server, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../checker/cli.ts';
import { Writer } from '../driver/codec.ts';

let server: Server;
let address: string;

/** The ApiVersions v3 answer (header v0, flexible body) of a broker that speaks ApiVersions v0-v3 alone. */
function apiVersionsAnswer(correlationId: number): Buffer {
  const w = new Writer(true);
  w.int32(0).int32(correlationId);
  w.int16(0); // error: NONE
  w.unsignedVarint(2).int16(18).int16(0).int16(3).unsignedVarint(0); // one API key, no tags
  w.int32(0).unsignedVarint(0); // throttle, no tags
  const frame = Buffer.from(w.bytes());
  frame.writeInt32BE(frame.length - 4, 0);
  return frame;
}

beforeAll(async () => {
  server = createServer((socket) =>
    socket.on('data', (chunk) => {
      // Every request here is ApiVersions: its correlation id follows size, key and version.
      socket.write(apiVersionsAnswer(chunk.readInt32BE(8)));
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  address = `127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('a broker that speaks none of the versions the replay needs', () => {
  it('is refused in one line naming the API and versions, exit 2', async () => {
    let out = '';
    let err = '';
    const io = { out: (t: string) => (out += t), err: (t: string) => (err += t), errIsTTY: false };
    const code = await main(
      ['replay', '--kafka', address, 'traces/kafka-3.5-init-producer-id-retry.itf.json'],
      io,
    );
    expect(code).toBe(2);
    expect(err).toBe(
      `command line: --kafka ${address}: ${address} speaks CreateTopics no versions, not v7\n`,
    );
    expect(out).not.toMatch(/agrees|diverges/i);
  });
});
