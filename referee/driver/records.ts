// Record batches of magic 2 (the protocol guide, "Record Batch"): written with the producer id,
// epoch and base sequence the caller chooses, read back with their control markers, and
// filtered as a read_committed consumer does.
import { Reader, Writer } from './codec.ts';

const CASTAGNOLI = 0x82f63b78;
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ CASTAGNOLI : c >>> 1;
  return c >>> 0;
});

/** CRC-32C, the checksum of a magic-2 batch (over its attributes to its end). */
export function crc32c(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const b of bytes) crc = CRC_TABLE[(crc ^ b) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

const TRANSACTIONAL = 0x10;
const CONTROL = 0x20;
const COMPRESSION = 0x07;
const MAGIC = 2;
/** The offset of the attributes in a batch: what the CRC covers starts there. */
const ATTRIBUTES_AT = 21;

export interface Header {
  readonly key: string;
  readonly value: Buffer | null;
}
export interface NewRecord {
  readonly key: string | Buffer | null;
  readonly value: string | Buffer | null;
  readonly headers?: readonly Header[];
}
export interface BatchToWrite {
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly baseSequence: number;
  readonly transactional: boolean;
  readonly records: readonly NewRecord[];
  /** The batch's create time; now when absent. */
  readonly timestamp?: number;
}

function bytesOf(v: string | Buffer | null): Buffer | null {
  return typeof v === 'string' ? Buffer.from(v, 'utf8') : v;
}

/** One uncompressed batch, as a producer sends it: base offset 0, no partition leader epoch. */
export function encodeBatch(batch: BatchToWrite): Buffer {
  if (batch.records.length === 0) throw new RangeError('a batch holds at least one record');
  const timestamp = batch.timestamp ?? Date.now();
  const records = new Writer(false);
  batch.records.forEach((record, offsetDelta) => {
    const body = new Writer(false);
    const key = bytesOf(record.key);
    const value = bytesOf(record.value);
    body.int8(0).varlong(0).varint(offsetDelta);
    if (key === null) body.varint(-1);
    else body.varint(key.length).raw(key);
    if (value === null) body.varint(-1);
    else body.varint(value.length).raw(value);
    const headers = record.headers ?? [];
    body.varint(headers.length);
    for (const h of headers) {
      const name = Buffer.from(h.key, 'utf8');
      body.varint(name.length).raw(name);
      if (h.value === null) body.varint(-1);
      else body.varint(h.value.length).raw(h.value);
    }
    records.varint(body.bytes().length).raw(body.bytes());
  });
  const w = new Writer(false);
  w.int64(0) // BaseOffset: the leader assigns offsets
    .int32(0) // BatchLength, below
    .int32(-1) // PartitionLeaderEpoch: the leader sets it
    .int8(MAGIC)
    .uint32(0) // CRC, below
    .int16(batch.transactional ? TRANSACTIONAL : 0)
    .int32(batch.records.length - 1) // LastOffsetDelta
    .int64(timestamp)
    .int64(timestamp)
    .int64(batch.producerId)
    .int16(batch.producerEpoch)
    .int32(batch.baseSequence)
    .int32(batch.records.length)
    .raw(records.bytes());
  const bytes = Buffer.from(w.bytes());
  bytes.writeInt32BE(bytes.length - 12, 8);
  bytes.writeUInt32BE(crc32c(bytes.subarray(ATTRIBUTES_AT)), 17);
  return bytes;
}

export interface Record {
  offset: number;
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: { key: string; value: Buffer | null }[];
}
export interface RecordBatch {
  baseOffset: number;
  lastOffset: number;
  partitionLeaderEpoch: number;
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  transactional: boolean;
  /** A control batch: its one record is a transaction marker. */
  control: boolean;
  /** The marker of a control batch: COMMIT or ABORT, and the coordinator epoch that wrote it. */
  marker?: { type: 'ABORT' | 'COMMIT' | `CONTROL_${number}`; coordinatorEpoch: number };
  records: Record[];
}

function nullableVarBytes(r: Reader): Buffer | null {
  const n = r.varint();
  return n < 0 ? null : Buffer.from(r.raw(n));
}

function decodeRecord(r: Reader, baseOffset: number, baseTimestamp: number): Record {
  const body = new Reader(r.raw(r.varint()), false);
  body.int8(); // attributes: unused
  const timestamp = baseTimestamp + body.varlong();
  const offset = baseOffset + body.varint();
  const key = nullableVarBytes(body);
  const value = nullableVarBytes(body);
  const headers = Array.from({ length: body.varint() }, () => ({
    key: body.raw(body.varint()).toString('utf8'),
    value: nullableVarBytes(body),
  }));
  return { offset, timestamp, key, value, headers };
}

function decodeBatch(bytes: Buffer): RecordBatch {
  const r = new Reader(bytes, false);
  const baseOffset = r.int64();
  r.int32(); // BatchLength
  const partitionLeaderEpoch = r.int32();
  const magic = r.int8();
  if (magic !== MAGIC) throw new RangeError(`a batch of magic ${magic} at offset ${baseOffset}`);
  const crc = r.uint32();
  if (crc !== crc32c(bytes.subarray(ATTRIBUTES_AT)))
    throw new RangeError(`the batch at offset ${baseOffset} fails its CRC`);
  const attributes = r.int16();
  if ((attributes & COMPRESSION) !== 0)
    throw new RangeError(`the batch at offset ${baseOffset} is compressed: not supported`);
  const lastOffsetDelta = r.int32();
  const baseTimestamp = r.int64();
  r.int64(); // MaxTimestamp
  const batch: RecordBatch = {
    baseOffset,
    lastOffset: baseOffset + lastOffsetDelta,
    partitionLeaderEpoch,
    producerId: r.int64(),
    producerEpoch: r.int16(),
    baseSequence: r.int32(),
    transactional: (attributes & TRANSACTIONAL) !== 0,
    control: (attributes & CONTROL) !== 0,
    records: [],
  };
  const count = r.int32();
  for (let i = 0; i < count; i++) batch.records.push(decodeRecord(r, baseOffset, baseTimestamp));
  const markerRecord = batch.records[0];
  if (batch.control && markerRecord?.key && markerRecord.value) {
    const type = new Reader(markerRecord.key, false);
    type.int16(); // the key's version
    const code = type.int16();
    const value = new Reader(markerRecord.value, false);
    value.int16(); // the value's version
    batch.marker = {
      type: code === 0 ? 'ABORT' : code === 1 ? 'COMMIT' : `CONTROL_${code}`,
      coordinatorEpoch: value.int32(),
    };
  }
  return batch;
}

/** The batches of a fetch's records; a last batch cut short by the fetch's size limit is dropped. */
export function decodeBatches(records: Buffer | null): RecordBatch[] {
  const batches: RecordBatch[] = [];
  let at = 0;
  while (records !== null && at + 12 <= records.length) {
    const size = 12 + records.readInt32BE(at + 8);
    if (at + size > records.length) break;
    batches.push(decodeBatch(records.subarray(at, at + size)));
    at += size;
  }
  return batches;
}

/** A transaction a fetch lists as aborted: its producer and its first offset. */
export interface AbortedTransaction {
  producerId: number;
  firstOffset: number;
}

/**
 * What a read_committed consumer delivers from fetched batches: no control batch, and no batch
 * of a transaction the fetch lists as aborted (from its first offset up to its ABORT marker).
 */
export function readCommitted(
  batches: readonly RecordBatch[],
  aborted: readonly AbortedTransaction[],
): Record[] {
  const pending = [...aborted].sort((a, b) => a.firstOffset - b.firstOffset);
  const abortedProducers = new Set<number>();
  const delivered: Record[] = [];
  for (const batch of batches) {
    while (pending.length > 0 && pending[0]!.firstOffset <= batch.lastOffset)
      abortedProducers.add(pending.shift()!.producerId);
    if (batch.control) {
      if (batch.marker?.type === 'ABORT') abortedProducers.delete(batch.producerId);
      continue;
    }
    if (batch.transactional && abortedProducers.has(batch.producerId)) continue;
    delivered.push(...batch.records);
  }
  return delivered;
}
