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
// (a compressed block counts as its block maximum), so they are checked against the 64 MiB frame
// limit and the exact length after decoding.

import { gunzipSync, gzipSync } from 'node:zlib';
import { compressFrameSync, decompressFrameSync } from 'lz4-napi';
import { compressSync as snappyCompress, uncompressSync as snappyUncompress } from 'snappy';

export const Compression = { none: 0, gzip: 1, snappy: 2, lz4: 3 } as const;
export type Compression = (typeof Compression)[keyof typeof Compression];

export function isCompression(id: number): id is Compression {
  return id === 0 || id === 1 || id === 2 || id === 3;
}

export function compressionName(id: number): string {
  return ['none', 'gzip', 'snappy', 'lz4'][id] ?? `unknown(${id})`;
}

export type CompressionResult = { ok: true; value: Buffer } | { ok: false; reason: string };

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
        // A compressed block counts as its frame's block maximum, so the bound is the frame limit.
        const bound = lz4FramesBound(data, lz4InflateBytesMax);
        if (bound !== null) return { ok: false, reason: `lz4: ${bound}` };
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

const xerialMagic = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const xerialHeaderBytes = 16;

/** The uvarint length preamble of a raw snappy block, or a reason. */
function snappyLength(block: Buffer): number | string {
  let n = 0;
  for (let i = 0, shift = 0; i < 5; i++, shift += 7) {
    if (i >= block.length) return 'truncated length preamble';
    const b = block[i]!;
    n += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) return n;
  }
  return 'length preamble over 5 bytes';
}

function snappyDecode(data: Buffer, decodedLength: number): CompressionResult {
  if (data.length < xerialHeaderBytes || !data.subarray(0, 8).equals(xerialMagic)) {
    const n = snappyLength(data);
    if (typeof n === 'string') return { ok: false, reason: `snappy: ${n}` };
    if (n !== decodedLength) return { ok: false, reason: `snappy block declares ${n} bytes, header says ${decodedLength}` };
    return { ok: true, value: snappyUncompress(data, { asBuffer: true }) as Buffer };
  }
  // xerial: 16-byte header, then blocks of (i32 length, raw snappy block).
  const out = Buffer.allocUnsafe(decodedLength);
  let filled = 0;
  let off = xerialHeaderBytes;
  while (off < data.length) {
    if (data.length - off < 4) return { ok: false, reason: 'xerial snappy: truncated block length' };
    const len = data.readUInt32BE(off);
    off += 4;
    if (len > data.length - off) return { ok: false, reason: 'xerial snappy: truncated block' };
    const block = data.subarray(off, off + len);
    off += len;
    const n = snappyLength(block);
    if (typeof n === 'string') return { ok: false, reason: `xerial snappy: ${n}` };
    if (n > decodedLength - filled) return { ok: false, reason: `xerial snappy output over ${decodedLength} bytes` };
    (snappyUncompress(block, { asBuffer: true }) as Buffer).copy(out, filled);
    filled += n;
  }
  return { ok: true, value: out.subarray(0, filled) };
}

/** LZ4 frame block maximum sizes by their BD code. */
const lz4BlockMax: Record<number, number> = { 4: 64 * 1024, 5: 256 * 1024, 6: 1024 * 1024, 7: 4 * 1024 * 1024 };

/**
 * Null when a sequence of LZ4 frames can hold at most `maxBytes`, judged from the frame
 * descriptors and block headers alone (an uncompressed block holds its size, a compressed one at
 * most the frame's block maximum); otherwise why not. Skippable frames hold nothing.
 */
export function lz4FramesBound(data: Buffer, maxBytes: number): string | null {
  let off = 0;
  let total = 0;
  while (off < data.length) {
    if (data.length - off < 4) return 'truncated frame';
    const magic = data.readUInt32LE(off);
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      if (data.length - off < 8) return 'truncated skippable frame';
      off += 8 + data.readUInt32LE(off + 4);
      continue;
    }
    if (magic !== 0x184d2204) return `not an LZ4 frame (magic ${magic.toString(16)})`;
    if (data.length - off < 7) return 'truncated frame descriptor';
    const flags = data[off + 4]!;
    const blockMax = lz4BlockMax[(data[off + 5]! >> 4) & 7];
    if (blockMax === undefined) return 'bad block maximum size';
    const blockChecksum = (flags >> 4) & 1;
    off += 7 + ((flags >> 3) & 1 ? 8 : 0) + (flags & 1 ? 4 : 0);
    for (;;) {
      if (data.length - off < 4) return 'truncated block';
      const word = data.readUInt32LE(off);
      off += 4;
      if (word === 0) break;
      const size = word & 0x7fffffff;
      total += word >>> 31 ? size : blockMax;
      off += size + (blockChecksum ? 4 : 0);
      if (total > maxBytes) return `frames may hold more than ${maxBytes} bytes`;
    }
    if ((flags >> 2) & 1) off += 4;
  }
  return off > data.length ? 'truncated frame' : null;
}
