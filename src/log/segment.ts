// One segment of a partition: `<base>.log` (envelopes back to back), `<base>.index` and
// `<base>.timeindex` (sparse indexes), where <base> is the segment's first offset in 20 digits.
// The segment owns its three file descriptors; readers pin it with acquire/release so that a
// segment deleted by retention or replaced by compaction is closed only once nobody reads it.

import type { DirectWriteGate } from './direct-write.js';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Logger } from '../base/logger.js';
import { decodeEnvelopeHeader, envelopeHeaderBytes, type EnvelopeHeader } from './envelope.js';
import type { LogFileSystem } from './fs.js';
import { OffsetIndex, offsetIndexEntryBytes } from './offset-index.js';
import type { BufferLease } from '../base/buffer-pool.js';
import { readFully, scanEnvelopes, type ScanStop } from './scan.js';
import { TimeIndex, timeIndexEntryBytes } from './time-index.js';

const baseDigits = 20;
const always = (): boolean => true;
/** Index bytes held in memory before they are written out (bounds memory and rebuild work). */
const indexFlushBytes = 64 * 1024;
/** Unsynced bytes, and their age, after which startWriteback asks the kernel to write them out. */
export const writebackBytes = 8 * 1024 * 1024;
export const writebackDelayMs = 250;
/** Once a streak of writes has been hinted, its next hints wait only this long (startWriteback). */
export const writebackStreakDelayMs = 50;
/** Write-back hints end at a multiple of this below the end of the data (startWriteback). */
export const writebackAlignBytes = 64 * 1024;
/**
 * Reservation ahead of the end (Segment.reserveAhead): once a segment holds reserveAfterBytes,
 * the log keeps reserveAheadBytes of disk blocks reserved past its end.
 */
export const reserveAfterBytes = 8 * 1024 * 1024;
export const reserveAheadBytes = 32 * 1024 * 1024;
/** Write-back requests in flight in the process at most (each may hold a thread-pool thread). */
const writebacksInFlightMax = 1;
let writebacksInFlight = 0;

export function segmentStem(baseOffset: number): string {
  return String(baseOffset).padStart(baseDigits, '0');
}

export interface SegmentPaths {
  log: string;
  index: string;
  timeIndex: string;
}

/** The segment's file paths; `suffix` names the temporary files compaction writes ('.cleaned'). */
export function segmentPaths(dir: string, baseOffset: number, suffix = ''): SegmentPaths {
  const stem = join(dir, segmentStem(baseOffset));
  return { log: `${stem}.log${suffix}`, index: `${stem}.index${suffix}`, timeIndex: `${stem}.timeindex${suffix}` };
}

/** Suffix of the files a compaction pass writes before renaming them over the segment. */
export const cleanedSuffix = '.cleaned';

/** The base offset of a `<20 digits>.log` file name, or null for any other name. */
export function parseSegmentLogName(name: string): number | null {
  const match = /^(\d{20})\.log$/.exec(name);
  return match ? Number(match[1]) : null;
}

/** The header fields the segment's bookkeeping needs for one batch. */
export interface BatchMeta {
  baseOffset: number;
  recordCount: number;
  maxTimestamp: number;
}

/** What a failed write rolls back to. */
export interface SegmentState {
  size: number;
  nextOffset: number;
  maxTimestamp: number | null;
  offsetOfMaxTimestamp: number;
  bytesSinceIndexEntry: number;
  offsetIndexCount: number;
  timeIndexCount: number;
  firstAppendTime: number | null;
}

export interface RecoveryReport {
  truncatedBytes: number;
  problem: string | null;
  rebuiltIndexes: boolean;
}

