// Kafka topic names and their place in the catalog. A Kafka topic `orders` is the topic `orders`
// of the namespace 'default' (shared/DESIGN.md "Catalog"): the same log as Iggy stream `default` /
// topic `orders`. Topics of other namespaces are not visible to Kafka clients.
//
// Kafka's rules (org.apache.kafka.common.internals.Topic.validate): 1..249 characters from
// [a-zA-Z0-9._-], and not "." or "..". The catalog's own rules are looser (any 255 UTF-8 bytes),
// so a topic created through another protocol may have a name Kafka cannot express; such topics
// are left out of Metadata's "all topics" answer.

import { defaultNamespaceName, type Topic, type TopicRef } from '../../core/catalog.js';
import type { Broker } from '../../core/broker.js';
import type { PartitionLog } from '../../log/types.js';
import { ErrorCode } from './codec/errors.js';

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

/** The catalog reference of a Kafka topic name. */
export function kafkaTopicRef(name: string): TopicRef {
  return { namespace: defaultNamespaceName, topic: name };
}

/** The Kafka-visible topic of that name, or null (unknown, or not in the default namespace). */
export function findKafkaTopic(broker: Broker, name: string): Topic | null {
  return broker.catalog.getTopic(kafkaTopicRef(name));
}

/** Every topic a Kafka client can see: the default namespace's topics with legal Kafka names. */
export function listKafkaTopics(broker: Broker): Topic[] {
  if (broker.catalog.getNamespace(defaultNamespaceName) === null) return [];
  return broker.catalog.listTopics(defaultNamespaceName).filter((t) => kafkaTopicNameProblem(t.name) === null);
}

/** The Kafka topic of a topic id (Metadata v10+, Fetch v13+), or null. */
export function findKafkaTopicById(broker: Broker, uuid: Buffer): Topic | null {
  const topic = broker.catalog.topicByUuid(uuid);
  return topic && topic.namespace === defaultNamespaceName ? topic : null;
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
