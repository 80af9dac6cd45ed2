// Quartet's own neutral record encoding (BatchFormat.neutral): what tests and tools append, and
// the format compaction uses to prove the log's by-key logic without any protocol codec.
//
// All integers big-endian.
//
//   payload := version u8 (= 0) | recordCount u32 | record{recordCount}
//   record  := offsetDelta u32          offset - batch base offset, strictly ascending
//              timestamp i64            ms since the epoch
//              keyLength i32            -1 = null key
//              key bytes{keyLength}
//              valueLength i32          -1 = null value (a tombstone)
//              value bytes{valueLength}
//              headerCount u32
//              header{headerCount}
//   header  := keyLength u16 | key utf8{keyLength} | valueLength i32 (-1 = null) | value bytes

import assert from 'node:assert/strict';
import { QuartetError } from '../base/errors.js';
import { BatchFormat, type AppendRequest, type BatchFormatCodec, type NeutralRecord, type StoredBatch } from './types.js';

const neutralVersion = 0;
const twoPow32 = 2 ** 32;
/** Decoding refuses counts above this before allocating anything. */
const neutralRecordsPerBatchMax = 1_000_000;

/** A record as a caller hands it to encodeNeutralBatch: offsets are assigned by position. */
export interface NeutralRecordInput {
  key?: Buffer | string | null;
  value: Buffer | string | null;
  headers?: Array<{ key: string; value: Buffer | string | null }>;
  /** Defaults to the batch timestamp. */
  timestamp?: number;
}

export interface NeutralBatchOptions {
  /** Timestamp for records without their own (ms). Defaults to Date.now(). */
  timestamp?: number;
  producerId?: number;
  producerEpoch?: number;
  baseSequence?: number;
  flags?: number;
}

function toBytes(value: Buffer | string | null | undefined): Buffer | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
}

function recordBytes(r: NeutralRecord): number {
  let n = 4 + 8 + 4 + (r.key?.length ?? 0) + 4 + (r.value?.length ?? 0) + 4;
  for (const h of r.headers) n += 2 + Buffer.byteLength(h.key, 'utf8') + 4 + (h.value?.length ?? 0);
  return n;
}

class Writer {
  position = 0;
  constructor(readonly buf: Buffer) {}
  u8(v: number): void {
    this.position = this.buf.writeUInt8(v, this.position);
  }
  u16(v: number): void {
    this.position = this.buf.writeUInt16BE(v, this.position);
  }
  u32(v: number): void {
    this.position = this.buf.writeUInt32BE(v, this.position);
  }
  i64(v: number): void {
    const hi = Math.floor(v / twoPow32);
    this.buf.writeInt32BE(hi, this.position);
    this.position = this.buf.writeUInt32BE(v - hi * twoPow32, this.position + 4);
  }
  bytes(v: Buffer | null): void {
    if (v === null) {
      this.position = this.buf.writeInt32BE(-1, this.position);
      return;
    }
    this.position = this.buf.writeInt32BE(v.length, this.position);
    this.position += v.copy(this.buf, this.position);
  }
}

/** Bounds-checked reads; any overrun throws corrupt_batch (decode is allowed to throw). */
class Reader {
  position = 0;
  constructor(readonly buf: Buffer) {}
  private need(n: number): void {
    if (this.position + n > this.buf.length) throw new QuartetError('corrupt_batch', 'neutral batch truncated');
  }
  u8(): number {
    this.need(1);
    return this.buf.readUInt8(this.position++);
  }
  u16(): number {
    this.need(2);
    const v = this.buf.readUInt16BE(this.position);
    this.position += 2;
    return v;
  }
  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32BE(this.position);
    this.position += 4;
    return v;
  }
  i64(): number {
    this.need(8);
    const v = this.buf.readInt32BE(this.position) * twoPow32 + this.buf.readUInt32BE(this.position + 4);
    this.position += 8;
    return v;
  }
  bytes(): Buffer | null {
    this.need(4);
    const length = this.buf.readInt32BE(this.position);
    this.position += 4;
    if (length === -1) return null;
    if (length < 0) throw new QuartetError('corrupt_batch', 'neutral batch has a negative length');
    this.need(length);
    // A copy: decoded records outlive the read buffer they came from (compaction rewrites them).
    const out = Buffer.from(this.buf.subarray(this.position, this.position + length));
    this.position += length;
    return out;
  }
  utf8(length: number): string {
    this.need(length);
    const s = this.buf.toString('utf8', this.position, this.position + length);
    this.position += length;
    return s;
  }
}

