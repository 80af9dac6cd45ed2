// Topics (300–305): catalog topics of a namespace, with the Iggy option block (topic-options.ts).
// Replies per server notes §7 "Topics and partitions".

import { defaultNamespaceName, type Topic } from '../../../core/catalog.js';
import { CommandCode, IggyErrorCode } from '../codec/index.js';
import { IggyFailure } from '../errors.js';
import type { IggyFrontend } from '../frontend.js';
import { findStream, requirePartitionsCountInBounds, requireStream, requireTopic } from '../mapping.js';
import { requireCreateTopic, requireTopicPermission } from '../permissions.js';
import { admitStaticBoundsFirst, admitTopicOptions, coreConfigFor, patchTopicOptions } from '../topic-options.js';
import type { IggyHandlerTable } from './types.js';
import { partitionInfo, topicInfo } from './views.js';

/** GetTopic details; `zeroed` = the CreateTopic reply (sizes, counts, segments, offsets all 0). */
export function topicDetails(frontend: IggyFrontend, topic: Topic, zeroed = false): ReturnType<typeof topicInfo> & { partitions: ReturnType<typeof partitionInfo>[] } {
  const partitions = [];
  for (let p = 0; p < topic.partitions; p++) {
    partitions.push(zeroed ? { id: p, createdAt: BigInt(topic.createdAt) * 1000n, segmentsCount: 0, currentOffset: 0n, sizeBytes: 0n, messagesCount: 0n } : partitionInfo(frontend, topic, p));
  }
  return { ...topicInfo(frontend, topic, zeroed), partitions };
}

export const topicHandlers: IggyHandlerTable = {
  [CommandCode.getTopic]: (ctx, req) => {
    const catalog = ctx.frontend.broker.catalog;
    const ns = findStream(catalog, req.streamId);
    if (ns === null) return null;
    const topic = catalog.getTopic({ namespace: ns.id, topic: req.topicId.value });
    if (topic === null) return null;
    requireTopicPermission(ctx.user, ns.id, topic.id, 'readTopic');
    return topicDetails(ctx.frontend, topic);
  },

  [CommandCode.getTopics]: (ctx, req) => {
    const catalog = ctx.frontend.broker.catalog;
    const ns = findStream(catalog, req.streamId);
    if (ns === null) return [];
    const topics = catalog.listTopics(ns.id);
    for (const t of topics) requireTopicPermission(ctx.user, ns.id, t.id, 'readTopic');
    return topics.map((t) => topicInfo(ctx.frontend, t));
  },

  [CommandCode.createTopic]: async (ctx, req) => {
    const catalog = ctx.frontend.broker.catalog;
    // Stream `default` (Kafka's topics) is made with its first topic, from Iggy as from Kafka
    // (catalog.ts): creating a topic in it by name works on a broker that has none yet.
    const madeOnDemand = req.streamId.kind === 'string' && req.streamId.value === defaultNamespaceName && catalog.getNamespace(defaultNamespaceName) === null;
    // The static bounds first, as the reference server checks them before anything else: the
    // partitions count (2015), then a cap below one segment (1019).
    requirePartitionsCountInBounds(req.partitionsCount, 0);
    const admitted = admitStaticBoundsFirst(() => admitTopicOptions(req.options, req.partitionsCount));
    const ns = madeOnDemand ? null : requireStream(catalog, req.streamId, 'result');
    // Without the stream, only global permissions can allow it.
    requireCreateTopic(ctx.user, ns?.id ?? -1);
    const options = admitted();
    const topic = await ctx.frontend.broker
      .createTopic(ns?.id ?? defaultNamespaceName, req.name, { partitions: req.partitionsCount, config: coreConfigFor(options.values, req.partitionsCount, options.explicit) })
      .catch(rethrowTopicName);
    await ctx.frontend.topicOptions.save(topic, options);
    return topicDetails(ctx.frontend, topic, true);
  },

  [CommandCode.updateTopic]: async (ctx, req) => {
    const catalog = ctx.frontend.broker.catalog;
    let topic = requireTopic(catalog, req.streamId, req.topicId, 'result');
    // A cap below the topic's own segment size (1019) is refused before the permission (the
    // reference server's static bounds).
    const patched = admitStaticBoundsFirst(() => patchTopicOptions(ctx.frontend.topicOptions.viewOf(topic), req.options));
    requireTopicPermission(ctx.user, topic.namespaceId, topic.id, 'manageTopic');
    const options = patched();
    if (req.name !== topic.name) topic = await catalog.renameTopic(topic, req.name).catch(rethrowTopicName);
    if (options.set.length > 0) {
      // The options first, then the config they map to: in between (or if the config change
      // fails) the Iggy view reads the changed keys back from the core config. Only the core keys
      // of the options the patch set (message_expiry, max_topic_size; compression is stored
      // alone), so a change another protocol queued to the others stays; a topic made by another
      // protocol keeps its own batch limit and roll rule. The size is spread over the partition
      // count the change finds (a partition change may be queued before it).
      await ctx.frontend.topicOptions.savePatch(topic, options);
      const expiry = options.set.includes('message_expiry');
      const size = options.set.includes('max_topic_size');
      if (expiry || size) {
        await ctx.frontend.broker.updateTopicConfig(topic, (current) => {
          const config = coreConfigFor(options.values, current.partitions);
          return { ...(expiry ? { 'retention.ms': config['retention.ms']! } : {}), ...(size ? { 'retention.bytes': config['retention.bytes']! } : {}) };
        });
      }
    }
    return {};
  },

  [CommandCode.deleteTopic]: async (ctx, req) => {
    const topic = requireTopic(ctx.frontend.broker.catalog, req.streamId, req.topicId, 'result');
    requireTopicPermission(ctx.user, topic.namespaceId, topic.id, 'manageTopic');
    await ctx.frontend.broker.deleteTopic(topic);
    return {};
  },

  [CommandCode.purgeTopic]: async (ctx, req) => {
    const topic = requireTopic(ctx.frontend.broker.catalog, req.streamId, req.topicId, 'result');
    requireTopicPermission(ctx.user, topic.namespaceId, topic.id, 'manageTopic');
    await ctx.frontend.broker.purgeTopic(topic);
    ctx.frontend.groups.topicPurged(topic.internalId);
    return {};
  },
};

export function rethrowTopicName(err: unknown): never {
  if ((err as { code?: string }).code === 'invalid_name') throw new IggyFailure(IggyErrorCode.invalidTopicName, 'result', (err as Error).message);
  throw err;
}
