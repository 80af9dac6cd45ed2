// Idempotent-producer state for every protocol: producer id allocation, epochs and fencing, and
// per (producer, partition) a window of the last appended batches to answer retries with the
// original offsets instead of appending twice.
//
// The rules mirror Kafka's ProducerStateManager / ProducerAppendInfo.checkSequence:
//  - a batch whose epoch is older than the newest known one is fenced;
//  - the first batch of a newer epoch must start at sequence 0;
//  - within an epoch, a batch equal (first and last sequence) to one in the window is a duplicate;
//    otherwise its first sequence must follow the last one (wrapping from int32 max to 0);
//  - with no state for the producer on the partition (never written, or expired/evicted) any
//    sequence is accepted, as Kafka does since KIP-360: the state may have gone with retention.
// A producer id this broker never allocated is unknown_producer.
//
// Kafka counts one sequence per record; Felix (publish_idempotent) one per batch, whatever its
// record count, and remembers a producer's last 64 batches on a shard where Kafka keeps 5. The
// batch's format says which (sequencesOf, windowBatchesOf), on the append path and in replay.
//
// State lives in memory; check() and recordAppend() do no I/O. It is made durable by snapshots
// (one row per partition: the entries and the log end offset they cover), written on close and on
// every maintenance pass, and on open each partition replays the batches its log holds after the
// snapshot. Replay reads batch envelopes only (format, producerId, epoch, baseSequence, recordCount).

import assert from 'node:assert/strict';
import type { Clock } from '../base/clock.js';
import { QuartetError } from '../base/errors.js';
import type { Logger } from '../base/logger.js';
import type { MetadataStore, ProducerSnapshotRecord } from './metadata-store.js';
import { BatchFormat } from '../base/batch.js';
import { BatchFlags, type PartitionLog, type StoredBatch } from '../log/types.js';

// Named limits.
/** Kafka keeps the last 5 batches per producer and partition (max.in.flight.requests <= 5). */
export const producerWindowBatches = 5;
/** Felix remembers the outcome of a producer's last 64 batches on a shard (its docs/protocol.md). */
export const felixProducerWindowBatches = 64;
/** Default bound on (producer, partition) entries held; least recently used are evicted. */
export const producerEntriesMaxDefault = 100_000;
/** Like Kafka's transactional.id.expiration.ms / producer.id.expiration.ms default: 7 days. */
export const producerIdleExpiryMsDefault = 7 * 24 * 3600 * 1000;
export const producerEpochMax = 0x7fff;
export const sequenceMax = 0x7fff_ffff;
/** Bytes asked of the log per read while replaying a partition's tail. */
export const replayReadBytes = 4 * 1024 * 1024;

const producerIdCounter = 'producer_id';
/** The snapshot row holding the producer-level epochs (not a partition key: has no ':'). */
const epochsSnapshotKey = '@epochs';

export interface ProducerBatch {
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  recordCount: number;
  /** The batch's format: Felix batches count one sequence each (absent: Kafka's rules). */
  format?: BatchFormat;
}

/** How many sequences a batch takes: one per record, but one per batch for Felix. */
export function sequencesOf(batch: Pick<ProducerBatch, 'recordCount' | 'format'>): number {
  return batch.format === BatchFormat.felix ? 1 : batch.recordCount;
}

/** How many of a producer's batches on a partition its window keeps. */
export function windowBatchesOf(format: BatchFormat | undefined): number {
  return format === BatchFormat.felix ? felixProducerWindowBatches : producerWindowBatches;
}

export interface AppendedOffsets {
  baseOffset: number;
  lastOffset: number;
  /** Broker time of the append (ms); after a replay, the batch's max timestamp. */
  appendTime: number;
}

/** A producer's window on one partition (ProducerStateManager.window). */
export interface ProducerWindow {
  epoch: number;
  /** Oldest first; sequences are int32 and wrap from sequenceMax to 0. */
  batches: ReadonlyArray<{ firstSeq: number; lastSeq: number; baseOffset: number; lastOffset: number }>;
}

