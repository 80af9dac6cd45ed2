// v1's broker-wide compression of inbound bodies (real Cursus util.DecompressMessage): v1 frames
// carry no compression indicator, so a v1 broker configured with `compression_type` decompresses
// every body it reads with it, and writes its replies uncompressed. Formats: gzip members, snappy
// in xerial framing or as one raw block, LZ4 frames. A body that does not decompress closes the
// connection without a reply, as in v1. Output is bounded by the frame limit before anything is
// inflated past it.

import { gunzipSync } from 'node:zlib';
import { decompressFrameSync } from 'lz4-napi';
import { lz4FrameOutputBound, snappyDecode, type CompressionResult } from '../../../base/compression.js';

export const v1Compressions = ['none', 'gzip', 'snappy', 'lz4'] as const;
export type V1Compression = (typeof v1Compressions)[number];

export type Decompressed = CompressionResult;

/** A body as v1 reads it under the broker's compression, at most `max` bytes once inflated. */
export function decompressV1Body(body: Buffer, compression: V1Compression, max: number): Decompressed {
  try {
    switch (compression) {
      case 'none':
        return { ok: true, value: body };
      case 'gzip': {
        const out = gunzipSync(body, { maxOutputLength: max + 1 });
        return out.length > max ? { ok: false, reason: `gzip body inflates past ${max} bytes` } : { ok: true, value: out };
      }
      case 'snappy':
        return snappyDecode(body, max);
      case 'lz4': {
        const bound = lz4FrameOutputBound(body, max);
        if (typeof bound === 'string') return { ok: false, reason: `lz4: ${bound}` };
        return { ok: true, value: decompressFrameSync(body) };
      }
    }
  } catch (e) {
    return { ok: false, reason: `${compression}: ${(e as Error).message}` };
  }
}
