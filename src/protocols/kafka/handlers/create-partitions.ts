// CreatePartitions (key 37), v0-3. Grammar: codec/messages/create-partitions.ts.
//
// As Kafka (ControllerApis.createPartitions, ReplicationControlManager.createPartitions): a topic
// named twice → INVALID_REQUEST "Duplicate topic name."; an unknown topic →
// UNKNOWN_TOPIC_OR_PARTITION; a count not above the current one → INVALID_PARTITIONS (37);
// assignments, when given, must list exactly the new partitions, each on this broker alone →
// otherwise INVALID_REPLICA_ASSIGNMENT (39). validate_only runs the checks and changes nothing.
// Partitions are never removed (Kafka cannot either). A topic the SASL user may not alter
// (../access.ts, Iggy manage_topic) → TOPIC_AUTHORIZATION_FAILED (29), before anything else.

import { partitionsPerTopicMax } from '../../../core/catalog.js';
import { kafkaAccessOf, type KafkaAccess } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import type { RequestOf, ResponseInputOf } from '../codec/messages/index.js';
import { kafkaCodeOf } from '../errors.js';
import { findKafkaTopic } from '../topics.js';
import { defineHandler, type KafkaFrontend } from './types.js';

type CreatePartitionsTopic = RequestOf<typeof ApiKey.CreatePartitions>['topics'][number];
type TopicResult = NonNullable<ResponseInputOf<typeof ApiKey.CreatePartitions>['results']>[number];

function assignmentProblem(topic: CreatePartitionsTopic, increment: number, nodeId: number): string | null {
  const assignments = topic.assignments;
  if (assignments === null) return null;
  if (assignments.length !== increment) {
    return `Attempted to add ${increment} additional partition(s), but only ${assignments.length} assignment(s) were specified.`;
  }
  for (const a of assignments) {
    if (a.brokerIds.length === 0) return 'The manual partition assignment includes an empty replica list.';
    const other = a.brokerIds.find((id) => id !== nodeId);
    if (other !== undefined) return `The manual partition assignment includes broker ${other}, but no such broker is registered.`;
    if (a.brokerIds.length > 1) return `The manual partition assignment includes broker ${nodeId} more than once.`;
  }
  return null;
}

async function growOne(frontend: KafkaFrontend, access: KafkaAccess, topic: CreatePartitionsTopic, validateOnly: boolean): Promise<TopicResult> {
  const name = topic.name;
  if (!access.topicNamed(name, 'alter')) return { name, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: 'Authorization failed.' };
  const current = findKafkaTopic(frontend.broker, name);
  if (current === null) return { name, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `The topic '${name}' does not exist.` };
  if (topic.count < current.partitions) {
    return { name, errorCode: ErrorCode.INVALID_PARTITIONS, errorMessage: `Topic currently has ${current.partitions} partitions, which is higher than the requested ${topic.count}.` };
  }
  if (topic.count === current.partitions) {
    return { name, errorCode: ErrorCode.INVALID_PARTITIONS, errorMessage: `Topic already has ${current.partitions} partitions.` };
  }
  if (topic.count > partitionsPerTopicMax) {
    return { name, errorCode: ErrorCode.INVALID_PARTITIONS, errorMessage: `The partition count ${topic.count} is above the limit of ${partitionsPerTopicMax}.` };
  }
  const problem = assignmentProblem(topic, topic.count - current.partitions, frontend.nodeId);
  if (problem !== null) return { name, errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT, errorMessage: problem };
  if (validateOnly) return { name, errorCode: 0, errorMessage: null };
  try {
    await frontend.broker.addPartitions(current, topic.count);
    frontend.logger.info('added partitions', { topic: name, from: current.partitions, to: topic.count });
    return { name, errorCode: 0, errorMessage: null };
  } catch (err) {
    return { name, errorCode: kafkaCodeOf(err), errorMessage: err instanceof Error ? err.message : String(err) };
  }
}

export const createPartitionsHandler = defineHandler({
  apiKey: ApiKey.CreatePartitions,
  minVersion: 0,
  maxVersion: 3,
  async handle(request, { frontend, session }) {
    const access = kafkaAccessOf(frontend, session);
    const occurrences = new Map<string, number>();
    for (const t of request.topics) occurrences.set(t.name, (occurrences.get(t.name) ?? 0) + 1);
    const answered = new Set<string>();
    const results: TopicResult[] = [];
    for (const topic of request.topics) {
      if (answered.has(topic.name)) continue;
      answered.add(topic.name);
      if (occurrences.get(topic.name)! > 1) results.push({ name: topic.name, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Duplicate topic name.' });
      else results.push(await growOne(frontend, access, topic, request.validateOnly));
    }
    return { throttleTimeMs: 0, results };
  },
  errorResponse(request, errorCode) {
    return { throttleTimeMs: 0, results: [...new Set(request.topics.map((t) => t.name))].map((name) => ({ name, errorCode, errorMessage: null })) };
  },
});
