// The broker-wide budget for the bytes replies hold in memory: the buffers a read (a Kafka Fetch,
// an Iggy poll) fills and its reply references until the socket has taken the reply's bytes. A
// peer that does not read keeps its reply in the socket's write queue; without a bound, 20 such
// consumers held 20 replies of up to 128 MiB each.
//
// A read reserves before it reads (reserve, grow): it gets what it asks for, or what the budget
// has left, and reads no more than that, but always at least one batch (a read of 1 byte returns
// one batch whole), so that a consumer makes progress even while peers that do not read hold the
// whole budget. After the read, the reservation is set to the bytes the reply holds in buffers
// (settle: file slices sent with sendfile hold none), and it is released once the reply has been
// written out or dropped. So what is held stays within bytesMax plus one batch for each read that
// found the budget spent.

/** The budget when none is configured: 20 consumers that never read add about this much. */
export const memoryBudgetBytesDefault = 128 * 1024 * 1024;

export class MemoryBudget {
  private held = 0;
  private peak = 0;
  private reservations = 0;

  constructor(readonly bytesMax: number = memoryBudgetBytesDefault) {
    if (!Number.isSafeInteger(bytesMax) || bytesMax < 0) throw new RangeError(`memory budget must be a non-negative integer, got ${bytesMax}`);
  }

  /** Bytes held by the reservations now. */
  get heldBytes(): number {
    return this.held;
  }

  /** The most held at once since the budget was made (or resetPeak). */
  get peakHeldBytes(): number {
    return this.peak;
  }

  /** Reservations not yet released. */
  get openReservations(): number {
    return this.reservations;
  }

  /** What a read may still reserve. */
  get availableBytes(): number {
    return Math.max(0, this.bytesMax - this.held);
  }

  resetPeak(): void {
    this.peak = this.held;
  }

  /** A reservation of up to `wantedBytes` (less when the budget is short; 0 when it is spent). */
  reserve(wantedBytes: number): Reservation {
    this.reservations++;
    const reservation = new Reservation(this);
    reservation.grow(wantedBytes);
    return reservation;
  }

  /** @internal Reservation's change of what it holds. */
  change(delta: number): void {
    this.held += delta;
    if (this.held > this.peak) this.peak = this.held;
    if (this.held < 0) throw new Error(`memory budget held bytes went negative (${this.held})`);
  }

  /** @internal A reservation released. */
  closed(): void {
    this.reservations--;
  }
}

/** What one read holds of the budget, from before it reads until its reply is written. */
export class Reservation {
  private bytesHeld = 0;
  private released = false;

  constructor(private readonly budget: MemoryBudget) {}

  /** Bytes held of the budget now. */
  get bytes(): number {
    return this.bytesHeld;
  }

  /**
   * Grows what this reservation holds toward `wantedBytes`, with what the budget has left, and
   * returns what it holds: the byte limit of the read about to be made (0: the budget is spent,
   * read the least there is, one batch).
   */
  grow(wantedBytes: number): number {
    if (this.released) return 0;
    const target = Math.min(wantedBytes, this.bytesHeld + this.budget.availableBytes);
    if (target > this.bytesHeld) {
      this.budget.change(target - this.bytesHeld);
      this.bytesHeld = target;
    }
    return this.bytesHeld;
  }

  /**
   * Sets what this reservation holds to what the read took (`bytes` in buffers): less than it
   * reserved goes back; more (the one batch a read returns whatever its limit) is counted too.
   */
  settle(bytes: number): void {
    if (this.released) return;
    const held = Math.max(0, bytes);
    this.budget.change(held - this.bytesHeld);
    this.bytesHeld = held;
  }

  /** Gives everything back (the reply is written, or dropped). Idempotent. */
  release(): void {
    if (this.released) return;
    this.budget.change(-this.bytesHeld);
    this.bytesHeld = 0;
    this.released = true;
    this.budget.closed();
  }
}

/** The bytes of `chunks` held in memory: buffers count, file slices (sent with sendfile) do not. */
export function bufferedBytes(chunks: Iterable<Buffer | { length: number }>): number {
  let bytes = 0;
  for (const chunk of chunks) if (Buffer.isBuffer(chunk)) bytes += chunk.length;
  return bytes;
}
