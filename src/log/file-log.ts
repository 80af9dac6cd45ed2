// A PartitionLog over a directory of segments (see docs/log-format.md for the layout). FileLog is
// the PartitionLog face over parts that share one LogState (file-log-state.ts):
//
//   file-log-recovery.ts  opening the directory: recovery after a clean or an unclean stop
//   file-log-writes.ts    offset assignment, write rounds (one writev each), rolls, fsync policies
//   file-log-reads.ts     batch reads (views of one pread, or file slices), timestamp lookups
//   file-log-cleanup.ts   moving the log start, retention, compaction
//
// Concurrency: `io` serialises everything that touches the active segment (write rounds, syncs,
// rolls, compaction installs); `maintenance` serialises the slow whole-log passes (retention,
// compaction, deleteRecordsBefore, truncateAll) against each other. A reader pins every segment
// it may read, all at once before its first await, so retention and compaction never close a file
// under a read; retention moves the log start before it unlinks anything.

import { join } from 'node:path';
import { systemClock, type Clock } from '../base/clock.js';
import { QuartetError } from '../base/errors.js';
import { silentLogger, type Logger } from '../base/logger.js';
import type { BufferLease } from '../base/buffer-pool.js';
import { assertValidConfig, closedError } from './common.js';
import { defaultDirectWriteGate, type DirectWriteGate } from './direct-write.js';
import { CompactionWork, type LogOffload } from './compaction-offload.js';
import { LogCleanup } from './file-log-cleanup.js';
import { ReadPath } from './file-log-reads.js';
import { cleanShutdownFileName, recoverDirectory, type RecoveredLog } from './file-log-recovery.js';
import { LogState, storageError } from './file-log-state.js';
import { WritePath } from './file-log-writes.js';
import { createFormatRegistry, type FormatRegistry } from './formats.js';
import { nodeFileSystem, type LogFileSystem } from './fs.js';
import type { Segment } from './segment.js';
import { CorruptBatches, scrubLog, type CorruptBatch, type CorruptBatchListener, type ScrubPosition, type ScrubProgress } from './integrity.js';
import { defaultBackgroundSyncSlots, type TaskSlots } from './task-slots.js';
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

export { cleanShutdownFileName };

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
  /** Told once about each batch found corrupt on disk (integrity.ts); it is logged either way. */
  onCorruptBatch?: CorruptBatchListener;
  /** Compaction's large batches are decoded and encoded on this pool (compaction-offload.ts); none: inline. */
  offload?: LogOffload;
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
    const corrupt = new CorruptBatches(logger, options.onCorruptBatch ?? null);
    return new FileLog(dir, config, fsys, options.clock ?? systemClock, logger, options.formats ?? createFormatRegistry(), recovered, directWrites, backgroundSyncs, corrupt, options.offload ?? null);
  } catch (error) {
    if (error instanceof QuartetError) throw error;
    throw storageError(`cannot open the log in ${dir}`, error);
  }
}

export class FileLog implements PartitionLog {
  private readonly state: LogState;
  private readonly writes: WritePath;
  private readonly reads: ReadPath;
  private readonly cleanup: LogCleanup;

  constructor(
    readonly dir: string,
    config: LogConfig,
    fsys: LogFileSystem,
    clock: Clock,
    logger: Logger,
    formats: FormatRegistry,
    recovered: RecoveredLog,
    directWrites: DirectWriteGate | null,
    backgroundSyncs: TaskSlots,
    corrupt: CorruptBatches,
    offload: LogOffload | null = null,
  ) {
    this.state = new LogState(dir, config, fsys, clock, logger, formats, recovered.segments, recovered.logStartOffset, recovered.recoveryPoint, corrupt);
    this.writes = new WritePath(this.state, directWrites, backgroundSyncs);
    this.reads = new ReadPath(this.state);
    this.cleanup = new LogCleanup(this.state, this.writes, new CompactionWork(formats, offload));
  }

  get config(): LogConfig {
    return this.state.config;
  }

  /** The segments, oldest first (a test counts the reads made through them). */
  private get segments(): Segment[] {
    return this.state.segments;
  }

