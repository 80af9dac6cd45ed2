// The write path of a FileLog (file-log.ts): offsets assigned at append time, write rounds, segment
// rolls and the fsync policies.
//
// assign() (and append(), which awaits it) assigns offsets synchronously, has the batch's format
// codec stamp them in, encodes the envelope header, and queues the (header, payload) pair. One pump
// per partition drains the queue: while a write is in flight, appends pile up, and the next round
// sends all of them in one writev (no concatenation), then — under fsyncPolicy 'always' — one
// fdatasync shared by every append in the round (group commit). Results resolve in offset order
// after the round. Any failure rolls the segment back to its state before the round and rejects
// that round and everything queued behind it. Under 'interval' a timer fsyncs in the background.

import assert from 'node:assert/strict';
import { clockMicros } from '../base/clock.js';
import type { QuartetError } from '../base/errors.js';
import { LogRateLimiter } from '../base/logger.js';
import { writeRecoveryPoint } from './checkpoint.js';
import {
  assertValidConfig,
  atAppendTime,
  checkAppendRequest,
  closedError,
  notifyClosing,
  segmentFull,
  segmentOffsetSpanMax,
  stampAssigned,
  storedBytes,
} from './common.js';
import type { DirectWriteGate } from './direct-write.js';
import { encodeEnvelopeHeader } from './envelope.js';
import { pinned, preallocateBytesOf, storageError, type LogState } from './file-log-state.js';
import type { ScheduledTask, TaskSlots } from './task-slots.js';
import { Segment, type BatchMeta, type SegmentState } from './segment.js';
import type { AppendRequest, AppendResult, AssignedAppend, LogConfig } from './types.js';

/** Appends per writev: two iovecs each, inside Linux's IOV_MAX of 1024. */
export const appendsPerWriteMax = 512;
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

export class WritePath {
  private readonly queue: PendingAppend[] = [];
  private syncWaiters: Waiter[] = [];
  private offsetWaiters: Array<{ offset: number; resolve: () => void }> = [];
  private pumping = false;
  /** Written to the active segment since its last sync. */
  private dirty = false;
  /** Set when a rollback or sync failure leaves the files in doubt: appends reject, reads work. */
  readOnlyCause: unknown = null;
  private timer: NodeJS.Timeout | null = null;
  /** The timer's fsync while it runs (syncInBackground). */
  private backgroundSync: Promise<void> | null = null;
  /** The sync of the segment sealed by the last roll under 'interval', while it runs (rollActive). */
  private sealSync: Promise<void> | null = null;
  /** That sync as scheduled on the process-wide slots (cancellable while it waits). */
  private sealJob: ScheduledTask<true> | null = null;
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
  // Where the next append lands, counting queued appends: rolls are decided at append time.
  private assignedBase: number;
  private assignedBytes: number;
  private assignedFirstAppendTime: number | null;
  /** A full disk fails every retry of every producer: one line a second per partition says so. */
  private readonly failureLines: LogRateLimiter;

  constructor(
    private readonly state: LogState,
    private readonly directWrites: DirectWriteGate | null,
    private readonly backgroundSyncs: TaskSlots,
  ) {
    const active = state.active();
    this.assignedBase = active.baseOffset;
    this.assignedBytes = active.size;
    this.assignedFirstAppendTime = active.firstAppendTime;
    this.failureLines = new LogRateLimiter(state.clock);
    this.startTimer();
  }

