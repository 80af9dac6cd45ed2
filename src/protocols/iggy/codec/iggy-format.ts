// BatchFormat.iggy: how the log stamps an Iggy batch it appends and how it and the other
// front-ends look inside a stored one, and how a SendMessages batch becomes a log AppendRequest.
// The stored payload is the Iggy batch exactly as stamped by the broker (DESIGN.md "The log";
// layout in message-batch.ts).
//
// Mapping between an Iggy message and a NeutralRecord:
// - offset     = base_offset + offset_delta.
// - timestamp  = producer time in ms: floor((origin_timestamp + timestamp_delta) / 1000). When a
//                producer sent origin 0, the broker's base_timestamp (µs) is used instead. The
//                log envelope's first/max timestamps use the same rule, so time indexes and
//                retention agree with what readers see.
// - value      = the payload (an empty payload stays an empty buffer, never null).
// - key        = the value of the first user header whose key is the string "key"
//                (`iggyKeyHeader`) and whose value kind is Raw or String; that header is then not
//                repeated in `headers`. No such header: null. Iggy itself has no message key (its
//                MessagesKey partitioning is not stored), so this is Quartet's convention, used both
//                ways: a record with a key is written as a Raw "key" header placed first.
// - headers    = every other user header, in order. The key is the header key rendered as text;
//                the value bytes are the typed value rendered by `renderHeaderValue`: Raw and
//                unknown kinds as their bytes, String as UTF-8, Bool as "true"/"false", integers
//                (8..128 bits, signed or not) as decimal ASCII, floats as JavaScript's shortest
//                round-trip decimal (`String(n)`). User headers that are not a valid TLV block
//                (the bytes are opaque to the broker) give no headers.
// - message id : not part of NeutralRecord. `decodeIggyRecords` exposes it; `encode` keeps ids
//                (and typed headers) of records whose offset and payload match a frame of an Iggy
//                template, and gives other records id = offset + 1 (never 0, unique per partition).
//
// Encoding NeutralRecords (transcoding into Iggy, compaction rewrites) is lossy where Iggy cannot
// carry the value: header keys and values must be 1..255 bytes, so null, empty and longer header
// values are dropped, and a key longer than 255 bytes is dropped; a batch spans at most u32 µs of
// producer time, so later records' timestamps are clamped to origin + (2^32 - 1) µs.

import assert from 'node:assert/strict';
import { QuartetError } from '../../../base/errors.js';
import { BatchFormat, fileSliceHeadBytes, type AppendRequest, type AppendStamp, type BatchFormatCodec, type NeutralRecord, type StoredBatch } from '../../../base/batch.js';
import { decodeUtf8, readU64 } from './primitives.js';
import { HeaderKind, readTlvBlock, decodeHeaderValue, type HeaderValue } from './values.js';
import {
  batchHeaderBytes,
  batchMessageCountOffset,
  encodeBatchBytes,
  frameHeaderBytes,
  frameStarts,
  isBatchRejection,
  parseBatch,
  sliceStoredBatch,
  stampBatch,
  stampValidatedBatch,
  timestampDeltaMicrosMax,
  type BatchHeader,
  type MessageInput,
  type ParsedBatch,
  type ValidatedBatch,
} from './message-batch.js';

/** The user header that carries a record key (see the mapping above). */
export const iggyKeyHeader = 'key';

/** An Iggy message of a stored batch, with everything Iggy knows about it. */
export interface IggyRecord {
  offset: number;
  id: bigint;
  /** Producer time, µs. */
  originTimestamp: bigint;
  /** Broker append time (the batch base_timestamp), µs. */
  timestamp: bigint;
  payload: Buffer;
  /** The raw user headers block. */
  userHeaders: Buffer;
}

function microsToMillis(us: bigint): number {
  return Number(us / 1000n);
}

/** Renders a typed header value as bytes (the rule in the header comment). */
export function renderHeaderValue(v: HeaderValue): Buffer {
  switch (v.kind) {
    case 'raw':
    case 'unknown':
      return v.value;
    case 'string':
      return Buffer.from(v.value, 'utf8');
    case 'bool':
      return Buffer.from(v.value ? 'true' : 'false');
    default:
      return Buffer.from(String(v.value));
  }
}

function parseStored(payload: Buffer): ParsedBatch {
  const parsed = parseBatch(payload, { verify: 'layout', exact: true });
  if (isBatchRejection(parsed)) throw new QuartetError('corrupt_batch', `iggy batch: ${parsed.reason}`);
  return parsed;
}

function recordTimeMicros(header: BatchHeader, timestampDelta: number): bigint {
  const origin = header.originTimestamp;
  return origin === 0n ? header.baseTimestamp : origin + BigInt(timestampDelta);
}

