// Per-partition transaction state as the log shows it: the first offset of every open transaction
// (which bounds the last stable offset) and the aborted transactions (which read_committed readers
// skip). This is Kafka's ProducerStateManager.ongoingTxns plus its TxnIndex, kept in memory and
// keyed by producer id, as Kafka does: a partition knows nothing of the coordinator, only the
// transactional batches and the markers appended to it.
//
//  - A transactional data batch opens its producer's transaction at its base offset (if none is
//    open yet).
//  - A commit or abort marker (a control batch) closes it; an aborted one is remembered as
//    { producerId, firstOffset, lastOffset = the marker's offset }.
//  - LSO = min(first offset of the open transactions, high watermark).
//
// Durability: a checkpoint per partition (the open and aborted lists, and the high watermark they
// cover: see checkpoints()) is written with the producer snapshots (every maintenance pass and on
// close). At open a
// partition loads its checkpoint and scans only the log after it, reading batch envelopes and, for
// control batches, the marker type; with no usable checkpoint it scans from the log start. So
// start-up reads at most the data appended since the last maintenance pass (5 minutes by default)
// unless the process never checkpointed.
//
// The marker type lives inside each protocol's own control record (Kafka: key = version int16,
// type int16 with 0 abort and 1 commit). The core does not parse protocol bytes: front-ends supply
// a MarkerKindFn per batch format; this file defines the neutral format's marker.

import assert from 'node:assert/strict';
import type { Logger } from '../base/logger.js';
import type { TxnCheckpointRecord } from './metadata-store.js';
import { BatchFlags, BatchFormat, decodeNeutralBatch, encodeNeutralBatch, type AppendRequest, type PartitionLog, type StoredBatch } from '../log/index.js';

// Named limits.
/** Aborted transactions remembered per partition; beyond it the oldest are dropped (with a warning). */
export const abortedTxnsPerPartitionMax = 100_000;
/** Bytes asked of the log per read while rebuilding a partition's index. */
export const txnIndexScanReadBytes = 4 * 1024 * 1024;

export type MarkerKind = 'commit' | 'abort';

/** Says whether a control batch is a transaction marker, and which. null: not a marker (ignored). */
export type MarkerKindFn = (batch: StoredBatch) => MarkerKind | null;

/** What a marker encoder is given: everything a protocol puts into its control batch. */
export interface MarkerFields {
  producerId: number;
  producerEpoch: number;
  commit: boolean;
  coordinatorEpoch: number;
  /** Broker time (ms). */
  timestamp: number;
  /** Where the marker goes (formats whose batches name their topic and partition: Cursus CBV2); the append path always sets them. */
  topic?: string;
  partition?: number;
}

/** Builds the control batch (flags control|transactional) for a marker in one protocol's format. */
export type MarkerEncoder = (marker: MarkerFields) => AppendRequest;

/** One aborted transaction in a partition (what Kafka Fetch returns as aborted_transactions). */
export interface AbortedTxn {
  producerId: number;
  firstOffset: number;
  /** The offset of the abort marker. */
  lastOffset: number;
}

export interface OpenTxn {
  producerId: number;
  firstOffset: number;
}

// --- the neutral format's marker ---------------------------------------------------------------
//
// A neutral batch with flags control|transactional and one record whose key and value mirror
// Kafka's control record (big-endian):
//   key   := version int16 (= 0) | type int16 (0 abort, 1 commit)
//   value := version int16 (= 0) | coordinatorEpoch int32

const neutralMarkerVersion = 0;

export const encodeNeutralMarker: MarkerEncoder = (marker) => {
  const key = Buffer.alloc(4);
  key.writeInt16BE(neutralMarkerVersion, 0);
  key.writeInt16BE(marker.commit ? 1 : 0, 2);
  const value = Buffer.alloc(6);
  value.writeInt16BE(neutralMarkerVersion, 0);
  value.writeInt32BE(marker.coordinatorEpoch, 2);
  return encodeNeutralBatch([{ key, value }], {
    timestamp: marker.timestamp,
    producerId: marker.producerId,
    producerEpoch: marker.producerEpoch,
    baseSequence: -1,
    flags: BatchFlags.control | BatchFlags.transactional,
  });
};

