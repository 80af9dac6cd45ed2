// Iggy 0.11 shared encodings: the Reader and Writer every codec in this folder uses; the field
// encodings the command payloads are built from (the grammar below) are in ./values.ts
// (specs/iggy-binary-protocol-0.11.md "Shared encodings", specs/iggy-0.11-server-notes.md §6).
//
// All integers little-endian. u64/u128 are bigint; u8/u16/u32 are numbers.
//
//   Name        := len u8 (1..255) | utf8{len}
//   Identifier  := kind u8 | len u8 | value{len}     kind 1 numeric (len 4, u32), 2 string (1..255)
//   Consumer    := kind u8 (1 consumer, 2 group) | Identifier
//   OptPartition:= flag u8 (0|1) | partition_id u32  (value bytes zero when flag = 0)
//   Partitioning:= kind u8 | len u8 | value{len}     1 balanced (len 0), 2 partition id (len 4),
//                                                    3 messages key (len 1..255)
//   Polling     := kind u8 (1 offset, 2 timestamp, 3 first, 4 last, 5 next) | value u64
//   TLV field   := kind u8 (!= 0) | len u32 (1..255) | data{len}
//   TLV block   := (key field | value field)*        exact consumption; used by user headers and
//                                                    options (options: string keys, no duplicate
//                                                    keys, <= 1024 entries, <= 100,000 bytes)
//   Permissions := 10 global bools | has_streams u8 | stream*   (one byte per bool, 0 or 1)
//   stream      := stream_id u32 | 6 bools | has_topics u8 | topic* | has_next_stream u8
//   topic       := topic_id u32 | 4 bools | has_next_topic u8
//
// Readers never throw: the first problem sets a sticky `error` (a reason), every later read
// returns zeros, and the caller checks `reader.done()` once. Writers build a chunk list: small
// fields go into a shared scratch buffer, large byte runs are referenced, not copied.

import type { FileSlice } from '../../../base/batch.js';

const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

/** Bounds-checked little-endian reader over `buf[start, end)` with a sticky error. */
export class Reader {
  pos: number;
  readonly end: number;
  error: string | null = null;
  /** The Iggy error code the first failure calls for, when it is not a plain format error. */
  errorCode: number | null = null;

