// Fetch long-polling: a Fetch that finds fewer than min_bytes waits up to max_wait_ms for an
// append to any of its partitions (PartitionLog.onAppend), then reads again. The number of
// waiting fetches is bounded; past the bound a fetch answers at once with what it has, which is
// always correct (max_wait_ms is an upper bound) and keeps memory flat.

import type { PartitionLog } from '../../log/types.js';
import type { FetchWaiterPool } from './handlers/types.js';

export const fetchWaitersMaxDefault = 10_000;

interface Waiter {
  finish(appended: boolean): void;
}

export class FetchWaiters implements FetchWaiterPool {
  private readonly waiters = new Set<Waiter>();
  private closed = false;

  constructor(readonly waitersMax: number = fetchWaitersMaxDefault) {
    if (!(waitersMax >= 0)) throw new RangeError('waitersMax must be >= 0');
  }

  /** Fetches waiting now. */
  get size(): number {
    return this.waiters.size;
  }

  waitForAppend(logs: readonly PartitionLog[], waitMs: number, signal?: AbortSignal): Promise<boolean> {
    if (this.closed || waitMs <= 0 || logs.length === 0 || signal?.aborted || this.waiters.size >= this.waitersMax) {
      return Promise.resolve(false);
    }
    return new Promise<boolean>((resolve) => {
      const unsubscribes: Array<() => void> = [];
      let timer: NodeJS.Timeout | null = null;
      const onAbort = (): void => waiter.finish(false);
      const waiter: Waiter = {
        finish: (appended) => {
          if (!this.waiters.delete(waiter)) return;
          if (timer) clearTimeout(timer);
          for (const unsubscribe of unsubscribes) unsubscribe();
          signal?.removeEventListener('abort', onAbort);
          resolve(appended);
        },
      };
      this.waiters.add(waiter);
      for (const log of logs) unsubscribes.push(log.onAppend(() => waiter.finish(true)));
      timer = setTimeout(() => waiter.finish(false), waitMs);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Wakes every waiter (they answer with what they have) and refuses new ones. */
  close(): void {
    this.closed = true;
    for (const waiter of [...this.waiters]) waiter.finish(false);
  }
}
