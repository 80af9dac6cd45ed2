// A count of bytes held against a fixed maximum, taken all or nothing: what a listener's framers
// share so that the request frames they buffer (being assembled or waiting to be handled) stay
// within one bound across every connection (src/protocols/cursus/codec/framer.ts FrameBudget).

export class ByteBudget {
  private held = 0;
  private peak = 0;

  constructor(readonly bytesMax: number) {
    if (!Number.isSafeInteger(bytesMax) || bytesMax < 0) throw new RangeError(`byte budget must be a non-negative integer, got ${bytesMax}`);
  }

  get heldBytes(): number {
    return this.held;
  }

  /** The most held at once. */
  get peakHeldBytes(): number {
    return this.peak;
  }

  /** Takes `bytes` if they fit under the maximum; false (taking nothing) if not. */
  take(bytes: number): boolean {
    if (bytes > this.bytesMax - this.held) return false;
    this.held += bytes;
    if (this.held > this.peak) this.peak = this.held;
    return true;
  }

  give(bytes: number): void {
    this.held -= bytes;
    if (this.held < 0) throw new Error(`byte budget held bytes went negative (${this.held})`);
  }
}
