// Consumer offsets: GetConsumerOffset (120, NonReplicated), StoreConsumerOffset (121, op 161,
// R: empty), DeleteConsumerOffset (122, op 162, R: empty). specs "Consumer offsets".
//
//   Get    := [consumer Consumer][stream_id Identifier][topic_id Identifier]
//             [partition_flag u8][partition_id u32]
//   Store  := Get fields | [offset u64][ack u8]
//   Delete := Get fields | [ack u8]                (the ack byte is mandatory on both writes)
//   Get reply := [partition_id u32][current_offset u64][stored_offset u64] (20 bytes),
//                or an empty body when nothing is stored
// Ack levels: 0 NoAck (leader-local), 1 Quorum.

import { Reader, Writer } from '../primitives.js';
import { readConsumer, readIdentifier, readOptionalPartition, writeConsumer, writeIdentifier, writeOptionalPartition, type Consumer, type Identifier } from '../values.js';

export const AckLevel = { noAck: 0, quorum: 1 } as const;

export interface ConsumerOffsetRef {
  consumer: Consumer;
  streamId: Identifier;
  topicId: Identifier;
  partitionId: number | null;
}

function readRef(r: Reader): ConsumerOffsetRef {
  const consumer = readConsumer(r);
  const streamId = readIdentifier(r, 'stream_id');
  const topicId = readIdentifier(r, 'topic_id');
  const partitionId = readOptionalPartition(r);
  return { consumer, streamId, topicId, partitionId };
}

function writeRef(w: Writer, v: ConsumerOffsetRef): void {
  writeConsumer(w, v.consumer);
  writeIdentifier(w, v.streamId);
  writeIdentifier(w, v.topicId);
  writeOptionalPartition(w, v.partitionId);
}

function readAck(r: Reader): number {
  const ack = r.u8('ack');
  if (r.ok && ack > AckLevel.quorum) r.fail(`unknown ack level ${ack}`);
  return ack;
}

export type GetConsumerOffsetRequest = ConsumerOffsetRef;
export const readGetConsumerOffsetRequest = readRef;
export const writeGetConsumerOffsetRequest = writeRef;

export interface StoreConsumerOffsetRequest extends ConsumerOffsetRef {
  offset: bigint;
  ack: number;
}

export function readStoreConsumerOffsetRequest(r: Reader): StoreConsumerOffsetRequest {
  const ref = readRef(r);
  const offset = r.u64('offset');
  const ack = readAck(r);
  return { ...ref, offset, ack };
}

export function writeStoreConsumerOffsetRequest(w: Writer, v: StoreConsumerOffsetRequest): void {
  writeRef(w, v);
  w.u64(v.offset).u8(v.ack);
}

export interface DeleteConsumerOffsetRequest extends ConsumerOffsetRef {
  ack: number;
}

export function readDeleteConsumerOffsetRequest(r: Reader): DeleteConsumerOffsetRequest {
  const ref = readRef(r);
  const ack = readAck(r);
  return { ...ref, ack };
}

export function writeDeleteConsumerOffsetRequest(w: Writer, v: DeleteConsumerOffsetRequest): void {
  writeRef(w, v);
  w.u8(v.ack);
}

export interface ConsumerOffsetInfo {
  partitionId: number;
  currentOffset: bigint;
  storedOffset: bigint;
}

export function readConsumerOffsetInfo(r: Reader): ConsumerOffsetInfo {
  return { partitionId: r.u32('partition_id'), currentOffset: r.u64('current_offset'), storedOffset: r.u64('stored_offset') };
}

export function writeConsumerOffsetInfo(w: Writer, v: ConsumerOffsetInfo): void {
  w.u32(v.partitionId).u64(v.currentOffset).u64(v.storedOffset);
}
