// CBV2, the Wire v2 batch (docs/protocols/cursus-wire-v2.md §9):
//
//   magic u32 'CBV2' | version u16 = 2 | flags u16 (bit 0 idempotent) | topic string (1-249)
//   | partition i32 | acks string ("0" "1" "-1" "all") | batch_start u64 | batch_end u64
//   | record_count u32 (<= 100,000) | (u32 length + record) × record_count
//
//   record := version u16 = 2 | presence u64 | topic string | partition i32 | offset u64
//             | payload bytes | the optional fields whose presence bit is set, in bit order
//
// Decoders reject unknown presence bits (18-63), records that do not use exactly their length,
// trailing bytes, a record topic or partition that differs from the batch's, and more than
// 100,000 records. Byte fields are views of the input.

import type { Decoded } from './frame.js';
import { payloadBytesMax } from './frame.js';
import { Reader, Writer } from './primitives.js';

export const batchMagic = 0x43425632;
export const batchVersion = 2;
export const recordVersion = 2;
export const batchRecordsMax = 100_000;
export const topicBytesMax = 249;
export const batchFlagIdempotent = 0x0001;
export const acksValues = ['0', '1', '-1', 'all'] as const;
export type Acks = (typeof acksValues)[number];

export interface CursusRecord {
  topic: string;
  partition: number;
  offset: number;
  payload: Buffer;
  producerId?: string;
  producerEpoch?: number;
  seqNum?: number;
  /** ms since the Unix epoch. */
  timestamp?: number;
  key?: Buffer;
  eventType?: string;
  schemaVersion?: number;
  aggregateVersion?: number;
  /** JSON text. */
  metadata?: string;
  eventId?: string;
  transactionalId?: string;
  transactionState?: string;
  transactionMarker?: string;
  controlBatchType?: string;
  controlBatchVersion?: number;
  controlBatchCoordinatorEpoch?: number;
  controlKey?: Buffer;
  controlValue?: Buffer;
}

type OptionalName = Exclude<keyof CursusRecord, 'topic' | 'partition' | 'offset' | 'payload'>;
type FieldType = 'string' | 'bytes' | 'i64' | 'u64' | 'u32' | 'u16' | 'i32';

/** The optional record fields by presence bit (docs §9). */
export const optionalRecordFields: ReadonlyArray<{ bit: number; name: OptionalName; type: FieldType }> = [
  { bit: 0, name: 'producerId', type: 'string' },
  { bit: 1, name: 'producerEpoch', type: 'i64' },
  { bit: 2, name: 'seqNum', type: 'u64' },
  { bit: 3, name: 'timestamp', type: 'i64' },
  { bit: 4, name: 'key', type: 'bytes' },
  { bit: 5, name: 'eventType', type: 'string' },
  { bit: 6, name: 'schemaVersion', type: 'u32' },
  { bit: 7, name: 'aggregateVersion', type: 'u64' },
  { bit: 8, name: 'metadata', type: 'string' },
  { bit: 9, name: 'eventId', type: 'string' },
  { bit: 10, name: 'transactionalId', type: 'string' },
  { bit: 11, name: 'transactionState', type: 'string' },
  { bit: 12, name: 'transactionMarker', type: 'string' },
  { bit: 13, name: 'controlBatchType', type: 'string' },
  { bit: 14, name: 'controlBatchVersion', type: 'u16' },
  { bit: 15, name: 'controlBatchCoordinatorEpoch', type: 'i32' },
  { bit: 16, name: 'controlKey', type: 'bytes' },
  { bit: 17, name: 'controlValue', type: 'bytes' },
];

/** Presence bits in use; any other set bit is rejected. */
export const presenceKnownMask = (1n << BigInt(optionalRecordFields.length)) - 1n;

export interface BatchHeader {
  idempotent: boolean;
  topic: string;
  partition: number;
  acks: Acks;
  batchStart: number;
  batchEnd: number;
  recordCount: number;
}

export interface CursusBatch extends BatchHeader {
  records: CursusRecord[];
}

/** Where a batch's parts lie: the header fields and the byte offsets patched by `stampBatch`. */
export interface BatchLayout {
  header: BatchHeader;
  /** The topic bytes (a view). */
  topicBytes: Buffer;
  /** Offset of the header's partition field. */
  partitionAt: number;
  /** Offset of record_count. */
  recordCountAt: number;
  /** Offset of the first record's length prefix. */
  recordsAt: number;
}

// ---- encoding ----

function writeOptional(w: Writer, type: FieldType, v: unknown): void {
  switch (type) {
    case 'string':
      w.string(v as string);
      break;
    case 'bytes':
      w.bytes(v as Buffer);
      break;
    case 'i64':
      w.int64(v as number);
      break;
    case 'u64':
      w.uint64(v as number);
      break;
    case 'u32':
      w.uint32(v as number);
      break;
    case 'u16':
      w.uint16(v as number);
      break;
    case 'i32':
      w.int32(v as number);
      break;
  }
}