  stats(): LogStats {
    return {
      logStartOffset: this.state.logStartOffset,
      nextOffset: this.state.nextOffset,
      highWatermark: this.state.highWatermark,
      sizeBytes: this.segments.reduce((n, s) => n + s.size, 0),
      segmentCount: this.segments.length,
    };
  }

  // ---- Appends (file-log-writes.ts) ------------------------------------------------------------

  append(request: AppendRequest): Promise<AppendResult> {
    return this.writes.append(request);
  }

  assign(request: AppendRequest): AssignedAppend {
    return this.writes.assign(request);
  }

  flush(): Promise<void> {
    return this.writes.flush();
  }

  updateConfig(config: LogConfig): void {
    this.writes.updateConfig(config);
  }

  onAppend(listener: (highWatermark: number) => void): () => void {
    return this.writes.onAppend(listener);
  }

  // ---- Reads (file-log-reads.ts) ---------------------------------------------------------------

  read(offset: number, options: ReadOptions): Promise<StoredBatch[]> {
    return this.reads.read(offset, options);
  }

  wholePayload(batch: StoredBatch, lease?: BufferLease): Promise<StoredBatch> {
    return this.reads.wholePayload(batch, lease);
  }

  offsetForTimestamp(timestamp: number): Promise<number | null> {
    return this.reads.offsetForTimestamp(timestamp);
  }

  checkBatch(batch: StoredBatch): Promise<CorruptBatch | null> {
    return this.reads.checkBatch(batch);
  }

  // ---- Integrity (integrity.ts) ----------------------------------------------------------------

  corruptBatches(): CorruptBatch[] {
    return this.state.corrupt.readable(this.segments, this.state.logStartOffset);
  }

  scrub(from: ScrubPosition | null, bytesMax: number): Promise<ScrubProgress> {
    return scrubLog(this.state, from, bytesMax);
  }

  maxTimestampOffset(): Promise<{ offset: number; timestamp: number } | null> {
    return this.reads.maxTimestampOffset();
  }

  // ---- Deletion, retention, compaction (file-log-cleanup.ts) -----------------------------------

  deleteRecordsBefore(offset: number): Promise<number> {
    return this.cleanup.deleteRecordsBefore(offset);
  }

  truncateAll(): Promise<void> {
    return this.cleanup.truncateAll();
  }

  deleteOldestSegments(count: number, options: DeleteSegmentsOptions = {}): Promise<CleanupResult> {
    return this.cleanup.deleteOldestSegments(count, options);
  }

  applyRetention(now: number): Promise<CleanupResult> {
    return this.cleanup.applyRetention(now);
  }

  compact(now: number): Promise<CleanupResult> {
    return this.cleanup.compact(now);
  }

  // ---- Lifecycle -------------------------------------------------------------------------------

  isClosed(): boolean {
    return this.state.closed;
  }

  async close(): Promise<void> {
    if (this.state.closed) throw closedError();
    this.state.closed = true;
    this.writes.stopTimer();
    let failure: unknown = null;
    try {
      await this.writes.whenWritten(this.state.nextOffset);
      await this.writes.settleSyncs();
      await this.state.maintenance.run(() =>
        this.state.io.run(async () => {
          // A roll made by maintenance after the wait above may have started another seal.
          await this.writes.settleSealSync();
          if (this.writes.readOnlyCause !== null) return;
          try {
            await this.state.active().syncAll();
            await this.writeCleanShutdownMarker();
          } catch (error) {
            failure = error;
          }
        }),
      );
    } finally {
      this.writes.closeListeners();
    }
    for (const segment of this.segments) await segment.retire();
    if (failure !== null) throw storageError('flush on close failed', failure);
  }

  private async writeCleanShutdownMarker(): Promise<void> {
    const fd = await this.state.fsys.open(join(this.state.dir, cleanShutdownFileName), 'w+');
    await this.state.fsys.close(fd);
    await this.state.fsys.fsyncDir(this.state.dir);
  }

  async destroy(): Promise<void> {
    if (!this.state.closed) await this.close().catch(() => undefined);
    await this.state.fsys.rm(this.state.dir);
  }
}
