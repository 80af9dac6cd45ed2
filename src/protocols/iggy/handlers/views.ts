// Catalog and log state rendered as the Iggy response records (server notes §7): StreamResponse,
// TopicHeader, PartitionResponse. Times on the wire are µs; the catalog keeps ms.

import type { Namespace, Topic } from '../../../core/catalog.js';
import type { StreamInfo } from '../codec/commands/streams.js';
import { CompressionAlgorithm, type PartitionInfo, type TopicInfo } from '../codec/commands/topics.js';
import type { IggyFrontend } from '../frontend.js';
import { derivedEntries, explicitEntries } from '../topic-options.js';

export const micros = (ms: number): bigint => BigInt(Math.max(0, Math.floor(ms))) * 1000n;

interface PartitionTotals {
  sizeBytes: bigint;
  messagesCount: bigint;
}

export function partitionInfo(frontend: IggyFrontend, topic: Topic, partition: number): PartitionInfo {
  const stats = frontend.broker.partition(topic, partition).stats();
  const messages = Math.max(0, stats.highWatermark - stats.logStartOffset);
  return {
    id: partition,
    createdAt: micros(topic.createdAt),
    segmentsCount: Math.max(1, stats.segmentCount),
    currentOffset: BigInt(Math.max(0, stats.highWatermark - 1)),
    sizeBytes: BigInt(stats.sizeBytes),
    messagesCount: BigInt(messages),
  };
}

function totals(frontend: IggyFrontend, topic: Topic): PartitionTotals {
  let sizeBytes = 0n;
  let messagesCount = 0n;
  for (let p = 0; p < topic.partitions; p++) {
    const info = partitionInfo(frontend, topic, p);
    sizeBytes += info.sizeBytes;
    messagesCount += info.messagesCount;
  }
  return { sizeBytes, messagesCount };
}

export function topicInfo(frontend: IggyFrontend, topic: Topic, zeroed = false): TopicInfo {
  const options = frontend.topicOptions.viewOf(topic);
  const t = zeroed ? { sizeBytes: 0n, messagesCount: 0n } : totals(frontend, topic);
  return {
    id: topic.id,
    createdAt: micros(topic.createdAt),
    partitionsCount: topic.partitions,
    messageExpiry: options.values.message_expiry,
    compressionAlgorithm: options.values.compression_algorithm === 'gzip' ? CompressionAlgorithm.gzip : CompressionAlgorithm.none,
    maxTopicSize: options.values.max_topic_size,
    sizeBytes: t.sizeBytes,
    messagesCount: t.messagesCount,
    name: topic.name,
    explicitOptions: explicitEntries(options),
    derivedOptions: derivedEntries(options),
  };
}

export function streamInfo(frontend: IggyFrontend, ns: Namespace): StreamInfo {
  const topics = frontend.broker.catalog.listTopics(ns.id);
  let sizeBytes = 0n;
  let messagesCount = 0n;
  for (const topic of topics) {
    const t = totals(frontend, topic);
    sizeBytes += t.sizeBytes;
    messagesCount += t.messagesCount;
  }
  return { id: ns.id, createdAt: micros(ns.createdAt), topicsCount: topics.length, sizeBytes, messagesCount, name: ns.name, options: [] };
}
