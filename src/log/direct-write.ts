// Appends under the 'interval' fsync policy write into the page cache synchronously, on the event
// loop, instead of through libuv's thread pool. A 256 KiB write takes ~70 µs either way; the
// thread pool adds a hand-off in each direction that, one write at a time, halves throughput
// (async writev measured 2.0 GB/s where writevSync reached 3.1 GB/s on the benchmark machine).
//
// The risk of writing on the event loop is the kernel throttling a writer once dirty pages pass
// its limit (balance_dirty_pages): one write can then take many milliseconds, and every connection
// waits. The gate watches for that: after one synchronous write slower than `slowWriteMs`, every
// log of the process goes back to thread-pool writes for a cooldown, then tries again. The first
// cooldown is short (`cooldownMs`): a single slow write is often a one-off (the journal commit of
// a segment roll's directory fsync held one write for 50-90 ms), and ten seconds on the thread
// pool for it cost a 1.25 GiB stream half its rate. A throttled writer stays throttled, so a slow
// write within `forgetMs` of the previous one quadruples the cooldown, up to `maxCooldownMs`: under
// sustained throttling the event loop pays three more stalls (after 0.25, 1 and 4 s) before the
// cooldown reaches its 10 s ceiling, where it stays while slow writes keep coming. It also
// bounds the synchronous writing done in one turn of the event loop (`turnBudgetMs`): many
// partitions with rounds queued at once (one large multi-partition request, a producer whose
// appends chain without ever leaving the microtask queue, or the backlog after a cooldown) wait
// for the next turn once the budget is spent (`nextTurn`), so timers and other sockets get their
// turn in between, and then write synchronously again, first in line. (They used to go to the
// thread pool instead; a write handed over there took 0.3-1.3 ms against ~0.06 ms, queued behind
// write-back hints and block reservations.)

import { performance } from 'node:perf_hooks';

export interface DirectWriteGateOptions {
  /** A synchronous write slower than this turns direct writes off. Default 20 ms. */
  slowWriteMs?: number;
  /** How long they stay off after a slow write that follows none within `forgetMs`. Default 250 ms (0: never off). */
  cooldownMs?: number;
  /** The longest cooldown; each slow write within `forgetMs` of the previous one quadruples it up to this. Default 10 s. */
  maxCooldownMs?: number;
  /** A slow write more than this after the previous one starts again from `cooldownMs`. Default 60 s; at least `maxCooldownMs`. */
  forgetMs?: number;
  /** Synchronous writing allowed per turn of the event loop, in ms (> 0). Default 10 ms. */
  turnBudgetMs?: number;
  /** Milliseconds, monotonic; injectable for tests. */
  now?: () => number;
}

export class DirectWriteGate {
  private readonly slowWriteMs: number;
  private readonly cooldownMs: number;
  private readonly maxCooldownMs: number;
  private readonly forgetMs: number;
  private readonly turnBudgetMs: number;
  private readonly now: () => number;
  private offUntil = Number.NEGATIVE_INFINITY;
  /** When the last slow write ended, and the cooldown it started. */
  private lastSlowAt = Number.NEGATIVE_INFINITY;
  private lastCooldownMs = 0;
  /** Time spent in synchronous writes since the turn began; reset by a setImmediate. */
  private turnSpentMs = 0;
  private turnResetPending = false;
  /** Rounds waiting for the budget (nextTurn), resumed in order by the reset. */
  private waiting: Array<() => void> = [];
  /** Synchronous writes that turned direct writes off (for tests and metrics). */
  slowWrites = 0;

  constructor(options: DirectWriteGateOptions = {}) {
    this.slowWriteMs = options.slowWriteMs ?? 20;
    this.cooldownMs = options.cooldownMs ?? 250;
    this.maxCooldownMs = Math.max(this.cooldownMs, options.maxCooldownMs ?? 10_000);
    // Shorter than the longest cooldown, a cooldown could outlast it: the slow write that ends it
    // would start over from the first cooldown while throttling goes on.
    this.forgetMs = Math.max(this.maxCooldownMs, options.forgetMs ?? 60_000);
    this.turnBudgetMs = options.turnBudgetMs ?? 10;
    // A round waits for a turn with budget left (Segment.append): none would never come.
    if (!(this.turnBudgetMs > 0)) throw new RangeError(`turnBudgetMs must be > 0, got ${this.turnBudgetMs}`);
    this.now = options.now ?? (() => performance.now());
  }

  /** Whether the next write may run synchronously. */
  open(): boolean {
    return this.turnSpentMs < this.turnBudgetMs && !this.coolingDown();
  }

  /**
   * Whether a write must wait for the next turn (`nextTurn`) before it is decided: this turn's
   * budget is spent and direct writes are not off (when they are, it goes to the thread pool now).
   * Check again after each wait, in the same continuation as the write.
   */
  mustWait(): boolean {
    return this.turnSpentMs >= this.turnBudgetMs && !this.coolingDown();
  }

  private coolingDown(): boolean {
    return this.now() < this.offUntil;
  }

  /**
   * Resolves once the budget is fresh again (in the next turn of the event loop), right after the
   * reset and before anything else runs: rounds that waited write before appends arriving in later
   * callbacks, so a steady stream of new appends cannot keep them waiting.
   */
  nextTurn(): Promise<void> {
    this.scheduleReset();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Turns direct writes off for `ms` milliseconds (tests use it to force the thread-pool path). */
  closeFor(ms: number): void {
    this.offUntil = Math.max(this.offUntil, this.now() + ms);
  }

  /** Runs `write` synchronously and times it. */
  write<T>(write: () => T): T {
    const start = this.now();
    try {
      return write();
    } finally {
      const end = this.now();
      if (end - start > this.slowWriteMs) this.slowWrite(end);
      this.turnSpentMs += end - start;
      this.scheduleReset();
    }
  }

  /** Direct writes off for the next cooldown: the first, or four times the last one if it is recent. */
  private slowWrite(end: number): void {
    this.slowWrites++;
    const repeated = Number.isFinite(this.lastSlowAt) && end - this.lastSlowAt <= this.forgetMs;
    this.lastCooldownMs = repeated ? Math.min(this.lastCooldownMs * 4, this.maxCooldownMs) : this.cooldownMs;
    this.lastSlowAt = end;
    this.offUntil = Math.max(this.offUntil, end + this.lastCooldownMs);
  }

  /** The cooldown the last slow write started, in ms (0 before any; for tests and metrics). */
  get currentCooldownMs(): number {
    return this.lastCooldownMs;
  }

  private scheduleReset(): void {
    if (this.turnResetPending) return;
    this.turnResetPending = true;
    setImmediate(() => {
      this.turnSpentMs = 0;
      this.turnResetPending = false;
      // Their continuations run as microtasks right after this callback, first come first served;
      // those that find the budget spent again wait for the next reset, still ahead of newcomers.
      for (const resume of this.waiting.splice(0)) resume();
    });
  }
}

/** The process-wide gate every FileLog uses unless its options give another (or null: never). */
export const defaultDirectWriteGate = new DirectWriteGate();