  append(request: AppendRequest): Promise<AppendResult> {
    try {
      return this.assign(request).written;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  assign(request: AppendRequest): AssignedAppend {
    if (this.state.closed) throw closedError();
    if (this.readOnlyCause !== null) throw storageError('the log is read-only after a storage failure', this.readOnlyCause);
    checkAppendRequest(request, this.state.config);
    const appendMicros = clockMicros(this.state.clock);
    const appendTime = Math.floor(appendMicros / 1000);
    request = atAppendTime(request, appendTime);
    const baseOffset = this.state.nextOffset;
    stampAssigned(this.state.formats, request, { baseOffset, appendTime, appendMicros });
    const length = request.payload.length;
    const bytes = storedBytes(length);
    const rollBefore = this.assignRoll(bytes, request.recordCount, appendTime, baseOffset);
    const rollAfter = this.assignRollAfter(baseOffset + request.recordCount);
    const header = encodeEnvelopeHeader(request, baseOffset, request.payload);
    this.state.nextOffset = baseOffset + request.recordCount;
    const meta: BatchMeta = { baseOffset, recordCount: request.recordCount, maxTimestamp: request.maxTimestamp };
    const written = new Promise<AppendResult>((resolve, reject) => {
      this.queue.push({ header, payload: request.payload, meta, bytes, appendTime, rollBefore, rollAfter, resolve, reject });
    });
    this.kick();
    return { baseOffset, lastOffset: baseOffset + request.recordCount - 1, appendTime, written };
  }

  /** Decides, at assignment time, whether this batch starts a new segment; updates the tally. */
  private assignRoll(bytes: number, recordCount: number, now: number, baseOffset: number): boolean {
    const { segmentMs } = this.state.config;
    const full = segmentFull(this.state.config, this.assignedBytes, bytes);
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
    if (this.state.config.segmentRoll !== 'after' || this.assignedBytes < this.state.config.segmentBytes) return false;
    this.assignedBase = nextBase;
    this.assignedBytes = 0;
    this.assignedFirstAppendTime = null;
    return true;
  }

  /** Recomputes the assignment tally from the active segment and the queue (after changes). */
  resetAssignment(): void {
    const active = this.state.active();
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
      await this.state.io.run(() => (this.queue.length > 0 ? this.writeRound() : this.syncRound()));
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
    const segment = this.state.active();
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
      const syncNow = this.state.config.fsyncPolicy === 'always' || this.syncWaiters.length > 0;
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
        segment.startWriteback(this.state.clock.now());
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
      this.state.logger.error('segment roll after a full segment failed', { baseOffset, error });
      this.resetAssignment();
    }
  }

  private takeRound(): PendingAppend[] {
    const bytesLimit = this.state.config.fsyncPolicy === 'always' ? bytesPerSyncedWriteMax : bytesPerWriteMax;
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
    assert.ok(highWatermark > this.state.highWatermark, 'the high watermark only grows');
    this.state.highWatermark = highWatermark;
    for (const entry of taken) {
      entry.resolve({
        baseOffset: entry.meta.baseOffset,
        lastOffset: entry.meta.baseOffset + entry.meta.recordCount - 1,
        appendTime: entry.appendTime,
        logStartOffset: this.state.logStartOffset,
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
    this.state.nextOffset = before.nextOffset;
    this.failureLines.log(this.state.logger, 'error', 'append failed', 'append failed; rolling back', { baseOffset: taken[0]!.meta.baseOffset, rejected: taken.length + rest.length, error: cause });
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
    this.state.nextOffset = rest[0]!.meta.baseOffset;
    for (const entry of rest) entry.reject(error);
    this.resetAssignment();
    this.settleOffsetWaiters();
  }

  private goReadOnly(cause: unknown): void {
    if (this.readOnlyCause === null) this.state.logger.error('the log is now read-only', { error: cause });
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
  async rollActive(baseOffset: number): Promise<void> {
    const old = this.state.active();
    if (old.isEmpty) return;
    assert.ok(baseOffset >= old.nextOffset, 'a new segment starts at or after the old end');
    // Whatever the policy now, a seal started under 'interval' is done before the next roll. Under
    // 'always' so is a timer fsync left from 'interval' (of two fsyncs of one file, a writeback
    // error reaches only one), so the point never moves past a failed one.
    const always = this.state.config.fsyncPolicy === 'always';
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
      this.state.segments = [...this.state.segments, await this.createSegment(baseOffset, true)];
      // Everything below the new segment is synced: recovery and compaction may trust it.
      await this.advanceRecoveryPoint(baseOffset);
      return;
    }
    // The old segment may be left unsynced only if the recovery point does not trust it: the open
    // put the point at the active segment, and each seal moves it to the next one, so it is at the
    // old segment's base now. (Writing it here instead cost 0.1-0.3 s at the roll of a 1 GiB
    // segment: its fsyncs made ext4 commit the journal, which in ordered mode first writes out the
    // big file's dirty data.)
    assert.ok(this.state.recoveryPoint <= old.baseOffset, 'the recovery point does not trust the active segment');
    // The directory fsync that makes the new segment's name durable is the seal's too: until it
    // is done, a flush waits (it waits for the seal).
    const segment = await this.createSegment(baseOffset, false);
    old.closeForAppends();
    this.state.segments = [...this.state.segments, segment];
    // What the old segment holds unsynced is the seal's to sync now; the new one is clean.
    this.dirty = false;
    const seal = async (): Promise<true> => {
      await old.finishSeal();
      await this.state.fsys.fsyncDir(this.state.dir);
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
    this.sealSync = pinned(old, async () => {
      try {
        if ((await job.done) === undefined) await seal();
      } catch (error) {
        failure = error;
      }
    })
      // Closing the files of a segment retired meanwhile failed: nothing to do with the seal.
      .catch((error: unknown) => this.state.logger.warn('closing a retired segment failed', { file: old.paths.log, error: String(error) }))
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
      await writeRecoveryPoint(this.state.fsys, this.state.dir, offset);
      this.state.recoveryPoint = offset;
    } catch (error) {
      this.state.logger.warn('cannot write the recovery point checkpoint', { dir: this.state.dir, offset, error: String(error) });
    }
  }

  private createSegment(baseOffset: number, syncDir: boolean): Promise<Segment> {
    return Segment.create(this.state.fsys, this.state.dir, baseOffset, this.state.config.indexIntervalBytes, '', preallocateBytesOf(this.state.config), syncDir);
  }

  /** Waits for the timer fsync, then for the background seal (settleBackgroundSync, settleSealSync). */
  async settleSyncs(): Promise<void> {
    await this.settleBackgroundSync();
    await this.settleSealSync();
  }

  /**
   * Waits for the background seal of the last sealed segment, if there is one (never rejects).
   * One still waiting for a slot runs at once instead, so nothing that waits for it queues
   * behind the timer fsyncs of other logs.
   */
  async settleSealSync(): Promise<void> {
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
        await this.foregroundSync(this.state.active());
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
    if (this.state.closed) return Promise.reject(closedError());
    return this.requestSync();
  }

  private requestSync(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.syncWaiters.push({ resolve, reject });
      this.kick();
    });
  }

  /** Resolves once offsets below `offset` are readable, or once they failed and were rolled back. */
  whenWritten(offset: number): Promise<void> {
    if (this.state.highWatermark >= offset || this.state.nextOffset < offset) return Promise.resolve();
    return new Promise((resolve) => this.offsetWaiters.push({ offset, resolve }));
  }

  private settleOffsetWaiters(): void {
    if (this.offsetWaiters.length === 0) return;
    const idle = !this.pumping && this.queue.length === 0;
    this.offsetWaiters = this.offsetWaiters.filter((w) => {
      const settled = this.state.highWatermark >= w.offset || this.state.nextOffset < w.offset || idle;
      if (settled) w.resolve();
      return !settled;
    });
  }

  private startTimer(): void {
    this.stopTimer();
    if (this.state.config.fsyncPolicy !== 'interval') return;
    this.timer = setInterval(() => this.syncInBackground(), this.state.config.fsyncIntervalMs);
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
    if (!this.dirty || this.state.closed || this.readOnlyCause !== null || this.backgroundSync !== null || this.foregroundSyncing) return;
    const segment = this.state.active();
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
    this.backgroundSync = pinned(segment, async () => void (await job.done))
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

  stopTimer(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  updateConfig(config: LogConfig): void {
    assertValidConfig(config);
    const policyChanged = config.fsyncPolicy !== this.state.config.fsyncPolicy || config.fsyncIntervalMs !== this.state.config.fsyncIntervalMs;
    this.state.config = config;
    if (policyChanged && !this.state.closed) this.startTimer();
  }

  onAppend(listener: (highWatermark: number) => void): () => void {
    if (this.listenersClosed) {
      queueMicrotask(() => listener(this.state.highWatermark));
      return () => undefined;
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** At close: the appends given before it are readable now; whoever waits for the next learns it will not come. */
  closeListeners(): void {
    this.listenersClosed = true;
    notifyClosing(this.listeners, this.state.highWatermark);
  }
}
