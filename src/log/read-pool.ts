/**
 * Reusable read buffers for hot read paths (Kafka Fetch). A read made with a `ReadLease` in its
 * options takes its large buffers from a small process-wide pool instead of allocating fresh ones;
 * the returned batches' payloads are views of those buffers. The caller calls `release()` once
 * nothing references those views any more (for Fetch: after the socket write of the response has
 * completed); only then do the buffers go back to the pool. A lease that is never released is
 * harmless: its buffers are simply left to GC. Without the pool, every fetch allocated 1–4 MB of
 * external memory that was garbage moments later, and V8 ran a Mark-Compact every few MB of it
 * ("external memory pressure").
 */

/** Reads below this size use ordinary (Node-pooled or fresh) buffers. */
const pooledMinBytes = 64 * 1024;
/** Reads above this size are not pooled. */
const pooledMaxBytes = 32 * 1024 * 1024;
/** Free buffers kept at most. */
const poolSlots = 8;
/** Pooled capacities are rounded up to this, so windows of slightly different sizes share buffers. */
const capacityStep = 256 * 1024;

const free: Buffer[] = [];

function takeBuffer(length: number): Buffer {
  let best = -1;
  for (let i = 0; i < free.length; i++) {
    const cap = free[i]!.length;
    if (cap >= length && (best < 0 || cap < free[best]!.length)) best = i;
  }
  if (best >= 0) return free.splice(best, 1)[0]!;
  return Buffer.allocUnsafeSlow(Math.ceil(length / capacityStep) * capacityStep);
}

function returnBuffer(buf: Buffer): void {
  if (free.length < poolSlots) {
    free.push(buf);
    return;
  }
  // Full: keep the larger buffers (they fit more reads).
  let smallest = 0;
  for (let i = 1; i < free.length; i++) if (free[i]!.length < free[smallest]!.length) smallest = i;
  if (free[smallest]!.length < buf.length) free[smallest] = buf;
}

export class ReadLease {
  private held: Buffer[] = [];

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
  }
}
