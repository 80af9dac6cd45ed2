// Where a Cursus record goes (spec §8, "Partition Keys": FNV-1a 64 of the key modulo the partition
// count), and the Cursus definition of a topic nobody gave Cursus settings for (one created by
// Kafka or Iggy, or any topic when a service runs without the topic table, as in handler tests).

import type { Broker } from '../../core/broker.js';
import type { Topic } from '../../core/catalog.js';
import { CursusFailure, type CursusTopicView } from './handler.js';

export { fnv1a64Mod } from '../../base/hash.js';

/** Cursus's defaults for a topic without a Cursus definition. */
export function defaultTopicView(topic: Topic): CursusTopicView {
  return {
    name: topic.name,
    partitions: topic.partitions,
    revision: 1,
    lifecycleEpoch: 0,
    idempotent: false,
    eventSourcing: false,
    aggregateReplay: false,
    partitioner: 'hash_key',
    authPolicy: 'open',
    readAcl: [],
    writeAcl: [],
    cleanupPolicy: 'delete',
    retentionHours: 0,
    retentionBytes: 0,
    minInSyncReplicas: null,
  };
}

export function topicNotFound(name: string): CursusFailure {
  return CursusFailure.of('topic_not_found', [['topic', name]]);
}

/** The core topic of a Cursus topic name (namespace `default`), or topic_not_found. */
export function requireCoreTopic(broker: Broker, name: string): Topic {
  const topic = broker.catalog.getTopic({ topic: name });
  if (topic === null) throw topicNotFound(name);
  return topic;
}
