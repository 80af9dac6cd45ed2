// Pieces shared by the command codecs: empty bodies, the result section of result-framed replies,
// and the identifier tuples many requests start with.
//
// Result section (server notes §4, consensus/reply_result.rs):
//   success   := count u32 = 0 | typed payload           (empty payload => body is 00000000)
//   rejection := count u32 = 1 | index u32 = 0 | code u32 (12 bytes, no payload)

import { Reader, Writer } from '../primitives.js';
import { readIdentifier, writeIdentifier, type Identifier } from '../values.js';

export type Empty = Record<string, never>;
export const empty: Empty = {};

export function readEmpty(_r: Reader): Empty {
  return empty;
}

export function writeEmpty(_w: Writer, _value: Empty): void {}

/** The committed business rejection body: count 1, {index 0, code}. */
export function encodeResultError(code: number): Buffer {
  const b = Buffer.alloc(12);
  b.writeUInt32LE(1, 0);
  b.writeUInt32LE(code, 8);
  return b;
}

/** Reads the result section of a result-framed reply: the rejection code, or null for success. */
export function readResultSection(r: Reader): number | null {
  const count = r.u32('result count');
  if (!r.ok || count === 0) return null;
  if (count !== 1) {
    r.fail(`result count ${count}: a client reply carries 0 or 1 results`);
    return null;
  }
  const index = r.u32('result index');
  const code = r.u32('result code');
  if (r.ok && index !== 0) r.fail(`result index ${index} must be 0`);
  if (r.ok && code === 0) r.fail('a committed rejection carries a non-zero code');
  return code;
}

/**
 * Splits a result-framed body: `{ rejected: code }` for a committed rejection (12 bytes exactly),
 * or `{ payload }` (the bytes after the 00000000 prefix). A reason string when malformed.
 */
export function splitResultFramed(body: Buffer): { rejected: number } | { payload: Buffer } | string {
  const r = new Reader(body);
  const code = readResultSection(r);
  if (!r.ok) return r.error!;
  if (code !== null) {
    const problem = r.done();
    return problem === null ? { rejected: code } : problem;
  }
  return { payload: r.rest() };
}

export interface StreamRef {
  streamId: Identifier;
}

export interface TopicRef {
  streamId: Identifier;
  topicId: Identifier;
}

export interface GroupRef {
  streamId: Identifier;
  topicId: Identifier;
  groupId: Identifier;
}

/** [stream_id Identifier] */
export function readStreamRef(r: Reader): StreamRef {
  return { streamId: readIdentifier(r, 'stream_id') };
}

export function writeStreamRef(w: Writer, v: StreamRef): void {
  writeIdentifier(w, v.streamId);
}

/** [stream_id Identifier][topic_id Identifier] */
export function readTopicRef(r: Reader): TopicRef {
  const streamId = readIdentifier(r, 'stream_id');
  const topicId = readIdentifier(r, 'topic_id');
  return { streamId, topicId };
}

export function writeTopicRef(w: Writer, v: TopicRef): void {
  writeIdentifier(w, v.streamId);
  writeIdentifier(w, v.topicId);
}

/** [stream_id Identifier][topic_id Identifier][group_id Identifier] */
export function readGroupRef(r: Reader): GroupRef {
  const streamId = readIdentifier(r, 'stream_id');
  const topicId = readIdentifier(r, 'topic_id');
  const groupId = readIdentifier(r, 'group_id');
  return { streamId, topicId, groupId };
}

export function writeGroupRef(w: Writer, v: GroupRef): void {
  writeIdentifier(w, v.streamId);
  writeIdentifier(w, v.topicId);
  writeIdentifier(w, v.groupId);
}

/** A reply that is either a payload or an empty body (the SDK's `null`: not found). */
export function readOptional<T>(r: Reader, read: (r: Reader) => T): T | null {
  return r.remaining === 0 ? null : read(r);
}

export function writeOptional<T>(w: Writer, value: T | null, write: (w: Writer, v: T) => void): void {
  if (value !== null) write(w, value);
}

/** A list with no count prefix: elements until the body ends. */
export function readUntilEnd<T>(r: Reader, read: (r: Reader) => T): T[] {
  const out: T[] = [];
  while (r.ok && r.remaining > 0) out.push(read(r));
  return out;
}

export function writeAll<T>(w: Writer, values: readonly T[], write: (w: Writer, v: T) => void): void {
  for (const v of values) write(w, v);
}
