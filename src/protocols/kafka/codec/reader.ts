// Kafka wire primitives, read side: the shared WireReader (src/base/wire.ts: fixed-width fields,
// the sticky error) with Kafka's varints, strings, bytes, arrays and tagged fields. Pure: no I/O, no
// allocation beyond the values returned.
//
// The Reader keeps a sticky error (kbin.Reader.Complete() in franz-go, Header.invalid() in
// TigerBeetle): a read past the end, a negative length, a count larger than the bytes left or an
// overlong varint records the first reason, moves the cursor to the end and makes every later read
// return a zero value. Decoders therefore read straight through a frame and check `error` (or
// `complete()`) once at the end; nothing throws mid-frame and no length from the peer is ever
// allocated before it is checked against the bytes actually present.
//
// Byte and string fields are returned as `subarray` views of the frame (no copy); the caller must
// copy them if it keeps them past the life of the frame buffer.
//
// Encodings (Kafka protocol guide, "Protocol Primitive Types"):
//   INT8/16/32/64, UINT16/32, FLOAT64   big-endian fixed width
//   VARINT / VARLONG                    zigzag, LEB128 (7 bits a byte, low group first)
//   UNSIGNED_VARINT                     LEB128 without zigzag (compact lengths, tags)
//   STRING / NULLABLE_STRING            int16 length (-1 = null) + UTF-8
//   COMPACT_[NULLABLE_]STRING           uvarint length+1 (0 = null) + UTF-8
//   BYTES / NULLABLE_BYTES              int32 length (-1 = null) + bytes
//   COMPACT_[NULLABLE_]BYTES            uvarint length+1 (0 = null) + bytes
//   ARRAY / COMPACT_ARRAY               int32 count (-1 = null) / uvarint count+1 (0 = null)
//   UUID                                16 bytes
//   TAGGED_FIELDS                       uvarint count, then per field uvarint tag, uvarint size, bytes

import { WireReader, emptyBytes } from '../../../base/wire.js';

const twoPow32 = 4294967296;

export class Reader extends WireReader {
  bool(): boolean {
    return this.int8() !== 0;
  }

  /**
   * An int64 as a JS number. Exact for |v| < 2^53 (offsets, timestamps, ids this broker hands
   * out); beyond that the nearest double is returned.
   */
  int64AsNumber(): number {
    if (!this.need(8)) return 0;
    const hi = this.buf.readInt32BE(this.offset);
    const lo = this.buf.readUInt32BE(this.offset + 4);
    this.offset += 8;
    if (hi >= -0x200000 && hi < 0x200000) return hi * twoPow32 + lo;
    return Number((BigInt(hi) << 32n) | BigInt(lo));
  }

  float64(): number {
    if (!this.need(8)) return 0;
    const v = this.buf.readDoubleBE(this.offset);
    this.offset += 8;
    return v;
  }

  uuid(): Buffer {
    if (!this.need(16)) return zeroUuid;
    const v = this.buf.subarray(this.offset, this.offset + 16);
    this.offset += 16;
    return v;
  }

  // ---- varints ----

  /** LEB128 unsigned 32-bit value (at most 5 bytes). */
  uvarint(): number {
    if (this.error !== null) return 0;
    let result = 0;
    for (let i = 0; i < 5; i++) {
      if (this.offset >= this.end) {
        this.fail('truncated varint');
        return 0;
      }
      const b = this.buf[this.offset++]!;
      if (i === 4 && b > 0x0f) {
        this.fail('varint longer than 32 bits');
        return 0;
      }
      result += (b & 0x7f) * 2 ** (7 * i);
      if ((b & 0x80) === 0) return result;
    }
    this.fail('varint longer than 5 bytes');
    return 0;
  }

  /** Zigzag-encoded signed 32-bit varint. */
  varint(): number {
    const u = this.uvarint();
    return (u >>> 1) ^ -(u & 1);
  }

