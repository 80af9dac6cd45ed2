// The completion of a transaction (transactions.ts): the commit or abort markers written into
// every partition it added (markerWritesInFlightMax at a time), its staged offsets committed on a
// commit, and the move to Complete*; a failure leaves it Prepare* and retries in the background
// (markerRetryBackoffMs). At start, hanging transactions whose marker was lost get it rewritten.

import assert from 'node:assert/strict';
import { isQuartetError } from '../base/errors.js';
import { mapLimit } from './serial.js';
import type { OpenTxn } from './txn-index.js';
import { concurrent, isPrepare, stagedOffsetCount, TxnState, type MarkerRequest, type TxnContext, type TxnEntry, type TxnPartitionHandle } from './txn-records.js';
import type { StoredBatch } from '../log/index.js';

/** Marker appends of one transaction in flight at once. */
export const markerWritesInFlightMax = 32;

export class TxnMarkers {
  constructor(private readonly ctx: TxnContext) {}

  /**
   * A transaction open in a partition log whose producer has no live transaction here holds the
   * LSO back forever (Kafka's "hanging transaction"). When the producer's transactional id is
   * Complete* at the epoch of the open transaction's first batch, the coordinator finished it and
   * its marker here was lost, so the recorded outcome is written again.
   *
   * Since markers are flushed before Complete* is recorded (MarkerWriter), a power loss can no
   * longer cause this: Complete* durable implies every marker durable, and a transaction whose
   * Complete* was lost is still Prepare* and finished by start(). What remains is a log written
   * before that (when Complete* could reach SQLite while the markers sat in the page cache) and a
   * transactional batch that raced in after its marker. The outcome written is the coordinator's
   * last one for that epoch: the open transaction's own when it is the last one at that epoch (the
   * usual case: a lost marker loses the partition's whole tail after it, including later
   * transactions' batches there), a best guess if a later transaction of the same epoch completed
   * without touching this partition. Anything else is reported, not repaired: an operator must
   * abort it.
   */
  async repairHangingTransactions(): Promise<void> {
    const live = new Set<number>();
    const completed = new Map<number, TxnEntry>();
    for (const e of this.ctx.entries.values()) {
      if (e.state === TxnState.Ongoing || isPrepare(e.state)) live.add(e.producerId);
      else if (e.state === TxnState.CompleteCommit || e.state === TxnState.CompleteAbort) completed.set(e.producerId, e);
    }
    for (const p of this.ctx.partitions.list()) {
      for (const open of this.ctx.index.openTransactions(p.key)) {
        if (live.has(open.producerId)) continue;
        const entry = completed.get(open.producerId);
        if (entry && (await this.rewriteLostMarker(entry, p, open))) continue;
        this.ctx.logger.warn('hanging transaction: open in the log, unknown to the coordinator', { partition: p.key, ...open });
      }
    }
  }

  /** Writes the Complete* entry's marker into `p` if `open` began at the entry's epoch. */
  private async rewriteLostMarker(entry: TxnEntry, p: TxnPartitionHandle, open: OpenTxn): Promise<boolean> {
    let first: StoredBatch | undefined;
    try {
      first = (await p.log.read(open.firstOffset, { maxBytes: 1 }))[0];
    } catch {
      return false; // gone with retention: nothing to tell the epoch by
    }
    if (!first || first.baseOffset !== open.firstOffset || first.producerId !== entry.producerId || first.producerEpoch !== entry.producerEpoch) return false;
    return this.ctx.turns.exclusive(entry, async () => {
      const commit = entry.state === TxnState.CompleteCommit;
      if ((!commit && entry.state !== TxnState.CompleteAbort) || first.producerEpoch !== entry.producerEpoch) return false;
      this.ctx.logger.warn('rewriting the lost marker of a completed transaction', { scope: entry.scope, transactionalId: entry.transactionalId, partition: p.key, ...open, commit });
      try {
        const offset = await this.ctx.writeMarker(this.markerRequest(entry, p, commit));
        this.ctx.index.observeMarker(p.key, entry.producerId, offset, commit ? 'commit' : 'abort');
        return true;
      } catch (err) {
        this.ctx.logger.warn('could not rewrite a lost marker', { transactionalId: entry.transactionalId, partition: p.key, error: err });
        return false;
      }
    });
  }

