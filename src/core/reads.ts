// The read service: the one way a front-end reads a partition. A front-end opens a PartitionReader
// (the partition's log as it is now, kept for the whole request) and asks it for batches from an
// offset, within byte and record budgets, under an isolation level, in its own batch format; the
// answers are core types (stored bytes or file slices, transcoded buffers, the partition's
// offsets, aborted transactions). The edge cases are handled here once:
//
// - read_committed: reads end at the last stable offset; the aborted transactions are reported
//   (for clients that filter themselves) or their records and the markers passed over;
// - the log start moved by retention or DeleteRecords under a read: the read goes on from the new
//   start, as a read that came a moment later would have begun;
// - stretches of offsets compaction emptied: passed over with small reads;
// - a log replaced by a purge (or deleted) under a read: the read ends with what it has;
// - buffer leases (pooled buffers given back once the reply is written) and file slices;
// - a stored batch found corrupt is never served: the log ends a read before it (or fails it with
//   corrupt_batch); a file slice whose bytes fail their checksum when transcoding reads them is
//   checked by the log (PartitionLog.checkBatch) and answered with corrupt_batch.
//
// What each read serves (bytes, and records from batch headers) is counted per topic and
// protocol here, once for every front-end (read-metrics.ts).
//
// Long polls wait on append-waiters.ts; transcoding is in transcode.ts, large batches on worker
// threads (offload.ts).

import type { Broker } from './broker.js';
import type { Topic, TopicRef } from './catalog.js';
import { isQuartetError } from '../base/errors.js';
import { servedAsStored, type ServedRecords } from './transcode.js';
import { Transcoder } from './offload.js';
import { hiddenFromCommitted } from './txn-index.js';
import { BufferLease, leaseReleasedAfter } from '../base/buffer-pool.js';
import type { FormatRegistry } from '../log/formats.js';
import { BatchFlags, type BatchFormat, type FileSlice, type NeutralRecord, type PartitionLog, type ReadOptions, type StoredBatch } from '../log/types.js';
import { corruptBatchError } from '../log/integrity.js';
import type { TopicReadSeries } from './read-metrics.js';

export { transcodeWholeRecordsMax } from './transcode.js';

/** read_committed: up to the last stable offset, aborted transactions' records hidden or reported. */
export type Isolation = 'read_uncommitted' | 'read_committed';

export type ReadChunk = Buffer | FileSlice;

/** Byte budget of the read that looks past a stretch of offsets compaction emptied. */
export const gapReadBytes = 64 * 1024;
/** A records read's window covers at most this many offsets per wanted record. */
export const stretchMax = 1 << 20;

/** An aborted transaction as a reader's client filters it: its producer and first offset. */
export interface AbortedRange {
  producerId: number;
  firstOffset: number;
}

/**
 * Where a read of whole batches takes the last stable offset and the aborted transactions it
 * reports (the broker's transaction coordinator by default).
 */
export interface ReadTransactions {
  lastStableOffset(topic: TopicRef, partition: number): number;
  abortedTransactions(topic: TopicRef, partition: number, fromOffset: number, toOffset: number): readonly AbortedRange[];
}

/** A partition's offsets at one moment. */
export interface PartitionPosition {
  logStartOffset: number;
  /** The next offset to be assigned. */
  nextOffset: number;
  /** Offsets below it are readable. */
  highWatermark: number;
  /** The end of a read_committed read: min(first offset of the open transactions, high watermark). */
  lastStableOffset: number;
}

/** A read of whole batches (PartitionReader.readBatches). */
export interface BatchesRequest {
  offset: number;
  isolation: Isolation;
  format: BatchFormat;
  /** The batches' bytes at most (a budget of 0 or less reads nothing, unless firstBatchWhole). */
  bytesMax: number;
  /** The first batch is returned whatever its size (the rest still within bytesMax). */
  firstBatchWhole: boolean;
  /** Pooled buffers for the read, released by the caller once the bytes are sent. */
  lease?: BufferLease;
  /** With a lease: stored batches in `format` of at least this many bytes come back as file slices. */
  fileSlicesMin?: number;
  /** Default: the broker's transaction coordinator. */
  transactions?: ReadTransactions;
}