export class Segment {
  /** Bytes of whole, accepted envelopes: the write position of the next batch. */
  size = 0;
  /** Where the next startWriteback range begins (see startWriteback). */
  private writebackFrom = 0;
  /** When the oldest byte not yet covered by a startWriteback request was written. */
  private writebackPendingSinceMs: number | null = null;
  /** Whether the current streak of writes has been hinted (see startWriteback). */
  private writebackStreak = false;
  /** When startWriteback was last called (after a write round). */
  private lastWriteMs: number | null = null;
  /** One past the last offset of the last batch (the base offset while empty). */
  nextOffset: number;
  maxTimestamp: number | null = null;
  /** Last offset of the batch with the greatest timestamp. */
  offsetOfMaxTimestamp = -1;
  bytesSinceIndexEntry = 0;
  /** Clock time of the first append (segmentMs); recovery uses the open time. */
  firstAppendTime: number | null = null;
  readonly offsetIndex: OffsetIndex;
  readonly timeIndex: TimeIndex;
  /** Index entries already in the files; the rest wait in memory (see flushIndexes). */
  private offsetIndexFileCount = 0;
  private timeIndexFileCount = 0;
  private refs = 1;
  private retired = false;
  /** Disk blocks are known reserved up to this file position (preallocation, reserveAhead). */
  private reservedTo = 0;
  /** The reservation request in flight, if any. */
  private reservation: Promise<void> | null = null;
  /** No more reservations: one failed (no addon, no fallocate, a full disk), or the segment is sealed. */
  private reserveStopped = false;
  /** '' for a live segment; cleanedSuffix while compaction writes its replacement. */
  private suffix = '';

  private constructor(
    private readonly fsys: LogFileSystem,
    readonly dir: string,
    readonly baseOffset: number,
    readonly logFd: number,
    private readonly indexFd: number,
    private readonly timeIndexFd: number,
    private readonly indexIntervalBytes: number,
  ) {
    this.nextOffset = baseOffset;
    this.offsetIndex = new OffsetIndex(baseOffset);
    this.timeIndex = new TimeIndex(baseOffset);
  }

  get paths(): SegmentPaths {
    return segmentPaths(this.dir, this.baseOffset, this.suffix);
  }

  get isEmpty(): boolean {
    return this.size === 0;
  }

  /**
   * Creates an empty segment (truncating any leftover files of the same name). On failure the
   * files it created are unlinked again (best effort): an empty `<base>.log` left behind by a
   * failed roll would otherwise look, at the next open, like an active segment starting below
   * data the old segment goes on to receive. Recovery removes such a file if it survives anyway.
   * `syncDir` false leaves the directory fsync that makes the names durable to the caller
   * (WritePath.rollActive, file-log-writes.ts, under 'interval' does it in the background: on ext4
   * in ordered mode, a directory fsync commits the journal, which first writes out every file's
   * dirty data).
   */
  static async create(fsys: LogFileSystem, dir: string, baseOffset: number, indexIntervalBytes: number, suffix = '', preallocateBytes = 0, syncDir = true): Promise<Segment> {
    const paths = segmentPaths(dir, baseOffset, suffix);
    const files = [paths.log, paths.index, paths.timeIndex];
    const fds: number[] = [];
    try {
      for (const path of files) fds.push(await fsys.open(path, 'w+'));
      if (syncDir) await fsys.fsyncDir(dir);
    } catch (error) {
      await Promise.allSettled(fds.map((fd) => fsys.close(fd)));
      await unlinkQuietly(fsys, dir, files);
      throw error;
    }
    const segment = new Segment(fsys, dir, baseOffset, fds[0]!, fds[1]!, fds[2]!, indexIntervalBytes);
    segment.suffix = suffix;
    // Best effort (LogConfig.preallocate): blocks reserved now spare the writeback of later
    // appends the block allocation (see reserveAhead).
    if (preallocateBytes > 0 && (await fsys.preallocate(fds[0]!, 0, preallocateBytes))) segment.reservedTo = preallocateBytes;
    return segment;
  }

