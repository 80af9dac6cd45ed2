// The Wire v2 frame (docs/protocols/cursus-wire-v2.md §2): a 32-byte big-endian header and the
// encoded payload.
//
//    0 magic u32 'CRS2' | 4 version u16 = 2 | 6 kind u8 | 7 flags u8
//    8 command u16 | 10 status u16 | 12 request_id u64
//   20 encoded_length u32 | 24 decoded_length u32 | 28 crc32c u32 (over the encoded payload)
//
//   flags: bits 0-2 compression id (0-3), bit 3 END (kind 5 only), bits 4-7 reserved (zero)
//
// `decodeFrameHeader` checks everything the header alone can say (the framer calls it before it
// buffers a payload); `openFrame` checks the CRC and decompresses; `encodeFrame` compresses,
// checksums and returns the chunks to write.

import { crc32c } from '../../../base/native.js';
import { Compression, compressPayload, decompressPayload, isCompression } from './compression.js';

export const frameMagic = 0x43525332;
export const wireVersion = 2;
export const frameHeaderBytes = 32;
/** Largest encoded and decoded payload (spec §2: 64 MB). */
export const payloadBytesMax = 67_108_864;

export const FrameKind = {
  negotiationRequest: 1,
  negotiationResponse: 2,
  request: 3,
  response: 4,
  stream: 5,
} as const;
export type FrameKind = (typeof FrameKind)[keyof typeof FrameKind];

export const Status = { ok: 0, error: 1 } as const;
export type Status = (typeof Status)[keyof typeof Status];

export const flagCompressionMask = 0x07;
export const flagEnd = 0x08;
export const flagReservedMask = 0xf0;

/** The NEGOTIATE command ID (docs §5); negotiation frames carry it. */
export const negotiateCommand = 33;

export interface FrameHeader {
  kind: FrameKind;
  compression: Compression;
  /** Flag bit 3: the last frame for this request ID (stream frames only). */
  end: boolean;
  command: number;
  status: Status;
  requestId: bigint;
  encodedLength: number;
  decodedLength: number;
  crc32c: number;
}

export type Decoded<T> = { ok: true; value: T } | { ok: false; reason: string };

export interface HeaderLimits {
  /** Largest encoded payload accepted (default and ceiling: payloadBytesMax). */
  encodedBytesMax?: number;
  /** Largest decoded payload accepted (default and ceiling: payloadBytesMax). */
  decodedBytesMax?: number;
}

/** Flags byte for a compression id and END. */
export function encodeFlags(compression: Compression, end = false): number {
  return compression | (end ? flagEnd : 0);
}

/** Null when the flags byte is valid for `kind`, else why not. */
export function checkFlags(kind: number, flags: number): string | null {
  if ((flags & flagReservedMask) !== 0) return `reserved flag bits set (flags 0x${flags.toString(16).padStart(2, '0')})`;
  const compression = flags & flagCompressionMask;
  if (!isCompression(compression)) return `unknown compression id ${compression}`;
  if ((flags & flagEnd) !== 0 && kind !== FrameKind.stream) return `END flag on a frame of kind ${kind}`;
  if ((kind === FrameKind.negotiationRequest || kind === FrameKind.negotiationResponse) && flags !== 0) return 'negotiation frames are uncompressed and carry no flags';
  return null;
}

/**
 * Reads and checks the 32 header bytes at `off`: magic, version, kind, flags, status, lengths
 * against the limits, the uncompressed and empty-payload length rules and the request-ID and
 * command rules of the frame's kind (docs §2.1).
 */
export function decodeFrameHeader(buf: Buffer, off = 0, limits: HeaderLimits = {}): Decoded<FrameHeader> {
  if (buf.length - off < frameHeaderBytes) return { ok: false, reason: `truncated frame header: ${buf.length - off} of ${frameHeaderBytes} bytes` };
  const magic = buf.readUInt32BE(off);
  if (magic !== frameMagic) return { ok: false, reason: `bad magic 0x${magic.toString(16).padStart(8, '0')} (want CRS2)` };
  const version = buf.readUInt16BE(off + 4);
  if (version !== wireVersion) return { ok: false, reason: `unsupported wire version ${version}` };
  const kind = buf[off + 6]!;
  if (kind < FrameKind.negotiationRequest || kind > FrameKind.stream) return { ok: false, reason: `unknown frame kind ${kind}` };
  const flags = buf[off + 7]!;
  const flagProblem = checkFlags(kind, flags);
  if (flagProblem !== null) return { ok: false, reason: flagProblem };
  const command = buf.readUInt16BE(off + 8);
  const status = buf.readUInt16BE(off + 10);
  if (status !== Status.ok && status !== Status.error) return { ok: false, reason: `unknown status ${status}` };
  if ((kind === FrameKind.negotiationRequest || kind === FrameKind.request) && status !== Status.ok) return { ok: false, reason: `status ${status} on a client frame` };
  const requestId = buf.readBigUInt64BE(off + 12);
  const negotiation = kind === FrameKind.negotiationRequest || kind === FrameKind.negotiationResponse;
  if (negotiation && requestId !== 0n) return { ok: false, reason: 'negotiation frames carry request ID 0' };
  if (!negotiation && requestId === 0n) return { ok: false, reason: 'request ID 0 on an application frame' };
  if (negotiation !== (command === negotiateCommand)) return { ok: false, reason: negotiation ? `negotiation frame with command ${command}` : 'NEGOTIATE outside a negotiation frame' };
  const encodedLength = buf.readUInt32BE(off + 20);
  const decodedLength = buf.readUInt32BE(off + 24);
  const encodedMax = Math.min(limits.encodedBytesMax ?? payloadBytesMax, payloadBytesMax);
  const decodedMax = Math.min(limits.decodedBytesMax ?? payloadBytesMax, payloadBytesMax);
  if (encodedLength > encodedMax) return { ok: false, reason: `encoded length ${encodedLength} exceeds ${encodedMax} bytes` };
  if (decodedLength > decodedMax) return { ok: false, reason: `decoded length ${decodedLength} exceeds ${decodedMax} bytes` };
  const compression = (flags & flagCompressionMask) as Compression;
  if (compression === Compression.none && decodedLength !== encodedLength) return { ok: false, reason: `uncompressed frame with encoded length ${encodedLength} and decoded length ${decodedLength}` };
  if ((encodedLength === 0) !== (decodedLength === 0)) return { ok: false, reason: `encoded length ${encodedLength} with decoded length ${decodedLength}` };
  return {
    ok: true,
    value: {
      kind: kind as FrameKind,
      compression,
      end: (flags & flagEnd) !== 0,
      command,
      status: status as Status,
      requestId,
      encodedLength,
      decodedLength,
      crc32c: buf.readUInt32BE(off + 28),
    },
  };
}

