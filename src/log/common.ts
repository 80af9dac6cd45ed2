// Rules both PartitionLog implementations share, so that the memory log and the file log cannot
// drift apart: config limits, append validation, read selection and the compaction decision.

import assert from 'node:assert/strict';
import { QuartetError } from '../base/errors.js';
import { envelopeHeaderBytes, envelopePayloadBytesMax } from './envelope.js';
import type { FormatRegistry } from './formats.js';
import { BatchFlags, type AppendRequest, type AppendStamp, type BatchFormatCodec, type LogConfig, type NeutralRecord, type StoredBatch } from './types.js';

/** Segment files address positions with u32 index entries: keep them well inside that. */
export const segmentBytesMax = 2 ** 31;
/** Relative offsets in the offset index are u32: a segment rolls before spanning more offsets. */
export const segmentOffsetSpanMax = 2 ** 32 - 1;
/** How long a tombstone (null value) survives compaction when the config does not say. */
export const deleteRetentionMsDefault = 24 * 3600 * 1000;

/**
 * LogConfig plus the optional fields this module adds. `deleteRetentionMs` is how long a
 * tombstone that is the latest record of its key stays in a compacted log (Kafka's
 * delete.retention.ms), so that consumers behind it still see the delete.
 */
export interface LogConfigExtras {
  deleteRetentionMs?: number;
}

/** Config values are the caller's to get right: a bad one is a programmer error. */
export function assertValidConfig(config: LogConfig): void {
  assert.ok(Number.isInteger(config.segmentBytes) && config.segmentBytes > envelopeHeaderBytes, 'segmentBytes too small');
  assert.ok(config.segmentBytes <= segmentBytesMax, `segmentBytes above ${segmentBytesMax}`);
  assert.ok(config.segmentMs >= 0, 'segmentMs must be >= 0');
  assert.ok(config.retentionMs === -1 || config.retentionMs >= 0, 'retentionMs must be -1 or >= 0');
  assert.ok(config.retentionBytes === -1 || config.retentionBytes >= 0, 'retentionBytes must be -1 or >= 0');
  assert.ok(config.fsyncIntervalMs > 0, 'fsyncIntervalMs must be > 0');
  assert.ok(config.maxBatchBytes > 0 && config.maxBatchBytes <= envelopePayloadBytesMax, 'maxBatchBytes out of range');
  assert.ok(config.indexIntervalBytes > 0, 'indexIntervalBytes must be > 0');
}

/** Operating errors for a request a front-end built from peer input. */
/** Whether a batch of `bytes` starts a new segment after `segmentSize` bytes, by size alone. */
export function segmentFull(config: Pick<LogConfig, 'segmentBytes' | 'segmentRoll'>, segmentSize: number, bytes: number): boolean {
  return config.segmentRoll === 'after' ? segmentSize >= config.segmentBytes : segmentSize + bytes > config.segmentBytes;
}

/** record_too_large for a batch of more than maxBatchBytes (checkAppendRequest; a front-end that stores one batch in parts checks the whole). */
export function checkBatchBytes(length: number, config: Pick<LogConfig, 'maxBatchBytes'>): void {
  if (length > config.maxBatchBytes) throw new QuartetError('record_too_large', `batch of ${length} bytes exceeds maxBatchBytes ${config.maxBatchBytes}`);
}

export function checkAppendRequest(request: AppendRequest, config: LogConfig): void {
  checkBatchBytes(request.payload.length, config);
  if (!Number.isInteger(request.recordCount) || request.recordCount < 1) {
    throw new QuartetError('invalid_request', `recordCount ${request.recordCount} must be >= 1`);
  }
  if (!Number.isSafeInteger(request.firstTimestamp) || !Number.isSafeInteger(request.maxTimestamp)) {
    throw new QuartetError('invalid_request', 'timestamps must be integers');
  }
}

export function closedError(): QuartetError {
  return new QuartetError('storage_error', 'the log is closed');
}

export function outOfRange(offset: number, logStartOffset: number, nextOffset: number): QuartetError {
  return new QuartetError('offset_out_of_range', `offset ${offset} is outside [${logStartOffset}, ${nextOffset}]`);
}

/** Envelope bytes a batch takes on disk; the memory log counts the same so stats agree. */
export function storedBytes(payloadLength: number): number {
  return envelopeHeaderBytes + payloadLength;
}

/**
 * Decides which batches a read returns, given candidates in offset order. Skips batches wholly
 * below `offset`, stops at `endOffset` (high watermark or maxOffset), and stops once payload bytes
 * would exceed maxBytes, except that the first batch is always returned.
 */
export class ReadSelector {
  readonly batches: StoredBatch[] = [];
  private payloadBytes = 0;
  done = false;

  constructor(
    private readonly offset: number,
    private readonly endOffset: number,
    private readonly maxBytes: number,
  ) {}

