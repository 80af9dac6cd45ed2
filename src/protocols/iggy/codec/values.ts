// Iggy 0.11 field encodings built on the Reader and Writer of ./primitives.ts: names and strings,
// identifiers, consumers, partitioning, polling strategies, user-header values, TLV blocks,
// permissions and the protocol version (the grammar is in primitives.ts's header).

import { IggyErrorCode } from './errors.js';
import type { GlobalGrants, Grants, StreamGrants, TopicGrants } from '../../../base/grants.js';
import { Reader, Writer, decodeUtf8, readU128, writeU128 } from './primitives.js';

// ---------------------------------------------------------------------------------------------
// Names and strings

export const nameBytesMax = 255;

/** Name := len u8 (1..255) | utf8. */
export function readName(r: Reader, what = 'name'): string {
  const len = r.u8(`${what} length`);
  if (r.ok && len === 0) r.fail(`${what} must not be empty`);
  return r.utf8(len, what);
}

export function writeName(w: Writer, value: string, what = 'name'): void {
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length < 1 || bytes.length > nameBytesMax) {
    throw new RangeError(`${what} must be 1..255 UTF-8 bytes, got ${bytes.length}`);
  }
  w.u8(bytes.length).bytes(bytes);
}

/** len u8 (0..255) | utf8: passwords and tokens, whose length rules are domain rules. */
export function readShortString(r: Reader, what: string): string {
  return r.utf8(r.u8(`${what} length`), what);
}

export function writeShortString(w: Writer, value: string, what: string): void {
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length > nameBytesMax) throw new RangeError(`${what} must be at most 255 UTF-8 bytes`);
  w.u8(bytes.length).bytes(bytes);
}

/** len u32 | utf8 (response strings: addresses, host names, descriptions). */
export function readLongString(r: Reader, what: string): string {
  const len = r.u32(`${what} length`);
  return r.utf8(len, what);
}

export function writeLongString(w: Writer, value: string): void {
  const bytes = Buffer.from(value, 'utf8');
  w.u32(bytes.length).bytes(bytes);
}

// ---------------------------------------------------------------------------------------------
// Identifier

export const IdentifierKind = { numeric: 1, string: 2 } as const;

export type Identifier = { kind: 'numeric'; value: number } | { kind: 'string'; value: string };

export const numericId = (value: number): Identifier => ({ kind: 'numeric', value });
export const stringId = (value: string): Identifier => ({ kind: 'string', value });

/** Identifier := kind u8 | len u8 | value. */
export function readIdentifier(r: Reader, what = 'identifier'): Identifier {
  const kind = r.u8(`${what} kind`);
  const len = r.u8(`${what} length`);
  if (!r.ok) return numericId(0);
  if (kind === IdentifierKind.numeric) {
    if (len !== 4) {
      r.fail(`${what}: numeric identifier length must be 4, got ${len}`);
      return numericId(0);
    }
    return numericId(r.u32(what));
  }
  if (kind === IdentifierKind.string) {
    if (len === 0) {
      r.fail(`${what}: string identifier must not be empty`);
      return numericId(0);
    }
    return stringId(r.utf8(len, what));
  }
  r.fail(`${what}: unknown identifier kind ${kind}`);
  return numericId(0);
}

export function writeIdentifier(w: Writer, id: Identifier): void {
  if (id.kind === 'numeric') {
    w.u8(IdentifierKind.numeric).u8(4).u32(id.value);
    return;
  }
  const bytes = Buffer.from(id.value, 'utf8');
  if (bytes.length < 1 || bytes.length > nameBytesMax) {
    throw new RangeError(`string identifier must be 1..255 UTF-8 bytes, got ${bytes.length}`);
  }
  w.u8(IdentifierKind.string).u8(bytes.length).bytes(bytes);
}

// ---------------------------------------------------------------------------------------------
// Consumer, optional partition id

export const ConsumerKind = { consumer: 1, consumerGroup: 2 } as const;
export type ConsumerKind = (typeof ConsumerKind)[keyof typeof ConsumerKind];

