// Produce appends reach a partition's log in request order because the handler starts each one
// synchronously. A batch recompressed on a worker thread (handlers/produce.ts) starts later, so
// the appends to its partition that come after it must wait for it: AppendTurns keeps, per
// partition, the point at which the last deferred append has started, and chains later appends
// behind it. A partition with nothing deferred appends at once, as before.

import type { Broker } from '../../core/broker.js';

export class AppendTurns {
  /** Per partition key: settles once the last deferred append there has been started. */
  private readonly tails = new Map<string, Promise<unknown>>();

  /**
   * Calls `append` with `prepared` now when it is ready and nothing deferred is pending for `key`;
   * else once `prepared` settles and the earlier deferred append has started. A `prepared` that
   * rejects answers `failed(error)` and appends nothing.
   */
  run<T, R>(key: string, prepared: T | Promise<T>, append: (value: T) => R | Promise<R>, failed: (error: unknown) => R): R | Promise<R> {
    const tail = this.tails.get(key);
    if (tail === undefined && !(prepared instanceof Promise)) return append(prepared);
    // Wrapped in an object so that `started` settles when append() is called, not when its promise does.
    const started = Promise.all([tail, prepared]).then(([, value]) => ({ result: append(value) }));
    const settled = started.then(() => undefined, () => undefined);
    this.tails.set(key, settled);
    void settled.then(() => {
      if (this.tails.get(key) === settled) this.tails.delete(key);
    });
    return started.then((s) => s.result, failed);
  }

  /** Partitions with a deferred append pending (tests). */
  get pending(): number {
    return this.tails.size;
  }
}

const turnsByBroker = new WeakMap<Broker, AppendTurns>();

/** The broker's AppendTurns (one per broker, shared by every Kafka connection). */
export function produceTurns(broker: Broker): AppendTurns {
  let turns = turnsByBroker.get(broker);
  if (turns === undefined) {
    turns = new AppendTurns();
    turnsByBroker.set(broker, turns);
  }
  return turns;
}