  /**
   * Installs a compacted replacement (written under cleanedSuffix and synced) in place of the
   * segment's files. The old indexes go first: a crash before the .log rename leaves the old log
   * with no indexes (rebuilt at open), a crash after it leaves the new log with no indexes or the
   * new ones; never a log with another log's indexes.
   */
  async installOver(): Promise<void> {
    assert.equal(this.suffix, cleanedSuffix, 'only a cleaned segment is installed');
    const live = segmentPaths(this.dir, this.baseOffset);
    const cleaned = this.paths;
    for (const path of [live.index, live.timeIndex]) {
      if (await this.fsys.exists(path)) await this.fsys.unlink(path);
    }
    await this.fsys.rename(cleaned.log, live.log);
    await this.fsys.rename(cleaned.index, live.index);
    await this.fsys.rename(cleaned.timeIndex, live.timeIndex);
    await this.fsys.fsyncDir(this.dir);
    this.suffix = '';
  }

  /**
   * Opens an existing segment and recovers it. With `trustIndexes`, loads the indexes, checks
   * them against the data and re-validates only the data after the last offset-index entry;
   * without (the active segment after an unclean shutdown, or indexes that fail the check),
   * validates every envelope from position 0 and rebuilds both indexes. A torn or corrupt tail is
   * truncated at the first bad envelope.
   */
  static async open(
    fsys: LogFileSystem,
    dir: string,
    baseOffset: number,
    indexIntervalBytes: number,
    trustIndexes: boolean,
    logger: Logger,
  ): Promise<{ segment: Segment; report: RecoveryReport }> {
    const paths = segmentPaths(dir, baseOffset);
    const logFd = await fsys.open(paths.log, 'r+');
    const fileBytes = (await fsys.fstat(logFd)).size;
    const loaded = trustIndexes ? await loadIndexes(fsys, paths, baseOffset, fileBytes) : null;
    const indexFd = await fsys.open(paths.index, (await fsys.exists(paths.index)) ? 'r+' : 'w+');
    const timeIndexFd = await fsys.open(paths.timeIndex, (await fsys.exists(paths.timeIndex)) ? 'r+' : 'w+');
    const segment = new Segment(fsys, dir, baseOffset, logFd, indexFd, timeIndexFd, indexIntervalBytes);
    let report = await segment.recoverFrom(loaded, fileBytes);
    if (report === 'indexes rejected') {
      logger.warn('segment indexes or data inconsistent; rescanning the segment from the start', { file: paths.log });
      segment.resetState();
      report = (await segment.recoverFrom(null, fileBytes)) as RecoveryReport;
    }
    if (report.truncatedBytes > 0) {
      logger.warn('truncated a torn or corrupt segment tail', {
        file: paths.log,
        position: segment.size,
        bytes: report.truncatedBytes,
        problem: report.problem,
      });
    }
    return { segment, report };
  }

  /** Scans from the last trusted index entry (or 0), re-indexes, truncates a bad tail. */
  private async recoverFrom(loaded: { offsetIndex: OffsetIndex; timeIndex: TimeIndex } | null, fileBytes: number): Promise<RecoveryReport | 'indexes rejected'> {
    let start = 0;
    let skipIndexAt = -1;
    if (loaded !== null) {
      const last = loaded.offsetIndex.last();
      if (last !== null) {
        const header = await this.headerAt(last.position, fileBytes);
        if (header === null || header.baseOffset !== last.offset) return 'indexes rejected';
        start = last.position;
        skipIndexAt = last.position;
        this.nextOffset = last.offset;
      }
      this.adoptIndexes(loaded.offsetIndex, loaded.timeIndex);
    }
    const entriesBefore = { offsets: this.offsetIndex.entryCount, times: this.timeIndex.entryCount };
    this.size = start;
    const stopped: { at: ScanStop | null } = { at: null };
    const scan = scanEnvelopes(this.fsys, this.logFd, start, fileBytes, { verifyChecksum: true, minOffset: this.nextOffset }, (s) => (stopped.at = s));
    for await (const { header, position } of scan) {
      this.noteBatch(header, position, envelopeHeaderBytes + header.payloadLength, position === skipIndexAt);
    }
    if (loaded !== null) {
      // Damage inside trusted data, or a time index ahead of it: redo the segment from scratch.
      const lastTime = this.timeIndex.last();
      if (stopped.at !== null || (lastTime !== null && lastTime.offset >= this.nextOffset)) return 'indexes rejected';
    }
    const truncatedBytes = fileBytes - this.size;
    if (truncatedBytes > 0) {
      await this.fsys.ftruncate(this.logFd, this.size);
      await this.fsys.fdatasync(this.logFd);
    }
    const changed = loaded === null || truncatedBytes > 0 || this.offsetIndex.entryCount !== entriesBefore.offsets || this.timeIndex.entryCount !== entriesBefore.times;
    if (changed) await this.rewriteIndexFiles();
    this.offsetIndexFileCount = this.offsetIndex.entryCount;
    this.timeIndexFileCount = this.timeIndex.entryCount;
    const problem = stopped.at ? `${stopped.at.problem} at ${stopped.at.position}` : null;
    return { truncatedBytes, problem, rebuiltIndexes: loaded === null };
  }

