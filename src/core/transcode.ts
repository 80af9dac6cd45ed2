// Serving stored batches in a reader's batch format (the read service, reads.ts): a batch in the
// reader's format goes out as it is stored (its bytes, or its file range for sendfile); a batch of
// another format is decoded into neutral records and encoded again, batch by batch, through the
// format registry. Two shapes, after what the reader's protocol does with a batch:
//
// - whole batches (wholeBatchAs): the reader's client skips the records before its offset itself
//   (Kafka), so a stored batch in its format goes out whole;
// - exact records (recordsOf): the reader gets exactly the records in a range (Iggy), so a batch
//   that starts or ends outside it is cut (BatchFormatCodec.slice) or transcoded in part.

import assert from 'node:assert/strict';
import type { FormatRegistry } from '../log/formats.js';
import { BatchFlags, type BatchFormat, type FileSlice, type StoredBatch } from '../log/types.js';

/** A batch of another format with more records than this is transcoded in part (wholeBatchAs). */
export const transcodeWholeRecordsMax = 4096;

/**
 * One batch of `format` per stored batch: verbatim for a batch already in it (its file range when
 * the read returned one), transcoded otherwise (which needs the whole payload, never a file
 * slice); null when there is nothing to serve (no codec, no records). A batch of more than
 * transcodeWholeRecordsMax records (an Iggy batch may hold a million) is transcoded from
 * `fromOffset` on, as many records as about `budgetBytes` of it hold (at least one): the
 * reader's next read continues inside it. Decoding all of it for each read would cost seconds of
 * the event loop and hundreds of MB.
 */
export function wholeBatchAs(formats: FormatRegistry, format: BatchFormat, batch: StoredBatch, fromOffset = batch.baseOffset, budgetBytes = Infinity): Buffer | FileSlice | null {
  if (batch.format === format) return batch.file ?? batch.payload;
  assert.ok(batch.file === undefined, 'a batch to transcode must be read whole');
  const codec = formats.get(batch.format);
  if (codec === undefined) return null;
  const target = targetCodec(formats, format);
  if (codec.decodeRange === undefined || batch.recordCount <= transcodeWholeRecordsMax) {
    const records = codec.decode(batch);
    return records.length === 0 ? null : target.encode(records, batch.baseOffset, batch).payload;
  }
  const bytesPerRecord = Math.max(1, batch.payload.length / batch.recordCount);
  const countMax = Math.min(transcodeWholeRecordsMax, Math.max(1, Math.ceil(budgetBytes / bytesPerRecord)));
  const records = codec.decodeRange(batch, Math.max(fromOffset, batch.baseOffset), countMax);
  return records.length === 0 ? null : target.encode(records, records[0]!.offset, batch).payload;
}

/** Records served from one stored batch (recordsOf). */
export interface ServedRecords {
  chunks: Array<Buffer | FileSlice>;
  count: number;
  lastOffset: number;
}

/**
 * Whether `batch` is served as it is stored to a reader of `format` wanting the records in
 * [from, toExclusive), at most countMax: a batch of that format wholly in range, of at most
 * countMax records, whose head says every offset holds a record (BatchFormatCodec.messageCount).
 */
export function servedAsStored(formats: FormatRegistry, format: BatchFormat, batch: StoredBatch, from: number, toExclusive: number, countMax: number): boolean {
  if (batch.format !== format || batch.baseOffset < from || batch.lastOffset >= toExclusive || batch.recordCount > countMax) return false;
  return formats.get(format)?.messageCount?.(batch) === batch.recordCount;
}

/**
 * The records of one stored batch in [from, toExclusive) (at most countMax) as bytes of `format`,
 * or null. Control batches (transaction markers) carry no records a reader gets.
 */
export function recordsOf(formats: FormatRegistry, format: BatchFormat, batch: StoredBatch, from: number, toExclusive: number, countMax: number): ServedRecords | null {
  if (servedAsStored(formats, format, batch, from, toExclusive, countMax)) {
    // Every record is in range: the stored bytes as they are (or their file range), from the head alone.
    return { chunks: [batch.file ?? batch.payload], count: batch.recordCount, lastOffset: batch.lastOffset };
  }
  // Anything else is cut or transcoded from the whole payload (the caller reads it first).
  assert.ok(batch.file === undefined, 'a file-sliced batch must be read whole before it is sliced');
  const target = targetCodec(formats, format);
  if (batch.format === format && target.slice !== undefined) return target.slice(batch, from, toExclusive, countMax);
  if ((batch.flags & BatchFlags.control) !== 0) return null;
  const codec = formats.get(batch.format);
  if (codec === undefined) return null;
  const records = codec
    .decode(batch)
    .filter((r) => r.offset >= from && r.offset < toExclusive)
    .slice(0, countMax);
  if (records.length === 0) return null;
  const encoded = target.encode(records, records[0]!.offset, batch);
  // The transcoded batch spans its records only (not the template's whole range).
  return { chunks: [encoded.payload], count: records.length, lastOffset: records[records.length - 1]!.offset };
}

function targetCodec(formats: FormatRegistry, format: BatchFormat) {
  const codec = formats.get(format);
  assert.ok(codec !== undefined, `no codec registered for batch format ${format}`);
  return codec;
}

/** A record's offset and timestamp (ms). */
export interface TimedOffset {
  offset: number;
  timestamp: number;
}

/**
 * The first record of `batch` at or after offset `from` whose timestamp is at or after
 * `timestamp`, or null (none in the batch); a batch without a codec answers its first offset in
 * range and its maxTimestamp (the time index found it).
 */
export function recordAtTimestampIn(formats: FormatRegistry, batch: StoredBatch, from: number, timestamp: number): TimedOffset | null {
  assert.ok(batch.file === undefined, 'a batch to decode must be read whole');
  const codec = formats.get(batch.format);
  if (codec === undefined) return { offset: Math.max(from, batch.baseOffset), timestamp: batch.maxTimestamp };
  for (const record of codec.decode(batch)) {
    if (record.offset >= from && record.timestamp >= timestamp) return { offset: record.offset, timestamp: record.timestamp };
  }
  return null;
}
