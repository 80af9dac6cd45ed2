// Compaction's reading and rewriting of large batches on the broker's worker pool: a file log's
// compaction decodes every batch of a compacted topic twice (once for the keys, once to choose
// what survives) and re-encodes the ones it cuts; a batch whose records decode to at least
// `bytesMin` (BatchFormatCodec.decodedBytes: a few KB of zstd may inflate to 64 MiB) is decoded
// and encoded on a worker instead of the event loop. The worker answers what the log thread
// decides with (RecordSummary: key, offset, tombstone, time per record) and, for a rewrite, the
// new batch, encoded from the same records in the same order as inline: the bytes are the same.
// Inline still: small batches, codecs registered without a module URL, a full queue.

import { asBuffer, ownedCopy, type WorkerPool } from '../base/worker-pool.js';
import { rewrittenRecords, summaryOf, type RecordSummary } from './common.js';
import { decodedBytesOf, type CodecSource, type FormatRegistry } from './formats.js';
import type { AppendRequest, BatchFormatCodec, StoredBatch } from './types.js';

/** Where a file log runs compaction's large batches (FileLogOptions.offload): a worker pool and its size rule. */
export interface LogOffload {
  pool: WorkerPool;
  /** Batches whose records decode to at least this many bytes go to a worker. */
  bytesMin: number;
}

const taskModule = import.meta.resolve('./compaction-offload.js');

/** Compaction's work on one batch, on the offload's pool when it is large enough, else inline. */
export class CompactionWork {
  constructor(
    private readonly formats: FormatRegistry,
    private readonly offload: LogOffload | null,
  ) {}

  /** The summaries of the batch's records (which compaction reads: compactionReads). */
  async summaries(batch: StoredBatch): Promise<RecordSummary[]> {
    const source = this.sourceFor(batch);
    if (source !== null) {
      const payload = ownedCopy(batch.payload);
      const run = this.offload!.pool.tryRun<RecordSummary[]>(taskModule, 'summariesTask', [source, { ...batch, payload }], [payload.buffer as ArrayBuffer]);
      if (run !== null) return run;
    }
    return this.formats.get(batch.format)!.decode(batch).map(summaryOf);
  }

  /** The batch with its records at the `kept` offsets only (rewrittenRecords). */
  async rewrite(batch: StoredBatch, kept: number[]): Promise<AppendRequest> {
    const source = this.sourceFor(batch);
    if (source !== null) {
      const payload = ownedCopy(batch.payload);
      const run = this.offload!.pool.tryRun<AppendRequest>(taskModule, 'rewriteTask', [source, { ...batch, payload }, kept], [payload.buffer as ArrayBuffer]);
      if (run !== null) return run.then((request) => ({ ...request, payload: asBuffer(request.payload) }));
    }
    const codec = this.formats.get(batch.format)!;
    return rewrittenRecords(codec, batch, codec.decode(batch), kept);
  }

  /** Whether the batch goes to a worker (unless the pool's queue is full). */
  offloads(batch: StoredBatch): boolean {
    return this.sourceFor(batch) !== null;
  }

  /** Where a worker loads the batch's codec from, when the batch goes to one; else null. */
  private sourceFor(batch: StoredBatch): CodecSource | null {
    if (this.offload === null || decodedBytesOf(this.formats, batch) < this.offload.bytesMin) return null;
    return this.formats.source(batch.format) ?? null;
  }
}

// ---- On the worker thread --------------------------------------------------------------------

const codecs = new Map<string, Promise<BatchFormatCodec>>();

function codecOf(source: CodecSource): Promise<BatchFormatCodec> {
  const key = `${source.moduleUrl}#${source.exportName}`;
  let codec = codecs.get(key);
  if (codec === undefined) {
    codec = import(source.moduleUrl).then((m: Record<string, unknown>) => {
      const found = m[source.exportName] as BatchFormatCodec | undefined;
      if (found === undefined || typeof found.decode !== 'function') throw new Error(`${source.moduleUrl} exports no batch format codec ${source.exportName}`);
      return found;
    });
    codecs.set(key, codec);
  }
  return codec;
}

/** CompactionWork.summaries on a worker. */
export async function summariesTask(source: CodecSource, batch: StoredBatch): Promise<RecordSummary[]> {
  const codec = await codecOf(source);
  return codec.decode({ ...batch, payload: asBuffer(batch.payload) }).map(summaryOf);
}

/** CompactionWork.rewrite on a worker; the new payload in a buffer of its own (transferred back). */
export async function rewriteTask(source: CodecSource, batch: StoredBatch, kept: number[]): Promise<AppendRequest> {
  const codec = await codecOf(source);
  const received = { ...batch, payload: asBuffer(batch.payload) };
  const request = rewrittenRecords(codec, received, codec.decode(received), kept);
  const { payload } = request;
  return { ...request, payload: payload.byteOffset === 0 && payload.byteLength === payload.buffer.byteLength ? payload : ownedCopy(payload) };
}
