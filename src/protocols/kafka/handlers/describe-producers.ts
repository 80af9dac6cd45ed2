// DescribeProducers (key 61), v0. Grammar: codec/messages/describe-producers.ts.
//
// The active producers of each partition, from the core's idempotent-producer state
// (core/producer-state.ts: the producers whose window on the partition is still held): id, epoch,
// the last sequence and timestamp appended, and the first offset of its open transaction on the
// partition (-1 when none; core/transactions.ts). coordinator_epoch is -1 (Quartet's markers are
// not tied to a coordinator epoch a client could use). As KafkaApis: READ on the topic (Quartet:
// poll_messages) or TOPIC_AUTHORIZATION_FAILED (29); unknown topic or partition →
// UNKNOWN_TOPIC_OR_PARTITION (3).

import { partitionKey } from '../../../core/producer-state.js';
import { kafkaAccessOf } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import { findKafkaTopic } from '../topics.js';
import { defineHandler, type KafkaFrontend } from './types.js';
import type { Topic } from '../../../core/catalog.js';

function failedPartition(partitionIndex: number, errorCode: number, errorMessage: string | null) {
  return { partitionIndex, errorCode, errorMessage, activeProducers: [] };
}

function producersOf(frontend: KafkaFrontend, topic: Topic, partition: number) {
  const open = new Map(frontend.broker.transactions.openTransactions(topic, partition).map((t) => [t.producerId, t.firstOffset]));
  const activeProducers = frontend.broker.producers.producersOn(partitionKey(topic.internalId, partition)).map((p) => ({
    producerId: p.producerId,
    producerEpoch: p.epoch,
    lastSequence: p.lastSequence,
    lastTimestamp: p.lastTimestamp,
    coordinatorEpoch: -1,
    currentTxnStartOffset: open.get(p.producerId) ?? -1,
  }));
  return { partitionIndex: partition, errorCode: ErrorCode.NONE, errorMessage: null, activeProducers };
}

export const describeProducersHandler = defineHandler({
  apiKey: ApiKey.DescribeProducers,
  minVersion: 0,
  maxVersion: 0,
  handle(request, { frontend, session }) {
    const access = kafkaAccessOf(frontend, session);
    const topics = request.topics.map((t) => {
      const topic = findKafkaTopic(frontend.broker, t.name);
      const partitions = t.partitionIndexes.map((p) => {
        if (!access.topicNamed(t.name, 'read')) return failedPartition(p, ErrorCode.TOPIC_AUTHORIZATION_FAILED, null);
        if (topic === null || !Number.isInteger(p) || p < 0 || p >= topic.partitions) return failedPartition(p, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, null);
        return producersOf(frontend, topic, p);
      });
      return { name: t.name, partitions };
    });
    return { throttleTimeMs: 0, topics };
  },
  errorResponse(request, errorCode) {
    return { throttleTimeMs: 0, topics: request.topics.map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((p) => failedPartition(p, errorCode, null)) })) };
  },
});