export interface BatchesRead {
  /** Taken before the read; its bounds (high watermark or last stable offset) end the read. */
  position: PartitionPosition;
  /** The offset lies outside [logStartOffset, nextOffset]: nothing was read. */
  outOfRange: boolean;
  /** One batch of `format` per stored batch, or null when nothing was read. */
  chunks: ReadChunk[] | null;
  bytes: number;
  /** read_committed: the aborted transactions from the offset on (none when nothing was read); null otherwise. */
  abortedTransactions: readonly AbortedRange[] | null;
  /** The read failed (chunks null): what it threw, for the caller's error table; null when it did not. */
  failure: { error: unknown } | null;
}

/** A read of exact records (PartitionReader.readRecords). */
export interface RecordsRequest {
  from: number;
  /** Only records below this offset (the caller's end: the last stable offset under read_committed). */
  end: number;
  recordsMax: number;
  bytesMax: number;
  format: BatchFormat;
  /**
   * read_committed passes over the aborted transactions' records (the reader cannot filter);
   * markers, which carry no records, are passed over under either.
   */
  isolation: Isolation;
  /**
   * read_uncommitted only: markers (control batches) are returned too, for a reader that gets the
   * raw log (Cursus): a marker of the reader's format as any other batch of it; one of another
   * format carries no records and is passed over.
   */
  markers?: boolean;
  /** A connection's "after the reply is written" hook: reads go into pooled buffers handed back then. */
  afterWrite?: (release: () => void) => void;
  /** With afterWrite: stored batches served as they are, of at least this many bytes, come back as file slices. */
  fileSlicesMin?: number;
  /**
   * A scan (a time lookup): the batches `keep` refuses are passed over, and the read goes on up to
   * `end` until it has recordsMax records, passing over at most `bytesMax` of stored batches.
   */
  scan?: { keep(batch: StoredBatch): boolean; bytesMax: number };
  /**
   * The records come back decoded (RecordsRead.decoded, with their offsets) instead of as batches
   * of `format`: for a reader that hands out one record at a time (queue groups). The records
   * may be views of the read's buffers: no scan, no afterWrite.
   */
  decode?: boolean;
}

export interface RecordsRead {
  chunks: ReadChunk[];
  records: number;
  bytes: number;
  /** The offset of the last record returned, -1 when none. */
  lastOffset: number;
  /**
   * The last offset passed over without returning it (markers, aborted records, offsets
   * compaction emptied), -1 when none; not tracked by a scan.
   */
  passedTo: number;
  /** Where a read that continues this one starts. */
  next: number;
  /** Read up to `end` (not stopped by a byte or scan budget, nor a purge). */
  reachedEnd: boolean;
  /** With RecordsRequest.decode: the records, ascending by offset (chunks is then empty). */
  decoded?: NeutralRecord[];
}

/** Where the newest records below an offset start (PartitionReader.newestStart). */
export interface NewestStartRequest {
  /** Records below this offset. */
  below: number;
  count: number;
  isolation: Isolation;
  /** Stored batches passed over at most; past that the answer is where the scan got to. */
  scanBytesMax: number;
  fileSlicesMin?: number;
}

export class ReadService {
  constructor(
    private readonly broker: Broker,
    readonly formats: FormatRegistry,
    private readonly transcoder: Transcoder = new Transcoder(formats),
  ) {}

  /** A reader of the partition's log as it is now; throws unknown_topic / unknown_partition. */
  open(topic: Topic, partition: number): PartitionReader {
    const log = this.broker.partition(topic, partition);
    return new PartitionReader(this.broker, this.formats, this.transcoder, topic, partition, log, this.broker.readSeries(topic));
  }

