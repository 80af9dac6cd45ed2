// Long polls: a read that finds less than it wants waits, up to a time, for an append to any of
// its partitions (PartitionReader.onAppend), then reads again. The number of waiting reads is
// bounded; past the bound a read answers at once with what it has, which is always correct (the
// wait is an upper bound) and keeps memory flat.

import type { PartitionReader } from './reads.js';

export const appendWaitersMaxDefault = 10_000;

interface Waiter {
  finish(appended: boolean): void;
}

export class AppendWaiters {
  private readonly waiters = new Set<Waiter>();
  private closed = false;

  constructor(readonly waitersMax: number = appendWaitersMaxDefault) {
    if (!(waitersMax >= 0)) throw new RangeError('waitersMax must be >= 0');
  }

  /** Reads waiting now. */
  get size(): number {
    return this.waiters.size;
  }

  /**
   * Resolves true when any of `readers` gets an append (or its log closes), false at the
   * deadline, when the pool is full (the caller answers at once), or when `signal` aborts.
   */
  waitForAppend(readers: readonly PartitionReader[], waitMs: number, signal?: AbortSignal): Promise<boolean> {
    if (this.closed || waitMs <= 0 || readers.length === 0 || signal?.aborted || this.waiters.size >= this.waitersMax) {
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
      for (const reader of readers) unsubscribes.push(reader.onAppend(() => waiter.finish(true)));
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
