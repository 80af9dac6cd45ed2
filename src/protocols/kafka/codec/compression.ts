// RecordBatch compression codecs (attributes bits 0-2). All functions here are synchronous: the
// native addons (snappy and lz4-napi from napi-rs, @toondepauw/node-zstd) and node:zlib's *Sync
// calls run on the calling thread. Produce decompresses each compressed batch once to check its
// records (record-batch.ts checkProducedRecords) and stores it as received; reads decompress it
// again where they need its records (transcoding, compaction, ListOffsets by timestamp).
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
// read from their block headers (lz4FrameOutputBound, zstdFrameOutputBound): a small frame that
// would inflate to gigabytes is refused without being decoded.

import { gunzipSync, gzipSync } from 'node:zlib';
import { Decoder as ZstdDecoder, Encoder as ZstdEncoder } from '@toondepauw/node-zstd';
import { compressFrameSync, decompressFrameSync } from 'lz4-napi';
import { compressSync as snappyCompress, uncompressSync as snappyUncompress } from 'snappy';
import { Reader } from './reader.js';

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

export type CompressionResult = { ok: true; value: Buffer } | { ok: false; reason: string };

/** Default cap on one decompressed records section. */
export const decompressedBytesMaxDefault = 64 * 1024 * 1024;

export const xerialMagic = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const xerialHeaderBytes = 16;
const xerialBlockBytes = 32 * 1024;

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
      return { ok: false, reason: `decompressed size ${out.length} exceeds ${maxOutputBytes} bytes` };
    }
    return { ok: true, value: out };
  } catch (e) {
    return { ok: false, reason: `${compressionName(codec)} decompression failed: ${(e as Error).message}` };
  }
}

/** What one frame may hold and where it ends, or why it does not parse. */
type FrameBound = { bytes: number; end: number } | string;

/**
 * Sums what a sequence of zstd or LZ4 frames may hold, frame by frame (`frame` reads one, given
 * its magic, its offset and the bytes still allowed); both formats share skippable frames
 * (magic 0x184D2A50-5F), which hold nothing. A reason instead when a frame does not parse or the
 * sum passes `maxOutputBytes`.
 */
function framesOutputBound(data: Buffer, maxOutputBytes: number, frame: (magic: number, off: number, allowed: number) => FrameBound): number | string {
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
    const bound = frame(magic, off, maxOutputBytes - total);
    if (typeof bound === 'string') return bound;
    total += bound.bytes;
    off = bound.end;
  }
  return off > data.length ? 'truncated frame' : total;
}

const overBound = (maxOutputBytes: number): string => `frames may hold more than ${maxOutputBytes} bytes`;

/**
 * The most a sequence of zstd frames (RFC 8878) can decompress to, from the block headers alone:
 * a raw or RLE block states its size, a compressed block yields at most 128 KiB
 * (Block_Maximum_Size). A reason instead when the headers do not parse or the bound passes
 * `maxOutputBytes`.
 */
export function zstdFrameOutputBound(data: Buffer, maxOutputBytes: number): number | string {
  return framesOutputBound(data, maxOutputBytes, (magic, start, allowed) => {
    if (magic !== 0xfd2fb528) return `not a zstd frame (magic ${magic.toString(16)})`;
    if (data.length - start < 5) return 'truncated frame header';
    const descriptor = data[start + 4]!;
    const singleSegment = (descriptor >> 5) & 1;
    const contentSizeBytes = [singleSegment ? 1 : 0, 2, 4, 8][descriptor >> 6]!;
    let off = start + 5 + (singleSegment ? 0 : 1) + [0, 1, 2, 4][descriptor & 3]! + contentSizeBytes;
    let bytes = 0;
    for (let last = 0; last === 0; ) {
      if (data.length - off < 3) return 'truncated block header';
      const header = data[off]! | (data[off + 1]! << 8) | (data[off + 2]! << 16);
      off += 3;
      last = header & 1;
      const type = (header >> 1) & 3;
      const size = header >>> 3;
      if (type === 3) return 'reserved block type';
      bytes += type === 2 ? zstdBlockBytesMax : size;
      off += type === 1 ? 1 : size;
      if (bytes > allowed) return overBound(maxOutputBytes);
    }
    if ((descriptor >> 2) & 1) off += 4; // content checksum
    return { bytes, end: off };
  });
}

const zstdBlockBytesMax = 128 * 1024;

