// One cache (or one cache's counters) over its compacted topic: per shard, the in-memory index of
// the current state (key → value, offset, expiry), which is a function of the log. The index is
// built by reading the shard from its start on first use and caught up with the log's tail
// before every operation, so a restart, or records another protocol appended, are seen the same
// way. Every operation runs on the cache's serial queue (serial.ts): a write and the catch-up
// that applies it are one step, so counter adds are atomic and reads see earlier writes. Writes
// queued while the queue is busy go out together (submit): each is decided in order against the
// state the ones before it leave, and one append per shard carries them all.
//
// Applying a record also hands it to the shard's watchers (watch.ts), in log order. A shard with
// watchers listens for appends to its log, so changes others write reach the watchers too.

import type { Broker } from '../broker.js';
import type { Topic } from '../catalog.js';
import { QuartetError, isQuartetError } from '../../base/errors.js';
import type { Logger } from '../../base/logger.js';
import { BatchFlags, type AppendResult, type PartitionLog, type StoredBatch } from '../../log/types.js';
import { SerialQueue } from '../serial.js';
import type { Clock } from '../../base/clock.js';
import { cacheRecordOf, encodeCacheWrites, shardOfKey, type CacheKind, type CacheRecord, type CacheWrite } from './records.js';
import type { CacheChange, CacheWatch, ReplayChunk } from './watch.js';

/** Bytes of the log read per step of a catch-up or a replay. */
export const cacheReadBytes = 1024 * 1024;
/** What an index entry costs besides its key and value bytes (map slot, object, numbers). */
export const cacheEntryOverheadBytes = 64;
/** Queued writes one append carries at most. */
export const cacheOpsPerAppendMax = 1_000;
/** Key and value bytes one append carries at most (one larger write still goes alone). */
export const cacheAppendBytesMax = 512 * 1024;

export interface CacheEntry {
  value: Buffer;
  offset: number;
  /** Absolute expiry, Unix ms; 0 = never. */
  expiresAtMillis: number;
}

interface ShardIndex {
  readonly entries: Map<string, CacheEntry>;
  /** Offsets below it are applied. */
  appliedTo: number;
  /** The log the index describes (a purge replaces it); null until first use. */
  log: PartitionLog | null;
  readonly watchers: Set<CacheWatch>;
  stopListening: (() => void) | null;
  catchUpQueued: boolean;
}

/**
 * A write operation on one key (CacheLog.submit), decided when its turn comes against the key's
 * entry as the writes queued before it leave it, and `bytes`, what the index would hold then.
 * plan() is synchronous; throwing refuses this operation alone.
 */
export interface CacheOp<T> {
  key: string;
  plan(entry: CacheEntry | undefined, bytes: number): CachePlan<T>;
}

export interface CachePlan<T> {
  /** The record to append; null writes nothing. */
  write: CacheWrite | null;
  /** The answer once appended: `offset` is the record's (-1 without one). */
  answer(offset: number, shard: number): T;
}

interface QueuedOp {
  op: CacheOp<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

interface PlannedOp {
  queued: QueuedOp;
  plan: CachePlan<unknown>;
  /** Its record's position in the append, -1 without one. */
  at: number;
}

export function entryBytes(key: string, value: Buffer): number {
  return Buffer.byteLength(key, 'utf8') + value.length + cacheEntryOverheadBytes;
}

export class CacheLog {
  /** Every operation on this cache runs here, one at a time. */
  readonly serial = new SerialQueue();
  /** Bytes the index holds over all shards (entryBytes). */
  bytes = 0;
  private readonly shards = new Map<number, ShardIndex>();
  /** Write operations waiting for the next drain (submit). */
  private queued: QueuedOp[] = [];
  private drainScheduled = false;
  private gone = false;

