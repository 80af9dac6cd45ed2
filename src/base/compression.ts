// Bounded decoders shared by the protocols that carry snappy, LZ4 or zstd payloads (Kafka record
// batches, Cursus frames): each refuses input that would inflate past a limit before inflating it.
//
// - snappy: raw blocks (a uvarint length preamble states the size) or xerial (snappy-java)
//   framing: the 16-byte header `0x82 SNAPPY 0x00`, version 1, compatible 1, then blocks of
//   (int32 BE length, raw block), each of at most 32 KiB of input when we write them.
// - LZ4 frames and zstd frames state no total size reliably, so the most they can hold is summed
//   from their block headers (an uncompressed/raw block holds its size, a compressed one at most
//   the frame's block maximum) and checked before decoding. Both formats share skippable frames
//   (magic 0x184D2A50-5F), which hold nothing.

import { compressSync as snappyCompress, uncompressSync as snappyUncompress } from 'snappy';

/** A decoded payload, or why not; `tooLarge` when the only fault is that it decodes past the limit asked for. */
export type CompressionResult = { ok: true; value: Buffer } | { ok: false; reason: string; tooLarge?: true };

export const xerialMagic = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const xerialHeaderBytes = 16;
const xerialBlockBytes = 32 * 1024;

/** xerial framing: header, then 32 KiB input blocks each as int32 length + raw block. */
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

/** The uncompressed length a raw snappy block declares (its uvarint preamble, at most 5 bytes), or a reason. */
export function rawSnappyLength(block: Buffer): number | string {
  let n = 0;
  for (let i = 0, shift = 0; i < 5; i++, shift += 7) {
    if (i >= block.length) return 'truncated length preamble';
    const b = block[i]!;
    n += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) return n;
  }
  return 'length preamble over 5 bytes';
}

function rawSnappyDecode(block: Buffer, maxOutputBytes: number): CompressionResult {
  const n = rawSnappyLength(block);
  if (typeof n === 'string') return { ok: false, reason: `snappy: ${n}` };
  if (n > maxOutputBytes) return { ok: false, reason: `snappy block declares ${n} bytes, over ${maxOutputBytes}`, tooLarge: true };
  return { ok: true, value: snappyUncompress(block, { asBuffer: true }) as Buffer };
}

/** The size xerial-framed or raw snappy declares it decodes to (exact: each block states it), or a reason. */
export function snappyDecodedLength(data: Buffer): number | string {
  if (data.length < xerialHeaderBytes || !data.subarray(0, 8).equals(xerialMagic)) return rawSnappyLength(data);
  let total = 0;
  for (let off = xerialHeaderBytes; off < data.length; ) {
    if (data.length - off < 4) return 'truncated block length';
    const len = data.readInt32BE(off);
    off += 4;
    if (len < 0 || len > data.length - off) return 'truncated block';
    const n = rawSnappyLength(data.subarray(off, off + len));
    if (typeof n === 'string') return n;
    total += n;
    off += len;
  }
  return total;
}

/** Decodes xerial-framed or raw snappy of at most `maxOutputBytes`. Throws only what the snappy addon throws on a corrupt block. */
export function snappyDecode(data: Buffer, maxOutputBytes: number): CompressionResult {
  if (data.length < xerialHeaderBytes || !data.subarray(0, 8).equals(xerialMagic)) return rawSnappyDecode(data, maxOutputBytes);
  const blocks: Buffer[] = [];
  let total = 0;
  let off = xerialHeaderBytes;
  while (off < data.length) {
    if (data.length - off < 4) return { ok: false, reason: 'xerial snappy: truncated block length' };
    const len = data.readInt32BE(off);
    off += 4;
    if (len < 0 || len > data.length - off) return { ok: false, reason: 'xerial snappy: truncated block' };
    const block = data.subarray(off, off + len);
    off += len;
    const n = rawSnappyLength(block);
    if (typeof n === 'string') return { ok: false, reason: `xerial snappy: ${n}` };
    total += n;
    if (total > maxOutputBytes) return { ok: false, reason: `xerial snappy output over ${maxOutputBytes} bytes`, tooLarge: true };
    blocks.push(snappyUncompress(block, { asBuffer: true }) as Buffer);
  }
  return { ok: true, value: blocks.length === 1 ? blocks[0]! : Buffer.concat(blocks, total) };
}

/** What one frame may hold and where it ends, or why it does not parse. */
type FrameBound = { bytes: number; end: number } | string;

/**
 * Sums what a sequence of zstd or LZ4 frames may hold, frame by frame (`frame` reads one, given
 * its magic, its offset and the bytes still allowed). A reason instead when a frame does not
 * parse or the sum passes `maxOutputBytes`.
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

const zstdBlockBytesMax = 128 * 1024;

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

/** LZ4 frame block maximum sizes by their BD code (4-7). */
const lz4BlockBytesMax: Record<number, number> = { 4: 64 * 1024, 5: 256 * 1024, 6: 1024 * 1024, 7: 4 * 1024 * 1024 };

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
