// The on-disk batch envelope: a fixed 64-byte header followed by the protocol's batch bytes
// verbatim. The envelope is what lets one log hold four protocols: the log reads only the header
// (offsets, timestamps, producer fields, length) and never looks inside the payload on the hot path.
//
// All integers big-endian. i64 fields hold JS safe integers (|n| < 2^53).
//
// | offset | size | field            | notes                                                    |
// |--------|------|------------------|----------------------------------------------------------|
// | 0      | 4    | magic            | 0x514C4F47 ("QLOG")                                      |
// | 4      | 4    | crc              | CRC32C over header bytes 8..63, then payload[0..from)    |
// | 8      | 1    | envelope version | 1                                                        |
// | 9      | 1    | format           | BatchFormat tag (kafka 1, iggy 2, cursus 3, felix 4, 15) |
// | 10     | 2    | flags            | BatchFlags bits (transactional 1, control 2)             |
// | 12     | 4    | payloadLength    | bytes following the header, <= envelopePayloadBytesMax   |
// | 16     | 8    | baseOffset       | i64, >= 0                                                |
// | 24     | 4    | recordCount      | u32, >= 1: offsets baseOffset .. baseOffset+count-1      |
// | 28     | 4    | payloadCrc       | CRC32C over payload[from..]                              |
// | 32     | 8    | firstTimestamp   | i64 ms                                                   |
// | 40     | 8    | maxTimestamp     | i64 ms                                                   |
// | 48     | 8    | producerId       | i64, -1 when not idempotent                              |
// | 56     | 2    | producerEpoch    | i16                                                      |
// | 58     | 2    | from             | u16: payload bytes covered by `crc` rather than payloadCrc |
// | 60     | 4    | baseSequence     | i32                                                      |
// | 64     | n    | payload          | the protocol batch, verbatim                             |
//
// Two checksums, so that the hot path need not checksum a payload twice: a protocol whose batch
// already carries a CRC32C over its own bytes from some position on (Kafka: bytes 21.. of a
// RecordBatch v2), verified by the front-end on arrival, hands that value to the log
// (AppendRequest.payloadCrc32c), and the log stores it as payloadCrc with `from` = that position;
// the few bytes before it (which the broker patches: baseOffset, partitionLeaderEpoch) are covered
// by the header crc. Without a supplied value, from = 0 and the log computes payloadCrc itself.
// Validation checks both.

import { crc32c } from '../base/native.js';
import { BatchFormat, type FileSlice, type StoredBatch } from './types.js';

export const envelopeMagic = 0x514c4f47;
export const envelopeVersion = 1;
export const envelopeHeaderBytes = 64;
/** Hard cap on one envelope's payload: a larger length field is corruption, not data. */
export const envelopePayloadBytesMax = 128 * 1024 * 1024;

/** The byte range the checksum covers inside the header (after magic and crc). */
const crcCoveredStart = 8;

const knownFormats = new Set<number>(Object.values(BatchFormat));
const twoPow32 = 2 ** 32;

/** The header fields of one envelope, as decoded (payload not included). */
export interface EnvelopeHeader {
  crc: number;
  format: BatchFormat;
  flags: number;
  payloadLength: number;
  baseOffset: number;
  recordCount: number;
  firstTimestamp: number;
  maxTimestamp: number;
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  /** CRC32C over payload[checksumFrom..]. */
  payloadCrc: number;
  /** Leading payload bytes covered by `crc` instead of `payloadCrc`. */
  checksumFrom: number;
}

export type EnvelopeFields = Omit<EnvelopeHeader, 'crc' | 'payloadLength' | 'payloadCrc' | 'checksumFrom' | 'baseOffset'> & {
  /** A CRC32C over payload[from..] that the caller has verified; computed here when absent. */
  payloadCrc32c?: { from: number; value: number } | undefined;
};

export type EnvelopeProblem =
  | 'truncated'
  | 'bad magic'
  | 'unsupported version'
  | 'unknown format'
  | 'bad length'
  | 'bad record count'
  | 'bad offset'
  | 'checksum mismatch';

function writeI64(buf: Buffer, value: number, at: number): void {
  const hi = Math.floor(value / twoPow32);
  buf.writeInt32BE(hi, at);
  buf.writeUInt32BE(value - hi * twoPow32, at + 4);
}

function readI64(buf: Buffer, at: number): number {
  return buf.readInt32BE(at) * twoPow32 + buf.readUInt32BE(at + 4);
}

