// Messages as the SDK user sees them, and their translation to and from the codec's batch layout
// (src/protocols/iggy/codec/message-batch.ts): ids, payloads, user headers, offsets.
//
// User headers are opaque bytes to the reference server: it stores and returns them as sent, so
// a polled frame may carry bytes that are not a TLV block (the golden poll vector's frame 1 has 17
// such bytes). A polled message exposes them as `rawHeaders`; `headers` is their TLV reading,
// empty when they are not one. A poll never fails because of header contents.

import { randomBytes } from 'node:crypto';
import {
  batchHeaderBytes,
  decodeUserHeaders,
  encodeBatchBytes,
  encodeUserHeaders,
  frameHeaderBytes,
  readU128,
  validateBatch,
  type HeaderValue,
  type MessageInput,
  type UserHeader,
  type ValidatedBatch,
} from '../../protocols/iggy/codec/index.js';
import type { BufferLease } from '../../base/buffer-pool.js';
import { IggyProtocolError } from './errors.js';

/** A header value: a plain JS value (string, boolean, number as float64, bigint as int64, Buffer) or a typed one. */
export type HeaderInput = string | boolean | number | bigint | Buffer | HeaderValue;

export interface SendMessage {
  /** u128 message id; default: a fresh UUIDv7-shaped id (time-ordered, random tail). */
  id?: bigint;
  payload: Buffer | Uint8Array | string;
  /** User headers by string key, or the codec's typed list (encoded as a TLV block). */
  headers?: Readonly<Record<string, HeaderInput>> | readonly UserHeader[];
  /**
   * The user-header bytes as they go on the wire, not checked to be a TLV block (at most
   * userHeadersBytesMax). Not with `headers`. Sent as given, so opaque headers round-trip.
   */
  rawHeaders?: Buffer | Uint8Array;
  /** Producer timestamp in µs since the epoch; default now. */
  timestampMicros?: bigint;
}

/** The most user-header bytes one message may carry (the reference's MAX_USER_HEADERS_SIZE, 100 KB). */
export const userHeadersBytesMax = 100_000;

export interface IggyMessage {
  partitionId: number;
  offset: bigint;
  id: bigint;
  /** Server timestamp (µs): the batch's base_timestamp. */
  timestamp: bigint;
  /** Producer timestamp (µs): origin_timestamp + timestamp_delta. */
  originTimestamp: bigint;
  checksum: bigint;
  payload: Buffer;
  /** The user-header bytes as stored (empty for none); opaque to the server. */
  rawHeaders: Buffer;
  /** `rawHeaders` read as a TLV block; empty when there are none or they are not a valid block. */
  headers: UserHeader[];
}

export interface PolledMessages {
  partitionId: number;
  /** The partition's newest offset at poll time. */
  currentOffset: bigint;
  messages: IggyMessage[];
}

/** A UUIDv7-shaped u128: 48-bit ms timestamp, version 7, variant 10, 74 random bits. Never 0. */
export function newMessageId(nowMs = Date.now()): bigint {
  writeNewMessageId(idScratch, 0, nowMs);
  return readU128(idScratch, 0);
}

const idScratch = Buffer.alloc(16);

/**
 * Writes a fresh newMessageId as u128 LE at `at` without building a BigInt (the send path mints
 * ids straight into the frames).
 */
export function writeNewMessageId(out: Buffer, at: number, nowMs = Date.now()): void {
  if (!(nowMs >= 0 && nowMs < 2 ** 48)) throw new RangeError(`message id time ${nowMs} is outside 0..2^48 ms`);
  const r = takeRandom16();
  const b = idPool;
  const ms = Math.trunc(nowMs);
  // Low u64 (bytes 0..7): 32 random bits, then variant 10 + 30 random bits. High u64 (8..15):
  // version 7 + 12 random bits under the low 16 bits of the time, then the time's upper 32 bits.
  out.writeUInt32LE(b.readUInt32BE(r + 12), at);
  out.writeUInt32LE(((b.readUInt32BE(r + 8) & 0x3fff_ffff) | 0x8000_0000) >>> 0, at + 4);
  out.writeUInt32LE((((ms % 0x1_0000) << 16) | 0x7000 | (b.readUInt16BE(r + 6) & 0x0fff)) >>> 0, at + 8);
  out.writeUInt32LE(Math.floor(ms / 0x1_0000), at + 12);
}