  constructor(
    readonly buf: Buffer,
    start = 0,
    end = buf.length,
  ) {
    this.pos = start;
    this.end = end;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  get ok(): boolean {
    return this.error === null;
  }

  /** Records the first failure (with its Iggy error code, if it has its own); later reads return zeros and empty views. */
  fail(reason: string, code?: number): void {
    if (this.error === null) {
      this.error = reason;
      this.errorCode = code ?? null;
    }
    this.pos = this.end;
  }

  /** Null when everything was read without error and nothing is left over. */
  done(): string | null {
    if (this.error !== null) return this.error;
    if (this.pos !== this.end) return `${this.end - this.pos} trailing bytes`;
    return null;
  }

  private take(n: number, what: string): number {
    if (this.error !== null) return -1;
    if (n > this.end - this.pos) {
      this.fail(`truncated at ${what}: need ${n} bytes, have ${this.end - this.pos}`);
      return -1;
    }
    const at = this.pos;
    this.pos += n;
    return at;
  }

  u8(what = 'u8'): number {
    const at = this.take(1, what);
    return at < 0 ? 0 : this.buf[at]!;
  }

  u16(what = 'u16'): number {
    const at = this.take(2, what);
    return at < 0 ? 0 : this.buf.readUInt16LE(at);
  }

  u32(what = 'u32'): number {
    const at = this.take(4, what);
    return at < 0 ? 0 : this.buf.readUInt32LE(at);
  }

  u64(what = 'u64'): bigint {
    const at = this.take(8, what);
    return at < 0 ? 0n : this.buf.readBigUInt64LE(at);
  }

  u128(what = 'u128'): bigint {
    const at = this.take(16, what);
    return at < 0 ? 0n : readU128(this.buf, at);
  }

  f32(what = 'f32'): number {
    const at = this.take(4, what);
    return at < 0 ? 0 : this.buf.readFloatLE(at);
  }

  /** A 0/1 byte; anything else is an error. */
  bool(what = 'bool'): boolean {
    const v = this.u8(what);
    if (v > 1) this.fail(`${what} must be 0 or 1, got ${v}`);
    return v === 1;
  }

  /** A view (no copy) of the next `n` bytes. */
  bytes(n: number, what = 'bytes'): Buffer {
    const at = this.take(n, what);
    return at < 0 ? emptyBuffer : this.buf.subarray(at, at + n);
  }

  /** A view of everything left. */
  rest(): Buffer {
    if (this.error !== null) return emptyBuffer;
    const out = this.buf.subarray(this.pos, this.end);
    this.pos = this.end;
    return out;
  }

  /** `n` bytes of strict UTF-8. */
  utf8(n: number, what = 'string'): string {
    const view = this.bytes(n, what);
    if (this.error !== null) return '';
    const s = decodeUtf8(view);
    if (s === null) this.fail(`${what} is not valid UTF-8`);
    return s ?? '';
  }

  /** A sub-reader over the next `n` bytes; its errors must be copied back with `adopt`. */
  sub(n: number, what: string): Reader {
    const at = this.take(n, what);
    if (at < 0) {
      const r = new Reader(emptyBuffer);
      r.fail(this.error ?? what);
      return r;
    }
    return new Reader(this.buf, at, at + n);
  }

  /** Takes a sub-reader's outcome: its error, or trailing bytes it left unread. */
  adopt(sub: Reader, what: string): void {
    const problem = sub.done();
    if (problem !== null) this.fail(`${what}: ${problem}`, sub.errorCode ?? undefined);
  }
}

export const emptyBuffer: Buffer = Buffer.alloc(0);

export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return utf8Decoder.decode(bytes);
  } catch {
    return null;
  }
}

// The u64 and u128 helpers take a path without BigInt arithmetic for values below 2^53 (ids,
// offsets, timestamps, zero fields): every BigInt operation allocates, and Buffer's own
// read/writeBigUInt64LE make four to five BigInts a call, kilobytes of garbage per Iggy request.
const twoPow32 = 2 ** 32;
const safeU64Max = BigInt(Number.MAX_SAFE_INTEGER);

/** u64 LE. */
export function readU64(buf: Buffer, at: number): bigint {
  const hi = buf.readUInt32LE(at + 4);
  return hi < 0x20_0000 ? BigInt(hi * twoPow32 + buf.readUInt32LE(at)) : buf.readBigUInt64LE(at);
}

/** u64 LE; a value outside 0..2^64-1 throws a RangeError, as Buffer.writeBigUInt64LE does. */
export function writeU64(buf: Buffer, value: bigint, at: number): void {
  if (value < 0n || value > safeU64Max) {
    buf.writeBigUInt64LE(value, at);
    return;
  }
  const n = Number(value);
  buf.writeUInt32LE(n % twoPow32, at);
  buf.writeUInt32LE(Math.floor(n / twoPow32), at + 4);
}

export function readU128(buf: Buffer, at: number): bigint {
  if (buf.readUInt32LE(at + 8) === 0 && buf.readUInt32LE(at + 12) === 0) return readU64(buf, at);
  return buf.readBigUInt64LE(at) | (buf.readBigUInt64LE(at + 8) << 64n);
}

export function writeU128(buf: Buffer, value: bigint, at: number): void {
  if (value >= 0n && value <= safeU64Max) {
    writeU64(buf, value, at);
    buf.writeUInt32LE(0, at + 8);
    buf.writeUInt32LE(0, at + 12);
    return;
  }
  buf.writeBigUInt64LE(value & u64Mask, at);
  buf.writeBigUInt64LE((value >> 64n) & u64Mask, at + 8);
}

export const u64Mask = 0xffff_ffff_ffff_ffffn;
export const u64Max = u64Mask;
export const u128Max = (1n << 128n) - 1n;

