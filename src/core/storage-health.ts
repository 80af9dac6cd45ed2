// Whether the disk takes appends: set when an append fails because the filesystem is out of space
// (ENOSPC, or EDQUOT: a quota), cleared by the next append that is written. The server reports
// it on GET /ready (503 "storage_full") and as quartet_storage_full, so that a load balancer or an
// orchestrator stops sending producers to a broker that cannot store what they send, and sends
// them back once space is freed (retention, or an operator) and an append succeeds again.

import type { Gauge, MetricsRegistry } from './metrics.js';

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
  private outOfSpace = false;
  private readonly gauge: Gauge;

  constructor(metrics: MetricsRegistry) {
    this.gauge = metrics.gauge('quartet_storage_full', '1 while appends fail because the disk is full (since the last such failure, until an append is written)');
    this.gauge.set({}, 0);
  }

  /** True since an append failed for lack of space, until one is written. */
  get full(): boolean {
    return this.outOfSpace;
  }

  appendFailed(error: unknown): void {
    if (this.outOfSpace || !isOutOfSpace(error)) return;
    this.outOfSpace = true;
    this.gauge.set({}, 1);
  }

  appendWritten(): void {
    if (!this.outOfSpace) return;
    this.outOfSpace = false;
    this.gauge.set({}, 0);
  }
}
