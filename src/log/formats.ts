// The registry of batch format codecs: how the log stamps a batch it appends (one lookup by
// format per append) and how it looks inside a stored batch when it has to (compaction,
// transcoding). Whoever builds a broker builds its registry (src/server/listeners.ts
// builtinFormats) and hands it to the broker, which gives it to every log it opens; a log opened
// alone gets the neutral codec only.

import assert from 'node:assert/strict';
import { neutralCodec } from './neutral-format.js';
import type { BatchFormat, BatchFormatCodec, StoredBatch } from './types.js';

/**
 * Where a worker thread loads a codec from: the URL of its module (import.meta.resolve) and the
 * name of its export. A codec registered with one can be run off the main thread (core/offload.ts).
 */
export interface CodecSource {
  moduleUrl: string;
  exportName: string;
}

export class FormatRegistry {
  private readonly codecs = new Map<BatchFormat, BatchFormatCodec>();
  private readonly sources = new Map<BatchFormat, CodecSource>();

  /** Registers the codec for its format, replacing any earlier one for the same format. */
  register(codec: BatchFormatCodec, source?: CodecSource): this {
    assert.ok(Number.isInteger(codec.format) && codec.format > 0, 'codec format must be a positive integer');
    this.codecs.set(codec.format, codec);
    if (source === undefined) this.sources.delete(codec.format);
    else this.sources.set(codec.format, source);
    return this;
  }

  /** Where a worker loads the codec of `format` from; undefined when it was registered without one. */
  source(format: BatchFormat): CodecSource | undefined {
    return this.sources.get(format);
  }

  /** The codec for `format`, or undefined: batches without a codec are kept as they are. */
  get(format: BatchFormat): BatchFormatCodec | undefined {
    return this.codecs.get(format);
  }

  has(format: BatchFormat): boolean {
    return this.codecs.has(format);
  }
}

/** A registry holding the neutral codec only. */
export function createFormatRegistry(): FormatRegistry {
  return new FormatRegistry().register(neutralCodec, { moduleUrl: import.meta.resolve('./neutral-format.js'), exportName: 'neutralCodec' });
}

/** What decoding `batch` produces at most (BatchFormatCodec.decodedBytes), at least its stored length. */
export function decodedBytesOf(formats: FormatRegistry, batch: StoredBatch): number {
  const stored = batch.file?.length ?? batch.payload.length;
  return Math.max(stored, formats.get(batch.format)?.decodedBytes?.(batch) ?? 0);
}
