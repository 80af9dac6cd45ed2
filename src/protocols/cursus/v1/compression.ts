// v1's broker-wide compression of inbound bodies (real Cursus util.DecompressMessage): v1 frames
// carry no compression indicator, so a v1 broker configured with `compression_type` decompresses
// every body it reads with it, and writes its replies uncompressed. Formats: gzip members, snappy
// in xerial framing or as one raw block, LZ4 frames. A body that does not decompress closes the
// connection without a reply, as in v1. Output is bounded by the frame limit before anything is
// inflated past it.

import { gunzipSync } from 'node:zlib';
import { decompressFrameSync } from 'lz4-napi';
import { uncompressSync } from 'snappy';
import { lz4FramesBound } from '../codec/compression.js';

export const v1Compressions = ['none', 'gzip', 'snappy', 'lz4'] as const;
export type V1Compression = (typeof v1Compressions)[number];

export type Decompressed = { ok: true; value: Buffer } | { ok: false; reason: string };

const xerialMagic = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const xerialHeaderBytes = 16;

/** The length a raw snappy block declares (its uvarint preamble), or a reason. */
function snappyDeclared(block: Buffer): number | string {
  let n = 0;
  for (let i = 0; i < 5; i++) {
    if (i >= block.length) return 'truncated snappy length';
    const b = block[i]!;
    n += (b & 0x7f) * 2 ** (7 * i);
    if ((b & 0x80) === 0) return n;
  }
  return 'snappy length over 5 bytes';
}

function snappyBlock(block: Buffer, budget: number): Decompressed {
  const n = snappyDeclared(block);
  if (typeof n === 'string') return { ok: false, reason: n };
  if (n > budget) return { ok: false, reason: `snappy block of ${n} bytes exceeds ${budget}` };
  return { ok: true, value: uncompressSync(block, { asBuffer: true }) as Buffer };
}

function snappy(data: Buffer, max: number): Decompressed {
  if (data.length < xerialHeaderBytes || !data.subarray(0, 8).equals(xerialMagic)) return snappyBlock(data, max);
  const parts: Buffer[] = [];
  let total = 0;
  for (let off = xerialHeaderBytes; off < data.length; ) {
    if (data.length - off < 4) return { ok: false, reason: 'xerial snappy: truncated block length' };
    const len = data.readUInt32BE(off);
    off += 4;
    if (len > data.length - off) return { ok: false, reason: 'xerial snappy: truncated block' };
    const r = snappyBlock(data.subarray(off, off + len), max - total);
    if (!r.ok) return r;
    parts.push(r.value);
    total += r.value.length;
    off += len;
  }
  return { ok: true, value: Buffer.concat(parts, total) };
}

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
        return snappy(body, max);
      case 'lz4': {
        const bound = lz4FramesBound(body, max);
        if (bound !== null) return { ok: false, reason: `lz4: ${bound}` };
        return { ok: true, value: decompressFrameSync(body) };
      }
    }
  } catch (e) {
    return { ok: false, reason: `${compression}: ${(e as Error).message}` };
  }
}