export interface Consumer {
  kind: ConsumerKind;
  id: Identifier;
}

export function readConsumer(r: Reader): Consumer {
  const kind = r.u8('consumer kind');
  if (r.ok && kind !== ConsumerKind.consumer && kind !== ConsumerKind.consumerGroup) {
    r.fail(`unknown consumer kind ${kind}`);
  }
  const id = readIdentifier(r, 'consumer id');
  return { kind: kind as ConsumerKind, id };
}

export function writeConsumer(w: Writer, c: Consumer): void {
  w.u8(c.kind);
  writeIdentifier(w, c.id);
}

/** OptPartition := flag u8 | partition_id u32. Null when unset. */
export function readOptionalPartition(r: Reader): number | null {
  const flag = r.u8('partition flag');
  const id = r.u32('partition id');
  if (!r.ok) return null;
  if (flag === 0) return null;
  if (flag !== 1) {
    r.fail(`partition flag must be 0 or 1, got ${flag}`);
    return null;
  }
  return id;
}

export function writeOptionalPartition(w: Writer, partitionId: number | null): void {
  if (partitionId === null) w.u8(0).u32(0);
  else w.u8(1).u32(partitionId);
}

// ---------------------------------------------------------------------------------------------
// Partitioning, polling strategy

export const PartitioningKind = { balanced: 1, partitionId: 2, messagesKey: 3 } as const;

export type Partitioning =
  | { kind: 'balanced' }
  | { kind: 'partitionId'; partitionId: number }
  | { kind: 'messagesKey'; key: Buffer };

export function readPartitioning(r: Reader): Partitioning {
  const kind = r.u8('partitioning kind');
  const len = r.u8('partitioning length');
  if (!r.ok) return { kind: 'balanced' };
  switch (kind) {
    case PartitioningKind.balanced:
      if (len !== 0) r.fail(`balanced partitioning length must be 0, got ${len}`);
      return { kind: 'balanced' };
    case PartitioningKind.partitionId:
      if (len !== 4) {
        r.fail(`partition id partitioning length must be 4, got ${len}`);
        return { kind: 'balanced' };
      }
      return { kind: 'partitionId', partitionId: r.u32('partition id') };
    case PartitioningKind.messagesKey:
      if (len === 0) r.fail('messages key must not be empty');
      return { kind: 'messagesKey', key: r.bytes(len, 'messages key') };
    default:
      r.fail(`unknown partitioning kind ${kind}`);
      return { kind: 'balanced' };
  }
}

export function writePartitioning(w: Writer, p: Partitioning): void {
  switch (p.kind) {
    case 'balanced':
      w.u8(PartitioningKind.balanced).u8(0);
      return;
    case 'partitionId':
      w.u8(PartitioningKind.partitionId).u8(4).u32(p.partitionId);
      return;
    case 'messagesKey':
      if (p.key.length < 1 || p.key.length > 255) throw new RangeError('messages key must be 1..255 bytes');
      w.u8(PartitioningKind.messagesKey).u8(p.key.length).bytes(p.key);
      return;
  }
}

export const PollingKind = { offset: 1, timestamp: 2, first: 3, last: 4, next: 5 } as const;
export type PollingKind = (typeof PollingKind)[keyof typeof PollingKind];

/** value: the offset (Offset), microseconds (Timestamp), ignored otherwise. */
export interface PollingStrategy {
  kind: PollingKind;
  value: bigint;
}

export function readPollingStrategy(r: Reader): PollingStrategy {
  const kind = r.u8('polling strategy kind');
  const value = r.u64('polling strategy value');
  if (r.ok && (kind < PollingKind.offset || kind > PollingKind.next)) r.fail(`unknown polling strategy kind ${kind}`);
  return { kind: kind as PollingKind, value };
}

export function writePollingStrategy(w: Writer, s: PollingStrategy): void {
  w.u8(s.kind).u64(s.value);
}

// ---------------------------------------------------------------------------------------------
// Header kinds and typed values (user headers and option values)

