// Topic commands: GetTopic (300), GetTopics (301), CreateTopic (302, op 132, R:),
// DeleteTopic (303, op 134, R: empty), UpdateTopic (304, op 133, R: empty),
// PurgeTopic (305, op 135, R: empty). Server notes §7 "Topics and partitions".
//
// Requests:
//   GetTopic / DeleteTopic / PurgeTopic := [stream_id Identifier][topic_id Identifier]
//   GetTopics   := [stream_id Identifier]
//   CreateTopic := [stream_id Identifier][partitions_count u32][name Name][options block to end]
//   UpdateTopic := [stream_id Identifier][topic_id Identifier][name Name][options block to end]
// Replies:
//   TopicHeader (50 fixed bytes) := id u32 @0 | created_at u64 @4 | partitions_count u32 @12
//     | message_expiry u64 @16 (0 server default, u64::MAX never) | compression_algorithm u8 @24
//     | max_topic_size u64 @25 (0 server default, u64::MAX unlimited) | size_bytes u64 @33
//     | messages_count u64 @41 | name_len u8 @49 | name @50
//     | explicit_len u32 + TLV | derived_len u32 + TLV
//   PartitionResponse (40 bytes) := id u32 | created_at u64 | segments_count u32
//     | current_offset u64 | size_bytes u64 | messages_count u64
//   GetTopic   := TopicHeader | PartitionResponse × partitions_count   (empty body: not found)
//   GetTopics  := topics_count u32 | TopicHeader*   (the only count-prefixed list)
//   CreateTopic:= R: GetTopic layout (size_bytes, messages_count, segments_count,
//                 current_offset all 0)

import { Reader, Writer } from '../primitives.js';
import { checkCount, readIdentifier, readName, readOptionsToEnd, readPrefixedOptions, writeIdentifier, writeName, writeOptions, writePrefixedOptions, type Identifier, type OptionEntry } from '../values.js';

export const CompressionAlgorithm = { none: 1, gzip: 2 } as const;
export const partitionResponseBytes = 40;
export const topicHeaderFixedBytes = 50;

export interface CreateTopicRequest {
  streamId: Identifier;
  partitionsCount: number;
  name: string;
  options: OptionEntry[];
}

export function readCreateTopicRequest(r: Reader): CreateTopicRequest {
  const streamId = readIdentifier(r, 'stream_id');
  const partitionsCount = r.u32('partitions_count');
  const name = readName(r);
  const options = readOptionsToEnd(r);
  return { streamId, partitionsCount, name, options };
}

export function writeCreateTopicRequest(w: Writer, v: CreateTopicRequest): void {
  writeIdentifier(w, v.streamId);
  w.u32(v.partitionsCount);
  writeName(w, v.name);
  writeOptions(w, v.options);
}

export interface UpdateTopicRequest {
  streamId: Identifier;
  topicId: Identifier;
  name: string;
  options: OptionEntry[];
}

export function readUpdateTopicRequest(r: Reader): UpdateTopicRequest {
  const streamId = readIdentifier(r, 'stream_id');
  const topicId = readIdentifier(r, 'topic_id');
  const name = readName(r);
  const options = readOptionsToEnd(r);
  return { streamId, topicId, name, options };
}

export function writeUpdateTopicRequest(w: Writer, v: UpdateTopicRequest): void {
  writeIdentifier(w, v.streamId);
  writeIdentifier(w, v.topicId);
  writeName(w, v.name);
  writeOptions(w, v.options);
}

export interface TopicInfo {
  id: number;
  createdAt: bigint;
  partitionsCount: number;
  messageExpiry: bigint;
  compressionAlgorithm: number;
  maxTopicSize: bigint;
  sizeBytes: bigint;
  messagesCount: bigint;
  name: string;
  /** Keys the client sent. */
  explicitOptions: OptionEntry[];
  /** Defaults resolved at admission. */
  derivedOptions: OptionEntry[];
}

export interface PartitionInfo {
  id: number;
  createdAt: bigint;
  segmentsCount: number;
  currentOffset: bigint;
  sizeBytes: bigint;
  messagesCount: bigint;
}

export interface TopicDetails extends TopicInfo {
  partitions: PartitionInfo[];
}

export function readTopicInfo(r: Reader): TopicInfo {
  return {
    id: r.u32('topic id'),
    createdAt: r.u64('created_at'),
    partitionsCount: r.u32('partitions_count'),
    messageExpiry: r.u64('message_expiry'),
    compressionAlgorithm: r.u8('compression_algorithm'),
    maxTopicSize: r.u64('max_topic_size'),
    sizeBytes: r.u64('size_bytes'),
    messagesCount: r.u64('messages_count'),
    name: readName(r),
    explicitOptions: readPrefixedOptions(r, 'explicit options'),
    derivedOptions: readPrefixedOptions(r, 'derived options'),
  };
}

export function writeTopicInfo(w: Writer, v: TopicInfo): void {
  w.u32(v.id).u64(v.createdAt).u32(v.partitionsCount).u64(v.messageExpiry).u8(v.compressionAlgorithm);
  w.u64(v.maxTopicSize).u64(v.sizeBytes).u64(v.messagesCount);
  writeName(w, v.name);
  writePrefixedOptions(w, v.explicitOptions);
  writePrefixedOptions(w, v.derivedOptions);
}

export function readPartitionInfo(r: Reader): PartitionInfo {
  return {
    id: r.u32('partition id'),
    createdAt: r.u64('created_at'),
    segmentsCount: r.u32('segments_count'),
    currentOffset: r.u64('current_offset'),
    sizeBytes: r.u64('size_bytes'),
    messagesCount: r.u64('messages_count'),
  };
}

export function writePartitionInfo(w: Writer, v: PartitionInfo): void {
  w.u32(v.id).u64(v.createdAt).u32(v.segmentsCount).u64(v.currentOffset).u64(v.sizeBytes).u64(v.messagesCount);
}

export function readTopicDetails(r: Reader): TopicDetails {
  const info = readTopicInfo(r);
  const partitions: PartitionInfo[] = [];
  if (checkCount(r, info.partitionsCount, partitionResponseBytes, 'partitions')) {
    for (let i = 0; i < info.partitionsCount; i++) partitions.push(readPartitionInfo(r));
  }
  return { ...info, partitions };
}

/** partitions_count is written from the list. */
export function writeTopicDetails(w: Writer, v: TopicDetails): void {
  writeTopicInfo(w, { ...v, partitionsCount: v.partitions.length });
  for (const p of v.partitions) writePartitionInfo(w, p);
}

export function readTopicList(r: Reader): TopicInfo[] {
  const count = r.u32('topics_count');
  const out: TopicInfo[] = [];
  if (checkCount(r, count, topicHeaderFixedBytes + 1 + 8, 'topics')) for (let i = 0; i < count && r.ok; i++) out.push(readTopicInfo(r));
  return out;
}

export function writeTopicList(w: Writer, v: readonly TopicInfo[]): void {
  w.u32(v.length);
  for (const t of v) writeTopicInfo(w, t);
}
