// EndTxn (key 26), v0-4: commit or abort the producer's ongoing transaction. The core coordinator
// persists the decision, writes a Kafka control batch (transactions.ts encodeKafkaMarker) into
// every partition of the transaction, commits the staged offsets on commit, and only then answers.
// Follows apache/kafka TransactionCoordinator.handleEndTransaction for the client-visible codes:
// - INVALID_TXN_STATE (48) when there is nothing to end (Empty) or the other outcome was chosen;
// - a retry of a finished commit (abort) with the same epoch answers NONE;
// - CONCURRENT_TRANSACTIONS (51) only while a failed marker write waits for its retry;
// - PRODUCER_FENCED (90) from v2 ("Version 2 adds the support for new error code PRODUCER_FENCED"),
//   INVALID_PRODUCER_EPOCH (47) before; an unknown id or another producer id is
//   INVALID_PRODUCER_ID_MAPPING (49).
// v4 only adds TRANSACTION_ABORTABLE to what a client must understand; the broker never sends it.
// v5 (an epoch bump on every transaction, KIP-890 part 2) is not advertised.

import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import { kafkaTransactionScope, kafkaTxnErrorCode } from '../transactions.js';
import { defineHandler } from './types.js';

const producerFencedSince = 2;

export const endTxnHandler = defineHandler({
  apiKey: ApiKey.EndTxn,
  minVersion: 0,
  maxVersion: 4,
  errorResponse(_request, errorCode) {
    return { throttleTimeMs: 0, errorCode };
  },
  async handle(request, { frontend, session, version }) {
    const id = { scope: kafkaTransactionScope, transactionalId: request.transactionalId, producerId: request.producerId, producerEpoch: request.producerEpoch };
    try {
      // A Prepare* result (markers being retried in the background) is a success for the client:
      // the decision is durable, as Kafka answers after its PrepareCommit/PrepareAbort append.
      await frontend.broker.transactions.endTxn(id, request.committed);
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE };
    } catch (error) {
      const errorCode = kafkaTxnErrorCode(error, version, producerFencedSince);
      session.logger.debug('EndTxn failed', { transactionalId: request.transactionalId, commit: request.committed, errorCode, error });
      return { throttleTimeMs: 0, errorCode };
    }
  },
});