export const HeaderKind = {
  raw: 1,
  string: 2,
  bool: 3,
  int8: 4,
  int16: 5,
  int32: 6,
  int64: 7,
  int128: 8,
  uint8: 9,
  uint16: 10,
  uint32: 11,
  uint64: 12,
  uint128: 13,
  float32: 14,
  float64: 15,
} as const;
export type HeaderKindName = keyof typeof HeaderKind;

/** A typed header or option value. Unknown kind codes are kept as bytes and forwarded. */
export type HeaderValue =
  | { kind: 'raw'; value: Buffer }
  | { kind: 'string'; value: string }
  | { kind: 'bool'; value: boolean }
  | { kind: 'int8' | 'int16' | 'int32' | 'uint8' | 'uint16' | 'uint32' | 'float32' | 'float64'; value: number }
  | { kind: 'int64' | 'int128' | 'uint64' | 'uint128'; value: bigint }
  | { kind: 'unknown'; code: number; value: Buffer };

const kindNameByCode: ReadonlyMap<number, HeaderKindName> = new Map(
  (Object.entries(HeaderKind) as Array<[HeaderKindName, number]>).map(([name, code]) => [code, name]),
);

const fixedWidth: Partial<Record<HeaderKindName, number>> = {
  bool: 1,
  int8: 1,
  int16: 2,
  int32: 4,
  int64: 8,
  int128: 16,
  uint8: 1,
  uint16: 2,
  uint32: 4,
  uint64: 8,
  uint128: 16,
  float32: 4,
  float64: 8,
};

export function headerKindCode(v: HeaderValue): number {
  return v.kind === 'unknown' ? v.code : HeaderKind[v.kind];
}

/** Typed value from a TLV field, or a reason when the bytes do not fit the kind. */
export function decodeHeaderValue(code: number, bytes: Buffer): HeaderValue | string {
  const kind = kindNameByCode.get(code);
  if (kind === undefined) return { kind: 'unknown', code, value: bytes };
  const width = fixedWidth[kind];
  if (width !== undefined && bytes.length !== width) return `${kind} value must be ${width} bytes, got ${bytes.length}`;
  switch (kind) {
    case 'raw':
      return { kind, value: bytes };
    case 'string': {
      const s = decodeUtf8(bytes);
      return s === null ? 'string value is not valid UTF-8' : { kind, value: s };
    }
    case 'bool':
      if (bytes[0]! > 1) return `bool value must be 0 or 1, got ${bytes[0]}`;
      return { kind, value: bytes[0] === 1 };
    case 'int8':
      return { kind, value: bytes.readInt8(0) };
    case 'int16':
      return { kind, value: bytes.readInt16LE(0) };
    case 'int32':
      return { kind, value: bytes.readInt32LE(0) };
    case 'int64':
      return { kind, value: bytes.readBigInt64LE(0) };
    case 'int128':
      return { kind, value: BigInt.asIntN(128, readU128(bytes, 0)) };
    case 'uint8':
      return { kind, value: bytes[0]! };
    case 'uint16':
      return { kind, value: bytes.readUInt16LE(0) };
    case 'uint32':
      return { kind, value: bytes.readUInt32LE(0) };
    case 'uint64':
      return { kind, value: bytes.readBigUInt64LE(0) };
    case 'uint128':
      return { kind, value: readU128(bytes, 0) };
    case 'float32':
      return { kind, value: bytes.readFloatLE(0) };
    case 'float64':
      return { kind, value: bytes.readDoubleLE(0) };
  }
}