/**
 * Encodes the header for `payload` at `baseOffset`, computing the checksum. The payload is not
 * copied: the caller writes header and payload as two chunks. (`fields` is typically the append
 * request itself, read in place: copying it with a spread cost appends several µs once requests
 * of more than one shape had passed, as they do with Kafka's supplied CRC beside Iggy's.)
 */
export function encodeEnvelopeHeader(fields: EnvelopeFields, baseOffset: number, payload: Buffer): Buffer {
  const supplied = fields.payloadCrc32c;
  const from = supplied ? supplied.from : 0;
  if (!Number.isInteger(from) || from < 0 || from > payloadChecksumFromMax || from > payload.length) {
    throw new RangeError(`payload checksum start ${from} is out of range`);
  }
  const payloadCrc = supplied ? supplied.value >>> 0 : crc32c(payload);
  const header = Buffer.allocUnsafe(envelopeHeaderBytes);
  header.writeUInt32BE(envelopeMagic, 0);
  header.writeUInt8(envelopeVersion, 8);
  header.writeUInt8(fields.format, 9);
  header.writeUInt16BE(fields.flags, 10);
  header.writeUInt32BE(payload.length, 12);
  writeI64(header, baseOffset, 16);
  header.writeUInt32BE(fields.recordCount, 24);
  header.writeUInt32BE(payloadCrc, 28);
  writeI64(header, fields.firstTimestamp, 32);
  writeI64(header, fields.maxTimestamp, 40);
  writeI64(header, fields.producerId, 48);
  header.writeInt16BE(fields.producerEpoch, 56);
  header.writeUInt16BE(from, 58);
  header.writeInt32BE(fields.baseSequence, 60);
  header.writeUInt32BE(headerChecksum(header, payload, from), 4);
  return header;
}

/** The largest `from` a supplied payload checksum may start at (it must fit the u16 field). */
export const payloadChecksumFromMax = 0xffff;

/** CRC32C over header bytes 8..63 followed by payload[0..from). */
function headerChecksum(header: Buffer, payload: Buffer, from: number): number {
  const headerPart = crc32c(header.subarray(crcCoveredStart, envelopeHeaderBytes));
  return from === 0 ? headerPart : crc32c(payload.subarray(0, from), headerPart);
}

/**
 * Decodes the header starting at `position` in `buf`. Validates structure only (the checksum needs
 * the payload: see checkEnvelope). Returns a reason instead of throwing: bytes on disk are input.
 */
export function decodeEnvelopeHeader(buf: Buffer, position = 0): EnvelopeHeader | EnvelopeProblem {
  const problem = headerProblem(buf, position);
  if (problem !== null) return problem;
  // Read in place (no view of the header): reads and recovery decode many headers a second.
  const at = position;
  return {
    crc: buf.readUInt32BE(at + 4),
    format: buf.readUInt8(at + 9) as BatchFormat,
    flags: buf.readUInt16BE(at + 10),
    payloadLength: buf.readUInt32BE(at + 12),
    baseOffset: readI64(buf, at + 16),
    recordCount: buf.readUInt32BE(at + 24),
    firstTimestamp: readI64(buf, at + 32),
    maxTimestamp: readI64(buf, at + 40),
    producerId: readI64(buf, at + 48),
    producerEpoch: buf.readInt16BE(at + 56),
    baseSequence: buf.readInt32BE(at + 60),
    payloadCrc: buf.readUInt32BE(at + 28),
    checksumFrom: buf.readUInt16BE(at + 58),
  };
}

/** What makes the header at `at` no envelope header (its checksum aside), or null. */
function headerProblem(buf: Buffer, at: number): EnvelopeProblem | null {
  if (buf.length - at < envelopeHeaderBytes) return 'truncated';
  if (buf.readUInt32BE(at) !== envelopeMagic) return 'bad magic';
  if (buf.readUInt8(at + 8) !== envelopeVersion) return 'unsupported version';
  if (!knownFormats.has(buf.readUInt8(at + 9))) return 'unknown format';
  if (buf.readUInt32BE(at + 12) > envelopePayloadBytesMax) return 'bad length';
  const recordCount = buf.readUInt32BE(at + 24);
  if (recordCount < 1) return 'bad record count';
  const baseOffset = readI64(buf, at + 16);
  if (baseOffset < 0 || !Number.isSafeInteger(baseOffset + recordCount)) return 'bad offset';
  return null;
}

/**
 * Checks the envelope at `position` whole, checksums included, as checkEnvelope does but without
 * decoding its header into an object (the scrubber checks thousands a second): its size in bytes,
 * or the problem ('truncated': `buf` ends inside it; envelopeBytesAt tells how far it goes).
 */
