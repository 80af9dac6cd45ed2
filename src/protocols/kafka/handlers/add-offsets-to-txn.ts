// AddOffsetsToTxn (key 25), v0-3: the consumer group whose offsets (TxnOffsetCommit) the
// transaction commits. Kafka adds the group's __consumer_offsets partition to the transaction
// (KafkaApis.handleAddOffsetsToTxnRequest → handleAddPartitionsToTransaction); here the core
// coordinator records the group itself and commits its staged offsets when the transaction commits.
// - an empty or over-long group id answers INVALID_GROUP_ID (24) (Kafka has no check here; an
//   empty id would land in a __consumer_offsets partition and the later TxnOffsetCommit fails);
// - PRODUCER_FENCED (90) from v2, INVALID_PRODUCER_EPOCH (47) before.

import { groupIdBytesMax } from '../../../core/offsets.js';
import { kafkaAccessOf, mayUseGroup } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import { kafkaTransactionScope, kafkaTxnErrorCode } from '../transactions.js';
import { defineHandler } from './types.js';

const producerFencedSince = 2;

export const addOffsetsToTxnHandler = defineHandler({
  apiKey: ApiKey.AddOffsetsToTxn,
  minVersion: 0,
  maxVersion: 3,
  errorResponse(_request, errorCode) {
    return { throttleTimeMs: 0, errorCode };
  },
  async handle(request, { frontend, session, version }) {
    const { groupId } = request;
    if (groupId.length === 0 || Buffer.byteLength(groupId, 'utf8') > groupIdBytesMax) return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_GROUP_ID };
    // A group the SASL user may not use (../access.ts, mayUseGroup) → GROUP_AUTHORIZATION_FAILED.
    const access = kafkaAccessOf(frontend, session);
    if (access.restricted && !(await mayUseGroup(frontend, access, groupId))) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
    const id = { scope: kafkaTransactionScope, transactionalId: request.transactionalId, producerId: request.producerId, producerEpoch: request.producerEpoch };
    try {
      await frontend.broker.transactions.addOffsets(id, groupId);
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE };
    } catch (error) {
      const errorCode = kafkaTxnErrorCode(error, version, producerFencedSince);
      session.logger.debug('AddOffsetsToTxn failed', { transactionalId: request.transactionalId, groupId, errorCode, error });
      return { throttleTimeMs: 0, errorCode };
    }
  },
});
