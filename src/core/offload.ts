// Transcoding off the main thread: a batch of another format at least `bytesMin` bytes long is
// transcoded on the broker's worker pool (base/worker-pool.ts, tasks in transcode-task.ts) instead
// of on the event loop, where one large Iggy batch read by a Kafka Fetch held up every other
// connection for hundreds of milliseconds. The result is the same bytes as the inline path
// (wholeBatchAs, recordsOf). Inline still: small batches (a worker round trip costs ~0.1 ms),
// batches already in the reader's format, formats whose codec was registered without a module
// URL (FormatRegistry.source), and any batch while the pool's queue is full.

import { asBuffer, ownedCopy, WorkerPool } from '../base/worker-pool.js';
import type { FormatRegistry } from '../log/formats.js';
import type { BatchFormat, FileSlice, StoredBatch } from '../log/types.js';
import { recordsOf, wholeBatchAs, type ServedRecords } from './transcode.js';
import type { RecordsJob, TranscodeJob, WholeBatchJob } from './transcode-task.js';

/** The broker's worker settings (BrokerOptions.workers). */
export interface WorkerSettings {
  /** Worker threads; 0 runs everything on the main thread. */
  threads: number;
  /** Batches to transcode of at least this many bytes go to a worker. */
  offloadBytesMin: number;
  /** Tasks waiting for a worker at most; past that, the work runs inline. */
  queueMax: number;
}

export const workerSettingsDefault: WorkerSettings = { threads: 0, offloadBytesMin: 64 * 1024, queueMax: 256 };

const taskModule = import.meta.resolve('./transcode-task.js');

export class Transcoder {
  private readonly pool: WorkerPool | null;

  constructor(
    private readonly formats: FormatRegistry,
    readonly settings: WorkerSettings = workerSettingsDefault,
  ) {
    this.pool = settings.threads > 0 ? new WorkerPool({ threads: settings.threads, queueMax: settings.queueMax }) : null;
  }

  /** wholeBatchAs, on a worker for a large batch of another format. */
  wholeBatchAs(format: BatchFormat, batch: StoredBatch, fromOffset: number, budgetBytes: number): Buffer | FileSlice | null | Promise<Buffer | null> {
    const job = this.job(format, batch);
    if (job !== null) {
      const whole: WholeBatchJob = { ...job, fromOffset, budgetBytes };
      const run = this.pool!.tryRun<Uint8Array | null>(taskModule, 'wholeBatchTask', [whole], [job.batch.payload.buffer as ArrayBuffer]);
      if (run !== null) return run.then((out) => (out === null ? null : asBuffer(out)));
    }
    return wholeBatchAs(this.formats, format, batch, fromOffset, budgetBytes);
  }

  /** recordsOf, on a worker for a large batch of another format. */
  recordsOf(format: BatchFormat, batch: StoredBatch, from: number, toExclusive: number, countMax: number): ServedRecords | null | Promise<ServedRecords | null> {
    const job = this.job(format, batch);
    if (job !== null) {
      const records: RecordsJob = { ...job, from, toExclusive, countMax };
      const run = this.pool!.tryRun<ServedRecords | null>(taskModule, 'recordsTask', [records], [job.batch.payload.buffer as ArrayBuffer]);
      if (run !== null) return run.then((out) => (out === null ? null : { ...out, chunks: out.chunks.map((c) => asBuffer(c as Uint8Array)) }));
    }
    return recordsOf(this.formats, format, batch, from, toExclusive, countMax);
  }

  /** Ends the workers; tasks still running fail. */
  close(): Promise<void> {
    return this.pool?.close() ?? Promise.resolve();
  }

  /** The job for a worker, with a copy of the batch's bytes to hand over; null when it stays inline. */
  private job(format: BatchFormat, batch: StoredBatch): TranscodeJob | null {
    if (this.pool === null || batch.format === format || batch.file !== undefined || batch.payload.length < this.settings.offloadBytesMin) return null;
    const from = this.formats.source(batch.format);
    const to = this.formats.source(format);
    if (from === undefined || to === undefined) return null;
    // The payload is a view of a buffer shared with other batches (a pooled read): copied.
    const { flags, baseOffset, lastOffset, recordCount, firstTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence } = batch;
    const copy = { format: batch.format, flags, baseOffset, lastOffset, recordCount, firstTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, payload: ownedCopy(batch.payload) };
    return { sources: from === to ? [from] : [from, to], format, batch: copy };
  }
}

