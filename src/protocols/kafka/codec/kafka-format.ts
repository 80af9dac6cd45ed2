// The log's view of Kafka batches (BatchFormat.kafka): a BatchFormatCodec that stamps appended
// batches and decodes and encodes them for compaction and transcoding, and the AppendRequest
// builder the Produce handler uses on the hot path.
//
// A stored Kafka batch is one RecordBatch v2, verbatim except for baseOffset and
// partitionLeaderEpoch (both outside the CRC) and, on LogAppendTime topics, the timestamp type
// and maxTimestamp (inside the CRC, which is then recomputed; Kafka's broker does the same).

import type { AppendRequest, AppendStamp, BatchFormatCodec, NeutralRecord, StoredBatch } from '../../../base/batch.js';
import { BatchFlags, BatchFormat } from '../../../base/batch.js';
import { decodedBytesBound, decompressedBytesMaxDefault } from './compression.js';
import {
  batchHeaderBytes,
  batchRecords,
  buildRecordBatch,
  patchBaseOffset,
  readBatchHeader,
  stampLogAppendTime,
  validateRecordBatch,
  type RecordBatchHeader,
} from './record-batch.js';

function flagsOf(h: RecordBatchHeader): number {
  return (h.isTransactional ? BatchFlags.transactional : 0) | (h.isControl ? BatchFlags.control : 0);
}

export interface AppendOptions {
  /**
   * The topic uses message.timestamp.type=LogAppendTime: the batch's time is its append time
   * (AppendRequest.logAppendTime), which stampKafkaBatch writes into it.
   */
  logAppendTime?: boolean;
  /**
   * The broker's clock reading (ms) used for firstTimestamp/maxTimestamp of a LogAppendTime
   * batch until the log sets them to the append time.
   */
  now?: number;
}

export type AppendRequestResult = { ok: true; request: AppendRequest; header: RecordBatchHeader } | { ok: false; reason: string };

/**
 * Builds the log AppendRequest for one produce batch (already validated with
 * validateProduceBatch, or validated here when `header` is omitted). The payload is the batch
 * itself (no copy); the codec's stamp patches baseOffset, and for LogAppendTime topics the
 * timestamp type, maxTimestamp and CRC.
 */
export function appendRequestFromBatch(
  batch: Buffer,
  options: AppendOptions = {},
  header?: RecordBatchHeader,
): AppendRequestResult {
  let h = header;
  if (h === undefined) {
    const v = validateRecordBatch(batch);
    if (!v.ok) return v;
    h = v.header;
  }
  const logAppendTime = options.logAppendTime === true;
  const now = options.now ?? h.maxTimestamp;
  // The batch's own CRC-32C (bytes 21..end) was verified above (or by the caller that passed the
  // header), so the log stores it rather than checksumming the payload a second time. A
  // LogAppendTime stamp rewrites bytes inside the CRC and recomputes it (stampKafkaBatch).
  const payloadCrc32c = { from: kafkaCrcStart, value: h.crc >>> 0 };
  const request: AppendRequest = {
    format: BatchFormat.kafka,
    recordCount: h.lastOffsetDelta + 1,
    firstTimestamp: logAppendTime ? now : h.baseTimestamp,
    maxTimestamp: logAppendTime ? now : h.maxTimestamp,
    producerId: h.producerId,
    producerEpoch: h.producerEpoch,
    baseSequence: h.baseSequence,
    flags: flagsOf(h),
    payload: batch,
    payloadCrc32c,
    ...(logAppendTime ? { logAppendTime: true } : {}),
  };
  return { ok: true, request, header: h };
}

/** Where the RecordBatch v2 crc field sits, and where the bytes it covers start. */
const kafkaCrcOffset = 17;
const kafkaCrcStart = 21;

/**
 * BatchFormatCodec.stamp: the assigned baseOffset (outside the CRC); for a LogAppendTime batch,
 * also the timestamp type and the append time as maxTimestamp, with the CRC recomputed and handed
 * on to the log (payloadCrc32c).
 */
function stampKafkaBatch(request: AppendRequest, assigned: AppendStamp): void {
  patchBaseOffset(request.payload, assigned.baseOffset);
  if (request.logAppendTime !== true) return;
  stampLogAppendTime(request.payload, assigned.appendTime);
  if (request.payloadCrc32c !== undefined) request.payloadCrc32c.value = request.payload.readUInt32BE(kafkaCrcOffset) >>> 0;
}