  /** LEB128 unsigned 64-bit value as a bigint (at most 10 bytes). */
  uvarlongBig(): bigint {
    if (this.error !== null) return 0n;
    let result = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.offset >= this.end) {
        this.fail('truncated varlong');
        return 0n;
      }
      const b = this.buf[this.offset++]!;
      if (i === 9 && b > 0x01) {
        this.fail('varlong longer than 64 bits');
        return 0n;
      }
      result |= BigInt(b & 0x7f) << BigInt(7 * i);
      if ((b & 0x80) === 0) return result;
    }
    this.fail('varlong longer than 10 bytes');
    return 0n;
  }

  /** Zigzag-encoded signed 64-bit varint as a bigint. */
  varlongBig(): bigint {
    const u = this.uvarlongBig();
    return (u >> 1n) ^ -(u & 1n);
  }

  /**
   * Zigzag-encoded signed 64-bit varint as a number: exact for |v| < 2^53 (record timestamp deltas
   * always are), computed without bigint when the encoding is at most 7 bytes.
   */
  varlong(): number {
    if (this.error !== null) return 0;
    const start = this.offset;
    let u = 0;
    for (let i = 0; i < 7; i++) {
      if (this.offset >= this.end) {
        this.fail('truncated varlong');
        return 0;
      }
      const b = this.buf[this.offset++]!;
      u += (b & 0x7f) * 2 ** (7 * i);
      if ((b & 0x80) === 0) return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
    }
    this.offset = start;
    return Number(this.varlongBig());
  }

  // ---- strings ----

  private utf8(len: number): string {
    if (!this.need(len)) return '';
    const s = this.buf.toString('utf8', this.offset, this.offset + len);
    this.offset += len;
    return s;
  }

  /** STRING: int16 length + UTF-8; null is an error. */
  string(): string {
    const len = this.int16();
    if (len < 0) {
      this.fail(len === -1 ? 'null in a non-nullable string' : `negative string length ${len}`);
      return '';
    }
    return this.utf8(len);
  }

  nullableString(): string | null {
    const len = this.int16();
    if (len === -1) return null;
    if (len < 0) {
      this.fail(`negative string length ${len}`);
      return null;
    }
    return this.utf8(len);
  }

  compactString(): string {
    const n = this.uvarint();
    if (n === 0) {
      if (this.error === null) this.fail('null in a non-nullable compact string');
      return '';
    }
    return this.utf8(n - 1);
  }

  compactNullableString(): string | null {
    const n = this.uvarint();
    if (n === 0) return null;
    return this.utf8(n - 1);
  }

  // ---- bytes (views, no copy) ----

  bytes(): Buffer {
    const len = this.int32();
    if (len < 0) {
      this.fail(len === -1 ? 'null in non-nullable bytes' : `negative bytes length ${len}`);
      return emptyBuffer;
    }
    return this.raw(len);
  }

  nullableBytes(): Buffer | null {
    const len = this.int32();
    if (len === -1) return null;
    if (len < 0) {
      this.fail(`negative bytes length ${len}`);
      return null;
    }
    return this.raw(len);
  }

  compactBytes(): Buffer {
    const n = this.uvarint();
    if (n === 0) {
      if (this.error === null) this.fail('null in non-nullable compact bytes');
      return emptyBuffer;
    }
    return this.raw(n - 1);
  }

  compactNullableBytes(): Buffer | null {
    const n = this.uvarint();
    if (n === 0) return null;
    return this.raw(n - 1);
  }

  // ---- arrays ----

  /**
   * ARRAY count: -1 for null, else the count. A count whose elements cannot fit in the bytes left
   * (each element takes at least `minElementBytes`) is an error, so a hostile count never drives an
   * allocation or a long loop.
   */
  arrayLength(minElementBytes: number): number {
    const n = this.int32();
    if (n === -1) return -1;
    return this.checkCount(n, minElementBytes);
  }

  /** COMPACT_ARRAY count: -1 for null, else the count. */
  compactArrayLength(minElementBytes: number): number {
    const n = this.uvarint();
    if (n === 0) return -1;
    return this.checkCount(n - 1, minElementBytes);
  }

  private checkCount(n: number, minElementBytes: number): number {
    if (this.error !== null) return 0;
    if (n < 0) {
      this.fail(`negative array count ${n}`);
      return 0;
    }
    if (n * Math.max(minElementBytes, 0) > this.end - this.offset) {
      this.fail(`array count ${n} exceeds the ${this.end - this.offset} bytes left`);
      return 0;
    }
    return n;
  }

  // ---- tagged fields (KIP-482) ----

  /**
   * Reads a TAGGED_FIELDS section. For each field, `onField` (if given) receives the tag and a
   * Reader bounded to the field's bytes; unknown tags are skipped. Returns the number of fields.
   */
  taggedFields(onField?: (tag: number, field: Reader) => void): number {
    const count = this.checkCount(this.uvarint(), 2);
    let lastTag = -1;
    for (let i = 0; i < count && this.error === null; i++) {
      const tag = this.uvarint();
      const size = this.uvarint();
      if (this.error !== null) break;
      if (tag <= lastTag) {
        this.fail(`tagged field ${tag} out of order`);
        break;
      }
      lastTag = tag;
      if (size > this.end - this.offset) {
        this.fail(`tagged field ${tag} size ${size} exceeds the bytes left`);
        break;
      }
      if (onField !== undefined) {
        const sub = new Reader(this.buf, this.offset, this.offset + size);
        onField(tag, sub);
        if (sub.error !== null) this.fail(`tagged field ${tag}: ${sub.error}`);
      }
      this.offset += size;
    }
    return count;
  }
}

export const emptyBuffer: Buffer = emptyBytes;
/** The all-zero UUID (Kafka's Uuid.ZERO_UUID). Never write into it. */
export const zeroUuid: Buffer = Buffer.alloc(16);