  private adoptIndexes(offsetIndex: OffsetIndex, timeIndex: TimeIndex): void {
    for (let i = 0; i < offsetIndex.entryCount; i++) {
      const e = offsetIndex.entryAt(i);
      this.offsetIndex.append(e.offset, e.position);
    }
    for (let i = 0; i < timeIndex.entryCount; i++) {
      const e = timeIndex.entryAt(i);
      this.timeIndex.maybeAppend(e.timestamp, e.offset);
    }
    const lastTime = timeIndex.last();
    if (lastTime !== null) {
      this.maxTimestamp = lastTime.timestamp;
      this.offsetOfMaxTimestamp = lastTime.offset;
    }
  }

  private resetState(): void {
    this.size = 0;
    this.nextOffset = this.baseOffset;
    this.maxTimestamp = null;
    this.offsetOfMaxTimestamp = -1;
    this.bytesSinceIndexEntry = 0;
    this.offsetIndex.truncateToCount(0);
    this.timeIndex.truncateToCount(0);
  }

  private async headerAt(position: number, fileBytes: number): Promise<EnvelopeHeader | null> {
    if (position + envelopeHeaderBytes > fileBytes) return null;
    const buf = Buffer.allocUnsafe(envelopeHeaderBytes);
    if ((await readFully(this.fsys, this.logFd, buf, position)) < envelopeHeaderBytes) return null;
    const header = decodeEnvelopeHeader(buf);
    return typeof header === 'string' ? null : header;
  }

  private async rewriteIndexFiles(): Promise<void> {
    const offsets = this.offsetIndex.encode();
    const times = this.timeIndex.encode();
    await this.fsys.ftruncate(this.indexFd, 0);
    await this.fsys.ftruncate(this.timeIndexFd, 0);
    if (offsets.length > 0) await this.fsys.writev(this.indexFd, [offsets], 0);
    if (times.length > 0) await this.fsys.writev(this.timeIndexFd, [times], 0);
    this.offsetIndexFileCount = this.offsetIndex.entryCount;
    this.timeIndexFileCount = this.timeIndex.entryCount;
  }

  /**
   * Writes index entries still held only in memory. Index files are written lazily — when this
   * many bytes are pending, at seal and at close — not on every append: recovery rebuilds the
   * active segment's indexes after an unclean stop anyway, so per-append index writes would buy
   * nothing but a second syscall per round.
   */
  async flushIndexes(): Promise<void> {
    const offsetCount = this.offsetIndex.entryCount;
    const timeCount = this.timeIndex.entryCount;
    if (offsetCount > this.offsetIndexFileCount) {
      const bytes = this.offsetIndex.encode(this.offsetIndexFileCount, offsetCount);
      await this.fsys.writev(this.indexFd, [bytes], this.offsetIndexFileCount * offsetIndexEntryBytes);
      this.offsetIndexFileCount = offsetCount;
    }
    if (timeCount > this.timeIndexFileCount) {
      const bytes = this.timeIndex.encode(this.timeIndexFileCount, timeCount);
      await this.fsys.writev(this.timeIndexFd, [bytes], this.timeIndexFileCount * timeIndexEntryBytes);
      this.timeIndexFileCount = timeCount;
    }
  }