  /** open() once a purge under way (which replaces the topic's logs) has finished. */
  async openSettled(topic: Topic, partition: number): Promise<PartitionReader> {
    const purging = this.broker.purgeInProgress(topic);
    if (purging !== undefined) await purging;
    return this.open(topic, partition);
  }
}

/** One partition's log, as it was when the reader was opened (ReadService.open). */
export class PartitionReader {
  constructor(
    private readonly broker: Broker,
    private readonly formats: FormatRegistry,
    private readonly transcoder: Transcoder,
    readonly topic: Topic,
    readonly partition: number,
    private readonly log: PartitionLog,
    /** Where what the reader serves is counted (bytes and records read, per topic and protocol). */
    private readonly served: TopicReadSeries,
  ) {}

  /** Closed and not replaced (a purge that could not open the new log; the broker closing). */
  isClosed(): boolean {
    return this.log.isClosed();
  }

  /** Whether the reader's log is still the partition's (a purge replaces it, a deletion removes it). */
  isCurrentLog(): boolean {
    return this.broker.isCurrentLog(this.topic, this.partition, this.log);
  }

  /** isCurrentLog, and no purge under way about to replace it. */
  isCurrent(): boolean {
    return this.purgeInProgress() === undefined && this.isCurrentLog();
  }

  /** Settles once a purge of the topic under way has replaced its logs; undefined when none is. */
  purgeInProgress(): Promise<void> | undefined {
    return this.broker.purgeInProgress(this.topic);
  }

  /** Calls `listener` after each append becomes readable and once when the log closes (PartitionLog.onAppend). */
  onAppend(listener: () => void): () => void {
    return this.log.onAppend(listener);
  }

  /** The log's start offset now (retention and DeleteRecords move it). */
  logStartOffset(): number {
    return this.log.stats().logStartOffset;
  }

  position(transactions: ReadTransactions = this.broker.transactions): PartitionPosition {
    const stats = this.log.stats();
    return {
      logStartOffset: stats.logStartOffset,
      nextOffset: stats.nextOffset,
      highWatermark: stats.highWatermark,
      lastStableOffset: transactions.lastStableOffset(this.topic, this.partition),
    };
  }

  /** The first offset of the first batch whose newest record time (ms) is at or after `timestamp`, or null. */
  offsetForTimestamp(timestamp: number): Promise<number | null> {
    return this.log.offsetForTimestamp(timestamp);
  }

  /** The offset of the record with the greatest timestamp, with that timestamp; null if empty. */
  maxTimestampOffset(): Promise<{ offset: number; timestamp: number } | null> {
    return this.log.maxTimestampOffset();
  }

  /**
   * The first record at or after `timestamp`: its offset and timestamp, or null. The batch is found
   * through the log's time index, then decoded for the exact record (a cold path), on a worker
   * when its records decode to many bytes (Transcoder.recordAtTimestamp).
   */
  async recordAtTimestamp(timestamp: number): Promise<{ offset: number; timestamp: number } | null> {
    let from = await this.log.offsetForTimestamp(timestamp);
    while (from !== null) {
      const batches = await this.log.read(from, { maxBytes: 1 });
      const batch = batches[0];
      if (batch === undefined) return null;
      // A batch whose records decode to many bytes is searched on a worker (Transcoder.recordAtTimestamp).
      const found = this.transcoder.recordAtTimestamp(batch, from, timestamp);
      const record = found instanceof Promise ? await found : found;
      if (record !== null) return record;
      // Batches are indexed by maxTimestamp; a later batch may still hold a match.
      from = batch.lastOffset + 1;
      if (from >= this.log.stats().highWatermark) return null;
    }
    return null;
  }