// Minted ids of prepared messages live in 16 KiB slabs (1,024 ids each); a slab is freed once no
// prepared message refers to it.
const idSlabBytes = 16 * 1024;
let idSlab = Buffer.alloc(0);
let idSlabAt = 0;

/** The offset of a free 16-byte slot in idSlab (which may be a fresh slab). */
function takeIdSlot(): number {
  if (idSlabAt + 16 > idSlab.length) {
    idSlab = Buffer.allocUnsafeSlow(idSlabBytes);
    idSlabAt = 0;
  }
  const at = idSlabAt;
  idSlabAt += 16;
  return at;
}

// Random bits for ids come from a pool refilled 1,024 ids at a time (one randomBytes call per
// ~1,000 messages instead of one per message).
const idPoolBytes = 16 * 1024;
let idPool = Buffer.alloc(0);
let idPoolAt = 0;

/** The offset of 16 fresh random bytes in idPool. */
function takeRandom16(): number {
  if (idPoolAt + 16 > idPool.length) {
    idPool = randomBytes(idPoolBytes);
    idPoolAt = 0;
  }
  const at = idPoolAt;
  idPoolAt += 16;
  return at;
}

export function nowMicros(): bigint {
  return BigInt(Date.now()) * 1000n;
}

export function toHeaderValue(v: HeaderInput): HeaderValue {
  if (Buffer.isBuffer(v)) return { kind: 'raw', value: v };
  switch (typeof v) {
    case 'string':
      return { kind: 'string', value: v };
    case 'boolean':
      return { kind: 'bool', value: v };
    case 'number':
      return Number.isSafeInteger(v) && v >= -(2 ** 31) && v < 2 ** 31 ? { kind: 'int32', value: v } : { kind: 'float64', value: v };
    case 'bigint':
      return { kind: 'int64', value: v };
    default:
      return v;
  }
}

export function toUserHeaders(headers: SendMessage['headers']): UserHeader[] {
  if (headers === undefined) return [];
  if (Array.isArray(headers)) return headers as UserHeader[];
  return Object.entries(headers as Record<string, HeaderInput>).map(([key, value]) => ({
    key: { kind: 'string', value: key },
    value: toHeaderValue(value),
  }));
}

/** What one message costs in a batch: 48-byte frame header + payload + user headers block. */
export interface PreparedMessage {
  input: MessageInput;
  bytes: number;
}

export function prepareMessage(m: SendMessage | Buffer | string, now = nowMicros(), nowMs = Date.now()): PreparedMessage {
  const input = newInput();
  fillInput(input, m, now, nowMs);
  return { input, bytes: 48 + input.payload.length + input.userHeaders!.length };
}

const noBytes = Buffer.alloc(0);

/** A MessageInput with every field present (one object shape for the encoder). */
function newInput(): MessageInput {
  return { id: undefined, idBytes: undefined, idAt: 0, originTimestamp: 0n, payload: noBytes, userHeaders: noBytes };
}

/**
 * Fills `input` from what the caller gave. Without an id, one is minted here, once, so a retried
 * send carries the same ids: 16 bytes in a shared slab instead of a BigInt per message.
 */
function fillInput(input: MessageInput, m: SendMessage | Buffer | string, now: bigint, nowMs: number): void {
  let id: bigint | undefined;
  if (typeof m === 'string') {
    input.payload = Buffer.from(m, 'utf8');
    input.userHeaders = noBytes;
    input.originTimestamp = now;
  } else if (Buffer.isBuffer(m)) {
    input.payload = m;
    input.userHeaders = noBytes;
    input.originTimestamp = now;
  } else {
    const payload = m.payload;
    input.payload = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
    input.userHeaders = m.rawHeaders !== undefined ? rawHeaderBytes(m) : m.headers === undefined ? noBytes : encodeUserHeaders(toUserHeaders(m.headers));
    input.originTimestamp = m.timestampMicros ?? now;
    id = m.id;
  }
  if (id === undefined) {
    const at = takeIdSlot();
    writeNewMessageId(idSlab, at, nowMs);
    input.id = undefined;
    input.idBytes = idSlab;
    input.idAt = at;
  } else {
    input.id = id;
    input.idBytes = undefined;
    input.idAt = 0;
  }
}

