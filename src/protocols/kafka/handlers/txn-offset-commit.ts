// TxnOffsetCommit (key 28), v0-3: consumer offsets staged in the producer's transaction; the core
// coordinator commits them to the OffsetStore (scope 'kafka', the groups' scope) only when the
// transaction commits, and drops them when it aborts. The group must have been added with
// AddOffsetsToTxn first (else INVALID_TXN_STATE).
//
// Follows apache/kafka KafkaApis.handleTxnOffsetCommitRequest and the classic
// GroupCoordinator.handleTxnCommitOffsets / validateOffsetCommit(isTransactional = true):
// - a group the SASL user may not use (../access.ts, mayUseGroup) → GROUP_AUTHORIZATION_FAILED (30)
//   on every partition;
// - per partition first: a topic the SASL user may not read (../access.ts, Iggy poll_messages)
//   answers TOPIC_AUTHORIZATION_FAILED (29); a topic or partition that does not exist answers
//   UNKNOWN_TOPIC_OR_PARTITION; metadata over offset.metadata.max.bytes answers
//   OFFSET_METADATA_TOO_LARGE; and, as in offset-commit.ts, an offset past 2^53 answers
//   INVALID_COMMIT_OFFSET_SIZE (a negative one is stored, as Kafka does). The remaining
//   partitions share one answer;
// - v3 member fields: when a generation (>= 0), a member id or an instance id is given, the group
//   coordinator's validateOffsetCommit checks them (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION,
//   FENCED_INSTANCE_ID, ...). Without them (v0-2, or a v3 producer outside a group) the commit is
//   accepted even for a group with members: "this does not apply to transactional offset commits,
//   since the older versions of this protocol do not require memberId and generationId";
// - the transaction checks are the coordinator's: unknown id / other producer id →
//   INVALID_PRODUCER_ID_MAPPING, a fenced or newer epoch → INVALID_PRODUCER_EPOCH (the response
//   schema never lists PRODUCER_FENCED; Kafka's offset append reports the epoch error).
// - an empty or over-long group id answers INVALID_GROUP_ID for every partition.

import { groupIdBytesMax, offsetMetadataBytesMax, type OffsetCommit } from '../../../core/offsets.js';
import { kafkaAccessOf, mayUseGroup } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import type { TxnOffsetCommitRequest, TxnOffsetCommitResponseInput } from '../codec/messages/txn-offset-commit.js';
import { findKafkaTopic } from '../topics.js';
import { kafkaTransactionScope, kafkaTxnErrorCode } from '../transactions.js';
import { defineHandler } from './types.js';

interface PartitionAnswer {
  partitionIndex: number;
  errorCode: number;
}

function answerAll(request: TxnOffsetCommitRequest, errorCode: number): TxnOffsetCommitResponseInput {
  return {
    throttleTimeMs: 0,
    topics: request.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })) })),
  };
}

export const txnOffsetCommitHandler = defineHandler({
  apiKey: ApiKey.TxnOffsetCommit,
  minVersion: 0,
  maxVersion: 3,
  errorResponse(request, errorCode) {
    return answerAll(request, errorCode);
  },
  async handle(request, { frontend, session, version }) {
    const { broker, groups } = frontend;
    const { groupId } = request;
    if (groupId.length === 0 || Buffer.byteLength(groupId, 'utf8') > groupIdBytesMax) return answerAll(request, ErrorCode.INVALID_GROUP_ID);

    const access = kafkaAccessOf(frontend, session);
    if (access.restricted && !(await mayUseGroup(frontend, access, groupId))) return answerAll(request, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    const staged: { answer: PartitionAnswer; commit: OffsetCommit }[] = [];
    const topics = request.topics.map((t) => {
      const denied = !access.topicNamed(t.name, 'read');
      const topic = findKafkaTopic(broker, t.name);
      return {
        name: t.name,
        partitions: t.partitions.map((p) => {
          const answer: PartitionAnswer = { partitionIndex: p.partitionIndex, errorCode: ErrorCode.NONE };
          if (denied) {
            answer.errorCode = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
          } else if (topic === null || p.partitionIndex < 0 || p.partitionIndex >= topic.partitions) {
            answer.errorCode = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
          } else if (p.committedMetadata !== null && Buffer.byteLength(p.committedMetadata, 'utf8') > offsetMetadataBytesMax) {
            answer.errorCode = ErrorCode.OFFSET_METADATA_TOO_LARGE;
          } else if (!Number.isSafeInteger(p.committedOffset)) {
            answer.errorCode = ErrorCode.INVALID_COMMIT_OFFSET_SIZE;
          } else {
            staged.push({
              answer,
              commit: {
                topicInternalId: topic.internalId,
                partition: p.partitionIndex,
                offset: p.committedOffset,
                leaderEpoch: p.committedLeaderEpoch,
                metadata: p.committedMetadata ?? '',
              },
            });
          }
          return answer;
        }),
      };
    });
    if (staged.length === 0) return { throttleTimeMs: 0, topics };

    const setAll = (errorCode: number): TxnOffsetCommitResponseInput => {
      for (const s of staged) s.answer.errorCode = errorCode;
      return { throttleTimeMs: 0, topics };
    };

    // v0-2 carry no member fields: the schema defaults (-1, '', null) skip the group check.
    const { generationId, memberId, groupInstanceId } = request;
    if (version >= 3 && (generationId >= 0 || memberId !== '' || groupInstanceId !== null)) {
      const groupError = groups.validateOffsetCommit(groupId, generationId, memberId, groupInstanceId);
      if (groupError !== ErrorCode.NONE) return setAll(groupError);
    }

    const id = { scope: kafkaTransactionScope, transactionalId: request.transactionalId, producerId: request.producerId, producerEpoch: request.producerEpoch };
    try {
      await broker.transactions.txnOffsetCommit(id, groupId, staged.map((s) => s.commit));
      return setAll(ErrorCode.NONE);
    } catch (error) {
      const errorCode = kafkaTxnErrorCode(error, version, null);
      session.logger.debug('TxnOffsetCommit failed', { transactionalId: request.transactionalId, groupId, errorCode, error });
      return setAll(errorCode);
    }
  },
});