  private get pendingIndexBytes(): number {
    return (this.offsetIndex.entryCount - this.offsetIndexFileCount) * offsetIndexEntryBytes + (this.timeIndex.entryCount - this.timeIndexFileCount) * timeIndexEntryBytes;
  }

  /**
   * Accounts for one batch written at `position` (the current end): size, offsets, max timestamp,
   * and a sparse index entry once indexIntervalBytes have passed since the last one. Returns the
   * index entry bytes to append to the files.
   */
  noteBatch(batch: BatchMeta, position: number, bytes: number, alreadyIndexed = false): { offsetEntry: Buffer | null; timeEntry: Buffer | null } {
    assert.equal(position, this.size, 'batches must be noted at the segment end');
    assert.ok(batch.baseOffset >= this.nextOffset, 'segment offsets must increase');
    const lastOffset = batch.baseOffset + batch.recordCount - 1;
    if (this.maxTimestamp === null || batch.maxTimestamp > this.maxTimestamp) {
      this.maxTimestamp = batch.maxTimestamp;
      this.offsetOfMaxTimestamp = lastOffset;
    }
    let offsetEntry: Buffer | null = null;
    let timeEntry: Buffer | null = null;
    if (alreadyIndexed) {
      this.bytesSinceIndexEntry = 0;
    } else if (this.bytesSinceIndexEntry >= this.indexIntervalBytes) {
      offsetEntry = this.offsetIndex.append(batch.baseOffset, position);
      timeEntry = this.timeIndex.maybeAppend(this.maxTimestamp, this.offsetOfMaxTimestamp);
      this.bytesSinceIndexEntry = 0;
    }
    this.bytesSinceIndexEntry += bytes;
    this.size += bytes;
    this.nextOffset = lastOffset + 1;
    return { offsetEntry, timeEntry };
  }

  /**
   * Writes envelopes (header and payload chunks, in order) at the segment end in one writev:
   * synchronously with a `gate` that is open (see direct-write.ts; once the turn's budget is
   * spent, in the next turn) while `direct(this)` allows it, otherwise through the thread pool. Both
   * are asked again after each wait for a turn, right before the write (the caller's reason for
   * the thread pool may have come up meanwhile). On any error the caller restores the snapshot it
   * took before. Then keeps blocks reserved ahead (reserveAhead).
   */
  async append(
    batches: readonly BatchMeta[],
    chunks: readonly Buffer[],
    totalBytes: number,
    gate: DirectWriteGate | null = null,
    direct: (segment: Segment) => boolean = always,
  ): Promise<void> {
    assert.equal(chunks.length, batches.length * 2, 'one header and one payload chunk per batch');
    while (gate !== null && direct(this) && gate.mustWait()) await gate.nextTurn();
    const written =
      gate !== null && direct(this) && gate.open()
        ? gate.write(() => this.fsys.writevSync(this.logFd, chunks, this.size))
        : await this.fsys.writev(this.logFd, chunks, this.size);
    if (written !== totalBytes) throw new Error(`short write: ${written} of ${totalBytes} bytes`);
    for (let i = 0; i < batches.length; i++) {
      const bytes = chunks[2 * i]!.length + chunks[2 * i + 1]!.length;
      this.noteBatch(batches[i]!, this.size, bytes);
    }
    if (this.pendingIndexBytes >= indexFlushBytes) await this.flushIndexes();
    this.reserveAhead();
  }

