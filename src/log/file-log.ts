// A PartitionLog over a directory of segments (see docs/log-format.md for the layout).
//
// Write path: assign() (and append(), which awaits it) assigns offsets synchronously, has the
// batch's format codec stamp them in, encodes the envelope header, and queues the (header,
// payload) pair. One pump per partition drains the queue: while a write is in flight, appends
// pile up, and the next round sends all of them in one writev (no concatenation), then —
// under fsyncPolicy 'always' — one fdatasync shared by every append in the round (group commit).
// Results resolve in offset order after the round. Any failure rolls the segment back to its state
// before the round and rejects that round and everything queued behind it.
//
// Concurrency: `io` serialises everything that touches the active segment (write rounds, syncs,
// rolls, compaction installs); `maintenance` serialises the slow whole-log passes (retention,
// compaction, deleteRecordsBefore, truncateAll) against each other. A reader pins every segment
// it may read, all at once before its first await, so retention and compaction never close a file
// under a read; retention moves the log start before it unlinks anything.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { clockMicros, systemClock, type Clock } from '../base/clock.js';
import { QuartetError } from '../base/errors.js';
import { silentLogger, type Logger } from '../base/logger.js';
import { readCheckpoint, readRecoveryPoint, writeCheckpoint, writeRecoveryPoint } from './checkpoint.js';
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
  segmentFull,
  segmentOffsetSpanMax,
  stampAssigned,
  storedBytes,
  tombstoneDeadline,
} from './common.js';
import { decodeEnvelopeHeader, encodeEnvelopeHeader, envelopeBytes, envelopeHeaderBytes, storedBatchOf } from './envelope.js';
import { createFormatRegistry, type FormatRegistry } from './formats.js';
import { nodeFileSystem, type LogFileSystem } from './fs.js';
import type { BufferLease } from '../base/buffer-pool.js';
import { defaultDirectWriteGate, type DirectWriteGate } from './direct-write.js';
import { readFully, scanEnvelopes, type ScannedEnvelope } from './scan.js';
import { defaultBackgroundSyncSlots, type ScheduledTask, type TaskSlots } from './task-slots.js';
import { cleanedSuffix, parseSegmentLogName, Segment, segmentPaths, type BatchMeta, type SegmentState } from './segment.js';
import type {
  AppendRequest,
  AppendResult,
  AssignedAppend,
  CleanupResult,
  DeleteSegmentsOptions,
  LogConfig,
  LogStats,
  PartitionLog,
  ReadOptions,
  StoredBatch,
} from './types.js';
import { fileSliceHeadBytes } from './types.js';

/** Appends per writev: two iovecs each, inside Linux's IOV_MAX of 1024. */
const appendsPerWriteMax = 512;
/**
 * Bytes per writev round under 'always': every round ends with one fsync, so a round takes as much
 * as is queued, up to this bound on how long it holds the queue.
 */
const bytesPerSyncedWriteMax = 16 * 1024 * 1024;
/**
 * Bytes per writev round under 'interval'. Kept small so that writing overlaps with the work of
 * the appends behind it: while one round is in the kernel, appenders whose batches completed in the
 * previous round checksum and queue the next ones. One huge round would instead alternate between
 * all the CPU work and all the I/O.
 */
const bytesPerWriteMax = 1024 * 1024;
/** Bytes of rewritten batches compaction buffers before one writev. */
const compactionWriteBytes = 1024 * 1024;

/** What a new active segment reserves on disk (LogConfig.preallocate): its whole size, or nothing. */
function preallocateBytesOf(config: LogConfig): number {
  return config.preallocate === true ? config.segmentBytes : 0;
}
/** Present only between a clean close and the next open: the indexes on disk are complete. */
export const cleanShutdownFileName = '.clean-shutdown';

export interface FileLogOptions {
  fs?: LogFileSystem;
  clock?: Clock;
  logger?: Logger;
  formats?: FormatRegistry;
  /**
   * Synchronous page-cache writes under the 'interval' policy (direct-write.ts): the process-wide
   * gate by default; null writes through the thread pool only.
   */
  directWrites?: DirectWriteGate | null;
  /**
   * Slots the 'interval' policy's timer fsyncs share (task-slots.ts): the process-wide two by
   * default, so that they never hold all of libuv's thread pool at once.
   */
  backgroundSyncs?: TaskSlots;
}

interface PendingAppend {
  header: Buffer;
  payload: Buffer;
  meta: BatchMeta;
  bytes: number;
  appendTime: number;
  /** The active segment rolls before this batch is written. */
  rollBefore: boolean;
  /** The active segment rolls once this batch is written (segmentRoll 'after': it fills the segment). */
  rollAfter: boolean;
  resolve: (result: AppendResult) => void;
  reject: (error: Error) => void;
}

interface Waiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

/** A FIFO async lock: each task runs after the previous one settles. */
class Mutex {
  private tail: Promise<void> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}

function storageError(message: string, cause: unknown): QuartetError {
  const detail = cause instanceof Error ? `: ${cause.message}` : '';
  return new QuartetError('storage_error', `${message}${detail}`, cause);
}

/** Opens (creating or recovering) the partition log in `dir`. */
export async function openFileLog(dir: string, config: LogConfig, options: FileLogOptions = {}): Promise<FileLog> {
  assertValidConfig(config);
  const fsys = options.fs ?? nodeFileSystem;
  const logger = (options.logger ?? silentLogger).child({ partitionDir: dir });
  try {
    const recovered = await recoverDirectory(fsys, dir, config, logger);
    const directWrites = options.directWrites === undefined ? defaultDirectWriteGate : options.directWrites;
    const backgroundSyncs = options.backgroundSyncs ?? defaultBackgroundSyncSlots;
    return new FileLog(dir, config, fsys, options.clock ?? systemClock, logger, options.formats ?? createFormatRegistry(), recovered, directWrites, backgroundSyncs);
  } catch (error) {
    if (error instanceof QuartetError) throw error;
    throw storageError(`cannot open the log in ${dir}`, error);
  }
}

interface RecoveredLog {
  segments: Segment[];
  logStartOffset: number;
  /** The recovery point on disk after recovery (the active segment's base). */
  recoveryPoint: number;
}

