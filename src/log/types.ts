// The partition log's public contract. Everything above src/log (the core, the protocol
// front-ends) talks to a partition through these types only; src/log/file-log.ts and
// src/log/memory-log.ts both implement them and one contract suite (test/log/contract.ts) runs
// against both.
//
// Offsets and timestamps are JS numbers: offsets stay far below 2^53 for any log this process can
// hold, and milliseconds since the epoch fit easily. Protocol codecs convert to int64 at the wire.

import type { AppendRequest, BatchFormat, StoredBatch } from '../base/batch.js';
import type { BufferLease } from '../base/buffer-pool.js';

export { BatchFlags, BatchFormat, fileSliceHeadBytes } from '../base/batch.js';
export type { AppendRequest, AppendStamp, BatchFormatCodec, BatchSlice, FileSlice, NeutralRecord, StoredBatch } from '../base/batch.js';
export type { PooledBufferLease } from '../base/buffer-pool.js';

export interface AppendResult {
  baseOffset: number;
  lastOffset: number;
  /** The broker time (ms) at which the batch was appended (Kafka LogAppendTime). */
  appendTime: number;
  /** Log start offset after the append (Kafka reports it in Produce responses). */
  logStartOffset: number;
}

/** An append whose offsets are assigned (PartitionLog.assign): known at once, written later. */
export interface AssignedAppend {
  baseOffset: number;
  lastOffset: number;
  /** The broker time (ms) of the append, as in its AppendResult. */
  appendTime: number;
  /**
   * Settles once the batch is written (under fsyncPolicy 'always', synced): with its result, or
   * with a LogError, the batch and everything queued behind it then not being in the log.
   */
  written: Promise<AppendResult>;
}

export interface ReadOptions {
  /** Upper bound on payload bytes returned; at least one batch is returned if any is readable. */
  maxBytes: number;
  /** Do not return batches starting at or beyond this offset (e.g. the last stable offset). */
  maxOffset?: number;
  /**
   * Read into reusable buffers owned by this lease (see buffer-pool.ts); the caller must call
   * `lease.release()` only once no payload view of the returned batches is referenced any more.
   * Logs that do not read into buffers (MemoryLog) ignore it.
   */
  lease?: BufferLease;
  /**
   * With a lease: payloads of at least this many bytes (at least fileSliceHeadBytes) are not read
   * but returned as file slices (StoredBatch.file), for a writer that sends file ranges to a
   * socket directly (src/protocols/file-replies.ts). The lease keeps their segment files open
   * until it is released. Logs without files (MemoryLog) ignore it and return whole payloads.
   */
  fileSlicesMin?: number;
  /**
   * With a lease: payloads of a format other than `format` of at least `bytesMin` bytes come back
   * as file slices too (whatever fileSlicesMin), for a reader that hands them to a worker thread
   * to transcode, which reads them itself (core/offload.ts). Ignored like fileSlicesMin.
   */
  otherFormatSlices?: { format: BatchFormat; bytesMin: number };
  /**
   * Check every header read against its checksum and every batch returned as bytes against its
   * payload checksum (src/log/integrity.ts); default true. False only for the replays of batch
   * headers at start-up (producer state, transaction index), which serve nothing and must not
   * keep a broker from starting over a corrupt payload they never look at.
   */
  verify?: boolean;
}

/** A stored batch found corrupt (src/log/integrity.ts). */
export interface CorruptBatch {
  /** The segment file and the envelope's position in it. */
  file: string;
  position: number;
  /** Its first offset; null when its header is corrupt too (and cannot be believed). */
  baseOffset: number | null;
  /** Its last offset; with a corrupt header, the last offset before the next batch reads can find. */
  lastOffset: number;
  problem: string;
  /** What found it: a read about to serve it, or the scrubber. */
  foundBy: 'read' | 'scrub';
}

export type CorruptBatchListener = (batch: CorruptBatch) => void;

/** Where a scrub goes on from: the first offset it has not checked yet. */
export interface ScrubPosition {
  offset: number;
}

export interface ScrubProgress {
  /** Where the next scrub of this log goes on from; null once it reached the end of the log. */
  next: ScrubPosition | null;
  /** Envelope bytes checked. */
  bytes: number;
}

export type FsyncPolicy =
  /** Writes reach the page cache at once; fsync runs every `fsyncIntervalMs` (default). */
  | 'interval'
  /** Every append is fsynced before it is acknowledged; waiting appends share one fsync. */
  | 'always';

export type CleanupPolicy = 'delete' | 'compact' | 'compact,delete';

/** Per-partition configuration (derived from the topic's config). All limits carry units. */
export interface LogConfig {
  segmentBytes: number;
  /** Roll the active segment when its first batch is older than this; 0 disables. */
  segmentMs: number;
  /** Delete sealed segments whose newest timestamp is older than this; -1 keeps forever. */
  retentionMs: number;
  /** Delete oldest sealed segments while the partition is larger than this; -1 disables. */
  retentionBytes: number;
  cleanupPolicy: CleanupPolicy;
  fsyncPolicy: FsyncPolicy;
  fsyncIntervalMs: number;
  /** Largest accepted payload per batch. */
  maxBatchBytes: number;
  /** Bytes between sparse offset-index (and time-index) entries. */
  indexIntervalBytes: number;
  /**
   * Reserve each new segment's disk blocks (segmentBytes) when it is created, without changing its
   * size (fallocate KEEP_SIZE, best effort: nothing without the native addon or where the
   * filesystem cannot); a sealed segment gives back what it did not use. Default false.
   */
  preallocate?: boolean;
  /**
   * When a size roll happens: 'before' (default, Kafka's rule) starts a new segment for a batch
   * that would take the active one past segmentBytes, so a segment holds at most segmentBytes
   * (one larger batch aside); 'after' (Iggy's rule) appends to the active segment until it holds
   * segmentBytes or more, so a segment may pass segmentBytes by one batch.
   */
  segmentRoll?: SegmentRoll;
}