/** The marker type of a neutral control batch; null for anything else (or a malformed marker). */
export const neutralMarkerKind: MarkerKindFn = (batch) => {
  if (batch.format !== BatchFormat.neutral || (batch.flags & BatchFlags.control) === 0) return null;
  let key: Buffer | null;
  try {
    key = decodeNeutralBatch(batch)[0]?.key ?? null;
  } catch {
    return null;
  }
  if (key === null || key.length !== 4 || key.readInt16BE(0) !== neutralMarkerVersion) return null;
  const type = key.readInt16BE(2);
  return type === 1 ? 'commit' : type === 0 ? 'abort' : null;
};

/** Picks the MarkerKindFn by batch format; the neutral format's is always there. */
export function markerKindByFormat(kinds: Readonly<Partial<Record<BatchFormat, MarkerKindFn>>> = {}): MarkerKindFn {
  const table = new Map<number, MarkerKindFn>([[BatchFormat.neutral, neutralMarkerKind]]);
  for (const [format, fn] of Object.entries(kinds)) if (fn) table.set(Number(format), fn);
  return (batch) => table.get(batch.format)?.(batch) ?? null;
}

// --- read_committed ----------------------------------------------------------------------------

/**
 * The batches a read_committed reader may see, given the batches read (below the LSO) and the
 * aborted transactions overlapping them: control batches and transactional batches of an aborted
 * transaction are dropped. Kafka clients do this themselves from the Fetch response's aborted
 * list; other protocols reading the same log call this.
 */
export function visibleCommitted(batches: readonly StoredBatch[], aborted: readonly AbortedTxn[]): StoredBatch[] {
  const hidden = hiddenFromCommitted(aborted);
  return batches.filter((b) => !hidden(b));
}

/**
 * Whether a read_committed reader must not see a batch: a control batch (a marker), or a
 * transactional batch of one of the `aborted` transactions (those overlapping the batches read).
 */
export function hiddenFromCommitted(aborted: readonly AbortedTxn[]): (batch: StoredBatch) => boolean {
  const byProducer = new Map<number, AbortedTxn[]>();
  for (const a of aborted) {
    const list = byProducer.get(a.producerId);
    if (list) list.push(a);
    else byProducer.set(a.producerId, [a]);
  }
  return (b) => {
    if ((b.flags & BatchFlags.control) !== 0) return true;
    if ((b.flags & BatchFlags.transactional) === 0) return false;
    const ranges = byProducer.get(b.producerId);
    return ranges?.some((a) => a.firstOffset <= b.baseOffset && b.lastOffset <= a.lastOffset) === true;
  };
}

// --- the index ---------------------------------------------------------------------------------

interface PartitionTxnState {
  /** producerId → first offset of its open transaction here. */
  open: Map<number, number>;
  /** Ascending by lastOffset (marker offsets only grow). */
  aborted: AbortedTxn[];
  /** The offset of the newest marker that closed a transaction here (-1: none); see checkpoints(). */
  lastMarkerOffset: number;
}

/** Checkpoint form: { open: [[producerId, firstOffset]...], aborted: [[producerId, firstOffset, lastOffset]...] }. */
interface CheckpointState {
  open: Array<[number, number]>;
  aborted: Array<[number, number, number]>;
}

export class TxnIndex {
  private readonly partitions = new Map<string, PartitionTxnState>();
  /** Checkpoints read at open, consumed by recover(). */
  private readonly pending = new Map<string, TxnCheckpointRecord>();
  private overflowWarned = false;

  constructor(
    private readonly markerKind: MarkerKindFn,
    private readonly logger: Logger,
    readonly abortedMax = abortedTxnsPerPartitionMax,
  ) {
    assert.ok(abortedMax >= 1, 'abortedMax must be >= 1');
  }

  /**
   * Observes any appended batch: only transactional data and transaction markers matter. Returns
   * what undoes the change if the batch's write fails (the log then drops it and reuses its
   * offsets), or null when nothing changed. Undos of batches failing together may run in any order.
   */
  observe(key: string, batch: StoredBatch): (() => void) | null {
    if (batch.producerId < 0) return null;
    if ((batch.flags & BatchFlags.control) !== 0) {
      const kind = this.markerKind(batch);
      return kind === null ? null : this.observeMarker(key, batch.producerId, batch.baseOffset, kind);
    }
    if ((batch.flags & BatchFlags.transactional) !== 0) return this.observeData(key, batch.producerId, batch.baseOffset);
    return null;
  }