/** Recovery at open: see docs/log-format.md, "Recovery". */
async function recoverDirectory(fsys: LogFileSystem, dir: string, config: LogConfig, logger: Logger): Promise<RecoveredLog> {
  await fsys.mkdir(dir);
  const names = await fsys.readdir(dir);
  await removeLeftovers(fsys, dir, names, logger);
  const bases = names.map(parseSegmentLogName).filter((b): b is number => b !== null).sort((a, b) => a - b);
  const clean = names.includes(cleanShutdownFileName);
  // Which segments an unclean stop may have left with unsynced data: the active one, and one
  // before it whose background seal had not finished (FileLog.rollActive). Segments below the
  // recovery point are synced. A directory without one predates recovery points (every open
  // writes one): its sealed segments were synced when sealed. With a damaged one, the last two
  // are re-validated (a roll leaves at most one sealed segment unsynced, the one before the
  // active; an empty leftover of a failed create aside).
  const storedPoint = await readRecoveryPoint(fsys, dir);
  if (typeof storedPoint === 'string') logger.warn('ignoring a damaged recovery point checkpoint; re-validating the last two segments', { problem: storedPoint });
  const recoveryPoint = typeof storedPoint === 'number' ? storedPoint : null;
  const synced = (i: number): boolean => {
    if (i >= bases.length - 1) return false;
    if (storedPoint === null) return true;
    if (recoveryPoint === null) return i < bases.length - 2;
    return bases[i]! < recoveryPoint;
  };
  const segments: Segment[] = [];
  /** Sealed segments re-validated because they may hold unsynced data. */
  const unverified = new Set<Segment>();
  for (let i = 0; i < bases.length; i++) {
    const last = i === bases.length - 1;
    const trust = clean || synced(i);
    const { segment, report } = await Segment.open(fsys, dir, bases[i]!, config.indexIntervalBytes, trust, logger);
    segments.push(segment);
    if (!last && !trust) unverified.add(segment);
    // A sealed segment that may have lost unsynced data and did (its tail was cut, or, at or
    // above a recovery point, it ends short of the next segment's base: a loss that ended on a
    // batch boundary, or a cut made by a recovery that stopped before it removed what follows):
    // the later segments would leave a hole of acknowledged-then-lost offsets in the middle of
    // the log, so they go, newest first, and the recovered log is a prefix of what was written.
    // (Compaction, which leaves such gaps on purpose, only rewrites segments below the recovery
    // point; segments compacted before there were recovery points are trusted.) Damage in a
    // trusted segment cuts that segment alone, as before: what follows it was synced.
    // (An empty segment that starts below its predecessor's end is the leftover of a failed
    // create, which repairOverlaps removes: it lost nothing.)
    const leftover = segment.isEmpty && i > 0 && segments[i - 1]!.nextOffset > segment.baseOffset;
    const shortOfNext = recoveryPoint !== null && bases[i]! >= recoveryPoint && segment.nextOffset < (bases[i + 1] ?? Number.POSITIVE_INFINITY);
    if (!last && !trust && !leftover && (report.truncatedBytes > 0 || shortOfNext)) {
      logger.warn('a sealed segment lost data not yet synced; removing the segments after it', {
        file: segment.paths.log,
        end: segment.nextOffset,
        removed: bases.length - i - 1,
      });
      for (const base of bases.slice(i + 1).reverse()) {
        for (const path of Object.values(segmentPaths(dir, base))) if (await fsys.exists(path)) await fsys.unlink(path);
        await fsys.fsyncDir(dir);
      }
      break;
    }
  }
  await repairOverlaps(fsys, dir, segments, config, clean, logger);
  const checkpoint = await readCheckpoint(fsys, dir);
  if (typeof checkpoint === 'string') logger.warn('ignoring a damaged log-start checkpoint', { problem: checkpoint });
  let logStartOffset = Math.max(typeof checkpoint === 'number' ? checkpoint : 0, segments[0]?.baseOffset ?? 0);
  const endOffset = segments.at(-1)?.nextOffset ?? 0;
  if (logStartOffset > endOffset) {
    // Everything on disk is below the start the checkpoint promises: start empty at the checkpoint.
    logger.warn('log start checkpoint beyond the data; starting empty there', { logStartOffset, endOffset });
    for (const segment of segments.splice(0)) await segment.delete();
  }
  if (segments.length === 0) segments.push(await Segment.create(fsys, dir, logStartOffset, config.indexIntervalBytes, '', preallocateBytesOf(config)));
  while (segments.length > 1 && segments[1]!.baseOffset <= logStartOffset) await segments.shift()!.delete();
  logStartOffset = Math.max(logStartOffset, segments[0]!.baseOffset);
  // Every sealed segment recovery did not trust is synced now (after a process crash its data
  // was read back from the page cache, possibly never written: a seal the crash interrupted);
  // then the recovery point moves to the active segment, so that it is there from the first
  // roll on. (In a new directory, or one from before recovery points, it is written here first.)
  const active = segments.at(-1)!;
  if (recoveryPoint !== active.baseOffset) {
    for (const segment of segments.slice(0, -1)) if (unverified.has(segment)) await segment.syncAll();
    await writeRecoveryPoint(fsys, dir, active.baseOffset);
  }
  if (clean) {
    // Gone before any new write: a later crash must not look like a clean shutdown.
    await fsys.unlink(join(dir, cleanShutdownFileName));
    await fsys.fsyncDir(dir);
  }
  return { segments, logStartOffset, recoveryPoint: active.baseOffset };
}

/**
 * Segments must not overlap: each starts at or after the end of the one before. An empty segment
 * that starts below its predecessor's end holds nothing and is what a roll that failed after
 * creating `<base>.log` leaves behind (the old segment then took later appends): it is removed,
 * or as the last segment it would become the active one, hide that data and reuse its offsets.
 * Overlapping segments that both hold data cannot be told apart (which copy of those offsets is
 * right?): the open fails rather than serve or overwrite either.
 */
async function repairOverlaps(fsys: LogFileSystem, dir: string, segments: Segment[], config: LogConfig, clean: boolean, logger: Logger): Promise<void> {
  let activeRemoved = false;
  for (let i = 1; i < segments.length; ) {
    const previous = segments[i - 1]!;
    const segment = segments[i]!;
    if (segment.baseOffset >= previous.nextOffset) {
      i++;
      continue;
    }
    if (!segment.isEmpty) {
      for (const s of segments) await s.retire().catch(() => undefined);
      throw new QuartetError(
        'storage_error',
        `segments overlap in ${dir}: ${segment.paths.log} starts at ${segment.baseOffset}, below ${previous.nextOffset}, the end of ${previous.paths.log}`,
      );
    }
    logger.warn('removing an empty segment that overlaps the previous one (left by a failed roll)', {
      file: segment.paths.log,
      previousEnd: previous.nextOffset,
    });
    activeRemoved ||= i === segments.length - 1;
    segments.splice(i, 1);
    await segment.delete();
  }
  if (activeRemoved && !clean) {
    // The new last segment was opened as a sealed one, trusting its indexes; after an unclean
    // stop the active segment is rescanned from position 0 instead.
    const last = segments.pop()!;
    await last.retire();
    segments.push((await Segment.open(fsys, dir, last.baseOffset, config.indexIntervalBytes, false, logger)).segment);
  }
}

/** Removes compaction and checkpoint temp files, and index files whose log is gone. */
async function removeLeftovers(fsys: LogFileSystem, dir: string, names: string[], logger: Logger): Promise<void> {
  const logs = new Set(names.filter((n) => n.endsWith('.log')).map((n) => n.slice(0, -'.log'.length)));
  for (const name of names) {
    const orphanIndex = /^(\d{20})\.(index|timeindex)$/.exec(name);
    const leftover = name.endsWith(cleanedSuffix) || name.endsWith('.tmp') || (orphanIndex !== null && !logs.has(orphanIndex[1]!));
    if (!leftover) continue;
    logger.warn('removing a leftover file', { file: name });
    await fsys.unlink(join(dir, name));
  }
}