  /**
   * Keeps reserveAheadBytes of disk blocks reserved past the end of a segment that holds at least
   * reserveAfterBytes (fallocate KEEP_SIZE on the thread pool, one request at a time, renewed once
   * half of it is used; the size is untouched). ext4 otherwise allocates an appended range's
   * blocks when it writes the range back, and in ordered-data mode the journal commit that an
   * fsync (or the 5 s timer) forces then waits for that data while appends wait for the journal:
   * single write() calls of 20-60 ms in 1 GB Iggy ingests. Into reserved blocks (unwritten
   * extents) neither happens. Small or idle segments reserve nothing; a seal frees what was not
   * used. Best effort: a failure stops the reservations of this segment.
   */
  private reserveAhead(): void {
    // Not for compaction's replacement segments: they are sealed as soon as they are written.
    if (this.reservation !== null || this.reserveStopped || this.suffix !== '' || this.size < reserveAfterBytes) return;
    if (this.size + reserveAheadBytes / 2 <= this.reservedTo) return;
    // From the end of what is reserved (or written): the range below is allocated or dirty.
    const from = Math.max(this.reservedTo, this.size);
    const to = this.size + reserveAheadBytes;
    // Pinned: the file stays open until the request is done.
    this.acquire();
    this.reservation = this.fsys
      .preallocate(this.logFd, from, to - from)
      .then((reserved) => {
        if (reserved) this.reservedTo = Math.max(this.reservedTo, to);
        else this.reserveStopped = true;
      })
      .finally(() => {
        this.reservation = null;
        return this.release();
      })
      .catch(() => undefined);
  }

  /** A reservation in flight lands before the file is cut back, so the cut frees it too. */
  private async reservationSettled(): Promise<void> {
    if (this.reservation !== null) await this.reservation;
  }

  snapshot(): SegmentState {
    return {
      size: this.size,
      nextOffset: this.nextOffset,
      maxTimestamp: this.maxTimestamp,
      offsetOfMaxTimestamp: this.offsetOfMaxTimestamp,
      bytesSinceIndexEntry: this.bytesSinceIndexEntry,
      offsetIndexCount: this.offsetIndex.entryCount,
      timeIndexCount: this.timeIndex.entryCount,
      firstAppendTime: this.firstAppendTime,
    };
  }

  /** Returns memory state to `state` and cuts the files back to it. Throws if truncation fails. */
  async restore(state: SegmentState): Promise<void> {
    this.size = state.size;
    this.nextOffset = state.nextOffset;
    this.maxTimestamp = state.maxTimestamp;
    this.offsetOfMaxTimestamp = state.offsetOfMaxTimestamp;
    this.bytesSinceIndexEntry = state.bytesSinceIndexEntry;
    this.offsetIndex.truncateToCount(state.offsetIndexCount);
    this.timeIndex.truncateToCount(state.timeIndexCount);
    this.firstAppendTime = state.firstAppendTime;
    // The truncation also frees the blocks reserved past the new end.
    await this.reservationSettled();
    this.reservedTo = Math.min(this.reservedTo, state.size);
    await this.fsys.ftruncate(this.logFd, state.size);
    if (this.offsetIndexFileCount > this.offsetIndex.entryCount) {
      await this.fsys.ftruncate(this.indexFd, this.offsetIndex.fileBytes);
      this.offsetIndexFileCount = this.offsetIndex.entryCount;
    }
    if (this.timeIndexFileCount > this.timeIndex.entryCount) {
      await this.fsys.ftruncate(this.timeIndexFd, this.timeIndex.fileBytes);
      this.timeIndexFileCount = this.timeIndex.entryCount;
    }
  }

