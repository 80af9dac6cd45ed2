// RecordBatch compression codecs (attributes bits 0-2). All functions here are synchronous: the
// native addons (snappy and lz4-napi from napi-rs, @toondepauw/node-zstd) and node:zlib's *Sync
// calls run on the calling thread. Produce decompresses each compressed batch once to check its
// records (record-batch.ts inspectProducedRecords) and stores it as received unless the topic's
// compression.type asks for another codec (produce-task.ts, on a worker when large); reads decompress it
// again where they need its records (transcoding, compaction, ListOffsets by timestamp).
//
// `decodedBytesBound` says before decoding how large the records may be, so that Produce can hand
// a batch that inflates far (a 2 KB zstd batch of 60 MiB of zeros decodes for ~300 ms) to a
// worker thread instead of decoding it on the event loop.
//
// Wire formats, as Kafka's Java client writes and reads them:
// - gzip (1): the full gzip container (RFC 1952: 10-byte header, DEFLATE, CRC32 + ISIZE trailer),
//   GZIPOutputStream/GZIPInputStream. Not raw DEFLATE, not a zlib stream.
// - snappy (2): xerial snappy-java framing (SnappyOutputStream):
//     magic   0x82 'S' 'N' 'A' 'P' 'P' 'Y' 0x00     (8 bytes)
//     version int32 BE = 1, compatible int32 BE = 1  (8 bytes)
//     blocks  int32 BE compressed length + raw snappy block (of at most 32 KiB of input)
//   librdkafka produces *raw* (unframed) snappy for MsgVersion 2 and kafka-python xerial; both are
//   accepted on decode (SnappyInputStream falls back to raw too). We always encode xerial.
// - lz4 (3): the LZ4 frame format (magic 0x184D2204, independent blocks), as Kafka's
//   Lz4BlockOutputStream writes it; any valid frame (with or without block/content checksums,
//   linked or independent blocks) is accepted on decode. The "broken HC checksum" of the old
//   KafkaLZ4 v0/v1 message format does not apply to magic 2 batches.
// - zstd (4): a standard zstd frame (with or without the content size in its header).
//
// Decompression is bounded: `maxOutputBytes` is checked before decoding where the format states
// the size up front (raw snappy blocks), enforced by the decoder (gzip), or, for lz4 and zstd,
// whose libraries expose no limit, checked before decoding against the most the frames can hold,
// read from their block headers (src/base/compression.ts, shared with Cursus): a small frame that
// would inflate to gigabytes is refused without being decoded.

import { gunzipSync, gzipSync } from 'node:zlib';
import { Decoder as ZstdDecoder, Encoder as ZstdEncoder } from '@toondepauw/node-zstd';
import { compressFrameSync, decompressFrameSync } from 'lz4-napi';
import { lz4FrameOutputBound, snappyDecode, snappyDecodedLength, xerialSnappyEncode, zstdFrameOutputBound, type CompressionResult } from '../../../base/compression.js';

export type { CompressionResult } from '../../../base/compression.js';

export const CompressionCodec = {
  none: 0,
  gzip: 1,
  snappy: 2,
  lz4: 3,
  zstd: 4,
} as const;
export type CompressionCodec = (typeof CompressionCodec)[keyof typeof CompressionCodec];

export function compressionName(codec: number): string {
  switch (codec) {
    case 0:
      return 'none';
    case 1:
      return 'gzip';
    case 2:
      return 'snappy';
    case 3:
      return 'lz4';
    case 4:
      return 'zstd';
    default:
      return `unknown(${codec})`;
  }
}

/** Default cap on one decompressed records section. */
export const decompressedBytesMaxDefault = 64 * 1024 * 1024;

let zstdEncoder: ZstdEncoder | null = null;
let zstdDecoder: ZstdDecoder | null = null;

/** Compresses a records section. Throws only on a programmer error (unknown codec). */
export function compress(codec: number, data: Buffer): Buffer {
  switch (codec) {
    case CompressionCodec.none:
      return data;
    case CompressionCodec.gzip:
      return gzipSync(data);
    case CompressionCodec.snappy:
      return xerialSnappyEncode(data);
    case CompressionCodec.lz4:
      return compressFrameSync(data);
    case CompressionCodec.zstd:
      zstdEncoder ??= new ZstdEncoder(3);
      return zstdEncoder.encodeSync(data);
    default:
      throw new Error(`unknown compression codec ${codec}`);
  }
}

/**
 * How many bytes a records section compressed with `codec` decodes to, read from its headers
 * without decoding: exact for snappy (each block states its size), the most its frames can hold
 * for lz4 and zstd (a compressed zstd block counts as 128 KiB), and the gzip trailer's ISIZE,
 * which a crafted stream can understate (decompress's limit then catches it, `tooLarge`). 0 for
 * a section that does not parse or may hold more than the 64 MiB decoded at most: decompress
 * refuses those before decoding.
 */
export function decodedBytesBound(codec: number, data: Buffer): number {
  let bound: number | string;
  switch (codec) {
    case CompressionCodec.none:
      return data.length;
    case CompressionCodec.gzip:
      bound = data.length >= 18 ? data.readUInt32LE(data.length - 4) : 0;
      break;
    case CompressionCodec.snappy:
      bound = snappyDecodedLength(data);
      break;
    case CompressionCodec.lz4:
      bound = lz4FrameOutputBound(data, decompressedBytesMaxDefault);
      break;
    case CompressionCodec.zstd:
      bound = zstdFrameOutputBound(data, decompressedBytesMaxDefault);
      break;
    default:
      return 0;
  }
  return typeof bound === 'string' ? 0 : Math.min(bound, decompressedBytesMaxDefault);
}

/** Decompresses a records section; a corrupt or oversized input is a reason, never a throw. */
export function decompress(
  codec: number,
  data: Buffer,
  maxOutputBytes: number = decompressedBytesMaxDefault,
): CompressionResult {
  try {
    let out: Buffer;
    switch (codec) {
      case CompressionCodec.none:
        out = data;
        break;
      case CompressionCodec.gzip:
        out = gunzipSync(data, { maxOutputLength: maxOutputBytes });
        break;
      case CompressionCodec.snappy: {
        const r = snappyDecode(data, maxOutputBytes);
        if (!r.ok) return r;
        out = r.value;
        break;
      }
      case CompressionCodec.lz4: {
        const bound = lz4FrameOutputBound(data, maxOutputBytes);
        if (typeof bound === 'string') return { ok: false, reason: `lz4: ${bound}` };
        out = decompressFrameSync(data);
        break;
      }
      case CompressionCodec.zstd: {
        const bound = zstdFrameOutputBound(data, maxOutputBytes);
        if (typeof bound === 'string') return { ok: false, reason: `zstd: ${bound}` };
        zstdDecoder ??= new ZstdDecoder();
        out = zstdDecoder.decodeSync(data);
        break;
      }
      default:
        return { ok: false, reason: `unknown compression codec ${codec}` };
    }
    if (out.length > maxOutputBytes) {
      return { ok: false, reason: `decompressed size ${out.length} exceeds ${maxOutputBytes} bytes`, tooLarge: true };
    }
    return { ok: true, value: out };
  } catch (e) {
    const reason = `${compressionName(codec)} decompression failed: ${(e as Error).message}`;
    // zlib's maxOutputLength ends the decoding with ERR_BUFFER_TOO_LARGE.
    return (e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' ? { ok: false, reason, tooLarge: true } : { ok: false, reason };
  }
}
