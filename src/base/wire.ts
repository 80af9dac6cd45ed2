// Big-endian wire primitives shared by the binary codecs (Kafka, Cursus): a reader with a sticky
// error and a chunk-list writer. Each codec extends them with its own encodings (Kafka's varints
// and compact strings, Cursus's u32-length fields).
//
// WireReader keeps a sticky error: a read past the end (or a negative length) records the first
// reason, moves the cursor to the end and makes every later read return a zero value, so a decoder
// reads straight through a frame and checks `error` (or `complete()`) once; nothing throws
// mid-frame and no length from the peer is allocated before it is checked against the bytes
// present. Byte fields are `subarray` views of the input.
//
// ChunkWriter builds a chunk list: fixed-width fields go into a growing scratch buffer; byte fields
// of at least `largeBytesMin` are appended as their own chunk without copying (a reply carrying
// stored batches), ready for cork + writev.

export const emptyBytes: Buffer = Buffer.alloc(0);

export class WireReader {
  readonly buf: Buffer;
  offset: number;
  readonly end: number;
  /** The first failure, or null. Once set, every read returns a zero value. */
  error: string | null = null;

  constructor(buf: Buffer, offset = 0, end = buf.length) {
    this.buf = buf;
    this.offset = offset;
    this.end = end;
  }

  get remaining(): number {
    return this.end - this.offset;
  }

  /** True when no read failed and every byte was consumed. */
  complete(): boolean {
    return this.error === null && this.offset === this.end;
  }

  /** Records the first failure and stops further reads. */
  fail(reason: string): void {
    if (this.error === null) this.error = `${reason} (at byte ${this.offset})`;
    this.offset = this.end;
  }

  /** Whether `n` more bytes can be read; records the failure when not. */
  protected need(n: number): boolean {
    if (this.error !== null) return false;
    if (this.end - this.offset < n) {
      this.fail(`truncated: need ${n} bytes, have ${this.end - this.offset}`);
      return false;
    }
    return true;
  }

  int8(): number {
    if (!this.need(1)) return 0;
    return this.buf.readInt8(this.offset++);
  }

  uint8(): number {
    if (!this.need(1)) return 0;
    return this.buf[this.offset++]!;
  }

  int16(): number {
    if (!this.need(2)) return 0;
    const v = this.buf.readInt16BE(this.offset);
    this.offset += 2;
    return v;
  }

  uint16(): number {
    if (!this.need(2)) return 0;
    const v = this.buf.readUInt16BE(this.offset);
    this.offset += 2;
    return v;
  }

  int32(): number {
    if (!this.need(4)) return 0;
    const v = this.buf.readInt32BE(this.offset);
    this.offset += 4;
    return v;
  }

  uint32(): number {
    if (!this.need(4)) return 0;
    const v = this.buf.readUInt32BE(this.offset);
    this.offset += 4;
    return v;
  }

  int64(): bigint {
    if (!this.need(8)) return 0n;
    const v = this.buf.readBigInt64BE(this.offset);
    this.offset += 8;
    return v;
  }

  uint64(): bigint {
    if (!this.need(8)) return 0n;
    const v = this.buf.readBigUInt64BE(this.offset);
    this.offset += 8;
    return v;
  }

  /** `n` raw bytes as a view. */
  raw(n: number): Buffer {
    if (n < 0) {
      this.fail(`negative length ${n}`);
      return emptyBytes;
    }
    if (!this.need(n)) return emptyBytes;
    const v = this.buf.subarray(this.offset, this.offset + n);
    this.offset += n;
    return v;
  }

  skip(n: number): void {
    if (n < 0) {
      this.fail(`negative skip ${n}`);
      return;
    }
    if (this.need(n)) this.offset += n;
  }
}

/** Byte fields at least this long are appended as separate chunks instead of copied. */
export const largeBytesMin = 512;

/** A chunk-list writer; `C` is what a chunk may be besides a Buffer (Kafka: file slices). */
export class ChunkWriter<C = Buffer> {
  protected chunks: Array<Buffer | C> = [];
  protected scratch: Buffer;
  /** Start of the scratch region not yet pushed to `chunks`. */
  protected start = 0;
  protected pos = 0;
  /** Total bytes written. */
  length = 0;

  constructor(private readonly scratchBytes = 4096) {
    this.scratch = Buffer.allocUnsafe(scratchBytes);
  }

  protected flushScratch(): void {
    if (this.pos > this.start) {
      this.chunks.push(this.scratch.subarray(this.start, this.pos));
      this.start = this.pos;
    }
  }

  protected ensure(n: number): void {
    if (this.scratch.length - this.pos >= n) return;
    this.flushScratch();
    this.scratch = Buffer.allocUnsafe(Math.max(this.scratchBytes, n));
    this.start = 0;
    this.pos = 0;
  }

  int8(v: number): this {
    this.ensure(1);
    this.scratch.writeInt8(v, this.pos);
    this.pos += 1;
    this.length += 1;
    return this;
  }

  uint8(v: number): this {
    this.ensure(1);
    this.scratch[this.pos++] = v & 0xff;
    this.length += 1;
    return this;
  }

  int16(v: number): this {
    this.ensure(2);
    this.scratch.writeInt16BE(v, this.pos);
    this.pos += 2;
    this.length += 2;
    return this;
  }

  uint16(v: number): this {
    this.ensure(2);
    this.scratch.writeUInt16BE(v, this.pos);
    this.pos += 2;
    this.length += 2;
    return this;
  }

  int32(v: number): this {
    this.ensure(4);
    this.scratch.writeInt32BE(v, this.pos);
    this.pos += 4;
    this.length += 4;
    return this;
  }

  uint32(v: number): this {
    this.ensure(4);
    this.scratch.writeUInt32BE(v >>> 0, this.pos);
    this.pos += 4;
    this.length += 4;
    return this;
  }

  /** INT64 from a bigint or a safe-integer number. */
  int64(v: bigint | number): this {
    this.ensure(8);
    if (typeof v === 'bigint') this.scratch.writeBigInt64BE(v, this.pos);
    else writeInt64Number(this.scratch, v, this.pos);
    this.pos += 8;
    this.length += 8;
    return this;
  }

  uint64(v: number | bigint): this {
    this.ensure(8);
    this.scratch.writeBigUInt64BE(BigInt(v), this.pos);
    this.pos += 8;
    this.length += 8;
    return this;
  }

  /** Appends bytes with no length prefix: copied when small, their own chunk when large. */
  raw(v: Buffer): this {
    const n = v.length;
    if (n >= largeBytesMin) {
      this.flushScratch();
      this.chunks.push(v);
    } else {
      this.ensure(n);
      v.copy(this.scratch, this.pos);
      this.pos += n;
    }
    this.length += n;
    return this;
  }
}

/** Writes an int64 from a number without a BigInt when it is a safe integer. */
export function writeInt64Number(buf: Buffer, v: number, offset: number): void {
  if (!Number.isSafeInteger(v)) {
    buf.writeBigInt64BE(BigInt(Math.trunc(v)), offset);
    return;
  }
  const hi = Math.floor(v / 4294967296);
  const lo = v - hi * 4294967296;
  buf.writeInt32BE(hi, offset);
  buf.writeUInt32BE(lo, offset + 4);
}
