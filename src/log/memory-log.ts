// A PartitionLog held in memory: the reference the file log is tested against (one contract
// suite runs on both) and the log tests of the layers above use. It models segments the same way
// the file log does (roll by size and age, whole-segment retention) and counts the same envelope
// bytes, so stats and retention agree between the two.

import { clockMicros, systemClock, type Clock } from '../base/clock.js';
import {
  assertValidConfig,
  atAppendTime,
  checkAppendRequest,
  checkSegmentCount,
  closedError,
  CompactionKeyMap,
  compactBatch,
  notifyClosing,
  oldestSegmentsToDelete,
  outOfRange,
  ReadSelector,
  rewrittenBatch,
  segmentFull,
  segmentOffsetSpanMax,
  stampAssigned,
  storedBytes,
  tombstoneDeadline,
} from './common.js';
import { createFormatRegistry, type FormatRegistry } from './formats.js';
import type {
  AppendRequest,
  AppendResult,
  AssignedAppend,
  CleanupResult,
  CorruptBatch,
  DeleteSegmentsOptions,
  LogConfig,
  LogStats,
  PartitionLog,
  ReadOptions,
  ScrubProgress,
  StoredBatch,
} from './types.js';

interface MemorySegment {
  baseOffset: number;
  batches: StoredBatch[];
  sizeBytes: number;
  /** Clock time of the first append (for segmentMs); null while empty. */
  firstAppendTime: number | null;
}

export interface MemoryLogOptions {
  clock?: Clock;
  formats?: FormatRegistry;
}

export class MemoryLog implements PartitionLog {
  config: LogConfig;
  private readonly clock: Clock;
  private readonly formats: FormatRegistry;
  private segments: MemorySegment[];
  private nextOffset = 0;
  private logStartOffset = 0;
  private closed = false;
  private readonly listeners = new Set<(highWatermark: number) => void>();

  constructor(config: LogConfig, options: MemoryLogOptions = {}) {
    assertValidConfig(config);
    this.config = config;
    this.clock = options.clock ?? systemClock;
    this.formats = options.formats ?? createFormatRegistry();
    this.segments = [emptySegment(0)];
  }

  stats(): LogStats {
    return {
      logStartOffset: this.logStartOffset,
      nextOffset: this.nextOffset,
      highWatermark: this.nextOffset,
      sizeBytes: this.segments.reduce((n, s) => n + s.sizeBytes, 0),
      segmentCount: this.segments.length,
    };
  }