/** The messages of a stored Iggy batch with absolute offsets. Throws corrupt_batch. */
export function decodeIggyRecords(stored: StoredBatch): IggyRecord[] {
  const batch = parseStored(stored.payload);
  const base = batch.header.baseOffset;
  return batch.frames.map((f) => ({
    offset: Number(base + BigInt(f.offsetDelta)),
    id: f.id,
    originTimestamp: batch.header.originTimestamp + BigInt(f.timestampDelta),
    timestamp: batch.header.baseTimestamp,
    payload: f.payload,
    userHeaders: f.userHeaders,
  }));
}

/** Splits user headers into the neutral key and headers (the mapping above). */
export function neutralKeyAndHeaders(userHeaders: Buffer): { key: Buffer | null; headers: NeutralRecord['headers'] } {
  const out: NeutralRecord['headers'] = [];
  let key: Buffer | null = null;
  if (userHeaders.length === 0) return { key, headers: out };
  const entries = readTlvBlock(userHeaders);
  if (typeof entries === 'string') return { key, headers: out };
  for (const e of entries) {
    const k = decodeHeaderValue(e.keyKind, e.key);
    const v = decodeHeaderValue(e.valueKind, e.value);
    const keyText = typeof k === 'string' ? e.key.toString('latin1') : renderHeaderValue(k).toString('utf8');
    const valueBytes = typeof v === 'string' ? Buffer.from(e.value) : renderHeaderValue(v);
    if (
      key === null &&
      e.keyKind === HeaderKind.string &&
      keyText === iggyKeyHeader &&
      (e.valueKind === HeaderKind.raw || e.valueKind === HeaderKind.string)
    ) {
      key = Buffer.from(e.value);
      continue;
    }
    out.push({ key: keyText, value: Buffer.from(valueBytes) });
  }
  return { key, headers: out };
}

/** Encodes neutral key + headers as an Iggy user headers block (lossy cases dropped). */
export function userHeadersFromNeutral(key: Buffer | null, headers: NeutralRecord['headers']): Buffer {
  const fields: Buffer[] = [];
  const field = (kind: number, data: Buffer): void => {
    const head = Buffer.allocUnsafe(5);
    head[0] = kind;
    head.writeUInt32LE(data.length, 1);
    fields.push(head, data);
  };
  const fits = (b: Buffer): boolean => b.length >= 1 && b.length <= 255;
  if (key !== null && fits(key)) {
    field(HeaderKind.string, Buffer.from(iggyKeyHeader));
    field(HeaderKind.raw, key);
  }
  for (const h of headers) {
    const k = Buffer.from(h.key, 'utf8');
    if (h.value === null || !fits(k) || !fits(h.value)) continue;
    field(HeaderKind.string, k);
    field(decodeUtf8(h.value) === null ? HeaderKind.raw : HeaderKind.string, h.value);
  }
  return fields.length === 0 ? Buffer.alloc(0) : Buffer.concat(fields);
}

/** Decodes a stored Iggy batch into NeutralRecords. Throws corrupt_batch. */
export function decodeIggyBatch(stored: StoredBatch): NeutralRecord[] {
  const batch = parseStored(stored.payload);
  const base = batch.header.baseOffset;
  return batch.frames.map((f) => {
    const { key, headers } = neutralKeyAndHeaders(f.userHeaders);
    return {
      offset: Number(base + BigInt(f.offsetDelta)),
      timestamp: microsToMillis(recordTimeMicros(batch.header, f.timestampDelta)),
      key,
      value: Buffer.from(f.payload),
      headers,
    };
  });
}

/** decodeIggyBatch of the first `countMax` frames at offsets >= fromOffset (a sub-batch cut with sliceStoredBatch). */
export function decodeIggyBatchRange(stored: StoredBatch, fromOffset: number, countMax: number): NeutralRecord[] {
  const slice = sliceStoredBatch(stored.payload, fromOffset, Number.MAX_SAFE_INTEGER, countMax);
  if (slice === null) {
    parseStored(stored.payload); // throws on a corrupt batch; else nothing is at or after fromOffset
    return [];
  }
  const payload = slice.chunks.length === 1 ? slice.chunks[0]! : Buffer.concat(slice.chunks);
  return decodeIggyBatch({ ...stored, payload });
}

function sameBytes(a: Buffer | null, b: Buffer): boolean {
  return (a === null ? b.length === 0 : a.equals(b));
}

/**
 * Encodes records (offsets ascending, all >= baseOffset) as one stamped Iggy batch at
 * `baseOffset`. With an Iggy template, frames whose offset and payload match keep their id,
 * producer time and raw user headers, and the header keeps partition_id and base_timestamp;
 * otherwise base_timestamp is the template's maxTimestamp (ms → µs) and partition_id 0.
 */
