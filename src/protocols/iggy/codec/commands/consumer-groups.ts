// Consumer groups: GetConsumerGroup (600), GetConsumerGroups (601), CreateConsumerGroup (602,
// op 139, R:), DeleteConsumerGroup (603, op 140, R: empty), JoinConsumerGroup (604, op 148,
// R: empty), LeaveConsumerGroup (605, op 149, R: empty), SyncConsumerGroup (606, NonReplicated).
// Server notes §7 "Consumer groups", core/binary_protocol/src/responses/consumer_groups/*.
//
// Requests:
//   Get / Delete / Join / Leave / Sync := [stream_id Identifier][topic_id Identifier]
//                                         [group_id Identifier]
//   GetConsumerGroups := [stream_id Identifier][topic_id Identifier]
//   Create := [stream_id Identifier][topic_id Identifier][name Name]
// Replies:
//   ConsumerGroupResponse := [id u32][partitions_count u32][members_count u32][name Name]
//   Member := [id u32][partitions_count u32][partition_id u32 × n]
//   Get    := ConsumerGroupResponse | Member × members_count   (empty body: unknown group)
//   List   := ConsumerGroupResponse*   (no count prefix)
//   Create := R: ConsumerGroupResponse with members_count 0
//   Sync   := [generation u64][partitions_count u32][partition_id u32 × n] (empty on failure)

import { Reader, Writer } from '../primitives.js';
import { checkCount, readName, writeName } from '../values.js';
import { readTopicRef, readUntilEnd, writeAll, writeTopicRef, type TopicRef } from './common.js';

export interface CreateConsumerGroupRequest extends TopicRef {
  name: string;
}

export function readCreateConsumerGroupRequest(r: Reader): CreateConsumerGroupRequest {
  const ref = readTopicRef(r);
  const name = readName(r);
  return { ...ref, name };
}

export function writeCreateConsumerGroupRequest(w: Writer, v: CreateConsumerGroupRequest): void {
  writeTopicRef(w, v);
  writeName(w, v.name);
}

export interface ConsumerGroupInfo {
  id: number;
  partitionsCount: number;
  membersCount: number;
  name: string;
}

export interface ConsumerGroupMember {
  id: number;
  partitions: number[];
}

export interface ConsumerGroupDetails extends ConsumerGroupInfo {
  members: ConsumerGroupMember[];
}

export function readConsumerGroupInfo(r: Reader): ConsumerGroupInfo {
  return {
    id: r.u32('group id'),
    partitionsCount: r.u32('partitions_count'),
    membersCount: r.u32('members_count'),
    name: readName(r),
  };
}

export function writeConsumerGroupInfo(w: Writer, v: ConsumerGroupInfo): void {
  w.u32(v.id).u32(v.partitionsCount).u32(v.membersCount);
  writeName(w, v.name);
}

function readPartitionIds(r: Reader, what: string): number[] {
  const count = r.u32(`${what} partitions_count`);
  const out: number[] = [];
  if (checkCount(r, count, 4, `${what} partitions`)) for (let i = 0; i < count; i++) out.push(r.u32('partition_id'));
  return out;
}

function writePartitionIds(w: Writer, ids: readonly number[]): void {
  w.u32(ids.length);
  for (const id of ids) w.u32(id);
}

export function readConsumerGroupDetails(r: Reader): ConsumerGroupDetails {
  const info = readConsumerGroupInfo(r);
  const members: ConsumerGroupMember[] = [];
  if (checkCount(r, info.membersCount, 8, 'members')) {
    for (let i = 0; i < info.membersCount && r.ok; i++) {
      const id = r.u32('member id');
      members.push({ id, partitions: readPartitionIds(r, 'member') });
    }
  }
  return { ...info, members };
}

/** members_count is written from the list. */
export function writeConsumerGroupDetails(w: Writer, v: ConsumerGroupDetails): void {
  writeConsumerGroupInfo(w, { ...v, membersCount: v.members.length });
  for (const m of v.members) {
    w.u32(m.id);
    writePartitionIds(w, m.partitions);
  }
}

export function readConsumerGroupList(r: Reader): ConsumerGroupInfo[] {
  return readUntilEnd(r, readConsumerGroupInfo);
}

export function writeConsumerGroupList(w: Writer, v: readonly ConsumerGroupInfo[]): void {
  writeAll(w, v, writeConsumerGroupInfo);
}

export interface ConsumerGroupAssignment {
  generation: bigint;
  partitions: number[];
}

export function readConsumerGroupAssignment(r: Reader): ConsumerGroupAssignment {
  const generation = r.u64('generation');
  return { generation, partitions: readPartitionIds(r, 'assignment') };
}

export function writeConsumerGroupAssignment(w: Writer, v: ConsumerGroupAssignment): void {
  w.u64(v.generation);
  writePartitionIds(w, v.partitions);
}