export class FileLog implements PartitionLog {
  config: LogConfig;
  private segments: Segment[];
  private logStartOffset: number;
  /** Next offset to assign. */
  private nextOffset: number;
  /** Offsets below this are readable: written, and under 'always' synced. */
  private highWatermark: number;
  private readonly queue: PendingAppend[] = [];
  private syncWaiters: Waiter[] = [];
  private offsetWaiters: Array<{ offset: number; resolve: () => void }> = [];
  private pumping = false;
  /** Written to the active segment since its last sync. */
  private dirty = false;
  /** Set when a rollback or sync failure leaves the files in doubt: appends reject, reads work. */
  private readOnlyCause: unknown = null;
  private closed = false;
  private timer: NodeJS.Timeout | null = null;
  /** The timer's fsync while it runs (syncInBackground). */
  private backgroundSync: Promise<void> | null = null;
  /** The sync of the segment sealed by the last roll under 'interval', while it runs (rollActive). */
  private sealSync: Promise<void> | null = null;
  /** That sync as scheduled on the process-wide slots (cancellable while it waits). */
  private sealJob: ScheduledTask<true> | null = null;
  /** The recovery point on disk: segments below it are synced. */
  private recoveryPoint: number;
  /** The segment the timer's fsync is syncing while it runs (writes to it skip direct writes). */
  private syncingSegment: Segment | null = null;
  /**
   * Whether a round may write `segment` synchronously as far as the timer fsync goes (Segment.append
   * asks right before the write, after any wait for a turn). A round written while the timer's
   * fsync runs on the same file goes to the thread pool: the fsync writes out the page the write
   * continues, and ext4 makes a write into a page under writeback wait for it (15-78 ms now and
   * then), which on the event loop held every connection (and a write over 20 ms turns direct
   * writes off for a while).
   */
  private readonly notTimerSyncing = (segment: Segment): boolean => this.syncingSegment !== segment;
  /** The timer's fsync as scheduled on the process-wide slots (cancellable while it waits). */
  private queuedSync: ScheduledTask<void> | null = null;
  /** A flush's fsync is running: the timer does not start a second one beside it. */
  private foregroundSyncing = false;
  private readonly listeners = new Set<(highWatermark: number) => void>();
  /** Closed: a listener added now is called once, at once (onAppend). */
  private listenersClosed = false;
  /** The last read with fileSlicesMin met a large envelope: the next starts with a small window. */
  private slicedReadsMeetLarge = false;
  private readonly io = new Mutex();
  private readonly maintenance = new Mutex();
  // Where the next append lands, counting queued appends: rolls are decided at append time.
  private assignedBase: number;
  private assignedBytes: number;
  private assignedFirstAppendTime: number | null;

  constructor(
    readonly dir: string,
    config: LogConfig,
    private readonly fsys: LogFileSystem,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly formats: FormatRegistry,
    recovered: RecoveredLog,
    private readonly directWrites: DirectWriteGate | null,
    private readonly backgroundSyncs: TaskSlots,
  ) {
    this.config = config;
    this.segments = recovered.segments;
    this.logStartOffset = recovered.logStartOffset;
    this.recoveryPoint = recovered.recoveryPoint;
    const active = this.active();
    if (!active.isEmpty) active.firstAppendTime = clock.now();
    this.nextOffset = active.nextOffset;
    this.highWatermark = active.nextOffset;
    this.assignedBase = active.baseOffset;
    this.assignedBytes = active.size;
    this.assignedFirstAppendTime = active.firstAppendTime;
    this.startTimer();
  }

  stats(): LogStats {
    return {
      logStartOffset: this.logStartOffset,
      nextOffset: this.nextOffset,
      highWatermark: this.highWatermark,
      sizeBytes: this.segments.reduce((n, s) => n + s.size, 0),
      segmentCount: this.segments.length,
    };
  }

  // ---- Appends ---------------------------------------------------------------------------------

