// The worker-thread side of recompressing a produced batch to its topic's compression.type
// (handlers/produce.ts hands large ones to the broker's worker pool, core/offload.ts
// offloadTask): a pure function of plain bytes, so it runs the same on a worker or inline.

import { asBuffer } from '../../../base/worker-pool.js';
import { batchHeaderBytes, normalizeProducedBatch } from './record-batch.js';

/**
 * normalizeProducedBatch for a batch given as its 61 header bytes and its uncompressed records
 * `section`, recompressed with `codec` (which differs from the header's). Returns the new batch.
 */
export function recompressTask(header: Uint8Array, section: Uint8Array, maxTimestamp: number | null, codec: number): Uint8Array {
  const head = asBuffer(header);
  if (head.length !== batchHeaderBytes) throw new Error(`a batch header is ${batchHeaderBytes} bytes, got ${head.length}`);
  return normalizeProducedBatch(head, asBuffer(section), maxTimestamp, codec);
}
