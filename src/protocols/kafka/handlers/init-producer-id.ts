// InitProducerId (key 22), v0-4: a producer id and epoch for an idempotent producer (null
// transactional id) or for a transactional id (through the core TransactionCoordinator, scope
// 'kafka'). Follows apache/kafka KafkaApis.handleInitProducerIdRequest and
// TransactionCoordinator.handleInitProducerId:
// - transactional id null: no transaction timeout check. Kafka always hands out a fresh producer
//   id with epoch 0; here a v3+ request that names its current id/epoch (KIP-360) gets the same id
//   with the epoch bumped, and a fresh id when that one is unknown or fenced;
// - transactional id "": INVALID_REQUEST (Kafka: "consistent with the producer client");
// - transaction_timeout_ms outside 1..transaction.max.timeout.ms: INVALID_TRANSACTION_TIMEOUT (50);
// - v3+: producer_id and producer_epoch are both -1 or both set, else INVALID_REQUEST; when set,
//   the coordinator bumps that producer's epoch (or answers PRODUCER_FENCED if it is not current);
// - PRODUCER_FENCED (90) is sent from v4 ("Version 4 adds the support for new error code
//   PRODUCER_FENCED"); v0-3 get INVALID_PRODUCER_EPOCH (47) instead.
// Errors answer producer id -1 and epoch -1 (Kafka's initTransactionError).
// The coordinator aborts a transaction left Ongoing by the previous producer before answering,
// so there is no CONCURRENT_TRANSACTIONS retry loop (see src/core/transactions.ts).

import { isQuartetError } from '../../../base/errors.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import { kafkaTransactionScope, kafkaTxnErrorCode } from '../transactions.js';
import { defineHandler } from './types.js';

/** The first version that may answer PRODUCER_FENCED. */
const producerFencedSince = 4;

function failed(errorCode: number): { throttleTimeMs: number; errorCode: number; producerId: number; producerEpoch: number } {
  return { throttleTimeMs: 0, errorCode, producerId: -1, producerEpoch: -1 };
}

export const initProducerIdHandler = defineHandler({
  apiKey: ApiKey.InitProducerId,
  minVersion: 0,
  maxVersion: 4,
  errorResponse(_request, errorCode) {
    return failed(errorCode);
  },
  async handle(request, { frontend, session, version }) {
    const transactions = frontend.broker.transactions;
    const answerError = (error: unknown): number => {
      const code = kafkaTxnErrorCode(error, version, producerFencedSince);
      session.logger.debug('InitProducerId failed', { transactionalId: request.transactionalId, errorCode: code, error });
      return code;
    };
    const { transactionalId, transactionTimeoutMs } = request;
    // v0-2 carry no id/epoch: the schema defaults are -1/-1.
    const { producerId, producerEpoch } = request;
    if ((producerId === -1) !== (producerEpoch === -1)) return failed(ErrorCode.INVALID_REQUEST);
    if (producerId < -1 || producerEpoch < -1) return failed(ErrorCode.INVALID_REQUEST);
    const expected = producerId >= 0 ? { producerId, epoch: producerEpoch } : undefined;

    if (transactionalId === null) {
      try {
        const next = await transactions.initProducerId({ scope: kafkaTransactionScope, transactionalId: null, transactionTimeoutMs, ...(expected ? { expected } : {}) });
        return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, producerId: next.producerId, producerEpoch: next.epoch };
      } catch (error) {
        // A bump of an id this broker no longer knows, or of a fenced epoch: start over, as Kafka does always.
        if (expected && isQuartetError(error) && (error.code === 'unknown_producer' || error.code === 'producer_fenced')) {
          try {
            const fresh = await transactions.initProducerId({ scope: kafkaTransactionScope, transactionalId: null, transactionTimeoutMs });
            return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, producerId: fresh.producerId, producerEpoch: fresh.epoch };
          } catch (retryError) {
            return failed(answerError(retryError));
          }
        }
        return failed(answerError(error));
      }
    }

    if (transactionalId === '') return failed(ErrorCode.INVALID_REQUEST);
    if (!Number.isInteger(transactionTimeoutMs) || transactionTimeoutMs <= 0 || transactionTimeoutMs > transactions.transactionTimeoutMsMax) {
      return failed(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
    }
    try {
      const next = await transactions.initProducerId({ scope: kafkaTransactionScope, transactionalId, transactionTimeoutMs, ...(expected ? { expected } : {}) });
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, producerId: next.producerId, producerEpoch: next.epoch };
    } catch (error) {
      return failed(answerError(error));
    }
  },
});