/** Writes a header (the caller has computed lengths and CRC). */
export function encodeFrameHeader(h: FrameHeader): Buffer {
  const b = Buffer.allocUnsafe(frameHeaderBytes);
  b.writeUInt32BE(frameMagic, 0);
  b.writeUInt16BE(wireVersion, 4);
  b[6] = h.kind;
  b[7] = encodeFlags(h.compression, h.end);
  b.writeUInt16BE(h.command, 8);
  b.writeUInt16BE(h.status, 10);
  b.writeBigUInt64BE(h.requestId, 12);
  b.writeUInt32BE(h.encodedLength, 20);
  b.writeUInt32BE(h.decodedLength, 24);
  b.writeUInt32BE(h.crc32c >>> 0, 28);
  return b;
}

/** CRC-32C over chunks, as one run of bytes. */
export function crc32cOf(chunks: readonly Buffer[]): number {
  let crc = 0;
  for (const c of chunks) crc = crc32c(c, crc);
  return crc >>> 0;
}

export interface FrameSpec {
  kind: FrameKind;
  command: number;
  requestId: bigint;
  status?: Status;
  compression?: Compression;
  end?: boolean;
}

/**
 * A whole frame as chunks for writev: the header, then the payload (the given chunks, or the
 * compressed payload). Throws RangeError on a payload over 64 MiB (a programmer error: replies
 * are sized by their budgets).
 */
export function encodeFrame(spec: FrameSpec, payload: readonly Buffer[]): Buffer[] {
  const compression = spec.compression ?? Compression.none;
  let decodedLength = 0;
  for (const c of payload) decodedLength += c.length;
  if (decodedLength > payloadBytesMax) throw new RangeError(`frame payload of ${decodedLength} bytes exceeds ${payloadBytesMax}`);
  let encoded: readonly Buffer[] = payload;
  if (compression !== Compression.none && decodedLength > 0) {
    const whole = payload.length === 1 ? payload[0]! : Buffer.concat(payload, decodedLength);
    encoded = [compressPayload(compression, whole)];
    if (encoded[0]!.length > payloadBytesMax) throw new RangeError(`compressed payload of ${encoded[0]!.length} bytes exceeds ${payloadBytesMax}`);
  }
  let encodedLength = 0;
  for (const c of encoded) encodedLength += c.length;
  const header = encodeFrameHeader({
    kind: spec.kind,
    compression,
    end: spec.end === true,
    command: spec.command,
    status: spec.status ?? Status.ok,
    requestId: spec.requestId,
    encodedLength,
    decodedLength,
    crc32c: crc32cOf(encoded),
  });
  return [header, ...encoded.filter((c) => c.length > 0)];
}

/** Why a frame's payload could not be opened: the error code the broker answers with (docs §2.7). */
export type OpenFailure = { ok: false; code: 'checksum_mismatch' | 'decompression_failed'; reason: string };

/** Checks the CRC of an encoded payload and decompresses it to its decoded bytes. */
export function openFrame(h: FrameHeader, encoded: Buffer): { ok: true; value: Buffer } | OpenFailure {
  if (encoded.length !== h.encodedLength) return { ok: false, code: 'decompression_failed', reason: `payload of ${encoded.length} bytes, header says ${h.encodedLength}` };
  const crc = crc32c(encoded, 0) >>> 0;
  if (crc !== h.crc32c) return { ok: false, code: 'checksum_mismatch', reason: `CRC32C 0x${crc.toString(16).padStart(8, '0')}, header says 0x${h.crc32c.toString(16).padStart(8, '0')}` };
  const r = decompressPayload(h.compression, encoded, h.decodedLength);
  return r.ok ? r : { ok: false, code: 'decompression_failed', reason: r.reason };
}
