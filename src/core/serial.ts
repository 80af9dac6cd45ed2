// Concurrency helpers for the core. SerialQueue: a promise chain that runs async mutations one at a time. The catalog and the user store check
// invariants (unique names, free ids) in memory and then await the metadata store; without this,
// two concurrent creations could both pass the check before either is written.

export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work, work);
    // The chain must survive a failed step; the caller still sees the failure through `result`.
    this.tail = result.catch(() => undefined);
    return result;
  }
}

/** Runs `work` over `items` with at most `limit` in flight; rejects with the first failure after all settle. */
export async function mapLimit<T>(items: readonly T[], limit: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  let failure: unknown = null;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++]!;
      try {
        await work(item);
      } catch (err) {
        failure ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure !== null) throw failure;
}