/**
 * A duplicate carries `written` while the original batch is still being written (its offset is
 * assigned, its write or fsync not yet done): the retry must be answered only when it resolves,
 * and must fail if it rejects (the original is then not in the log). Absent once it is written.
 */
export type ProducerCheck = { kind: 'append' } | ({ kind: 'duplicate'; written?: Promise<void> } & AppendedOffsets);

interface BatchMeta {
  firstSeq: number;
  lastSeq: number;
  baseOffset: number;
  lastOffset: number;
  timestamp: number;
  /** Set while the batch's append is in flight (memory only, never in a snapshot). */
  written?: Promise<void> | undefined;
}

interface ProducerEntry {
  producerId: number;
  partitionKey: string;
  epoch: number;
  /** Oldest first; at most windowBatchesOf(its batches' format); baseOffsets strictly increasing. */
  batches: BatchMeta[];
  lastUsedMs: number;
}

/** Snapshot form of an entry: [producerId, epoch, lastUsedMs, [[firstSeq, lastSeq, baseOffset, lastOffset, timestamp]...]]. */
type SnapshotEntry = [number, number, number, Array<[number, number, number, number, number]>];

export interface ProducerStateOptions {
  clock: Clock;
  logger: Logger;
  entriesMax?: number;
  idleExpiryMs?: number;
}

export const appendVerdict: ProducerCheck = Object.freeze({ kind: 'append' });

/** The key of a partition in producer state and snapshots. */
export function partitionKey(topicInternalId: number, partition: number): string {
  return `${topicInternalId}:${partition}`;
}

/** Kafka's DefaultRecordBatch.incrementSequence: sequences wrap from int32 max to 0. */
export function lastSequenceOf(baseSequence: number, recordCount: number): number {
  const increment = recordCount - 1;
  return baseSequence > sequenceMax - increment ? increment - (sequenceMax - baseSequence) - 1 : baseSequence + increment;
}

function inSequence(lastSeq: number, nextSeq: number): boolean {
  return nextSeq === lastSeq + 1 || (nextSeq === 0 && lastSeq === sequenceMax);
}

export class ProducerStateManager {
  /** Insertion order = least recently used first. */
  private readonly entries = new Map<string, ProducerEntry>();
  /** Newest epoch per producer (from initProducer and appends), least recently used first. */
  private readonly epochs = new Map<number, number>();
  /** Snapshots read at open, consumed by recover(). */
  private readonly pendingSnapshots = new Map<string, ProducerSnapshotRecord>();
  private nextProducerId = 0;
  private readonly clock: Clock;
  private readonly logger: Logger;
  readonly entriesMax: number;
  readonly idleExpiryMs: number;

  private constructor(
    private readonly store: MetadataStore,
    options: ProducerStateOptions,
  ) {
    this.clock = options.clock;
    this.logger = options.logger;
    this.entriesMax = options.entriesMax ?? producerEntriesMaxDefault;
    this.idleExpiryMs = options.idleExpiryMs ?? producerIdleExpiryMsDefault;
    assert.ok(this.entriesMax >= 1, 'entriesMax must be >= 1');
  }

  static async open(store: MetadataStore, options: ProducerStateOptions): Promise<ProducerStateManager> {
    const manager = new ProducerStateManager(store, options);
    manager.nextProducerId = await store.peekId(producerIdCounter, 0);
    for (const snapshot of await store.listProducerSnapshots()) {
      if (snapshot.partitionKey === epochsSnapshotKey) manager.loadEpochs(snapshot.entries);
      else manager.pendingSnapshots.set(snapshot.partitionKey, snapshot);
    }
    return manager;
  }

  /** Number of (producer, partition) entries held. */
  get size(): number {
    return this.entries.size;
  }

  /** The newest epoch known for a producer, or null. */
  currentEpoch(producerId: number): number | null {
    return this.epochs.get(producerId) ?? null;
  }

  // --- producer ids and epochs ----------------------------------------------------------------

  /**
   * A new producer (no argument): a fresh id with epoch 0. A re-initialized producer (its id and
   * the epoch it last used): the same id with the next epoch, which fences the older one; a new
   * id with epoch 0 once the epoch would pass int16 max, as Kafka does.
   */
  async initProducer(previous?: { producerId: number; epoch: number }): Promise<{ producerId: number; epoch: number }> {
    const next = await this.proposeInit(previous);
    this.raiseEpoch(next.producerId, next.epoch);
    return next;
  }

