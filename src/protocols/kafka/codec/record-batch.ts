// Kafka RecordBatch v2 (magic 2): header validation and patching, batch iteration, and the
// record-level codec. Kafka "Message format" (implementation docs) and DefaultRecordBatch.java:
//
//   offset  field                 type     notes
//        0  baseOffset            int64    patched by the broker at append
//        8  batchLength           int32    bytes from partitionLeaderEpoch to the end
//       12  partitionLeaderEpoch  int32    patched by the broker; outside the CRC
//       16  magic                 int8     2 (0/1 are the old MessageSet formats: rejected)
//       17  crc                   uint32   CRC-32C (Castagnoli) of bytes 21..end
//       21  attributes            int16    bits 0-2 compression (0 none, 1 gzip, 2 snappy, 3 lz4,
//                                          4 zstd), bit 3 timestampType (1 = LogAppendTime),
//                                          bit 4 isTransactional, bit 5 isControl,
//                                          bit 6 hasDeleteHorizonMs (KIP-516; no idempotent bit)
//       23  lastOffsetDelta       int32
//       27  baseTimestamp         int64
//       35  maxTimestamp          int64
//       43  producerId            int64    -1 when not idempotent
//       51  producerEpoch         int16    -1
//       53  baseSequence          int32    -1
//       57  recordsCount          int32
//       61  records               (compressed as one blob when compression != 0)
//
//   Record => length varint, attributes int8, timestampDelta varlong, offsetDelta varint,
//             keyLength varint (-1 null), key, valueLength varint (-1 null), value,
//             headersCount varint, Header[headerKeyLength varint, headerKey (UTF-8),
//             headerValueLength varint (-1 null), headerValue]
//   (all varints zigzag, DefaultRecord.writeTo)
//
// The produce hot path validates the header, checks the CRC, walks the records without keeping
// them (inspectProducedRecords) and patches baseOffset and partitionLeaderEpoch, both before the
// CRC'd region; it rewrites the CRC'd bytes only where Kafka's broker does (normalizeProducedBatch,
// stampLogAppendTime). Records are decoded only for transcoding, compaction and tests.

import { crc32c } from '../../../base/native.js';
import { compress, decompress, decompressedBytesMaxDefault } from './compression.js';
import { Reader } from './reader.js';
import { Writer, writeInt64Number } from './writer.js';

export const batchHeaderBytes = 61;
/** Bytes before the region counted by batchLength (baseOffset + batchLength). */
export const batchLogOverheadBytes = 12;
const crcStart = 21;

export const BatchAttributes = {
  compressionMask: 0x07,
  timestampTypeLogAppend: 0x08,
  transactional: 0x10,
  control: 0x20,
  deleteHorizon: 0x40,
} as const;

export const TimestampType = { createTime: 0, logAppendTime: 1 } as const;

export interface RecordBatchHeader {
  baseOffset: number;
  batchLength: number;
  partitionLeaderEpoch: number;
  magic: number;
  crc: number;
  attributes: number;
  compression: number;
  /** 0 CreateTime, 1 LogAppendTime. */
  timestampType: 0 | 1;
  isTransactional: boolean;
  isControl: boolean;
  lastOffsetDelta: number;
  baseTimestamp: number;
  maxTimestamp: number;
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  recordCount: number;
}

export type BatchResult = { ok: true; header: RecordBatchHeader } | { ok: false; reason: string };

function int64At(buf: Buffer, off: number): number {
  const hi = buf.readInt32BE(off);
  const lo = buf.readUInt32BE(off + 4);
  if (hi >= -0x200000 && hi < 0x200000) return hi * 4294967296 + lo;
  return Number(buf.readBigInt64BE(off));
}

