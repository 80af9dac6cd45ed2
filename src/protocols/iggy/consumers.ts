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

export function resolveConsumer(frontend: IggyFrontend, session: IggySession, topic: Topic, consumer: Consumer): ResolvedConsumer {
  if (consumer.kind === ConsumerKind.consumer) return { key: `c:n:${consumerNumericId(consumer.id)}`, group: null, member: null };
  const group = frontend.groups.find(topic, consumer.id);
  if (group === null) {
    throw new IggyFailure(consumer.id.kind === 'numeric' ? IggyErrorCode.consumerGroupIdNotFound : IggyErrorCode.consumerGroupNameNotFound, 'status');
  }
  return { key: `g:${group.id}`, group, member: group.members.get(session.connectionId) ?? null };
}

/** The partition of an offset call: given, or 0 for a consumer, or the member's first. */
export function offsetPartition(topic: Topic, c: ResolvedConsumer, partitionId: number | null): number {
  if (partitionId !== null) return requirePartition(topic, partitionId);
  if (c.member && c.member.partitions.length > 0) return c.member.partitions[0]!;
  return requirePartition(topic, 0);
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
}

export async function deleteOffset(frontend: IggyFrontend, c: ResolvedConsumer, topic: Topic, partition: number): Promise<boolean> {
  return (await frontend.broker.offsets.deleteGroup(iggyOffsetScope, offsetKey(c, topic, partition))) > 0;
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