/** A message's rawHeaders as a Buffer (a view of a Uint8Array), checked for size only. */
function rawHeaderBytes(m: SendMessage): Buffer {
  if (m.headers !== undefined) throw new TypeError('a message takes headers or rawHeaders, not both');
  const raw = m.rawHeaders!;
  if (!(raw instanceof Uint8Array)) throw new TypeError('rawHeaders must be a Buffer or Uint8Array');
  if (raw.length > userHeadersBytesMax) throw new RangeError(`rawHeaders of ${raw.length} bytes exceed ${userHeadersBytesMax}`);
  return Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
}

/**
 * The batch bytes of a SendMessages request. With a lease, the batch buffer comes from the buffer
 * pool (released by the caller once the server has answered: it has then read every byte).
 */
export function encodeSendBatch(messages: readonly PreparedMessage[], lease?: BufferLease): Buffer {
  return encodeBatchBytes(
    messages.map((m) => m.input),
    undefined,
    lease !== undefined ? { alloc: (length: number) => lease.buffer(length) } : {},
  );
}

// encodeMessages fills these in place and encodes them at once (synchronously, so one set serves
// every send of the process): no object per message per send. Payload references are dropped
// right after, so the set never keeps a caller's buffers alive, and a set grown by an unusually
// large batch is cut back to scratchInputsKept.
const scratchInputs: MessageInput[] = [];
const scratchInputsKept = 16 * 1024;
let scratchBusy = false;

/**
 * The batch bytes of a SendMessages request straight from the caller's messages (sendMessages):
 * the same bytes as prepareMessage for each and encodeSendBatch, without a PreparedMessage per
 * message. Ids are minted as prepareMessage mints them (on every call: unlike the producer's
 * prepared messages, a second call gets new ids).
 */
/** What the reused inputs hold between sends (tests): how many are kept, and how many still hold a payload. */
export function encoderInputsForTests(): { kept: number; holdingPayloads: number } {
  return { kept: scratchInputs.length, holdingPayloads: scratchInputs.filter((input) => input.payload.length > 0 || input.userHeaders!.length > 0).length };
}

export function encodeMessages(messages: ReadonlyArray<SendMessage | Buffer | string>, now: bigint, nowMs: number, lease?: BufferLease): Buffer {
  const n = messages.length;
  const options = lease !== undefined ? { alloc: (length: number) => lease.buffer(length), count: n } : { count: n };
  if (scratchBusy) {
    // Re-entered while filling (a getter on a message that sends): fresh inputs for this one.
    const inputs = messages.map((m) => {
      const input = newInput();
      fillInput(input, m, now, nowMs);
      return input;
    });
    return encodeBatchBytes(inputs, undefined, options);
  }
  scratchBusy = true;
  while (scratchInputs.length < n) scratchInputs.push(newInput());
  try {
    for (let i = 0; i < n; i++) fillInput(scratchInputs[i]!, messages[i]!, now, nowMs);
    return encodeBatchBytes(scratchInputs, undefined, options);
  } finally {
    for (let i = 0; i < n; i++) {
      const input = scratchInputs[i]!;
      input.payload = noBytes;
      input.userHeaders = noBytes;
      input.id = undefined;
      input.idBytes = undefined;
    }
    if (scratchInputs.length > scratchInputsKept) scratchInputs.length = scratchInputsKept;
    scratchBusy = false;
  }
}

/**
 * Decodes the batch records of a poll reply, verifying every checksum first (validateBatch, the
 * same checks and reasons as parsePolledBatches 'full'), then building one message per frame.
 */
export function decodePolledRecords(partitionId: number, records: readonly Buffer[]): IggyMessage[] {
  let out: IggyMessage[] = [];
  let at = 0;
  for (const region of records) {
    const batches: ValidatedBatch[] = [];
    let messages = 0;
    let pos = 0;
    while (pos < region.length) {
      const batch = validateBatch(pos === 0 ? region : region.subarray(pos));
      if ('code' in batch) throw new IggyProtocolError(`poll reply: record ${batches.length}: ${batch.reason}`);
      batches.push(batch);
      messages += batch.header.messageCount;
      pos += batch.bytes.length;
    }
    // Sized once per region (a poll reply has one): message_count is a verified batch's frame count.
    if (at === 0) out = new Array<IggyMessage>(messages);
    else out.length = at + messages;
    for (const batch of batches) at = decodeFrames(partitionId, batch, out, at);
  }
  return out;
}

