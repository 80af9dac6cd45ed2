// The 256-byte Iggy 0.11 frame headers that cross the client boundary: Request (5), Reply (8) and
// Eviction (13). Sources: specs/iggy-binary-protocol-0.11.md "Framing", iggy-0.11-server-notes.md
// §2–§3 and §11, core/binary_protocol/src/consensus/header.rs. All integers little-endian.
//
// Checksums on client frames:
// - `checksum` @0 and `checksum_body` @16 are the replica-plane seals; client frames are not
//   sealed. We ignore them on requests and write zero on replies and evictions.
// - `request_checksum` @144 is `u128::from(XXH3_64(body))` (seed 0, default secret; the high 64
//   bits are zero) over the request body bytes (everything after the 256-byte header). Sent only
//   for metadata operations, checked by the server whenever it is non-zero
//   (core/server/src/wire.rs::verify_request_checksum); a mismatch is answered with a Reply of
//   status 4 (InvalidFormat) and an empty body. `verifyRequestChecksum` implements exactly that.

import { xxh3 } from '../../../base/native.js';
import { readU128, readU64, writeU128, writeU64 } from './primitives.js';

export const headerBytes = 256;
/** The reference server's default maximum frame (`message_bus.max_message_size`, 64 MiB). */
export const frameBytesMaxDefault = 64 * 1024 * 1024;

/** The `command` byte @60. Only these three cross the client boundary; 0..29 are replica-only. */
export const FrameCommand = { request: 5, reply: 8, eviction: 13 } as const;

/** The `operation` byte (core/binary_protocol/src/consensus/operation.rs). */
export const Operation = {
  reserved: 0,
  register: 1,
  nonReplicated: 2,
  logout: 3,
  createStream: 128,
  updateStream: 129,
  deleteStream: 130,
  purgeStream: 131,
  createTopic: 132,
  updateTopic: 133,
  deleteTopic: 134,
  purgeTopic: 135,
  createPartitions: 136,
  deletePartitions: 137,
  deleteSegments: 138,
  createConsumerGroup: 139,
  deleteConsumerGroup: 140,
  createUser: 141,
  updateUser: 142,
  deleteUser: 143,
  changePassword: 144,
  updatePermissions: 145,
  createPersonalAccessToken: 146,
  deletePersonalAccessToken: 147,
  joinConsumerGroup: 148,
  leaveConsumerGroup: 149,
  sendMessages: 160,
  storeConsumerOffset: 161,
  deleteConsumerOffset: 162,
} as const;
export type Operation = (typeof Operation)[keyof typeof Operation];

/** Where the operation byte sits in a frame header. */
export const operationOffset = 176;

/** Server-internal operations (64..127) are refused from clients. */
export const internalOperationMin = 64;
export const internalOperationMax = 127;

/**
 * Metadata-plane operations: replies are result-framed and deduplicated by (client, request).
 * DeleteSegments (138) sits in the band but is a partition truncation: the reference SDKs
 * (Operation::is_metadata) neither number it as a metadata request nor expect a result section.
 */
export function isMetadataOperation(op: number): boolean {
  return op >= Operation.createStream && op <= Operation.leaveConsumerGroup && op !== Operation.deleteSegments;
}

/** Eviction reasons (@255). Session-terminal; 0 is reserved and never sent. */
export const EvictionReason = {
  reserved: 0,
  noSession: 1,
  clientReleaseTooLow: 2,
  clientReleaseTooHigh: 3,
  invalidRequestOperation: 4,
  invalidRequestBody: 5,
  invalidRequestBodySize: 6,
  sessionTooLow: 7,
  sessionReleaseMismatch: 8,
  invalidCredentials: 9,
  invalidToken: 10,
  userInactive: 11,
  sessionError: 12,
  staleClient: 13,
  incompatibleProtocol: 14,
  malformedLogin: 15,
} as const;
export type EvictionReason = (typeof EvictionReason)[keyof typeof EvictionReason];

/** The IggyError an SDK raises for each eviction reason (foreign/node/src/wire/vsr/reply.ts). */
export const evictionSdkError: Readonly<Record<EvictionReason, number>> = {
  0: 3,
  1: 40,
  2: 3,
  3: 3,
  4: 3,
  5: 3,
  6: 3,
  7: 40,
  8: 40,
  9: 42,
  10: 53,
  11: 40,
  12: 40,
  13: 30,
  14: 14003,
  15: 4,
};