  constructor(
    readonly kind: CacheKind,
    /** The cache's name (without the topic prefix). */
    readonly name: string,
    private topic: Topic,
    private readonly broker: Broker,
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {}

  get topicInternalId(): number {
    return this.topic.internalId;
  }

  get scope(): string {
    return this.topic.namespace;
  }

  /** The shard count now (the topic's partitions). */
  shardCount(): number {
    this.refreshTopic();
    return this.topic.partitions;
  }

  /** Serial. The shard's index, caught up with its log. */
  async index(shard: number): Promise<ReadonlyMap<string, CacheEntry>> {
    return (await this.caughtUp(shard)).entries;
  }

  /** Serial. The offset the shard's index is applied to (what a live watch starts at). */
  appliedTo(shard: number): number {
    return this.shardIndex(shard).appliedTo;
  }

  /**
   * Serial. Appends `writes` to the shard and applies them (and whatever came before them). When
   * nothing else reached the log between the catch-up and the append, the records are applied as
   * written, without reading them back.
   */
  async write(shard: number, writes: readonly CacheWrite[], now: number): Promise<AppendResult> {
    const index = await this.caughtUp(shard);
    const result = await this.broker.append(this.topic, shard, encodeCacheWrites(writes, now));
    if (index.appliedTo !== result.baseOffset || index.log === null || !this.broker.isCurrentLog(this.topic, shard, index.log)) {
      await this.caughtUp(shard);
      return result;
    }
    writes.forEach((w, i) => this.apply(index, { offset: result.baseOffset + i, key: w.key, value: w.value, expiresAtMillis: w.value === null ? 0 : (w.expiresAtMillis ?? 0) }));
    index.appliedTo = result.lastOffset + 1;
    return result;
  }

  /**
   * Queues a write operation. The writes queued while the cache's queue is busy are decided in
   * order and appended together, one append per shard: each is decided against the state the
   * ones before it leave, so the answers are those of running them one at a time. If the append
   * fails, every operation in it fails.
   */
  submit<T>(op: CacheOp<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queued.push({ op, resolve: resolve as (value: unknown) => void, reject });
      this.scheduleDrain();
    });
  }

  private scheduleDrain(): void {
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    void this.serial.run(() => this.drain());
  }

  /** Serial. Decides and appends the queued operations (at most cacheOpsPerAppendMax; the rest in the next drain). */
  private async drain(): Promise<void> {
    this.drainScheduled = false;
    const batch = this.queued.splice(0, cacheOpsPerAppendMax);
    if (this.queued.length > 0) this.scheduleDrain();
    const byShard = new Map<number, QueuedOp[]>();
    try {
      const shards = this.shardCount();
      for (const q of batch) {
        const shard = shardOfKey(q.op.key, shards);
        const group = byShard.get(shard);
        if (group === undefined) byShard.set(shard, [q]);
        else group.push(q);
      }
    } catch (error) {
      for (const q of batch) q.reject(error);
      return;
    }
    for (const [shard, group] of byShard) {
      try {
        await this.drainShard(shard, group);
      } catch (error) {
        // Whatever was not answered yet fails (a settled promise ignores a second call).
        for (const q of group) q.reject(error);
      }
    }
  }

  private async drainShard(shard: number, group: readonly QueuedOp[]): Promise<void> {
    const index = await this.caughtUp(shard);
    // The keys as the writes decided so far leave them (undefined: deleted).
    const overlay = new Map<string, CacheEntry | undefined>();
    let bytes = this.bytes;
    let planned: PlannedOp[] = [];
    let writes: CacheWrite[] = [];
    let writeBytes = 0;
    const flush = async (): Promise<void> => {
      const base = writes.length > 0 ? (await this.write(shard, writes, this.clock.now())).baseOffset : -1;
      for (const p of planned) {
        try {
          p.queued.resolve(p.plan.answer(p.at < 0 ? -1 : base + p.at, shard));
        } catch (error) {
          p.queued.reject(error);
        }
      }
      planned = [];
      writes = [];
      writeBytes = 0;
      overlay.clear();
      bytes = this.bytes;
    };
    for (const queued of group) {
      const key = queued.op.key;
      let plan: CachePlan<unknown>;
      try {
        plan = queued.op.plan(overlay.has(key) ? overlay.get(key) : index.entries.get(key), bytes);
      } catch (error) {
        queued.reject(error);
        continue;
      }
      const w = plan.write;
      if (w === null) {
        planned.push({ queued, plan, at: -1 });
        continue;
      }
      const size = Buffer.byteLength(w.key, 'utf8') + (w.value?.length ?? 0);
      // The plan was made against the overlay, which the flush makes the index: it still holds.
      if (writes.length > 0 && writeBytes + size > cacheAppendBytesMax) await flush();
      planned.push({ queued, plan, at: writes.length });
      const before = overlay.has(key) ? overlay.get(key) : index.entries.get(key);
      bytes += (w.value === null ? 0 : entryBytes(key, w.value)) - (before === undefined ? 0 : entryBytes(key, before.value));
      overlay.set(key, w.value === null ? undefined : { value: w.value, offset: -1, expiresAtMillis: w.expiresAtMillis ?? 0 });
      writes.push(w);
      writeBytes += size;
    }
    await flush();
  }

