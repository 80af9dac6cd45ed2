// Whether the disk takes appends: set when an append fails because the filesystem is out of space
// (ENOSPC, or EDQUOT: a quota), cleared once an append has been written and no append has failed
// so for fullHoldMs. The server reports it on GET /ready (503 "storage_full") and as
// quartet_storage_full, so that a load balancer or an orchestrator stops sending producers to a
// broker that cannot store what they send, and sends them back once space is freed (retention, or
// an operator) and appends succeed again. The hold keeps a nearly full disk, where small appends
// fit and large ones fail, from flapping between ready and not.
//
// And whether the logs hold batches found corrupt on disk (src/log/integrity.ts): each one found
// is counted in quartet_corrupt_batches_total{topic,partition}; while any of them is still in a
// log at or after its start (none is served), quartet_storage_corrupt_batches says how many and
// GET /ready answers 503 "storage_corrupt", until retention, DeleteRecords or a deletion of the
// topic removes them, or a restart forgets them until a read or the scrubber finds them again.

import { systemClock, type Clock } from '../base/clock.js';
import type { Counter, Gauge, MetricsRegistry } from './metrics.js';

/** How long after the last append that failed for lack of space the disk still counts as full. */
export const fullHoldMs = 10_000;

/** ENOSPC or EDQUOT anywhere in the error's cause chain. */
export function isOutOfSpace(error: unknown): boolean {
  let e: unknown = error;
  for (let depth = 0; depth < 5 && e !== null && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === 'ENOSPC' || code === 'EDQUOT') return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

export class StorageHealth {
  /** When an append last failed for lack of space (clock ms), null if none has. */
  private lastFullAt: number | null = null;
  /** Whether an append has been written since that failure. */
  private writtenSinceFull = false;
  private readonly gauge: Gauge;
  private readonly corruptFoundTotal: Counter;
  private readonly corruptGauge: Gauge;
  private corruptSource: () => number = () => 0;

  constructor(metrics: MetricsRegistry, private readonly clock: Clock = systemClock) {
    this.gauge = metrics.gauge('quartet_storage_full', `1 while appends fail because the disk is full (from such a failure until an append is written and none has failed so for ${fullHoldMs / 1000} s)`);
    this.gauge.set({}, 0);
    metrics.onCollect(() => void this.full);
    this.corruptFoundTotal = metrics.counter('quartet_corrupt_batches_total', 'Stored batches found corrupt on disk (by a read or the scrubber); none of them is served');
    this.corruptGauge = metrics.gauge('quartet_storage_corrupt_batches', 'Batches found corrupt that the logs still hold at or after their start (GET /ready is 503 storage_corrupt while there are any)');
    this.corruptGauge.set({}, 0);
  }

  /** Where the count of corrupt batches still held comes from (the broker's logs). */
  countCorruptWith(source: () => number): void {
    this.corruptSource = source;
  }

  /** Corrupt batches the logs still hold at or after their start; refreshes quartet_storage_corrupt_batches. */
  corruptBatches(): number {
    const n = this.corruptSource();
    this.corruptGauge.set({}, n);
    return n;
  }

  /** A log found a corrupt batch (it has logged it). */
  corruptBatchFound(partition: Readonly<{ namespace: string; topic: string; partition: string }>): void {
    this.corruptFoundTotal.inc(partition);
    this.corruptBatches();
  }

  /** True from an append that failed for lack of space until one is written and fullHoldMs pass without another such failure. */
  get full(): boolean {
    if (this.lastFullAt === null) return false;
    if (this.writtenSinceFull && this.clock.now() - this.lastFullAt >= fullHoldMs) {
      this.lastFullAt = null;
      this.gauge.set({}, 0);
      return false;
    }
    return true;
  }

  appendFailed(error: unknown): void {
    if (!isOutOfSpace(error)) return;
    this.lastFullAt = this.clock.now();
    this.writtenSinceFull = false;
    this.gauge.set({}, 1);
  }

  appendWritten(): void {
    if (this.lastFullAt !== null) this.writtenSinceFull = true;
  }
}