export function checkEnvelopeInPlace(buf: Buffer, position: number): number | EnvelopeProblem {
  const problem = headerProblem(buf, position);
  if (problem !== null) return problem;
  const payloadStart = position + envelopeHeaderBytes;
  const end = payloadStart + buf.readUInt32BE(position + 12);
  if (end > buf.length) return 'truncated';
  const covered = payloadStart + buf.readUInt16BE(position + 58);
  if (covered > end) return 'bad length';
  if (crc32c(buf.subarray(position + crcCoveredStart, covered)) !== buf.readUInt32BE(position + 4)) return 'checksum mismatch';
  if (crc32c(buf.subarray(covered, end)) !== buf.readUInt32BE(position + 28)) return 'checksum mismatch';
  return end - position;
}

/** The size on disk of the envelope whose header (structure checked) is at `position`. */
export function envelopeBytesAt(buf: Buffer, position: number): number {
  return envelopeHeaderBytes + buf.readUInt32BE(position + 12);
}

/** The base offset in the header (structure checked) at `position`. */
export function envelopeBaseOffsetAt(buf: Buffer, position: number): number {
  return readI64(buf, position + 16);
}

/** The record count in the header (structure checked) at `position`. */
export function envelopeRecordCountAt(buf: Buffer, position: number): number {
  return buf.readUInt32BE(position + 24);
}

/**
 * Decodes and fully validates (checksum included) the envelope at `position`. 'truncated' means
 * the buffer ends inside the envelope: the caller may read more, or treat it as a torn tail.
 */
export function checkEnvelope(buf: Buffer, position = 0): EnvelopeHeader | EnvelopeProblem {
  const header = decodeEnvelopeHeader(buf, position);
  if (typeof header === 'string') return header;
  const payloadStart = position + envelopeHeaderBytes;
  const payloadEnd = payloadStart + header.payloadLength;
  if (payloadEnd > buf.length) return 'truncated';
  if (header.checksumFrom > header.payloadLength) return 'bad length';
  if (envelopeHeadValid(buf, position, header) !== true) return 'checksum mismatch';
  if (!envelopePayloadValid(buf.subarray(payloadStart, payloadEnd), header)) return 'checksum mismatch';
  return header;
}

/**
 * Whether the header's own checksum (header bytes 8..63 and payload[0..from)) matches, which
 * vouches for every header field, the length included, before the rest of the payload is read.
 * Null when `buf` ends before payload[from] (or `from` lies past the payload).
 */
export function envelopeHeadValid(buf: Buffer, position: number, header: EnvelopeHeader): boolean | null {
  const covered = position + envelopeHeaderBytes + header.checksumFrom;
  if (header.checksumFrom > header.payloadLength || covered > buf.length) return null;
  // Header bytes 8..63 and payload[0..from) lie back to back here: one pass over both.
  return crc32c(buf.subarray(position + crcCoveredStart, covered)) === header.crc;
}

/** Whether `payload` (the whole payload) matches the header's payloadCrc over payload[from..]. */
export function envelopePayloadValid(payload: Buffer, header: Pick<EnvelopeHeader, 'checksumFrom' | 'payloadCrc'>): boolean {
  return crc32c(payload.subarray(header.checksumFrom)) === header.payloadCrc;
}

/** Whether the bytes of a file slice match the checksum it carries (none carried: true). */
export function sliceBytesValid(file: FileSlice, bytes: Buffer): boolean {
  const crc = file.payloadCrc;
  return crc === undefined || crc32c(bytes.subarray(crc.from)) === crc.value;
}

/** Total bytes the envelope occupies on disk. */
export function envelopeBytes(header: { payloadLength: number }): number {
  return envelopeHeaderBytes + header.payloadLength;
}

/** A StoredBatch whose payload is a view of `buf` (no copy). */
export function storedBatchOf(header: EnvelopeHeader, buf: Buffer, headerPosition: number): StoredBatch {
  const payloadStart = headerPosition + envelopeHeaderBytes;
  return {
    format: header.format,
    flags: header.flags,
    baseOffset: header.baseOffset,
    lastOffset: header.baseOffset + header.recordCount - 1,
    recordCount: header.recordCount,
    firstTimestamp: header.firstTimestamp,
    maxTimestamp: header.maxTimestamp,
    producerId: header.producerId,
    producerEpoch: header.producerEpoch,
    baseSequence: header.baseSequence,
    payload: buf.subarray(payloadStart, payloadStart + header.payloadLength),
  };
}
