// Cursus Wire v2 primitives (docs/protocols/cursus-wire-v2.md): big-endian integers, and strings
// and byte fields as a u32 length followed by that many bytes. The Reader and the Writer are the
// shared wire reader (sticky error, views) and chunk-list writer of src/base/wire.ts, with
// Cursus's u32-length fields and its 64-bit integers read as numbers within 2^53 - 1.

import { ChunkWriter, WireReader, emptyBytes } from '../../../base/wire.js';

/** Largest magnitude a u64/i64 field may have to be read as a number (docs §9). */
export const safeIntegerMax = Number.MAX_SAFE_INTEGER;

export class Reader extends WireReader {
  /** The reason the input is not exactly consumed, or null. */
  done(): string | null {
    if (this.error !== null) return this.error;
    return this.offset === this.end ? null : `${this.end - this.offset} trailing bytes`;
  }

  /** A u64 as a number; values above 2^53 - 1 fail the read (`what` names the field). */
  u64(what: string): number {
    const v = this.uint64();
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
    const n = this.uint32();
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

export class Writer extends ChunkWriter {
  constructor(scratchBytes = 1024) {
    super(scratchBytes);
  }

  /** A u32-length byte field. */
  bytes(b: Buffer): this {
    return this.uint32(b.length).raw(b);
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