export function encodeIggyBatch(records: NeutralRecord[], baseOffset: number, template: StoredBatch): AppendRequest {
  let partitionId = 0n;
  let baseTimestamp = BigInt(Math.max(0, Math.floor(template.maxTimestamp))) * 1000n;
  const templateFrames = new Map<number, { id: bigint; origin: bigint; payload: Buffer; userHeaders: Buffer }>();
  if (template.format === BatchFormat.iggy) {
    const parsed = parseBatch(template.payload, { verify: 'layout', exact: true });
    if (!isBatchRejection(parsed)) {
      partitionId = parsed.header.partitionId;
      baseTimestamp = parsed.header.baseTimestamp;
      for (const f of parsed.frames) {
        templateFrames.set(Number(parsed.header.baseOffset + BigInt(f.offsetDelta)), {
          id: f.id,
          origin: parsed.header.originTimestamp + BigInt(f.timestampDelta),
          payload: f.payload,
          userHeaders: f.userHeaders,
        });
      }
    }
  }
  const inputs: MessageInput[] = [];
  let origin: bigint | null = null;
  let previous = -1;
  for (const r of records) {
    const delta = r.offset - baseOffset;
    if (!(delta > previous && delta <= 0xffff_ffff)) throw new RangeError('iggy record offsets must ascend from the base offset');
    previous = delta;
    const known = templateFrames.get(r.offset);
    const reuse = known !== undefined && sameBytes(r.value, known.payload);
    const micros = reuse ? known.origin : BigInt(Math.max(0, Math.floor(r.timestamp))) * 1000n;
    if (origin === null || micros < origin) origin = micros;
    inputs.push({
      id: reuse ? known.id : BigInt(r.offset) + 1n,
      originTimestamp: micros,
      payload: r.value ?? Buffer.alloc(0),
      userHeaders: reuse ? known.userHeaders : userHeadersFromNeutral(r.key, r.headers),
      offsetDelta: delta,
    });
  }
  const maxMicros = (origin ?? 0n) + BigInt(timestampDeltaMicrosMax);
  for (const m of inputs) if (m.originTimestamp > maxMicros) m.originTimestamp = maxMicros;
  const payload = encodeBatchBytes(inputs, { partitionId, baseOffset: BigInt(baseOffset), baseTimestamp });
  const lastOffset = Math.max(template.lastOffset, records.at(-1)?.offset ?? baseOffset);
  // An Iggy batch's time in the log is its base_timestamp (the append time, logAppendTime), kept
  // by a rewrite (compaction); a batch of another format made into Iggy goes by its records.
  const times = template.format === BatchFormat.iggy ? [microsToMillis(baseTimestamp)] : inputs.map((m) => microsToMillis(m.originTimestamp));
  return {
    format: BatchFormat.iggy,
    recordCount: lastOffset - baseOffset + 1,
    firstTimestamp: times[0] ?? template.firstTimestamp,
    maxTimestamp: times.length > 0 ? times.reduce((a, b) => (b > a ? b : a)) : template.maxTimestamp,
    producerId: template.producerId,
    producerEpoch: template.producerEpoch,
    baseSequence: template.baseSequence,
    flags: template.flags,
    payload,
  };
}

/**
 * What stamping a SendMessages batch needs besides its bytes (AppendRequest.stampInput), made by
 * appendRequestFromBatch: the partition id, the part's first offset_delta, the base timestamp its
 * parts share, and the validated batch (whose kept checksum input makes the batch checksum cheap
 * to recompute).
 */
export class IggyStampInput {
  constructor(
    readonly batch: ValidatedBatch,
    readonly partitionId: bigint,
    readonly firstOffsetDelta: number,
    readonly sharedBaseTimestamp: { micros: bigint | null } | undefined,
  ) {}
}

/**
 * BatchFormatCodec.stamp. A SendMessages batch (with its IggyStampInput) gets partition_id,
 * base_offset (its first frame at the assigned offset) and base_timestamp (the append time in µs,
 * or the one its parts share), and its batch checksum recomputed. Any other Iggy batch (written
 * whole by encodeIggyBatch) keeps partition_id and base_timestamp, and moves base_offset to the
 * assigned offset if it was another.
 */
