// The clocks of the transaction coordinator (transactions.ts): the timeout of an Ongoing
// transaction, which aborts it with a bumped epoch so its producer is fenced (Kafka's
// prepareFenceProducerEpoch; InitProducerId fences the same way), and the expiry of transactional
// ids idle (Empty or Complete*) for transactionalIdExpirationMs, whose records are deleted.

import assert from 'node:assert/strict';
import { producerEpochMax } from './producer-state.js';
import type { TxnMarkers } from './txn-markers.js';
import { assertTransition, isIdle, txnKey, TxnState, type TxnContext, type TxnEntry } from './txn-records.js';

export class TxnTimeouts {
  constructor(
    private readonly ctx: TxnContext,
    private readonly markers: TxnMarkers,
  ) {}

  armTimeout(entry: TxnEntry): void {
    this.cancelTimeout(entry);
    if (this.ctx.closed) return;
    const { producerId, producerEpoch, startedAt } = entry;
    const delay = startedAt + entry.timeoutMs - this.ctx.clock.now();
    entry.timeoutTimer = this.ctx.scheduler.schedule(delay, () => {
      entry.timeoutTimer = null;
      this.ctx.turns.exclusive(entry, async () => {
        if (entry.state !== TxnState.Ongoing || entry.producerId !== producerId || entry.producerEpoch !== producerEpoch || entry.startedAt !== startedAt) return;
        await this.abortWithFence(entry, 'timed out');
      }).catch((err: unknown) => this.ctx.logger.warn('could not abort a timed-out transaction', { transactionalId: entry.transactionalId, error: err }));
    });
  }

  cancelTimeout(entry: TxnEntry): void {
    entry.timeoutTimer?.cancel();
    entry.timeoutTimer = null;
  }

  /** Aborts the Ongoing transaction after bumping the epoch, so its producer is fenced. */
  async abortWithFence(entry: TxnEntry, reason: string): Promise<void> {
    assert.equal(entry.state, TxnState.Ongoing);
    this.cancelTimeout(entry);
    let epoch = entry.producerEpoch;
    if (epoch < producerEpochMax) {
      // Applied to the producer state only once PrepareAbort (with the new epoch) is durable: a
      // failed write must not leave the producer fenced by an epoch the record does not have, or
      // the markers (written with the record's epoch) would be refused forever.
      const bumped = await this.ctx.producers.proposeInit({ producerId: entry.producerId, epoch });
      assert.equal(bumped.producerId, entry.producerId, 'an epoch bump below the maximum keeps the producer id');
      epoch = bumped.epoch;
    }
    this.ctx.logger.info('aborting a transaction', { scope: entry.scope, transactionalId: entry.transactionalId, reason, producerId: entry.producerId, epoch });
    await this.ctx.records.transition(entry, { state: TxnState.PrepareAbort, producerEpoch: epoch, lastProducerId: -1, lastProducerEpoch: -1 });
    this.ctx.producers.raiseEpoch(entry.producerId, epoch);
    await this.markers.complete(entry);
  }

  /** Expires the transactional ids idle for `expirationMs` at `now`; how many went. */
  async expireIdle(now: number, expirationMs: number): Promise<number> {
    let expired = 0;
    for (const entry of [...this.ctx.entries.values()]) {
      if (!isIdle(entry.state) || now - entry.updatedAt < expirationMs) continue;
      await this.ctx.turns.exclusive(entry, async () => {
        if (!isIdle(entry.state) || now - entry.updatedAt < expirationMs) return;
        assertTransition(entry.state, TxnState.Dead);
        await this.ctx.records.chainWrite(entry, async () => {
          await this.ctx.store.deleteTransaction(entry.scope, entry.transactionalId);
          entry.stored = null;
        });
        entry.state = TxnState.Dead;
        this.ctx.entries.delete(txnKey(entry.scope, entry.transactionalId));
        expired++;
      });
    }
    return expired;
  }
}
