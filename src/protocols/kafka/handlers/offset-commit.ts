// OffsetCommit (key 8), v0-8: committed offsets, durable through the core OffsetStore (scope
// 'kafka') before the answer goes out.
//
// Follows apache/kafka KafkaApis.handleOffsetCommitRequest and GroupCoordinator.handleCommitOffsets
// (3.x, classic groups):
// - each partition is checked first: a topic or partition that does not exist answers
//   UNKNOWN_TOPIC_OR_PARTITION; when no partition survives, the group is not consulted at all;
// - the group checks (generation, member, instance id) come from the coordinator's
//   validateOffsetCommit and, when they fail, answer every remaining partition. Generation -1 with
//   no member is a simple consumer's or an admin's commit, accepted for an Empty or unknown group
//   (Kafka then creates an Empty group; here the group exists through its offsets, see
//   describe-groups.ts / list-groups.ts / delete-groups.ts);
// - metadata longer than offset.metadata.max.bytes (4096) answers OFFSET_METADATA_TOO_LARGE for
//   that partition only (GroupMetadataManager.validateOffsetMetadataLength). Kafka counts UTF-16
//   characters; we count UTF-8 bytes, the OffsetStore's limit, which only differs for non-ASCII;
// - the committed leader epoch (v6+) is stored and returned by OffsetFetch; v1's commit timestamp
//   and v2-4's retention time are ignored (offsets do not expire);
// - an empty group id is accepted, as Kafka's isValidGroupId allows for OffsetCommit/OffsetFetch.
// - a negative offset is stored and handed back, as Kafka does (KafkaJS commits -2, its "earliest",
//   when it resets a position; refusing it crashed KafkaJS's consumer with a non-retriable error);
//   an offset past 2^53 is INVALID_COMMIT_OFFSET_SIZE (JavaScript numbers).
// - authorization (../access.ts), checked first: a group the SASL user may not use (mayUseGroup)
//   answers GROUP_AUTHORIZATION_FAILED (30) on every partition; a topic it may not read (Iggy
//   poll_messages) TOPIC_AUTHORIZATION_FAILED (29) on that topic's partitions.

import { groupIdBytesMax, offsetMetadataBytesMax, type OffsetCommit } from '../../../core/offsets.js';
import { isQuartetError } from '../../../base/errors.js';
import { kafkaAccessOf, mayUseGroup } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import { kafkaCodeOf } from '../errors.js';
import { findKafkaTopic } from '../topics.js';
import { defineHandler } from './types.js';

/** The OffsetStore scope of Kafka groups (an Iggy consumer of the same name is a different one). */
export const kafkaOffsetScope = 'kafka';

/**
 * The code for an OffsetStore call that threw. A storage failure is retriable for the client
 * (Kafka maps a failed __consumer_offsets append to COORDINATOR_NOT_AVAILABLE); anything else is
 * the core error's Kafka code.
 */
export function offsetStoreFailureCode(error: unknown): number {
  if (isQuartetError(error) && error.code !== 'storage_error') return kafkaCodeOf(error);
  return ErrorCode.COORDINATOR_NOT_AVAILABLE;
}

interface PartitionAnswer {
  partitionIndex: number;
  errorCode: number;
}

export const offsetCommitHandler = defineHandler({
  apiKey: ApiKey.OffsetCommit,
  minVersion: 0,
  maxVersion: 8,
  errorResponse(request, errorCode) {
    return { throttleTimeMs: 0, topics: request.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })) })) };
  },
  async handle(request, { frontend, session, version }) {
    const { broker, groups } = frontend;
    const access = kafkaAccessOf(frontend, session);
    const groupDenied = access.restricted && !(await mayUseGroup(frontend, access, request.groupId));
    const toStore: { answer: PartitionAnswer; commit: OffsetCommit }[] = [];
    const answers = request.topics.map((t) => {
      const denied = !access.topicNamed(t.name, 'read');
      const topic = findKafkaTopic(broker, t.name);
      return {
        name: t.name,
        partitions: t.partitions.map((p) => {
          const entry: PartitionAnswer = { partitionIndex: p.partitionIndex, errorCode: ErrorCode.NONE };
          if (groupDenied) {
            entry.errorCode = ErrorCode.GROUP_AUTHORIZATION_FAILED;
          } else if (denied) {
            entry.errorCode = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
          } else if (topic === null || p.partitionIndex < 0 || p.partitionIndex >= topic.partitions) {
            entry.errorCode = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
          } else if (p.committedMetadata !== null && Buffer.byteLength(p.committedMetadata, 'utf8') > offsetMetadataBytesMax) {
            entry.errorCode = ErrorCode.OFFSET_METADATA_TOO_LARGE;
          } else if (!Number.isSafeInteger(p.committedOffset)) {
            entry.errorCode = ErrorCode.INVALID_COMMIT_OFFSET_SIZE;
          } else {
            const commit: OffsetCommit = {
              topicInternalId: topic.internalId,
              partition: p.partitionIndex,
              offset: p.committedOffset,
              leaderEpoch: p.committedLeaderEpoch,
              metadata: p.committedMetadata ?? '',
            };
            toStore.push({ answer: entry, commit });
          }
          return entry;
        }),
      };
    });

    if (toStore.length > 0) {
      const groupError = Buffer.byteLength(request.groupId, 'utf8') > groupIdBytesMax
        ? ErrorCode.INVALID_GROUP_ID
        : groups.validateOffsetCommit(
            request.groupId,
            version >= 1 ? request.generationIdOrMemberEpoch : -1,
            version >= 1 ? request.memberId : '',
            version >= 7 ? request.groupInstanceId : null,
          );
      if (groupError !== ErrorCode.NONE) {
        for (const e of toStore) e.answer.errorCode = groupError;
      } else {
        try {
          await broker.offsets.commit(kafkaOffsetScope, request.groupId, toStore.map((e) => e.commit));
        } catch (error) {
          session.logger.warn('offset commit failed', { groupId: request.groupId, error });
          const code = offsetStoreFailureCode(error);
          for (const e of toStore) e.answer.errorCode = code;
        }
      }
    }

    return { throttleTimeMs: 0, topics: answers };
  },
});