  /**
   * initProducer() for a caller that must persist the answer first (the transaction coordinator):
   * the same checks and answer, but a bump of the same id is not applied: the caller applies it
   * with raiseEpoch() once its own record is durable, so a failed write fences nobody. (A new id
   * is allocated for real: an unused id costs nothing.)
   */
  async proposeInit(previous?: { producerId: number; epoch: number }): Promise<{ producerId: number; epoch: number }> {
    if (previous === undefined) return this.allocate();
    const { producerId, epoch } = previous;
    if (!this.isAllocated(producerId)) throw new QuartetError('unknown_producer', `producer id ${producerId} was never allocated`);
    const known = this.epochs.get(producerId) ?? -1;
    if (epoch < known) throw new QuartetError('producer_fenced', `producer ${producerId} epoch ${epoch} is older than ${known}`);
    const next = Math.max(known, epoch) + 1;
    if (next > producerEpochMax) return this.allocate();
    return { producerId, epoch: next };
  }

  /** Makes `epoch` the producer's newest known epoch unless a newer one is known: older epochs are fenced. */
  raiseEpoch(producerId: number, epoch: number): void {
    if (epoch > (this.epochs.get(producerId) ?? -1)) this.setEpoch(producerId, epoch);
  }

  private async allocate(): Promise<{ producerId: number; epoch: number }> {
    const producerId = await this.store.nextId(producerIdCounter, 0);
    if (!Number.isSafeInteger(producerId)) throw new QuartetError('resource_exhausted', 'producer ids are exhausted');
    this.nextProducerId = Math.max(this.nextProducerId, producerId + 1);
    this.setEpoch(producerId, 0);
    return { producerId, epoch: 0 };
  }

  private isAllocated(producerId: number): boolean {
    return Number.isSafeInteger(producerId) && producerId >= 0 && producerId < this.nextProducerId;
  }

  /**
   * The epoch and last sequence the producer's window holds for the partition (`partitionKey`),
   * or null when it holds none (never appended there, or expired).
   */
  lastSequence(key: string, producerId: number): { epoch: number; sequence: number } | null {
    const entry = this.entries.get(entryKey(key, producerId));
    const last = entry?.batches[entry.batches.length - 1];
    return entry && last ? { epoch: entry.epoch, sequence: last.lastSeq } : null;
  }

  /**
   * Every producer with a window on the partition (`partitionKey`), by producer id: its epoch, and
   * the last sequence and timestamp it appended (Kafka DescribeProducers). Walks every entry: for
   * admin requests, not the data path.
   */
  producersOn(key: string): Array<{ producerId: number; epoch: number; lastSequence: number; lastTimestamp: number }> {
    const found: Array<{ producerId: number; epoch: number; lastSequence: number; lastTimestamp: number }> = [];
    for (const entry of this.entries.values()) {
      if (entry.partitionKey !== key) continue;
      const last = entry.batches[entry.batches.length - 1];
      found.push({ producerId: entry.producerId, epoch: entry.epoch, lastSequence: last?.lastSeq ?? -1, lastTimestamp: last?.timestamp ?? -1 });
    }
    return found.sort((a, b) => a.producerId - b.producerId);
  }

  // --- the append path (no I/O) ---------------------------------------------------------------

  /**
   * The producer's state on a partition, for a protocol whose sequence rules go beyond Kafka's
   * (Cursus: a duplicate is any sequence at or below the last one, not only a batch of the
   * window): its epoch and the batches of its window, oldest first, offsets included (in flight
   * or written). Null when none is held (never written, expired or evicted).
   */
  window(key: string, producerId: number): ProducerWindow | null {
    const entry = this.entries.get(entryKey(key, producerId));
    if (entry === undefined) return null;
    return { epoch: entry.epoch, batches: entry.batches.map(({ firstSeq, lastSeq, baseOffset, lastOffset }) => ({ firstSeq, lastSeq, baseOffset, lastOffset })) };
  }

