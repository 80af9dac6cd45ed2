// A Cursus v1 0xBA7C batch body made into what the Wire v2 PUBLISH takes: decoded (batch.ts),
// converted to CBV2 (convert.ts), encoded, and summed up for PUBLISH (published-batch.ts). A pure
// function of the body's bytes, so the same code runs inline or, for a body of
// workers.offloadBytesMin bytes or more, on the broker's worker pool (core/offload.ts
// offloadTask; v1-connection.ts): up to 100,000 records of a 16 MiB body decoded, converted and
// encoded again take long enough to hold up every other connection on the event loop. Only the
// encoded batch and its summary come back; the records stay on the thread that decoded them.

import { asBuffer, ownedCopy } from '../../../base/worker-pool.js';
import { publishedBatchOf, type PublishedBatch } from '../published-batch.js';
import { decodeV1Batch } from './batch.js';
import { v1BatchToCbv2 } from './convert.js';
import { formatV1Error } from './errors.js';

export type V1PreparedBatch =
  /** The CBV2 batch to publish, its summary, and the first record's producer epoch as v1 sent it (for the AckResponse). */
  | { ok: true; bytes: Buffer; summary: PublishedBatch; producerEpoch: bigint | null }
  /** The v1 error line the client gets (before NEGOTIATE's decoration). */
  | { ok: false; line: string };

/** Decodes and converts a 0xBA7C body (classify.ts found the magic). */
export function prepareV1Batch(body: Buffer): V1PreparedBatch {
  const decoded = decodeV1Batch(body);
  if (!decoded.ok) return { ok: false, line: formatV1Error('batch_decode_failed', [['reason', decoded.reason]]) };
  const converted = v1BatchToCbv2(decoded.value);
  if (!converted.ok) return converted;
  return { ok: true, bytes: converted.value.bytes, summary: publishedBatchOf(converted.value.value), producerEpoch: decoded.value.records[0]?.epoch ?? null };
}

/**
 * prepareV1Batch on a worker thread: the body arrives as plain bytes. The encoded batch goes back
 * transferred (it owns its memory); the first record's key, a view of the body, is copied out, as
 * a view would carry the whole body back with it.
 */
export function prepareV1BatchTask(body: Uint8Array): V1PreparedBatch {
  const prepared = prepareV1Batch(asBuffer(body));
  if (!prepared.ok) return prepared;
  const first = prepared.summary.first;
  const key = first?.key ?? null;
  const summary = first === null || key === null ? prepared.summary : { ...prepared.summary, first: { ...first, key: ownedCopy(key) } };
  return { ...prepared, bytes: owned(prepared.bytes), summary };
}

/** The whole buffer itself when it owns its memory, else a copy that does. */
function owned(bytes: Buffer): Buffer {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : ownedCopy(bytes);
}

/** A prepared batch as it comes back from a worker: its buffers are Uint8Arrays again. */
export function receivedV1Batch(prepared: V1PreparedBatch): V1PreparedBatch {
  if (!prepared.ok) return prepared;
  const first = prepared.summary.first;
  const summary = first === null || first.key === null ? prepared.summary : { ...prepared.summary, first: { ...first, key: asBuffer(first.key) } };
  return { ...prepared, bytes: asBuffer(prepared.bytes), summary };
}