  append(request: AppendRequest): Promise<AppendResult> {
    try {
      return this.assign(request).written;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  assign(request: AppendRequest): AssignedAppend {
    if (this.closed) throw closedError();
    if (this.readOnlyCause !== null) throw storageError('the log is read-only after a storage failure', this.readOnlyCause);
    checkAppendRequest(request, this.config);
    const appendMicros = clockMicros(this.clock);
    const appendTime = Math.floor(appendMicros / 1000);
    request = atAppendTime(request, appendTime);
    const baseOffset = this.nextOffset;
    stampAssigned(this.formats, request, { baseOffset, appendTime, appendMicros });
    const length = request.payload.length;
    const bytes = storedBytes(length);
    const rollBefore = this.assignRoll(bytes, request.recordCount, appendTime, baseOffset);
    const rollAfter = this.assignRollAfter(baseOffset + request.recordCount);
    const header = encodeEnvelopeHeader(request, baseOffset, request.payload);
    this.nextOffset = baseOffset + request.recordCount;
    const meta: BatchMeta = { baseOffset, recordCount: request.recordCount, maxTimestamp: request.maxTimestamp };
    const written = new Promise<AppendResult>((resolve, reject) => {
      this.queue.push({ header, payload: request.payload, meta, bytes, appendTime, rollBefore, rollAfter, resolve, reject });
    });
    this.kick();
    return { baseOffset, lastOffset: baseOffset + request.recordCount - 1, appendTime, written };
  }

  /** Decides, at assignment time, whether this batch starts a new segment; updates the tally. */
  private assignRoll(bytes: number, recordCount: number, now: number, baseOffset: number): boolean {
    const { segmentMs } = this.config;
    const full = segmentFull(this.config, this.assignedBytes, bytes);
    const tooManyOffsets = baseOffset + recordCount - this.assignedBase > segmentOffsetSpanMax;
    const tooOld = segmentMs > 0 && this.assignedFirstAppendTime !== null && now - this.assignedFirstAppendTime >= segmentMs;
    const roll = this.assignedBytes > 0 && (full || tooManyOffsets || tooOld);
    if (roll) {
      this.assignedBase = baseOffset;
      this.assignedBytes = 0;
      this.assignedFirstAppendTime = null;
    }
    this.assignedBytes += bytes;
    this.assignedFirstAppendTime ??= now;
    return roll;
  }

  /**
   * Under segmentRoll 'after' (Iggy's rule), a batch that brings the segment to segmentBytes or more
   * seals it once written, and a new active segment starts at `nextBase` at once (as the reference
   * seals a full segment), so the tally restarts there. Decided at assignment time, with the tally.
   */
  private assignRollAfter(nextBase: number): boolean {
    if (this.config.segmentRoll !== 'after' || this.assignedBytes < this.config.segmentBytes) return false;
    this.assignedBase = nextBase;
    this.assignedBytes = 0;
    this.assignedFirstAppendTime = null;
    return true;
  }

  /** Recomputes the assignment tally from the active segment and the queue (after changes). */
  private resetAssignment(): void {
    const active = this.active();
    this.assignedBase = active.baseOffset;
    this.assignedBytes = active.size;
    this.assignedFirstAppendTime = active.firstAppendTime;
    for (const entry of this.queue) {
      if (entry.rollBefore) {
        this.assignedBase = entry.meta.baseOffset;
        this.assignedBytes = 0;
        this.assignedFirstAppendTime = null;
      }
      this.assignedBytes += entry.bytes;
      this.assignedFirstAppendTime ??= entry.appendTime;
      if (entry.rollAfter) {
        this.assignedBase = entry.meta.baseOffset + entry.meta.recordCount;
        this.assignedBytes = 0;
        this.assignedFirstAppendTime = null;
      }
    }
  }

  private kick(): void {
    if (this.pumping) return;
    this.pumping = true;
    void this.pump();
  }

  private async pump(): Promise<void> {
    while (this.queue.length > 0 || this.syncWaiters.length > 0) {
      await this.io.run(() => (this.queue.length > 0 ? this.writeRound() : this.syncRound()));
    }
    this.pumping = false;
    this.settleOffsetWaiters();
  }

  /** Writes queued appends (up to the next roll) in one writev; syncs under 'always'. */
  private async writeRound(): Promise<void> {
    if (this.readOnlyCause !== null) return this.rejectQueued(storageError('the log is read-only after a storage failure', this.readOnlyCause));
    if (this.queue[0]!.rollBefore) {
      this.queue[0]!.rollBefore = false;
      try {
        await this.rollActive(this.queue[0]!.meta.baseOffset);
      } catch (error) {
        return this.rejectQueued(storageError('segment roll failed', error));
      }
    }
    const taken = this.takeRound();
    const segment = this.active();
    const before = segment.snapshot();
    const chunks: Buffer[] = [];
    let total = 0;
    for (const entry of taken) {
      chunks.push(entry.header, entry.payload);
      total += entry.bytes;
    }
    let waiters: Waiter[] = [];
    // Acknowledged appends of earlier rounds not yet synced ('interval'): a failed fsync covers them too.
    const unsyncedBefore = this.dirty || this.backgroundSync !== null || this.sealSync !== null;
    let syncing = false;
    try {
      const syncNow = this.config.fsyncPolicy === 'always' || this.syncWaiters.length > 0;
      await segment.append(
        taken.map((e) => e.meta),
        chunks,
        total,
        // A round that ends in an fsync waits for the disk anyway: the write rides the thread pool.
        // So does one beside the timer's fsync of the same file (notTimerSyncing).
        syncNow ? null : this.directWrites,
        this.notTimerSyncing,
      );
      segment.firstAppendTime ??= taken[0]!.appendTime;
      if (syncNow) {
        waiters = this.syncWaiters.splice(0);
        syncing = true;
        // As in syncRound: a timer fsync or seal sync in flight reports first; if it failed, so does this round.
        await this.settleSyncs();
        if (this.readOnlyCause !== null) throw this.readOnlyCause;
        await this.foregroundSync(segment);
      } else {
        this.dirty = true;
        segment.startWriteback(this.clock.now());
      }
    } catch (error) {
      // The kernel may have dropped the dirty pages of those earlier appends, and a later fsync
      // would succeed without them: stop accepting writes, as the timer's sync does.
      if (syncing && unsyncedBefore) this.goReadOnly(error);
      return this.failRound(segment, before, taken, waiters, error);
    }
    // A batch that filled its segment is acknowledged once the next segment has started, so
    // that whoever sees the append done sees the full segment sealed (and deletable).
    const last = taken.at(-1)!;
    if (last.rollAfter) await this.rollAfterFull(last.meta.baseOffset + last.meta.recordCount);
    this.completeRound(taken, waiters);
  }

  /**
   * Seals the segment a written batch filled (segmentRoll 'after') and starts the next one at
   * `baseOffset`. The batch is written, and acknowledged after this whatever happens: a failed roll
   * leaves the full segment active (or the log read-only, rollActive), and the recomputed tally
   * rolls before the next batch.
   */
  private async rollAfterFull(baseOffset: number): Promise<void> {
    try {
      await this.rollActive(baseOffset);
    } catch (error) {
      this.logger.error('segment roll after a full segment failed', { baseOffset, error });
      this.resetAssignment();
    }
  }

  private takeRound(): PendingAppend[] {
    const bytesLimit = this.config.fsyncPolicy === 'always' ? bytesPerSyncedWriteMax : bytesPerWriteMax;
    let count = 0;
    let bytes = 0;
    while (count < this.queue.length && count < appendsPerWriteMax) {
      const entry = this.queue[count]!;
      if (count > 0 && (entry.rollBefore || bytes + entry.bytes > bytesLimit)) break;
      bytes += entry.bytes;
      count++;
      // The segment rolls right after this one: the round ends with it.
      if (entry.rollAfter) break;
    }
    return this.queue.splice(0, count);
  }

  private completeRound(taken: PendingAppend[], waiters: Waiter[]): void {
    const last = taken.at(-1)!;
    const highWatermark = last.meta.baseOffset + last.meta.recordCount;
    assert.ok(highWatermark > this.highWatermark, 'the high watermark only grows');
    this.highWatermark = highWatermark;
    for (const entry of taken) {
      entry.resolve({
        baseOffset: entry.meta.baseOffset,
        lastOffset: entry.meta.baseOffset + entry.meta.recordCount - 1,
        appendTime: entry.appendTime,
        logStartOffset: this.logStartOffset,
      });
    }
    for (const waiter of waiters) waiter.resolve();
    this.settleOffsetWaiters();
    for (const listener of this.listeners) listener(highWatermark);
  }

  /**
   * A write or sync failed: the round and everything queued behind it fail, offsets go back to
   * the last good end, and the files are cut back to it. If cutting fails, the log turns read-only.
   */
  private async failRound(segment: Segment, before: SegmentState, taken: PendingAppend[], waiters: Waiter[], cause: unknown): Promise<void> {
    const error = storageError('append failed', cause);
    const rest = this.queue.splice(0);
    // Synchronously, before any await: appends arriving now must get offsets after the good end.
    this.nextOffset = before.nextOffset;
    this.logger.error('append failed; rolling back', { baseOffset: taken[0]!.meta.baseOffset, rejected: taken.length + rest.length, error: cause });
    for (const entry of [...taken, ...rest]) entry.reject(error);
    for (const waiter of waiters) waiter.reject(error);
    try {
      await segment.restore(before);
    } catch (truncateError) {
      this.goReadOnly(truncateError);
    }
    this.resetAssignment();
    this.settleOffsetWaiters();
  }

  private rejectQueued(error: QuartetError): void {
    const rest = this.queue.splice(0);
    if (rest.length === 0) return;
    this.nextOffset = rest[0]!.meta.baseOffset;
    for (const entry of rest) entry.reject(error);
    this.resetAssignment();
    this.settleOffsetWaiters();
  }

  private goReadOnly(cause: unknown): void {
    if (this.readOnlyCause === null) this.logger.error('the log is now read-only', { error: cause });
    this.readOnlyCause = cause;
  }

  /**
   * Seals the active segment and starts a new one at `baseOffset`. A failed seal turns the log
   * read-only: its fsyncs covered acknowledged data (under 'interval', possibly never synced) and a
   * retry could succeed after the kernel dropped those pages. A failed create leaves the old
   * segment active (Segment.create removes what it made) and the log writable.
   *
   * Under 'always' the seal is synced before the new segment starts (its data already is: only
   * the indexes are left). Under 'interval' the new segment starts at once and the sealed one is
   * synced in the background: waiting here made every append stall for the fsync of up to a
   * second of writes at each roll (0.47 s for a 1 GiB segment written at ~3.5 GB/s, whose writes
   * took 0.3 s; docs/log-format.md "Writes and fsync policies"). Recovery must then not trust the sealed segment until that
   * sync is done: the recovery point on disk stays at its base until then, so after an unclean
   * stop it is re-validated like the active one (docs/log-format.md "Recovery"). At most one
   * sealed segment is unsynced at a time: a roll waits for the previous seal's sync first.
   */
  private async rollActive(baseOffset: number): Promise<void> {
    const old = this.active();
    if (old.isEmpty) return;
    assert.ok(baseOffset >= old.nextOffset, 'a new segment starts at or after the old end');
    // Whatever the policy now, a seal started under 'interval' is done before the next roll. Under
    // 'always' so is a timer fsync left from 'interval' (of two fsyncs of one file, a writeback
    // error reaches only one), so the point never moves past a failed one.
    const always = this.config.fsyncPolicy === 'always';
    if (always) await this.settleSyncs();
    else await this.settleSealSync();
    if (this.readOnlyCause !== null) throw storageError('the log is read-only after a storage failure', this.readOnlyCause);
    if (always) {
      try {
        await old.seal();
      } catch (error) {
        this.goReadOnly(error);
        throw error;
      }
      this.dirty = false;
      this.segments = [...this.segments, await this.createSegment(baseOffset, true)];
      // Everything below the new segment is synced: recovery and compaction may trust it.
      await this.advanceRecoveryPoint(baseOffset);
      return;
    }
    // The old segment may be left unsynced only if the recovery point does not trust it: the open
    // put the point at the active segment, and each seal moves it to the next one, so it is at the
    // old segment's base now. (Writing it here instead cost 0.1-0.3 s at the roll of a 1 GiB
    // segment: its fsyncs made ext4 commit the journal, which in ordered mode first writes out the
    // big file's dirty data.)
    assert.ok(this.recoveryPoint <= old.baseOffset, 'the recovery point does not trust the active segment');
    // The directory fsync that makes the new segment's name durable is the seal's too: until it
    // is done, a flush waits (it waits for the seal).
    const segment = await this.createSegment(baseOffset, false);
    old.closeForAppends();
    this.segments = [...this.segments, segment];
    // What the old segment holds unsynced is the seal's to sync now; the new one is clean.
    this.dirty = false;
    const seal = async (): Promise<true> => {
      await old.finishSeal();
      await this.fsys.fsyncDir(this.dir);
      return true;
    };
    // On the process's fsync slots, like the timer fsyncs; whoever has to wait for it (a flush,
    // the next roll, close) takes it out of the queue and runs it at once (settleSealSync).
    const job = this.backgroundSyncs.schedule(seal);
    this.sealJob = job;
    // A timer fsync of the old segment may run beside the seal: a writeback error reaches only
    // one of two fsyncs of a file, so the point moves on only if that one succeeded too.
    const timerSync = this.backgroundSync;
    let failure: unknown = null;
    this.sealSync = this.pinned(old, async () => {
      try {
        if ((await job.done) === undefined) await seal();
      } catch (error) {
        failure = error;
      }
    })
      // Closing the files of a segment retired meanwhile failed: nothing to do with the seal.
      .catch((error: unknown) => this.logger.warn('closing a retired segment failed', { file: old.paths.log, error: String(error) }))
      .then(async () => {
        await timerSync;
        if (failure !== null) this.goReadOnly(failure);
        else if (this.readOnlyCause === null) await this.advanceRecoveryPoint(baseOffset);
      })
      .finally(() => {
        this.sealSync = null;
        this.sealJob = null;
      });
  }

  /**
   * Every segment below `offset` is synced: say so on disk. If that write fails, the old point
   * stays until a later seal writes one: recovery re-validates segments that are synced, which
   * costs time, not data.
   */
  private async advanceRecoveryPoint(offset: number): Promise<void> {
    try {
      await writeRecoveryPoint(this.fsys, this.dir, offset);
      this.recoveryPoint = offset;
    } catch (error) {
      this.logger.warn('cannot write the recovery point checkpoint', { dir: this.dir, offset, error: String(error) });
    }
  }

  private createSegment(baseOffset: number, syncDir: boolean): Promise<Segment> {
    return Segment.create(this.fsys, this.dir, baseOffset, this.config.indexIntervalBytes, '', preallocateBytesOf(this.config), syncDir);
  }

  /** Waits for the timer fsync, then for the background seal (settleBackgroundSync, settleSealSync). */
  private async settleSyncs(): Promise<void> {
    await this.settleBackgroundSync();
    await this.settleSealSync();
  }

  /**
   * Waits for the background seal of the last sealed segment, if there is one (never rejects).
   * One still waiting for a slot runs at once instead, so nothing that waits for it queues
   * behind the timer fsyncs of other logs.
   */
  private async settleSealSync(): Promise<void> {
    this.sealJob?.cancel();
    await this.sealSync;
  }

  private async syncRound(): Promise<void> {
    const waiters = this.syncWaiters.splice(0);
    // A timer fsync in flight covers data these waiters need: its outcome comes first (two
    // concurrent fsyncs of one file can report a writeback error to only one of them). So does
    // the sync of a segment sealed by a roll: it holds data they need too.
    await this.settleSyncs();
    if (this.readOnlyCause !== null) {
      const failure = storageError('the log is read-only after a storage failure', this.readOnlyCause);
      for (const waiter of waiters) waiter.reject(failure);
      return;
    }
    if (this.dirty) {
      try {
        await this.foregroundSync(this.active());
      } catch (error) {
        // Acknowledged bytes may not have reached the disk and the kernel may have dropped them
        // (fsync errors are not retryable): stop accepting writes rather than pretend.
        this.goReadOnly(error);
        const failure = storageError('fsync failed', error);
        for (const waiter of waiters) waiter.reject(failure);
        return;
      }
    }
    for (const waiter of waiters) waiter.resolve();
  }

  flush(): Promise<void> {
    if (this.closed) return Promise.reject(closedError());
    return this.requestSync();
  }

  private requestSync(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.syncWaiters.push({ resolve, reject });
      this.kick();
    });
  }