  /** Serial. Registers a watch on the shard's changes (from appliedTo on). */
  addWatcher(shard: number, watch: CacheWatch): void {
    const index = this.shardIndex(shard);
    index.watchers.add(watch);
    if (index.stopListening === null && index.log !== null) index.stopListening = index.log.onAppend(() => this.scheduleCatchUp(shard));
  }

  removeWatcher(shard: number, watch: CacheWatch): void {
    const index = this.shards.get(shard);
    if (index === undefined || !index.watchers.delete(watch)) return;
    if (index.watchers.size === 0) {
      index.stopListening?.();
      index.stopListening = null;
    }
  }

  watcherCount(): number {
    let n = 0;
    for (const index of this.shards.values()) n += index.watchers.size;
    return n;
  }

  /** The topic is gone (deleted), or the service closes: every watch ends. */
  drop(end: 'closed' | 'cache_gone'): void {
    this.gone = true;
    for (const index of this.shards.values()) this.endWatchers(index, end);
  }

  /** Expired entries of every shard already indexed (no log is read): key → entry offset. */
  expiredEntries(now: number): Array<{ shard: number; key: string; offset: number }> {
    const out: Array<{ shard: number; key: string; offset: number }> = [];
    for (const [shard, index] of this.shards) {
      for (const [key, e] of index.entries) if (isExpired(e, now)) out.push({ shard, key, offset: e.offset });
    }
    return out;
  }

  /**
   * One chunk of the shard's records in [from, end), for a replay or the check before one: stops
   * at the first offset no record holds (compaction removed it, or retention moved the log start
   * past it), which it reports as gapAt. Control batches (transaction markers) are no gap.
   */
  async readRange(shard: number, from: number, end: number): Promise<ReplayChunk> {
    if (from >= end) return { records: [], next: from, gapAt: null };
    let batches: StoredBatch[];
    try {
      batches = await this.broker.read(this.topic, shard, from, { maxBytes: cacheReadBytes, maxOffset: end });
    } catch (err) {
      if (isQuartetError(err) && err.code === 'offset_out_of_range') return { records: [], next: from, gapAt: from };
      throw err;
    }
    if (batches.length === 0) return { records: [], next: from, gapAt: from };
    const records: CacheRecord[] = [];
    let expected = from;
    for (const batch of batches) {
      if (batch.lastOffset < expected) continue;
      if (batch.baseOffset > expected) return { records, next: expected, gapAt: expected };
      if ((batch.flags & BatchFlags.control) === 0) {
        for (const r of this.decode(batch)) {
          if (r.offset < expected) continue;
          if (r.offset >= end) break;
          if (r.offset > expected) return { records, next: expected, gapAt: expected };
          records.push(r);
          expected = r.offset + 1;
        }
        const batchEnd = Math.min(batch.lastOffset + 1, end);
        if (expected < batchEnd) return { records, next: expected, gapAt: expected };
      }
      expected = Math.max(expected, batch.lastOffset + 1);
      if (expected >= end) break;
    }
    return { records, next: Math.min(expected, end), gapAt: null };
  }

  // --- the index ----------------------------------------------------------------------------

  private shardIndex(shard: number): ShardIndex {
    let index = this.shards.get(shard);
    if (index === undefined) {
      index = { entries: new Map(), appliedTo: 0, log: null, watchers: new Set(), stopListening: null, catchUpQueued: false };
      this.shards.set(shard, index);
    }
    return index;
  }

  private refreshTopic(): void {
    const topic = this.gone ? null : this.broker.catalog.topicByInternalId(this.topic.internalId);
    if (topic === null) throw new QuartetError('unknown_topic', `cache ${this.scope}/${this.name} does not exist any more`);
    this.topic = topic;
  }

