// Transcoding as a worker-thread task (core/offload.ts sends it; base/worker-thread.ts runs it):
// the same wholeBatchAs and recordsOf as on the main thread, over a format registry built in the
// worker from the codecs' module URLs (FormatRegistry.source), with the batch's bytes handed over.
// Everything here crosses threads by structured clone: the job is data, never a function.

import { readSync } from 'node:fs';
import { asBuffer } from '../base/worker-pool.js';
import { sliceBytesValid } from '../log/envelope.js';
import { createFormatRegistry, type CodecSource, type FormatRegistry } from '../log/formats.js';
import type { BatchFormat, BatchFormatCodec, FileSlice, StoredBatch } from '../log/types.js';
import { recordAtTimestampIn, recordsOf, wholeBatchAs, type ServedRecords, type TimedOffset } from './transcode.js';

/**
 * A stored batch: its payload in an ArrayBuffer of its own, or, for a file-sliced batch, its
 * file range (`file`), which the worker reads itself (the fd is the process's, kept open by the
 * read's lease until the task ends), so that the main thread neither reads nor copies it.
 */
export type TranscodeBatch = StoredBatch;

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

/** A timestamp lookup in one batch (recordAtTimestampIn): the batch's codec only. */
export interface TimestampJob {
  sources: CodecSource[];
  batch: TranscodeBatch;
  from: number;
  timestamp: number;
}

/** A task's answer, with the buffer the batch came in, handed back for the next task (Transcoder's spares). */
export interface TaskReply<T> {
  value: T;
  spare: Uint8Array | null;
}

/** wholeBatchAs on a worker. */
export async function wholeBatchTask(job: WholeBatchJob): Promise<TaskReply<Buffer | null>> {
  const formats = await registryOf(job.sources);
  const out = wholeBatchAs(formats, job.format, received(job.batch), job.fromOffset, job.budgetBytes);
  return { value: out === null ? null : owned(out as Buffer), spare: spareOf(job.batch) };
}

/** recordsOf on a worker (a batch of another format: its chunks are new bytes). */
export async function recordsTask(job: RecordsJob): Promise<TaskReply<ServedRecords | null>> {
  const formats = await registryOf(job.sources);
  const out = recordsOf(formats, job.format, received(job.batch), job.from, job.toExclusive, job.countMax);
  return { value: out === null ? null : { ...out, chunks: out.chunks.map((c) => owned(c as Buffer)) }, spare: spareOf(job.batch) };
}

/** recordAtTimestampIn on a worker (a batch whose records decode to many bytes: a small compressed one may inflate to 64 MiB). */
export async function recordAtTimestampTask(job: TimestampJob): Promise<TaskReply<TimedOffset | null>> {
  const formats = await registryOf(job.sources);
  return { value: recordAtTimestampIn(formats, received(job.batch), job.from, job.timestamp), spare: spareOf(job.batch) };
}

/** The whole buffer the batch's payload came in (never part of an answer: those are copied by owned()). */
function spareOf(batch: TranscodeBatch): Uint8Array | null {
  return batch.file === undefined && batch.payload.buffer.byteLength > 0 ? new Uint8Array(batch.payload.buffer) : null;
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
  const { file, ...rest } = batch;
  if (file === undefined) return { ...rest, payload: asBuffer(batch.payload) };
  return { ...rest, payload: readSlice(file) };
}

/**
 * The bytes of a file slice, read on this (worker) thread and checked against the checksum the
 * slice carries: a mismatch throws, and the read service then has the log confirm and record it
 * (PartitionLog.checkBatch).
 */
export function readSlice(file: FileSlice): Buffer {
  const payload = Buffer.allocUnsafeSlow(file.length);
  let done = 0;
  while (done < file.length) {
    const n = readSync(file.fd, payload, done, file.length - done, file.position + done);
    if (n === 0) throw new Error(`a file slice of ${file.length} bytes read back ${done}`);
    done += n;
  }
  if (!sliceBytesValid(file, payload)) throw new Error(`a file slice of ${file.length} bytes does not match its stored checksum`);
  return payload;
}

/** The bytes in an ArrayBuffer of their own, to be transferred back rather than copied (a view of the batch would be). */
function owned(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) return bytes;
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  copy.set(bytes);
  return copy;
}