// ---------------------------------------------------------------------------------------------
// RequestHeader
//
// | Offset | Size | Field            | Type | Notes                                              |
// |--------|------|------------------|------|----------------------------------------------------|
// | 0      | 16   | checksum         | u128 | not used on client frames (zero)                   |
// | 16     | 16   | checksum_body    | u128 | not used on client frames (zero)                   |
// | 32     | 16   | cluster          | u128 | zero                                               |
// | 48     | 4    | size             | u32  | 256 + body length                                  |
// | 52     | 4    | view             | u32  | zero                                               |
// | 56     | 4    | release          | u32  | must be zero                                       |
// | 60     | 1    | command          | u8   | 5 (Request)                                        |
// | 61     | 1    | replica          | u8   | zero                                               |
// | 62     | 66   | reserved         |      | zero                                               |
// | 128    | 16   | client           | u128 | non-zero, minted per registration                  |
// | 144    | 16   | request_checksum | u128 | XXH3_64(body) widened, or 0                        |
// | 160    | 8    | timestamp        | u64  | echoed into the reply                              |
// | 168    | 8    | request          | u64  | per-client request number                          |
// | 176    | 1    | operation        | u8   | Operation discriminant                             |
// | 177    | 7    | padding          |      | zero                                               |
// | 184    | 8    | session          | u64  | fence epoch from the login reply; 0 on Register    |
// | 192    | 4    | user_id          | u32  | ignored from clients                               |
// | 196    | 60   | reserved         |      | zero, except operation 2: bytes 196..200 = code u32 |

export interface RequestHeader {
  checksum: bigint;
  checksumBody: bigint;
  cluster: bigint;
  size: number;
  view: number;
  release: number;
  command: number;
  replica: number;
  client: bigint;
  requestChecksum: bigint;
  timestamp: bigint;
  request: bigint;
  operation: number;
  session: bigint;
  userId: number;
  /** Bytes 196..200: the command code when operation = NonReplicated, else whatever was sent. */
  commandCode: number;
}

/** Reads every field; `bytes` holds at least 256 bytes. No validation (see validateRequestHeader). */
export function decodeRequestHeader(bytes: Buffer): RequestHeader {
  return {
    checksum: readU128(bytes, 0),
    checksumBody: readU128(bytes, 16),
    cluster: readU128(bytes, 32),
    size: bytes.readUInt32LE(48),
    view: bytes.readUInt32LE(52),
    release: bytes.readUInt32LE(56),
    command: bytes[60]!,
    replica: bytes[61]!,
    client: readU128(bytes, 128),
    requestChecksum: readU128(bytes, 144),
    timestamp: readU64(bytes, 160),
    request: readU64(bytes, 168),
    operation: bytes[operationOffset]!,
    session: readU64(bytes, 184),
    userId: bytes.readUInt32LE(192),
    commandCode: bytes.readUInt32LE(196),
  };
}

export interface RequestHeaderFields {
  size: number;
  client: bigint;
  request: bigint;
  operation: number;
  session: bigint;
  /** Written at 196..200 only when operation = NonReplicated. */
  commandCode?: number;
  requestChecksum?: bigint;
  timestamp?: bigint;
}

/** Encodes a client RequestHeader (what the SDK sends); unspecified and reserved bytes are zero. */
export function encodeRequestHeader(f: RequestHeaderFields): Buffer {
  const b = Buffer.alloc(headerBytes);
  b.writeUInt32LE(f.size, 48);
  b[60] = FrameCommand.request;
  writeU128(b, f.client, 128);
  writeU128(b, f.requestChecksum ?? 0n, 144);
  writeU64(b, f.timestamp ?? 0n, 160);
  writeU64(b, f.request, 168);
  b[176] = f.operation;
  writeU64(b, f.session, 184);
  if (f.operation === Operation.nonReplicated) b.writeUInt32LE(f.commandCode ?? 0, 196);
  return b;
}

/** How the server should answer a request it refuses. */
export type RequestRejection =
  /** The stream cannot be trusted (not a request frame, unusable size): drop the connection. */
  | { action: 'close'; reason: string }
  /** Session-terminal: send an Eviction frame with this reason, then close. */
  | { action: 'evict'; reason: string; eviction: EvictionReason }
  /** Per-request denial: a Reply with this status and an empty body. */
  | { action: 'status'; reason: string; status: number };

