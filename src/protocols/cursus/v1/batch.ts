// The Cursus v1 binary batch, magic 0xBA7C (real Cursus util/encode.go EncodeBatchMessages /
// DecodeBatchMessages; the same in the Go, Java and Python SDKs). Big-endian throughout:
//
//   magic u16 0xBA7C | topic_len u16 | topic | partition i32 | acks_len u8 | acks
//   | is_idempotent u8 (0/1) | batch_start u64 | batch_end u64 | count i32 (0..100,000)
//   record × count :=
//     offset u64 | seq_num u64 | producer_id_len u16 | producer_id | key_len u16 | key
//     | epoch i64 | payload_len u32 | payload | event_type_len u16 | event_type
//     | schema_version u32 | aggregate_version u64 | metadata_len u16 | metadata
//
// No presence bitmap: an absent text is length 0, an absent number 0. No timestamps, headers or
// transaction fields. The decoder reads as Go's binary.Read/io.ReadFull do, so a truncated batch
// fails with Go's own words ("failed to read topic bytes: unexpected EOF"), and like v1 it ignores
// bytes after the last record. The broker's own batches (CONSUME, STREAM, READ_STREAM) carry acks
// "1", is_idempotent 0, batch_start/batch_end = the first and last record's seq_num, and the topic
// string the client asked for. Text and byte fields are views of the input.

import type { Decoded } from '../codec/frame.js';

export const v1BatchMagic = 0xba7c;
/** DecodeBatchMessages' maxBatchMessages. */
export const v1BatchRecordsMax = 100_000;

export interface V1Record {
  offset: bigint;
  seqNum: bigint;
  producerId: Buffer;
  key: Buffer;
  epoch: bigint;
  payload: Buffer;
  eventType: Buffer;
  schemaVersion: number;
  aggregateVersion: bigint;
  metadata: Buffer;
}

export interface V1BatchHeader {
  topic: Buffer;
  partition: number;
  /** As sent: v1 checks it (case-insensitively) after decoding. */
  acks: Buffer;
  idempotent: boolean;
  batchStart: bigint;
  batchEnd: bigint;
}

export interface V1Batch extends V1BatchHeader {
  records: V1Record[];
}

/** Is this body a binary batch? processMessage's isBatchMessage: magic and a topic length that fits. */
export function isV1Batch(body: Buffer): boolean {
  if (body.length < 6 || body[0] !== 0xba || body[1] !== 0x7c) return false;
  const topicLength = body.readUInt16BE(2);
  return topicLength !== 0 && topicLength + 2 <= body.length;
}

/** A reader that fails as Go's binary.Read / io.ReadFull do: "EOF" with nothing left, else "unexpected EOF". */
class GoReader {
  off = 0;
  error: string | null = null;
  constructor(private readonly b: Buffer) {}

  private take(n: number, what: string): Buffer | null {
    if (this.error !== null) return null;
    if (n === 0) return this.b.subarray(this.off, this.off);
    const left = this.b.length - this.off;
    if (left < n) {
      this.error = `failed to read ${what}: ${left === 0 ? 'EOF' : 'unexpected EOF'}`;
      return null;
    }
    const v = this.b.subarray(this.off, this.off + n);
    this.off += n;
    return v;
  }

  u8(what: string): number {
    return this.take(1, what)?.[0] ?? 0;
  }
  u16(what: string): number {
    return this.take(2, what)?.readUInt16BE(0) ?? 0;
  }
  i32(what: string): number {
    return this.take(4, what)?.readInt32BE(0) ?? 0;
  }
  u32(what: string): number {
    return this.take(4, what)?.readUInt32BE(0) ?? 0;
  }
  u64(what: string): bigint {
    return this.take(8, what)?.readBigUInt64BE(0) ?? 0n;
  }
  i64(what: string): bigint {
    return this.take(8, what)?.readBigInt64BE(0) ?? 0n;
  }
  bytes(n: number, what: string): Buffer {
    return this.take(n, what) ?? Buffer.alloc(0);
  }
}