/**
 * The most a sequence of LZ4 frames can decompress to, from the frame descriptors and block
 * sizes alone: an uncompressed block yields its size, a compressed one at most the frame's
 * block maximum (64 KiB to 4 MiB). A reason instead when the headers do not parse or the bound
 * passes `maxOutputBytes`.
 */
export function lz4FrameOutputBound(data: Buffer, maxOutputBytes: number): number | string {
  return framesOutputBound(data, maxOutputBytes, (magic, start, allowed) => {
    if (magic !== 0x184d2204) return `not an LZ4 frame (magic ${magic.toString(16)})`;
    if (data.length - start < 7) return 'truncated frame descriptor';
    const flags = data[start + 4]!;
    const blockMax = lz4BlockBytesMax[(data[start + 5]! >> 4) & 7];
    if (blockMax === undefined) return 'bad block maximum size';
    const blockChecksum = (flags >> 4) & 1;
    let off = start + 7 + ((flags >> 3) & 1 ? 8 : 0) + (flags & 1 ? 4 : 0);
    let bytes = 0;
    for (;;) {
      if (data.length - off < 4) return 'truncated block';
      const word = data.readUInt32LE(off);
      off += 4;
      if (word === 0) break; // EndMark
      const size = word & 0x7fffffff;
      bytes += word >>> 31 ? size : blockMax;
      off += size + (blockChecksum ? 4 : 0);
      if (bytes > allowed) return overBound(maxOutputBytes);
    }
    if ((flags >> 2) & 1) off += 4; // content checksum
    return { bytes, end: off };
  });
}

/** LZ4 frame block maximum sizes by their BD code (4-7). */
const lz4BlockBytesMax: Record<number, number> = { 4: 64 * 1024, 5: 256 * 1024, 6: 1024 * 1024, 7: 4 * 1024 * 1024 };

/** xerial (snappy-java) framing: header, then 32 KiB input blocks each as int32 length + raw block. */
export function xerialSnappyEncode(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  const header = Buffer.alloc(xerialHeaderBytes);
  xerialMagic.copy(header, 0);
  header.writeInt32BE(1, 8);
  header.writeInt32BE(1, 12);
  parts.push(header);
  let total = xerialHeaderBytes;
  for (let off = 0; off < data.length || off === 0; off += xerialBlockBytes) {
    const block = snappyCompress(data.subarray(off, Math.min(off + xerialBlockBytes, data.length)));
    const len = Buffer.allocUnsafe(4);
    len.writeInt32BE(block.length, 0);
    parts.push(len, block);
    total += 4 + block.length;
    if (data.length === 0) break;
  }
  return Buffer.concat(parts, total);
}

/** The uncompressed length a raw snappy block declares (its uvarint preamble), or a reason. */
function rawSnappyLength(block: Buffer): number | string {
  const r = new Reader(block);
  const n = r.uvarint();
  return r.error ?? n;
}

function rawSnappyDecode(block: Buffer, maxOutputBytes: number): CompressionResult {
  const n = rawSnappyLength(block);
  if (typeof n === 'string') return { ok: false, reason: `snappy: ${n}` };
  if (n > maxOutputBytes) return { ok: false, reason: `snappy block declares ${n} bytes, over ${maxOutputBytes}` };
  return { ok: true, value: snappyUncompress(block, { asBuffer: true }) as Buffer };
}

/** Decodes xerial-framed or raw snappy. */
export function snappyDecode(data: Buffer, maxOutputBytes: number = decompressedBytesMaxDefault): CompressionResult {
  if (data.length < xerialHeaderBytes || !data.subarray(0, 8).equals(xerialMagic)) {
    return rawSnappyDecode(data, maxOutputBytes);
  }
  const r = new Reader(data, xerialHeaderBytes);
  const blocks: Buffer[] = [];
  let total = 0;
  while (r.remaining > 0) {
    const len = r.int32();
    const block = r.raw(len);
    if (r.error !== null) return { ok: false, reason: `xerial snappy: ${r.error}` };
    const n = rawSnappyLength(block);
    if (typeof n === 'string') return { ok: false, reason: `xerial snappy: ${n}` };
    total += n;
    if (total > maxOutputBytes) return { ok: false, reason: `xerial snappy output over ${maxOutputBytes} bytes` };
    blocks.push(snappyUncompress(block, { asBuffer: true }) as Buffer);
  }
  return { ok: true, value: blocks.length === 1 ? blocks[0]! : Buffer.concat(blocks, total) };
}