  /** Resolves once offsets below `offset` are readable, or once they failed and were rolled back. */
  private whenWritten(offset: number): Promise<void> {
    if (this.highWatermark >= offset || this.nextOffset < offset) return Promise.resolve();
    return new Promise((resolve) => this.offsetWaiters.push({ offset, resolve }));
  }

  private settleOffsetWaiters(): void {
    if (this.offsetWaiters.length === 0) return;
    const idle = !this.pumping && this.queue.length === 0;
    this.offsetWaiters = this.offsetWaiters.filter((w) => {
      const settled = this.highWatermark >= w.offset || this.nextOffset < w.offset || idle;
      if (settled) w.resolve();
      return !settled;
    });
  }

  private startTimer(): void {
    this.stopTimer();
    if (this.config.fsyncPolicy !== 'interval') return;
    this.timer = setInterval(() => this.syncInBackground(), this.config.fsyncIntervalMs);
    this.timer.unref();
  }

  /**
   * The fsync a flush waits for (in a sync round, or at the end of a write round). The timer
   * starts none beside it: of two concurrent fsyncs of one file, a writeback error may reach only
   * one, and a flush must not resolve while the timer's fsync gets the error.
   */
  private async foregroundSync(segment: Segment): Promise<void> {
    this.foregroundSyncing = true;
    try {
      await segment.sync();
      this.dirty = false;
    } finally {
      this.foregroundSyncing = false;
    }
  }

  /**
   * The periodic fsync of the 'interval' policy. It runs beside the write rounds, not between
   * them: an fdatasync of the active segment's file is safe while writes go on, and appends under
   * 'interval' are acknowledged once in the page cache, so none waits for it. (Queued as a sync
   * round, it made the round after each tick wait for an fsync of up to a second of writes:
   * stalls of 0.2-0.3 s at ~700 MB/s.) The segment is pinned, so neither a roll nor close can
   * close its file meanwhile. A failure turns the log read-only, as any failed fsync does.
   * `dirty` is cleared when it starts; whatever waits for durability (flush, a round that syncs
   * for a flush, close) awaits it first.
   */
  private syncInBackground(): void {
    if (!this.dirty || this.closed || this.readOnlyCause !== null || this.backgroundSync !== null || this.foregroundSyncing) return;
    const segment = this.active();
    // Writes from now on mark the log dirty again for the next tick.
    this.dirty = false;
    const job = this.backgroundSyncs.schedule(async () => {
      this.syncingSegment = segment;
      try {
        await segment.sync();
      } finally {
        this.syncingSegment = null;
      }
    });
    this.queuedSync = job;
    this.backgroundSync = this.pinned(segment, async () => void (await job.done))
      .catch((error: unknown) => this.goReadOnly(error))
      .finally(() => {
        this.backgroundSync = null;
        this.queuedSync = null;
      });
  }

  /**
   * Waits for the timer fsync before an fsync of the caller's own. One still waiting for a slot
   * is dropped instead (the caller's fsync covers what it would have), so a flush never queues
   * behind the timer fsyncs of other logs.
   */
  private async settleBackgroundSync(): Promise<void> {
    if (this.queuedSync?.cancel() === true) this.dirty = true;
    await this.backgroundSync;
  }

