// Cursus Wire v2 primitives (docs/protocols/cursus-wire-v2.md): big-endian integers, and strings
// and byte fields as a u32 length followed by that many bytes.
//
// The Reader keeps a sticky error: a read past the end or a length past the bytes left records the
// first reason, moves the cursor to the end and makes every later read return a zero value, so a
// decoder reads straight through and checks `error` (or `complete()`) once. Byte fields are
// `subarray` views of the input. The Writer builds a chunk list: fixed fields go into a scratch
// buffer, byte fields of at least `largeBytesMin` are appended as their own chunk, not copied.

/** Largest magnitude a u64/i64 field may have to be read as a number (docs §9). */
export const safeIntegerMax = Number.MAX_SAFE_INTEGER;

export class Reader {
  offset: number;
  /** The first failure, or null. Once set, every read returns a zero value. */
  error: string | null = null;

  constructor(
    readonly buf: Buffer,
    offset = 0,
    readonly end: number = buf.length,
  ) {
    this.offset = offset;
  }

  get remaining(): number {
    return this.end - this.offset;
  }

  /** True when no read failed and every byte was consumed. */
  complete(): boolean {
    return this.error === null && this.offset === this.end;
  }

  /** The reason the input is not exactly consumed, or null. */
  done(): string | null {
    if (this.error !== null) return this.error;
    return this.offset === this.end ? null : `${this.end - this.offset} trailing bytes`;
  }

  /** Records the first failure and stops further reads. */
  fail(reason: string): void {
    if (this.error === null) this.error = `${reason} (at byte ${this.offset})`;
    this.offset = this.end;
  }

  private need(n: number): boolean {
    if (this.error !== null) return false;
    if (this.end - this.offset < n) {
      this.fail(`truncated: need ${n} bytes, have ${this.end - this.offset}`);
      return false;
    }
    return true;
  }

  u8(): number {
    if (!this.need(1)) return 0;
    return this.buf[this.offset++]!;
  }

  u16(): number {
    if (!this.need(2)) return 0;
    const v = this.buf.readUInt16BE(this.offset);
    this.offset += 2;
    return v;
  }

  i32(): number {
    if (!this.need(4)) return 0;
    const v = this.buf.readInt32BE(this.offset);
    this.offset += 4;
    return v;
  }

  u32(): number {
    if (!this.need(4)) return 0;
    const v = this.buf.readUInt32BE(this.offset);
    this.offset += 4;
    return v;
  }

  u64Big(): bigint {
    if (!this.need(8)) return 0n;
    const v = this.buf.readBigUInt64BE(this.offset);
    this.offset += 8;
    return v;
  }

  /** A u64 as a number; values above 2^53 - 1 fail the read (`what` names the field). */
  u64(what: string): number {
    const v = this.u64Big();
    if (v > BigInt(safeIntegerMax)) {
      this.fail(`${what} ${v} is beyond 2^53 - 1`);
      return 0;
    }
    return Number(v);
  }

  /** An i64 as a number; magnitudes above 2^53 - 1 fail the read. */
  i64(what: string): number {
    if (!this.need(8)) return 0;
    const v = this.buf.readBigInt64BE(this.offset);
    this.offset += 8;
    if (v > BigInt(safeIntegerMax) || v < -BigInt(safeIntegerMax)) {
      this.fail(`${what} ${v} is beyond ±(2^53 - 1)`);
      return 0;
    }
    return Number(v);
  }

  /** A u32-length byte field (a view), at most `max` bytes. */
  bytes(what: string, max: number): Buffer {
    const n = this.u32();
    if (this.error !== null) return emptyBytes;
    if (n > max) {
      this.fail(`${what} length ${n} exceeds ${max} bytes`);
      return emptyBytes;
    }
    if (!this.need(n)) return emptyBytes;
    const v = this.buf.subarray(this.offset, this.offset + n);
    this.offset += n;
    return v;
  }

  /** A u32-length UTF-8 string, at most `max` bytes. */
  string(what: string, max: number): string {
    const b = this.bytes(what, max);
    return b.length === 0 ? '' : b.toString('utf8');
  }
}

const emptyBytes = Buffer.alloc(0);

const scratchBytesDefault = 1024;
/** Byte fields at least this long are appended as separate chunks instead of copied. */
const largeBytesMin = 512;

export class Writer {
  private readonly chunks: Buffer[] = [];
  private scratch: Buffer;
  private start = 0;
  private pos = 0;
  /** Total bytes written. */
  length = 0;

  constructor(scratchBytes = scratchBytesDefault) {
    this.scratch = Buffer.allocUnsafe(scratchBytes);
  }

  private flushScratch(): void {
    if (this.pos > this.start) {
      this.chunks.push(this.scratch.subarray(this.start, this.pos));
      this.start = this.pos;
    }
  }

  private ensure(n: number): void {
    if (this.scratch.length - this.pos >= n) return;
    this.flushScratch();
    this.scratch = Buffer.allocUnsafe(Math.max(scratchBytesDefault, n));
    this.start = 0;
    this.pos = 0;
  }

  u8(v: number): this {
    this.ensure(1);
    this.scratch[this.pos++] = v & 0xff;
    this.length += 1;
    return this;
  }

  u16(v: number): this {
    this.ensure(2);
    this.scratch.writeUInt16BE(v, this.pos);
    this.pos += 2;
    this.length += 2;
    return this;
  }

  i32(v: number): this {
    this.ensure(4);
    this.scratch.writeInt32BE(v, this.pos);
    this.pos += 4;
    this.length += 4;
    return this;
  }

  u32(v: number): this {
    this.ensure(4);
    this.scratch.writeUInt32BE(v >>> 0, this.pos);
    this.pos += 4;
    this.length += 4;
    return this;
  }

  u64(v: number | bigint): this {
    this.ensure(8);
    this.scratch.writeBigUInt64BE(BigInt(v), this.pos);
    this.pos += 8;
    this.length += 8;
    return this;
  }

  i64(v: number | bigint): this {
    this.ensure(8);
    this.scratch.writeBigInt64BE(BigInt(v), this.pos);
    this.pos += 8;
    this.length += 8;
    return this;
  }

  /** Raw bytes with no length prefix. */
  raw(b: Buffer): this {
    if (b.length >= largeBytesMin) {
      this.flushScratch();
      this.chunks.push(b);
      this.length += b.length;
      return this;
    }
    this.ensure(b.length);
    b.copy(this.scratch, this.pos);
    this.pos += b.length;
    this.length += b.length;
    return this;
  }

  /** A u32-length byte field. */
  bytes(b: Buffer): this {
    return this.u32(b.length).raw(b);
  }

  /** A u32-length UTF-8 string. */
  string(s: string): this {
    return this.bytes(Buffer.from(s, 'utf8'));
  }

  /** The chunks written so far (views; do not write after taking them). */
  toChunks(): Buffer[] {
    this.flushScratch();
    return this.chunks;
  }

  /** One buffer (copies when there is more than one chunk). */
  toBuffer(): Buffer {
    const chunks = this.toChunks();
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.length);
  }
}

/** Field names (CRQ2 keys, error fields, OK-line keys): docs §6. */
export const keyBytesMax = 64;
const keyPattern = /^[a-z_][a-zA-Z0-9_]*$/;

/** Null when `key` is a valid field name, else why not. */
export function checkKey(key: string): string | null {
  if (key.length === 0 || key.length > keyBytesMax) return `field name of ${key.length} bytes (1..${keyBytesMax})`;
  return keyPattern.test(key) ? null : `field name ${JSON.stringify(key)} has characters that are not allowed`;
}