/** Reads the 61-byte header at `offset` without validating it (the caller checked the length). */
export function readBatchHeader(buf: Buffer, offset = 0): RecordBatchHeader {
  const attributes = buf.readInt16BE(offset + 21);
  return {
    baseOffset: int64At(buf, offset),
    batchLength: buf.readInt32BE(offset + 8),
    partitionLeaderEpoch: buf.readInt32BE(offset + 12),
    magic: buf.readInt8(offset + 16),
    crc: buf.readUInt32BE(offset + 17),
    attributes,
    compression: attributes & BatchAttributes.compressionMask,
    timestampType: (attributes & BatchAttributes.timestampTypeLogAppend) !== 0 ? 1 : 0,
    isTransactional: (attributes & BatchAttributes.transactional) !== 0,
    isControl: (attributes & BatchAttributes.control) !== 0,
    lastOffsetDelta: buf.readInt32BE(offset + 23),
    baseTimestamp: int64At(buf, offset + 27),
    maxTimestamp: int64At(buf, offset + 35),
    producerId: int64At(buf, offset + 43),
    producerEpoch: buf.readInt16BE(offset + 51),
    baseSequence: buf.readInt32BE(offset + 53),
    recordCount: buf.readInt32BE(offset + 57),
  };
}

/** CRC-32C over attributes..end, as stored in the crc field. */
export function computeBatchCrc(batch: Buffer): number {
  return crc32c(batch.subarray(crcStart)) >>> 0;
}

/**
 * Validates one complete batch (`batch` holds exactly one): length, magic, CRC, attributes and
 * counts. Returns the header or the reason it is invalid. Magic 0/1 message sets are detected
 * (the magic byte sits at offset 16 in every format) and refused.
 */
export function validateRecordBatch(batch: Buffer): BatchResult {
  if (batch.length < 17) return { ok: false, reason: `batch of ${batch.length} bytes is too short` };
  const magic = batch.readInt8(16);
  if (magic === 0 || magic === 1) {
    return { ok: false, reason: `message format v${magic} (magic ${magic}) is not supported; use RecordBatch v2` };
  }
  if (magic !== 2) return { ok: false, reason: `unknown magic ${magic}` };
  if (batch.length < batchHeaderBytes) return { ok: false, reason: `batch of ${batch.length} bytes is too short` };
  const header = readBatchHeader(batch);
  if (header.batchLength !== batch.length - batchLogOverheadBytes) {
    return {
      ok: false,
      reason: `batchLength ${header.batchLength} does not match the ${batch.length - batchLogOverheadBytes} bytes present`,
    };
  }
  if (header.compression > 4) return { ok: false, reason: `unknown compression codec ${header.compression}` };
  if (header.recordCount < 0) return { ok: false, reason: `negative record count ${header.recordCount}` };
  if (header.lastOffsetDelta < 0) return { ok: false, reason: `negative lastOffsetDelta ${header.lastOffsetDelta}` };
  const crc = computeBatchCrc(batch);
  if (crc !== header.crc) {
    return { ok: false, reason: `CRC mismatch: stored ${header.crc.toString(16)}, computed ${crc.toString(16)}` };
  }
  return { ok: true, header };
}

/**
 * Validates the `records` field of one produce partition: exactly one RecordBatch v2 with at
 * least one record, lastOffsetDelta + 1 == recordCount (Kafka's LogValidator checks the same),
 * no control batch (only the broker writes those), and no producer id without a base sequence.
 */
export function validateProduceBatch(records: Buffer): BatchResult {
  if (records.length >= batchLogOverheadBytes) {
    const declared = records.readInt32BE(8) + batchLogOverheadBytes;
    if (records.length >= 17 && records.readInt8(16) === 2 && declared < records.length && declared > 0) {
      return { ok: false, reason: 'a produce partition must carry exactly one record batch' };
    }
  }
  const r = validateRecordBatch(records);
  if (!r.ok) return r;
  const h = r.header;
  if (h.recordCount === 0) return { ok: false, reason: 'empty record batch' };
  if (h.lastOffsetDelta + 1 !== h.recordCount) {
    return { ok: false, reason: `lastOffsetDelta ${h.lastOffsetDelta} does not match ${h.recordCount} records` };
  }
  if (h.isControl) return { ok: false, reason: 'clients may not produce control batches' };
  if (h.producerId >= 0 && h.baseSequence < 0) return { ok: false, reason: `invalid sequence number ${h.baseSequence} with producer id ${h.producerId}` };
  return r;
}

/** Writes baseOffset (bytes 0-7, outside the CRC). */
export function patchBaseOffset(batch: Buffer, baseOffset: number): void {
  writeInt64Number(batch, baseOffset, 0);
}

/** Writes partitionLeaderEpoch (bytes 12-15, outside the CRC). */
export function patchPartitionLeaderEpoch(batch: Buffer, epoch: number): void {
  batch.writeInt32BE(epoch, 12);
}

