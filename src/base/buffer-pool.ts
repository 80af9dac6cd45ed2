
/**
 * Reusable large buffers for the hot paths: log reads (Kafka Fetch, Iggy PollMessages) and large
 * incoming frames that straddle socket chunks (Kafka Produce, Iggy SendMessages requests). A read
 * made with a `BufferLease` in its options, or a frame the framer assembles under one, takes its
 * large buffers from a small process-wide pool instead of allocating fresh ones; payloads are then
 * views of those buffers. The owner calls `release()` once nothing references those views any more
 * (a read: after the socket write of the response has completed; a request frame: once the request
 * has been handled and every append it started has settled); only then do the buffers go back to
 * the pool. A lease that is never released is harmless: its buffers are simply left to GC.
 *
 * Without the pool, every fetch and every ~1 MB produce request allocated 1–4 MB of external memory
 * that was garbage moments later: glibc maps and unmaps such blocks (page faults on first touch),
 * and V8 ran a Mark-Compact every few MB of it ("external memory pressure").
 */

/** Reads below this size use ordinary (Node-pooled or fresh) buffers. */
const pooledMinBytes = 64 * 1024;
/** Reads above this size are not pooled. */
const pooledMaxBytes = 32 * 1024 * 1024;
/** Free buffers kept at most, and their total size at most. */
const poolSlots = 16;
const poolBytesMax = 64 * 1024 * 1024;
/** Pooled capacities are rounded up to this, so windows of slightly different sizes share buffers. */
const capacityStep = 256 * 1024;

const free: Buffer[] = [];
let freeBytes = 0;

function takeBuffer(length: number): Buffer {
  let best = -1;
  for (let i = 0; i < free.length; i++) {
    const cap = free[i]!.length;
    if (cap >= length && (best < 0 || cap < free[best]!.length)) best = i;
  }
  if (best < 0) return Buffer.allocUnsafeSlow(Math.ceil(length / capacityStep) * capacityStep);
  const buf = free.splice(best, 1)[0]!;
  freeBytes -= buf.length;
  return buf;
}

function returnBuffer(buf: Buffer): void {
  if (buf.length > poolBytesMax) return;
  // Full: make room by dropping smaller buffers (larger ones fit more reads), else drop this one.
  while (free.length > 0 && (free.length >= poolSlots || freeBytes + buf.length > poolBytesMax)) {
    let smallest = 0;
    for (let i = 1; i < free.length; i++) if (free[i]!.length < free[smallest]!.length) smallest = i;
    if (free[smallest]!.length >= buf.length) return;
    freeBytes -= free[smallest]!.length;
    free.splice(smallest, 1);
  }
  free.push(buf);
  freeBytes += buf.length;
}

/**
 * A lease handed back through `afterWrite` (a connection's "after the response is written" hook),
 * or undefined when there is no such hook: the reads then use fresh buffers left to GC.
 */
export function leaseReleasedAfter(afterWrite: ((fn: () => void) => void) | undefined): BufferLease | undefined {
  if (afterWrite === undefined) return undefined;
  const lease = new BufferLease();
  afterWrite(() => lease.release());
  return lease;
}

/** What the pool holds now (tests). */
export function bufferPoolStats(): { freeBuffers: number; freeBytes: number } {
  return { freeBuffers: free.length, freeBytes };
}

export class BufferLease implements PooledBufferLease {
  private held: Buffer[] = [];
  private releases: Array<() => void> = [];

  /** A buffer of exactly `length` bytes, owned by this lease until `release()`. */
  buffer(length: number): Buffer {
    if (length < pooledMinBytes || length > pooledMaxBytes) return Buffer.allocUnsafe(length);
    const buf = takeBuffer(length);
    this.held.push(buf);
    return buf.subarray(0, length);
  }

  /**
   * Returns the buffers to the pool. Only call once no view of them (batch payloads read under
   * this lease, or anything sliced from them) is referenced or in flight. Idempotent.
   */
  release(): void {
    const held = this.held;
    this.held = [];
    for (const buf of held) returnBuffer(buf);
    const releases = this.releases;
    this.releases = [];
    for (const fn of releases) fn();
  }

  /** Runs `fn` on release (a read's file slices keep their segment open until then). */
  onRelease(fn: () => void): void {
    this.releases.push(fn);
  }
}

/**
 * A lease of pooled buffers (BufferLease in buffer-pool.ts): buffers taken from it stay the
 * holder's until `release()`. The protocol framers take this shape so their codecs need not
 * depend on the pool.
 */
export interface PooledBufferLease {
  buffer(length: number): Buffer;
  release(): void;
}