  /** A Prepare* left by a failed marker write is finished first; concurrent_transactions if it still fails. */
  async settlePrepared(entry: TxnEntry): Promise<void> {
    if (isPrepare(entry.state) && !(await this.complete(entry))) throw concurrent(entry);
  }

  /**
   * Writes the markers of a Prepare* transaction, commits its offsets (commit only) and moves it
   * to Complete*. Returns false (and schedules a retry) when a marker or the offsets fail.
   */
  async complete(entry: TxnEntry): Promise<boolean> {
    assert.ok(isPrepare(entry.state), `complete() in state ${entry.state}`);
    const commit = entry.state === TxnState.PrepareCommit;
    try {
      await this.writeMarkers(entry, commit);
      if (commit) {
        for (const [groupId, pending] of entry.groups) {
          if (pending.size > 0) await this.ctx.offsets.commit(this.ctx.offsetScopeOf(entry.scope), groupId, [...pending.values()]);
        }
      }
      await this.ctx.records.transition(entry, {
        state: commit ? TxnState.CompleteCommit : TxnState.CompleteAbort,
        partitions: new Map(),
        groups: new Map(),
        startedAt: -1,
        outcome: { partitions: [...entry.partitions.values()].map((p) => ({ ...p })), offsets: stagedOffsetCount(entry.groups) },
      });
    } catch (err) {
      this.ctx.logger.warn('could not complete a transaction; retrying', { scope: entry.scope, transactionalId: entry.transactionalId, state: entry.state, error: err });
      this.scheduleRetry(entry);
      return false;
    }
    entry.markersWritten.clear();
    entry.retryTimer?.cancel();
    entry.retryTimer = null;
    return true;
  }

  /** The marker of `entry`'s outcome for one of its partitions. */
  private markerRequest(entry: TxnEntry, p: { topicInternalId: number; partition: number }, commit: boolean): MarkerRequest {
    return {
      topicInternalId: p.topicInternalId,
      partition: p.partition,
      scope: entry.scope,
      transactionalId: entry.transactionalId,
      producerId: entry.producerId,
      producerEpoch: entry.producerEpoch,
      commit,
      coordinatorEpoch: this.ctx.coordinatorEpoch,
    };
  }

  private async writeMarkers(entry: TxnEntry, commit: boolean): Promise<void> {
    const todo = [...entry.partitions].filter(([k]) => !entry.markersWritten.has(k));
    await mapLimit(todo, markerWritesInFlightMax, async ([k, p]) => {
      // Dropped since the list was made (deleted or purged: dropPartitions): no marker.
      if (!entry.partitions.has(k)) return;
      let offset: number;
      try {
        offset = await this.ctx.writeMarker(this.markerRequest(entry, p, commit));
      } catch (err) {
        // A partition deleted since it joined the transaction needs no marker.
        if (isQuartetError(err) && (err.code === 'unknown_topic' || err.code === 'unknown_partition')) {
          entry.markersWritten.add(k);
          return;
        }
        throw err;
      }
      entry.markersWritten.add(k);
      this.ctx.index.observeMarker(k, entry.producerId, offset, commit ? 'commit' : 'abort');
    });
  }

  scheduleRetry(entry: TxnEntry): void {
    if (entry.retryTimer || this.ctx.closed) return;
    entry.retryTimer = this.ctx.scheduler.schedule(this.ctx.markerRetryBackoffMs, () => {
      entry.retryTimer = null;
      this.ctx.turns.exclusive(entry, async () => {
        if (isPrepare(entry.state)) await this.complete(entry);
      }).catch((err: unknown) => this.ctx.logger.warn('transaction retry failed', { transactionalId: entry.transactionalId, error: err }));
    });
  }
}
