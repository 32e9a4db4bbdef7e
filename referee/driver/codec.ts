// Kafka's primitive wire types (the protocol guide, "Protocol Primitive Types"), written and read
// in one message version: a flexible version (KIP-482) uses compact strings, bytes and arrays
// and ends every struct with a tagged-field section.

/** INT64 as a JS number: exact for every producer id, epoch, offset and timestamp a test sees. */
function toSafeNumber(value: bigint, what: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new RangeError(`${what} ${value} does not fit a JS number`);
  return n;
}

export class Writer {
  private buffer = Buffer.alloc(256);
  private length = 0;

  constructor(readonly flexible: boolean) {}

  private room(bytes: number): number {
    if (this.length + bytes > this.buffer.length) {
      const grown = Buffer.alloc(Math.max(this.buffer.length * 2, this.length + bytes));
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    const at = this.length;
    this.length += bytes;
    return at;
  }

  /** The bytes written so far (a view: copy it before writing more). */
  bytes(): Buffer {
    return this.buffer.subarray(0, this.length);
  }

  int8(v: number): this {
    this.buffer.writeInt8(v, this.room(1));
    return this;
  }
  int16(v: number): this {
    this.buffer.writeInt16BE(v, this.room(2));
    return this;
  }
  int32(v: number): this {
    this.buffer.writeInt32BE(v, this.room(4));
    return this;
  }
  uint32(v: number): this {
    this.buffer.writeUInt32BE(v, this.room(4));
    return this;
  }
  int64(v: number | bigint): this {
    this.buffer.writeBigInt64BE(BigInt(v), this.room(8));
    return this;
  }
  bool(v: boolean): this {
    return this.int8(v ? 1 : 0);
  }
  /** UNSIGNED_VARINT: seven bits a byte, low bits first. */
  unsignedVarint(v: number): this {
    let rest = v >>> 0;
    while (rest >= 0x80) {
      this.buffer[this.room(1)] = (rest & 0x7f) | 0x80;
      rest >>>= 7;
    }
    this.buffer[this.room(1)] = rest;
    return this;
  }
  /** VARINT: zigzag-encoded, as in the records of a record batch. */
  varint(v: number): this {
    return this.unsignedVarint((v << 1) ^ (v >> 31));
  }
  /** VARLONG: zigzag-encoded 64-bit. */
  varlong(v: number | bigint): this {
    const n = BigInt(v);
    let rest = BigInt.asUintN(64, (n << 1n) ^ (n >> 63n));
    while (rest >= 0x80n) {
      this.buffer[this.room(1)] = Number(rest & 0x7fn) | 0x80;
      rest >>= 7n;
    }
    this.buffer[this.room(1)] = Number(rest);
    return this;
  }
  raw(bytes: Uint8Array): this {
    this.buffer.set(bytes, this.room(bytes.length));
    return this;
  }
  /** The length of a string, bytes or array: compact (N+1, 0 for null) in flexible versions. */
  private size(n: number | null): this {
    if (this.flexible) return this.unsignedVarint(n === null ? 0 : n + 1);
    return n === null ? this.int16(-1) : this.int16(n);
  }
  string(v: string): this {
    const bytes = Buffer.from(v, 'utf8');
    return this.size(bytes.length).raw(bytes);
  }
  nullableString(v: string | null): this {
    return v === null ? this.size(null) : this.string(v);
  }
  /** BYTES / RECORDS: an INT32 length in non-flexible versions, compact otherwise. */
  nullableBytes(v: Uint8Array | null): this {
    if (this.flexible) return v === null ? this.unsignedVarint(0) : this.unsignedVarint(v.length + 1).raw(v);
    return v === null ? this.int32(-1) : this.int32(v.length).raw(v);
  }
  /** ARRAY: an INT32 count in non-flexible versions, compact otherwise. */
  array<T>(items: readonly T[], item: (w: this, v: T) => void): this {
    if (this.flexible) this.unsignedVarint(items.length + 1);
    else this.int32(items.length);
    for (const v of items) item(this, v);
    return this;
  }
  /** A struct's fields, then (flexible) an empty tagged-field section: this driver sends no tags. */
  struct(fields: (w: this) => void): this {
    fields(this);
    if (this.flexible) this.unsignedVarint(0);
    return this;
  }
}

/** Readers of tagged fields by tag, each filling in the struct read so far; other tags are skipped. */
export type TagReaders<T> = Readonly<Record<number, (r: Reader, into: T) => void>>;

export class Reader {
  private at = 0;

