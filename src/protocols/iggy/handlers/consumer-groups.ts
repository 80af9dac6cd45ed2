// Consumer groups (600–606), on ../groups.ts. Get and list: missing stream 1009, missing topic
// 2010 (status); Get of a missing group → empty body. Join/Leave commit 1009, 2010, 5000 (5006
// for Leave). Sync answers only the caller's own membership: an empty body for anything missing.
// Every command but Sync takes the read-topic permission (the reference permissioner's
// consumer-group rules are all its get_topic rule).

import { CommandCode } from '../codec/index.js';
import { deleteGroupOffsets } from '../consumers.js';
import type { IggyGroup } from '../groups.js';
import { findStream, requireTopic } from '../mapping.js';
import { requireTopicPermission } from '../permissions.js';
import type { IggyHandlerTable } from './types.js';

function info(g: IggyGroup, partitions: number): { id: number; partitionsCount: number; membersCount: number; name: string } {
  return { id: g.id, partitionsCount: partitions, membersCount: g.members.size, name: g.name };
}

export const consumerGroupHandlers: IggyHandlerTable = {
  [CommandCode.getConsumerGroup]: (ctx, req) => {
    const topic = requireTopic(ctx.frontend.broker.catalog, req.streamId, req.topicId);
    requireTopicPermission(ctx.user, topic.namespaceId, topic.id, 'readTopic');
    const g = ctx.frontend.groups.find(topic, req.groupId);
    if (g === null) return null;
    const members = [...g.members.values()].sort((a, b) => a.joinSeq - b.joinSeq).map((m) => ({ id: m.memberId, partitions: [...m.partitions] }));
    return { ...info(g, topic.partitions), members };
  },

  [CommandCode.getConsumerGroups]: (ctx, req) => {
    const topic = requireTopic(ctx.frontend.broker.catalog, req.streamId, req.topicId);
    requireTopicPermission(ctx.user, topic.namespaceId, topic.id, 'readTopic');
    return ctx.frontend.groups.list(topic).map((g) => info(g, topic.partitions));
  },

  [CommandCode.createConsumerGroup]: async (ctx, req) => {
    const topic = requireTopic(ctx.frontend.broker.catalog, req.streamId, req.topicId, 'result');
    requireTopicPermission(ctx.user, topic.namespaceId, topic.id, 'readTopic');
    const g = await ctx.frontend.groups.create(topic, req.name);
    return info(g, topic.partitions);
  },

  [CommandCode.deleteConsumerGroup]: async (ctx, req) => {
    const topic = requireTopic(ctx.frontend.broker.catalog, req.streamId, req.topicId, 'result');
    requireTopicPermission(ctx.user, topic.namespaceId, topic.id, 'readTopic');
    const group = ctx.frontend.groups.require(topic, req.groupId);
    // Its offsets first (a crash in between leaves the group, to be deleted again), and once more
    // after, for a poll of it that committed meanwhile.
    await deleteGroupOffsets(ctx.frontend, topic, group.id);
    await ctx.frontend.groups.delete(topic, group);
    await deleteGroupOffsets(ctx.frontend, topic, group.id);
    return {};
  },

  [CommandCode.joinConsumerGroup]: (ctx, req) => {
    const topic = requireTopic(ctx.frontend.broker.catalog, req.streamId, req.topicId, 'result');
    requireTopicPermission(ctx.user, topic.namespaceId, topic.id, 'readTopic');
    ctx.frontend.groups.join(topic, ctx.frontend.groups.require(topic, req.groupId), ctx.session.connectionId);
    return {};
  },

  [CommandCode.leaveConsumerGroup]: (ctx, req) => {
    const topic = requireTopic(ctx.frontend.broker.catalog, req.streamId, req.topicId, 'result');
    requireTopicPermission(ctx.user, topic.namespaceId, topic.id, 'readTopic');
    ctx.frontend.groups.leave(topic, ctx.frontend.groups.require(topic, req.groupId), ctx.session.connectionId);
    return {};
  },

  [CommandCode.syncConsumerGroup]: (ctx, req) => {
    // Self-scoped (no permission rule: joining took the read-topic permission), as the reference server.
    const catalog = ctx.frontend.broker.catalog;
    const ns = findStream(catalog, req.streamId);
    const topic = ns === null ? null : catalog.getTopic({ namespace: ns.id, topic: req.topicId.value });
    if (topic === null) return null;
    const g = ctx.frontend.groups.find(topic, req.groupId);
    const member = g?.members.get(ctx.session.connectionId);
    if (!g || !member) return null;
    // The partitions it polls: one pending revocation is still its own (for commits) but not polled.
    return { generation: g.generation, partitions: [...member.pollable] };
  },
};