  /** Decides whether a batch may be appended, is a retry of one already appended, or is refused. */
  check(key: string, batch: ProducerBatch): ProducerCheck {
    assertBatchFields(batch);
    const entry = this.entries.get(entryKey(key, batch.producerId));
    const known = this.epochs.get(batch.producerId) ?? -1;
    if (!entry) {
      if (known < 0 && !this.isAllocated(batch.producerId)) {
        throw new QuartetError('unknown_producer', `producer id ${batch.producerId} is not known to this broker`);
      }
      if (batch.producerEpoch < known) throw fenced(batch, known);
      return appendVerdict;
    }
    const newest = Math.max(entry.epoch, known);
    if (batch.producerEpoch < newest) throw fenced(batch, newest);
    if (batch.producerEpoch > entry.epoch) {
      if (batch.baseSequence !== 0) {
        throw new QuartetError('out_of_order_sequence', `producer ${batch.producerId}: the first batch of epoch ${batch.producerEpoch} must start at sequence 0, got ${batch.baseSequence}`);
      }
      return appendVerdict;
    }
    const lastSeq = lastSequenceOf(batch.baseSequence, sequencesOf(batch));
    const duplicate = entry.batches.find((m) => m.firstSeq === batch.baseSequence && m.lastSeq === lastSeq);
    if (duplicate) {
      const offsets = { baseOffset: duplicate.baseOffset, lastOffset: duplicate.lastOffset, appendTime: duplicate.timestamp };
      return duplicate.written ? { kind: 'duplicate', ...offsets, written: duplicate.written } : { kind: 'duplicate', ...offsets };
    }
    const expectedAfter = entry.batches.length > 0 ? entry.batches[entry.batches.length - 1]!.lastSeq : -1;
    if (!inSequence(expectedAfter, batch.baseSequence)) {
      throw new QuartetError('out_of_order_sequence', `producer ${batch.producerId}: expected sequence ${expectedAfter === sequenceMax ? 0 : expectedAfter + 1}, got ${batch.baseSequence}`);
    }
    return appendVerdict;
  }

  /**
   * Records a batch the log has accepted (called when its offset is assigned). `written`, while
   * the write is in flight, settles with it: a retry arriving before then waits for it (check()
   * hands it out). Call appendWritten() once it resolved, forgetAppend() if it rejected.
   */
  recordAppend(key: string, batch: ProducerBatch, offsets: AppendedOffsets, written?: Promise<void>): void {
    this.apply(key, batch, offsets, offsets.appendTime, written);
  }

  /** The batch recorded at `baseOffset` is written: retries are answered at once from now on. */
  appendWritten(key: string, producerId: number, baseOffset: number): void {
    const meta = this.entries.get(entryKey(key, producerId))?.batches.find((m) => m.baseOffset === baseOffset);
    if (meta) meta.written = undefined;
  }

  /** Undoes recordAppend for a batch whose write failed (the log drops it and all behind it). */
  forgetAppend(key: string, producerId: number, baseOffset: number): void {
    const k = entryKey(key, producerId);
    const entry = this.entries.get(k);
    if (!entry) return;
    entry.batches = entry.batches.filter((m) => m.baseOffset !== baseOffset);
    if (entry.batches.length === 0) this.entries.delete(k);
  }

