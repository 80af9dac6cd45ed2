// BatchFormat.felix: how the log stores Felix records (docs/felix.md "Storage"). A stored batch is
// the record list of the binary publish batch (docs/protocols/felix-wire-v1.md §5.1) as it
// arrived, behind a small head, so that an event batch sends it as it is:
//
//   u8 version = 1 | u8 flags | u64 base_offset (stamped by the log at append)
//   [u16 key_len | key]                   flags 0x01: the batch's routing key, every record's key
//   records := u32 count | count × (u32 len | payload)
//   [count × (i32 key_len (-1: none) | key)]   flags 0x02: each record's own key (transcoded)
//   [count × u32 offset delta]            flags 0x04: record i's offset - base_offset (compacted)
//
// A publish writes flags 0 or 0x01. Records written by another protocol and read through Felix,
// or rewritten by compaction, may carry per-record keys and offsets (0x02, 0x04); an event batch
// then splits them into runs of consecutive offsets. Mapping to a NeutralRecord: offset as above;
// timestamp = the batch's append time (Felix records carry none); key = the record's key or the
// batch key or null; value = the payload; no headers.

import { QuartetError } from '../../../base/errors.js';
import { BatchFormat, type AppendRequest, type AppendStamp, type BatchFormatCodec, type BatchSlice, type NeutralRecord, type StoredBatch } from '../../../base/batch.js';
import type { Decoded } from './frame.js';
import { encodeRecords, recordPayloads, scanRecords, type RecordList } from './records.js';

export const felixFormatVersion = 1;

export const StoredFlag = {
  batchKey: 0x01,
  recordKeys: 0x02,
  offsetDeltas: 0x04,
} as const;

const baseOffsetAt = 2;
const fixedHeadBytes = 10;

/** A stored Felix batch, parsed (views of its bytes). */
export interface StoredFelixBatch {
  baseOffset: bigint;
  /** The batch key (flags 0x01), else null. */
  key: Buffer | null;
  records: RecordList;
  /** Each record's own key (flags 0x02), else null. */
  recordKeys: Array<Buffer | null> | null;
  /** Each record's offset - base offset (flags 0x04), else null: consecutive from base_offset. */
  offsetDeltas: number[] | null;
}

function head(flags: number, key: Buffer | null): Buffer {
  const b = Buffer.allocUnsafe(fixedHeadBytes + (key !== null ? 2 + key.length : 0));
  b[0] = felixFormatVersion;
  b[1] = flags;
  b.writeBigUInt64BE(0n, baseOffsetAt);
  if (key !== null) {
    b.writeUInt16BE(key.length, fixedHeadBytes);
    key.copy(b, fixedHeadBytes + 2);
  }
  return b;
}

/**
 * The log's AppendRequest for a published record list (a checked list, at least one record) and
 * its routing key; the batch is stored under its append time. An idempotent producer's batch
 * carries its id and sequence in the envelope (epoch 0: Felix has no epochs), where the core's
 * producer state checks them and finds them again after a restart.
 */
export function felixAppendRequest(records: RecordList, key: Buffer | null, now: number, producer?: { producerId: number; sequence: number }): AppendRequest {
  const h = head(key !== null ? StoredFlag.batchKey : 0, key);
  return {
    format: BatchFormat.felix,
    recordCount: records.count,
    firstTimestamp: now,
    maxTimestamp: now,
    producerId: producer?.producerId ?? -1,
    producerEpoch: producer === undefined ? -1 : 0,
    baseSequence: producer?.sequence ?? -1,
    flags: 0,
    logAppendTime: true,
    payload: Buffer.concat([h, records.bytes], h.length + records.bytes.length),
  };
}

/** Parses a stored batch's payload. */
export function parseStoredFelix(p: Buffer): Decoded<StoredFelixBatch> {
  if (p.length < fixedHeadBytes + 4) return { ok: false, reason: `felix batch of ${p.length} bytes is too short` };
  if (p[0] !== felixFormatVersion) return { ok: false, reason: `felix batch version ${p[0]}` };
  const flags = p[1]!;
  const baseOffset = p.readBigUInt64BE(baseOffsetAt);
  let pos = fixedHeadBytes;
  let key: Buffer | null = null;
  if ((flags & StoredFlag.batchKey) !== 0) {
    const len = p.readUInt16BE(pos);
    key = p.subarray(pos + 2, pos + 2 + len);
    pos += 2 + len;
    if (pos > p.length) return { ok: false, reason: 'felix batch key runs past the batch' };
  }
  const end = recordListEnd(p, pos);
  if (end < 0) return { ok: false, reason: 'felix batch record list runs past the batch' };
  const records = scanRecords(p.subarray(0, end), pos);
  if (!records.ok) return records;
  pos = end;
  const count = records.value.count;
  let recordKeys: Array<Buffer | null> | null = null;
  if ((flags & StoredFlag.recordKeys) !== 0) {
    recordKeys = [];
    for (let i = 0; i < count; i++) {
      if (p.length - pos < 4) return { ok: false, reason: 'felix batch record keys run past the batch' };
      const len = p.readInt32BE(pos);
      pos += 4;
      if (len < 0) recordKeys.push(null);
      else {
        if (p.length - pos < len) return { ok: false, reason: 'felix batch record key runs past the batch' };
        recordKeys.push(p.subarray(pos, pos + len));
        pos += len;
      }
    }
  }
  let offsetDeltas: number[] | null = null;
  if ((flags & StoredFlag.offsetDeltas) !== 0) {
    if (p.length - pos < 4 * count) return { ok: false, reason: 'felix batch offsets run past the batch' };
    offsetDeltas = [];
    for (let i = 0; i < count; i++) offsetDeltas.push(p.readUInt32BE(pos + 4 * i));
    pos += 4 * count;
  }
  if (pos !== p.length) return { ok: false, reason: `${p.length - pos} bytes after the felix batch` };
  return { ok: true, value: { baseOffset, key, records: records.value, recordKeys, offsetDeltas } };
}