  /**
   * Whole batches from `offset`, in one read of the log below the high watermark (the last stable
   * offset under read_committed), each as one batch of `format` (wholeBatchAs); stops before the
   * batch that would pass bytesMax (the first goes in when firstBatchWhole). The reader's client
   * skips the records below its offset and, under read_committed, filters the aborted
   * transactions reported. A large batch of another format is transcoded from `offset`, about
   * bytesMax of it.
   */
  async readBatches(request: BatchesRequest): Promise<BatchesRead> {
    const { offset, format } = request;
    const transactions = request.transactions ?? this.broker.transactions;
    const committed = request.isolation === 'read_committed';
    const position = this.position(transactions);
    if (offset < position.logStartOffset || offset > position.nextOffset) {
      return { position, outOfRange: true, chunks: null, bytes: 0, abortedTransactions: committed ? [] : null, failure: null };
    }
    const end = committed ? position.lastStableOffset : position.highWatermark;
    const budget = request.bytesMax;
    let chunks: ReadChunk[] | null = null;
    let records = 0;
    let failure: { error: unknown } | null = null;
    if (offset < end && (budget > 0 || request.firstBatchWhole)) {
      try {
        const lease = request.lease;
        const options: ReadOptions = {
          maxBytes: Math.max(budget, 1),
          maxOffset: end,
          ...(lease ? { lease } : {}),
          ...(lease && request.fileSlicesMin !== undefined ? { fileSlicesMin: request.fileSlicesMin } : {}),
          ...(lease ? this.transcoder.sliceOptions(format) : {}),
        };
        const batches = await this.log.read(offset, options);
        // Large batches of another format are read from their slice, to be transcoded.
        for (let i = 0; i < batches.length; i++) {
          const b = batches[i]!;
          // (A worker reads the ones it transcodes itself: Transcoder.offloads.)
          if (b.file !== undefined && b.format !== format && !this.transcoder.offloads(format, b)) batches[i] = await this.log.wholePayload(b, options.lease);
        }
        ({ chunks, records } = await this.joinBatches(batches, format, request.firstBatchWhole ? Infinity : budget, offset, Math.max(budget, 1)));
      } catch (error) {
        failure = { error: await this.corruptOr(error) };
      }
    }
    let bytes = 0;
    for (const chunk of chunks ?? []) bytes += chunk.length;
    if (chunks !== null) this.served.count(format, bytes, records);
    const abortedTransactions = committed ? (bytes > 0 ? transactions.abortedTransactions(this.topic, this.partition, offset, offset + Number.MAX_SAFE_INTEGER) : []) : null;
    return { position, outOfRange: false, chunks, bytes, abortedTransactions, failure };
  }

  /**
   * What a read that failed answers: corrupt_batch when the failure came from a file slice whose
   * bytes the log confirms corrupt (a worker or wholePayload found them so), else the failure.
   */
  private async corruptOr(error: unknown, batches?: readonly StoredBatch[]): Promise<unknown> {
    if (isCorrupt(error)) return error;
    for (const batch of batches ?? []) {
      if (batch.file === undefined) continue;
      const corrupt = await this.log.checkBatch(batch).catch(() => null);
      if (corrupt !== null) return corruptBatchError(corrupt);
    }
    return error;
  }

  /**
   * The batches as `format`, stopping before the batch that would pass `limit` (the first always
   * goes in; null: none), and the records they hold (from their headers; markers carry none).
   */
  private async joinBatches(batches: StoredBatch[], format: BatchFormat, limit: number, fromOffset: number, budget: number): Promise<{ chunks: ReadChunk[] | null; records: number }> {
    const parts: ReadChunk[] = [];
    let total = 0;
    let records = 0;
    for (const batch of batches) {
      // A marker of another format goes out as one of the reader's (its client filters with it).
      const marker = (batch.flags & BatchFlags.control) !== 0 && batch.format !== format ? this.broker.markerAs(format, batch, this.topic.name, this.partition) : null;
      // One at a time: a fetch holds one worker at most, and stops transcoding at its limit.
      let bytes: Buffer | FileSlice | null;
      try {
        const transcoded = marker ?? this.transcoder.wholeBatchAs(format, batch, fromOffset, budget);
        bytes = transcoded instanceof Promise ? await transcoded : transcoded;
      } catch (error) {
        throw await this.corruptOr(error, [batch]);
      }
      if (bytes === null) continue;
      if (parts.length > 0 && total + bytes.length > limit) break;
      if (parts.length === 0 && bytes.length > limit) break;
      parts.push(bytes);
      total += bytes.length;
      if ((batch.flags & BatchFlags.control) === 0) records += batch.recordCount;
    }
    return { chunks: parts.length === 0 ? null : parts, records };
  }

