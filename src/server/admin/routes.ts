// Every admin API route (docs/admin-api.md), and the overview: what runs, since when, and how
// much the caller can see of it.

import { mayTopic } from '../../core/access.js';
import type { AdminReply, AdminRequest, Route } from './api.js';
import { groupRoutes } from './groups.js';
import { recordRoutes } from './records.js';
import { partitionSummaries, topicRoutes } from './topics.js';
import { userRoutes } from './users.js';

async function overview({ broker, user, info }: AdminRequest): Promise<AdminReply> {
  const topics = broker.catalog.listTopics().filter((t) => mayTopic(user, t.namespaceId, t.id, 'readTopic'));
  await Promise.all(topics.map((t) => broker.purgeInProgress(t)));
  const partitions = topics.flatMap((t) => partitionSummaries(broker, t));
  return {
    body: {
      version: info.version,
      startedAt: new Date(info.startedAtMs).toISOString(),
      uptimeMs: Math.max(0, Date.now() - info.startedAtMs),
      listeners: info.listeners(),
      topics: topics.length,
      partitions: partitions.length,
      messages: partitions.reduce((n, p) => n + p.messages, 0),
      sizeBytes: partitions.reduce((n, p) => n + p.sizeBytes, 0),
    },
  };
}

export const adminRoutes: readonly Route[] = [{ method: 'GET', path: 'overview', handler: overview }, ...topicRoutes, ...recordRoutes, ...groupRoutes, ...userRoutes];