/** Encodes records (offsets ascending, all >= baseOffset) into a neutral payload. */
export function encodeNeutralPayload(records: NeutralRecord[], baseOffset: number): Buffer {
  let size = 1 + 4;
  for (const r of records) size += recordBytes(r);
  const w = new Writer(Buffer.allocUnsafe(size));
  w.u8(neutralVersion);
  w.u32(records.length);
  let previous = -1;
  for (const r of records) {
    const delta = r.offset - baseOffset;
    assert.ok(delta > previous && delta < twoPow32, 'neutral record offsets must ascend from the base offset');
    previous = delta;
    w.u32(delta);
    w.i64(r.timestamp);
    w.bytes(r.key);
    w.bytes(r.value);
    w.u32(r.headers.length);
    for (const h of r.headers) {
      const key = Buffer.from(h.key, 'utf8');
      w.u16(key.length);
      w.position += key.copy(w.buf, w.position);
      w.bytes(h.value);
    }
  }
  assert.equal(w.position, size);
  return w.buf;
}

/** Decodes a neutral payload into records with absolute offsets. Throws corrupt_batch. */
export function decodeNeutralPayload(payload: Buffer, baseOffset: number): NeutralRecord[] {
  const r = new Reader(payload);
  const version = r.u8();
  if (version !== neutralVersion) throw new QuartetError('corrupt_batch', `neutral batch version ${version}`);
  const count = r.u32();
  if (count > neutralRecordsPerBatchMax) throw new QuartetError('corrupt_batch', 'neutral batch record count too large');
  const records: NeutralRecord[] = [];
  let previous = -1;
  for (let i = 0; i < count; i++) {
    const delta = r.u32();
    if (delta <= previous) throw new QuartetError('corrupt_batch', 'neutral batch offsets not ascending');
    previous = delta;
    const timestamp = r.i64();
    const key = r.bytes();
    const value = r.bytes();
    const headerCount = r.u32();
    if (headerCount > payload.length) throw new QuartetError('corrupt_batch', 'neutral header count too large');
    const headers: NeutralRecord['headers'] = [];
    for (let j = 0; j < headerCount; j++) {
      const hk = r.utf8(r.u16());
      headers.push({ key: hk, value: r.bytes() });
    }
    records.push({ offset: baseOffset + delta, timestamp, key, value, headers });
  }
  if (r.position !== payload.length) throw new QuartetError('corrupt_batch', 'neutral batch has trailing bytes');
  return records;
}

/** An AppendRequest for `records`, offsets 0..n-1 relative to whatever base the log assigns. */
export function encodeNeutralBatch(records: NeutralRecordInput[], options: NeutralBatchOptions = {}): AppendRequest {
  assert.ok(records.length > 0, 'a batch needs at least one record');
  const batchTimestamp = options.timestamp ?? Date.now();
  const neutral: NeutralRecord[] = records.map((r, i) => ({
    offset: i,
    timestamp: r.timestamp ?? batchTimestamp,
    key: toBytes(r.key),
    value: toBytes(r.value),
    headers: (r.headers ?? []).map((h) => ({ key: h.key, value: toBytes(h.value) })),
  }));
  const timestamps = neutral.map((r) => r.timestamp);
  return {
    format: BatchFormat.neutral,
    recordCount: neutral.length,
    firstTimestamp: timestamps[0]!,
    maxTimestamp: Math.max(...timestamps),
    producerId: options.producerId ?? -1,
    producerEpoch: options.producerEpoch ?? -1,
    baseSequence: options.baseSequence ?? -1,
    flags: options.flags ?? 0,
    payload: encodeNeutralPayload(neutral, 0),
  };
}

/** Decodes a stored neutral batch (convenience for tests and tools). */
export function decodeNeutralBatch(batch: StoredBatch): NeutralRecord[] {
  return decodeNeutralPayload(batch.payload, batch.baseOffset);
}

export const neutralCodec: BatchFormatCodec = {
  format: BatchFormat.neutral,
  decode: decodeNeutralBatch,
  messageCount: (batch) => (batch.payload.length >= 5 && batch.payload[0] === neutralVersion ? batch.payload.readUInt32BE(1) : null),
  encode(records: NeutralRecord[], baseOffset: number, template: StoredBatch): AppendRequest {
    // Keep the template's offset span so a compacted batch still covers the offsets it covered.
    const lastOffset = Math.max(template.lastOffset, records.at(-1)?.offset ?? baseOffset);
    const timestamps = records.map((r) => r.timestamp);
    return {
      format: BatchFormat.neutral,
      recordCount: lastOffset - baseOffset + 1,
      firstTimestamp: timestamps[0] ?? template.firstTimestamp,
      maxTimestamp: timestamps.length > 0 ? Math.max(...timestamps) : template.maxTimestamp,
      producerId: template.producerId,
      producerEpoch: template.producerEpoch,
      baseSequence: template.baseSequence,
      flags: template.flags,
      payload: encodeNeutralPayload(records, baseOffset),
    };
  },
};
