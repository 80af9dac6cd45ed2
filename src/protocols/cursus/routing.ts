// Where a Cursus record goes (spec §8, "Partition Keys": FNV-1a 64 of the key modulo the partition
// count), and the Cursus definition of a topic nobody gave Cursus settings for (one created by
// Kafka or Iggy, or any topic when a service runs without the topic table, as in handler tests).

import type { Broker } from '../../core/broker.js';
import type { Topic } from '../../core/catalog.js';
import { CursusFailure, type CursusTopicView } from './handler.js';

/** FNV-1a 64 of `key`, modulo `n`, in 32-bit halves (exact, no BigInt per byte). */
export function fnv1a64Mod(key: Buffer, n: number): number {
  // Offset basis 0xcbf29ce484222325; prime 0x100000001b3 = 2^40 + 0x1b3.
  let hi = 0xcbf29ce4;
  let lo = 0x84222325;
  for (let i = 0; i < key.length; i++) {
    lo = (lo ^ key[i]!) >>> 0;
    const low = lo * 0x1b3;
    const carry = Math.floor(low / 0x1_0000_0000);
    hi = (hi * 0x1b3 + carry + ((lo << 8) >>> 0)) >>> 0;
    lo = low >>> 0;
  }
  return Number(((BigInt(hi) << 32n) | BigInt(lo)) % BigInt(n));
}

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