  /**
   * Starts writeback of what was written since the last request or fsync once that is at least
   * `writebackBytes` and its oldest byte `writebackDelayMs` old (FileLog calls it after each
   * unsynced 'interval' round): the dirty data a periodic fsync, or ext4's journal commit, must
   * flush then stays a quarter of a second of writes instead of up to a second. Measured at ~700
   * MB/s of Iggy ingest: without it, appends stalled 0.2-0.3 s once a second. The delay keeps
   * short bursts free of writeback: with 8 MiB hints and no delay, 256 KiB appends of a 256 MiB
   * burst ran at 41-48% of raw writes instead of 63%. A streak of writes that has lasted long
   * enough to be hinted once is no burst: its next hints wait `writebackStreakDelayMs`, so the
   * data behind each periodic fsync and journal commit stays smaller still (1 GB Iggy ingests: the
   * longest fsync of a run 12-31 ms instead of 40-97). A pause of more than `writebackDelayMs`
   * between write rounds ends the streak.
   *
   * A hint ends at the last `writebackAlignBytes` boundary at or below the end of the data, never
   * inside the page the next append continues: ext4 keeps a page locked while it prepares it for
   * writeback (allocating blocks under a journal handle), and an append into that page waited for
   * it. With the hint running to the end, single synchronous writes of 20-80 ms stalled 1 GB Iggy
   * ingests, and some 256 MiB bursts of 16 KiB or 256 KiB appends ran at 12-37% of raw writes;
   * without, no write took over 5 ms. (64 KiB covers 4, 16 and 64 KiB pages.)
   */
  startWriteback(nowMs: number): void {
    if (this.lastWriteMs !== null && nowMs - this.lastWriteMs > writebackDelayMs) this.writebackStreak = false;
    this.lastWriteMs = nowMs;
    if (this.writebackFrom > this.size) this.writebackFrom = this.size;
    const pending = this.size - this.writebackFrom;
    if (pending === 0) {
      this.writebackPendingSinceMs = null;
      return;
    }
    this.writebackPendingSinceMs ??= nowMs;
    // One request at a time in the process (a request can block a thread-pool thread while the
    // device queue is full); a later call covers whatever was written meanwhile.
    const delayMs = this.writebackStreak ? writebackStreakDelayMs : writebackDelayMs;
    if (pending < writebackBytes || nowMs - this.writebackPendingSinceMs < delayMs) return;
    if (writebacksInFlight >= writebacksInFlightMax) return;
    const hintTo = Math.floor(this.size / writebackAlignBytes) * writebackAlignBytes;
    writebacksInFlight++;
    this.writebackStreak = true;
    // Pinned: the file stays open until the kernel has taken the request.
    this.acquire();
    void this.fsys
      .startWriteback(this.logFd, this.writebackFrom, hintTo - this.writebackFrom)
      .finally(() => {
        writebacksInFlight--;
        return this.release();
      })
      .catch(() => undefined);
    this.writebackFrom = hintTo;
    this.writebackPendingSinceMs = null;
  }

  /** Makes the segment's data durable (fdatasync: appends need the size, not the mtime). */
  async sync(): Promise<void> {
    const size = this.size;
    await this.fsys.fdatasync(this.logFd);
    // Synced bytes need no write-back hint.
    if (size > this.writebackFrom) {
      this.writebackFrom = size;
      this.writebackPendingSinceMs = null;
    }
  }

  /**
   * Seals the segment before a roll: the final time-index entry (so the last entry is the
   * segment's max timestamp), then all three files fsynced, so recovery can trust a sealed
   * segment's indexes.
   */
  async seal(): Promise<void> {
    this.closeForAppends();
    await this.finishSeal();
  }

  /**
   * The part of a seal that must happen before the next segment takes appends: the last time
   * index entry, and no more block reservations. Synchronous; `finishSeal` does the rest.
   */
  closeForAppends(): void {
    if (this.maxTimestamp !== null) this.timeIndex.maybeAppend(this.maxTimestamp, this.offsetOfMaxTimestamp);
    this.reserveStopped = true;
  }

  /**
   * The rest of a seal, which may run while the next segment takes appends (WritePath.rollActive,
   * file-log-writes.ts, under 'interval'): give back unused reserved blocks, then write out the
   * indexes and sync all three files.
   */
  async finishSeal(): Promise<void> {
    // Blocks reserved past the end (preallocation, reserveAhead) and never written go back: an
    // ftruncate to the size frees them. Unconditional, so that a reservation made before a crash
    // or restart is freed too. Best effort like the reservation: the data is unaffected either way.
    await this.reservationSettled();
    await this.fsys.ftruncate(this.logFd, this.size).catch(() => undefined);
    this.reservedTo = 0;
    await this.syncAll();
  }

