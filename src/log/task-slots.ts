// A bound on how many of some task run at once in the process, the rest starting in arrival order
// as slots free up. The log uses it for the 'interval' policy's timer fsyncs: each holds one of
// libuv's thread-pool threads for as long as the disk takes (tens of milliseconds under load), and
// with one partition per pool thread fsyncing on the same tick, reads and thread-pool writes of
// every partition queued behind them (measured: 1 MB Iggy sends stalled ~20 ms once a second).

/** A task given to `schedule`: its outcome, and a way to drop it while it waits for a slot. */
export interface ScheduledTask<T> {
  /** The task's result; undefined when it was cancelled before it started. */
  done: Promise<T | undefined>;
  /** Drops the task if it has not started; true when it was dropped. */
  cancel(): boolean;
}

interface Waiter {
  start: () => void;
}

export class TaskSlots {
  private running = 0;
  private readonly waiting: Waiter[] = [];

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
    return (await this.schedule(task).done) as T;
  }

  /** Like run, but the task can be dropped while it waits (its `done` then resolves undefined). */
  schedule<T>(task: () => Promise<T>): ScheduledTask<T> {
    if (this.running < this.max) {
      this.running++;
      return { done: this.holding(task), cancel: () => false };
    }
    let resolveStart!: (go: boolean) => void;
    const started = new Promise<boolean>((resolve) => (resolveStart = resolve));
    const waiter: Waiter = { start: () => resolveStart(true) };
    this.waiting.push(waiter);
    const done = started.then((go) => (go ? this.holding(task) : undefined));
    const cancel = (): boolean => {
      const at = this.waiting.indexOf(waiter);
      if (at < 0) return false;
      this.waiting.splice(at, 1);
      resolveStart(false);
      return true;
    };
    return { done, cancel };
  }

  /** Runs `task` in a slot already taken, and frees the slot when it settles. */
  private async holding<T>(task: () => Promise<T>): Promise<T> {
    try {
      return await task();
    } finally {
      // A freed slot passes straight to the first waiter (running stays the same).
      const next = this.waiting.shift();
      if (next !== undefined) next.start();
      else this.running--;
    }
  }
}

/** The process-wide slots of timer fsyncs (see FileLogOptions.backgroundSyncs). */
export const defaultBackgroundSyncSlots = new TaskSlots(2);
