// ElectLeaders (key 43), v0-2. Grammar: codec/messages/elect-leaders.ts.
//
// Quartet's partitions are led by their preferred (first) replica, this node, so there is never an
// election to hold: each named partition answers ELECTION_NOT_NEEDED (84), for the preferred
// (0) and the unclean (1) election types alike, as ReplicationControlManager.electLeaders does for
// a partition whose leader is already the one it would elect. With topic_partitions null (every
// partition), those results are left out, so the list is empty. Unknown topic or partition →
// UNKNOWN_TOPIC_OR_PARTITION; another election type → INVALID_REQUEST for the whole request.
// Kafka needs ALTER on the cluster (Quartet: manage_servers); without it every partition and the
// top level answer CLUSTER_AUTHORIZATION_FAILED (31).

import { kafkaAccessOf } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import type { RequestOf, ResponseInputOf } from '../codec/messages/index.js';
import { findKafkaTopic } from '../topics.js';
import { defineHandler, type KafkaFrontend } from './types.js';

type Request = RequestOf<typeof ApiKey.ElectLeaders>;
type Response = ResponseInputOf<typeof ApiKey.ElectLeaders>;
type PartitionResult = { partitionId: number; errorCode: number; errorMessage: string | null };

const ElectionType = { PREFERRED: 0, UNCLEAN: 1 } as const;

function partitionResult(frontend: KafkaFrontend, topicName: string, partition: number): PartitionResult {
  const topic = findKafkaTopic(frontend.broker, topicName);
  if (topic === null) return { partitionId: partition, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `No such topic as ${topicName}` };
  if (!Number.isInteger(partition) || partition < 0 || partition >= topic.partitions) {
    return { partitionId: partition, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `No such partition as ${topicName}-${partition}` };
  }
  const leadership = frontend.broker.leadership(topic, partition);
  if (leadership.leaderId === leadership.replicas[0]) {
    return { partitionId: partition, errorCode: ErrorCode.ELECTION_NOT_NEEDED, errorMessage: 'Leader election not needed for topic partition.' };
  }
  return { partitionId: partition, errorCode: ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, errorMessage: 'Quartet does not move partition leadership.' };
}

function everyPartition(request: Request, errorCode: number, errorMessage: string | null): Response {
  return {
    throttleTimeMs: 0,
    errorCode,
    replicaElectionResults: (request.topicPartitions ?? []).map((t) => ({
      topic: t.topic,
      partitionResult: t.partitionId.map((partitionId) => ({ partitionId, errorCode, errorMessage })),
    })),
  };
}

export const electLeadersHandler = defineHandler({
  apiKey: ApiKey.ElectLeaders,
  minVersion: 0,
  maxVersion: 2,
  handle(request, { frontend, session }) {
    if (!kafkaAccessOf(frontend, session).cluster('alter')) return everyPartition(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, null);
    if (request.electionType !== ElectionType.PREFERRED && request.electionType !== ElectionType.UNCLEAN) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_REQUEST, replicaElectionResults: [] };
    }
    // Every partition (null): only elections that happened are listed, and none ever needs to.
    if (request.topicPartitions === null) return { throttleTimeMs: 0, errorCode: 0, replicaElectionResults: [] };
    const results = new Map<string, PartitionResult[]>();
    for (const t of request.topicPartitions) {
      const list = results.get(t.topic) ?? [];
      for (const p of t.partitionId) if (!list.some((r) => r.partitionId === p)) list.push(partitionResult(frontend, t.topic, p));
      results.set(t.topic, list);
    }
    return { throttleTimeMs: 0, errorCode: 0, replicaElectionResults: [...results].map(([topic, partitionResult]) => ({ topic, partitionResult })) };
  },
  errorResponse(request, errorCode) {
    return everyPartition(request, errorCode, null);
  },
});
