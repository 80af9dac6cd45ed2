// Work that must start in call order even when some of it waits first (for a worker thread):
// AppendTurns keeps, per key, the point at which the last deferred piece of work has started, and
// chains later work behind it. A key with nothing deferred runs its work at once. Kafka Produce
// keys it by partition (protocols/kafka/produce-turns.ts), a Cursus connection by itself.

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
