// What the parts of a FileLog share (file-log.ts): the segments, the log's offsets, its config and
// I/O seams, and the two locks, in one LogState the write path (file-log-writes.ts), the read path
// (file-log-reads.ts) and the cleanup passes (file-log-cleanup.ts) each hold. Also the helpers they
// all use: segment pins, the storage error, a new active segment's preallocation.

import { QuartetError } from '../base/errors.js';
import type { Clock } from '../base/clock.js';
import type { Logger } from '../base/logger.js';
import type { FormatRegistry } from './formats.js';
import type { LogFileSystem } from './fs.js';
import type { CorruptBatches } from './integrity.js';
import type { Segment } from './segment.js';
import type { LogConfig } from './types.js';

/** A FIFO async lock: each task runs after the previous one settles. */
export class Mutex {
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

/**
 * The state of one partition log that its parts share. `io` serialises everything that touches
 * the active segment (write rounds, syncs, rolls, compaction installs); `maintenance` serialises
 * the slow whole-log passes (retention, compaction, deleteRecordsBefore, truncateAll).
 */
export class LogState {
  /** Next offset to assign. */
  nextOffset: number;
  /** Offsets below this are readable: written, and under 'always' synced. */
  highWatermark: number;
  closed = false;
  readonly io = new Mutex();
  readonly maintenance = new Mutex();

  constructor(
    readonly dir: string,
    public config: LogConfig,
    readonly fsys: LogFileSystem,
    readonly clock: Clock,
    readonly logger: Logger,
    readonly formats: FormatRegistry,
    public segments: Segment[],
    public logStartOffset: number,
    /** The recovery point on disk: segments below it are synced. */
    public recoveryPoint: number,
    /** Batches found corrupt on disk (integrity.ts): never served. */
    readonly corrupt: CorruptBatches,
  ) {
    const active = this.active();
    if (!active.isEmpty) active.firstAppendTime = clock.now();
    this.nextOffset = active.nextOffset;
    this.highWatermark = active.nextOffset;
  }

  active(): Segment {
    return this.segments.at(-1)!;
  }
}

export function storageError(message: string, cause: unknown): QuartetError {
  const detail = cause instanceof Error ? `: ${cause.message}` : '';
  return new QuartetError('storage_error', `${message}${detail}`, cause);
}

/** What a new active segment reserves on disk (LogConfig.preallocate): its whole size, or nothing. */
export function preallocateBytesOf(config: LogConfig): number {
  return config.preallocate === true ? config.segmentBytes : 0;
}

export function pinned<T>(segment: Segment, task: () => Promise<T>): Promise<T> {
  return pinnedAll([segment], task);
}

/**
 * Runs `task` with every one of `segments` pinned. The pins are taken synchronously, so a
 * caller that passes a copy of `state.segments` taken in the same tick holds them all before
 * anything can retire one; their files stay open (unlinked or replaced, at worst) until released.
 */
export async function pinnedAll<T>(segments: readonly Segment[], task: () => Promise<T>): Promise<T> {
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