  /** Offers the next batch; returns false once the read is complete. */
  offer(batch: StoredBatch): boolean {
    if (this.done) return false;
    if (batch.lastOffset < this.offset) return true;
    const bytes = batch.file?.length ?? batch.payload.length;
    if (this.refuses(batch.baseOffset, batch.lastOffset, bytes)) return this.finish();
    this.batches.push(batch);
    this.payloadBytes += bytes;
    if (this.payloadBytes >= this.maxBytes) return this.finish();
    return true;
  }

  /**
   * Whether a batch of these offsets and payload bytes, offered next, would end the read without
   * being taken (so a reader that knows only its header need not read the rest of it).
   */
  refuses(baseOffset: number, lastOffset: number, bytes: number): boolean {
    if (this.done) return true;
    if (lastOffset < this.offset) return false;
    if (baseOffset >= this.endOffset) return true;
    return this.batches.length > 0 && this.payloadBytes + bytes > this.maxBytes;
  }

  /** Ends the read with the batches taken so far (the next one cannot be served). */
  stop(): void {
    this.done = true;
  }

  private finish(): boolean {
    this.done = true;
    return false;
  }
}

// ---- Compaction -------------------------------------------------------------------------------

/** Batches compaction never looks inside: transactional data needs its markers, controls are markers. */
function isOpaque(batch: StoredBatch, formats: FormatRegistry): boolean {
  if ((batch.flags & (BatchFlags.transactional | BatchFlags.control)) !== 0) return true;
  return formats.get(batch.format) === undefined;
}

function keyOf(key: Buffer): string {
  return key.toString('latin1');
}

/** What compaction looks at in a record: its key (as keyOf), offset, whether it is a tombstone, and time. */
export interface RecordSummary {
  key: string | null;
  offset: number;
  tombstone: boolean;
  timestamp: number;
}

export function summaryOf(record: NeutralRecord): RecordSummary {
  return { key: record.key === null ? null : keyOf(record.key), offset: record.offset, tombstone: record.value === null, timestamp: record.timestamp };
}

/**
 * The offset of the last record of each key, over the batches compaction may rewrite; and the
 * base offset of the last data batch of each producer id over the compacted range, so that
 * compaction keeps that batch as it is (see compactBatch).
 */
export class CompactionKeyMap {
  private readonly lastOffsetByKey = new Map<string, number>();
  private readonly lastBatchByProducer = new Map<number, number>();

  constructor(private readonly formats: FormatRegistry) {}

  /** Batches must be added in offset order. */
  add(batch: StoredBatch): void {
    this.addSummaries(batch, this.isOpaque(batch) ? [] : this.formats.get(batch.format)!.decode(batch).map(summaryOf));
  }

  /** add, with the batch's records summarised elsewhere (a worker thread: compaction-offload.ts). */
  addSummaries(batch: StoredBatch, records: readonly RecordSummary[]): void {
    if (isProducerData(batch)) this.lastBatchByProducer.set(batch.producerId, batch.baseOffset);
    if (this.isOpaque(batch)) return;
    for (const record of records) {
      if (record.key !== null) this.lastOffsetByKey.set(record.key, record.offset);
    }
  }

  /** Whether compaction leaves the batch's records unread: a marker or transactional batch, or one without a codec. */
  isOpaque(batch: StoredBatch): boolean {
    return isOpaque(batch, this.formats);
  }

  get size(): number {
    return this.lastOffsetByKey.size;
  }

  /** Whether `batch` is the last data batch of its producer id (>= 0) among the batches added. */
  isLastOfProducer(batch: StoredBatch): boolean {
    return isProducerData(batch) && this.lastBatchByProducer.get(batch.producerId) === batch.baseOffset;
  }

  /** Whether compaction keeps `record`; `tombstoneDeadline` is now - deleteRetentionMs. */
  keeps(record: RecordSummary, tombstoneDeadline: number): boolean {
    if (record.key === null) return true;
    if (this.lastOffsetByKey.get(record.key) !== record.offset) return false;
    return !record.tombstone || record.timestamp >= tombstoneDeadline;
  }
}

export type CompactionOutcome =
  | { kind: 'keep' }
  | { kind: 'drop'; recordsRemoved: number }
  | { kind: 'rewrite'; request: AppendRequest; recordsRemoved: number };

/** What compaction does with a batch whose records it reads (compactionPlan): a rewrite keeps the records at `kept`. */
export type CompactionPlan = { kind: 'keep' } | { kind: 'drop'; recordsRemoved: number } | { kind: 'rewrite'; kept: number[]; recordsRemoved: number };

/** A data batch of an idempotent or transactional producer (markers are not data). */
function isProducerData(batch: StoredBatch): boolean {
  return batch.producerId >= 0 && (batch.flags & BatchFlags.control) === 0;
}

/**
 * Whether compaction reads the batch's records at all. A batch whose records all survive is kept
 * verbatim. So is the last data batch of each producer id in the compacted range, whatever its
 * records (Kafka's cleaner does the same): producer state is rebuilt after a crash by replaying
 * batch headers, and must find the same last sequence and epoch per producer as before
 * compaction, or it would reject the producer's next batch or accept a retry of its last one a
 * second time.
 */
