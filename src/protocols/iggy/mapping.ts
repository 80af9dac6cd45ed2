// Iggy names onto the catalog (docs/mapping.md):
//   Iggy stream (id, name)            = catalog namespace (id, name); 'default' is stream
//                                       `default`, made with its first topic (catalog.ts), with
//                                       the next free id: a fresh broker has no streams.
//   Iggy topic (id, name) in a stream = catalog topic (id unique within the namespace, name).
//   Iggy partition id (0-based)       = catalog partition number.
//   Kafka name of an Iggy topic       = src/protocols/mapping.ts (stream `default` topic `orders`
//                                       is Kafka `orders`; stream `s` topic `t` is Kafka `s.t`,
//                                       with escaping).

import type { Catalog, Namespace, Topic, TopicRef } from '../../core/catalog.js';
import { IggyErrorCode, type Identifier } from './codec/index.js';
import { partitionsPerRequestMax } from './codec/commands/partitions.js';
import { IggyFailure } from './errors.js';

export { kafkaTopicNameFor, resolveKafkaTopicName, catalogCandidatesForKafkaName, escapeNamePart, unescapeNamePart } from '../mapping.js';

/** An Iggy Identifier as a catalog namespace reference. */
export function namespaceRef(id: Identifier): string | number {
  return id.value;
}

export function topicRef(stream: Identifier, topic: Identifier): TopicRef {
  return { namespace: stream.value, topic: topic.value };
}

/** The stream or null (reads answer "not found" with an empty body). */
export function findStream(catalog: Catalog, id: Identifier): Namespace | null {
  return catalog.getNamespace(id.value);
}

/** The topic, or null when it or its stream does not exist. */
export function findTopic(catalog: Catalog, stream: Identifier, topic: Identifier): Topic | null {
  const ns = findStream(catalog, stream);
  return ns === null ? null : catalog.getTopic({ namespace: ns.id, topic: topic.value });
}

/**
 * The stream, or 1009 StreamIdNotFound (status: pre-commit denial, empty body; or committed).
 * The reference server answers 1009/2010 whether the stream or topic was named by id or by
 * name (its commands may only commit those codes); 1010/2011 are never sent.
 */
export function requireStream(catalog: Catalog, id: Identifier, mode: 'status' | 'result' = 'status'): Namespace {
  const ns = catalog.getNamespace(id.value);
  if (ns === null) throw new IggyFailure(IggyErrorCode.streamIdNotFound, mode, 'stream not found');
  return ns;
}

/** The topic, or 1009/2010 (by id or by name alike). */
export function requireTopic(catalog: Catalog, stream: Identifier, topic: Identifier, mode: 'status' | 'result' = 'status'): Topic {
  const ns = requireStream(catalog, stream, mode);
  const t = catalog.getTopic({ namespace: ns.id, topic: topic.value });
  if (t === null) throw new IggyFailure(IggyErrorCode.topicIdNotFound, mode, 'topic not found');
  return t;
}

export function requirePartition(topic: Topic, partitionId: number, mode: 'status' | 'result' = 'status'): number {
  if (!Number.isInteger(partitionId) || partitionId < 0 || partitionId >= topic.partitions) {
    throw new IggyFailure(IggyErrorCode.partitionNotFound, mode, `partition ${partitionId} not found`);
  }
  return partitionId;
}

/**
 * The partitions-count bound of CreateTopic (min 0), CreatePartitions and DeletePartitions (min
 * 1): at most 1,000 per request, else TooManyPartitions (2015) as a plain status, before the
 * stream or topic is looked up or the permission checked, as the reference server's static
 * bounds deny it pre-consensus (and its older servers answered the same code).
 */
export function requirePartitionsCountInBounds(count: number, min: 0 | 1): void {
  if (count < min || count > partitionsPerRequestMax) {
    throw new IggyFailure(IggyErrorCode.tooManyPartitions, 'status', `partitions_count must be ${min}..${partitionsPerRequestMax}`);
  }
}
