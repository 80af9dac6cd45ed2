// Transcoding as a worker-thread task (core/offload.ts sends it; base/worker-thread.ts runs it):
// the same wholeBatchAs and recordsOf as on the main thread, over a format registry built in the
// worker from the codecs' module URLs (FormatRegistry.source), with the batch's bytes handed over.
// Everything here crosses threads by structured clone: the job is data, never a function.

import { asBuffer } from '../base/worker-pool.js';
import { createFormatRegistry, type CodecSource, type FormatRegistry } from '../log/formats.js';
import type { BatchFormat, BatchFormatCodec, StoredBatch } from '../log/types.js';
import { recordsOf, wholeBatchAs, type ServedRecords } from './transcode.js';

/** A stored batch without a file slice, its payload in an ArrayBuffer of its own. */
export type TranscodeBatch = Omit<StoredBatch, 'file'>;

/** What both tasks get: the codecs they need (the batch's and the reader's) and the batch. */
export interface TranscodeJob {
  sources: CodecSource[];
  format: BatchFormat;
  batch: TranscodeBatch;
}

export interface WholeBatchJob extends TranscodeJob {
  fromOffset: number;
  budgetBytes: number;
}

export interface RecordsJob extends TranscodeJob {
  from: number;
  toExclusive: number;
  countMax: number;
}

/** wholeBatchAs on a worker. */
export async function wholeBatchTask(job: WholeBatchJob): Promise<Buffer | null> {
  const formats = await registryOf(job.sources);
  const out = wholeBatchAs(formats, job.format, received(job.batch), job.fromOffset, job.budgetBytes);
  return out === null ? null : owned(out as Buffer);
}

/** recordsOf on a worker (a batch of another format: its chunks are new bytes). */
export async function recordsTask(job: RecordsJob): Promise<ServedRecords | null> {
  const formats = await registryOf(job.sources);
  const out = recordsOf(formats, job.format, received(job.batch), job.from, job.toExclusive, job.countMax);
  return out === null ? null : { ...out, chunks: out.chunks.map((c) => owned(c as Buffer)) };
}

const registries = new Map<string, Promise<FormatRegistry>>();

function registryOf(sources: CodecSource[]): Promise<FormatRegistry> {
  const key = sources.map((s) => `${s.moduleUrl}#${s.exportName}`).join(' ');
  let registry = registries.get(key);
  if (registry === undefined) {
    registry = Promise.all(
      sources.map(async (s) => {
        const codec = ((await import(s.moduleUrl)) as Record<string, unknown>)[s.exportName] as BatchFormatCodec | undefined;
        if (codec === undefined || typeof codec.decode !== 'function') throw new Error(`${s.moduleUrl} exports no batch format codec ${s.exportName}`);
        return { codec, source: s };
      }),
    ).then((codecs) => {
      const formats = createFormatRegistry();
      for (const { codec, source } of codecs) formats.register(codec, source);
      return formats;
    });
    registries.set(key, registry);
  }
  return registry;
}

function received(batch: TranscodeBatch): StoredBatch {
  return { ...batch, payload: asBuffer(batch.payload) };
}

/** The bytes in an ArrayBuffer of their own, to be transferred back rather than copied (a view of the batch would be). */
function owned(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) return bytes;
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  copy.set(bytes);
  return copy;
}