  /** A transactional data batch of `producerId` at `baseOffset`. Returns its undo when it opened a transaction. */
  observeData(key: string, producerId: number, baseOffset: number): (() => void) | null {
    const state = this.state(key);
    if (state.open.has(producerId)) return null;
    state.open.set(producerId, baseOffset);
    return () => {
      if (this.partitions.get(key) === state && state.open.get(producerId) === baseOffset) state.open.delete(producerId);
    };
  }

  /**
   * A marker of `producerId` at `offset`. Idempotent: a marker for a transaction already closed
   * (the coordinator's own observation after the broker's, a rewritten marker after a restart),
   * or one that precedes the open transaction's first offset, changes nothing. Returns the undo
   * of the change (see observe()), or null when nothing changed.
   */
  observeMarker(key: string, producerId: number, offset: number, kind: MarkerKind): (() => void) | null {
    const state = this.partitions.get(key);
    const firstOffset = state?.open.get(producerId);
    if (!state || firstOffset === undefined || firstOffset > offset) return null;
    state.open.delete(producerId);
    if (offset > state.lastMarkerOffset) state.lastMarkerOffset = offset;
    if (kind === 'abort') this.addAborted(key, state, { producerId, firstOffset, lastOffset: offset });
    return () => {
      if (this.partitions.get(key) !== state) return;
      if (kind === 'abort') {
        const i = state.aborted.findIndex((a) => a.producerId === producerId && a.lastOffset === offset);
        if (i >= 0) state.aborted.splice(i, 1);
      }
      // A transaction opened after the marker failed with it (or will): the one it closed is open again.
      const now = state.open.get(producerId);
      if (now === undefined || now > offset) state.open.set(producerId, firstOffset);
    };
  }

  /** The first offset of the oldest open transaction, or null when none is open. */
  firstUnstableOffset(key: string): number | null {
    const state = this.partitions.get(key);
    if (!state || state.open.size === 0) return null;
    let min = Infinity;
    for (const first of state.open.values()) if (first < min) min = first;
    return min;
  }

  lastStableOffset(key: string, highWatermark: number): number {
    const first = this.firstUnstableOffset(key);
    return first === null ? highWatermark : Math.min(first, highWatermark);
  }

  /** Aborted transactions overlapping [fromOffset, toOffset): lastOffset >= from and firstOffset < to. */
  abortedTransactions(key: string, fromOffset: number, toOffset: number): AbortedTxn[] {
    const aborted = this.partitions.get(key)?.aborted;
    if (!aborted || aborted.length === 0) return [];
    const out: AbortedTxn[] = [];
    for (let i = lowerBound(aborted, fromOffset); i < aborted.length; i++) {
      const a = aborted[i]!;
      if (a.firstOffset < toOffset) out.push({ ...a });
    }
    return out;
  }

  openTransactions(key: string): OpenTxn[] {
    return [...(this.partitions.get(key)?.open ?? [])].map(([producerId, firstOffset]) => ({ producerId, firstOffset }));
  }

  /** Forgets aborted transactions that end below the log start (retention removed them). */
  truncateBefore(key: string, logStartOffset: number): void {
    const state = this.partitions.get(key);
    if (!state) return;
    const keep = lowerBound(state.aborted, logStartOffset);
    if (keep > 0) state.aborted.splice(0, keep);
  }

  /** Forgets the partitions (topic deleted or purged). */
  drop(keys: readonly string[]): void {
    for (const key of keys) {
      this.partitions.delete(key);
      this.pending.delete(key);
    }
  }

  // --- durability ----------------------------------------------------------------------------

  /** Keeps the checkpoints read from the store until recover() consumes them. */
  loadCheckpoints(records: readonly TxnCheckpointRecord[]): void {
    for (const r of records) this.pending.set(r.partitionKey, r);
  }

