// DescribeTransactions (key 65), v0. Grammar: codec/messages/describe-transactions.ts.
//
// Each transactional id as the core transaction coordinator holds it (scope "kafka"): its state
// by Kafka's names (Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort),
// timeout, the start time of the open transaction (-1 when none), producer id and epoch, and the
// partitions in the open transaction. Unknown id → TRANSACTIONAL_ID_NOT_FOUND (105). Transactional
// ids have no grant in Quartet (../access.ts) so every authenticated user may describe them; as
// Kafka does, the partitions of topics the user may not describe are left out.

import type { Topic } from '../../../core/catalog.js';
import type { TxnPartition } from '../../../core/transactions.js';
import { kafkaAccessOf, type KafkaAccess } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import { kafkaTransactionScope } from '../transactions.js';
import { kafkaNameOf } from '../topics.js';
import { defineHandler, type KafkaFrontend } from './types.js';

/** The transaction's partitions grouped by Kafka topic name, those the user may describe only. */
export function partitionsByTopic(frontend: KafkaFrontend, access: KafkaAccess, partitions: readonly TxnPartition[]): Array<{ topic: string; partitions: number[] }> {
  const byTopic = new Map<number, { topic: Topic; partitions: number[] }>();
  for (const p of partitions) {
    let entry = byTopic.get(p.topicInternalId);
    if (entry === undefined) {
      const topic = frontend.broker.catalog.topicByInternalId(p.topicInternalId);
      if (topic === null || !access.topic(topic, 'describe')) continue;
      entry = { topic, partitions: [] };
      byTopic.set(p.topicInternalId, entry);
    }
    entry.partitions.push(p.partition);
  }
  return [...byTopic.values()].map((e) => ({ topic: kafkaNameOf(e.topic), partitions: e.partitions.sort((a, b) => a - b) }));
}

export const describeTransactionsHandler = defineHandler({
  apiKey: ApiKey.DescribeTransactions,
  minVersion: 0,
  maxVersion: 0,
  handle(request, { frontend, session }) {
    const access = kafkaAccessOf(frontend, session);
    const transactionStates = request.transactionalIds.map((transactionalId) => {
      const txn = frontend.broker.transactions.describe(kafkaTransactionScope, transactionalId);
      if (txn === null) {
        return { errorCode: ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, transactionalId, transactionState: '', transactionTimeoutMs: 0, transactionStartTimeMs: -1, producerId: -1, producerEpoch: -1, topics: [] };
      }
      return {
        errorCode: ErrorCode.NONE,
        transactionalId,
        transactionState: txn.state,
        transactionTimeoutMs: txn.timeoutMs,
        transactionStartTimeMs: txn.startedAt,
        producerId: txn.producerId,
        producerEpoch: txn.producerEpoch,
        topics: partitionsByTopic(frontend, access, txn.partitions),
      };
    });
    return { throttleTimeMs: 0, transactionStates };
  },
  errorResponse(request, errorCode) {
    return {
      throttleTimeMs: 0,
      transactionStates: request.transactionalIds.map((transactionalId) => ({ errorCode, transactionalId, transactionState: '', transactionTimeoutMs: 0, transactionStartTimeMs: -1, producerId: -1, producerEpoch: -1, topics: [] })),
    };
  },
});
