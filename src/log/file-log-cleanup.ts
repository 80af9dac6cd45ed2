// The whole-log passes of a FileLog (file-log.ts), each run under its `maintenance` lock: moving the
// log start (DeleteRecords, a purge's truncateAll, Iggy's DeleteSegments), time and size retention,
// and compaction, which rewrites sealed segments below the recovery point and installs them over
// the originals. The log start is checkpointed before any file is deleted, and moved in memory
// before anything is unlinked.

import assert from 'node:assert/strict';
import { writeCheckpoint } from './checkpoint.js';
import { checkSegmentCount, closedError, CompactionKeyMap, compactBatch, compactionPlan, compactionReads, oldestSegmentsToDelete, outOfRange, tombstoneDeadline, type CompactionOutcome } from './common.js';
import type { CompactionWork } from './compaction-offload.js';
import { encodeEnvelopeHeader, envelopeHeaderBytes, storedBatchOf } from './envelope.js';
import { segmentEnvelopes } from './file-log-reads.js';
import { pinned, storageError, type LogState } from './file-log-state.js';
import { appendsPerWriteMax, type WritePath } from './file-log-writes.js';
import type { ScannedEnvelope } from './scan.js';
import { cleanedSuffix, Segment, type BatchMeta } from './segment.js';
import type { CleanupResult, DeleteSegmentsOptions, StoredBatch } from './types.js';

/** Bytes of rewritten batches compaction buffers before one writev. */
const compactionWriteBytes = 1024 * 1024;

export class LogCleanup {
  constructor(
    private readonly state: LogState,
    private readonly writes: WritePath,
    private readonly work: CompactionWork,
  ) {}

  deleteRecordsBefore(offset: number): Promise<number> {
    if (this.state.closed) return Promise.reject(closedError());
    return this.state.maintenance.run(async () => {
      if (offset < 0 || offset > this.state.highWatermark) throw outOfRange(offset, this.state.logStartOffset, this.state.highWatermark);
      if (offset > this.state.logStartOffset) await this.advanceLogStart(offset);
      return this.state.logStartOffset;
    });
  }

  truncateAll(): Promise<void> {
    if (this.state.closed) return Promise.reject(closedError());
    const target = this.state.nextOffset;
    return this.state.maintenance.run(async () => {
      await this.writes.whenWritten(target);
      const end = Math.min(target, this.state.highWatermark);
      if (end > this.state.logStartOffset) await this.advanceLogStart(end);
    });
  }

