// What PUBLISH needs of a CBV2 batch besides its bytes (publish.ts): the header, the first
// record's routing and AckResponse fields, whether any record carries transaction metadata, and
// why the batch could not be deduplicated. It is computed where the batch is decoded: on the event
// loop for a Wire v2 frame, on a worker thread for a large Cursus v1 batch (v1/publish-batch.ts),
// so that the records themselves, up to 100,000 objects, never have to reach the event loop.

import type { BatchHeader, CursusBatch, CursusRecord } from './codec/batch.js';

export interface PublishedBatch extends BatchHeader {
  /** A record carries transaction metadata (PUBLISH refuses it: transactions use TXN_PUBLISH). */
  transactionMetadata: boolean;
  /** The first record's key, producer and epoch; null for a batch without records. */
  first: { key: Buffer | null; producerId: string | null; producerEpoch: number } | null;
  /**
   * Why the batch cannot be deduplicated when dedup applies (an idempotent batch, or an
   * idempotent topic) and batch_start is not 0: the records do not name one producer and epoch,
   * or their seqNums are not batch_start to batch_end in order. Null when they do.
   */
  claimProblem: string | null;
}

/** The summary of a decoded batch. */
export function publishedBatchOf(b: CursusBatch): PublishedBatch {
  const { idempotent, topic, partition, acks, batchStart, batchEnd, recordCount } = b;
  const r0 = b.records[0];
  const first = r0 === undefined ? null : { key: r0.key ?? null, producerId: r0.producerId ?? null, producerEpoch: r0.producerEpoch ?? 0 };
  return { idempotent, topic, partition, acks, batchStart, batchEnd, recordCount, transactionMetadata: b.records.some(hasTransactionMetadata), first, claimProblem: claimProblemOf(b) };
}

function hasTransactionMetadata(r: CursusRecord): boolean {
  const { transactionalId, transactionState, transactionMarker, controlBatchType, controlBatchVersion, controlBatchCoordinatorEpoch, controlKey, controlValue } = r;
  return [transactionalId, transactionState, transactionMarker, controlBatchType, controlBatchVersion, controlBatchCoordinatorEpoch, controlKey, controlValue].some((v) => v !== undefined);
}

/**
 * A deduplicated batch names one producer and epoch on every record and seqNums batch_start to
 * batch_end on them in order; the first rule it breaks, or null.
 */
function claimProblemOf(b: CursusBatch): string | null {
  const first = b.records[0];
  if (b.batchStart === 0 || first === undefined) return null;
  const producerId = first.producerId;
  if (producerId === undefined || producerId === '') return 'an idempotent batch names its producer on every record';
  const epoch = first.producerEpoch ?? 0;
  if (b.batchEnd !== b.batchStart + b.records.length - 1) return `batch_start ${b.batchStart} to batch_end ${b.batchEnd} is not one seqNum per record (${b.records.length})`;
  for (let i = 0; i < b.records.length; i++) {
    const r = b.records[i]!;
    if (r.producerId !== producerId || (r.producerEpoch ?? 0) !== epoch) return `record ${i} is not of the batch's producer and epoch`;
    if (r.seqNum !== b.batchStart + i) return `record ${i} has seqNum ${r.seqNum ?? 'none'}, not ${b.batchStart + i}`;
  }
  return null;
}
