// Consumer offsets: GetConsumerOffset (120, NonReplicated), StoreConsumerOffset (121) and
// DeleteConsumerOffset (122) (result-framed, with the ack byte: 0 no ack, 1 quorum; a single node
// commits to the metadata store before replying either way). Missing stream/topic/partition:
// status 1009/2010/3007 (server notes §2). Where offsets live: ../consumers.ts.

import { CommandCode, IggyErrorCode } from '../codec/index.js';
import { deleteOffset, offsetPartition, resolveConsumer, storeOffset, storedOffset } from '../consumers.js';
import { IggyFailure } from '../errors.js';
import { requireTopic } from '../mapping.js';
import { requireTopicPermission } from '../permissions.js';
import type { IggyHandlerTable } from './types.js';

export const consumerOffsetHandlers: IggyHandlerTable = {
  [CommandCode.getConsumerOffset]: async (ctx, req) => {
    const topic = requireTopic(ctx.frontend.broker.catalog, req.streamId, req.topicId);
    requireTopicPermission(ctx.user, topic.namespaceId, topic.id, 'poll');
    const consumer = resolveConsumer(ctx.frontend, ctx.session, topic, req.consumer);
    const partition = offsetPartition(topic, consumer, req.partitionId);
    const stored = await storedOffset(ctx.frontend, consumer, topic, partition);
    if (stored === null) return null;
    const stats = ctx.frontend.broker.partition(topic, partition).stats();
    return { partitionId: partition, currentOffset: BigInt(Math.max(0, stats.highWatermark - 1)), storedOffset: BigInt(stored) };
  },

  [CommandCode.storeConsumerOffset]: async (ctx, req) => {
    const topic = requireTopic(ctx.frontend.broker.catalog, req.streamId, req.topicId);
    requireTopicPermission(ctx.user, topic.namespaceId, topic.id, 'poll');
    const consumer = resolveConsumer(ctx.frontend, ctx.session, topic, req.consumer);
    const partition = offsetPartition(topic, consumer, req.partitionId);
    if (req.offset > BigInt(Number.MAX_SAFE_INTEGER)) throw new IggyFailure(IggyErrorCode.invalidOffset, 'result');
    await storeOffset(ctx.frontend, consumer, topic, partition, Number(req.offset));
    return {};
  },

  [CommandCode.deleteConsumerOffset]: async (ctx, req) => {
    const topic = requireTopic(ctx.frontend.broker.catalog, req.streamId, req.topicId);
    requireTopicPermission(ctx.user, topic.namespaceId, topic.id, 'poll');
    const consumer = resolveConsumer(ctx.frontend, ctx.session, topic, req.consumer);
    const partition = offsetPartition(topic, consumer, req.partitionId);
    if (!(await deleteOffset(ctx.frontend, consumer, topic, partition))) throw new IggyFailure(IggyErrorCode.consumerOffsetNotFound, 'result');
    return {};
  },
};
