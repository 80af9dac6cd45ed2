// Messages as the SDK user sees them, and their translation to and from the codec's batch layout
// (src/protocols/iggy/codec/message-batch.ts): ids, payloads, typed user headers, offsets.

import { randomBytes } from 'node:crypto';
import {
  decodeUserHeaders,
  encodeUserHeaders,
  parsePolledBatches,
  type HeaderValue,
  type MessageInput,
  type UserHeader,
} from '../../protocols/iggy/codec/index.js';
import { IggyProtocolError } from './errors.js';

/** A header value: a plain JS value (string, boolean, number as float64, bigint as int64, Buffer) or a typed one. */
export type HeaderInput = string | boolean | number | bigint | Buffer | HeaderValue;

export interface SendMessage {
  /** u128 message id; default: a fresh UUIDv7-shaped id (time-ordered, random tail). */
  id?: bigint;
  payload: Buffer | Uint8Array | string;
  /** User headers by string key, or the codec's typed list. */
  headers?: Readonly<Record<string, HeaderInput>> | readonly UserHeader[];
  /** Producer timestamp in µs since the epoch; default now. */
  timestampMicros?: bigint;
}

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
  const b = randomBytes(16);
  b.writeUIntBE(nowMs, 0, 6);
  b[6] = (b[6]! & 0x0f) | 0x70;
  b[8] = (b[8]! & 0x3f) | 0x80;
  return b.readBigUInt64BE(0) * (1n << 64n) + b.readBigUInt64BE(8);
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

export function prepareMessage(m: SendMessage | Buffer | string, now = nowMicros()): PreparedMessage {
  const msg: SendMessage = typeof m === 'string' || Buffer.isBuffer(m) ? { payload: m } : m;
  const payload = typeof msg.payload === 'string' ? Buffer.from(msg.payload, 'utf8') : Buffer.isBuffer(msg.payload) ? msg.payload : Buffer.from(msg.payload);
  const userHeaders = encodeUserHeaders(toUserHeaders(msg.headers));
  const input: MessageInput = { id: msg.id ?? newMessageId(), originTimestamp: msg.timestampMicros ?? now, payload, userHeaders };
  return { input, bytes: 48 + payload.length + userHeaders.length };
}

/** Decodes the batch records of a poll reply, verifying every checksum. */
export function decodePolledRecords(partitionId: number, records: readonly Buffer[]): IggyMessage[] {
  const out: IggyMessage[] = [];
  for (const region of records) {
    const batches = parsePolledBatches(region, 'full');
    if ('code' in batches) throw new IggyProtocolError(`poll reply: ${batches.reason}`);
    for (const batch of batches) {
      const h = batch.header;
      for (const f of batch.frames) {
        const headers = f.userHeaders.length === 0 ? [] : decodeUserHeaders(f.userHeaders);
        if (typeof headers === 'string') throw new IggyProtocolError(`poll reply: ${headers}`);
        out.push({
          partitionId,
          offset: h.baseOffset + BigInt(f.offsetDelta),
          id: f.id,
          timestamp: h.baseTimestamp,
          originTimestamp: h.originTimestamp + BigInt(f.timestampDelta),
          checksum: f.checksum,
          payload: f.payload,
          headers,
        });
      }
    }
  }
  return out;
}

/** The value of a string-keyed user header, or undefined. */
export function headerValue(message: Pick<IggyMessage, 'headers'>, key: string): HeaderValue | undefined {
  for (const h of message.headers) if (h.key.kind === 'string' && h.key.value === key) return h.value;
  return undefined;
}