  /**
   * Rebuilds a partition: its checkpoint if it still matches the log, then every batch after it
   * (from the log start without one). Returns the number of batches observed.
   */
  async recover(key: string, log: PartitionLog): Promise<number> {
    const stats = log.stats();
    const checkpoint = this.pending.get(key);
    this.pending.delete(key);
    this.partitions.delete(key);
    let from = stats.logStartOffset;
    // Batches below this are in the checkpoint. A batch that begins below the log start but reaches
    // it (DeleteRecords moved the start inside it) is still in the log and observed: it may open a
    // transaction that bounds the LSO.
    let covered = 0;
    if (checkpoint && checkpoint.nextOffset <= stats.nextOffset) {
      this.loadState(key, checkpoint.state);
      from = Math.max(checkpoint.nextOffset, stats.logStartOffset);
      covered = checkpoint.nextOffset;
    } else if (checkpoint) {
      // The log lost its unflushed tail after the checkpoint: it may describe batches that are gone.
      this.logger.warn('transaction checkpoint is ahead of the log; scanning the whole partition', { partition: key, checkpointOffset: checkpoint.nextOffset, logEndOffset: stats.nextOffset });
    }
    let observed = 0;
    let offset = from;
    while (offset < stats.nextOffset) {
      // Headers alone: a corrupt payload is refused when it is read to be served, not here.
      const batches = await log.read(offset, { maxBytes: txnIndexScanReadBytes, verify: false });
      if (batches.length === 0) break;
      for (const batch of batches) {
        if (batch.baseOffset < covered || (batch.flags & (BatchFlags.transactional | BatchFlags.control)) === 0) continue;
        this.observe(key, batch);
        observed++;
      }
      offset = batches[batches.length - 1]!.lastOffset + 1;
    }
    this.truncateBefore(key, stats.logStartOffset);
    return observed;
  }

  /**
   * Checkpoint records for the given partitions: their state as of `nextOffset`, which must be the
   * high watermark. The index observes batches when their offset is assigned, before they are
   * written; a batch at or above the high watermark may still fail, and the log then reuses its
   * offset. So transactions opened at or above it are left out (the scan after the next open finds
   * them if they were written), and a partition where a marker at or above it closed a transaction
   * gets no record this time (its state before that marker is not kept; its previous checkpoint
   * stays, and is only older).
   */
  checkpoints(partitions: ReadonlyArray<{ key: string; nextOffset: number }>, takenAt: number): TxnCheckpointRecord[] {
    const records: TxnCheckpointRecord[] = [];
    for (const p of partitions) {
      const state = this.partitions.get(p.key);
      if (state && state.lastMarkerOffset >= p.nextOffset) continue;
      const body: CheckpointState = {
        open: state ? [...state.open].filter(([, firstOffset]) => firstOffset < p.nextOffset) : [],
        aborted: state ? state.aborted.map((a) => [a.producerId, a.firstOffset, a.lastOffset]) : [],
      };
      records.push({ partitionKey: p.key, nextOffset: p.nextOffset, state: body, takenAt });
    }
    return records;
  }

  // --- internals -----------------------------------------------------------------------------

  private state(key: string): PartitionTxnState {
    let state = this.partitions.get(key);
    if (!state) {
      state = { open: new Map(), aborted: [], lastMarkerOffset: -1 };
      this.partitions.set(key, state);
    }
    return state;
  }

  private addAborted(key: string, state: PartitionTxnState, entry: AbortedTxn): void {
    assert.ok(entry.firstOffset <= entry.lastOffset, 'an aborted transaction must end at or after its start');
    // Markers arrive in offset order; insert in place should one ever not.
    let i = state.aborted.length;
    while (i > 0 && state.aborted[i - 1]!.lastOffset > entry.lastOffset) i--;
    state.aborted.splice(i, 0, entry);
    if (state.aborted.length > this.abortedMax) {
      state.aborted.shift();
      if (!this.overflowWarned) {
        this.overflowWarned = true;
        this.logger.warn('aborted-transaction index is full; dropping the oldest entries (read_committed readers of old offsets may see aborted records)', { partition: key, max: this.abortedMax });
      }
    }
  }

  private loadState(key: string, raw: unknown): void {
    const body = raw as Partial<CheckpointState> | null;
    const state = this.state(key);
    for (const [producerId, firstOffset] of body?.open ?? []) state.open.set(producerId, firstOffset);
    for (const [producerId, firstOffset, lastOffset] of body?.aborted ?? []) state.aborted.push({ producerId, firstOffset, lastOffset });
    state.aborted.sort((a, b) => a.lastOffset - b.lastOffset);
  }
}

/** The index of the first entry whose lastOffset >= offset. */
function lowerBound(aborted: readonly AbortedTxn[], offset: number): number {
  let lo = 0;
  let hi = aborted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (aborted[mid]!.lastOffset < offset) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