  /** Reads the shard's log from where the index is applied to its high watermark. */
  private async caughtUp(shard: number): Promise<ShardIndex> {
    this.refreshTopic();
    if (!Number.isInteger(shard) || shard < 0 || shard >= this.topic.partitions) throw new QuartetError('unknown_partition', `cache ${this.scope}/${this.name} has no shard ${shard}`);
    await this.broker.purgeInProgress(this.topic);
    const index = this.shardIndex(shard);
    const log = this.broker.partition(this.topic, shard);
    if (index.log !== log) this.resetIndex(index, log);
    let stats = log.stats();
    // A log that went back (purged in place) holds other records under the same offsets.
    if (stats.nextOffset < index.appliedTo) {
      this.resetIndex(index, log);
      stats = log.stats();
    }
    if (index.appliedTo < stats.logStartOffset) index.appliedTo = stats.logStartOffset;
    while (index.appliedTo < stats.highWatermark) {
      let batches: StoredBatch[];
      try {
        batches = await this.broker.read(this.topic, shard, index.appliedTo, { maxBytes: cacheReadBytes, maxOffset: stats.highWatermark });
      } catch (err) {
        // DeleteRecords moved the start past the index: go on from there.
        const start = log.stats().logStartOffset;
        if (isQuartetError(err) && err.code === 'offset_out_of_range' && start > index.appliedTo) {
          index.appliedTo = start;
          continue;
        }
        throw err;
      }
      if (batches.length === 0) break;
      for (const batch of batches) this.applyBatch(index, batch);
    }
    if (index.appliedTo < stats.highWatermark) index.appliedTo = stats.highWatermark;
    return index;
  }

  private resetIndex(index: ShardIndex, log: PartitionLog): void {
    const wasUsed = index.log !== null;
    for (const [key, e] of index.entries) this.bytes -= entryBytes(key, e.value);
    index.entries.clear();
    index.log = log;
    index.appliedTo = log.stats().logStartOffset;
    // The watchers' offsets belonged to the log that went.
    if (wasUsed) this.endWatchers(index, 'cache_gone');
  }

  private applyBatch(index: ShardIndex, batch: StoredBatch): void {
    if ((batch.flags & BatchFlags.control) === 0) {
      for (const r of this.decode(batch)) if (r.offset >= index.appliedTo) this.apply(index, r);
    }
    index.appliedTo = Math.max(index.appliedTo, batch.lastOffset + 1);
  }

  private apply(index: ShardIndex, r: CacheRecord): void {
    const old = index.entries.get(r.key);
    if (old !== undefined) this.bytes -= entryBytes(r.key, old.value);
    if (r.value === null) {
      index.entries.delete(r.key);
    } else {
      index.entries.set(r.key, { value: r.value, offset: r.offset, expiresAtMillis: r.expiresAtMillis });
      this.bytes += entryBytes(r.key, r.value);
    }
    index.appliedTo = r.offset + 1;
    if (index.watchers.size === 0) return;
    const change: CacheChange = { key: r.key, value: r.value, offset: r.offset, expiresAtMillis: r.value === null ? 0 : r.expiresAtMillis };
    for (const watch of index.watchers) watch.deliver(change);
  }

  /** The batch's cache records; a batch of a format the broker cannot read holds none (logged). */
  private decode(batch: StoredBatch): CacheRecord[] {
    const codec = this.broker.formats.get(batch.format);
    if (codec === undefined) {
      this.logger.warn('a cache topic holds a batch of a format the broker cannot read; its records are not in the cache', { cache: this.name, format: batch.format, baseOffset: batch.baseOffset });
      return [];
    }
    const out: CacheRecord[] = [];
    for (const record of codec.decode(batch)) {
      const r = cacheRecordOf(record);
      if (r !== null) out.push(r);
    }
    return out;
  }

  private scheduleCatchUp(shard: number): void {
    const index = this.shards.get(shard);
    if (index === undefined || index.catchUpQueued || this.gone) return;
    index.catchUpQueued = true;
    void this.serial
      .run(async () => {
        index.catchUpQueued = false;
        if (index.watchers.size > 0) await this.caughtUp(shard);
      })
      .catch((error: unknown) => {
        // The log closed or the topic went: the watchers hear of it from drop() or the next operation.
        this.logger.debug('cache catch-up failed', { cache: this.name, shard, error });
      });
  }

  private endWatchers(index: ShardIndex, end: 'closed' | 'cache_gone'): void {
    for (const watch of [...index.watchers]) watch.finish({ kind: end });
    index.watchers.clear();
    index.stopListening?.();
    index.stopListening = null;
  }
}

export function isExpired(entry: CacheEntry, now: number): boolean {
  return entry.expiresAtMillis !== 0 && entry.expiresAtMillis <= now;
}
