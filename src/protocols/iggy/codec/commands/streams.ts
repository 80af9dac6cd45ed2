// Stream commands: GetStream (200), GetStreams (201), CreateStream (202, op 128, R:),
// DeleteStream (203, op 130, R: empty), UpdateStream (204, op 129, R: empty),
// PurgeStream (205, op 131, R: empty). Server notes §7 "Streams".
//
// Requests:
//   GetStream / DeleteStream / PurgeStream := [stream_id Identifier]
//   CreateStream := [name Name][options block to end]
//   UpdateStream := [stream_id Identifier][name Name][options block to end]
// Replies:
//   StreamResponse (33 fixed bytes) := id u32 @0 | created_at u64 @4 | topics_count u32 @12
//     | size_bytes u64 @16 | messages_count u64 @24 | name_len u8 @32 | name @33
//     | options_len u32 + TLV (explicit options)
//   GetStream  := StreamResponse | TopicHeader × topics_count   (empty body: unknown stream)
//   GetStreams := StreamResponse*                                (no count prefix)
//   CreateStream := R: StreamResponse with 0 topics

import { Reader, Writer } from '../primitives.js';
import { checkCount, readIdentifier, readName, readOptionsToEnd, readPrefixedOptions, writeIdentifier, writeName, writeOptions, writePrefixedOptions, type Identifier, type OptionEntry } from '../values.js';
import { readUntilEnd, writeAll } from './common.js';
import { readTopicInfo, topicHeaderFixedBytes, writeTopicInfo, type TopicInfo } from './topics.js';

export interface CreateStreamRequest {
  name: string;
  options: OptionEntry[];
}

export function readCreateStreamRequest(r: Reader): CreateStreamRequest {
  const name = readName(r);
  const options = readOptionsToEnd(r);
  return { name, options };
}

export function writeCreateStreamRequest(w: Writer, v: CreateStreamRequest): void {
  writeName(w, v.name);
  writeOptions(w, v.options);
}

export interface UpdateStreamRequest {
  streamId: Identifier;
  name: string;
  options: OptionEntry[];
}

export function readUpdateStreamRequest(r: Reader): UpdateStreamRequest {
  const streamId = readIdentifier(r, 'stream_id');
  const name = readName(r);
  const options = readOptionsToEnd(r);
  return { streamId, name, options };
}

export function writeUpdateStreamRequest(w: Writer, v: UpdateStreamRequest): void {
  writeIdentifier(w, v.streamId);
  writeName(w, v.name);
  writeOptions(w, v.options);
}

export interface StreamInfo {
  id: number;
  createdAt: bigint;
  topicsCount: number;
  sizeBytes: bigint;
  messagesCount: bigint;
  name: string;
  options: OptionEntry[];
}

export interface StreamDetails extends StreamInfo {
  topics: TopicInfo[];
}

export function readStreamInfo(r: Reader): StreamInfo {
  return {
    id: r.u32('stream id'),
    createdAt: r.u64('created_at'),
    topicsCount: r.u32('topics_count'),
    sizeBytes: r.u64('size_bytes'),
    messagesCount: r.u64('messages_count'),
    name: readName(r),
    options: readPrefixedOptions(r),
  };
}

export function writeStreamInfo(w: Writer, v: StreamInfo): void {
  w.u32(v.id).u64(v.createdAt).u32(v.topicsCount).u64(v.sizeBytes).u64(v.messagesCount);
  writeName(w, v.name);
  writePrefixedOptions(w, v.options);
}

export function readStreamDetails(r: Reader): StreamDetails {
  const info = readStreamInfo(r);
  const topics: TopicInfo[] = [];
  if (checkCount(r, info.topicsCount, topicHeaderFixedBytes + 1 + 8, 'topics')) {
    for (let i = 0; i < info.topicsCount && r.ok; i++) topics.push(readTopicInfo(r));
  }
  return { ...info, topics };
}

/** topics_count is written from the list. */
export function writeStreamDetails(w: Writer, v: StreamDetails): void {
  writeStreamInfo(w, { ...v, topicsCount: v.topics.length });
  for (const t of v.topics) writeTopicInfo(w, t);
}

export function readStreamList(r: Reader): StreamInfo[] {
  return readUntilEnd(r, readStreamInfo);
}

export function writeStreamList(w: Writer, v: readonly StreamInfo[]): void {
  writeAll(w, v, writeStreamInfo);
}
