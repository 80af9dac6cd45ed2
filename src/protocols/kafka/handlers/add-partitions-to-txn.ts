// AddPartitionsToTxn (key 24), v0-3: the partitions a transaction will write, so the coordinator
// writes its markers there. Only the client form is served: v4+ is the batched broker-to-broker
// form (AddPartitionsToTxnRequest.json: "Versions 3 and below will be exclusively used by
// clients"), and kafka-broker-notes.md §3.3 caps the advertised range at 3.
//
// Follows apache/kafka KafkaApis.handleAddPartitionsToTxnRequest (client versions):
// - every partition is checked first; a topic the SASL user may not write to (../access.ts, Iggy
//   send_messages) answers TOPIC_AUTHORIZATION_FAILED (29); a topic or partition that does not exist answers
//   UNKNOWN_TOPIC_OR_PARTITION (an illegal topic name too), and if any partition failed, every
//   other one answers OPERATION_NOT_ATTEMPTED (55) and the coordinator is not called;
// - otherwise the coordinator's single answer goes to every partition;
// - PRODUCER_FENCED (90) from v2 ("Version 2 adds the support for new error code
//   PRODUCER_FENCED"), INVALID_PRODUCER_EPOCH (47) before.
// Topics repeated in the request are answered once per entry, in request order.

import type { TopicRef } from '../../../core/broker.js';
import { kafkaAccessOf } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import type { AddPartitionsToTxnRequest, AddPartitionsToTxnResponseInput } from '../codec/messages/add-partitions-to-txn.js';
import { lookupPartition } from '../topics.js';
import { kafkaTransactionScope, kafkaTxnErrorCode } from '../transactions.js';
import { defineHandler } from './types.js';

const producerFencedSince = 2;

/** The same error code for every partition of the request. */
function answerAll(request: AddPartitionsToTxnRequest, errorCode: number): AddPartitionsToTxnResponseInput {
  return {
    throttleTimeMs: 0,
    results: request.topics.map((t) => ({
      name: t.name,
      results: t.partitions.map((partitionIndex) => ({ partitionIndex, partitionErrorCode: errorCode })),
    })),
  };
}

export const addPartitionsToTxnHandler = defineHandler({
  apiKey: ApiKey.AddPartitionsToTxn,
  minVersion: 0,
  maxVersion: 3,
  errorResponse(request, errorCode) {
    return answerAll(request, errorCode);
  },
  async handle(request, { frontend, session, version }) {
    const { broker } = frontend;
    const access = kafkaAccessOf(frontend, session);
    const partitions: Array<{ topic: TopicRef; partition: number }> = [];
    let anyFailed = false;
    const checked = request.topics.map((t) => ({
      name: t.name,
      results: t.partitions.map((partitionIndex): { partitionIndex: number; partitionErrorCode: number } => {
        if (!access.topicNamed(t.name, 'write')) {
          anyFailed = true;
          return { partitionIndex, partitionErrorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED };
        }
        const found = lookupPartition(broker, t.name, partitionIndex);
        if (!found.ok) {
          anyFailed = true;
          // Kafka answers UNKNOWN_TOPIC_OR_PARTITION for anything not in its metadata cache.
          return { partitionIndex, partitionErrorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION };
        }
        partitions.push({ topic: found.topic, partition: partitionIndex });
        return { partitionIndex, partitionErrorCode: ErrorCode.NONE };
      }),
    }));
    if (anyFailed) {
      for (const t of checked) {
        for (const p of t.results) if (p.partitionErrorCode === ErrorCode.NONE) p.partitionErrorCode = ErrorCode.OPERATION_NOT_ATTEMPTED;
      }
      return { throttleTimeMs: 0, results: checked };
    }
    const id = { scope: kafkaTransactionScope, transactionalId: request.transactionalId, producerId: request.producerId, producerEpoch: request.producerEpoch };
    try {
      await broker.transactions.addPartitions(id, partitions);
      return answerAll(request, ErrorCode.NONE);
    } catch (error) {
      const code = kafkaTxnErrorCode(error, version, producerFencedSince);
      session.logger.debug('AddPartitionsToTxn failed', { transactionalId: request.transactionalId, errorCode: code, error });
      return answerAll(request, code);
    }
  },
});
