// Kafka topic names and their place in the catalog (docs/mapping.md, src/protocols/mapping.ts).
// A Kafka topic `orders` is the topic `orders` of the namespace 'default' (shared/DESIGN.md
// "Catalog"): the same log as Iggy stream `default` / topic `orders`. A topic `t` of another
// namespace `n` (an Iggy stream) is the Kafka topic `esc(n).esc(t)`; a default-namespace topic
// literally named so shadows it. Kafka clients create topics in 'default' only.
//
// Kafka's rules (org.apache.kafka.common.internals.Topic.validate): 1..249 characters from
// [a-zA-Z0-9._-], and not "." or "..". The catalog's own rules are looser (any 255 UTF-8 bytes),
// so a topic created through another protocol may have a name Kafka cannot express; such topics
// are left out of Metadata's "all topics" answer. Responses name a resolved topic through
// kafkaNameOf, never topic.name.

import type { Topic } from '../../core/catalog.js';
import type { Broker } from '../../core/broker.js';
import type { PartitionLog } from '../../core/broker.js';
import { ErrorCode } from './codec/errors.js';
import { kafkaTopicNameFor, kafkaVisibleTopics, resolveKafkaTopicName } from '../mapping.js';

export const kafkaTopicNameCharsMax = 249;
const legalChars = /^[a-zA-Z0-9._-]+$/;

/** Why `name` is not a legal Kafka topic name, or null. */
export function kafkaTopicNameProblem(name: string): string | null {
  if (name.length === 0) return 'the topic name is empty';
  if (name === '.' || name === '..') return `the topic name cannot be "${name}"`;
  if (name.length > kafkaTopicNameCharsMax) return `the topic name is longer than ${kafkaTopicNameCharsMax} characters`;
  if (!legalChars.test(name)) return 'the topic name may contain only ASCII letters, digits, ".", "_" and "-"';
  return null;
}

/**
 * The topic a Kafka name resolves to, or null: the default namespace's topic of that name first,
 * then (a name `a.b` whose halves decode) topic `unesc(b)` of namespace `unesc(a)`.
 */
export function findKafkaTopic(broker: Broker, name: string): Topic | null {
  return resolveKafkaTopicName(name, (n) => broker.catalog.getTopic({ namespace: n.namespace, topic: n.topic }));
}

/**
 * The name Kafka clients know a topic by: its mapped name (kafkaTopicNameFor). A topic Kafka
 * cannot name is never listed; should one be reached anyway (a default-namespace topic looked up
 * by its exact name), its catalog name is used as is.
 */
export function kafkaNameOf(topic: Topic): string {
  return kafkaTopicNameFor(topic.namespace, topic.name) ?? topic.name;
}

/** Every topic a Kafka client can see, of every namespace, minus unnameable and shadowed ones. */
export function listKafkaTopics(broker: Broker): Topic[] {
  return kafkaVisibleTopics(broker.catalog.listTopics()).map((v) => v.topic);
}

/** Whether Kafka clients can name this topic and its mapped name resolves back to it (not shadowed). */
export function isKafkaVisible(broker: Broker, topic: Topic): boolean {
  const name = kafkaTopicNameFor(topic.namespace, topic.name);
  return name !== null && findKafkaTopic(broker, name)?.internalId === topic.internalId;
}

/** The Kafka topic of a topic id (Metadata v10+, DeleteTopics v6+), or null. */
export function findKafkaTopicById(broker: Broker, uuid: Buffer): Topic | null {
  const topic = broker.catalog.topicByUuid(uuid);
  return topic && isKafkaVisible(broker, topic) ? topic : null;
}

export type PartitionLookup =
  | { ok: true; topic: Topic; log: PartitionLog }
  | { ok: false; errorCode: number };

/**
 * The log of a Kafka topic partition, or the per-partition Kafka error: INVALID_TOPIC_EXCEPTION
 * for an illegal name, UNKNOWN_TOPIC_OR_PARTITION for a missing topic or partition.
 */
export function lookupPartition(broker: Broker, topicName: string, partition: number): PartitionLookup {
  if (kafkaTopicNameProblem(topicName) !== null) return { ok: false, errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION };
  const topic = findKafkaTopic(broker, topicName);
  if (topic === null || !Number.isInteger(partition) || partition < 0 || partition >= topic.partitions) {
    return { ok: false, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION };
  }
  try {
    return { ok: true, topic, log: broker.partition(topic, partition) };
  } catch {
    return { ok: false, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION };
  }
}

/**
 * lookupPartition for a request that reads or changes the log itself (Fetch, ListOffsets,
 * DeleteRecords): an Iggy purge of the topic under way (Broker.purgeInProgress) replaces its logs,
 * so the lookup waits for it and then finds the new log, as Broker.append and Broker.read do; a
 * purge not done within `purgeWaitMs` is KAFKA_STORAGE_ERROR (retriable).
 */
export function lookupPartitionSettled(broker: Broker, topicName: string, partition: number, purgeWaitMs: number): PartitionLookup | Promise<PartitionLookup> {
  const found = lookupPartition(broker, topicName, partition);
  const purging = found.ok ? broker.purgeInProgress(found.topic) : undefined;
  if (purging === undefined) return found;
  return settledWithin(purging, purgeWaitMs).then((settled) => (settled ? lookupPartition(broker, topicName, partition) : { ok: false, errorCode: ErrorCode.KAFKA_STORAGE_ERROR }));
}

/** True once `purge` has settled, false if it has not within `ms` (a purge never rejects). */
export function settledWithin(purge: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  return Promise.race([purge.then(() => true), late]).finally(() => clearTimeout(timer));
}

/**
 * Kafka's check of a request's current_leader_epoch against the partition leader's (the core's
 * replication state): newer is UNKNOWN_LEADER_EPOCH, older FENCED_LEADER_EPOCH, -1 not checked.
 */
export function leaderEpochError(current: number, leaderEpoch: number): number {
  if (current > leaderEpoch) return ErrorCode.UNKNOWN_LEADER_EPOCH;
  if (current >= 0 && current < leaderEpoch) return ErrorCode.FENCED_LEADER_EPOCH;
  return ErrorCode.NONE;
}
