// Partitions (402, 403) and segments (503).
//
// CreatePartitions grows the topic (catalog addPartitions); the consumer groups of the topic are
// rebalanced and a max_topic_size is re-spread over the partitions.
// DeletePartitions is refused with FeatureUnavailable (5): Quartet partitions are never removed,
// because the same log is a Kafka topic whose partitions cannot shrink and whose offsets must stay
// valid (docs/iggy.md).
// DeleteSegments removes the oldest records of one partition: the log start advances and whole
// sealed segments below it are deleted. The log does not expose segment boundaries, so the new
// start is the log start plus segmentsCount/segmentCount of the readable records (all of them when
// segmentsCount covers every segment).

import { CommandCode, IggyErrorCode } from '../codec/index.js';
import { partitionsPerRequestMax } from '../codec/commands/partitions.js';
import { IggyFailure } from '../errors.js';
import { requirePartition, requireTopic } from '../mapping.js';
import { requireTopicPermission } from '../permissions.js';
import { coreConfigFor } from '../topic-options.js';
import type { IggyHandlerTable } from './types.js';

export const partitionHandlers: IggyHandlerTable = {
  [CommandCode.createPartitions]: async (ctx, req) => {
    const topic = requireTopic(ctx.frontend.broker.catalog, req.streamId, req.topicId, 'result');
    requireTopicPermission(ctx.user, topic.namespaceId, topic.id, 'manageTopic');
    if (req.partitionsCount < 1 || req.partitionsCount > partitionsPerRequestMax) {
      throw new IggyFailure(IggyErrorCode.invalidPartitionsCount, 'result', `partitions_count must be 1..${partitionsPerRequestMax}`);
    }
    let updated = await ctx.frontend.broker.addPartitions(topic, topic.partitions + req.partitionsCount);
    const options = ctx.frontend.topicOptionsOf(updated);
    if (options.explicit.includes('max_topic_size')) {
      updated = await ctx.frontend.broker.updateTopicConfig(updated, { 'retention.bytes': coreConfigFor(options.values, updated.partitions)['retention.bytes'] });
    }
    ctx.frontend.groups.partitionsChanged(updated);
    return {};
  },

  [CommandCode.deletePartitions]: (ctx, req) => {
    const topic = requireTopic(ctx.frontend.broker.catalog, req.streamId, req.topicId, 'result');
    requireTopicPermission(ctx.user, topic.namespaceId, topic.id, 'manageTopic');
    throw new IggyFailure(IggyErrorCode.featureUnavailable, 'result', 'partitions are never removed in Quartet');
  },

  [CommandCode.deleteSegments]: async (ctx, req) => {
    const topic = requireTopic(ctx.frontend.broker.catalog, req.streamId, req.topicId, 'result');
    requireTopicPermission(ctx.user, topic.namespaceId, topic.id, 'manageTopic');
    requirePartition(topic, req.partitionId, 'result');
    const log = ctx.frontend.broker.partition(topic, req.partitionId);
    const stats = log.stats();
    if (req.segmentsCount === 0 || stats.highWatermark <= stats.logStartOffset) return {};
    const all = req.segmentsCount >= stats.segmentCount;
    const readable = stats.highWatermark - stats.logStartOffset;
    const target = all ? stats.highWatermark : stats.logStartOffset + Math.floor((readable * req.segmentsCount) / Math.max(1, stats.segmentCount));
    if (target > stats.logStartOffset) await log.deleteRecordsBefore(target);
    return {};
  },
};
