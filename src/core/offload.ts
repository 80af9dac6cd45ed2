// Transcoding off the main thread: a batch of another format at least `bytesMin` bytes long is
// transcoded on the broker's worker pool (base/worker-pool.ts, tasks in transcode-task.ts) instead
// of on the event loop, where one large Iggy batch read by a Kafka Fetch held up every other
// connection for hundreds of milliseconds. The result is the same bytes as the inline path
// (wholeBatchAs, recordsOf). Inline still: small batches (a worker round trip costs ~0.1 ms),
// batches already in the reader's format, formats whose codec was registered without a module
// URL (FormatRegistry.source), and any batch while the pool's queue is full. A front-end may run
// its own pure tasks on the same pool under the same size rule (offloadTask: Kafka's
// recompression of produced batches to a topic's compression.type). A timestamp lookup inside a
// batch (Kafka ListOffsets by time) goes to a worker when the batch's records decode to at least
// `offloadBytesMin` (BatchFormatCodec.decodedBytes: a few KB of zstd may inflate to 64 MiB).

import { asBuffer, WorkerPool } from '../base/worker-pool.js';
import { decodedBytesOf, type FormatRegistry } from '../log/formats.js';
import type { LogOffload } from '../log/index.js';
import type { BatchFormat, FileSlice, ReadOptions, StoredBatch } from '../log/types.js';
import { recordAtTimestampIn, recordsOf, wholeBatchAs, type ServedRecords, type TimedOffset } from './transcode.js';
import { readSlice, type RecordsJob, type TaskReply, type TimestampJob, type TranscodeBatch, type TranscodeJob, type WholeBatchJob } from './transcode-task.js';

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

/** Buffers a batch is copied into for a worker come from this size up, in powers of two. */
const spareBytesMin = 64 * 1024;
/** Spare buffers kept (about one per connection transcoding at once). */
const sparesMax = 64;

