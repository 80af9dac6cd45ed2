// A bound on how many of some task run at once in the process, the rest starting in arrival order
// as slots free up. The log uses it for the 'interval' policy's timer fsyncs: each holds one of
// libuv's thread-pool threads for as long as the disk takes (tens of milliseconds under load), and
// with one partition per pool thread fsyncing on the same tick, reads and thread-pool writes of
// every partition queued behind them (measured: 1 MB Iggy sends stalled ~20 ms once a second).

export class TaskSlots {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly max: number) {
    if (!(Number.isInteger(max) && max >= 1)) throw new RangeError(`task slots must be a positive integer, got ${max}`);
  }

  /** Tasks running now. */
  get active(): number {
    return this.running;
  }

  /** Tasks waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Runs `task` once a slot is free; the slot is freed when its promise settles. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running < this.max) this.running++;
    // A slot freed while tasks wait passes straight to the first of them (running stays the same).
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next !== undefined) next();
      else this.running--;
    }
  }
}

/** The process-wide slots of timer fsyncs (see FileLogOptions.backgroundSyncs). */
export const defaultBackgroundSyncSlots = new TaskSlots(2);