/** Where the record list starting at `off` ends, or -1. */
function recordListEnd(p: Buffer, off: number): number {
  if (p.length - off < 4) return -1;
  const count = p.readUInt32BE(off);
  let pos = off + 4;
  for (let i = 0; i < count; i++) {
    if (p.length - pos < 4) return -1;
    pos += 4 + p.readUInt32BE(pos);
    if (pos > p.length) return -1;
  }
  return pos;
}

function parsed(stored: StoredBatch): StoredFelixBatch {
  const b = parseStoredFelix(stored.payload);
  if (!b.ok) throw new QuartetError('corrupt_batch', `felix batch at offset ${stored.baseOffset}: ${b.reason}`);
  return b.value;
}

/** Record i's offset in a parsed batch. */
export function storedOffsetAt(b: StoredFelixBatch, i: number): bigint {
  return b.baseOffset + BigInt(b.offsetDeltas !== null ? b.offsetDeltas[i]! : i);
}

function decode(stored: StoredBatch): NeutralRecord[] {
  const b = parsed(stored);
  const payloads = recordPayloads(b.records);
  return payloads.map((value, i) => ({
    offset: stored.baseOffset + (b.offsetDeltas !== null ? b.offsetDeltas[i]! : i),
    timestamp: stored.firstTimestamp,
    key: b.recordKeys !== null ? b.recordKeys[i]! : b.key,
    value,
    headers: [],
  }));
}

/** One payload of Felix format holding `records` (offsets ascending, >= baseOffset). */
export function encodeStoredFelix(records: readonly NeutralRecord[], baseOffset: number): Buffer {
  const first = records[0]?.key ?? null;
  const sameKey = records.every((r) => (r.key === null ? first === null : first !== null && r.key.equals(first) && first.length <= 0xffff));
  const gaps = records.some((r, i) => r.offset !== baseOffset + i);
  const flags = (sameKey && first !== null ? StoredFlag.batchKey : 0) | (sameKey ? 0 : StoredFlag.recordKeys) | (gaps ? StoredFlag.offsetDeltas : 0);
  const h = head(flags, sameKey ? first : null);
  h.writeBigUInt64BE(BigInt(baseOffset), baseOffsetAt);
  const list = encodeRecords(records.map((r) => r.value ?? Buffer.alloc(0)));
  const tail: Buffer[] = [];
  if (!sameKey) {
    for (const r of records) {
      const len = Buffer.allocUnsafe(4);
      len.writeInt32BE(r.key === null ? -1 : r.key.length);
      tail.push(len);
      if (r.key !== null) tail.push(r.key);
    }
  }
  if (gaps) {
    const deltas = Buffer.allocUnsafe(4 * records.length);
    records.forEach((r, i) => deltas.writeUInt32BE(r.offset - baseOffset, 4 * i));
    tail.push(deltas);
  }
  return Buffer.concat([h, ...list.chunks, ...tail]);
}

function encode(records: NeutralRecord[], baseOffset: number, template: StoredBatch): AppendRequest {
  if (records.length === 0) throw new Error('felix encode needs at least one record');
  let first = Infinity;
  let max = -Infinity;
  for (const r of records) {
    first = Math.min(first, r.timestamp);
    max = Math.max(max, r.timestamp);
  }
  return {
    format: BatchFormat.felix,
    recordCount: records[records.length - 1]!.offset - baseOffset + 1,
    firstTimestamp: Number.isFinite(first) ? first : template.firstTimestamp,
    maxTimestamp: Number.isFinite(max) ? max : template.maxTimestamp,
    producerId: -1,
    producerEpoch: -1,
    baseSequence: -1,
    flags: 0,
    payload: encodeStoredFelix(records, baseOffset),
  };
}

/** The record count, from the head alone (null when the key pushes it out of the head). */
function messageCount(stored: StoredBatch): number | null {
  const p = stored.payload;
  if (p.length < fixedHeadBytes + 4 || p[0] !== felixFormatVersion) return null;
  let pos = fixedHeadBytes;
  if ((p[1]! & StoredFlag.batchKey) !== 0) pos += 2 + p.readUInt16BE(pos);
  return p.length - pos >= 4 ? p.readUInt32BE(pos) : null;
}

/** The kept records under a new head (base_offset: the first kept record's); views of the stored ones. */
function slice(stored: StoredBatch, from: number, toExclusive: number, countMax: number): BatchSlice | null {
  const r = parseStoredFelix(stored.payload);
  if (!r.ok) return null;
  const b = r.value;
  const kept: NeutralRecord[] = [];
  const payloads = recordPayloads(b.records);
  for (let i = 0; i < payloads.length && kept.length < countMax; i++) {
    const offset = Number(storedOffsetAt(b, i));
    if (offset < from || offset >= toExclusive) continue;
    kept.push({ offset, timestamp: stored.firstTimestamp, key: b.recordKeys !== null ? b.recordKeys[i]! : b.key, value: payloads[i]!, headers: [] });
  }
  if (kept.length === 0) return null;
  return { chunks: [encodeStoredFelix(kept, kept[0]!.offset)], count: kept.length, lastOffset: kept[kept.length - 1]!.offset };
}

/** Writes the assigned base offset into the head. */
function stamp(request: AppendRequest, assigned: AppendStamp): void {
  request.payload.writeBigUInt64BE(BigInt(assigned.baseOffset), baseOffsetAt);
}

export const felixBatchFormatCodec: BatchFormatCodec = { format: BatchFormat.felix, stamp, decode, encode, messageCount, slice };
