// Kafka wire primitives, write side: the shared chunk-list builder (src/base/wire.ts ChunkWriter;
// the @platformatic/kafka DynamicBuffer idea) with Kafka's encodings, and file slices as chunks.
// Small fixed-width fields go into a growing scratch buffer; byte fields at or above
// `largeBytesMin` are appended as their own chunk without copying (a Fetch response carries record
// batches read from the log this way). `toChunks()` hands the list to `socket.cork()/writev`;
// `sizePrefixed()` adds the 4-byte frame length in front without moving anything.
//
// See reader.ts for the encodings.

import type { FileSlice } from '../../../base/batch.js';
import { ChunkWriter, writeInt64Number } from '../../../base/wire.js';

export { writeInt64Number };

export class Writer extends ChunkWriter<FileSlice> {
  bool(v: boolean): this {
    return this.int8(v ? 1 : 0);
  }

  float64(v: number): this {
    this.ensure(8);
    this.scratch.writeDoubleBE(v, this.pos);
    this.pos += 8;
    this.length += 8;
    return this;
  }

  uuid(v: Buffer): this {
    if (v.length !== 16) throw new Error(`uuid must be 16 bytes, got ${v.length}`);
    return this.raw(v);
  }

  // ---- varints ----

  uvarint(v: number): this {
    if (v < 0 || v > 0xffffffff || !Number.isInteger(v)) throw new Error(`uvarint out of range: ${v}`);
    this.ensure(5);
    let n = v;
    while (n >= 0x80) {
      this.scratch[this.pos++] = (n & 0x7f) | 0x80;
      this.length++;
      n = Math.floor(n / 128);
    }
    this.scratch[this.pos++] = n;
    this.length++;
    return this;
  }

  varint(v: number): this {
    return this.uvarint(((v << 1) ^ (v >> 31)) >>> 0);
  }

  /** Zigzag varlong from a number (exact for safe integers) or a bigint. */
  varlong(v: number | bigint): this {
    let u = typeof v === 'bigint' ? BigInt.asUintN(64, (v << 1n) ^ (v >> 63n)) : null;
    if (u === null) {
      const n = v as number;
      if (Number.isSafeInteger(n) && Math.abs(n) < 2 ** 52) {
        let z = n >= 0 ? n * 2 : -n * 2 - 1;
        this.ensure(10);
        while (z >= 0x80) {
          this.scratch[this.pos++] = (z % 128) | 0x80;
          this.length++;
          z = Math.floor(z / 128);
        }
        this.scratch[this.pos++] = z;
        this.length++;
        return this;
      }
      const b = BigInt(n);
      u = BigInt.asUintN(64, (b << 1n) ^ (b >> 63n));
    }
    this.ensure(10);
    while (u >= 0x80n) {
      this.scratch[this.pos++] = Number(u & 0x7fn) | 0x80;
      this.length++;
      u >>= 7n;
    }
    this.scratch[this.pos++] = Number(u);
    this.length++;
    return this;
  }

  // ---- strings ----

  private utf8(s: string, len: number): void {
    this.ensure(len);
    this.scratch.write(s, this.pos, len, 'utf8');
    this.pos += len;
    this.length += len;
  }

  string(s: string): this {
    const len = Buffer.byteLength(s, 'utf8');
    if (len > 0x7fff) throw new Error(`string too long for int16 length: ${len}`);
    this.int16(len);
    this.utf8(s, len);
    return this;
  }

  nullableString(s: string | null): this {
    if (s === null) return this.int16(-1);
    return this.string(s);
  }

  compactString(s: string): this {
    const len = Buffer.byteLength(s, 'utf8');
    this.uvarint(len + 1);
    this.utf8(s, len);
    return this;
  }

  compactNullableString(s: string | null): this {
    if (s === null) return this.uvarint(0);
    return this.compactString(s);
  }

  // ---- bytes ----

  bytes(v: Buffer): this {
    this.int32(v.length);
    return this.raw(v);
  }

  nullableBytes(v: Buffer | null): this {
    if (v === null) return this.int32(-1);
    return this.bytes(v);
  }

  compactBytes(v: Buffer): this {
    this.uvarint(v.length + 1);
    return this.raw(v);
  }

  /**
   * One bytes field made of several chunks (a records section of many batches): the length prefix
   * (int32, or the compact uvarint when `compact`) covers them all; each goes out as it is.
   */
  bytesChunks(chunks: readonly (Buffer | FileSlice)[], compact: boolean): this {
    let total = 0;
    for (const c of chunks) total += c.length;
    if (compact) this.uvarint(total + 1);
    else this.int32(total);
    for (const c of chunks) {
      if (Buffer.isBuffer(c)) this.raw(c);
      else this.file(c);
    }
    return this;
  }

  /** References a range of a log file (a stored batch sent with sendfile, file-replies.ts). */
  file(slice: FileSlice): this {
    if (slice.length === 0) return this;
    this.flushScratch();
    this.chunks.push(slice);
    this.length += slice.length;
    return this;
  }

  compactNullableBytes(v: Buffer | null): this {
    if (v === null) return this.uvarint(0);
    return this.compactBytes(v);
  }

  // ---- composition ----

  /** Appends everything another writer holds (its chunks, not copies). */
  append(other: Writer): this {
    this.flushScratch();
    for (const c of other.toReplyChunks()) this.chunks.push(c);
    this.length += other.length;
    return this;
  }

  /** The bytes written so far as a list of buffers (views; do not mutate). Throws if `file()` was used. */
  toChunks(): Buffer[] {
    const chunks = this.toReplyChunks();
    if (!chunks.every((c): c is Buffer => Buffer.isBuffer(c))) throw new TypeError('this message references file slices: use toReplyChunks()');
    return chunks;
  }

  /** The chunks written so far, file slices included. */
  toReplyChunks(): Array<Buffer | FileSlice> {
    this.flushScratch();
    return this.chunks;
  }

  /** The chunks preceded by a 4-byte big-endian length: a Kafka frame ready for writev. */
  sizePrefixed(): Buffer[] {
    this.toChunks();
    return this.sizePrefixedChunks() as Buffer[];
  }

  /** sizePrefixed, file slices included (a Fetch response for the broker's socket). */
  sizePrefixedChunks(): Array<Buffer | FileSlice> {
    const prefix = Buffer.allocUnsafe(4);
    prefix.writeInt32BE(this.length, 0);
    const chunks = this.toReplyChunks();
    const out = new Array<Buffer | FileSlice>(chunks.length + 1);
    out[0] = prefix;
    for (let i = 0; i < chunks.length; i++) out[i + 1] = chunks[i]!;
    return out;
  }

  /** One contiguous buffer (copies once if there are several chunks). */
  toBuffer(): Buffer {
    const chunks = this.toChunks();
    if (chunks.length === 1) return chunks[0]!;
    return Buffer.concat(chunks, this.length);
  }
}

/** Writes a safe-integer number as a big-endian int64 without going through bigint. */
/** Concatenates chunks into one buffer (tests and cold paths). */
export function joinChunks(chunks: readonly Buffer[]): Buffer {
  let total = 0;
  for (const c of chunks) total += c.length;
  return Buffer.concat(chunks as Buffer[], total);
}
