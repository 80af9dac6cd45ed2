// OffsetDelete (key 47), v0: deletes a group's committed offsets for some partitions, from the core
// offsets store (scope "kafka"), as Kafka's GroupCoordinator.handleDeleteOffsets decides:
//   no live group and no committed offsets          → GROUP_ID_NOT_FOUND (69), top level
//   a live group of another protocol type with members → NON_EMPTY_GROUP (68), top level
//   a consumer group whose members subscribe to the topic → GROUP_SUBSCRIBED_TO_TOPIC (86) for
//     its partitions (an Empty group, or one known only by its offsets, has no subscriptions)
//   a topic that does not exist                      → UNKNOWN_TOPIC_OR_PARTITION (3)
//   anything else                                    → NONE, whether or not an offset was there
// Authorization as KafkaApis: DELETE on the group (Quartet: mayUseGroup, ../access.ts) or
// GROUP_AUTHORIZATION_FAILED (30) at the top level; READ on each topic (poll_messages) or
// TOPIC_AUTHORIZATION_FAILED (29) for its partitions. The eligible partitions are deleted in one
// store transaction; a store failure answers every one of them with its code.

import { kafkaAccessOf, mayUseGroup } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import type { ResponseInputOf } from '../codec/messages/index.js';
import { findKafkaTopic } from '../topics.js';
import { kafkaOffsetScope, offsetStoreFailureCode } from './offset-commit.js';
import { defineHandler } from './types.js';

type Response = ResponseInputOf<typeof ApiKey.OffsetDelete>;

function failed(errorCode: number): Response {
  return { errorCode, throttleTimeMs: 0, topics: [] };
}

export const offsetDeleteHandler = defineHandler({
  apiKey: ApiKey.OffsetDelete,
  minVersion: 0,
  maxVersion: 0,
  errorResponse(_request, errorCode) {
    return failed(errorCode);
  },
  async handle(request, { frontend, session }) {
    const { groupId } = request;
    const access = kafkaAccessOf(frontend, session);
    if (access.restricted && !(await mayUseGroup(frontend, access, groupId))) return failed(ErrorCode.GROUP_AUTHORIZATION_FAILED);
    const offsets = frontend.broker.offsets;
    const view = frontend.groups.offsetDeleteView(groupId);
    if (view === undefined && (await offsets.groupTopics(kafkaOffsetScope, groupId)).length === 0) return failed(ErrorCode.GROUP_ID_NOT_FOUND);
    const consumer = view === undefined || view.members === 0 || view.protocolType === 'consumer';
    if (!consumer) return failed(ErrorCode.NON_EMPTY_GROUP);
    const subscribedTo = (name: string) => view !== undefined && view.members > 0 && (view.subscribed === null || view.subscribed.has(name));

    const eligible: Array<{ topicInternalId: number; partition: number }> = [];
    const answers = request.topics.map((t) => {
      const topic = findKafkaTopic(frontend.broker, t.name);
      let errorCode: number = ErrorCode.NONE;
      if (!access.topicNamed(t.name, 'read')) errorCode = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
      else if (topic === null) errorCode = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      else if (subscribedTo(t.name)) errorCode = ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC;
      else for (const p of t.partitions) eligible.push({ topicInternalId: topic.internalId, partition: p.partitionIndex });
      return { name: t.name, errorCode, partitions: t.partitions.map((p) => p.partitionIndex) };
    });
    let storeError: number = ErrorCode.NONE;
    if (eligible.length > 0) {
      try {
        const deleted = await offsets.deletePartitions(kafkaOffsetScope, groupId, eligible);
        if (deleted > 0) frontend.logger.info('deleted committed offsets', { groupId, partitions: deleted });
      } catch (error) {
        session.logger.warn('deleting committed offsets failed', { groupId, error });
        storeError = offsetStoreFailureCode(error);
      }
    }
    return {
      errorCode: ErrorCode.NONE,
      throttleTimeMs: 0,
      topics: answers.map((a) => ({
        name: a.name,
        partitions: a.partitions.map((partitionIndex) => ({ partitionIndex, errorCode: a.errorCode === ErrorCode.NONE ? storeError : a.errorCode })),
      })),
    };
  },
});
