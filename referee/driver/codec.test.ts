// The driver's encodings without a broker: primitives in classic and flexible versions, tagged
// fields, record batches and their CRC, the read_committed filter, and the error names.
import { describe, expect, it } from 'vitest';
import { Err } from '../../model/kafka/state.ts';
import { Reader, Writer } from './codec.ts';
import { ErrorCode, errorName } from './errors.ts';
import { type RecordBatch, crc32c, decodeBatches, encodeBatch, readCommitted } from './records.ts';

const bytes = (w: Writer): number[] => [...w.bytes()];

describe('primitives', () => {
  it('writes varints seven bits a byte, signed ones zigzagged', () => {
    expect(bytes(new Writer(false).unsignedVarint(300))).toEqual([0xac, 0x02]);
    expect(bytes(new Writer(false).varint(-1))).toEqual([0x01]);
    expect(bytes(new Writer(false).varint(1))).toEqual([0x02]);
    expect(bytes(new Writer(false).varlong(-65))).toEqual([0x81, 0x01]);
  });

  it('reads back every varint it writes', () => {
    for (const v of [0, 1, 127, 128, 300, 2 ** 31, 2 ** 32 - 1]) {
      expect(new Reader(new Writer(false).unsignedVarint(v).bytes(), false).unsignedVarint()).toBe(v);
    }
    for (const v of [0, -1, 1, -64, 63, 2 ** 31 - 1, -(2 ** 31)]) {
      expect(new Reader(new Writer(false).varint(v).bytes(), false).varint()).toBe(v);
    }
    for (const v of [0, -1, 2 ** 53 - 1, -(2 ** 53 - 1), 1_700_000_000_000]) {
      expect(new Reader(new Writer(false).varlong(v).bytes(), false).varlong()).toBe(v);
    }
  });

  it('writes strings and arrays compact in flexible versions only', () => {
    expect(bytes(new Writer(true).string('ab'))).toEqual([3, 0x61, 0x62]);
    expect(bytes(new Writer(false).string('ab'))).toEqual([0, 2, 0x61, 0x62]);
    expect(bytes(new Writer(true).nullableString(null))).toEqual([0]);
    expect(bytes(new Writer(false).nullableString(null))).toEqual([0xff, 0xff]);
    expect(bytes(new Writer(true).array([7], (w, v) => w.int8(v)))).toEqual([2, 7]);
    expect(bytes(new Writer(false).array([7], (w, v) => w.int8(v)))).toEqual([0, 0, 0, 1, 7]);
    expect(bytes(new Writer(true).struct((w) => w.int8(1)))).toEqual([1, 0]);
    expect(bytes(new Writer(false).struct((w) => w.int8(1)))).toEqual([1]);
  });

  it('reads the tagged fields it knows and skips the others', () => {
    const w = new Writer(true).int16(5).unsignedVarint(2);
    w.unsignedVarint(0).unsignedVarint(4).int32(42); // tag 0: an INT32
    w.unsignedVarint(5).unsignedVarint(3).raw(Buffer.from('xyz')); // tag 5: unknown here
    w.int8(9); // a field after the struct
    const r = new Reader(Buffer.from(w.bytes()), true);
    const read = r.struct<{ a: number; tagged?: number }>((r) => ({ a: r.int16() }), {
      0: (r, into) => {
        into.tagged = r.int32();
      },
    });
    expect(read).toEqual({ a: 5, tagged: 42 });
    expect(r.int8()).toBe(9);
    expect(r.remaining()).toBe(0);
  });

  it('refuses a truncated message', () => {
    expect(() => new Reader(Buffer.from([0, 1]), false).int32()).toThrow('truncated message');
  });
});

describe('record batches', () => {
  it('computes CRC-32C (its check value)', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
  });

  it('reads back the batch it writes', () => {
    const written = encodeBatch({
      producerId: 4000,
      producerEpoch: 7,
      baseSequence: 12,
      transactional: true,
      timestamp: 1_700_000_000_000,
      records: [
        { key: 'k', value: 'v', headers: [{ key: 'h', value: Buffer.from([1]) }] },
        { key: null, value: null },
      ],
    });
    const [batch, ...rest] = decodeBatches(written);
    expect(rest).toEqual([]);
    expect(batch).toMatchObject({
      baseOffset: 0,
      lastOffset: 1,
      partitionLeaderEpoch: -1,
      producerId: 4000,
      producerEpoch: 7,
      baseSequence: 12,
      transactional: true,
      control: false,
    });
    expect(
      batch!.records.map((r) => [r.offset, r.timestamp, r.key?.toString(), r.value?.toString()]),
    ).toEqual([
      [0, 1_700_000_000_000, 'k', 'v'],
      [1, 1_700_000_000_000, undefined, undefined],
    ]);
    expect(batch!.records[0]!.headers).toEqual([{ key: 'h', value: Buffer.from([1]) }]);
  });

  it('refuses a batch whose CRC does not match, and drops a batch cut short', () => {
    const one = encodeBatch({
      producerId: 1,
      producerEpoch: 0,
      baseSequence: 0,
      transactional: false,
      records: [{ key: null, value: 'x' }],
    });
    const corrupt = Buffer.from(one);
    corrupt[corrupt.length - 2]! ^= 0xff;
    expect(() => decodeBatches(corrupt)).toThrow('fails its CRC');
    expect(decodeBatches(Buffer.concat([one, one.subarray(0, 30)]))).toHaveLength(1);
    expect(decodeBatches(null)).toEqual([]);
  });
});

describe('read_committed', () => {
  const batch = (baseOffset: number, producerId: number, marker?: 'COMMIT' | 'ABORT'): RecordBatch => ({
    baseOffset,
    lastOffset: baseOffset,
    partitionLeaderEpoch: 0,
    producerId,
    producerEpoch: 0,
    baseSequence: marker ? -1 : 0,
    transactional: producerId >= 0,
    control: marker !== undefined,
    ...(marker ? { marker: { type: marker, coordinatorEpoch: 0 } } : {}),
    records: [
      { offset: baseOffset, timestamp: 0, key: null, value: Buffer.from(`${baseOffset}`), headers: [] },
    ],
  });

  it('delivers committed and plain records, never markers or an aborted transaction', () => {
    const batches = [
      batch(0, 1),
      batch(1, 2), // aborted below
      batch(2, 1, 'COMMIT'),
      batch(3, -1), // not transactional
      batch(4, 2),
      batch(5, 2, 'ABORT'),
      batch(6, 2), // producer 2's next transaction, committed
      batch(7, 2, 'COMMIT'),
    ];
    const delivered = readCommitted(batches, [{ producerId: 2, firstOffset: 1 }]);
    expect(delivered.map((r) => r.offset)).toEqual([0, 3, 6]);
  });
});

describe('error names', () => {
  it("agree with the model's Err on every code it names", () => {
    for (const [name, code] of Object.entries(Err))
      expect([name, ErrorCode[name as keyof typeof ErrorCode]]).toEqual([name, code]);
    expect(errorName(90)).toBe('PRODUCER_FENCED');
    expect(errorName(9999)).toBe('ERROR_9999');
  });
});