  private stopTimer(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  updateConfig(config: LogConfig): void {
    assertValidConfig(config);
    const policyChanged = config.fsyncPolicy !== this.config.fsyncPolicy || config.fsyncIntervalMs !== this.config.fsyncIntervalMs;
    this.config = config;
    if (policyChanged && !this.closed) this.startTimer();
  }

  onAppend(listener: (highWatermark: number) => void): () => void {
    if (this.listenersClosed) {
      queueMicrotask(() => listener(this.highWatermark));
      return () => undefined;
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // ---- Reads -----------------------------------------------------------------------------------

  async read(offset: number, options: ReadOptions): Promise<StoredBatch[]> {
    if (this.closed) throw closedError();
    if (offset < this.logStartOffset || offset > this.nextOffset) throw outOfRange(offset, this.logStartOffset, this.nextOffset);
    if (offset >= this.highWatermark) return [];
    const endOffset = Math.min(this.highWatermark, options.maxOffset ?? Infinity);
    const selector = new ReadSelector(offset, endOffset, options.maxBytes);
    const segments = this.segments.slice(this.segmentIndexFor(offset, this.segments));
    const slices = options.lease !== undefined && options.fileSlicesMin !== undefined ? { lease: options.lease, min: Math.max(options.fileSlicesMin, fileSliceHeadBytes) } : null;
    // Every segment the read may reach is pinned now, before the first await: retention or
    // compaction may retire one while an earlier one is being read.
    await this.pinnedAll(segments, async () => {
      for (const segment of segments) {
        // A segment starting at or past the end holds nothing wanted (a read stopped by the
        // index at endOffset does not mark the selector done).
        if (selector.done || segment.baseOffset >= endOffset) break;
        if (segment.nextOffset <= offset) continue;
        await this.readSegment(segment, offset, endOffset, selector, options.maxBytes, options.lease, slices);
      }
    });
    return selector.batches;
  }

  /** Index of the last segment whose base is <= offset (0 when offset precedes them all). */
  private segmentIndexFor(offset: number, segments: Segment[]): number {
    let lo = 0;
    let hi = segments.length - 1;
    let found = 0;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (segments[mid]!.baseOffset <= offset) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  private pinned<T>(segment: Segment, task: () => Promise<T>): Promise<T> {
    return this.pinnedAll([segment], task);
  }

  /**
   * Runs `task` with every one of `segments` pinned. The pins are taken synchronously, so a
   * caller that passes a copy of `this.segments` taken in the same tick holds them all before
   * anything can retire one; their files stay open (unlinked or replaced, at worst) until released.
   */
  private async pinnedAll<T>(segments: readonly Segment[], task: () => Promise<T>): Promise<T> {
    const held: Segment[] = [];
    let outcome: { ok: true; value: T } | { ok: false; error: unknown };
    try {
      for (const segment of segments) {
        segment.acquire();
        held.push(segment);
      }
      outcome = { ok: true, value: await task() };
    } catch (error) {
      outcome = { ok: false, error };
    }
    // Every pin is released even if closing one retired segment's files fails.
    const released = await Promise.allSettled(held.map((s) => s.release()));
    if (!outcome.ok) throw outcome.error;
    const failed = released.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    return outcome.value;
  }

  /**
   * Reads from the indexed position with one pread sized for maxBytes plus the index gap, and
   * offers the whole envelopes in it to the selector; payloads are views of that one buffer. Only
   * when the window ends before the wanted data (a batch bigger than the window, or a long gap)
   * does it read again from where it stopped.
   *
   * With `slices` (reads with `fileSlicesMin`): an envelope whose payload is at least `slices.min`
   * bytes and runs past the bytes read so far is offered as a file slice (its header and first
   * fileSliceHeadBytes read, the rest not), and the segment stays pinned until the lease is
   * released; one wholly inside them is offered as read. After a large envelope the next pread is
   * a small window (the index gap plus one header and head); after small batches, the usual
   * window. The first pread is small when this log's last sliced read met a large envelope.
   */
  private async readSegment(segment: Segment, offset: number, endOffset: number, selector: ReadSelector, maxBytes: number, lease: BufferLease | undefined, slices: { lease: BufferLease; min: number } | null): Promise<void> {
    let position = segment.offsetIndex.lookup(Math.max(offset, segment.baseOffset)).position;
    // Nothing at or past the first indexed batch from endOffset on is wanted: with maxOffset (an
    // Iggy poll of N messages, a read_committed fetch) the read stops there instead of filling
    // a window of maxBytes.
    const limit = Math.min(segment.size, segment.offsetIndex.positionAtOrAfter(endOffset) ?? Infinity);
    const sliceMin = slices?.min ?? Infinity;
    const smallWindow = this.config.indexIntervalBytes + envelopeHeaderBytes + fileSliceHeadBytes;
    // The wanted batch usually starts within indexIntervalBytes of the indexed position.
    const largeWindow = maxBytes + this.config.indexIntervalBytes + envelopeHeaderBytes;
    let window = slices !== null && this.slicedReadsMeetLarge ? smallWindow : largeWindow;
    let pinned = false;
    let sawLarge = false;
    try {
      while (position < limit && !selector.done) {
        const buf = await segment.readRange(position, Math.min(limit - position, window), lease);
        let at = 0;
        // Whether a large envelope was met: the next window is then a small one.
        let metLarge = false;
        while (at < buf.length) {
          const header = decodeEnvelopeHeader(buf, at);
          if (header === 'truncated') break;
          if (typeof header === 'string') throw new QuartetError('storage_error', `corrupt envelope in ${segment.paths.log} at ${position + at}: ${header}`);
          const bytes = envelopeBytes(header);
          if (header.payloadLength >= sliceMin) sawLarge = metLarge = true;
          if (slices !== null && header.payloadLength >= sliceMin && at + bytes > buf.length) {
            // Its head must be in this window (else it is read again from here), and all of it in
            // the segment (a rollback may have shrunk it under this read).
            if (at + envelopeHeaderBytes + fileSliceHeadBytes > buf.length) break;
            if (position + at + bytes > segment.size) return;
            const batch = storedBatchOf(header, buf, at);
            batch.payload = batch.payload.subarray(0, fileSliceHeadBytes);
            batch.file = { fd: segment.logFd, position: position + at + envelopeHeaderBytes, length: header.payloadLength };
            if (!pinned) {
              segment.acquire();
              slices.lease.onRelease(() => void segment.release().catch((error: unknown) => this.logger.warn('closing a retired segment failed', { error })));
              pinned = true;
            }
            at += bytes;
            if (!selector.offer(batch)) return;
            continue;
          }
          if (at + bytes > buf.length) break;
          if (!selector.offer(storedBatchOf(header, buf, at))) return;
          at += bytes;
        }
        if (at === 0) {
          // One envelope larger than the window (a small one, when slicing): read exactly it. A
          // header cut short (or a large one whose head is cut) means a rollback shrank the
          // segment under this read: nothing more is readable here.
          const header = decodeEnvelopeHeader(buf, 0);
          if (typeof header === 'string' || header.payloadLength >= sliceMin) return;
          const whole = await segment.readRange(position, envelopeBytes(header), lease);
          if (whole.length < envelopeBytes(header)) return;
          if (!selector.offer(storedBatchOf(header, whole, 0))) return;
          at = whole.length;
        }
        position += at;
        window = metLarge ? smallWindow : largeWindow;
      }
    } finally {
      // A sliced read that met no large batch brings the usual first window back.
      if (slices !== null) this.slicedReadsMeetLarge = sawLarge;
    }
  }

  async wholePayload(batch: StoredBatch, lease?: BufferLease): Promise<StoredBatch> {
    if (batch.file === undefined) return batch;
    // The slice's segment is pinned by the lease of the read that returned it: its fd is open.
    const { file, ...rest } = batch;
    const payload = lease ? lease.buffer(file.length) : Buffer.allocUnsafe(file.length);
    const n = await readFully(this.fsys, file.fd, payload, file.position);
    if (n !== file.length) throw new QuartetError('storage_error', `a file slice of ${file.length} bytes read back ${n}`);
    return { ...rest, payload };
  }

  /** Envelopes of `segment` from the indexed position at or before `fromOffset`, to its end. */
  private async *segmentEnvelopes(segment: Segment, fromOffset: number, verifyChecksum = false): AsyncGenerator<ScannedEnvelope> {
    const start = segment.offsetIndex.lookup(Math.max(fromOffset, segment.baseOffset)).position;
    let failure: string | null = null;
    yield* scanEnvelopes(this.fsys, segment.logFd, start, segment.size, { verifyChecksum }, (stop) => (failure = `${stop.problem} at ${stop.position}`));
    if (failure !== null) throw new QuartetError('storage_error', `corrupt segment ${segment.paths.log}: ${failure}`);
  }

  async offsetForTimestamp(timestamp: number): Promise<number | null> {
    if (this.closed) throw closedError();
    const segments = this.segments;
    // Pinned together before the first await, like a read (see pinnedAll).
    return this.pinnedAll(segments, async () => {
      for (const segment of segments) {
        if (segment.maxTimestamp === null || segment.maxTimestamp < timestamp || segment.nextOffset <= this.logStartOffset) continue;
        const from = Math.max(segment.timeIndex.scanStart(timestamp), this.logStartOffset);
        for await (const { header } of this.segmentEnvelopes(segment, from)) {
          if (header.baseOffset >= this.highWatermark) return null;
          const lastOffset = header.baseOffset + header.recordCount - 1;
          if (lastOffset >= this.logStartOffset && header.maxTimestamp >= timestamp) return Math.max(header.baseOffset, this.logStartOffset);
        }
      }
      return null;
    });
  }

  async maxTimestampOffset(): Promise<{ offset: number; timestamp: number } | null> {
    if (this.closed) throw closedError();
    const segments = this.segments;
    // Pinned together before the first await, like a read (see pinnedAll).
    return this.pinnedAll(segments, async () => {
      let best: { offset: number; timestamp: number } | null = null;
      for (const segment of segments) {
        if (segment.maxTimestamp === null || segment.nextOffset <= this.logStartOffset) continue;
        if (best !== null && segment.maxTimestamp <= best.timestamp) continue;
        const exact = segment.baseOffset >= this.logStartOffset && segment.offsetOfMaxTimestamp < this.highWatermark;
        const candidate = exact ? { offset: segment.offsetOfMaxTimestamp, timestamp: segment.maxTimestamp } : await this.scanMaxTimestamp(segment);
        if (candidate !== null && (best === null || candidate.timestamp > best.timestamp)) best = candidate;
      }
      return best;
    });
  }

  /** The max timestamp among a (pinned) segment's readable batches at or after the log start. */
  private async scanMaxTimestamp(segment: Segment): Promise<{ offset: number; timestamp: number } | null> {
    let best: { offset: number; timestamp: number } | null = null;
    for await (const { header } of this.segmentEnvelopes(segment, this.logStartOffset)) {
      if (header.baseOffset >= this.highWatermark) break;
      const lastOffset = header.baseOffset + header.recordCount - 1;
      if (lastOffset < this.logStartOffset) continue;
      if (best === null || header.maxTimestamp > best.timestamp) best = { offset: lastOffset, timestamp: header.maxTimestamp };
    }
    return best;
  }

  // ---- Deletion, retention, compaction ---------------------------------------------------------

  deleteRecordsBefore(offset: number): Promise<number> {
    if (this.closed) return Promise.reject(closedError());
    return this.maintenance.run(async () => {
      if (offset < 0 || offset > this.highWatermark) throw outOfRange(offset, this.logStartOffset, this.highWatermark);
      if (offset > this.logStartOffset) await this.advanceLogStart(offset);
      return this.logStartOffset;
    });
  }

  truncateAll(): Promise<void> {
    if (this.closed) return Promise.reject(closedError());
    const target = this.nextOffset;
    return this.maintenance.run(async () => {
      await this.whenWritten(target);
      const end = Math.min(target, this.highWatermark);
      if (end > this.logStartOffset) await this.advanceLogStart(end);
    });
  }

  /**
   * Iggy DeleteSegments: the oldest `count` sealed segments go, never the active one (see
   * PartitionLog). The new start is the base of the first segment kept; it is checkpointed before
   * any file is deleted, like every advance of the log start.
   */
  deleteOldestSegments(count: number, options: DeleteSegmentsOptions = {}): Promise<CleanupResult> {
    if (this.closed) return Promise.reject(closedError());
    try {
      checkSegmentCount(count);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.maintenance.run(async () => {
      const result: CleanupResult = { segmentsDeleted: 0, bytesDeleted: 0, recordsRemoved: 0 };
      const n = oldestSegmentsToDelete(this.segments.map((s) => s.nextOffset), count, options.before);
      if (n === 0) return result;
      const doomed = this.segments.slice(0, n);
      // Sealed segments were written before the next one began, so the base of the first kept
      // segment is at or below the high watermark.
      const target = Math.min(this.segments[n]!.baseOffset, this.highWatermark);
      for (const segment of doomed) {
        result.bytesDeleted += segment.size;
        result.recordsRemoved += Math.max(0, segment.nextOffset - Math.max(segment.baseOffset, this.logStartOffset));
      }
      if (target > this.logStartOffset) await this.advanceLogStart(target);
      result.segmentsDeleted = doomed.filter((s) => !this.segments.includes(s)).length;
      return result;
    });
  }

  /**
   * Moves the log start, then drops segments below it. The checkpoint is written first and the
   * new start is taken in memory only once it is durable: a crash cannot resurrect records, and a
   * failed write leaves the start where it was, so the call rejects and a retry writes it again
   * (instead of finding the start already moved and reporting success).
   */
  private async advanceLogStart(offset: number): Promise<void> {
    assert.ok(offset > this.logStartOffset && offset <= this.highWatermark, 'the log start only advances, up to the high watermark');
    try {
      await writeCheckpoint(this.fsys, this.dir, offset);
    } catch (error) {
      throw storageError('cannot write the log start checkpoint', error);
    }
    this.logStartOffset = Math.max(this.logStartOffset, offset);
    await this.io.run(async () => {
      const active = this.active();
      if (!active.isEmpty && active.nextOffset <= offset) {
        try {
          await this.rollActive(active.nextOffset);
        } catch (error) {
          throw storageError('segment roll failed', error);
        }
        this.resetAssignment();
      }
    });
    await this.dropSegments((segments) => (segments.length > 1 && segments[1]!.baseOffset <= this.logStartOffset ? 1 : 0));
  }

  /** Deletes the oldest segments one at a time while `howMany` says so (never the active one). */
  private async dropSegments(howMany: (segments: Segment[]) => number): Promise<CleanupResult> {
    const result: CleanupResult = { segmentsDeleted: 0, bytesDeleted: 0, recordsRemoved: 0 };
    while (howMany(this.segments) > 0 && this.segments.length > 1) {
      const [oldest, ...rest] = this.segments;
      result.segmentsDeleted += 1;
      result.bytesDeleted += oldest!.size;
      result.recordsRemoved += oldest!.nextOffset - Math.max(oldest!.baseOffset, Math.min(this.logStartOffset, oldest!.nextOffset));
      // In the same tick as the segment leaves the list, before its files go: a read of one of
      // its offsets from now on is out of range (not answered with the batches after them).
      this.segments = rest;
      this.logStartOffset = Math.max(this.logStartOffset, rest[0]!.baseOffset);
      try {
        await oldest!.delete();
      } catch (error) {
        throw storageError(`cannot delete segment ${oldest!.paths.log}`, error);
      }
    }
    return result;
  }

  applyRetention(now: number): Promise<CleanupResult> {
    if (this.closed) return Promise.reject(closedError());
    return this.maintenance.run(async () => {
      await this.rollIfAged(now);
      const { retentionMs, retentionBytes } = this.config;
      const result = await this.dropSegments((segments) => {
        const oldest = segments[0]!;
        const aged = retentionMs >= 0 && (oldest.maxTimestamp === null || oldest.maxTimestamp < now - retentionMs);
        const oversize = retentionBytes >= 0 && segments.reduce((n, s) => n + s.size, 0) > retentionBytes;
        return aged || oversize ? 1 : 0;
      });
      this.logStartOffset = Math.max(this.logStartOffset, this.segments[0]!.baseOffset);
      return result;
    });
  }

  private rollIfAged(now: number): Promise<void> {
    return this.io.run(async () => {
      const active = this.active();
      const { segmentMs } = this.config;
      if (segmentMs <= 0 || active.isEmpty || active.firstAppendTime === null || now - active.firstAppendTime < segmentMs) return;
      try {
        await this.rollActive(active.nextOffset);
      } catch (error) {
        throw storageError('segment roll failed', error);
      }
      this.resetAssignment();
    });
  }

  compact(now: number): Promise<CleanupResult> {
    if (this.closed) return Promise.reject(closedError());
    return this.maintenance.run(async () => {
      const result: CleanupResult = { segmentsDeleted: 0, bytesDeleted: 0, recordsRemoved: 0 };
      if (!this.config.cleanupPolicy.includes('compact')) return result;
      // Only segments recovery trusts (below the recovery point): after an unclean stop the others
      // are checked for lost data, and the gaps compaction leaves would look like it.
      await this.settleSealSync();
      const sealed = this.segments.slice(0, -1).filter((s) => s.baseOffset < this.recoveryPoint);
      const keys = new CompactionKeyMap(this.formats);
      for (const segment of sealed) {
        await this.pinned(segment, async () => {
          for await (const envelope of this.segmentEnvelopes(segment, segment.baseOffset)) keys.add(batchOf(envelope));
        });
      }
      const deadline = tombstoneDeadline(this.config, now);
      for (const segment of sealed) {
        const { bytesDeleted, recordsRemoved } = await this.compactSegment(segment, keys, deadline);
        result.bytesDeleted += bytesDeleted;
        result.recordsRemoved += recordsRemoved;
      }
      return result;
    });
  }

  /**
   * Rewrites one sealed segment into `<base>.log.cleaned` (+ indexes), syncs it, and installs it
   * over the original. A segment where every batch survives is left alone.
   */
  private async compactSegment(segment: Segment, keys: CompactionKeyMap, deadline: number): Promise<{ bytesDeleted: number; recordsRemoved: number }> {
    const cleaned = await Segment.create(this.fsys, this.dir, segment.baseOffset, this.config.indexIntervalBytes, cleanedSuffix);
    let recordsRemoved = 0;
    let changed = false;
    try {
      await this.pinned(segment, async () => {
        const out = new BatchWriter(cleaned);
        for await (const envelope of this.segmentEnvelopes(segment, segment.baseOffset, true)) {
          const batch = batchOf(envelope);
          const outcome = compactBatch(batch, keys, this.formats, deadline);
          if (outcome.kind === 'keep') {
            await out.add(batch, envelope.buffer.subarray(envelope.at, envelope.at + envelopeHeaderBytes), batch.payload);
            continue;
          }
          changed = true;
          recordsRemoved += outcome.recordsRemoved;
          if (outcome.kind === 'rewrite') {
            const request = outcome.request;
            const header = encodeEnvelopeHeader(request, batch.baseOffset, request.payload);
            await out.add({ ...batch, recordCount: request.recordCount, maxTimestamp: request.maxTimestamp }, header, request.payload);
          }
        }
        await out.finish();
      });
      if (!changed) {
        await cleaned.delete();
        return { bytesDeleted: 0, recordsRemoved: 0 };
      }
      await cleaned.seal();
      await this.io.run(async () => {
        await cleaned.installOver();
        this.segments = this.segments.map((s) => (s === segment ? cleaned : s));
      });
    } catch (error) {
      await cleaned.delete().catch(() => undefined);
      throw storageError(`compaction of ${segment.paths.log} failed`, error);
    }
    await segment.retire();
    return { bytesDeleted: segment.size - cleaned.size, recordsRemoved };
  }

  // ---- Lifecycle -------------------------------------------------------------------------------

  isClosed(): boolean {
    return this.closed;
  }

  async close(): Promise<void> {
    if (this.closed) throw closedError();
    this.closed = true;
    this.stopTimer();
    let failure: unknown = null;
    try {
      await this.whenWritten(this.nextOffset);
      await this.settleSyncs();
      await this.maintenance.run(() =>
        this.io.run(async () => {
          // A roll made by maintenance after the wait above may have started another seal.
          await this.settleSealSync();
          if (this.readOnlyCause !== null) return;
          try {
            await this.active().syncAll();
            await this.writeCleanShutdownMarker();
          } catch (error) {
            failure = error;
          }
        }),
      );
    } finally {
      // The appends given before close are readable now; whoever waits for the next learns it will not come.
      this.listenersClosed = true;
      notifyClosing(this.listeners, this.highWatermark);
    }
    for (const segment of this.segments) await segment.retire();
    if (failure !== null) throw storageError('flush on close failed', failure);
  }

  private async writeCleanShutdownMarker(): Promise<void> {
    const fd = await this.fsys.open(join(this.dir, cleanShutdownFileName), 'w+');
    await this.fsys.close(fd);
    await this.fsys.fsyncDir(this.dir);
  }

  async destroy(): Promise<void> {
    if (!this.closed) await this.close().catch(() => undefined);
    await this.fsys.rm(this.dir);
  }

  private active(): Segment {
    return this.segments.at(-1)!;
  }
}

function batchOf(envelope: ScannedEnvelope): StoredBatch {
  return storedBatchOf(envelope.header, envelope.buffer, envelope.at);
}

/** Collects envelopes for a segment being rewritten and writes them in ~1 MiB writevs. */
class BatchWriter {
  private metas: BatchMeta[] = [];
  private chunks: Buffer[] = [];
  private bytes = 0;

  constructor(private readonly segment: Segment) {}

  async add(meta: BatchMeta, header: Buffer, payload: Buffer): Promise<void> {
    this.metas.push({ baseOffset: meta.baseOffset, recordCount: meta.recordCount, maxTimestamp: meta.maxTimestamp });
    this.chunks.push(header, payload);
    this.bytes += header.length + payload.length;
    if (this.bytes >= compactionWriteBytes || this.metas.length >= appendsPerWriteMax) await this.finish();
  }

  async finish(): Promise<void> {
    if (this.metas.length === 0) return;
    await this.segment.append(this.metas, this.chunks, this.bytes);
    this.metas = [];
    this.chunks = [];
    this.bytes = 0;
  }
}