/**
 * Stamps a batch for a LogAppendTime topic: sets the timestampType bit and maxTimestamp to the
 * append time, and recomputes the CRC (both lie inside it), as Kafka's broker does.
 */
export function stampLogAppendTime(batch: Buffer, appendTime: number): void {
  const attributes = batch.readInt16BE(21) | BatchAttributes.timestampTypeLogAppend;
  batch.writeInt16BE(attributes, 21);
  writeInt64Number(batch, appendTime, 35);
  batch.writeUInt32BE(computeBatchCrc(batch), 17);
}

export interface SplitBatches {
  /** Views of each complete batch, in order. */
  batches: Buffer[];
  /** Bytes of a trailing partial batch (Fetch responses may end with one). */
  partialBytes: number;
  /** Set when a batch declares an impossible length; the batches before it are returned. */
  reason: string | null;
}

/** Splits a records section (Fetch response, log read) into batch views. Does not validate CRCs. */
export function splitBatches(records: Buffer): SplitBatches {
  const batches: Buffer[] = [];
  let off = 0;
  while (off < records.length) {
    if (records.length - off < batchLogOverheadBytes) {
      return { batches, partialBytes: records.length - off, reason: null };
    }
    const batchLength = records.readInt32BE(off + 8);
    if (batchLength < batchHeaderBytes - batchLogOverheadBytes) {
      return { batches, partialBytes: 0, reason: `batch at byte ${off} declares length ${batchLength}` };
    }
    const end = off + batchLogOverheadBytes + batchLength;
    if (end > records.length) return { batches, partialBytes: records.length - off, reason: null };
    batches.push(records.subarray(off, end));
    off = end;
  }
  return { batches, partialBytes: 0, reason: null };
}

// ---- records ----

export interface RecordHeader {
  key: string;
  value: Buffer | null;
}