/** Decodes a 0xBA7C batch; the failure reason is the text v1 puts in `batch_decode_failed reason=`. */
export function decodeV1Batch(body: Buffer): Decoded<V1Batch> {
  if (body.length < 2) return { ok: false, reason: 'data too short' };
  const r = new GoReader(body);
  const magic = r.u16('magic number');
  if (magic !== v1BatchMagic) return { ok: false, reason: `invalid magic number: ${magic.toString(16)}` };
  const topic = r.bytes(r.u16('topic length'), 'topic bytes');
  const partition = r.i32('partition');
  const acks = r.bytes(r.u8('acks length'), 'acks bytes');
  const idempotent = r.u8('isIdempotent') !== 0;
  const batchStart = r.u64('batch start');
  const batchEnd = r.u64('batch end');
  const count = r.i32('message count');
  if (r.error !== null) return { ok: false, reason: r.error };
  if (count < 0) return { ok: false, reason: `invalid negative message count: ${count}` };
  if (count > v1BatchRecordsMax) return { ok: false, reason: `message count too high: ${count} (max: ${v1BatchRecordsMax})` };
  const records: V1Record[] = [];
  for (let i = 0; i < count; i++) {
    const m = `message[${i}]`;
    const offset = r.u64(`${m} offset`);
    const seqNum = r.u64(`${m} seqNum`);
    const producerId = r.bytes(r.u16(`${m} producerID length`), `${m} producerID bytes`);
    const key = r.bytes(r.u16(`${m} key length`), `${m} key bytes`);
    const epoch = r.i64(`${m} epoch`);
    const payload = r.bytes(r.u32(`${m} payload length`), `${m} payload bytes`);
    const eventType = r.bytes(r.u16(`${m} event type length`), `${m} event type`);
    const schemaVersion = r.u32(`${m} schema version`);
    const aggregateVersion = r.u64(`${m} aggregate version`);
    const metadata = r.bytes(r.u16(`${m} metadata length`), `${m} metadata`);
    if (r.error !== null) return { ok: false, reason: r.error };
    records.push({ offset, seqNum, producerId, key, epoch, payload, eventType, schemaVersion, aggregateVersion, metadata });
  }
  return { ok: true, value: { topic, partition, acks, idempotent, batchStart, batchEnd, records } };
}

/** Fixed bytes of a record before its payload (offset .. payload_len) and after it (event_type_len .. metadata_len). */
const recordHeadBytes = 8 + 8 + 2 + 2 + 8 + 4;
const recordTailBytes = 2 + 4 + 8 + 2;

function checkLength(what: string, n: number, max: number): void {
  if (n > max) throw new RangeError(`${what} of ${n} bytes does not fit a v1 batch (at most ${max})`);
}

/**
 * Encodes a 0xBA7C batch as chunks (payloads are not copied). The header's batch_start and
 * batch_end are the first and last record's seq_num, as EncodeBatchMessages computes them.
 * Throws RangeError when a field does not fit its length prefix (a programmer error: callers
 * check what they convert).
 */
export function encodeV1Batch(header: Omit<V1BatchHeader, 'batchStart' | 'batchEnd'>, records: readonly V1Record[]): Buffer[] {
  checkLength('topic', header.topic.length, 0xffff);
  checkLength('acks', header.acks.length, 0xff);
  const head = Buffer.allocUnsafe(2 + 2 + header.topic.length + 4 + 1 + header.acks.length + 1 + 8 + 8 + 4);
  let o = head.writeUInt16BE(v1BatchMagic, 0);
  o = head.writeUInt16BE(header.topic.length, o);
  o += header.topic.copy(head, o);
  o = head.writeInt32BE(header.partition, o);
  o = head.writeUInt8(header.acks.length, o);
  o += header.acks.copy(head, o);
  o = head.writeUInt8(header.idempotent ? 1 : 0, o);
  o = head.writeBigUInt64BE(records.length > 0 ? records[0]!.seqNum : 0n, o);
  o = head.writeBigUInt64BE(records.length > 0 ? records[records.length - 1]!.seqNum : 0n, o);
  head.writeInt32BE(records.length, o);
  const out: Buffer[] = [head];
  for (const rec of records) {
    checkLength('producer id', rec.producerId.length, 0xffff);
    checkLength('key', rec.key.length, 0xffff);
    checkLength('event type', rec.eventType.length, 0xffff);
    checkLength('metadata', rec.metadata.length, 0xffff);
    const b = Buffer.allocUnsafe(recordHeadBytes + rec.producerId.length + rec.key.length);
    let p = b.writeBigUInt64BE(rec.offset, 0);
    p = b.writeBigUInt64BE(rec.seqNum, p);
    p = b.writeUInt16BE(rec.producerId.length, p);
    p += rec.producerId.copy(b, p);
    p = b.writeUInt16BE(rec.key.length, p);
    p += rec.key.copy(b, p);
    p = b.writeBigInt64BE(rec.epoch, p);
    b.writeUInt32BE(rec.payload.length, p);
    const tail = Buffer.allocUnsafe(recordTailBytes + rec.eventType.length + rec.metadata.length);
    let q = tail.writeUInt16BE(rec.eventType.length, 0);
    q += rec.eventType.copy(tail, q);
    q = tail.writeUInt32BE(rec.schemaVersion, q);
    q = tail.writeBigUInt64BE(rec.aggregateVersion, q);
    q = tail.writeUInt16BE(rec.metadata.length, q);
    rec.metadata.copy(tail, q);
    out.push(b);
    if (rec.payload.length > 0) out.push(rec.payload);
    out.push(tail);
  }
  return out;
}