export type SegmentRoll = 'before' | 'after';

export const defaultLogConfig: LogConfig = {
  segmentBytes: 1024 * 1024 * 1024,
  segmentMs: 7 * 24 * 3600 * 1000,
  retentionMs: 7 * 24 * 3600 * 1000,
  retentionBytes: -1,
  cleanupPolicy: 'delete',
  fsyncPolicy: 'interval',
  fsyncIntervalMs: 1000,
  maxBatchBytes: 1024 * 1024 + 64 * 1024,
  indexIntervalBytes: 4096,
};

/** The outcome of a retention or compaction pass. */
export interface CleanupResult {
  segmentsDeleted: number;
  bytesDeleted: number;
  recordsRemoved: number;
}

export interface DeleteSegmentsOptions {
  /** Keep every segment that holds an offset >= this (a consumer barrier). */
  before?: number;
}

export interface LogStats {
  logStartOffset: number;
  /** Next offset to be assigned (log end offset). */
  nextOffset: number;
  /** Offsets below this are readable (written, and fsynced under 'always'). */
  highWatermark: number;
  sizeBytes: number;
  segmentCount: number;
}

/**
 * One partition's log. Appends are ordered: offsets are assigned in call order, synchronously,
 * and results resolve in the same order. A failed append (write or fsync error) rejects with a
 * LogError and leaves the log readable and consistent: the batch and everything queued behind it
 * are not in the log.
 */
export interface PartitionLog {
  readonly config: LogConfig;
  stats(): LogStats;
  /**
   * Assigns the batch its offsets and queues its write, synchronously: the offsets come back at
   * once, so a caller can act on them (producer state, transactions) before anything else is
   * appended; the write's outcome comes in `written`. Throws, with nothing assigned, when the log
   * refuses the batch (closed, read-only after a storage failure, too large, malformed).
   */
  assign(request: AppendRequest): AssignedAppend;
  /** assign(request).written, with a refusal as a rejection. */
  append(request: AppendRequest): Promise<AppendResult>;
  /** Batches containing offsets >= `offset`, in order, up to the high watermark. */
  read(offset: number, options: ReadOptions): Promise<StoredBatch[]>;
  /**
   * `batch` (returned by read) with its whole payload: a file-sliced batch (`file`) is read from its
   * file, still open under the lease of the read that returned it, into `lease`'s buffers; any
   * other batch is returned as it is.
   */
  wholePayload(batch: StoredBatch, lease?: BufferLease): Promise<StoredBatch>;
  /**
   * Checks a batch `read` returned as a file slice against its stored checksum, reading its bytes
   * (its lease must still be held): the corrupt batch (recorded, as a read would) or null. Any
   * other batch was checked by the read: null.
   */
  checkBatch(batch: StoredBatch): Promise<CorruptBatch | null>;
  /**
   * The batches found corrupt (by reads, checkBatch or scrub) that the log still holds at or after
   * its start: none of them is served.
   */
  corruptBatches(): CorruptBatch[];
  /**
   * Checks the stored checksums of about `bytesMax` bytes of batches from `from` on (from the log
   * start when null), recording what is corrupt; returns where to go on from.
   */
  scrub(from: ScrubPosition | null, bytesMax: number): Promise<ScrubProgress>;
  /** The first offset of the first batch whose maxTimestamp >= timestamp, or null if none. */
  offsetForTimestamp(timestamp: number): Promise<number | null>;
  /** The offset of the record with the greatest timestamp, with that timestamp; null if empty. */
  maxTimestampOffset(): Promise<{ offset: number; timestamp: number } | null>;
  /** Advances the log start offset (Kafka DeleteRecords); whole segments below it go. */
  deleteRecordsBefore(offset: number): Promise<number>;
  /** Removes every record; offsets keep increasing from nextOffset. (Iggy's purge instead replaces the logs: Broker.purgeTopic.) */
  truncateAll(): Promise<void>;
  /**
   * Deletes the `count` oldest sealed segments (Iggy DeleteSegments) and advances the log start
   * to the base of the first segment kept, durably. The active segment is never deleted, so at
   * least it remains (possibly empty) and offsets are unchanged: `nextOffset` stays where it was.
   * Fewer segments go when fewer are sealed, or when `options.before` is given and a segment
   * holds an offset at or above it (deletion stops at the first such segment). `count` 0 is a
   * no-op. The result counts the segments, their bytes and the readable offsets removed.
   */
  deleteOldestSegments(count: number, options?: DeleteSegmentsOptions): Promise<CleanupResult>;
  /** Applies retention (age, size) to sealed segments; rolls an aged active segment first. */
  applyRetention(now: number): Promise<CleanupResult>;
  /** Compacts sealed segments by key using the registered format codecs. */
  compact(now: number): Promise<CleanupResult>;
  /** Fsyncs everything written so far. */
  flush(): Promise<void>;
  updateConfig(config: LogConfig): void;
  /**
   * Calls `listener` after each append becomes readable, and once more when the log closes (a
   * reader waiting for an append then finds the log gone or replaced instead of waiting on); on a
   * log already closed, once on a microtask. Returns an unsubscribe function.
   */
  onAppend(listener: (highWatermark: number) => void): () => void;
  /** Flushes and closes files. Further calls reject. */
  close(): Promise<void>;
  /** Whether close() or destroy() was called. */
  isClosed(): boolean;
  /** Closes and removes the partition's files. */
  destroy(): Promise<void>;
}
