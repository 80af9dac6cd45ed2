// Who a poll or an offset call is for (server notes §6 "Consumer"), and where its offset lives.
//
// Offsets are kept in the core OffsetStore under scope `iggy`, one offset "group" per
// (consumer, topic, partition): `c:n:<id>` for a consumer, `g:<group id>` for a consumer group, suffixed with `|<topic internal id>|<partition>` (so DeleteConsumerOffset removes
// exactly one entry). The stored value is Iggy's: the offset of the last consumed message
// (PollingKind.Next resumes at stored + 1), not Kafka's next-to-consume.

import { xxh32 } from '@node-rs/xxhash';
import type { Topic } from '../../core/catalog.js';
import { IggyErrorCode, ConsumerKind, type Consumer } from './codec/index.js';
import { IggyFailure } from './errors.js';
import type { IggyFrontend, IggySession } from './frontend.js';
import type { IggyGroup, IggyGroupMember } from './groups.js';
import { requirePartition } from './mapping.js';

export const iggyOffsetScope = 'iggy';

export interface ResolvedConsumer {
  /** OffsetStore group key prefix. */
  key: string;
  group: IggyGroup | null;
  member: IggyGroupMember | null;
}

/**
 * The numeric id of a consumer named by id or by name: a name stands for XXH32(name, seed 0), as
 * the reference server resolves it (`iggy_common::calculate_32`), so a consumer polling as "app"
 * and one polling as id XXH32("app") share their offsets there and here.
 */
export function consumerNumericId(id: Consumer['id']): number {
  return id.kind === 'numeric' ? id.value : xxh32(Buffer.from(id.value, 'utf8'), 0);
}

/** The consumer and where its offsets live; 5000/5003 (status) for a group that does not exist. */
export function resolveConsumer(frontend: IggyFrontend, session: IggySession, topic: Topic, consumer: Consumer): ResolvedConsumer {
  const found = findConsumer(frontend, session, topic, consumer);
  if (found === null) {
    throw new IggyFailure(consumer.id.kind === 'numeric' ? IggyErrorCode.consumerGroupIdNotFound : IggyErrorCode.consumerGroupNameNotFound, 'status');
  }
  return found;
}

/** The consumer and where its offsets live, or null for a consumer group that does not exist. */
export function findConsumer(frontend: IggyFrontend, session: IggySession, topic: Topic, consumer: Consumer): ResolvedConsumer | null {
  if (consumer.kind === ConsumerKind.consumer) return { key: `c:n:${consumerNumericId(consumer.id)}`, group: null, member: null };
  const group = frontend.groups.find(topic, consumer.id);
  return group === null ? null : { key: `g:${group.id}`, group, member: group.members.get(session.connectionId) ?? null };
}

/** The partition of an offset call: as given, or 0. */
export function offsetPartition(topic: Topic, partitionId: number | null): number {
  return requirePartition(topic, partitionId ?? 0);
}

/**
 * The reference server's fence on a consumer group's offset writes (Store/DeleteConsumerOffset):
 * the call must name a partition (else status 6) that the caller, a member, owns now (else status
 * 5009, ConsumerGroupPartitionNotOwned). So a member that lost a partition in a rebalance cannot
 * overwrite its new owner's offset. A plain consumer's writes are not fenced.
 */
export function fenceGroupOffsetWrite(topic: Topic, c: ResolvedConsumer, partitionId: number | null): number {
  if (c.group === null) return offsetPartition(topic, partitionId);
  if (partitionId === null) throw new IggyFailure(IggyErrorCode.invalidIdentifier, 'status', 'a consumer group offset names its partition');
  if (c.member === null || !c.member.partitions.includes(partitionId)) {
    throw new IggyFailure(IggyErrorCode.consumerGroupPartitionNotOwned, 'status', `partition ${partitionId} is not this member's`);
  }
  return requirePartition(topic, partitionId);
}

export function offsetKey(c: ResolvedConsumer, topic: Topic, partition: number): string {
  return `${c.key}|${topic.internalId}|${partition}`;
}