/** Byte runs at least this long are referenced by the chunk list instead of copied. */
const writerReferenceBytesMin = 256;
const writerScratchBytes = 1024;

/**
 * A little-endian writer that builds a chunk list. Fixed-width fields land in a scratch buffer;
 * `bytes()` references long runs (payloads, stored batches) without copying. `toBuffer()` joins
 * the chunks once, for callers that need one buffer.
 */
export class Writer {
  private readonly out: Array<Buffer | FileSlice> = [];
  private scratch: Buffer;
  private start = 0;
  private pos = 0;
  /** Total bytes written so far. */
  length = 0;

  constructor(scratchBytes = writerScratchBytes) {
    this.scratch = Buffer.allocUnsafe(scratchBytes);
  }

  private room(n: number): void {
    if (this.pos + n <= this.scratch.length) return;
    this.flush();
    this.scratch = Buffer.allocUnsafe(Math.max(writerScratchBytes, n));
    this.start = 0;
    this.pos = 0;
  }

  private flush(): void {
    if (this.pos > this.start) this.out.push(this.scratch.subarray(this.start, this.pos));
    this.start = this.pos;
  }

  u8(v: number): this {
    this.room(1);
    this.scratch[this.pos++] = v;
    this.length += 1;
    return this;
  }

  u16(v: number): this {
    this.room(2);
    this.pos = this.scratch.writeUInt16LE(v, this.pos);
    this.length += 2;
    return this;
  }

  u32(v: number): this {
    this.room(4);
    this.pos = this.scratch.writeUInt32LE(v, this.pos);
    this.length += 4;
    return this;
  }

  u64(v: bigint | number): this {
    this.room(8);
    this.pos = this.scratch.writeBigUInt64LE(typeof v === 'bigint' ? v : BigInt(v), this.pos);
    this.length += 8;
    return this;
  }

  u128(v: bigint): this {
    this.room(16);
    writeU128(this.scratch, v, this.pos);
    this.pos += 16;
    this.length += 16;
    return this;
  }

  f32(v: number): this {
    this.room(4);
    this.pos = this.scratch.writeFloatLE(v, this.pos);
    this.length += 4;
    return this;
  }

  bool(v: boolean): this {
    return this.u8(v ? 1 : 0);
  }

  zeros(n: number): this {
    this.room(n);
    this.scratch.fill(0, this.pos, this.pos + n);
    this.pos += n;
    this.length += n;
    return this;
  }

  bytes(b: Uint8Array): this {
    if (b.length === 0) return this;
    if (b.length >= writerReferenceBytesMin) {
      this.flush();
      this.out.push(Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.length));
    } else {
      this.room(b.length);
      this.scratch.set(b, this.pos);
      this.pos += b.length;
    }
    this.length += b.length;
    return this;
  }

  /** Reserves a u32 to be filled in later (length prefixes); returns its patcher. */
  u32Later(): (value: number) => void {
    this.room(4);
    const buf = this.scratch;
    const at = this.pos;
    buf.writeUInt32LE(0, at);
    this.pos += 4;
    this.length += 4;
    return (value: number) => {
      buf.writeUInt32LE(value, at);
    };
  }

  /** References a range of a log file (a stored batch sent with sendfile, file-replies.ts). */
  file(slice: FileSlice): this {
    if (slice.length === 0) return this;
    this.flush();
    this.out.push(slice);
    this.length += slice.length;
    return this;
  }

  /** The chunks written; throws if `file()` was used (see replyChunks). */
  chunks(): Buffer[] {
    this.flush();
    const out = this.out.slice();
    if (!out.every((c): c is Buffer => Buffer.isBuffer(c))) throw new TypeError('this reply references file slices: use replyChunks()');
    return out;
  }

  /** The chunks written, file slices included. */
  replyChunks(): Array<Buffer | FileSlice> {
    this.flush();
    return this.out.slice();
  }

  toBuffer(): Buffer {
    const chunks = this.chunks();
    if (chunks.length === 1) return chunks[0]!;
    return Buffer.concat(chunks, this.length);
  }
}