  /**
   * Which of `stored` (read from `from` on) a read_committed reader must not see: markers and the
   * records of aborted transactions, looked up only for a read with transactional records.
   */
  private hiddenIn(stored: StoredBatch[], from: number): (batch: StoredBatch) => boolean {
    const transactional = stored.some((b) => (b.flags & (BatchFlags.transactional | BatchFlags.control)) === BatchFlags.transactional);
    return hiddenFromCommitted(transactional ? this.broker.transactions.abortedTransactions(this.topic, this.partition, from, stored[stored.length - 1]!.lastOffset + 1) : []);
  }

  /**
   * The first recordsMax records at or after `from` below `end`, in at most bytesMax bytes, as
   * batches of `format` (stored ones as they are, others cut or transcoded: recordsOf).
   *
   * Each read asks the log for as many offsets as records are still wanted (the log stops at the
   * first batch past that), so a dense log is read no further than the answer; where offsets hold
   * no record the reader sees (transaction markers, aborted records, records compaction removed)
   * the read passes over them and goes on, up to `end`, each read covering twice the offsets per
   * wanted record of the one before (a sparse log takes a few reads, not one per record). A scan
   * passes over the batches it does not keep on the way, so it reads on until it has recordsMax.
   */
  async readRecords(request: RecordsRequest): Promise<RecordsRead> {
    const { end, recordsMax: want, bytesMax, format, scan } = request;
    const chunks: ReadChunk[] = [];
    const decoded: NeutralRecord[] | undefined = request.decode === true ? [] : undefined;
    let records = 0;
    let bytes = 0;
    let next = request.from;
    let lastOffset = -1;
    let passedTo = -1;
    // What a read may pass over besides what it returns: a scan passes over the batches it does not keep.
    let scanned = 0;
    const scanBytesMax = scan?.bytesMax ?? Infinity;
    const slices = {
      ...(request.afterWrite !== undefined && request.fileSlicesMin !== undefined ? { fileSlicesMin: request.fileSlicesMin } : {}),
      // Batches a worker transcodes are read there (decoded records are wanted here, whole).
      ...(request.afterWrite !== undefined && decoded === undefined ? this.transcoder.sliceOptions(format) : {}),
    };
    let stretch = 1;
    let stoppedAtCorrupt = false;
    const readEnd = (): number => (scan === undefined ? Math.min(end, next + (want - records) * stretch) : end);
    while (next < end && bytes < bytesMax && records < want && scanned < scanBytesMax) {
      // A lease per read: a read the answer takes nothing from (a scan passing over older records)
      // goes back to the pool at once instead of after the reply.
      const lease = leaseReleasedAfter(request.afterWrite);
      const kept = records;
      // The log the reader began with: a purge that replaces it meanwhile ends the read with what it has.
      let stored: StoredBatch[];
      try {
        const read = (maxOffset: number, maxBytes: number) => this.log.read(next, { maxBytes, maxOffset, ...(lease ? { lease } : {}), ...slices });
        const window = readEnd();
        stored = await read(window, bytesMax - bytes);
        // Nothing in the window (compaction emptied it): the first batch beyond it, which the log
        // returns whole whatever the byte budget, so the read stays small however far it lies.
        if (stored.length === 0 && window < end) stored = await read(end, Math.min(gapReadBytes, bytesMax - bytes));
      } catch (err) {
        lease?.release();
        if (!this.isCurrent()) break;
        // The records before a corrupt batch are served; the next read fails at it.
        if (records > 0 && isCorrupt(err)) break;
        // DeleteRecords or retention moved the log's start past the read: on from there, as a
        // read that came a moment later would have begun.
        const logStart = this.log.stats().logStartOffset;
        if (isQuartetError(err) && err.code === 'offset_out_of_range' && logStart > next) {
          next = logStart;
          continue;
        }
        throw err;
      }
      // Nothing more below `end`.
      if (stored.length === 0) {
        next = end;
        break;
      }
      const hidden = request.isolation === 'read_committed' ? this.hiddenIn(stored, next) : request.markers === true ? hiddenFromNone : hiddenFromUncommitted;
      for (let b of stored) {
        if (b.lastOffset < next) continue;
        const size = b.file?.length ?? b.payload.length;
        if (hidden(b)) {
          next = b.lastOffset + 1;
          if (scan === undefined) {
            // A read passes over any amount of them, up to `end` (a cap on what it passes over
            // would stop a consumer behind a large aborted transaction for good).
            passedTo = b.lastOffset;
          } else {
            scanned += size;
          }
          if (scanned >= scanBytesMax) break;
          continue;
        }
        if (scan !== undefined) {
          scanned += size;
          if (!scan.keep(b)) {
            next = b.lastOffset + 1;
            if (scanned >= scanBytesMax) break;
            continue;
          }
        }
        const wanted = want - records;
        let piece: ServedRecords | null;
        try {
          if (decoded !== undefined) {
            piece = await this.decodedPiece(b, next, end, wanted, decoded);
          } else {
            // Cut or transcoded: that needs its bytes, read from the slice (its segment is pinned).
            // (A worker reads the ones it transcodes itself: Transcoder.offloads.)
            if (b.file !== undefined && !servedAsStored(this.formats, format, b, next, end, wanted) && !this.transcoder.offloads(format, b)) b = await this.log.wholePayload(b, lease);
            const transcoded = this.transcoder.recordsOf(format, b, next, end, wanted);
            piece = transcoded instanceof Promise ? await transcoded : transcoded;
          }
        } catch (error) {
          const failure = await this.corruptOr(error, [b]);
          // The records before a corrupt batch are served; the next read fails at it.
          if (records > 0 && isCorrupt(failure)) {
            stoppedAtCorrupt = true;
            break;
          }
          if (records === kept) lease?.release();
          throw failure;
        }
        next = b.lastOffset + 1;
        // The batch's offsets past its last record are empty (compaction): passed over, unless
        // the read stopped inside the batch at recordsMax.
        if (scan === undefined && (piece === null || piece.count < wanted)) passedTo = b.lastOffset;
        if (piece === null || piece.count === 0) continue;
        if (decoded !== undefined) bytes += size;
        for (const c of piece.chunks) {
          chunks.push(c);
          bytes += c.length;
        }
        records += piece.count;
        lastOffset = piece.lastOffset;
        if (records >= want || scanned >= scanBytesMax) break;
      }
      if (records === kept) lease?.release();
      if (stoppedAtCorrupt) break;
      if (records < want) stretch = Math.min(stretch * 2, stretchMax);
    }
    this.served.count(format, bytes, records);
    return { chunks, records, bytes, lastOffset, passedTo, next, reachedEnd: next >= end, ...(decoded !== undefined ? { decoded } : {}) };
  }