/**
 * Checks a frame's declared size before anything else is read or allocated. Used by the framer
 * on the first 52 bytes of every frame. Null when acceptable.
 */
export function checkFrameSize(size: number, frameBytesMax: number): string | null {
  if (size < headerBytes) return `frame size ${size} is below the ${headerBytes}-byte header`;
  if (size > frameBytesMax) return `frame size ${size} exceeds the maximum ${frameBytesMax}`;
  return null;
}

/**
 * Validates a request header the way the reference server does (`RequestHeader::validate` and
 * `validate_request_fields`): size within [256, max] (before the body is read), command 5,
 * release 0, client != 0, operation != 0 and not internal (64..127), Register requires
 * session == 0 && request == 0, every other operation but NonReplicated requires
 * session > 0 && request > 0. Null when acceptable.
 */
export function validateRequestHeader(h: RequestHeader, frameBytesMax = frameBytesMaxDefault): RequestRejection | null {
  const sizeProblem = checkFrameSize(h.size, frameBytesMax);
  if (sizeProblem !== null) {
    return h.size < headerBytes
      ? { action: 'close', reason: sizeProblem }
      : { action: 'evict', reason: sizeProblem, eviction: EvictionReason.invalidRequestBodySize };
  }
  if (h.command !== FrameCommand.request) return { action: 'close', reason: `command ${h.command} is not Request (5)` };
  if (h.release !== 0) return { action: 'evict', reason: `release ${h.release} must be 0`, eviction: EvictionReason.clientReleaseTooHigh };
  if (h.client === 0n) return { action: 'close', reason: 'client id must be non-zero' };
  const op = h.operation;
  if (op === Operation.reserved) {
    return { action: 'evict', reason: 'operation 0 is reserved', eviction: EvictionReason.invalidRequestOperation };
  }
  if (op >= internalOperationMin && op <= internalOperationMax) {
    return { action: 'evict', reason: `operation ${op} is server-internal`, eviction: EvictionReason.invalidRequestOperation };
  }
  if (op === Operation.register) {
    if (h.session !== 0n || h.request !== 0n) {
      return { action: 'evict', reason: 'register requires session 0 and request 0', eviction: EvictionReason.sessionError };
    }
  } else if (op !== Operation.nonReplicated) {
    if (h.session === 0n) return { action: 'evict', reason: 'session must be > 0', eviction: EvictionReason.noSession };
    if (h.request === 0n) return { action: 'evict', reason: 'request must be > 0', eviction: EvictionReason.sessionError };
  }
  return null;
}

/** XXH3-64 (seed 0) of the request body, widened to u128 as the server does. */
export function requestBodyChecksum(body: Uint8Array): bigint {
  return xxh3(body);
}

/** True when `request_checksum` is zero (unstamped) or equals `u128::from(XXH3_64(body))`. */
export function verifyRequestChecksum(h: RequestHeader, body: Uint8Array): boolean {
  if (h.requestChecksum === 0n) return true;
  return h.requestChecksum === requestBodyChecksum(body);
}

// ---------------------------------------------------------------------------------------------
// ReplyHeader
//
// | Offset | Size | Field            | Type | Notes                                              |
// |--------|------|------------------|------|----------------------------------------------------|
// | 0      | 16   | checksum         | u128 | zero on client frames                              |
// | 16     | 16   | checksum_body    | u128 | zero on client frames                              |
// | 32     | 16   | cluster          | u128 | copied from the request                            |
// | 48     | 4    | size             | u32  | 256 + body length                                  |
// | 52     | 4    | view             | u32  | copied from the request                            |
// | 56     | 4    | release          | u32  | copied from the request (0)                        |
// | 60     | 1    | command          | u8   | 8 (Reply)                                          |
// | 61     | 1    | replica          | u8   | copied from the request                            |
// | 62     | 66   | reserved         |      | zero                                               |
// | 128    | 16   | request_checksum | u128 | echoed                                             |
// | 144    | 16   | context          | u128 | server context                                     |
// | 160    | 16   | client           | u128 | echoed                                             |
// | 176    | 8    | op               | u64  | = session (build_reply_with_body)                  |
// | 184    | 8    | commit           | u64  | current metadata commit                            |
// | 192    | 8    | timestamp        | u64  | echoed                                             |
// | 200    | 8    | request          | u64  | echoed                                             |
// | 208    | 1    | operation        | u8   | echoed (+7 padding)                                |
// | 216    | 4    | status           | u32  | 0 = accepted; else IggyError code, empty body      |
// | 220    | 36   | reserved         |      | zero                                               |