/**
 * What decoding a stored Kafka batch produces at most: its compressed records' decoded size
 * (compression.ts decodedBytesBound; a section whose size cannot be told counts as the 64 MiB
 * decoded at most), or its length.
 */
function decodedBytes(stored: StoredBatch): number {
  const length = stored.file?.length ?? stored.payload.length;
  if (stored.file !== undefined || stored.payload.length < batchHeaderBytes) return length;
  const { compression } = readBatchHeader(stored.payload);
  if (compression === 0) return length;
  return Math.max(length, decodedBytesBound(compression, stored.payload.subarray(batchHeaderBytes)) || decompressedBytesMaxDefault);
}

/** Decodes a stored Kafka batch into neutral records. Control batches have none. Throws on corruption. */
function decode(stored: StoredBatch): NeutralRecord[] {
  const v = validateRecordBatch(stored.payload);
  if (!v.ok) throw new Error(`corrupt kafka batch at offset ${stored.baseOffset}: ${v.reason}`);
  const h = v.header;
  if (h.isControl) return [];
  const recs = batchRecords(stored.payload, h);
  if (!recs.ok) throw new Error(`corrupt kafka batch at offset ${stored.baseOffset}: ${recs.reason}`);
  const out = new Array<NeutralRecord>(recs.value.length);
  for (let i = 0; i < recs.value.length; i++) {
    const r = recs.value[i]!;
    out[i] = {
      offset: stored.baseOffset + r.offsetDelta,
      timestamp: h.timestampType === 1 ? h.maxTimestamp : h.baseTimestamp + r.timestampDelta,
      key: r.key,
      value: r.value,
      headers: r.headers,
    };
  }
  return out;
}

/**
 * Encodes neutral records into one Kafka batch at `baseOffset`, keeping the template's
 * compression, timestamp type, producer fields and transactional flag (compaction keeps them).
 */
function encode(records: NeutralRecord[], baseOffset: number, template: StoredBatch): AppendRequest {
  if (records.length === 0) throw new Error('kafka encode needs at least one record');
  let tpl: RecordBatchHeader | null = null;
  if (template.format === BatchFormat.kafka && template.payload.length >= 61) tpl = readBatchHeader(template.payload);
  const logAppendTime = tpl?.timestampType === 1;
  let maxTimestamp = -1;
  for (const r of records) if (r.timestamp > maxTimestamp) maxTimestamp = r.timestamp;
  if (logAppendTime) maxTimestamp = tpl!.maxTimestamp;
  const last = records[records.length - 1]!;
  const payload = buildRecordBatch(
    records.map((r) => ({
      offsetDelta: r.offset - baseOffset,
      timestamp: r.timestamp,
      key: r.key,
      value: r.value,
      headers: r.headers,
    })),
    {
      baseOffset,
      partitionLeaderEpoch: tpl?.partitionLeaderEpoch ?? -1,
      compression: tpl?.compression ?? 0,
      timestampType: logAppendTime ? 1 : 0,
      transactional: (template.flags & BatchFlags.transactional) !== 0,
      producerId: template.producerId,
      producerEpoch: template.producerEpoch,
      baseSequence: template.baseSequence,
      maxTimestamp,
      lastOffsetDelta: last.offset - baseOffset,
    },
  );
  const header = readBatchHeader(payload);
  return {
    format: BatchFormat.kafka,
    recordCount: header.lastOffsetDelta + 1,
    firstTimestamp: header.baseTimestamp,
    maxTimestamp: header.maxTimestamp,
    producerId: header.producerId,
    producerEpoch: header.producerEpoch,
    baseSequence: header.baseSequence,
    flags: flagsOf(header),
    payload,
  };
}

export const kafkaBatchFormatCodec: BatchFormatCodec = {
  format: BatchFormat.kafka,
  stamp: stampKafkaBatch,
  decode,
  encode,
  // recordsCount (int32 at byte 57 of the v2 batch header, compressed or not).
  messageCount: (batch) => (batch.payload.length >= 61 ? batch.payload.readInt32BE(57) : null),
  decodedBytes,
};