/** Writes the messages of a verified batch into `out` from index `at`; returns the next index. */
function decodeFrames(partitionId: number, batch: ValidatedBatch, out: IggyMessage[], at: number): number {
  const { bytes, header: h } = batch;
  const timestamp = h.baseTimestamp;
  const origin = h.originTimestamp;
  // Offsets as number + delta while exact (always, for offsets below 2^53 - 2^32).
  const baseNumber = h.baseOffset <= maxSafeBase ? Number(h.baseOffset) : -1;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = batchHeaderBytes;
  while (pos < bytes.length) {
    const offsetDelta = view.getUint32(pos + 24, true);
    const timestampDelta = view.getUint32(pos + 28, true);
    const body = pos + frameHeaderBytes;
    const payloadEnd = body + view.getUint32(pos + 36, true);
    // User headers stay bytes here: PolledMessage reads them when asked (never a reason to fail).
    out[at++] = (
      new PolledMessage(
        partitionId,
        baseNumber >= 0 ? baseNumber + offsetDelta : -1,
        baseNumber >= 0 ? undefined : h.baseOffset + BigInt(offsetDelta),
        timestamp,
        timestampDelta === 0 ? origin : origin + BigInt(timestampDelta),
        bytes.subarray(body, payloadEnd),
        bytes,
        pos,
      )
    );
    pos = payloadEnd + view.getUint32(pos + 32, true);
  }
  return at;
}

/**
 * A polled message. `offset` is built as a BigInt each time it is read, from a number held while
 * exact; `id` and `checksum` are read from the frame when first asked for. Building those BigInts
 * for every message (fields many consumers never read, or read for the last message only) was
 * over a third of the SDK's decode time. `rawHeaders` (a view of the frame's user-header bytes)
 * and `headers` (their TLV reading) are made on first read too, so a consumer that never reads
 * headers pays nothing for them; bytes that are not a TLV block read as no headers. All five are
 * accessors (on the prototype; assigning them works as on a plain object), so an object spread
 * (`{ ...m }`) leaves them out: copy them by name.
 */
class PolledMessage implements IggyMessage {
  private idValue: bigint | undefined = undefined;
  private checksumValue: bigint | undefined = undefined;
  private rawHeadersValue: Buffer | undefined = undefined;
  private headersValue: UserHeader[] | undefined = undefined;

  constructor(
    readonly partitionId: number,
    /** The offset while below 2^53 - 2^32 (always, in practice), else -1 and `offsetValue` holds it. */
    private readonly offsetNumber: number,
    private offsetValue: bigint | undefined,
    readonly timestamp: bigint,
    readonly originTimestamp: bigint,
    readonly payload: Buffer,
    /** The verified batch the frame is in, and the frame's position in it. */
    private readonly batch: Buffer,
    private readonly frameAt: number,
  ) {}

  get offset(): bigint {
    return this.offsetValue ?? BigInt(this.offsetNumber);
  }

  set offset(value: bigint) {
    this.offsetValue = value;
  }

  get id(): bigint {
    return (this.idValue ??= readU128(this.batch, this.frameAt + 8));
  }

  set id(value: bigint) {
    this.idValue = value;
  }

  get checksum(): bigint {
    return this.checksumValue ?? this.batch.readBigUInt64LE(this.frameAt);
  }

  set checksum(value: bigint) {
    this.checksumValue = value;
  }

  get rawHeaders(): Buffer {
    return (this.rawHeadersValue ??= this.frameHeaders());
  }

  set rawHeaders(value: Buffer) {
    this.rawHeadersValue = value;
  }

  get headers(): UserHeader[] {
    if (this.headersValue === undefined) {
      const raw = this.frameHeaders();
      const decoded = raw.length === 0 ? [] : decodeUserHeaders(raw);
      this.headersValue = typeof decoded === 'string' ? [] : decoded;
    }
    return this.headersValue;
  }

  set headers(value: UserHeader[]) {
    this.headersValue = value;
  }

  /** A view of the frame's user-header bytes: they follow the 48-byte frame header and the payload. */
  private frameHeaders(): Buffer {
    const length = this.batch.readUInt32LE(this.frameAt + 32);
    if (length === 0) return noBytes;
    const start = this.frameAt + frameHeaderBytes + this.batch.readUInt32LE(this.frameAt + 36);
    return this.batch.subarray(start, start + length);
  }
}

const maxSafeBase = BigInt(Number.MAX_SAFE_INTEGER - 0xffff_ffff);

/** The value of a string-keyed user header, or undefined. */
export function headerValue(message: Pick<IggyMessage, 'headers'>, key: string): HeaderValue | undefined {
  for (const h of message.headers) if (h.key.kind === 'string' && h.key.value === key) return h.value;
  return undefined;
}
