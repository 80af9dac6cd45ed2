// A promise chain that runs async mutations one at a time. The catalog and the user store check
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
