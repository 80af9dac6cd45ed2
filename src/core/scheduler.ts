// One-shot timers behind a seam, so that timeouts (transaction timeouts and marker retries, the
// Kafka group coordinator's session, rebalance and sync timeouts) run on a manual scheduler in
// tests (no real timers, no sleeping) and on setTimeout in the broker. The manual scheduler drives a ManualClock so that `clock.now()`
// inside a callback is the callback's own deadline.

import type { ManualClock } from '../base/clock.js';

export interface TimerHandle {
  /** Stops the timer; a no-op once it has fired or been cancelled. */
  cancel(): void;
}

export interface Scheduler {
  /** Runs `callback` once, `delayMs` milliseconds from now (negative delays mean now). */
  schedule(delayMs: number, callback: () => void): TimerHandle;
}

/** setTimeout silently turns longer delays into 1 ms, so every delay is clamped below it. */
export const timerDelayMsMax = 2 ** 31 - 1;

export const systemScheduler: Scheduler = {
  schedule(delayMs, callback) {
    const timer = setTimeout(callback, Math.min(Math.max(0, delayMs), timerDelayMsMax));
    timer.unref();
    return { cancel: () => clearTimeout(timer) };
  },
};

interface ManualTimer {
  readonly fireAtMs: number;
  readonly seq: number;
  readonly callback: () => void;
}

/**
 * A scheduler for tests: nothing fires until `advance(ms)`, which moves the clock to each due
 * timer's deadline in order (ties in scheduling order) and runs it, including timers that the
 * callbacks themselves schedule inside the window.
 */
export class ManualScheduler implements Scheduler {
  private readonly timers = new Set<ManualTimer>();
  private seq = 0;

  constructor(readonly clock: ManualClock) {}

  schedule(delayMs: number, callback: () => void): TimerHandle {
    const timer: ManualTimer = { fireAtMs: this.clock.now() + Math.max(0, delayMs), seq: this.seq++, callback };
    this.timers.add(timer);
    return { cancel: () => this.timers.delete(timer) };
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  advance(ms: number): void {
    const targetMs = this.clock.now() + ms;
    for (let next = this.nextDue(targetMs); next !== undefined; next = this.nextDue(targetMs)) {
      this.timers.delete(next);
      this.clock.set(next.fireAtMs);
      next.callback();
    }
    this.clock.set(targetMs);
  }

  /** Timers scheduled and neither fired nor cancelled. */
  get pendingCount(): number {
    return this.timers.size;
  }

  private nextDue(targetMs: number): ManualTimer | undefined {
    let best: ManualTimer | undefined;
    for (const timer of this.timers) {
      if (timer.fireAtMs > targetMs) continue;
      if (best === undefined || timer.fireAtMs < best.fireAtMs || (timer.fireAtMs === best.fireAtMs && timer.seq < best.seq)) best = timer;
    }
    return best;
  }
}