export async function storedOffset(frontend: IggyFrontend, c: ResolvedConsumer, topic: Topic, partition: number): Promise<number | null> {
  const rec = await frontend.broker.offsets.fetch(iggyOffsetScope, offsetKey(c, topic, partition), topic.internalId, partition);
  return rec?.offset ?? null;
}

export async function storeOffset(frontend: IggyFrontend, c: ResolvedConsumer, topic: Topic, partition: number, offset: number): Promise<void> {
  await frontend.broker.offsets.commit(iggyOffsetScope, offsetKey(c, topic, partition), [{ topicInternalId: topic.internalId, partition, offset }]);
  // A group's commit may complete a hand-off of the partition (groups.ts).
  if (c.group !== null) frontend.groups.committed(c.group, partition, offset);
}

export async function deleteOffset(frontend: IggyFrontend, c: ResolvedConsumer, topic: Topic, partition: number): Promise<boolean> {
  const deleted = (await frontend.broker.offsets.deleteGroup(iggyOffsetScope, offsetKey(c, topic, partition))) > 0;
  if (c.group !== null) frontend.groups.offsetDeleted(c.group, partition);
  return deleted;
}

/**
 * At start: removes offsets of topics that no longer exist, and of consumer groups that no longer exist (deleted while a poll of
 * the group committed, or before a crash finished the deletion: group ids are never given again,
 * so nothing else would, and they would hold DeleteSegments back), and moves the offsets that
 * named consumers stored under their name (`c:s:<name>`, before a name stood for its XXH32 id)
 * to that id, unless the id has one already.
 */
export async function sweepOffsets(frontend: IggyFrontend): Promise<void> {
  const offsets = frontend.broker.offsets;
  for (const key of await offsets.listGroups(iggyOffsetScope)) {
    const parts = /^(.*)\|(\d+)\|(\d+)$/s.exec(key);
    if (parts === null) continue;
    const [, who, topicPart, partitionPart] = parts as unknown as [string, string, string, string];
    const topicInternalId = Number(topicPart);
    const partition = Number(partitionPart);
    if (frontend.broker.catalog.topicByInternalId(topicInternalId) === null) {
      await offsets.deleteGroup(iggyOffsetScope, key);
    } else if (who.startsWith('g:')) {
      if (!frontend.groups.has(topicInternalId, Number(who.slice(2)))) await offsets.deleteGroup(iggyOffsetScope, key);
    } else if (who.startsWith('c:s:')) {
      const target = `c:n:${consumerNumericId({ kind: 'string', value: who.slice(4) })}|${topicInternalId}|${partition}`;
      const stored = await offsets.fetch(iggyOffsetScope, key, topicInternalId, partition);
      if (stored !== null && (await offsets.fetch(iggyOffsetScope, target, topicInternalId, partition)) === null) {
        await offsets.commit(iggyOffsetScope, target, [{ topicInternalId, partition, offset: stored.offset }]);
      }
      await offsets.deleteGroup(iggyOffsetScope, key);
    }
  }
}

/**
 * Removes every offset a deleted consumer group stored in the topic: one key per partition
 * (offsetKey; the broker removes those of partitions that go, deletePartitionsFrom).
 */
export async function deleteGroupOffsets(frontend: IggyFrontend, topic: Topic, groupId: number): Promise<void> {
  for (let p = 0; p < topic.partitions; p++) await frontend.broker.offsets.deleteGroup(iggyOffsetScope, `g:${groupId}|${topic.internalId}|${p}`);
}

/**
 * The lowest offset any Iggy consumer or consumer group has stored for the partition, or null.
 * DeleteSegments never deletes past it (the reference server's consumer barrier).
 */
export async function lowestStoredOffset(frontend: IggyFrontend, topic: Topic, partition: number): Promise<number | null> {
  const suffix = `|${topic.internalId}|${partition}`;
  const keys = (await frontend.broker.offsets.listGroups(iggyOffsetScope)).filter((k) => k.endsWith(suffix));
  let lowest: number | null = null;
  for (const key of keys) {
    const rec = await frontend.broker.offsets.fetch(iggyOffsetScope, key, topic.internalId, partition);
    if (rec !== null && (lowest === null || rec.offset < lowest)) lowest = rec.offset;
  }
  return lowest;
}
