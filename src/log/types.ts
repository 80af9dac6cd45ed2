// The partition log's public contract. Everything above src/log (the core, the protocol
// front-ends) talks to a partition through these types only; src/log/file-log.ts and
// src/log/memory-log.ts both implement them and one contract suite (test/log/contract.ts) runs
// against both.
//
// Offsets and timestamps are JS numbers: offsets stay far below 2^53 for any log this process can
// hold, and milliseconds since the epoch fit easily. Protocol codecs convert to int64 at the wire.

import type { BufferLease } from './buffer-pool.js';

/** The protocol a stored batch was written in. Stored in the envelope; never changes. */
export const BatchFormat = {
  /** Kafka RecordBatch v2, verbatim (baseOffset and partitionLeaderEpoch patched). */
  kafka: 1,
  /** Iggy 0.11 messages batch, as stamped by the broker. */
  iggy: 2,
  /** Cursus Wire v2 batch. */
  cursus: 3,
  /** Felix wire v1 batch. */
  felix: 4,
  /** Quartet's own neutral record encoding (src/log/neutral-format.ts): used by tests and tools. */
  neutral: 15,
} as const;
export type BatchFormat = (typeof BatchFormat)[keyof typeof BatchFormat];

/** Envelope flag bits. */
export const BatchFlags = {
  /** Part of a transaction (Kafka/Cursus): invisible to read_committed until its marker. */
  transactional: 1 << 0,
  /** A control batch (commit/abort marker); carries no user records. */
  control: 1 << 1,
} as const;

/** What an appender hands the log: one protocol batch of one or more records. */
export interface AppendRequest {
  format: BatchFormat;
  /** Number of offsets the batch occupies (>= 1). Offsets baseOffset .. baseOffset+count-1. */
  recordCount: number;
  /** Timestamp of the first record (ms). */
  firstTimestamp: number;
  /** Largest record timestamp in the batch (ms); used by the time index and retention. */
  maxTimestamp: number;
  /** -1 when the producer is not idempotent. */
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  /** BatchFlags bits. */
  flags: number;
  /**
   * The batch's time is when the log appends it (as Kafka's LogAppendTime; Iggy stamps its
   * base_timestamp so): the log sets firstTimestamp and maxTimestamp to the append time (ms,
   * floored; the value `stamp` is given) when it assigns the offset, so the envelope, the time
   * index and age retention all see it.
   */
  logAppendTime?: boolean;
  /**
   * The protocol's batch bytes. The stamp hook may patch them in place. The log may keep a view of
   * them until the append settles and never after: then the caller may reuse the buffer (request
   * frames from the buffer pool go back to it).
   */
  payload: Buffer;
  /**
   * Called synchronously once the base offset is assigned and before the bytes are written, so
   * the front-end can patch the offset into its own bytes (Kafka baseOffset, Iggy stamping).
   * It must not change the payload's length. `appendTime` is in ms (the envelope's time);
   * `appendMicros` is the same moment in µs (floor(appendMicros / 1000) = appendTime), for
   * protocols that stamp µs (Iggy's base_timestamp).
   */
  stamp?: (payload: Buffer, baseOffset: number, appendTime: number, appendMicros: number) => void;
  /**
   * A CRC32C over payload[from..] that the front-end has already VERIFIED (Kafka's batch CRC
   * covers bytes 21..end). The log stores it instead of checksumming the payload again; the bytes
   * before `from` are checksummed by the log. Read after `stamp` runs, so a stamp that rewrites
   * bytes at or after `from` must update it. A wrong value makes the batch fail verification.
   */
  payloadCrc32c?: { from: number; value: number } | undefined;
}

export interface AppendResult {
  baseOffset: number;
  lastOffset: number;
  /** The broker time (ms) at which the batch was appended (Kafka LogAppendTime). */
  appendTime: number;
  /** Log start offset after the append (Kafka reports it in Produce responses). */
  logStartOffset: number;
}

/** A byte range of an open log file (see ReadOptions.fileSlicesMin). */
export interface FileSlice {
  readonly fd: number;
  readonly position: number;
  readonly length: number;
}

/**
 * Payload bytes a file-sliced StoredBatch still carries in `payload` (its first ones): enough for
 * an Iggy batch header and its first frame header (256 + 48), which a poll reads to decide whether
 * to send the batch as stored.
 */
export const fileSliceHeadBytes = 320;

/** A batch as read back. `payload` is a view into a buffer shared with neighbouring batches. */
export interface StoredBatch {
  format: BatchFormat;
  flags: number;
  baseOffset: number;
  /** baseOffset + recordCount - 1. */
  lastOffset: number;
  recordCount: number;
  firstTimestamp: number;
  maxTimestamp: number;
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  payload: Buffer;
  /**
   * Set only by reads with `fileSlicesMin`, for payloads at least that large: the whole payload is
   * this range of a segment file (kept open by the read's lease until it is released), and
   * `payload` holds only its first `fileSliceHeadBytes` bytes.
   */
  file?: FileSlice;
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

/** A record in protocol-neutral form: what transcoding and compaction work on. */
export interface NeutralRecord {
  offset: number;
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: Array<{ key: string; value: Buffer | null }>;
}

/**
 * What the log needs to know about a format to look inside its batches (compaction keeps the last
 * record per key). Front-ends register one per format in src/log/formats.ts.
 */
export interface BatchFormatCodec {
  format: BatchFormat;
  /** The records of a stored batch, with absolute offsets. Throws on a corrupt payload. */
  decode(batch: StoredBatch): NeutralRecord[];
  /**
   * The first `countMax` records at offsets >= `fromOffset` only, for a format whose batches may
   * hold very many records (an Iggy batch up to a million): the others are not decoded.
   */
  decodeRange?(batch: StoredBatch, fromOffset: number, countMax: number): NeutralRecord[];
  /**
   * How many records the batch holds, read from its head alone (the first fileSliceHeadBytes of
   * the payload, all a file-sliced batch carries), or null when the head does not say. Equal to
   * `batch.recordCount` (its offset span) means every offset of the batch holds a record; fewer,
   * that compaction removed some.
   */
  messageCount?(batch: StoredBatch): number | null;
  /**
   * Encodes records (offsets ascending, all >= baseOffset) into one payload of this format whose
   * base offset is `baseOffset`. Used to rewrite batches during compaction and to transcode.
   */
  encode(records: NeutralRecord[], baseOffset: number, template: StoredBatch): AppendRequest;
}

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
  append(request: AppendRequest): Promise<AppendResult>;
  /** Batches containing offsets >= `offset`, in order, up to the high watermark. */
  read(offset: number, options: ReadOptions): Promise<StoredBatch[]>;
  /**
   * `batch` (returned by read) with its whole payload: a file-sliced batch (`file`) is read from its
   * file, still open under the lease of the read that returned it, into `lease`'s buffers; any
   * other batch is returned as it is.
   */
  wholePayload(batch: StoredBatch, lease?: BufferLease): Promise<StoredBatch>;
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

/**
 * A lease of pooled buffers (BufferLease in buffer-pool.ts): buffers taken from it stay the
 * holder's until `release()`. The protocol framers take this shape so their codecs need not
 * depend on the pool.
 */
export interface PooledBufferLease {
  buffer(length: number): Buffer;
  release(): void;
}
