// Turns for the transaction coordinator (transactions.ts): operations on one transactional id
// run one at a time, each after every earlier one on that id has settled (a promise chain per id),
// and what is queued or running can be waited for (close, tests).

import { txnKey, type TxnEntry } from './txn-records.js';

export class TxnTurns {
  /** Per transactional id: the tail of its operation chain and how many are pending. */
  private readonly queues = new Map<string, { tail: Promise<void>; pending: number }>();
  /** Work queued or running, so close() and tests can wait for it. */
  private readonly inflight = new Set<Promise<unknown>>();

  exclusive<T>(entry: TxnEntry, work: () => Promise<T>): Promise<T> {
    return this.exclusiveKey(txnKey(entry.scope, entry.transactionalId), work);
  }

  /**
   * Runs `work` after every earlier operation on the same transactional id has settled. Queues
   * exist only while work is pending, so unknown ids leave nothing behind.
   */
  exclusiveKey<T>(key: string, work: () => Promise<T>): Promise<T> {
    let queue = this.queues.get(key);
    if (!queue) {
      queue = { tail: Promise.resolve(), pending: 0 };
      this.queues.set(key, queue);
    }
    const q = queue;
    q.pending++;
    const run = q.tail.then(work);
    const settled = run.then(noop, noop).then(() => {
      if (--q.pending === 0 && this.queues.get(key) === q) this.queues.delete(key);
    });
    q.tail = settled;
    this.inflight.add(settled);
    void settled.then(() => this.inflight.delete(settled));
    return run;
  }

  /** Resolves when no operation is queued or running (tests; close). */
  async settled(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }
}

function noop(): void {}