function stampIggyBatch(request: AppendRequest, assigned: AppendStamp): void {
  const input = request.stampInput;
  const bytes = request.payload;
  if (input instanceof IggyStampInput) {
    const micros = BigInt(Math.max(0, Math.floor(assigned.appendMicros)));
    const shared = input.sharedBaseTimestamp;
    stampValidatedBatch(bytes, input.batch, {
      partitionId: input.partitionId,
      baseOffset: BigInt(assigned.baseOffset - input.firstOffsetDelta),
      baseTimestamp: shared === undefined ? micros : (shared.micros ??= micros),
    });
    return;
  }
  if (readU64(bytes, 8) === BigInt(assigned.baseOffset)) return;
  stampBatch(bytes, frameStarts(bytes).map((start) => ({ start })), {
    partitionId: readU64(bytes, 0),
    baseOffset: BigInt(assigned.baseOffset),
    baseTimestamp: readU64(bytes, 16),
  });
}

// A file-sliced batch's head must hold the Iggy batch header and the first frame header (iggyMessageCount reads both).
assert.ok(fileSliceHeadBytes >= batchHeaderBytes + frameHeaderBytes, 'file slices carry the Iggy batch header and the first frame header');

/**
 * The message_count of a stored Iggy batch whose header agrees with the log's record of it
 * (batch_length = its length, first frame at the log's first offset), from its head alone; null
 * otherwise. Equal to `recordCount` means one frame per offset: every Iggy batch writer stores
 * ascending deltas (SendMessages: offset_delta = index, checked at admission, and a part of a
 * larger batch keeps its frames, so its deltas run on from the whole batch's; encodeIggyBatch:
 * ascending), so the frames are first..last. The log checks the bytes; batches with gaps
 * (compaction rewrites) count fewer.
 */
export function iggyMessageCount(batch: StoredBatch): number | null {
  // A file-sliced batch carries its first fileSliceHeadBytes (the batch header and the first frame header) in payload.
  const b = batch.payload;
  const length = batch.file?.length ?? b.length;
  const headBytes = batchHeaderBytes + frameHeaderBytes;
  if (length < headBytes || b.length < headBytes) return null;
  const base = b.readUInt32LE(12) * 0x1_0000_0000 + b.readUInt32LE(8);
  if (b.readUInt32LE(32) !== length || b.readUInt32LE(36) !== 0 || base + b.readUInt32LE(batchHeaderBytes + 24) !== batch.baseOffset) return null;
  return b.readUInt32LE(batchMessageCountOffset);
}

export const iggyFormatCodec: BatchFormatCodec = {
  format: BatchFormat.iggy,
  stamp: stampIggyBatch,
  decode: decodeIggyBatch,
  decodeRange: decodeIggyBatchRange,
  messageCount: iggyMessageCount,
  // Frames are cut from the stored bytes (a poll that starts or ends inside a batch).
  slice: (batch, fromOffset, toOffsetExclusive, countMax) => sliceStoredBatch(batch.payload, fromOffset, toOffsetExclusive, countMax),
  encode: encodeIggyBatch,
};

export interface AppendFromBatchOptions {
  /** Stamped into partition_id (Iggy partition ids are 0-based). */
  partitionId: number | bigint;
  /**
   * The offset_delta of the batch's first frame (a part of a larger batch, splitValidatedBatch):
   * base_offset is stamped that much below the first offset. 0 by default.
   */
  firstOffsetDelta?: number;
  /**
   * Shared by the parts of one batch: the part stamped first fixes base_timestamp (µs) for all,
   * so that the whole batch carries one server time, as a batch stored whole does.
   */
  sharedBaseTimestamp?: { micros: bigint | null };
}

/**
 * The log AppendRequest for a validated SendMessages batch (validateSendMessagesBatch): format
 * iggy, one offset per message, no producer state, flags 0, and the append time as its time
 * (logAppendTime; the producer times it carries are only the request's initial values).
 * The payload is the batch bytes themselves; the codec's stamp writes partition_id, base_offset
 * and base_timestamp (the append time in µs) in place and recomputes batch_checksum.
 */
export function appendRequestFromBatch(batch: ValidatedBatch, options: AppendFromBatchOptions): AppendRequest {
  const h = batch.header;
  const count = h.messageCount;
  // Producer time grows with timestamp_delta, so the newest frame is the one with the largest.
  const first = count === 0 ? 0 : microsToMillis(recordTimeMicros(h, batch.firstTimestampDelta));
  const max = count === 0 ? 0 : microsToMillis(recordTimeMicros(h, batch.maxTimestampDelta));
  return {
    format: BatchFormat.iggy,
    recordCount: count,
    firstTimestamp: first,
    maxTimestamp: max,
    producerId: -1,
    producerEpoch: -1,
    baseSequence: -1,
    flags: 0,
    // The envelope's time is the append time, as base_timestamp: timestamp polls, the time index
    // and message_expiry go by server time, as the reference server's.
    logAppendTime: true,
    payload: batch.bytes,
    stampInput: new IggyStampInput(batch, BigInt(options.partitionId), options.firstOffsetDelta ?? 0, options.sharedBaseTimestamp),
  };
}
