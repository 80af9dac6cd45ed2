// Partitions (402, 403) and segments (503), following the reference server (apache/iggy core):
//
// CreatePartitions grows the topic (catalog addPartitions); the consumer groups of the topic are
// rebalanced and a max_topic_size is re-spread over the partitions.
// DeletePartitions removes the LAST `partitions_count` partitions (core/metadata stm/stream.rs
// truncates the partition list), down to zero. Their logs, directories, committed offsets (every
// protocol's) and producer state are destroyed; a partition added later under the same number
// starts empty at offset 0. The groups rebalance. A count of 0 or above the partition count is
// InvalidPartitionsCount (2019). Kafka clients simply see fewer partitions (docs/mapping.md).
// DeleteSegments deletes the `segments_count` oldest SEALED segments of one partition, never the
// active one (core/partitions nth_oldest_sealed_end_offset + remove_sealed_segments_up_to), and
// never past the consumer barrier: the lowest offset any Iggy consumer or group has stored for
// the partition. Offsets are unchanged; the partition's first offset becomes the base of the first
// segment kept. Nothing to delete is still a success.

import { CommandCode, IggyErrorCode } from '../codec/index.js';
import { lowestStoredOffset } from '../consumers.js';
import { IggyFailure } from '../errors.js';
import { requirePartition, requirePartitionsCountInBounds, requireTopic } from '../mapping.js';
import { requireTopicPermission } from '../permissions.js';
import type { IggyHandlerTable } from './types.js';

export const partitionHandlers: IggyHandlerTable = {
  [CommandCode.createPartitions]: async (ctx, req) => {
    requirePartitionsCountInBounds(req.partitionsCount, 1);
    const topic = requireTopic(ctx.frontend.broker.catalog, req.streamId, req.topicId, 'result');
    requireTopicPermission(ctx.user, topic.namespaceId, topic.id, 'manageTopic');
    // The front-end hears of it (Broker.onTopicChanges): max_topic_size re-spread, groups rebalanced.
    await ctx.frontend.broker.addPartitions(topic, topic.partitions + req.partitionsCount);
    return {};
  },

  [CommandCode.deletePartitions]: async (ctx, req) => {
    requirePartitionsCountInBounds(req.partitionsCount, 1);
    const topic = requireTopic(ctx.frontend.broker.catalog, req.streamId, req.topicId, 'result');
    requireTopicPermission(ctx.user, topic.namespaceId, topic.id, 'manageTopic');
    // More than the topic has is a committed rejection, as the reference's.
    if (req.partitionsCount > topic.partitions) {
      throw new IggyFailure(IggyErrorCode.invalidPartitionsCount, 'result', `partitions_count must be 1..${topic.partitions}`);
    }
    await ctx.frontend.broker.removePartitions(topic, topic.partitions - req.partitionsCount);
    return {};
  },

  [CommandCode.deleteSegments]: async (ctx, req) => {
    const topic = requireTopic(ctx.frontend.broker.catalog, req.streamId, req.topicId, 'result');
    requireTopicPermission(ctx.user, topic.namespaceId, topic.id, 'manageTopic');
    const partition = requirePartition(topic, req.partitionId, 'result');
    if (req.segmentsCount === 0) return {};
    const barrier = await lowestStoredOffset(ctx.frontend, topic, partition);
    const log = ctx.frontend.broker.partition(topic, partition);
    await log.deleteOldestSegments(req.segmentsCount, barrier === null ? {} : { before: barrier + 1 });
    return {};
  },
};