/** One record, without its length prefix. */
export function encodeRecord(rec: CursusRecord): Buffer[] {
  let presence = 0n;
  for (const f of optionalRecordFields) if (rec[f.name] !== undefined) presence |= 1n << BigInt(f.bit);
  const w = new Writer(256);
  w.uint16(recordVersion).uint64(presence).string(rec.topic).int32(rec.partition).uint64(rec.offset).bytes(rec.payload);
  for (const f of optionalRecordFields) {
    const v = rec[f.name];
    if (v !== undefined) writeOptional(w, f.type, v);
  }
  return w.toChunks();
}

/** The batch header up to and including record_count. */
export function encodeBatchHeader(h: BatchHeader): Buffer {
  const w = new Writer(64 + h.topic.length);
  w.uint32(batchMagic).uint16(batchVersion).uint16(h.idempotent ? batchFlagIdempotent : 0).string(h.topic).int32(h.partition).string(h.acks);
  w.uint64(h.batchStart).uint64(h.batchEnd).uint32(h.recordCount);
  return w.toBuffer();
}

/** A whole batch as chunks (record payloads are not copied when large). */
export function encodeBatch(b: Omit<CursusBatch, 'recordCount'>): Buffer[] {
  const out: Buffer[] = [encodeBatchHeader({ ...b, recordCount: b.records.length })];
  for (const rec of b.records) {
    const chunks = encodeRecord(rec);
    let n = 0;
    for (const c of chunks) n += c.length;
    const len = Buffer.allocUnsafe(4);
    len.writeUInt32BE(n, 0);
    out.push(len, ...chunks);
  }
  return out;
}

// ---- decoding ----

export function isBatchPayload(p: Buffer): boolean {
  return p.length >= 4 && p.readUInt32BE(0) === batchMagic;
}

export interface BatchDecodeOptions {
  /** Accept an empty topic: a batch the format codec encoded without one (cursus-format.ts). */
  emptyTopic?: boolean;
}

/** Reads and checks the batch header; the records are not looked at. */
export function readBatchLayout(p: Buffer, options: BatchDecodeOptions = {}): Decoded<BatchLayout> {
  const r = new Reader(p);
  const magic = r.uint32();
  if (r.error === null && magic !== batchMagic) return { ok: false, reason: `not a CBV2 batch (magic 0x${magic.toString(16).padStart(8, '0')})` };
  const version = r.uint16();
  if (r.error === null && version !== batchVersion) return { ok: false, reason: `CBV2 version ${version} (want 2)` };
  const flags = r.uint16();
  if (r.error === null && (flags & ~batchFlagIdempotent) !== 0) return { ok: false, reason: `reserved batch flag bits set (0x${flags.toString(16).padStart(4, '0')})` };
  const topicBytes = r.bytes('topic', topicBytesMax);
  if (r.error === null && topicBytes.length === 0 && options.emptyTopic !== true) return { ok: false, reason: 'empty topic' };
  const partitionAt = r.offset;
  const partition = r.int32();
  if (r.error === null && partition < -1) return { ok: false, reason: `partition ${partition}` };
  const acks = r.string('acks', 3);
  if (r.error === null && !(acksValues as readonly string[]).includes(acks)) return { ok: false, reason: `invalid acks ${JSON.stringify(acks)}` };
  const batchStart = r.u64('batch_start');
  const batchEnd = r.u64('batch_end');
  const recordCountAt = r.offset;
  const recordCount = r.uint32();
  if (r.error !== null) return { ok: false, reason: `CBV2 header: ${r.error}` };
  if (recordCount > batchRecordsMax) return { ok: false, reason: `${recordCount} records (at most ${batchRecordsMax})` };
  return {
    ok: true,
    value: {
      header: { idempotent: (flags & batchFlagIdempotent) !== 0, topic: topicBytes.toString('utf8'), partition, acks: acks as Acks, batchStart, batchEnd, recordCount },
      topicBytes,
      partitionAt,
      recordCountAt,
      recordsAt: r.offset,
    },
  };
}

function readOptional(r: Reader, type: FieldType, what: string): unknown {
  switch (type) {
    case 'string':
      return r.string(what, payloadBytesMax);
    case 'bytes':
      return r.bytes(what, payloadBytesMax);
    case 'i64':
      return r.i64(what);
    case 'u64':
      return r.u64(what);
    case 'u32':
      return r.uint32();
    case 'u16':
      return r.uint16();
    case 'i32':
      return r.int32();
  }
}