  private apply(key: string, batch: ProducerBatch, offsets: AppendedOffsets, usedAt: number, written?: Promise<void>): void {
    assert.equal(offsets.lastOffset - offsets.baseOffset + 1, batch.recordCount, 'offsets must span the record count');
    const k = entryKey(key, batch.producerId);
    let entry = this.entries.get(k);
    if (entry && batch.producerEpoch < entry.epoch) return; // a fenced zombie's batch seen in replay
    if (!entry) {
      entry = { producerId: batch.producerId, partitionKey: key, epoch: batch.producerEpoch, batches: [], lastUsedMs: usedAt };
    } else {
      this.entries.delete(k); // re-inserted below: most recently used
    }
    if (batch.producerEpoch > entry.epoch) {
      entry.epoch = batch.producerEpoch;
      entry.batches = [];
    }
    const previous = entry.batches[entry.batches.length - 1];
    assert.ok(!previous || previous.baseOffset < offsets.baseOffset, 'producer window offsets must increase');
    entry.batches.push({
      firstSeq: batch.baseSequence,
      lastSeq: lastSequenceOf(batch.baseSequence, sequencesOf(batch)),
      baseOffset: offsets.baseOffset,
      lastOffset: offsets.lastOffset,
      timestamp: offsets.appendTime,
      written,
    });
    if (entry.batches.length > windowBatchesOf(batch.format)) entry.batches.shift();
    entry.lastUsedMs = Math.max(entry.lastUsedMs, usedAt);
    this.entries.set(k, entry);
    if (batch.producerEpoch > (this.epochs.get(batch.producerId) ?? -1)) this.setEpoch(batch.producerId, batch.producerEpoch);
    if (batch.producerId >= this.nextProducerId) this.nextProducerId = batch.producerId + 1;
    this.evictOverflow();
  }

  // --- durability -----------------------------------------------------------------------------

  /**
   * Rebuilds a partition's state: its snapshot (if it still matches the log), then every
   * idempotent batch after it. Returns the number of batches replayed.
   */
  async recover(key: string, log: PartitionLog): Promise<number> {
    const stats = log.stats();
    const snapshot = this.pendingSnapshots.get(key);
    this.pendingSnapshots.delete(key);
    let from = stats.logStartOffset;
    if (snapshot && snapshot.nextOffset <= stats.nextOffset) {
      this.loadPartitionSnapshot(key, snapshot.entries);
      from = Math.max(snapshot.nextOffset, stats.logStartOffset);
    } else if (snapshot) {
      // The log lost its unflushed tail after the snapshot was taken: the snapshot may describe
      // batches that are gone, so rebuild from the log alone.
      this.logger.warn('producer snapshot is ahead of the log; replaying the whole partition', { partition: key, snapshotOffset: snapshot.nextOffset, logEndOffset: stats.nextOffset });
    }
    return this.replay(key, log, from, stats.nextOffset);
  }

  private async replay(key: string, log: PartitionLog, from: number, end: number): Promise<number> {
    let offset = from;
    let replayed = 0;
    while (offset < end) {
      // Headers alone: a corrupt payload is refused when it is read to be served, not here.
      const batches = await log.read(offset, { maxBytes: replayReadBytes, verify: false });
      if (batches.length === 0) break;
      for (const batch of batches) {
        if (batch.baseOffset >= from && isIdempotentData(batch)) {
          this.apply(key, batch, { baseOffset: batch.baseOffset, lastOffset: batch.lastOffset, appendTime: batch.maxTimestamp }, batch.maxTimestamp);
          replayed++;
        }
      }
      offset = batches[batches.length - 1]!.lastOffset + 1;
    }
    return replayed;
  }

  /**
   * Writes one snapshot row per given partition (its entries and the log offset they cover) plus
   * the producer epochs, in one transaction. Partitions with no producers are written too, so
   * that the next open replays only their tail.
   *
   * `nextOffset` must be the partition's high watermark, not its log end: batches at or above it
   * have an offset but are not written yet (queued, or awaiting their fsync) and may still fail,
   * and the log then reuses their offsets. So window batches at or above it are left out (an
   * entry left with none is left out whole); the replay after the next open finds them in the log
   * if they were written.
   */
  async snapshot(partitions: ReadonlyArray<{ key: string; nextOffset: number }>): Promise<void> {
    const takenAt = this.clock.now();
    const byPartition = new Map<string, { nextOffset: number; entries: SnapshotEntry[] }>();
    for (const p of partitions) byPartition.set(p.key, { nextOffset: p.nextOffset, entries: [] });
    for (const e of this.entries.values()) {
      const row = byPartition.get(e.partitionKey);
      if (!row) continue;
      const batches = e.batches.filter((m) => m.lastOffset < row.nextOffset);
      if (batches.length === 0) continue;
      row.entries.push([e.producerId, e.epoch, e.lastUsedMs, batches.map((m) => [m.firstSeq, m.lastSeq, m.baseOffset, m.lastOffset, m.timestamp])]);
    }
    const records: ProducerSnapshotRecord[] = partitions.map((p) => ({ partitionKey: p.key, nextOffset: p.nextOffset, entries: byPartition.get(p.key)!.entries, takenAt }));
    records.push({ partitionKey: epochsSnapshotKey, nextOffset: 0, entries: [...this.epochs], takenAt });
    await this.store.putProducerSnapshots(records);
  }

