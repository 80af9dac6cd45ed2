// Frame payload compression (docs/protocols/cursus-wire-v2.md §2.6), the libraries the Kafka codec
// uses, called synchronously (node:zlib *Sync, the snappy and lz4-napi addons):
//
//   id 0 none     the payload
//   id 1 gzip     one RFC 1952 member written; members read
//   id 2 snappy   one raw snappy block written (uvarint length preamble); raw or xerial read
//   id 3 lz4      one LZ4 frame written (magic 0x184D2204); LZ4 frames read
//
// Decompression is bounded by the header's decoded_length before anything is inflated: gzip is
// stopped at it and a snappy preamble is checked against it. An empty
// payload is empty under every algorithm (§2). LZ4 block headers bound only what a frame may hold
// (a compressed block counts as its block maximum), so they are checked against decoded_length
// plus one 4 MiB block maximum (within the 64 MiB frame limit), and the exact length after decoding.

import { gunzipSync, gzipSync } from 'node:zlib';
import { compressFrameSync, decompressFrameSync } from 'lz4-napi';
import { compressSync as snappyCompress } from 'snappy';
import { lz4FrameOutputBound, snappyDecode, type CompressionResult } from '../../../base/compression.js';

export const Compression = { none: 0, gzip: 1, snappy: 2, lz4: 3 } as const;
export type Compression = (typeof Compression)[keyof typeof Compression];

export function isCompression(id: number): id is Compression {
  return id === 0 || id === 1 || id === 2 || id === 3;
}

export function compressionName(id: number): string {
  return ['none', 'gzip', 'snappy', 'lz4'][id] ?? `unknown(${id})`;
}

export type { CompressionResult } from '../../../base/compression.js';

/** Compresses a frame payload; an empty payload stays empty. */
export function compressPayload(id: Compression, data: Buffer): Buffer {
  if (data.length === 0) return data;
  switch (id) {
    case Compression.none:
      return data;
    case Compression.gzip:
      return gzipSync(data);
    case Compression.snappy:
      return snappyCompress(data);
    case Compression.lz4:
      return compressFrameSync(data);
  }
}

/** Decompresses a frame payload that must inflate to exactly `decodedLength` bytes. */
export function decompressPayload(id: Compression, data: Buffer, decodedLength: number): CompressionResult {
  if (data.length === 0 || decodedLength === 0) {
    return data.length === decodedLength ? { ok: true, value: data } : { ok: false, reason: `encoded length ${data.length} with decoded length ${decodedLength}` };
  }
  let out: Buffer;
  try {
    switch (id) {
      case Compression.none:
        out = data;
        break;
      case Compression.gzip:
        // One byte over the limit tells "too long" from "exactly right".
        out = gunzipSync(data, { maxOutputLength: decodedLength + 1 });
        break;
      case Compression.snappy: {
        const r = snappyDecode(data, decodedLength);
        if (!r.ok) return r;
        out = r.value;
        break;
      }
      case Compression.lz4: {
        const bound = lz4FrameOutputBound(data, lz4InflateBytesAllowed(decodedLength));
        if (typeof bound === 'string') return { ok: false, reason: `lz4: ${bound}` };
        out = decompressFrameSync(data);
        break;
      }
    }
  } catch (e) {
    return { ok: false, reason: `${compressionName(id)}: ${(e as Error).message}` };
  }
  if (out.length !== decodedLength) return { ok: false, reason: `${compressionName(id)} payload decodes to ${out.length} bytes, header says ${decodedLength}` };
  return { ok: true, value: out };
}

/** What LZ4 frames may be allowed to inflate to before the exact length is checked (docs §2). */
const lz4InflateBytesMax = 64 * 1024 * 1024;
/** The largest LZ4 block maximum (BD code 7). */
const lz4BlockBytesMax = 4 * 1024 * 1024;

/**
 * The bound LZ4 block headers are checked against: a compressed block counts as its block
 * maximum, so a frame whose blocks are full but the last one counts less than one block maximum
 * over its decoded length. A frame that claims more (a small payload whose header lies about a
 * 64 MiB inflation) is refused before it is inflated.
 */
function lz4InflateBytesAllowed(decodedLength: number): number {
  return Math.min(lz4InflateBytesMax, decodedLength + lz4BlockBytesMax);
}
