// OffsetFetch (key 9), v0-8: a group's committed offsets, read from the core OffsetStore.
//
// Follows apache/kafka KafkaApis.handleOffsetFetchRequest* and GroupMetadataManager.getOffsets:
// - offsets are returned whatever the group's state (a group may commit without Kafka's group
//   management); a partition with no committed offset, of an unknown group or of an unknown topic
//   answers offset -1, metadata "" and NONE (OffsetFetchResponse.INVALID_OFFSET / NO_METADATA);
// - v2+ may send null topics: every offset the group has committed (of topics that still exist);
// - a group-level failure is the top-level error in v2-7 (with no topics), the group's error in
//   v8+, and in v0-1, which have no such field, the error of every requested partition
//   (OffsetFetchRequest.getErrorResponse);
// - v8 batches groups; v7+ require_stable: a partition for which an unfinished transaction has
//   staged an offset (TxnOffsetCommit, not yet committed by EndTxn) answers offset -1 with
//   UNSTABLE_OFFSET_COMMIT (88, retriable), as GroupMetadataManager.getOffsets does.
// - authorization (../access.ts): a group the SASL user may not use (mayUseGroup) is a group-level
//   GROUP_AUTHORIZATION_FAILED (30), placed as any group-level failure above; a requested topic
//   the user may not describe answers TOPIC_AUTHORIZATION_FAILED (29) on its partitions; with null
//   topics such topics are left out.

import type { Broker } from '../../../core/broker.js';
import type { CommittedOffset } from '../../../core/offsets.js';
import { kafkaAccessOf, mayUseGroup } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import { findKafkaTopic, isKafkaVisible, kafkaNameOf } from '../topics.js';
import { kafkaOffsetScope, offsetStoreFailureCode } from './offset-commit.js';
import { defineHandler, type KafkaRequestContext } from './types.js';

interface FetchedPartition {
  partitionIndex: number;
  committedOffset: number;
  committedLeaderEpoch: number;
  metadata: string;
  errorCode: number;
}

interface FetchedTopic {
  name: string;
  partitions: FetchedPartition[];
}

interface GroupOffsets {
  errorCode: number;
  topics: FetchedTopic[];
}

type RequestedTopics = readonly { name: string; partitionIndexes: readonly number[] }[] | null;

function noOffset(partitionIndex: number, errorCode: number = ErrorCode.NONE): FetchedPartition {
  return { partitionIndex, committedOffset: -1, committedLeaderEpoch: -1, metadata: '', errorCode };
}

function toPartition(o: CommittedOffset): FetchedPartition {
  return { partitionIndex: o.partition, committedOffset: o.offset, committedLeaderEpoch: o.leaderEpoch, metadata: o.metadata, errorCode: ErrorCode.NONE };
}

/** The answer for one group: requested partitions, or (topics null) all its committed offsets. */
async function fetchGroupOffsets(broker: Broker, groupId: string, requested: RequestedTopics, requireStable: boolean, context: KafkaRequestContext): Promise<GroupOffsets> {
  const access = kafkaAccessOf(context.frontend, context.session);
  if (access.restricted && !(await mayUseGroup(context.frontend, access, groupId))) return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, topics: [] };
  const unstable = (topicInternalId: number, partition: number): boolean =>
    requireStable && broker.transactions.hasPendingOffset(kafkaOffsetScope, groupId, topicInternalId, partition);
  let committed: CommittedOffset[];
  try {
    committed = await broker.offsets.fetchGroup(kafkaOffsetScope, groupId);
  } catch (error) {
    context.session.logger.warn('offset fetch failed', { groupId, error });
    return { errorCode: offsetStoreFailureCode(error), topics: [] };
  }
  const byTopic = new Map<number, Map<number, CommittedOffset>>();
  for (const o of committed) {
    let partitions = byTopic.get(o.topicInternalId);
    if (partitions === undefined) byTopic.set(o.topicInternalId, (partitions = new Map()));
    partitions.set(o.partition, o);
  }
  if (requested === null) {
    const topics: FetchedTopic[] = [];
    for (const [internalId, partitions] of byTopic) {
      const topic = broker.catalog.topicByInternalId(internalId);
      // Offsets of a deleted topic, or of a topic Kafka clients cannot see (unnameable or
      // shadowed), are not listed; the others under their Kafka name (`<stream>.<topic>`).
      if (topic === null || !isKafkaVisible(broker, topic)) continue;
      if (!access.topic(topic, 'describe')) continue;
      const sorted = [...partitions.values()].sort((a, b) => a.partition - b.partition);
      topics.push({
        name: kafkaNameOf(topic),
        partitions: sorted.map((o) => (unstable(internalId, o.partition) ? noOffset(o.partition, ErrorCode.UNSTABLE_OFFSET_COMMIT) : toPartition(o))),
      });
    }
    return { errorCode: ErrorCode.NONE, topics };
  }
  return {
    errorCode: ErrorCode.NONE,
    topics: requested.map((t) => {
      if (!access.topicNamed(t.name, 'describe')) {
        return { name: t.name, partitions: t.partitionIndexes.map((p) => noOffset(p, ErrorCode.TOPIC_AUTHORIZATION_FAILED)) };
      }
      const topic = findKafkaTopic(broker, t.name);
      const partitions = topic === null ? undefined : byTopic.get(topic.internalId);
      return {
        name: t.name,
        partitions: t.partitionIndexes.map((p) => {
          if (topic !== null && unstable(topic.internalId, p)) return noOffset(p, ErrorCode.UNSTABLE_OFFSET_COMMIT);
          const o = partitions?.get(p);
          return o === undefined ? noOffset(p) : toPartition(o);
        }),
      };
    }),
  };
}

export const offsetFetchHandler = defineHandler({
  apiKey: ApiKey.OffsetFetch,
  minVersion: 0,
  maxVersion: 8,
  errorResponse(request, errorCode, { version }) {
    if (version >= 8) return { throttleTimeMs: 0, groups: request.groups.map((g) => ({ groupId: g.groupId, errorCode, topics: [] })) };
    if (version >= 2) return { throttleTimeMs: 0, errorCode, topics: [] };
    return { throttleTimeMs: 0, topics: (request.topics ?? []).map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((p) => noOffset(p, errorCode)) })) };
  },
  async handle(request, context) {
    const { broker } = context.frontend;
    const version = context.version;
    if (version >= 8) {
      const groups = [];
      for (const g of request.groups) {
        const result = await fetchGroupOffsets(broker, g.groupId, g.topics, request.requireStable, context);
        groups.push({ groupId: g.groupId, errorCode: result.errorCode, topics: result.topics });
      }
      return { throttleTimeMs: 0, groups };
    }
    // v0-1 cannot express null topics; the codec only decodes null from v2.
    const result = await fetchGroupOffsets(broker, request.groupId, request.topics, version >= 7 && request.requireStable, context);
    if (result.errorCode !== ErrorCode.NONE && version < 2) {
      const topics = (request.topics ?? []).map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((p) => noOffset(p, result.errorCode)) }));
      return { throttleTimeMs: 0, topics };
    }
    return { throttleTimeMs: 0, errorCode: result.errorCode, topics: result.topics };
  },
});