  /** Forgets every producer of the given partitions (topic deleted or truncated). */
  async dropPartitions(keys: readonly string[]): Promise<void> {
    const doomed = new Set(keys);
    for (const [k, e] of this.entries) if (doomed.has(e.partitionKey)) this.entries.delete(k);
    for (const key of keys) this.pendingSnapshots.delete(key);
    await this.store.deleteProducerSnapshots(keys);
  }

  /** Drops entries idle for longer than idleExpiryMs. Returns how many went. */
  expireIdle(now: number = this.clock.now()): number {
    let expired = 0;
    for (const [k, e] of this.entries) {
      if (now - e.lastUsedMs >= this.idleExpiryMs) {
        this.entries.delete(k);
        expired++;
      }
    }
    return expired;
  }

  // --- internals ------------------------------------------------------------------------------

  private setEpoch(producerId: number, epoch: number): void {
    this.epochs.delete(producerId);
    this.epochs.set(producerId, epoch);
    while (this.epochs.size > this.entriesMax) this.epochs.delete(this.epochs.keys().next().value!);
  }

  private evictOverflow(): void {
    while (this.entries.size > this.entriesMax) {
      const oldest = this.entries.keys().next().value!;
      this.entries.delete(oldest);
    }
  }

  private loadEpochs(raw: unknown): void {
    if (!Array.isArray(raw)) return;
    for (const pair of raw as Array<[number, number]>) this.setEpoch(pair[0], pair[1]);
    for (const producerId of this.epochs.keys()) if (producerId >= this.nextProducerId) this.nextProducerId = producerId + 1;
  }

  private loadPartitionSnapshot(key: string, raw: unknown): void {
    if (!Array.isArray(raw)) return;
    for (const [producerId, epoch, lastUsedMs, batches] of raw as SnapshotEntry[]) {
      const entry: ProducerEntry = {
        producerId,
        partitionKey: key,
        epoch,
        lastUsedMs,
        batches: batches.map(([firstSeq, lastSeq, baseOffset, lastOffset, timestamp]) => ({ firstSeq, lastSeq, baseOffset, lastOffset, timestamp })),
      };
      this.entries.set(entryKey(key, producerId), entry);
      if (epoch > (this.epochs.get(producerId) ?? -1)) this.setEpoch(producerId, epoch);
    }
    this.evictOverflow();
  }
}

function entryKey(partition: string, producerId: number): string {
  return `${partition}|${producerId}`;
}

function isIdempotentData(batch: StoredBatch): boolean {
  return batch.producerId >= 0 && (batch.flags & BatchFlags.control) === 0 && batch.baseSequence >= 0;
}

function fenced(batch: ProducerBatch, newest: number): QuartetError {
  return new QuartetError('producer_fenced', `producer ${batch.producerId} epoch ${batch.producerEpoch} is older than ${newest}`);
}

function assertBatchFields(batch: ProducerBatch): void {
  if (!Number.isSafeInteger(batch.producerId) || batch.producerId < 0) throw new QuartetError('invalid_request', `invalid producer id ${batch.producerId}`);
  if (!Number.isInteger(batch.producerEpoch) || batch.producerEpoch < 0 || batch.producerEpoch > producerEpochMax) {
    throw new QuartetError('invalid_producer_epoch', `invalid producer epoch ${batch.producerEpoch}`);
  }
  if (!Number.isInteger(batch.baseSequence) || batch.baseSequence < 0 || batch.baseSequence > sequenceMax) {
    throw new QuartetError('out_of_order_sequence', `invalid base sequence ${batch.baseSequence}`);
  }
  if (!Number.isInteger(batch.recordCount) || batch.recordCount < 1) throw new QuartetError('invalid_request', `invalid record count ${batch.recordCount}`);
}