export interface ReplyHeader {
  cluster: bigint;
  size: number;
  view: number;
  release: number;
  command: number;
  replica: number;
  requestChecksum: bigint;
  context: bigint;
  client: bigint;
  op: bigint;
  commit: bigint;
  timestamp: bigint;
  request: bigint;
  operation: number;
  status: number;
}

export function decodeReplyHeader(bytes: Buffer): ReplyHeader {
  return {
    cluster: readU128(bytes, 32),
    size: bytes.readUInt32LE(48),
    view: bytes.readUInt32LE(52),
    release: bytes.readUInt32LE(56),
    command: bytes[60]!,
    replica: bytes[61]!,
    requestChecksum: readU128(bytes, 128),
    context: readU128(bytes, 144),
    client: readU128(bytes, 160),
    op: readU64(bytes, 176),
    commit: readU64(bytes, 184),
    timestamp: readU64(bytes, 192),
    request: readU64(bytes, 200),
    operation: bytes[208]!,
    status: bytes.readUInt32LE(216),
  };
}

export function encodeReplyHeader(h: Omit<ReplyHeader, 'command'>): Buffer {
  const b = Buffer.alloc(headerBytes);
  writeU128(b, h.cluster, 32);
  b.writeUInt32LE(h.size, 48);
  b.writeUInt32LE(h.view, 52);
  b.writeUInt32LE(h.release, 56);
  b[60] = FrameCommand.reply;
  b[61] = h.replica;
  writeU128(b, h.requestChecksum, 128);
  writeU128(b, h.context, 144);
  writeU128(b, h.client, 160);
  writeU64(b, h.op, 176);
  writeU64(b, h.commit, 184);
  writeU64(b, h.timestamp, 192);
  writeU64(b, h.request, 200);
  b[208] = h.operation;
  b.writeUInt32LE(h.status, 216);
  return b;
}

export interface ReplyOptions {
  /** The session epoch (`op` = session, build_reply_with_body); for Register, the new session. */
  session: bigint;
  /** Current metadata commit. */
  commit: bigint;
  /** 0 = accepted. A non-zero status always travels with an empty body. */
  status?: number;
  context?: bigint;
}

/**
 * A whole Reply frame answering `request`, as a chunk list: [header, ...body]. Echoes cluster,
 * view, release, replica, request_checksum, client, timestamp, request and operation.
 */
export function encodeReplyFrame<T extends { readonly length: number } = Buffer>(request: RequestHeader, body: readonly T[], o: ReplyOptions): Array<Buffer | T> {
  const status = o.status ?? 0;
  let bodyBytes = 0;
  for (const c of body) bodyBytes += c.length;
  if (status !== 0 && bodyBytes !== 0) throw new RangeError('a non-zero status reply carries an empty body');
  const header = encodeReplyHeader({
    cluster: request.cluster,
    size: headerBytes + bodyBytes,
    view: request.view,
    release: request.release,
    replica: request.replica,
    requestChecksum: request.requestChecksum,
    context: o.context ?? 0n,
    client: request.client,
    op: o.session,
    commit: o.commit,
    timestamp: request.timestamp,
    request: request.request,
    operation: request.operation,
    status,
  });
  return [header, ...body];
}

// ---------------------------------------------------------------------------------------------
// EvictionHeader (no body, size = 256)
//
// | Offset | Size | Field                       | Type | Notes                                |
// |--------|------|-----------------------------|------|--------------------------------------|
// | 0      | 16   | checksum                    | u128 | zero                                 |
// | 16     | 16   | checksum_body               | u128 | zero                                 |
// | 32     | 16   | cluster                     | u128 |                                      |
// | 48     | 4    | size                        | u32  | always 256                           |
// | 52     | 4    | view                        | u32  |                                      |
// | 56     | 4    | release                     | u32  | zero                                 |
// | 60     | 1    | command                     | u8   | 13 (Eviction)                        |
// | 61     | 1    | replica                     | u8   |                                      |
// | 62     | 66   | reserved                    |      | zero                                 |
// | 128    | 16   | client                      | u128 | the evicted client id (non-zero)     |
// | 144    | 4    | server_protocol_version     | u32  | reason 14 only, else zero            |
// | 148    | 4    | server_protocol_version_min | u32  | reason 14 only, else zero            |
// | 152    | 103  | reserved                    |      | zero                                 |
// | 255    | 1    | reason                      | u8   | EvictionReason, never 0              |

