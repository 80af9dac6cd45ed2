// CreateTopics (key 19), v0-7. Grammar: codec/messages/create-topics.ts.
//
// Checks, per topic and in Kafka's order (ControllerApis.createTopics, then
// ReplicationControlManager.createTopics / createTopic):
//   a name given twice in one request        → INVALID_REQUEST "Duplicate topic name." (one result)
//   the SASL user may not create topics in the default stream (../access.ts: manage_topics there,
//   or global manage_streams/manage_topics)  → TOPIC_AUTHORIZATION_FAILED (29)
//   not a legal Kafka name, or colliding with an existing topic once '.' and '_' are equated
//                                            → INVALID_TOPIC_EXCEPTION (17)
//   the topic exists                         → TOPIC_ALREADY_EXISTS (36); the name is resolved as
//                                              everywhere (../topics.ts), so `s.t` naming Iggy
//                                              stream `s` / topic `t` exists
//   a config refused (../topic-configs.ts)   → INVALID_CONFIG (40), or INVALID_REQUEST for a null value
//   manual assignments with num_partitions or replication_factor not -1 → INVALID_REQUEST (42)
//   manual assignments naming another broker, a duplicate or empty replica list, or partitions
//   that are not 0..n-1                      → INVALID_REPLICA_ASSIGNMENT (39)
//   replication_factor 0 or < -1, or > 1 (one broker) → INVALID_REPLICATION_FACTOR (38)
//   num_partitions 0 or < -1, or above the core's limit → INVALID_PARTITIONS (37)
// Topics are always created in the default namespace (a Kafka client cannot create an Iggy stream).
// num_partitions -1 takes the listener's default partition count, replication_factor -1 is 1.
// validate_only runs every check and creates nothing; the result then carries the all-zero topic
// id (as the ZooKeeper-era broker did). v5+ results carry num_partitions, replication_factor and
// the effective configs with their sources. timeout_ms is not needed: creation is complete when
// the core call returns.

import { defaultNamespaceName, partitionsPerTopicMax } from '../../../core/catalog.js';
import { parseTopicConfig, type TopicConfig } from '../../../core/topic-config.js';
import { kafkaAccessOf, type KafkaAccess } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import type { RequestOf, ResponseInputOf } from '../codec/messages/index.js';
import { zeroUuid } from '../codec/reader.js';
import { kafkaCodeOf } from '../errors.js';
import { checkTopicConfigValue, describeTopicConfigs, isConfigRefusal } from '../topic-configs.js';
import { findKafkaTopic, kafkaNameOf, kafkaTopicNameProblem, listKafkaTopics } from '../topics.js';
import { defineHandler, type KafkaFrontend } from './types.js';

type CreateTopicsRequest = RequestOf<typeof ApiKey.CreateTopics>;
type CreatableTopic = CreateTopicsRequest['topics'][number];
type TopicResult = NonNullable<ResponseInputOf<typeof ApiKey.CreateTopics>['topics']>[number];

function failure(name: string, errorCode: number, errorMessage: string | null): TopicResult {
  return { name, errorCode, errorMessage, numPartitions: -1, replicationFactor: -1, configs: null };
}

/** Kafka's collision rule: '.' and '_' may be confused in metric names, so `a.b` and `a_b` cannot both exist. */
function collisionOf(frontend: KafkaFrontend, name: string): string | null {
  const folded = name.replaceAll('.', '_');
  for (const topic of listKafkaTopics(frontend.broker)) {
    const existing = kafkaNameOf(topic);
    if (existing !== name && existing.replaceAll('.', '_') === folded) return existing;
  }
  return null;
}

/** The partition count from manual assignments, or why they are refused. */
function manualPartitionCount(topic: CreatableTopic, nodeId: number): number | { errorCode: number; message: string } {
  if (topic.replicationFactor !== -1) {
    return { errorCode: ErrorCode.INVALID_REQUEST, message: 'A manual partition assignment was specified, but replication factor was not set to -1.' };
  }
  if (topic.numPartitions !== -1) {
    return { errorCode: ErrorCode.INVALID_REQUEST, message: 'A manual partition assignment was specified, but numPartitions was not set to -1.' };
  }
  const seen = new Set<number>();
  for (const assignment of topic.assignments) {
    const bad = (message: string) => ({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT, message });
    if (seen.has(assignment.partitionIndex)) return bad(`Found multiple manual partition assignments for partition ${assignment.partitionIndex}`);
    seen.add(assignment.partitionIndex);
    if (assignment.brokerIds.length === 0) return bad('The manual partition assignment includes an empty replica list.');
    const other = assignment.brokerIds.find((id) => id !== nodeId);
    if (other !== undefined) return bad(`The manual partition assignment includes broker ${other}, but no such broker is registered.`);
    if (assignment.brokerIds.length > 1) return bad(`The manual partition assignment includes broker ${nodeId} more than once.`);
  }
  for (let p = 0; p < seen.size; p++) {
    if (!seen.has(p)) return { errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT, message: 'Partitions should be a consecutive 0-based integer sequence' };
  }
  return seen.size;
}

