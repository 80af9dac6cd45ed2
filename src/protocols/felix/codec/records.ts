// The record list shared by binary publish batches and binary event batches (docs §5.1):
//
//   records := u32 count | count × (u32 payload_len | payload)
//
// `scanRecords` checks a list without allocating (the count against the bytes present first, so
// a hostile count costs nothing); `recordPayloads` splits one into views; `encodeRecords` builds
// the chunks of a list once, the length prefixes of every payload in one buffer.

import type { Decoded } from './frame.js';

export interface RecordList {
  count: number;
  /** The list as on the wire (u32 count and every entry; a view): the stored form of a batch. */
  bytes: Buffer;
  /** Payload bytes, without the length prefixes. */
  payloadBytes: number;
}

/**
 * Checks the record list starting at `off` and running to the end of `buf`: the count, every
 * length, and no bytes after the last payload.
 */
export function scanRecords(buf: Buffer, off: number): Decoded<RecordList> {
  if (buf.length - off < 4) return { ok: false, reason: `incomplete record count: ${buf.length - off} of 4 bytes` };
  const count = buf.readUInt32BE(off);
  // Each entry takes at least its 4-byte length.
  if (count > (buf.length - off - 4) / 4) return { ok: false, reason: `record count ${count} exceeds what ${buf.length - off - 4} bytes can hold` };
  let pos = off + 4;
  let payloadBytes = 0;
  for (let i = 0; i < count; i++) {
    if (buf.length - pos < 4) return { ok: false, reason: `record ${i}: incomplete length` };
    const len = buf.readUInt32BE(pos);
    pos += 4;
    if (len > buf.length - pos) return { ok: false, reason: `record ${i}: length ${len} exceeds the ${buf.length - pos} bytes left` };
    pos += len;
    payloadBytes += len;
  }
  if (pos !== buf.length) return { ok: false, reason: `${buf.length - pos} bytes after the last record` };
  return { ok: true, value: { count, bytes: buf.subarray(off), payloadBytes } };
}

/** The payloads of a checked record list, as views of it. */
export function recordPayloads(list: RecordList): Buffer[] {
  const b = list.bytes;
  const out: Buffer[] = new Array<Buffer>(list.count);
  let pos = 4;
  for (let i = 0; i < list.count; i++) {
    const len = b.readUInt32BE(pos);
    out[i] = b.subarray(pos + 4, pos + 4 + len);
    pos += 4 + len;
  }
  return out;
}

/** Largest payload a record can carry (its length is a u32). */
const recordBytesMax = 0xffff_ffff;
/** Payloads shorter than this are copied next to their length prefix instead of being a chunk of their own. */
export const inlineRecordBytesMax = 512;

/**
 * The chunks of a record list: the count and the length prefixes, with the small payloads copied
 * in between them (one buffer), and every payload of inlineRecordBytesMax or more as a chunk of
 * its own, uncopied. Built once, the chunks may be written to any number of streams.
 */
export function encodeRecords(payloads: readonly Buffer[]): { chunks: Buffer[]; length: number } {
  let inline = 4 + 4 * payloads.length;
  let length = 4;
  for (const p of payloads) {
    if (p.length > recordBytesMax) throw new RangeError(`record of ${p.length} bytes exceeds u32`);
    length += 4 + p.length;
    if (p.length < inlineRecordBytesMax) inline += p.length;
  }
  const scratch = Buffer.allocUnsafe(inline);
  scratch.writeUInt32BE(payloads.length, 0);
  const chunks: Buffer[] = [];
  let pos = 4;
  let start = 0;
  for (const p of payloads) {
    scratch.writeUInt32BE(p.length, pos);
    pos += 4;
    if (p.length < inlineRecordBytesMax) {
      p.copy(scratch, pos);
      pos += p.length;
      continue;
    }
    chunks.push(scratch.subarray(start, pos), p);
    start = pos;
  }
  if (pos > start) chunks.push(scratch.subarray(start, pos));
  return { chunks, length };
}
