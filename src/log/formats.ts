// The registry of batch format codecs: how the log looks inside a stored batch when it has to
// (compaction, transcoding). The hot path never consults it. Front-ends register their codec in
// `defaultFormatRegistry` at startup; tests build their own registry.

import assert from 'node:assert/strict';
import { neutralCodec } from './neutral-format.js';
import type { BatchFormat, BatchFormatCodec } from './types.js';

export class FormatRegistry {
  private readonly codecs = new Map<BatchFormat, BatchFormatCodec>();

  /** Registers the codec for its format, replacing any earlier one for the same format. */
  register(codec: BatchFormatCodec): this {
    assert.ok(Number.isInteger(codec.format) && codec.format > 0, 'codec format must be a positive integer');
    this.codecs.set(codec.format, codec);
    return this;
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
  return new FormatRegistry().register(neutralCodec);
}

/** The process-wide registry the broker uses; front-ends register their codecs here. */
export const defaultFormatRegistry: FormatRegistry = createFormatRegistry();