  constructor(
    private readonly buffer: Buffer,
    readonly flexible: boolean,
  ) {}

  remaining(): number {
    return this.buffer.length - this.at;
  }

  private take(bytes: number): number {
    if (this.at + bytes > this.buffer.length)
      throw new RangeError(`truncated message: ${bytes} bytes wanted at ${this.at} of ${this.buffer.length}`);
    const at = this.at;
    this.at += bytes;
    return at;
  }

  int8(): number {
    return this.buffer.readInt8(this.take(1));
  }
  int16(): number {
    return this.buffer.readInt16BE(this.take(2));
  }
  int32(): number {
    return this.buffer.readInt32BE(this.take(4));
  }
  uint32(): number {
    return this.buffer.readUInt32BE(this.take(4));
  }
  int64(what = 'INT64'): number {
    return toSafeNumber(this.buffer.readBigInt64BE(this.take(8)), what);
  }
  bool(): boolean {
    return this.int8() !== 0;
  }
  unsignedVarint(): number {
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      const byte = this.buffer[this.take(1)]!;
      value |= (byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return value >>> 0;
    }
    throw new RangeError('a varint longer than five bytes');
  }
  varint(): number {
    const u = this.unsignedVarint();
    return (u >>> 1) ^ -(u & 1);
  }
  varlong(): number {
    let value = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      const byte = BigInt(this.buffer[this.take(1)]!);
      value |= (byte & 0x7fn) << shift;
      if ((byte & 0x80n) === 0n) return toSafeNumber((value >> 1n) ^ -(value & 1n), 'VARLONG');
    }
    throw new RangeError('a varlong longer than ten bytes');
  }
  raw(bytes: number): Buffer {
    const at = this.take(bytes);
    return this.buffer.subarray(at, at + bytes);
  }
  uuid(): string {
    return this.raw(16).toString('base64url');
  }
  /** The length of a string, bytes or array, or -1 for null. */
  private size(): number {
    return this.flexible ? this.unsignedVarint() - 1 : this.int16();
  }
  nullableString(): string | null {
    const n = this.size();
    return n < 0 ? null : this.raw(n).toString('utf8');
  }
  string(): string {
    const s = this.nullableString();
    if (s === null) throw new RangeError('a null where the schema has a non-nullable string');
    return s;
  }
  nullableBytes(): Buffer | null {
    const n = this.flexible ? this.unsignedVarint() - 1 : this.int32();
    return n < 0 ? null : this.raw(n);
  }
  nullableArray<T>(item: (r: this) => T): T[] | null {
    const n = this.flexible ? this.unsignedVarint() - 1 : this.int32();
    if (n < 0) return null;
    const items: T[] = [];
    for (let i = 0; i < n; i++) items.push(item(this));
    return items;
  }
  array<T>(item: (r: this) => T): T[] {
    const items = this.nullableArray(item);
    if (items === null) throw new RangeError('a null where the schema has a non-nullable array');
    return items;
  }
  /** A struct's fields, then (flexible) its tagged fields: those in `tags` are read, others skipped. */
  struct<T>(fields: (r: this) => T, tags: TagReaders<T> = {}): T {
    const value = fields(this);
    if (this.flexible) {
      const count = this.unsignedVarint();
      for (let i = 0; i < count; i++) {
        const tag = this.unsignedVarint();
        const bytes = this.raw(this.unsignedVarint());
        tags[tag]?.(new Reader(bytes, true), value);
      }
    }
    return value;
  }
}