/** The wire bytes of a typed value (1..255 bytes for anything sendable). */
export function encodeHeaderValue(v: HeaderValue): Buffer {
  switch (v.kind) {
    case 'raw':
    case 'unknown':
      return v.value;
    case 'string':
      return Buffer.from(v.value, 'utf8');
    case 'bool':
      return Buffer.from([v.value ? 1 : 0]);
    case 'int8': {
      const b = Buffer.allocUnsafe(1);
      b.writeInt8(v.value, 0);
      return b;
    }
    case 'int16': {
      const b = Buffer.allocUnsafe(2);
      b.writeInt16LE(v.value, 0);
      return b;
    }
    case 'int32': {
      const b = Buffer.allocUnsafe(4);
      b.writeInt32LE(v.value, 0);
      return b;
    }
    case 'int64': {
      const b = Buffer.allocUnsafe(8);
      b.writeBigInt64LE(v.value, 0);
      return b;
    }
    case 'int128': {
      const b = Buffer.allocUnsafe(16);
      writeU128(b, BigInt.asUintN(128, v.value), 0);
      return b;
    }
    case 'uint8':
      return Buffer.from([v.value]);
    case 'uint16': {
      const b = Buffer.allocUnsafe(2);
      b.writeUInt16LE(v.value, 0);
      return b;
    }
    case 'uint32': {
      const b = Buffer.allocUnsafe(4);
      b.writeUInt32LE(v.value, 0);
      return b;
    }
    case 'uint64': {
      const b = Buffer.allocUnsafe(8);
      b.writeBigUInt64LE(v.value, 0);
      return b;
    }
    case 'uint128': {
      const b = Buffer.allocUnsafe(16);
      writeU128(b, v.value, 0);
      return b;
    }
    case 'float32': {
      const b = Buffer.allocUnsafe(4);
      b.writeFloatLE(v.value, 0);
      return b;
    }
    case 'float64': {
      const b = Buffer.allocUnsafe(8);
      b.writeDoubleLE(v.value, 0);
      return b;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// TLV blocks: user headers and options

/** One key/value pair of a TLV block, as raw fields (zero-copy views). */
export interface TlvEntry {
  keyKind: number;
  key: Buffer;
  valueKind: number;
  value: Buffer;
}

export const tlvFieldBytesMax = 255;

/**
 * Walks a TLV block (`core/binary_protocol/src/primitives/user_headers.rs` rules): kind != 0,
 * 1 <= len <= 255, fields pair up, exact consumption. Returns the entries or a reason.
 * `entriesMax` bounds the work before anything is allocated per entry.
 */
export function readTlvBlock(block: Buffer, entriesMax = Number.MAX_SAFE_INTEGER): TlvEntry[] | string {
  const entries: TlvEntry[] = [];
  let pos = 0;
  while (pos < block.length) {
    if (entries.length >= entriesMax) return `more than ${entriesMax} entries`;
    const key = readTlvField(block, pos);
    if (typeof key === 'string') return `entry ${entries.length} key: ${key}`;
    const value = readTlvField(block, key.next);
    if (typeof value === 'string') return `entry ${entries.length} value: ${value}`;
    entries.push({ keyKind: key.kind, key: key.data, valueKind: value.kind, value: value.data });
    pos = value.next;
  }
  return entries;
}

function readTlvField(block: Buffer, pos: number): { kind: number; data: Buffer; next: number } | string {
  if (block.length - pos < 5) return 'truncated field header';
  const kind = block[pos]!;
  const len = block.readUInt32LE(pos + 1);
  if (kind === 0) return 'kind 0 is reserved';
  if (len < 1 || len > tlvFieldBytesMax) return `length ${len} outside 1..255`;
  if (block.length - pos - 5 < len) return 'truncated field data';
  return { kind, data: block.subarray(pos + 5, pos + 5 + len), next: pos + 5 + len };
}

export function writeTlvField(w: Writer, kind: number, data: Uint8Array): void {
  if (kind < 1 || kind > 255) throw new RangeError(`TLV kind must be 1..255, got ${kind}`);
  if (data.length < 1 || data.length > tlvFieldBytesMax) throw new RangeError(`TLV data must be 1..255 bytes, got ${data.length}`);
  w.u8(kind).u32(data.length).bytes(data);
}

/** An option: string key, typed value kept as (kind code, bytes) so unknown kinds forward. */
export interface OptionEntry {
  key: string;
  kind: number;
  value: Buffer;
}

export const optionsEntriesMax = 1024;
export const optionsBytesMax = 100_000;

/** Options block (requests: runs to the end of the payload). */
export function parseOptionsBlock(block: Buffer): OptionEntry[] | string {
  if (block.length > optionsBytesMax) return `options block is ${block.length} bytes, above ${optionsBytesMax}`;
  const entries = readTlvBlock(block, optionsEntriesMax);
  if (typeof entries === 'string') return `options block: ${entries}`;
  const out: OptionEntry[] = [];
  const seen = new Set<string>();
  for (const e of entries) {
    if (e.keyKind !== HeaderKind.string) return `option key kind ${e.keyKind} is not a string`;
    const key = decodeUtf8(e.key);
    if (key === null) return 'option key is not valid UTF-8';
    if (seen.has(key)) return `duplicate option key ${key}`;
    seen.add(key);
    out.push({ key, kind: e.valueKind, value: e.value });
  }
  return out;
}

export function readOptionsToEnd(r: Reader): OptionEntry[] {
  const block = r.rest();
  const parsed = parseOptionsBlock(block);
  if (typeof parsed === 'string') {
    r.fail(parsed, block.length > optionsBytesMax ? IggyErrorCode.optionsBlockTooLarge : undefined);
    return [];
  }
  return parsed;
}

export function writeOptions(w: Writer, options: readonly OptionEntry[]): void {
  for (const o of options) {
    writeTlvField(w, HeaderKind.string, Buffer.from(o.key, 'utf8'));
    writeTlvField(w, o.kind, o.value);
  }
}

/** Options block with a u32 length prefix (responses). */
export function readPrefixedOptions(r: Reader, what = 'options'): OptionEntry[] {
  const len = r.u32(`${what} length`);
  const block = r.bytes(len, what);
  if (!r.ok) return [];
  const parsed = parseOptionsBlock(block);
  if (typeof parsed === 'string') {
    r.fail(`${what}: ${parsed}`);
    return [];
  }
  return parsed;
}

export function writePrefixedOptions(w: Writer, options: readonly OptionEntry[]): void {
  const patch = w.u32Later();
  const before = w.length;
  writeOptions(w, options);
  patch(w.length - before);
}

/** Convenience: an option from a typed value. */
export function option(key: string, value: HeaderValue): OptionEntry {
  return { key, kind: headerKindCode(value), value: encodeHeaderValue(value) };
}

// ---------------------------------------------------------------------------------------------
// Permissions (core/binary_protocol/src/primitives/permissions.rs): one byte per bool.

// The core's grant model (src/base/grants.ts), which every front-end checks; on the wire, streams
// are sorted by stream id and each stream's topics by topic id.
export type GlobalPermissions = GlobalGrants;
export type TopicPermissions = TopicGrants;
export type StreamPermissions = StreamGrants;
export type Permissions = Grants;

const globalKeys: ReadonlyArray<keyof GlobalPermissions> = [
  'manageServers',
  'readServers',
  'manageUsers',
  'readUsers',
  'manageStreams',
  'readStreams',
  'manageTopics',
  'readTopics',
  'pollMessages',
  'sendMessages',
];
const streamKeys = ['manageStream', 'readStream', 'manageTopics', 'readTopics', 'pollMessages', 'sendMessages'] as const;
const topicKeys = ['manageTopic', 'readTopic', 'pollMessages', 'sendMessages'] as const;

/** Reads a permissions structure; the caller bounds `r` to the declared permissions length. */
export function readPermissions(r: Reader): Permissions {
  const global = {} as GlobalPermissions;
  for (const k of globalKeys) global[k] = r.bool(`permission ${k}`);
  const streams: StreamPermissions[] = [];
  let more = r.bool('has_streams');
  while (more && r.ok) {
    const s = { streamId: r.u32('stream permission id'), topics: [] } as unknown as StreamPermissions;
    for (const k of streamKeys) s[k] = r.bool(`stream permission ${k}`);
    let moreTopics = r.bool('has_topics');
    while (moreTopics && r.ok) {
      const t = { topicId: r.u32('topic permission id') } as TopicPermissions;
      for (const k of topicKeys) t[k] = r.bool(`topic permission ${k}`);
      s.topics.push(t);
      moreTopics = r.bool('has_next_topic');
    }
    streams.push(s);
    more = r.bool('has_next_stream');
  }
  return { global, streams };
}

export function writePermissions(w: Writer, p: Permissions): void {
  for (const k of globalKeys) w.bool(p.global[k]);
  const streams = [...p.streams].sort((a, b) => a.streamId - b.streamId);
  w.bool(streams.length > 0);
  streams.forEach((s, i) => {
    w.u32(s.streamId);
    for (const k of streamKeys) w.bool(s[k]);
    const topics = [...s.topics].sort((a, b) => a.topicId - b.topicId);
    w.bool(topics.length > 0);
    topics.forEach((t, j) => {
      w.u32(t.topicId);
      for (const k of topicKeys) w.bool(t[k]);
      w.bool(j < topics.length - 1);
    });
    w.bool(i < streams.length - 1);
  });
}

export function encodePermissions(p: Permissions): Buffer {
  const w = new Writer();
  writePermissions(w, p);
  return w.toBuffer();
}

// ---------------------------------------------------------------------------------------------
// Protocol version and the login prefix (core/binary_protocol/src/version.rs)

/** Packed semver: major << 20 | minor << 10 | patch. */
export function packVersion(major: number, minor: number, patch: number): number {
  return ((major << 20) | (minor << 10) | patch) >>> 0;
}

export function unpackVersion(v: number): { major: number; minor: number; patch: number } {
  return { major: (v >>> 20) & 0x3ff, minor: (v >>> 10) & 0x3ff, patch: v & 0x3ff };
}

/** 0.11.0 = 11264 = 0x2C00. */
export const iggyProtocolVersion = packVersion(0, 11, 0);
/** Current version with patch zeroed. */
export const iggyProtocolVersionMin = iggyProtocolVersion & ~0x3ff;

/** The server's gate: `client >= min && (client >> 10) <= (server >> 10)`; bits 31..30 must be 0. */
export function isProtocolCompatible(client: number, server = iggyProtocolVersion, min = iggyProtocolVersionMin): boolean {
  if (client >>> 30 !== 0) return false;
  return client >= min && client >>> 10 <= server >>> 10;
}

export interface ClientVersionInfo {
  protocolVersion: number;
  sdkName: string;
  sdkVersion: string;
}

/** ClientVersionInfo := protocol_version u32 | sdk_name Name | sdk_version Name. */
export function readClientVersionInfo(r: Reader): ClientVersionInfo {
  const protocolVersion = r.u32('protocol_version');
  const sdkName = readName(r, 'sdk_name');
  const sdkVersion = readName(r, 'sdk_version');
  return { protocolVersion, sdkName, sdkVersion };
}

export function writeClientVersionInfo(w: Writer, v: ClientVersionInfo): void {
  w.u32(v.protocolVersion);
  writeName(w, v.sdkName, 'sdk_name');
  writeName(w, v.sdkVersion, 'sdk_version');
}

// ---------------------------------------------------------------------------------------------
// Whole-body helpers

/** A decoded value or the reason the bytes were refused (and the Iggy error code, when the reason has its own). */
export type Decoded<T> = { ok: true; value: T } | { ok: false; reason: string; code?: number };

/** Runs a straight-line decoder over a whole body and checks it consumed every byte. */
export function decodeWith<T>(body: Buffer, read: (r: Reader) => T): Decoded<T> {
  const r = new Reader(body);
  const value = read(r);
  const problem = r.done();
  return problem === null ? { ok: true, value } : { ok: false, reason: problem };
}

/** Runs an encoder into a fresh writer and returns the chunk list. */
export function encodeWith<T>(write: (w: Writer, value: T) => void, value: T): Buffer[] {
  const w = new Writer();
  write(w, value);
  return w.chunks();
}

/** Number of `elementBytesMin`-byte elements that can still fit: bounds counts before allocating. */
export function checkCount(r: Reader, count: number, elementBytesMin: number, what: string): boolean {
  if (!r.ok) return false;
  if (count * elementBytesMin > r.remaining) {
    r.fail(`${what} count ${count} cannot fit in the ${r.remaining} bytes left`);
    return false;
  }
  return true;
}
