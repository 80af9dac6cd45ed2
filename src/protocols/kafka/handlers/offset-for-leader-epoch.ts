// OffsetForLeaderEpoch (key 23), v0-4. apache/kafka OffsetForLeaderEpochRequest.json /
// OffsetForLeaderEpochResponse.json.
//
// OffsetForLeaderEpochRequest => ReplicaId(v3+) Topics[Topic Partitions[Partition
//   CurrentLeaderEpoch(v2+) LeaderEpoch]]
// OffsetForLeaderEpochResponse => ThrottleTimeMs(v2+) Topics[Topic Partitions[ErrorCode Partition
//   LeaderEpoch(v1+) EndOffset]]
//
// The leader epoch is the core's (src/core/replication.ts; one node: 0, from the first offset, so
// only the current epoch is known). Kafka's rules (Partition.lastOffsetForLeaderEpoch,
// LeaderEpochFileCache.endOffsetFor) reduce to:
// - current_leader_epoch (v2+): -1 skips the check; above the leader's is UNKNOWN_LEADER_EPOCH
//   (75); below it otherwise is FENCED_LEADER_EPOCH (74);
// - leader_epoch = the current one → end offset = the high watermark (what consumers may read);
// - any other epoch → UNDEFINED_EPOCH (-1) and UNDEFINED_EPOCH_OFFSET (-1), no error.
// librdkafka 2.12 sends v2 to validate a position whose epoch it knows (kafka-broker-notes.md §2).
// Authorization (../access.ts): a topic the SASL user may not describe → TOPIC_AUTHORIZATION_FAILED (29).

import { kafkaAccessOf } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import type { OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponseInput } from '../codec/messages/offset-for-leader-epoch.js';
import { lookupPartition } from '../topics.js';
import { defineHandler } from './types.js';

type PartitionOut = NonNullable<NonNullable<OffsetForLeaderEpochResponseInput['topics']>[number]['partitions']>[number];

function partitionError(partition: number, errorCode: number): PartitionOut {
  return { errorCode, partition, leaderEpoch: -1, endOffset: -1 };
}

function errorResponse(request: OffsetForLeaderEpochRequest, errorCode: number): OffsetForLeaderEpochResponseInput {
  return { throttleTimeMs: 0, topics: request.topics.map((t) => ({ topic: t.topic, partitions: t.partitions.map((p) => partitionError(p.partition, errorCode)) })) };
}

export const offsetForLeaderEpochHandler = defineHandler({
  apiKey: ApiKey.OffsetForLeaderEpoch,
  minVersion: 0,
  maxVersion: 4,
  errorResponse: (request, errorCode) => errorResponse(request, errorCode),
  handle(request, context) {
    const { frontend } = context;
    const access = kafkaAccessOf(frontend, context.session);
    const topics = request.topics.map((t) => ({
      topic: t.topic,
      partitions: t.partitions.map((p): PartitionOut => {
        if (!access.topicNamed(t.topic, 'describe')) return partitionError(p.partition, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
        const found = lookupPartition(frontend.broker, t.topic, p.partition);
        if (!found.ok) return partitionError(p.partition, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        const state = frontend.broker.replicaState(found.topic, p.partition);
        if (p.currentLeaderEpoch > state.leaderEpoch) return partitionError(p.partition, ErrorCode.UNKNOWN_LEADER_EPOCH);
        if (p.currentLeaderEpoch !== -1 && p.currentLeaderEpoch < state.leaderEpoch) return partitionError(p.partition, ErrorCode.FENCED_LEADER_EPOCH);
        if (p.leaderEpoch !== state.leaderEpoch) return { errorCode: ErrorCode.NONE, partition: p.partition, leaderEpoch: -1, endOffset: -1 };
        return { errorCode: ErrorCode.NONE, partition: p.partition, leaderEpoch: state.leaderEpoch, endOffset: state.highWatermark };
      }),
    }));
    return { throttleTimeMs: 0, topics };
  },
});