  append(request: AppendRequest): Promise<AppendResult> {
    try {
      return this.assign(request).written;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  assign(request: AppendRequest): AssignedAppend {
    if (this.closed) throw closedError();
    checkAppendRequest(request, this.config);
    const appendMicros = clockMicros(this.clock);
    const appendTime = Math.floor(appendMicros / 1000);
    request = atAppendTime(request, appendTime);
    const baseOffset = this.nextOffset;
    stampAssigned(this.formats, request, { baseOffset, appendTime, appendMicros });
    const length = request.payload.length;
    this.maybeRoll(storedBytes(length), request.recordCount, appendTime);
    const segment = this.active();
    segment.batches.push(storedBatchOfRequest(request, baseOffset));
    segment.sizeBytes += storedBytes(length);
    segment.firstAppendTime ??= appendTime;
    this.nextOffset = baseOffset + request.recordCount;
    // segmentRoll 'after' (Iggy's rule): a segment this batch filled is sealed at once.
    if (this.config.segmentRoll === 'after' && segment.sizeBytes >= this.config.segmentBytes) this.roll();
    const highWatermark = this.nextOffset;
    queueMicrotask(() => this.notify(highWatermark));
    const lastOffset = this.nextOffset - 1;
    return { baseOffset, lastOffset, appendTime, written: Promise.resolve({ baseOffset, lastOffset, appendTime, logStartOffset: this.logStartOffset }) };
  }

  read(offset: number, options: ReadOptions): Promise<StoredBatch[]> {
    if (this.closed) return Promise.reject(closedError());
    if (offset < this.logStartOffset || offset > this.nextOffset) {
      return Promise.reject(outOfRange(offset, this.logStartOffset, this.nextOffset));
    }
    const endOffset = Math.min(this.nextOffset, options.maxOffset ?? Infinity);
    const selector = new ReadSelector(offset, endOffset, options.maxBytes);
    for (const segment of this.segments) {
      if (segment.batches.length === 0 || segment.batches.at(-1)!.lastOffset < offset) continue;
      for (const batch of segment.batches) if (!selector.offer(batch)) break;
      if (selector.done) break;
    }
    return Promise.resolve(selector.batches);
  }

  /** Memory logs never return file slices. */
  wholePayload(batch: StoredBatch): Promise<StoredBatch> {
    return Promise.resolve(batch);
  }

  /** Nothing held in memory rots: the integrity checks of the file log have nothing to find here. */
  checkBatch(): Promise<CorruptBatch | null> {
    return Promise.resolve(null);
  }

  corruptBatches(): CorruptBatch[] {
    return [];
  }

  scrub(): Promise<ScrubProgress> {
    return Promise.resolve({ next: null, bytes: 0 });
  }

  offsetForTimestamp(timestamp: number): Promise<number | null> {
    if (this.closed) return Promise.reject(closedError());
    for (const batch of this.allBatches()) {
      if (batch.maxTimestamp >= timestamp) return Promise.resolve(Math.max(batch.baseOffset, this.logStartOffset));
    }
    return Promise.resolve(null);
  }

  maxTimestampOffset(): Promise<{ offset: number; timestamp: number } | null> {
    if (this.closed) return Promise.reject(closedError());
    let best: { offset: number; timestamp: number } | null = null;
    for (const batch of this.allBatches()) {
      // The offset of the max-timestamp record is not known without decoding: like Kafka for
      // batches, report the batch's last offset.
      if (best === null || batch.maxTimestamp > best.timestamp) best = { offset: batch.lastOffset, timestamp: batch.maxTimestamp };
    }
    return Promise.resolve(best);
  }

  deleteRecordsBefore(offset: number): Promise<number> {
    if (this.closed) return Promise.reject(closedError());
    if (offset > this.nextOffset || offset < 0) return Promise.reject(outOfRange(offset, this.logStartOffset, this.nextOffset));
    if (offset > this.logStartOffset) {
      this.logStartOffset = offset;
      this.deleteSegmentsBelowStart();
    }
    return Promise.resolve(this.logStartOffset);
  }

  truncateAll(): Promise<void> {
    if (this.closed) return Promise.reject(closedError());
    this.segments = [emptySegment(this.nextOffset)];
    this.logStartOffset = this.nextOffset;
    return Promise.resolve();
  }

  deleteOldestSegments(count: number, options: DeleteSegmentsOptions = {}): Promise<CleanupResult> {
    if (this.closed) return Promise.reject(closedError());
    try {
      checkSegmentCount(count);
    } catch (error) {
      return Promise.reject(error);
    }
    const result: CleanupResult = { segmentsDeleted: 0, bytesDeleted: 0, recordsRemoved: 0 };
    const n = oldestSegmentsToDelete(this.segments.map(segmentEnd), count, options.before);
    for (const gone of this.segments.splice(0, n)) {
      result.segmentsDeleted += 1;
      result.bytesDeleted += gone.sizeBytes;
      result.recordsRemoved += Math.max(0, segmentEnd(gone) - Math.max(gone.baseOffset, this.logStartOffset));
    }
    this.logStartOffset = Math.max(this.logStartOffset, this.segments[0]!.baseOffset);
    return Promise.resolve(result);
  }

  applyRetention(now: number): Promise<CleanupResult> {
    if (this.closed) return Promise.reject(closedError());
    const active = this.active();
    if (this.config.segmentMs > 0 && active.firstAppendTime !== null && now - active.firstAppendTime >= this.config.segmentMs) {
      this.roll();
    }
    const result: CleanupResult = { segmentsDeleted: 0, bytesDeleted: 0, recordsRemoved: 0 };
    while (this.segments.length > 1 && this.retentionWants(this.segments[0]!, now)) {
      const gone = this.segments.shift()!;
      result.segmentsDeleted += 1;
      result.bytesDeleted += gone.sizeBytes;
      result.recordsRemoved += gone.batches.reduce((n, b) => n + b.recordCount, 0);
    }
    this.logStartOffset = Math.max(this.logStartOffset, this.segments[0]!.baseOffset);
    return Promise.resolve(result);
  }

  compact(now: number): Promise<CleanupResult> {
    if (this.closed) return Promise.reject(closedError());
    const result: CleanupResult = { segmentsDeleted: 0, bytesDeleted: 0, recordsRemoved: 0 };
    if (!this.config.cleanupPolicy.includes('compact')) return Promise.resolve(result);
    const sealed = this.segments.slice(0, -1);
    const keys = new CompactionKeyMap(this.formats);
    for (const segment of sealed) for (const batch of segment.batches) keys.add(batch);
    const deadline = tombstoneDeadline(this.config, now);
    for (const segment of sealed) {
      const kept: StoredBatch[] = [];
      for (const batch of segment.batches) {
        const outcome = compactBatch(batch, keys, this.formats, deadline);
        if (outcome.kind === 'keep') kept.push(batch);
        else if (outcome.kind === 'rewrite') kept.push(rewrittenBatch(batch, outcome.request));
        if (outcome.kind !== 'keep') result.recordsRemoved += outcome.recordsRemoved;
      }
      const sizeBytes = kept.reduce((n, b) => n + storedBytes(b.payload.length), 0);
      result.bytesDeleted += segment.sizeBytes - sizeBytes;
      segment.batches = kept;
      segment.sizeBytes = sizeBytes;
    }
    return Promise.resolve(result);
  }

  flush(): Promise<void> {
    if (this.closed) return Promise.reject(closedError());
    return Promise.resolve();
  }

  updateConfig(config: LogConfig): void {
    assertValidConfig(config);
    this.config = config;
  }

  onAppend(listener: (highWatermark: number) => void): () => void {
    if (this.closed) {
      queueMicrotask(() => listener(this.nextOffset));
      return () => undefined;
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  isClosed(): boolean {
    return this.closed;
  }

  close(): Promise<void> {
    if (this.closed) return Promise.reject(closedError());
    this.closed = true;
    notifyClosing(this.listeners, this.nextOffset);
    return Promise.resolve();
  }

  destroy(): Promise<void> {
    this.closed = true;
    notifyClosing(this.listeners, this.nextOffset);
    this.segments = [emptySegment(this.nextOffset)];
    return Promise.resolve();
  }

  private active(): MemorySegment {
    return this.segments.at(-1)!;
  }

  private *allBatches(): Iterable<StoredBatch> {
    for (const segment of this.segments) {
      for (const batch of segment.batches) if (batch.lastOffset >= this.logStartOffset) yield batch;
    }
  }

  /** Rolls for an append that would overflow the segment (or after a full one: segmentRoll), or once the segment is too old. */
  private maybeRoll(bytes: number, recordCount: number, now: number): void {
    const segment = this.active();
    if (segment.batches.length === 0) return;
    const full = segmentFull(this.config, segment.sizeBytes, bytes);
    const tooManyOffsets = this.nextOffset + recordCount - segment.baseOffset > segmentOffsetSpanMax;
    const tooOld = this.config.segmentMs > 0 && now - segment.firstAppendTime! >= this.config.segmentMs;
    if (full || tooManyOffsets || tooOld) this.roll();
  }

  private roll(): void {
    if (this.active().batches.length === 0) return;
    this.segments.push(emptySegment(this.nextOffset));
  }

  private retentionWants(segment: MemorySegment, now: number): boolean {
    const { retentionMs, retentionBytes } = this.config;
    const newest = segment.batches.reduce((m, b) => Math.max(m, b.maxTimestamp), -Infinity);
    if (retentionMs >= 0 && newest < now - retentionMs) return true;
    return retentionBytes >= 0 && this.stats().sizeBytes > retentionBytes;
  }

  private deleteSegmentsBelowStart(): void {
    if (this.active().batches.length > 0 && this.nextOffset <= this.logStartOffset) this.roll();
    while (this.segments.length > 1 && this.segments[1]!.baseOffset <= this.logStartOffset) this.segments.shift();
  }

  private notify(highWatermark: number): void {
    for (const listener of this.listeners) listener(highWatermark);
  }

}

/** One past the segment's last offset (its base while empty), like the file log's Segment.nextOffset. */
function segmentEnd(segment: MemorySegment): number {
  const last = segment.batches.at(-1);
  return last ? last.lastOffset + 1 : segment.baseOffset;
}

function emptySegment(baseOffset: number): MemorySegment {
  return { baseOffset, batches: [], sizeBytes: 0, firstAppendTime: null };
}

function storedBatchOfRequest(request: AppendRequest, baseOffset: number): StoredBatch {
  return {
    format: request.format,
    flags: request.flags,
    baseOffset,
    lastOffset: baseOffset + request.recordCount - 1,
    recordCount: request.recordCount,
    firstTimestamp: request.firstTimestamp,
    maxTimestamp: request.maxTimestamp,
    producerId: request.producerId,
    producerEpoch: request.producerEpoch,
    baseSequence: request.baseSequence,
    // A copy: the caller may reuse its buffer once the append settles (see AppendRequest.payload).
    payload: Buffer.from(request.payload),
  };
}