/** Decodes one record of `bytes` (no length prefix) that must match the batch's routing fields. */
export function decodeRecord(bytes: Buffer, layout: BatchLayout): Decoded<CursusRecord> {
  const r = new Reader(bytes);
  const version = r.uint16();
  if (r.error === null && version !== recordVersion) return { ok: false, reason: `record version ${version} (want 2)` };
  const presence = r.uint64();
  if (r.error === null && (presence & ~presenceKnownMask) !== 0n) return { ok: false, reason: `unknown presence bits 0x${(presence & ~presenceKnownMask).toString(16)}` };
  const topic = r.bytes('record topic', topicBytesMax);
  if (r.error === null && !topic.equals(layout.topicBytes)) return { ok: false, reason: `record topic ${JSON.stringify(topic.toString('utf8'))} differs from the batch's` };
  const partition = r.int32();
  if (r.error === null && partition !== layout.header.partition) return { ok: false, reason: `record partition ${partition} differs from the batch's ${layout.header.partition}` };
  const offset = r.u64('offset');
  const payload = r.bytes('payload', payloadBytesMax);
  const rec: CursusRecord = { topic: layout.header.topic, partition, offset, payload };
  const out = rec as unknown as Record<string, unknown>;
  for (const f of optionalRecordFields) {
    if ((presence & (1n << BigInt(f.bit))) !== 0n) out[f.name] = readOptional(r, f.type, f.name);
  }
  const done = r.done();
  if (done !== null) return { ok: false, reason: `record: ${done}` };
  return { ok: true, value: rec };
}

/**
 * The [start, end) of every record (without its length prefix), checking that the records fill
 * the batch exactly; nothing inside a record is read.
 */
export function recordSpans(p: Buffer, layout: BatchLayout): Decoded<Array<[number, number]>> {
  const count = layout.header.recordCount;
  if (count * 4 > p.length - layout.recordsAt) return { ok: false, reason: `${count} records cannot fit in ${p.length - layout.recordsAt} bytes` };
  const spans = new Array<[number, number]>(count);
  let off = layout.recordsAt;
  for (let i = 0; i < count; i++) {
    if (p.length - off < 4) return { ok: false, reason: `record ${i}: truncated length` };
    const len = p.readUInt32BE(off);
    off += 4;
    if (len > p.length - off) return { ok: false, reason: `record ${i}: length ${len} past the end of the batch` };
    spans[i] = [off, off + len];
    off += len;
  }
  if (off !== p.length) return { ok: false, reason: `${p.length - off} bytes after the last record` };
  return { ok: true, value: spans };
}

/** Decodes and checks a whole batch. */
export function decodeBatch(p: Buffer, options: BatchDecodeOptions = {}): Decoded<CursusBatch> {
  const layout = readBatchLayout(p, options);
  if (!layout.ok) return layout;
  const spans = recordSpans(p, layout.value);
  if (!spans.ok) return spans;
  const records: CursusRecord[] = [];
  for (let i = 0; i < spans.value.length; i++) {
    const [start, end] = spans.value[i]!;
    const rec = decodeRecord(p.subarray(start, end), layout.value);
    if (!rec.ok) return { ok: false, reason: `record ${i}: ${rec.reason}` };
    records.push(rec.value);
  }
  return { ok: true, value: { ...layout.value.header, records } };
}

/** Offset of a record's partition field, given where the record starts (after its length). */
function recordPartitionAt(recordStart: number, topicLength: number): number {
  return recordStart + 2 + 8 + 4 + topicLength;
}

/**
 * Writes the partition (header and every record) and consecutive offsets from `baseOffset` into
 * a batch already checked with decodeBatch (the log's stamp, docs §9.1). Lengths do not change.
 */
export function stampBatch(p: Buffer, layout: BatchLayout, spans: ReadonlyArray<[number, number]>, partition: number, baseOffset: number): void {
  p.writeInt32BE(partition, layout.partitionAt);
  for (let i = 0; i < spans.length; i++) {
    const at = recordPartitionAt(spans[i]![0], layout.topicBytes.length);
    p.writeInt32BE(partition, at);
    p.writeBigUInt64BE(BigInt(baseOffset + i), at + 4);
  }
}

/** A record's offset read in place (the record starts at `recordStart`, after its length). */
export function recordOffsetAt(p: Buffer, recordStart: number, topicLength: number): number {
  return Number(p.readBigUInt64BE(recordPartitionAt(recordStart, topicLength) + 4));
}

/** Writes a record's offset in place (the record starts at `recordStart`, after its length). */
export function writeRecordOffsetAt(p: Buffer, recordStart: number, topicLength: number, offset: number): void {
  p.writeBigUInt64BE(BigInt(offset), recordPartitionAt(recordStart, topicLength) + 4);
}