export class Transcoder {
  private readonly pool: WorkerPool | null;
  /**
   * Buffers that carried batches to a worker and came back: copying into fresh memory costs
   * several ms per MB where its pages fault in slowly (the main thread's time), into these ~0.1.
   */
  private readonly spares: ArrayBuffer[] = [];

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
      const run = this.pool!.tryRun<TaskReply<Uint8Array | null>>(taskModule, 'wholeBatchTask', [whole], handedOver(job));
      if (run !== null) return run.then((out) => (this.keep(out.spare), out.value === null ? null : asBuffer(out.value)));
      this.keep(job.batch.payload);
    }
    return wholeBatchAs(this.formats, format, inlined(format, batch), fromOffset, budgetBytes);
  }

  /** recordsOf, on a worker for a large batch of another format. */
  recordsOf(format: BatchFormat, batch: StoredBatch, from: number, toExclusive: number, countMax: number): ServedRecords | null | Promise<ServedRecords | null> {
    const job = this.job(format, batch);
    if (job !== null) {
      const records: RecordsJob = { ...job, from, toExclusive, countMax };
      const run = this.pool!.tryRun<TaskReply<ServedRecords | null>>(taskModule, 'recordsTask', [records], handedOver(job));
      if (run !== null) return run.then((out) => (this.keep(out.spare), out.value === null ? null : { ...out.value, chunks: out.value.chunks.map((c) => asBuffer(c as Uint8Array)) }));
      this.keep(job.batch.payload);
    }
    return recordsOf(this.formats, format, inlined(format, batch), from, toExclusive, countMax);
  }

  /**
   * recordAtTimestampIn, on a worker for a batch whose records decode to at least
   * offloadBytesMin (BatchFormatCodec.decodedBytes: a small compressed batch may inflate far).
   */
  recordAtTimestamp(batch: StoredBatch, from: number, timestamp: number): TimedOffset | null | Promise<TimedOffset | null> {
    const source = this.formats.source(batch.format);
    if (this.pool !== null && source !== undefined && decodedBytesOf(this.formats, batch) >= this.settings.offloadBytesMin) {
      const job: TimestampJob = { sources: [source], batch: this.handed(batch), from, timestamp };
      const run = this.pool.tryRun<TaskReply<TimedOffset | null>>(taskModule, 'recordAtTimestampTask', [job], handedOver(job.batch));
      if (run !== null) return run.then((out) => (this.keep(out.spare), out.value));
      this.keep(job.batch.payload);
    }
    return recordAtTimestampIn(this.formats, batch.file === undefined ? batch : { ...batch, payload: readSlice(batch.file) }, from, timestamp);
  }

  /**
   * Whether a batch of another format than `format` goes to a worker: then a file-sliced one is
   * handed over as its file range, unread (the caller keeps its lease until the task ends).
   */
  offloads(format: BatchFormat, batch: StoredBatch): boolean {
    if (this.pool === null || batch.format === format || (batch.file?.length ?? batch.payload.length) < this.settings.offloadBytesMin) return false;
    return this.formats.source(batch.format) !== undefined && this.formats.source(format) !== undefined;
  }

  /**
   * The read options under which a read with a lease returns the batches of other formats than
   * `format` that may go to a worker as file slices, for the worker to read and check them itself
   * (the main thread neither reads nor copies them); none without a pool.
   */
  sliceOptions(format: BatchFormat): Pick<ReadOptions, 'otherFormatSlices'> {
    return this.pool === null ? {} : { otherFormatSlices: { format, bytesMin: this.settings.offloadBytesMin } };
  }

  /**
   * Runs `exportName` of `moduleUrl` (a pure function) on the pool when the work is at least
   * offloadBytesMin `bytes` long; `transfer` lists ArrayBuffers of the args handed over. Null
   * when it stays inline (no pool, small work, queue full): the caller then does it itself.
   */
  offloadTask<T>(moduleUrl: string, exportName: string, args: unknown[], transfer: ArrayBuffer[], bytes: number): Promise<T> | null {
    if (this.pool === null || bytes < this.settings.offloadBytesMin) return null;
    return this.pool.tryRun<T>(moduleUrl, exportName, args, transfer);
  }

  /** The pool and size rule for the logs' compaction (log/compaction-offload.ts); undefined without a pool. */
  logOffload(): LogOffload | undefined {
    return this.pool === null ? undefined : { pool: this.pool, bytesMin: this.settings.offloadBytesMin };
  }

  /** Ends the workers; tasks still running fail. */
  close(): Promise<void> {
    return this.pool?.close() ?? Promise.resolve();
  }

  /** `bytes` copied into a spare buffer (a view of its first bytes), or a new one. */
  private copy(bytes: Buffer): Buffer {
    let size = spareBytesMin;
    while (size < bytes.length) size *= 2;
    const i = this.spares.findIndex((ab) => ab.byteLength === size);
    const into = i >= 0 ? Buffer.from(this.spares.splice(i, 1)[0]!) : Buffer.allocUnsafeSlow(size);
    into.set(bytes);
    return into.subarray(0, bytes.length);
  }

  private keep(spare: Uint8Array | null): void {
    if (spare === null || this.spares.length >= sparesMax) return;
    const ab = spare.buffer;
    if (ab instanceof ArrayBuffer && ab.byteLength >= spareBytesMin && spare.byteOffset === 0) this.spares.push(ab);
  }

  /** The job for a worker, with a copy of the batch's bytes to hand over; null when it stays inline. */
  private job(format: BatchFormat, batch: StoredBatch): TranscodeJob | null {
    if (!this.offloads(format, batch)) return null;
    const from = this.formats.source(batch.format)!;
    const to = this.formats.source(format)!;
    return { sources: from === to ? [from] : [from, to], format, batch: this.handed(batch) };
  }

  /** The batch as a worker gets it. */
  private handed(batch: StoredBatch): TranscodeBatch {
    const { flags, baseOffset, lastOffset, recordCount, firstTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, file } = batch;
    const fields = { format: batch.format, flags, baseOffset, lastOffset, recordCount, firstTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence };
    // A file slice goes as its range, which the worker reads. A payload is a view of a buffer
    // shared with other batches (a pooled read): copied, at a cost of a few ms per MB where
    // fresh memory faults in slowly; reads that can hand over file slices avoid it.
    return file !== undefined ? { ...fields, payload: Buffer.alloc(0), file: { ...file } } : { ...fields, payload: this.copy(batch.payload) };
  }
}

/** The batch with its whole payload, for the inline path: a file slice handed to offloads() and then not taken by a full queue is read here. */
function inlined(format: BatchFormat, batch: StoredBatch): StoredBatch {
  if (batch.file === undefined || batch.format === format) return batch;
  const { file, ...rest } = batch;
  return { ...rest, payload: readSlice(file) };
}

/** What a job hands over to the worker: the whole buffer its batch's payload is a view of. */
function handedOver(job: TranscodeJob | TranscodeBatch): ArrayBuffer[] {
  const ab = ('batch' in job ? job.batch : job).payload.buffer;
  return ab instanceof ArrayBuffer && ab.byteLength > 0 ? [ab] : [];
}
