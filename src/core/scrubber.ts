// The background scrubber: walks every partition log and checks every stored batch against its
// checksums (PartitionLog.scrub), a bounded number of bytes per tick, partition after partition,
// then from the start again. Reads check what they serve, but batches sent with sendfile are
// never touched by the broker: the scrubber is what finds a byte that rotted in them (and in data
// nobody reads yet), so that it is reported (log, quartet_corrupt_batches_total, /ready) and never
// served again. At the default rate a pass over 1 TiB takes about 18 hours.

import type { Logger } from '../base/logger.js';
import type { PartitionLog, ScrubPosition } from '../log/types.js';
import type { Counter, MetricsRegistry } from './metrics.js';

/** Bytes checked per second by default: a small share of one disk's sequential read rate. */
export const scrubBytesPerSecDefault = 16 * 1024 * 1024;
/** How often the scrubber takes its share of bytes. */
export const scrubTickMs = 1_000;

/** A partition the scrubber walks: `key` orders the walk and finds its place again. */
export interface ScrubbedPartition {
  key: string;
  log: PartitionLog;
}

export class Scrubber {
  /** Where the walk goes on from: a partition, and a place in its log (null: its start). */
  private cursor: { key: string; from: ScrubPosition | null } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopped = false;
  private readonly bytesTotal: Counter;

  constructor(
    /** The partitions now, in a stable order. */
    private readonly partitions: () => ScrubbedPartition[],
    /** 0: the scrubber never runs on its own (step() still works). */
    private readonly bytesPerSec: number,
    private readonly logger: Logger,
    metrics: MetricsRegistry,
    /** Called after every step (the broker refreshes what it reports of corrupt batches). */
    private readonly afterStep: () => void = () => undefined,
  ) {
    this.bytesTotal = metrics.counter('quartet_scrubbed_bytes_total', 'Stored batch bytes the background scrubber has checked against their checksums');
  }

  start(): void {
    if (this.bytesPerSec <= 0 || this.stopped) return;
    this.schedule();
  }

  /** No further steps; resolves once the one running (if any) has finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  /**
   * Checks about `bytesMax` bytes, from where the last step stopped, going on to the next
   * partition whenever one is done (at most one lap per step); returns the bytes checked.
   */
  async step(bytesMax: number): Promise<number> {
    const list = this.partitions();
    if (list.length === 0) return 0;
    let i = this.cursor === null ? 0 : list.findIndex((p) => p.key === this.cursor!.key);
    let from = i < 0 ? null : (this.cursor?.from ?? null);
    if (i < 0) i = 0;
    let bytes = 0;
    for (let visited = 0; visited < list.length && bytes < bytesMax && !this.stopped; visited++) {
      const p = list[i]!;
      const progress = await p.log.scrub(from, bytesMax - bytes).catch((error: unknown) => {
        // A log closed under the scrub (a topic deleted or purged) is not a failure.
        if (!p.log.isClosed()) this.logger.warn('scrubbing a partition failed; going on with the next one', { partition: p.key, error });
        return { next: null, bytes: 0 };
      });
      bytes += progress.bytes;
      if (progress.next !== null) {
        this.cursor = { key: p.key, from: progress.next };
        break;
      }
      i = (i + 1) % list.length;
      from = null;
      this.cursor = { key: list[i]!.key, from: null };
    }
    this.bytesTotal.inc({}, bytes);
    this.afterStep();
    return bytes;
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      const budget = Math.max(1, Math.round((this.bytesPerSec * scrubTickMs) / 1000));
      this.running = this.step(budget)
        .catch((error: unknown) => this.logger.warn('scrub step failed', { error }))
        .finally(() => {
          this.running = null;
          if (!this.stopped) this.schedule();
        });
    }, scrubTickMs);
    // The scrubber must never keep the process alive on its own.
    this.timer.unref();
  }
}
