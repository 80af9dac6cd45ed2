// The pooled-buffer bookkeeping both framers share: the frame being assembled across socket chunks
// may live in a leased buffer (the connection's lease function decides, from its size and first
// bytes); once complete, the lease is remembered by the frame's key until the owner releases it.

import type { PooledBufferLease } from './buffer-pool.js';

export type FrameLeaseFunction = (size: number, head: Buffer) => PooledBufferLease | null;

export class FrameLeases<K extends object> {
  /** The lease of the frame being assembled, if pooled. */
  private assembling: PooledBufferLease | null = null;
  /** Leases of completed frames handed out and not yet released. */
  private readonly handedOut = new WeakMap<K, PooledBufferLease>();

  /** `allocate`: where a frame that is not leased is assembled (default Buffer.allocUnsafe). */
  constructor(
    private readonly lease: FrameLeaseFunction | undefined,
    private readonly allocate: (size: number) => Buffer = Buffer.allocUnsafe,
  ) {}

  /** The buffer to assemble a frame of `size` bytes in: leased if the lease function says so. */
  assemble(size: number, head: Buffer): Buffer {
    this.assembling = this.lease?.(size, head) ?? null;
    return this.assembling !== null ? this.assembling.buffer(size) : this.allocate(size);
  }

  /** The frame being assembled is complete and handed out under `key`. */
  completed(key: K): void {
    if (this.assembling !== null) this.handedOut.set(key, this.assembling);
    this.assembling = null;
  }

  /** Hands a frame back: a pooled frame's buffer returns to the pool; any other key is ignored. */
  release(key: K): void {
    const lease = this.handedOut.get(key);
    if (lease === undefined) return;
    this.handedOut.delete(key);
    lease.release();
  }

  /** Drops the frame being assembled (the stream failed or the connection is gone). */
  dropAssembling(): void {
    this.assembling?.release();
    this.assembling = null;
  }
}