  /**
   * RecordsRequest.decode: the records of `batch` in [from, end), at most countMax, appended to
   * `into`; their size counts as the batch's stored bytes. A batch without a codec has none.
   */
  private async decodedPiece(batch: StoredBatch, from: number, end: number, countMax: number, into: NeutralRecord[]): Promise<ServedRecords | null> {
    if ((batch.flags & BatchFlags.control) !== 0) return null;
    const codec = this.formats.get(batch.format);
    if (codec === undefined) return null;
    const whole = batch.file !== undefined ? await this.log.wholePayload(batch) : batch;
    const all = codec.decodeRange !== undefined ? codec.decodeRange(whole, from, countMax) : codec.decode(whole);
    const kept = all.filter((r) => r.offset >= from && r.offset < end).slice(0, countMax);
    if (kept.length === 0) return null;
    into.push(...kept);
    return { chunks: [], count: kept.length, lastOffset: kept[kept.length - 1]!.offset };
  }

  /**
   * Where the newest `count` records below `below` start: the offset of the oldest of them, or,
   * when the log holds fewer, its start. It scans back from `below` in windows, each going back
   * twice as far per missing record as the one before (as readRecords reads forward). A batch
   * whose every offset holds a record is counted from its head (BatchFormatCodec.messageCount): a
   * large one comes back as a file slice and is read no further; the others are decoded. The scan
   * passes over at most scanBytesMax of stored batches (reads of up to gapReadBytes); past that,
   * or when a purge replaces the log, it answers where it got to.
   */
  async newestStart(request: NewestStartRequest): Promise<number> {
    const { scanBytesMax } = request;
    let hi = request.below;
    let missing = request.count;
    let scanned = 0;
    let stretch = 1;
    while (scanned < scanBytesMax) {
      // Retention or DeleteRecords may move the log's start while the scan runs.
      const logStart = this.log.stats().logStartOffset;
      if (hi <= logStart) break;
      const lo = Math.max(logStart, hi - missing * stretch);
      // The records in [lo, hi), as ascending runs of offsets [from, to].
      const runs: Array<[number, number]> = [];
      const lease = new BufferLease();
      let next = lo;
      try {
        while (next < hi && scanned < scanBytesMax) {
          const slices = request.fileSlicesMin !== undefined ? { fileSlicesMin: request.fileSlicesMin } : {};
          const stored = await this.log.read(next, { maxBytes: Math.max(1, Math.min(gapReadBytes, scanBytesMax - scanned)), maxOffset: hi, lease, ...slices });
          if (stored.length === 0) {
            next = hi;
            break;
          }
          const hidden = request.isolation === 'read_committed' ? this.hiddenIn(stored, next) : hiddenFromUncommitted;
          for (const b of stored) {
            if (b.lastOffset < next) continue;
            next = b.lastOffset + 1;
            scanned += b.file?.length ?? b.payload.length;
            if (hidden(b)) continue;
            const codec = this.formats.get(b.format);
            // A batch of a format without a codec is not served either (recordsOf).
            if (codec === undefined) continue;
            if (codec.messageCount?.(b) === b.recordCount) {
              const from = Math.max(b.baseOffset, lo);
              const to = Math.min(b.lastOffset, hi - 1);
              if (from <= to) runs.push([from, to]);
              continue;
            }
            const whole = await this.log.wholePayload(b, lease);
            for (const r of codec.decode(whole)) if (r.offset >= lo && r.offset < hi) runs.push([r.offset, r.offset]);
          }
        }
      } catch (err) {
        if (!this.isCurrent()) return hi;
        // The log's start moved past the read: the window again, from the new start.
        if (isQuartetError(err) && err.code === 'offset_out_of_range' && this.log.stats().logStartOffset > next) continue;
        throw err;
      } finally {
        lease.release();
      }
      // The scan ran out of budget before hi: what it saw is not the newest, start where it got to.
      if (next < hi) break;
      // The newest `missing` of them, if there are that many: the start is the oldest of those.
      for (let k = runs.length - 1; k >= 0; k--) {
        const [from, to] = runs[k]!;
        const n = to - from + 1;
        if (n >= missing) return to - missing + 1;
        missing -= n;
      }
      hi = lo;
      stretch = Math.min(stretch * 2, stretchMax);
    }
    return hi;
  }
}

function isCorrupt(error: unknown): boolean {
  return isQuartetError(error) && error.code === 'corrupt_batch';
}

/** What a read_uncommitted reader does not see either: markers, which carry no records. */
const hiddenFromUncommitted = (batch: StoredBatch): boolean => (batch.flags & BatchFlags.control) !== 0;

/** A reader of the raw log (RecordsRequest.markers) is shown every batch. */
const hiddenFromNone = (): boolean => false;