export function compactionReads(batch: StoredBatch, keys: CompactionKeyMap): boolean {
  return !keys.isOpaque(batch) && !keys.isLastOfProducer(batch);
}

/** What compaction does with a batch it reads (compactionReads), from its records' summaries. */
export function compactionPlan(records: readonly RecordSummary[], keys: CompactionKeyMap, tombstoneDeadline: number): CompactionPlan {
  const kept = records.filter((r) => keys.keeps(r, tombstoneDeadline)).map((r) => r.offset);
  if (kept.length === records.length) return { kind: 'keep' };
  const recordsRemoved = records.length - kept.length;
  return kept.length === 0 ? { kind: 'drop', recordsRemoved } : { kind: 'rewrite', kept, recordsRemoved };
}

/** The batch rewritten with its records at the `kept` offsets only (a compactionPlan's rewrite). */
export function rewrittenRecords(codec: BatchFormatCodec, batch: StoredBatch, records: readonly NeutralRecord[], kept: readonly number[]): AppendRequest {
  const keep = new Set(kept);
  const request = codec.encode(records.filter((r) => keep.has(r.offset)), batch.baseOffset, batch);
  assert.ok(request.recordCount >= 1 && batch.baseOffset + request.recordCount - 1 <= batch.lastOffset, 'a rewritten batch must stay inside its offsets');
  return request;
}

/** What compaction does with one batch (compactionReads, compactionPlan), read on this thread. */
export function compactBatch(batch: StoredBatch, keys: CompactionKeyMap, formats: FormatRegistry, tombstoneDeadline: number): CompactionOutcome {
  if (!compactionReads(batch, keys)) return { kind: 'keep' };
  const codec = formats.get(batch.format)!;
  const records = codec.decode(batch);
  const plan = compactionPlan(records.map(summaryOf), keys, tombstoneDeadline);
  if (plan.kind !== 'rewrite') return plan;
  return { kind: 'rewrite', request: rewrittenRecords(codec, batch, records, plan.kept), recordsRemoved: plan.recordsRemoved };
}

/**
 * Has the batch's format codec stamp it with what the log assigned (BatchFormatCodec.stamp): called
 * once the offset is assigned, before the log changes any state of its own or checksums the bytes.
 */
export function stampAssigned(formats: FormatRegistry, request: AppendRequest, assigned: AppendStamp): void {
  const stamp = formats.get(request.format)?.stamp;
  if (stamp === undefined) return;
  const length = request.payload.length;
  stamp(request, assigned);
  assert.equal(request.payload.length, length, 'a stamp must not change the payload length');
}

/** The request as appended at `appendTime`: with its timestamps set to it when it asks for logAppendTime. */
export function atAppendTime(request: AppendRequest, appendTime: number): AppendRequest {
  if (request.logAppendTime !== true) return request;
  const ms = Math.floor(appendTime);
  return { ...request, firstTimestamp: ms, maxTimestamp: ms };
}

/** The batch a rewrite produces: same base offset, the codec's payload and fields. */
export function rewrittenBatch(template: StoredBatch, request: AppendRequest): StoredBatch {
  return {
    format: request.format,
    flags: request.flags,
    baseOffset: template.baseOffset,
    lastOffset: template.baseOffset + request.recordCount - 1,
    recordCount: request.recordCount,
    firstTimestamp: request.firstTimestamp,
    maxTimestamp: request.maxTimestamp,
    producerId: request.producerId,
    producerEpoch: request.producerEpoch,
    baseSequence: request.baseSequence,
    payload: request.payload,
  };
}

export function tombstoneDeadline(config: LogConfig & LogConfigExtras, now: number): number {
  return now - (config.deleteRetentionMs ?? deleteRetentionMsDefault);
}

/** Rejects a DeleteSegments count that is not a non-negative integer. */
export function checkSegmentCount(count: number): void {
  if (!Number.isSafeInteger(count) || count < 0) throw new QuartetError('invalid_request', `invalid segment count ${count}`);
}

/**
 * How many of the oldest segments DeleteSegments removes: at most `count`, never the active
 * (last) one, and none from the first segment whose end (exclusive) is above `before`.
 */
export function oldestSegmentsToDelete(ends: readonly number[], count: number, before: number | undefined): number {
  const sealed = Math.max(0, ends.length - 1);
  let n = 0;
  while (n < Math.min(count, sealed) && (before === undefined || ends[n]! <= before)) n++;
  return n;
}

/** Calls each append listener once more and forgets them all: the log is closing (PartitionLog.onAppend). */
export function notifyClosing(listeners: Set<(highWatermark: number) => void>, highWatermark: number): void {
  const called = [...listeners];
  listeners.clear();
  for (const listener of called) listener(highWatermark);
}
