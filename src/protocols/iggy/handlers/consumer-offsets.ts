// Consumer offsets: GetConsumerOffset (120, NonReplicated), StoreConsumerOffset (121) and
// DeleteConsumerOffset (122) (result-framed, with the ack byte: 0 no ack, 1 quorum; a single node
// commits to the metadata store before replying either way). Missing stream/topic/partition:
// status 1009/2010/3007 (server notes §2), but 20 for a consumer group's write (offsetWriteTarget).
// As the reference server admits them: a consumer group's offset writes are fenced to the
// partitions the caller owns (consumers.ts fenceGroupOffsetWrite); a store on an empty partition or past its last offset is denied with
// status 4100 (InvalidOffset), a delete of an offset never stored with status 3021, both before
// anything is applied; reading the offset of a group that does not exist finds nothing. Where
// offsets live: ../consumers.ts.

import type { Topic } from '../../../core/catalog.js';
import { CommandCode, ConsumerKind, IggyErrorCode, type Consumer, type Identifier } from '../codec/index.js';
import { deleteOffset, fenceGroupOffsetWrite, findConsumer, offsetPartition, resolveConsumer, storeOffset, storedOffset, type ResolvedConsumer } from '../consumers.js';
import { IggyFailure } from '../errors.js';
import { findTopic, requireTopic } from '../mapping.js';
import { requireTopicPermission } from '../permissions.js';
import type { IggyHandlerTable, IggyRequestContext } from './types.js';

/**
 * What a Store/DeleteConsumerOffset writes, checked in the reference server's order (its
 * partition-request resolution, then the permission): a consumer group's write is fenced first,
 * so it must name a partition (6), its stream and topic must exist (else 20, ResourceNotFound,
 * as the fence cannot look the group up), then the group (5000/5003), and the caller must own
 * the partition now (5009); a plain consumer's stream, topic and partition are named by the
 * level that missed (1009/2010/3007). Then the caller needs the poll permission (41).
 */
function offsetWriteTarget(ctx: IggyRequestContext, req: { consumer: Consumer; streamId: Identifier; topicId: Identifier; partitionId: number | null }): { topic: Topic; consumer: ResolvedConsumer; partition: number } {
  const catalog = ctx.frontend.broker.catalog;
  let topic: Topic;
  if (req.consumer.kind === ConsumerKind.consumerGroup) {
    if (req.partitionId === null) throw new IggyFailure(IggyErrorCode.invalidIdentifier, 'status', 'a consumer group offset names its partition');
    const found = findTopic(catalog, req.streamId, req.topicId);
    if (found === null) throw new IggyFailure(IggyErrorCode.resourceNotFound, 'status', 'stream or topic not found');
    topic = found;
  } else {
    topic = requireTopic(catalog, req.streamId, req.topicId);
  }
  const consumer = resolveConsumer(ctx.frontend, ctx.session, topic, req.consumer);
  const partition = fenceGroupOffsetWrite(topic, consumer, req.partitionId);
  requireTopicPermission(ctx.user, topic.namespaceId, topic.id, 'poll');
  return { topic, consumer, partition };
}

export const consumerOffsetHandlers: IggyHandlerTable = {
  [CommandCode.getConsumerOffset]: async (ctx, req) => {
    const topic = requireTopic(ctx.frontend.broker.catalog, req.streamId, req.topicId);
    requireTopicPermission(ctx.user, topic.namespaceId, topic.id, 'poll');
    const partition = offsetPartition(topic, req.partitionId);
    const consumer = findConsumer(ctx.frontend, ctx.session, topic, req.consumer);
    if (consumer === null) return null;
    const stored = await storedOffset(ctx.frontend, consumer, topic, partition);
    if (stored === null) return null;
    const stats = ctx.frontend.broker.partition(topic, partition).stats();
    return { partitionId: partition, currentOffset: BigInt(Math.max(0, stats.highWatermark - 1)), storedOffset: BigInt(stored) };
  },

  [CommandCode.storeConsumerOffset]: async (ctx, req) => {
    const { topic, consumer, partition } = offsetWriteTarget(ctx, req);
    // After a purge under way, which deletes the topic's offsets and restarts its offsets at 0.
    const purging = ctx.frontend.broker.purgeInProgress(topic);
    if (purging !== undefined) await purging;
    // An empty partition takes no offset, and none past its last message.
    const highWatermark = ctx.frontend.broker.partition(topic, partition).stats().highWatermark;
    if (highWatermark === 0 || req.offset > BigInt(highWatermark - 1)) {
      throw new IggyFailure(IggyErrorCode.invalidOffset, 'status', `offset ${req.offset} is past the partition's last offset ${highWatermark - 1}`);
    }
    await storeOffset(ctx.frontend, consumer, topic, partition, Number(req.offset));
    return {};
  },

  [CommandCode.deleteConsumerOffset]: async (ctx, req) => {
    const { topic, consumer, partition } = offsetWriteTarget(ctx, req);
    if (!(await deleteOffset(ctx.frontend, consumer, topic, partition))) throw new IggyFailure(IggyErrorCode.consumerOffsetNotFound, 'status');
    return {};
  },
};