export interface KafkaRecord {
  attributes: number;
  timestampDelta: number;
  offsetDelta: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

export type RecordsResult = { ok: true; value: KafkaRecord[] } | { ok: false; reason: string };

function varintBytes(r: Reader): Buffer | null {
  const len = r.varint();
  if (len === -1) return null;
  if (len < 0) {
    r.fail(`negative length ${len}`);
    return null;
  }
  return r.raw(len);
}

/**
 * Decodes `count` records from an uncompressed records section. Keys, values and header values
 * are views into `section`.
 */
export function decodeRecords(section: Buffer, count: number): RecordsResult {
  const r = new Reader(section);
  // Each record takes at least 7 bytes (length, attributes, 4 one-byte varints, headers count).
  if (count < 0 || count * 7 > section.length) {
    return { ok: false, reason: `record count ${count} does not fit in ${section.length} bytes` };
  }
  const out = new Array<KafkaRecord>(count);
  for (let i = 0; i < count; i++) {
    const length = r.varint();
    if (r.error !== null) break;
    if (length < 0 || length > r.remaining) {
      r.fail(`record ${i} length ${length} exceeds the ${r.remaining} bytes left`);
      break;
    }
    const end = r.offset + length;
    const rec = new Reader(section, r.offset, end);
    const attributes = rec.int8();
    const timestampDelta = rec.varlong();
    const offsetDelta = rec.varint();
    const key = varintBytes(rec);
    const value = varintBytes(rec);
    const headerCount = rec.varint();
    if (headerCount < 0 || headerCount * 2 > rec.remaining) rec.fail(`bad header count ${headerCount}`);
    const headers: RecordHeader[] = [];
    for (let h = 0; h < headerCount && rec.error === null; h++) {
      const keyLen = rec.varint();
      if (keyLen < 0) {
        rec.fail(`negative header key length ${keyLen}`);
        break;
      }
      const hk = rec.raw(keyLen).toString('utf8');
      headers.push({ key: hk, value: varintBytes(rec) });
    }
    if (rec.error === null && rec.remaining !== 0) rec.fail(`${rec.remaining} stray bytes`);
    if (rec.error !== null) {
      r.fail(`record ${i}: ${rec.error}`);
      break;
    }
    r.offset = end;
    out[i] = { attributes, timestampDelta, offsetDelta, key, value, headers };
  }
  if (r.error !== null) return { ok: false, reason: r.error };
  if (r.remaining !== 0) return { ok: false, reason: `${r.remaining} bytes after the last record` };
  return { ok: true, value: out };
}

/** The records of one validated batch, decompressing if needed. */
export function batchRecords(
  batch: Buffer,
  header: RecordBatchHeader = readBatchHeader(batch),
  maxDecompressedBytes: number = decompressedBytesMaxDefault,
): RecordsResult {
  const body = batch.subarray(batchHeaderBytes);
  const d = decompress(header.compression, body, maxDecompressedBytes);
  if (!d.ok) return d;
  return decodeRecords(d.value, header.recordCount);
}

/** How a topic judges the records of a produced batch (Kafka's LogValidator settings). */
export interface ProducedRecordRules {
  /** A compacted topic: every record needs a key. */
  keysRequired: boolean;
  /** The topic's message.timestamp.type is LogAppendTime. */
  logAppendTime?: boolean;
  /** The broker clock (ms) the timestamp window is measured from. */
  now?: number;
  /** message.timestamp.before.max.ms / after.max.ms (ms); absent or Infinity: no limit. */
  timestampBeforeMaxMs?: number;
  timestampAfterMaxMs?: number;
  /** The partition as the messages name it ("orders-0"). */
  partitionName?: string;
}

/** One record refused (ProduceResponse RecordErrors, KIP-467): its index in the batch and why. */
export interface ProducedRecordError {
  batchIndex: number;
  message: string;
  /** A timestamp problem (INVALID_TIMESTAMP) rather than an invalid record (INVALID_RECORD). */
  timestamp: boolean;
}

/**
 * What the walk over a produced batch's records found: a reason the batch as a whole is broken,
 * or its uncompressed records section, the largest record timestamp (-1 when none has one) and
 * the records refused one by one.
 */
export type ProducedRecords =
  /** `tooLarge`: the records decompress past the limit asked for (and may be whole under a larger one). */
  | { ok: false; reason: string; tooLarge?: true }
  | { ok: true; section: Buffer; maxTimestamp: number; recordErrors: ProducedRecordError[] };

/**
 * Walks the records of a produced batch without keeping them, as Kafka's LogValidator iterates
 * every record before it appends. The batch as a whole is broken (Kafka's InvalidRecordException
 * or CorruptRecordException: the caller answers INVALID_RECORD) when the body does not decompress
 * (at most `maxDecompressedBytes`), does not hold exactly `recordCount` well-formed records and
 * nothing after them, or their offset deltas do not run 0, 1, 2, ... (each record then owns the
 * offset the header promises it). Records are refused one by one (LogValidator.validateRecord)
 * for a null key in a compacted topic, a CreateTime timestamp outside the topic's window, or a
 * producer that set the LogAppendTime bit where Kafka refuses it.
 */
export function inspectProducedRecords(
  batch: Buffer,
  header: RecordBatchHeader,
  rules: ProducedRecordRules,
  maxDecompressedBytes: number = decompressedBytesMaxDefault,
): ProducedRecords {
  let section = batch.subarray(batchHeaderBytes);
  if (header.compression !== 0) {
    const d = decompress(header.compression, section, maxDecompressedBytes);
    if (!d.ok) return d;
    section = d.value;
  }
  return walkProducedRecords(section, header, rules);
}

/** The first problem inspectProducedRecords finds (the batch's, else the first record's), or null. */
export function checkProducedRecords(
  batch: Buffer,
  header: RecordBatchHeader,
  keysRequired: boolean,
  maxDecompressedBytes: number = decompressedBytesMaxDefault,
): string | null {
  const r = inspectProducedRecords(batch, header, { keysRequired }, maxDecompressedBytes);
  if (!r.ok) return r.reason;
  return r.recordErrors[0]?.message ?? null;
}

/** Why one record is refused, or null (Kafka's LogValidator.validateKey and validateTimestamp). */
function recordProblem(header: RecordBatchHeader, rules: ProducedRecordRules, index: number, hasKey: boolean, timestamp: number): ProducedRecordError | null {
  const where = rules.partitionName ?? 'the partition';
  if (rules.keysRequired && !hasKey) return { batchIndex: index, message: `Compacted topic cannot accept message without key in topic partition ${where}.`, timestamp: false };
  if (rules.logAppendTime !== true && timestamp !== -1) {
    const now = rules.now ?? 0;
    const before = rules.timestampBeforeMaxMs ?? Infinity;
    const after = rules.timestampAfterMaxMs ?? Infinity;
    if (now - timestamp > before || timestamp - now > after) {
      return { batchIndex: index, message: `Timestamp ${timestamp} of message with offset ${index} is out of range. The timestamp should be within [${now - before}, ${now + after}]`, timestamp: true };
    }
  } else if (header.timestampType === TimestampType.logAppendTime) {
    return { batchIndex: index, message: 'Invalid timestamp type in message. Producer should not set timestamp type to LogAppendTime.', timestamp: true };
  }
  return null;
}

/** inspectProducedRecords' walk over uncompressed records: no allocation per valid record. */
function walkProducedRecords(section: Buffer, header: RecordBatchHeader, rules: ProducedRecordRules): ProducedRecords {
  const count = header.recordCount;
  const fail = (reason: string): ProducedRecords => ({ ok: false, reason });
  // Each record takes at least 7 bytes (length, attributes, 4 one-byte varints, headers count).
  if (count * 7 > section.length) return fail(`${count} records do not fit in ${section.length} bytes`);
  const logAppendBit = header.timestampType === TimestampType.logAppendTime;
  const checkTimestamps = rules.logAppendTime !== true && ((rules.timestampBeforeMaxMs ?? Infinity) < Infinity || (rules.timestampAfterMaxMs ?? Infinity) < Infinity);
  const recordErrors: ProducedRecordError[] = [];
  let maxTimestamp = -1;
  let pos = 0;
  /** A zigzag varint (32-bit) ending before `limit`, or NaN. */
  const varint = (limit: number): number => {
    let u = 0;
    let scale = 1;
    for (let n = 0; n < 5 && pos < limit; n++) {
      const b = section[pos++]!;
      if (n === 4 && b > 0x0f) return Number.NaN;
      u += (b & 0x7f) * scale;
      if (b < 0x80) return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
      scale *= 128;
    }
    return Number.NaN;
  };
  /** A zigzag varlong (at most 10 bytes, 64 bits: as Reader.uvarlongBig) ending before `limit`, as a number, or NaN. */
  const varlong = (limit: number): number => {
    let u = 0;
    let scale = 1;
    for (let n = 0; n < 10 && pos < limit; n++) {
      const b = section[pos++]!;
      if (n === 9 && b > 0x01) return Number.NaN;
      u += (b & 0x7f) * scale;
      if (b < 0x80) return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
      scale *= 128;
    }
    return Number.NaN;
  };
  /** Skips a length-prefixed field (-1 = null when `nullable`); its length, or NaN if it does not fit. */
  const skipField = (limit: number, nullable: boolean): number => {
    const n = varint(limit);
    if (n === -1 && nullable) return n;
    if (!(n >= 0) || n > limit - pos) return Number.NaN;
    pos += n;
    return n;
  };
  for (let i = 0; i < count; i++) {
    const length = varint(section.length);
    if (!(length >= 6) || length > section.length - pos) return fail(`record ${i} declares ${length} bytes`);
    const end = pos + length;
    pos++; // attributes
    const timestampDelta = varlong(end);
    if (Number.isNaN(timestampDelta)) return fail(`record ${i}: bad timestamp delta`);
    const offsetDelta = varint(end);
    const key = skipField(end, true);
    if (Number.isNaN(key) || Number.isNaN(skipField(end, true))) return fail(`record ${i}: bad key or value`);
    const headers = varint(end);
    if (!(headers >= 0) || headers * 2 > end - pos) return fail(`record ${i}: bad header count ${headers}`);
    for (let h = 0; h < headers; h++) {
      if (Number.isNaN(skipField(end, false)) || Number.isNaN(skipField(end, true))) return fail(`record ${i}: bad header ${h}`);
    }
    if (pos !== end) return fail(`record ${i}: ${end - pos} bytes after its fields`);
    if (offsetDelta !== i) return fail(`record ${i} has offset delta ${offsetDelta}`);
    // A record's time: the batch's maxTimestamp under the LogAppendTime bit, else base + delta.
    const timestamp = logAppendBit ? header.maxTimestamp : header.baseTimestamp + timestampDelta;
    if (timestamp > maxTimestamp) maxTimestamp = timestamp;
    if ((rules.keysRequired && key === -1) || logAppendBit || checkTimestamps) {
      const problem = recordProblem(header, rules, i, key !== -1, timestamp);
      if (problem !== null) recordErrors.push(problem);
    }
  }
  if (pos !== section.length) return fail(`${section.length - pos} bytes after the ${count} records the batch declares`);
  return { ok: true, section, maxTimestamp, recordErrors };
}

/**
 * The batch as the log keeps it (Kafka's LogValidator after validation): on a CreateTime topic,
 * the CreateTime type and `maxTimestamp`, the largest record timestamp (Kafka recomputes it
 * rather than trust the producer; null on a LogAppendTime topic, whose stamp sets both), and, when `codec` differs from the batch's, its records recompressed with
 * `codec` (the topic's compression.type; `section` is the uncompressed records). The input is
 * patched in place when only the header changes (it is the request's own buffer), else a new
 * batch is built; the CRC is recomputed whenever a byte it covers changed.
 */
export function normalizeProducedBatch(batch: Buffer, section: Buffer, maxTimestamp: number | null, codec: number | null): Buffer {
  const h = readBatchHeader(batch);
  let out = batch;
  if (codec !== null && codec !== h.compression) {
    const body = compress(codec, section);
    out = Buffer.allocUnsafe(batchHeaderBytes + body.length);
    batch.copy(out, 0, 0, batchHeaderBytes);
    body.copy(out, batchHeaderBytes);
    out.writeInt32BE(out.length - batchLogOverheadBytes, 8);
    out.writeInt16BE((h.attributes & ~BatchAttributes.compressionMask) | codec, 21);
  }
  const timeChanged = maxTimestamp !== null && (h.timestampType !== TimestampType.createTime || h.maxTimestamp !== maxTimestamp);
  if (timeChanged) {
    out.writeInt16BE(out.readInt16BE(21) & ~BatchAttributes.timestampTypeLogAppend, 21);
    writeInt64Number(out, maxTimestamp, 35);
  }
  if (out !== batch || timeChanged) out.writeUInt32BE(computeBatchCrc(out), 17);
  return out;
}

export interface RecordInput {
  /** Defaults to the record's index. */
  offsetDelta?: number;
  /** Absolute timestamp (ms). */
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
  headers?: readonly RecordHeader[];
}

export interface BuildBatchOptions {
  baseOffset?: number;
  partitionLeaderEpoch?: number;
  compression?: number;
  timestampType?: 0 | 1;
  transactional?: boolean;
  control?: boolean;
  producerId?: number;
  producerEpoch?: number;
  baseSequence?: number;
  /** Defaults to the first record's timestamp. */
  baseTimestamp?: number;
  /** Defaults to the largest record timestamp (required for LogAppendTime batches' append time). */
  maxTimestamp?: number;
  /** Defaults to the last record's offsetDelta. */
  lastOffsetDelta?: number;
}

function writeVarintBytes(w: Writer, b: Buffer | null): void {
  if (b === null) {
    w.varint(-1);
    return;
  }
  w.varint(b.length);
  w.raw(b);
}

/** Encodes records into an uncompressed records section. */
export function encodeRecords(records: readonly RecordInput[], baseTimestamp: number): Buffer {
  const w = new Writer();
  for (let i = 0; i < records.length; i++) {
    const rec = records[i]!;
    const b = new Writer(256);
    b.int8(0);
    b.varlong(rec.timestamp - baseTimestamp);
    b.varint(rec.offsetDelta ?? i);
    writeVarintBytes(b, rec.key);
    writeVarintBytes(b, rec.value);
    const headers = rec.headers ?? [];
    b.varint(headers.length);
    for (const h of headers) {
      const k = Buffer.from(h.key, 'utf8');
      b.varint(k.length);
      b.raw(k);
      writeVarintBytes(b, h.value);
    }
    w.varint(b.length);
    w.append(b);
  }
  return w.toBuffer();
}

/** Builds a complete RecordBatch v2 (compressing the records if asked) with a correct CRC. */
export function buildRecordBatch(records: readonly RecordInput[], opts: BuildBatchOptions = {}): Buffer {
  if (records.length === 0 && opts.lastOffsetDelta === undefined) {
    throw new Error('a record batch needs records or an explicit lastOffsetDelta');
  }
  const baseTimestamp = opts.baseTimestamp ?? records[0]?.timestamp ?? -1;
  let maxTs = opts.maxTimestamp;
  if (maxTs === undefined) {
    maxTs = -1;
    for (const r of records) if (r.timestamp > maxTs) maxTs = r.timestamp;
  }
  const lastOffsetDelta = opts.lastOffsetDelta ?? records[records.length - 1]?.offsetDelta ?? records.length - 1;
  const compression = opts.compression ?? 0;
  const section = compress(compression, encodeRecords(records, baseTimestamp));

  let attributes = compression & BatchAttributes.compressionMask;
  if (opts.timestampType === 1) attributes |= BatchAttributes.timestampTypeLogAppend;
  if (opts.transactional === true) attributes |= BatchAttributes.transactional;
  if (opts.control === true) attributes |= BatchAttributes.control;

  const batch = Buffer.alloc(batchHeaderBytes + section.length);
  writeInt64Number(batch, opts.baseOffset ?? 0, 0);
  batch.writeInt32BE(batch.length - batchLogOverheadBytes, 8);
  batch.writeInt32BE(opts.partitionLeaderEpoch ?? -1, 12);
  batch.writeInt8(2, 16);
  batch.writeInt16BE(attributes, 21);
  batch.writeInt32BE(lastOffsetDelta, 23);
  writeInt64Number(batch, baseTimestamp, 27);
  writeInt64Number(batch, maxTs, 35);
  writeInt64Number(batch, opts.producerId ?? -1, 43);
  batch.writeInt16BE(opts.producerEpoch ?? -1, 51);
  batch.writeInt32BE(opts.baseSequence ?? -1, 53);
  batch.writeInt32BE(records.length, 57);
  section.copy(batch, batchHeaderBytes);
  batch.writeUInt32BE(computeBatchCrc(batch), 17);
  return batch;
}

// ---- control records (transaction markers) ----
//
// ControlRecord key   => Version int16 (0), Type int16 (0 = ABORT, 1 = COMMIT)
// ControlRecord value => Version int16 (0), CoordinatorEpoch int32   (EndTransactionMarker)

export const ControlRecordType = { abort: 0, commit: 1 } as const;

export interface ControlRecord {
  type: number;
  coordinatorEpoch: number;
}

export function encodeControlRecordKey(type: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt16BE(0, 0);
  b.writeInt16BE(type, 2);
  return b;
}

export function encodeControlRecordValue(coordinatorEpoch: number): Buffer {
  const b = Buffer.alloc(6);
  b.writeInt16BE(0, 0);
  b.writeInt32BE(coordinatorEpoch, 2);
  return b;
}

export type ControlRecordResult = { ok: true; value: ControlRecord } | { ok: false; reason: string };

export function decodeControlRecord(key: Buffer | null, value: Buffer | null): ControlRecordResult {
  if (key === null || key.length < 4) return { ok: false, reason: 'control record key is missing or short' };
  const version = key.readInt16BE(0);
  if (version !== 0) return { ok: false, reason: `unknown control record key version ${version}` };
  const type = key.readInt16BE(2);
  let coordinatorEpoch = -1;
  if (value !== null && value.length >= 6) coordinatorEpoch = value.readInt32BE(2);
  return { ok: true, value: { type, coordinatorEpoch } };
}

export interface ControlBatchOptions {
  baseOffset?: number;
  producerId: number;
  producerEpoch: number;
  commit: boolean;
  coordinatorEpoch: number;
  timestamp: number;
  partitionLeaderEpoch?: number;
}

/** A transactional control batch holding one COMMIT or ABORT marker. */
export function buildControlBatch(o: ControlBatchOptions): Buffer {
  return buildRecordBatch(
    [
      {
        offsetDelta: 0,
        timestamp: o.timestamp,
        key: encodeControlRecordKey(o.commit ? ControlRecordType.commit : ControlRecordType.abort),
        value: encodeControlRecordValue(o.coordinatorEpoch),
      },
    ],
    {
      baseOffset: o.baseOffset ?? 0,
      partitionLeaderEpoch: o.partitionLeaderEpoch ?? -1,
      transactional: true,
      control: true,
      producerId: o.producerId,
      producerEpoch: o.producerEpoch,
      baseSequence: -1,
    },
  );
}