export interface EvictionHeader {
  cluster: bigint;
  view: number;
  replica: number;
  client: bigint;
  reason: EvictionReason;
  serverProtocolVersion: number;
  serverProtocolVersionMin: number;
}

export function encodeEviction(e: Partial<EvictionHeader> & Pick<EvictionHeader, 'client' | 'reason'>): Buffer {
  const b = Buffer.alloc(headerBytes);
  writeU128(b, e.cluster ?? 0n, 32);
  b.writeUInt32LE(headerBytes, 48);
  b.writeUInt32LE(e.view ?? 0, 52);
  b[60] = FrameCommand.eviction;
  b[61] = e.replica ?? 0;
  writeU128(b, e.client, 128);
  if (e.reason === EvictionReason.incompatibleProtocol) {
    b.writeUInt32LE(e.serverProtocolVersion ?? 0, 144);
    b.writeUInt32LE(e.serverProtocolVersionMin ?? 0, 148);
  }
  b[255] = e.reason;
  return b;
}

/** An Eviction header as a client reads it: `reason` may be any byte (see decodeEvictionLenient). */
export interface ReceivedEviction extends Omit<EvictionHeader, 'reason'> {
  reason: number;
}

/**
 * Decodes an Eviction header the way the SDK reads one: the framing is checked (256 bytes,
 * command 13, size 256, reserved bytes zero, client != 0), the reason and the version window are
 * not. The session is over whatever they say, so they are left to the SDK's error mapping (server
 * notes §3, foreign/node/src/wire/vsr/reply.ts): an unknown reason becomes InvalidCommand (3), an
 * IncompatibleProtocol (14) whose window is not 1 <= min <= max becomes Unauthenticated (40).
 */
export function decodeEvictionLenient(bytes: Buffer): ReceivedEviction | string {
  if (bytes.length < headerBytes) return 'eviction shorter than 256 bytes';
  if (bytes[60] !== FrameCommand.eviction) return `command ${bytes[60]} is not Eviction (13)`;
  if (bytes.readUInt32LE(48) !== headerBytes) return 'eviction size must be 256';
  if (!isZero(bytes, 62, 128) || !isZero(bytes, 152, 255)) return 'eviction reserved bytes must be zero';
  const client = readU128(bytes, 128);
  if (client === 0n) return 'eviction client must be non-zero';
  return {
    cluster: readU128(bytes, 32),
    view: bytes.readUInt32LE(52),
    replica: bytes[61]!,
    client,
    reason: bytes[255]!,
    serverProtocolVersion: bytes.readUInt32LE(144),
    serverProtocolVersionMin: bytes.readUInt32LE(148),
  };
}

/**
 * Decodes and validates an Eviction header strictly (EvictionHeader::validate), for checking what
 * a server sends: decodeEvictionLenient's framing checks, then reason != 0 (and known), window
 * only on reason 14 with 1 <= min <= max.
 */
export function decodeEviction(bytes: Buffer): EvictionHeader | string {
  const e = decodeEvictionLenient(bytes);
  if (typeof e === 'string') return e;
  const { reason, serverProtocolVersion, serverProtocolVersionMin } = e;
  if (reason === 0 || reason > EvictionReason.malformedLogin) return `eviction reason ${reason} is not valid`;
  if (reason === EvictionReason.incompatibleProtocol) {
    if (serverProtocolVersionMin === 0 || serverProtocolVersion < serverProtocolVersionMin) {
      return 'incompatible-protocol window must satisfy 1 <= min <= max';
    }
  } else if (serverProtocolVersion !== 0 || serverProtocolVersionMin !== 0) {
    return 'protocol window bytes must be zero unless reason is 14';
  }
  return { ...e, reason: reason as EvictionReason };
}

function isZero(b: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (b[i] !== 0) return false;
  return true;
}
