// A produced batch made ready for the log (handlers/produce.ts): its records decompressed and
// walked (inspectProducedRecords: the batch refused whole, or records refused one by one), then
// normalizeProducedBatch (maxTimestamp recomputed, the records recompressed to the topic's
// compression.type). A pure function of plain bytes and rules, so the same code runs inline or,
// when the work is large, on the broker's worker pool (core/offload.ts offloadTask):
// decompressing a small batch that inflates to tens of MiB, or compressing a large one, would
// otherwise hold up every other connection for as long as it takes.

import { asBuffer } from '../../../base/worker-pool.js';
import { decodedBytesBound, decompressedBytesMaxDefault } from './compression.js';
import { inspectProducedRecords, normalizeProducedBatch, readBatchHeader, type ProducedRecordError, type ProducedRecordRules, type RecordBatchHeader } from './record-batch.js';

/** What Produce needs of the topic's configuration. */
export interface ProduceRules extends ProducedRecordRules {
  /** The codec batches are stored in; null keeps the producer's. */
  codec: number | null;
}

/** A produced batch after preparation. */
export type PreparedBatch =
  /** The batch to append. */
  | { kind: 'ready'; batch: Buffer }
  /** Refused whole (INVALID_RECORD); `tooLarge` when its records decompress past the limit asked for. */
  | { kind: 'invalid'; reason: string; tooLarge?: true }
  /** Records refused one by one (KIP-467). */
  | { kind: 'recordErrors'; errors: ProducedRecordError[] }
  /** The batch could not be rebuilt (CORRUPT_MESSAGE). */
  | { kind: 'corrupt'; reason: string };

/** Prepares `batch` (a validated RecordBatch with `header`), decompressing at most `maxDecompressedBytes`. */
export function prepareProducedBatch(batch: Buffer, header: RecordBatchHeader, rules: ProduceRules, maxDecompressedBytes = decompressedBytesMaxDefault): PreparedBatch {
  const inspected = inspectProducedRecords(batch, header, rules, maxDecompressedBytes);
  if (!inspected.ok) return inspected.tooLarge === true ? { kind: 'invalid', reason: inspected.reason, tooLarge: true } : { kind: 'invalid', reason: inspected.reason };
  if (inspected.recordErrors.length > 0) return { kind: 'recordErrors', errors: inspected.recordErrors };
  try {
    const maxTimestamp = rules.logAppendTime === true ? null : inspected.maxTimestamp;
    return { kind: 'ready', batch: normalizeProducedBatch(batch, inspected.section, maxTimestamp, rules.codec) };
  } catch (err) {
    return { kind: 'corrupt', reason: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * The bytes preparing `batch` decodes or encodes, as its headers tell before any decoding (the
 * size rule of the worker pool is applied to it): the decoded records of a compressed batch
 * (compression.ts decodedBytesBound), the records of an uncompressed one the topic's codec will
 * compress, else 0 (the records are only walked where they lie).
 */
export function preparationBytes(batch: Buffer, header: RecordBatchHeader, codec: number | null, headerBytes: number): number {
  const body = batch.subarray(headerBytes);
  if (header.compression !== 0) return decodedBytesBound(header.compression, body);
  return codec !== null && codec !== 0 ? body.length : 0;
}

/** prepareProducedBatch on a worker thread: the batch arrives as plain bytes. */
export function prepareTask(batch: Uint8Array, rules: ProduceRules): PreparedBatch {
  const b = asBuffer(batch);
  return prepareProducedBatch(b, readBatchHeader(b), rules);
}