  /** Index entries written out, then all three files synced. */
  async syncAll(): Promise<void> {
    await this.flushIndexes();
    await this.fsys.fdatasync(this.logFd);
    await this.fsys.fdatasync(this.indexFd);
    await this.fsys.fdatasync(this.timeIndexFd);
  }

  /** Reads `length` bytes at `position` with one pread into a fresh buffer, or one of `lease`'s. */
  async readRange(position: number, length: number, lease?: BufferLease): Promise<Buffer> {
    // Not checked against `size`: a concurrent rollback may shrink it; callers handle short reads.
    assert.ok(position >= 0 && length >= 0, 'read range must be non-negative');
    const buf = lease ? lease.buffer(length) : Buffer.allocUnsafe(length);
    const n = await readFully(this.fsys, this.logFd, buf, position);
    return n === length ? buf : buf.subarray(0, n);
  }

  acquire(): void {
    assert.ok(this.refs > 0, 'acquire on a closed segment');
    this.refs++;
  }

  async release(): Promise<void> {
    assert.ok(this.refs > 0, 'release without acquire');
    this.refs--;
    if (this.refs === 0) await this.closeFiles();
  }

  /** Drops the log's own reference: files close once the last reader releases. */
  retire(): Promise<void> {
    if (this.retired) return Promise.resolve();
    this.retired = true;
    return this.release();
  }

  /** Unlinks the files (readers holding it keep reading the unlinked inode), then retires. */
  async delete(): Promise<void> {
    const paths = this.paths;
    for (const path of [paths.log, paths.index, paths.timeIndex]) {
      if (await this.fsys.exists(path)) await this.fsys.unlink(path);
    }
    await this.retire();
  }

  private async closeFiles(): Promise<void> {
    await Promise.all([this.fsys.close(this.logFd), this.fsys.close(this.indexFd), this.fsys.close(this.timeIndexFd)]);
  }
}

/** Unlinks whichever of `paths` exist, then syncs the directory; errors are ignored. */
async function unlinkQuietly(fsys: LogFileSystem, dir: string, paths: readonly string[]): Promise<void> {
  for (const path of paths) {
    try {
      if (await fsys.exists(path)) await fsys.unlink(path);
    } catch {
      // Best effort: recovery removes an empty segment that overlaps its predecessor.
    }
  }
  await fsys.fsyncDir(dir).catch(() => undefined);
}

async function readWhole(fsys: LogFileSystem, path: string): Promise<Buffer | null> {
  if (!(await fsys.exists(path))) return null;
  const fd = await fsys.open(path, 'r');
  try {
    const { size } = await fsys.fstat(fd);
    const buf = Buffer.allocUnsafe(size);
    const n = await readFully(fsys, fd, buf, 0);
    return buf.subarray(0, n);
  } finally {
    await fsys.close(fd);
  }
}

/** Both index files parsed and checked for shape, or null when either is missing or malformed. */
async function loadIndexes(
  fsys: LogFileSystem,
  paths: { index: string; timeIndex: string },
  baseOffset: number,
  logBytes: number,
): Promise<{ offsetIndex: OffsetIndex; timeIndex: TimeIndex } | null> {
  const offsetBytes = await readWhole(fsys, paths.index);
  const timeBytes = await readWhole(fsys, paths.timeIndex);
  if (offsetBytes === null || timeBytes === null) return null;
  const offsetIndex = OffsetIndex.decode(baseOffset, offsetBytes, logBytes);
  const timeIndex = TimeIndex.decode(baseOffset, timeBytes);
  if (typeof offsetIndex === 'string' || typeof timeIndex === 'string') return null;
  return { offsetIndex, timeIndex };
}