/** The partition count from num_partitions / replication_factor, or why they are refused. */
function partitionCount(topic: CreatableTopic, frontend: KafkaFrontend): number | { errorCode: number; message: string } {
  const rf = topic.replicationFactor;
  if (rf === 0 || rf < -1) {
    return { errorCode: ErrorCode.INVALID_REPLICATION_FACTOR, message: 'Replication factor must be larger than 0, or -1 to use the default value.' };
  }
  if (rf > 1) {
    return {
      errorCode: ErrorCode.INVALID_REPLICATION_FACTOR,
      message: `Unable to replicate the partition ${rf} time(s): The target replication factor of ${rf} cannot be reached because only 1 broker(s) are registered.`,
    };
  }
  const n = topic.numPartitions;
  if (n === 0 || n < -1) return { errorCode: ErrorCode.INVALID_PARTITIONS, message: 'Number of partitions was set to an invalid non-positive value.' };
  if (n > partitionsPerTopicMax) return { errorCode: ErrorCode.INVALID_PARTITIONS, message: `Number of partitions ${n} is above the limit of ${partitionsPerTopicMax}.` };
  return n === -1 ? frontend.settings.defaultPartitions : n;
}

function configsOf(explicit: Readonly<TopicConfig>, frontend: KafkaFrontend): NonNullable<TopicResult['configs']> {
  return describeTopicConfigs(explicit, frontend.broker.topicDefaults).map((c) => ({
    name: c.name,
    value: c.value,
    readOnly: c.readOnly,
    configSource: c.source,
    isSensitive: false,
  }));
}

async function createOne(frontend: KafkaFrontend, access: KafkaAccess, topic: CreatableTopic, validateOnly: boolean): Promise<TopicResult> {
  const name = topic.name;
  if (!access.topicNamed(name, 'create')) return failure(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Authorization failed.');
  const nameProblem = kafkaTopicNameProblem(name);
  if (nameProblem !== null) return failure(name, ErrorCode.INVALID_TOPIC_EXCEPTION, `Topic name "${name}" is illegal: ${nameProblem}`);
  if (findKafkaTopic(frontend.broker, name) !== null) return failure(name, ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${name}' already exists.`);
  const collision = collisionOf(frontend, name);
  if (collision !== null) return failure(name, ErrorCode.INVALID_TOPIC_EXCEPTION, `Topic '${name}' collides with existing topic: ${collision}`);

  const config: Record<string, string> = {};
  for (const entry of topic.configs) {
    const checked = checkTopicConfigValue(entry.name, entry.value);
    if (isConfigRefusal(checked)) return failure(name, checked.code, checked.message);
    if (checked.store !== null) config[entry.name] = checked.store;
  }

  const partitions = topic.assignments.length > 0 ? manualPartitionCount(topic, frontend.nodeId) : partitionCount(topic, frontend);
  if (typeof partitions !== 'number') return failure(name, partitions.errorCode, partitions.message);

  if (validateOnly) {
    return { name, topicId: zeroUuid, errorCode: 0, errorMessage: null, numPartitions: partitions, replicationFactor: 1, configs: configsOf(parseTopicConfig(config), frontend) };
  }
  try {
    const created = await frontend.broker.createTopic(defaultNamespaceName, name, { partitions, config });
    return { name, topicId: created.uuid, errorCode: 0, errorMessage: null, numPartitions: created.partitions, replicationFactor: 1, configs: configsOf(created.config, frontend) };
  } catch (err) {
    return failure(name, kafkaCodeOf(err), err instanceof Error ? err.message : String(err));
  }
}

export const createTopicsHandler = defineHandler({
  apiKey: ApiKey.CreateTopics,
  minVersion: 0,
  maxVersion: 7,
  async handle(request, { frontend, session }) {
    const access = kafkaAccessOf(frontend, session);
    const occurrences = new Map<string, number>();
    for (const t of request.topics) occurrences.set(t.name, (occurrences.get(t.name) ?? 0) + 1);
    const answered = new Set<string>();
    const topics: TopicResult[] = [];
    // One at a time: a later topic's collision check must see the earlier ones.
    for (const topic of request.topics) {
      if (answered.has(topic.name)) continue;
      answered.add(topic.name);
      if (occurrences.get(topic.name)! > 1) topics.push(failure(topic.name, ErrorCode.INVALID_REQUEST, 'Duplicate topic name.'));
      else topics.push(await createOne(frontend, access, topic, request.validateOnly));
    }
    return { throttleTimeMs: 0, topics };
  },
  errorResponse(request, errorCode) {
    const names = [...new Set(request.topics.map((t) => t.name))];
    return { throttleTimeMs: 0, topics: names.map((name) => failure(name, errorCode, null)) };
  },
});
