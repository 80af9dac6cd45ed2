// The broker-wide budget for the bytes of large request frames held in memory (broker.requestBytes),
// and each framer's part in it (FrameAdmission): a frame of `budgetedFrameBytesMin` or more that a
// framer must assemble across socket chunks takes its size from the budget when its length is
// read, and gives it back when the request has been handled (the frame released) or the
// connection closes with the frame unfinished.
//
// Kafka and Iggy have no "broker busy" error, so a frame the budget cannot take waits, as Kafka's
// own broker does (queued.max.request.bytes): the framer keeps the bytes already read, the
// connection stops reading its socket, and waiters are served first come first served as bytes
// come back. Small frames never wait: a connection's small requests are unaffected. A frame larger
// than the whole budget would wait forever; config refuses frame caps above the budget. A socket
// that is not read does not see its peer leave: a connection closed while waiting is found closed
// (and gives its bytes back) when its turn comes, as a muted channel is in Kafka.

/** Frames that straddle chunks from this size up are budgeted (smaller ones are chunk-sized anyway). */
export const budgetedFrameBytesMin = 64 * 1024;

/** The budget when none is configured. */
export const requestBytesMaxDefault = 256 * 1024 * 1024;

interface Waiter {
  bytes: number;
  granted: () => void;
}

export class RequestByteBudget {
  private held = 0;
  private peak = 0;
  private readonly waiters: Waiter[] = [];
  /** Frames that had to wait, since the budget was made. */
  waitsTotal = 0;

  constructor(readonly bytesMax: number = requestBytesMaxDefault) {
    if (!Number.isSafeInteger(bytesMax) || bytesMax < 0) throw new RangeError(`request byte budget must be a non-negative integer, got ${bytesMax}`);
  }

  get heldBytes(): number {
    return this.held;
  }

  /** The most held at once. */
  get peakHeldBytes(): number {
    return this.peak;
  }

  /** Frames waiting for bytes now. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** Takes `bytes` now if they fit and nobody waits before them; false (taking nothing) if not. */
  take(bytes: number): boolean {
    if (this.waiters.length > 0 || bytes > this.bytesMax - this.held) return false;
    this.change(bytes);
    return true;
  }

  /**
   * Queues for `bytes`: `granted` is called (on a later tick) once they are taken for the caller.
   * Returns the function that leaves the queue; after `granted` has run it does nothing.
   */
  wait(bytes: number, granted: () => void): () => void {
    if (bytes > this.bytesMax) throw new RangeError(`a request of ${bytes} bytes can never fit a budget of ${this.bytesMax}`);
    const waiter: Waiter = { bytes, granted };
    this.waiters.push(waiter);
    this.waitsTotal++;
    return () => {
      const at = this.waiters.indexOf(waiter);
      if (at >= 0) this.waiters.splice(at, 1);
    };
  }

  give(bytes: number): void {
    this.change(-bytes);
    this.grant();
  }

  /** Serves waiters in arrival order while the first one fits. */
  private grant(): void {
    while (this.waiters.length > 0 && this.waiters[0]!.bytes <= this.bytesMax - this.held) {
      const waiter = this.waiters.shift()!;
      this.change(waiter.bytes);
      // Not from inside whoever gave the bytes back (a request being released).
      process.nextTick(waiter.granted);
    }
  }

  private change(delta: number): void {
    this.held += delta;
    if (this.held > this.peak) this.peak = this.held;
    if (this.held < 0) throw new Error(`request byte budget held bytes went negative (${this.held})`);
  }
}

/**
 * One framer's frames in the budget: the frame being assembled (or waiting to be), the frames
 * handed out until released, and the input kept while a frame waits. Keys are the handed-out
 * frames (as FrameLeases keys them).
 */
export class FrameAdmission<K extends object> {
  /** Called once a waiting frame's bytes are taken: the framer may `resume()`. */
  onGranted: (() => void) | null = null;
  /**
   * Whether frames are budgeted now. Connections turn it off until the peer authenticates: an
   * unauthenticated peer's frames are capped small (and its connections counted) already, and
   * must not be able to take bytes that authenticated peers' frames wait for.
   */
  enabled = true;
  /** Bytes taken for the frame being assembled (0: none, or not budgeted). */
  private assembling = 0;
  private readonly handedOut = new WeakMap<K, number>();
  /** While waiting: the bytes to take, the queue exit, and the input read meanwhile. */
  private waitBytes = 0;
  private leave: (() => void) | null = null;
  private kept: Buffer[] = [];
  private disposed = false;

  constructor(
    private readonly budget: RequestByteBudget | null,
    private readonly budgetedBytesMin: number = budgetedFrameBytesMin,
  ) {}

  /** A frame waits for the budget: the framer keeps its input and reads nothing more. */
  get waiting(): boolean {
    return this.waitBytes > 0;
  }

  /**
   * A frame of `size` bytes is about to be assembled: true when it may be now (small, or its
   * bytes taken); false when it must wait (`onGranted` tells when; keep the input meanwhile).
   */
  admit(size: number): boolean {
    if (this.budget === null || !this.enabled || size < this.budgetedBytesMin || this.disposed) return true;
    // Config keeps frame caps within the budget; a larger frame (an embedder's settings) takes
    // the whole budget rather than waiting forever.
    const bytes = Math.min(size, this.budget.bytesMax);
    if (this.budget.take(bytes)) {
      this.assembling = bytes;
      return true;
    }
    this.waitBytes = bytes;
    this.leave = this.budget.wait(bytes, () => this.granted(bytes));
    return false;
  }

  /** Keeps a copy of input read while a frame waits (the chunk's memory may be reused). */
  keep(bytes: Buffer): void {
    if (bytes.length > 0) this.kept.push(Buffer.from(bytes));
  }

  /** The input kept while waiting, in order (emptied). */
  takeKept(): Buffer {
    const kept = this.kept;
    this.kept = [];
    return kept.length === 1 ? kept[0]! : Buffer.concat(kept);
  }

  /** The frame being assembled is complete and handed out under `key`. */
  completed(key: K): void {
    if (this.assembling > 0) this.handedOut.set(key, this.assembling);
    this.assembling = 0;
  }

  /** A handed-out frame is released: its bytes go back. Any other key is ignored. */
  release(key: K): void {
    const bytes = this.handedOut.get(key);
    if (bytes === undefined) return;
    this.handedOut.delete(key);
    this.budget!.give(bytes);
  }

  /** The frame being assembled is dropped (a framing error): its bytes go back. */
  dropAssembling(): void {
    if (this.assembling === 0) return;
    const bytes = this.assembling;
    this.assembling = 0;
    this.budget!.give(bytes);
  }

  /** The connection is gone: the frame assembled or waited for gives its bytes back. */
  dispose(): void {
    this.disposed = true;
    this.leave?.();
    this.leave = null;
    this.waitBytes = 0;
    this.kept = [];
    this.dropAssembling();
  }

  private granted(bytes: number): void {
    this.leave = null;
    this.waitBytes = 0;
    this.assembling = bytes;
    if (this.disposed) {
      this.dropAssembling();
      return;
    }
    this.onGranted?.();
  }
}