  /**
   * Iggy DeleteSegments: the oldest `count` sealed segments go, never the active one (see
   * PartitionLog). The new start is the base of the first segment kept; it is checkpointed before
   * any file is deleted, like every advance of the log start.
   */
  deleteOldestSegments(count: number, options: DeleteSegmentsOptions = {}): Promise<CleanupResult> {
    if (this.state.closed) return Promise.reject(closedError());
    try {
      checkSegmentCount(count);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.state.maintenance.run(async () => {
      const result: CleanupResult = { segmentsDeleted: 0, bytesDeleted: 0, recordsRemoved: 0 };
      const n = oldestSegmentsToDelete(this.state.segments.map((s) => s.nextOffset), count, options.before);
      if (n === 0) return result;
      const doomed = this.state.segments.slice(0, n);
      // Sealed segments were written before the next one began, so the base of the first kept
      // segment is at or below the high watermark.
      const target = Math.min(this.state.segments[n]!.baseOffset, this.state.highWatermark);
      for (const segment of doomed) {
        result.bytesDeleted += segment.size;
        result.recordsRemoved += Math.max(0, segment.nextOffset - Math.max(segment.baseOffset, this.state.logStartOffset));
      }
      if (target > this.state.logStartOffset) await this.advanceLogStart(target);
      result.segmentsDeleted = doomed.filter((s) => !this.state.segments.includes(s)).length;
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
    assert.ok(offset > this.state.logStartOffset && offset <= this.state.highWatermark, 'the log start only advances, up to the high watermark');
    try {
      await writeCheckpoint(this.state.fsys, this.state.dir, offset);
    } catch (error) {
      throw storageError('cannot write the log start checkpoint', error);
    }
    this.state.logStartOffset = Math.max(this.state.logStartOffset, offset);
    await this.state.io.run(async () => {
      const active = this.state.active();
      if (!active.isEmpty && active.nextOffset <= offset) {
        try {
          await this.writes.rollActive(active.nextOffset);
        } catch (error) {
          throw storageError('segment roll failed', error);
        }
        this.writes.resetAssignment();
      }
    });
    await this.dropSegments((segments) => (segments.length > 1 && segments[1]!.baseOffset <= this.state.logStartOffset ? 1 : 0));
  }

  /**
   * Deletes the oldest segments one at a time while `howMany` says so (never the active one). The
   * start they leave is checkpointed, and taken, before the first file goes: a delete that fails or
   * a crash half-way leaves files that recovery drops again, instead of records coming back.
   */
  private async dropSegments(howMany: (segments: Segment[]) => number): Promise<CleanupResult> {
    const result: CleanupResult = { segmentsDeleted: 0, bytesDeleted: 0, recordsRemoved: 0 };
    let doomed = 0;
    for (let rest = this.state.segments; rest.length > 1 && howMany(rest) > 0; rest = rest.slice(1)) doomed++;
    if (doomed === 0) return result;
    const newStart = this.state.segments[doomed]!.baseOffset;
    if (newStart > this.state.logStartOffset) {
      try {
        await writeCheckpoint(this.state.fsys, this.state.dir, newStart);
      } catch (error) {
        throw storageError('cannot write the log start checkpoint', error);
      }
      this.state.logStartOffset = newStart;
    }
    for (let i = 0; i < doomed; i++) {
      const [oldest, ...rest] = this.state.segments;
      result.segmentsDeleted += 1;
      result.bytesDeleted += oldest!.size;
      result.recordsRemoved += oldest!.nextOffset - Math.max(oldest!.baseOffset, Math.min(this.state.logStartOffset, oldest!.nextOffset));
      // In the same tick as the segment leaves the list, before its files go: a read of one of
      // its offsets from now on is out of range (not answered with the batches after them).
      this.state.segments = rest;
      this.state.logStartOffset = Math.max(this.state.logStartOffset, rest[0]!.baseOffset);
      try {
        await oldest!.delete();
      } catch (error) {
        throw storageError(`cannot delete segment ${oldest!.paths.log}`, error);
      }
    }
    return result;
  }

  applyRetention(now: number): Promise<CleanupResult> {
    if (this.state.closed) return Promise.reject(closedError());
    return this.state.maintenance.run(async () => {
      await this.rollIfAged(now);
      const { retentionMs, retentionBytes } = this.state.config;
      const result = await this.dropSegments((segments) => {
        const oldest = segments[0]!;
        const aged = retentionMs >= 0 && (oldest.maxTimestamp === null || oldest.maxTimestamp < now - retentionMs);
        const oversize = retentionBytes >= 0 && segments.reduce((n, s) => n + s.size, 0) > retentionBytes;
        return aged || oversize ? 1 : 0;
      });
      this.state.logStartOffset = Math.max(this.state.logStartOffset, this.state.segments[0]!.baseOffset);
      return result;
    });
  }

  private rollIfAged(now: number): Promise<void> {
    return this.state.io.run(async () => {
      const active = this.state.active();
      const { segmentMs } = this.state.config;
      if (segmentMs <= 0 || active.isEmpty || active.firstAppendTime === null || now - active.firstAppendTime < segmentMs) return;
      try {
        await this.writes.rollActive(active.nextOffset);
      } catch (error) {
        throw storageError('segment roll failed', error);
      }
      this.writes.resetAssignment();
    });
  }

  compact(now: number): Promise<CleanupResult> {
    if (this.state.closed) return Promise.reject(closedError());
    return this.state.maintenance.run(async () => {
      const result: CleanupResult = { segmentsDeleted: 0, bytesDeleted: 0, recordsRemoved: 0 };
      if (!this.state.config.cleanupPolicy.includes('compact')) return result;
      // Only segments recovery trusts (below the recovery point): after an unclean stop the others
      // are checked for lost data, and the gaps compaction leaves would look like it.
      await this.writes.settleSealSync();
      const sealed = this.state.segments.slice(0, -1).filter((s) => s.baseOffset < this.state.recoveryPoint);
      const keys = new CompactionKeyMap(this.state.formats);
      for (const segment of sealed) {
        await pinned(segment, async () => {
          for await (const envelope of segmentEnvelopes(this.state.fsys, segment, segment.baseOffset)) {
            const batch = batchOf(envelope);
            if (!keys.isOpaque(batch) && this.work.offloads(batch)) keys.addSummaries(batch, await this.work.summaries(batch));
            else keys.add(batch);
          }
        });
      }
      const deadline = tombstoneDeadline(this.state.config, now);
      for (const segment of sealed) {
        const { bytesDeleted, recordsRemoved } = await this.compactSegment(segment, keys, deadline);
        result.bytesDeleted += bytesDeleted;
        result.recordsRemoved += recordsRemoved;
      }
      return result;
    });
  }

  /** common.ts compactBatch, with large batches decoded and encoded on a worker (compaction-offload.ts). */
  private async outcome(batch: StoredBatch, keys: CompactionKeyMap, deadline: number): Promise<CompactionOutcome> {
    if (!compactionReads(batch, keys) || !this.work.offloads(batch)) return compactBatch(batch, keys, this.state.formats, deadline);
    const plan = compactionPlan(await this.work.summaries(batch), keys, deadline);
    if (plan.kind !== 'rewrite') return plan;
    return { kind: 'rewrite', request: await this.work.rewrite(batch, plan.kept), recordsRemoved: plan.recordsRemoved };
  }

  /**
   * Rewrites one sealed segment into `<base>.log.cleaned` (+ indexes), syncs it, and installs it
   * over the original. A segment where every batch survives is left alone.
   */
  private async compactSegment(segment: Segment, keys: CompactionKeyMap, deadline: number): Promise<{ bytesDeleted: number; recordsRemoved: number }> {
    const cleaned = await Segment.create(this.state.fsys, this.state.dir, segment.baseOffset, this.state.config.indexIntervalBytes, cleanedSuffix);
    let recordsRemoved = 0;
    let changed = false;
    try {
      await pinned(segment, async () => {
        const out = new BatchWriter(cleaned);
        for await (const envelope of segmentEnvelopes(this.state.fsys, segment, segment.baseOffset, true)) {
          const batch = batchOf(envelope);
          const outcome = await this.outcome(batch, keys, deadline);
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
      await this.state.io.run(async () => {
        await cleaned.installOver();
        this.state.segments = this.state.segments.map((s) => (s === segment ? cleaned : s));
      });
    } catch (error) {
      await cleaned.delete().catch(() => undefined);
      throw storageError(`compaction of ${segment.paths.log} failed`, error);
    }
    await segment.retire();
    return { bytesDeleted: segment.size - cleaned.size, recordsRemoved };
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
