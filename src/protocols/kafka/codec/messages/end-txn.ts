// EndTxn (key 26). Transcribed from apache/kafka EndTxnRequest.json / EndTxnResponse.json
// (flexible 3+; v4 is v3 plus the TRANSACTION_ABORTABLE error, KIP-890); franz-go 26_end_txn.
//
// EndTxnRequest => TransactionalId ProducerId ProducerEpoch Committed
// EndTxnResponse => ThrottleTimeMs ErrorCode ProducerId(v5+) ProducerEpoch(v5+)
import { ApiKey } from '../api-keys.js';
import { f, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const endTxnRequest = message({
  name: 'EndTxnRequest',
  apiKey: ApiKey.EndTxn,
  validVersions: '0-4',
  flexibleVersions: '3+',
  fields: [
    f('transactionalId', 'string', '0+'),
    f('producerId', 'int64', '0+'),
    f('producerEpoch', 'int16', '0+'),
    f('committed', 'bool', '0+'),
  ],
});

export const endTxnResponse = message({
  name: 'EndTxnResponse',
  apiKey: ApiKey.EndTxn,
  validVersions: '0-4',
  flexibleVersions: '3+',
  fields: [
    f('throttleTimeMs', 'int32', '0+'),
    f('errorCode', 'int16', '0+'),
    f('producerId', 'int64', '5+', { default: '-1' }),
    f('producerEpoch', 'int16', '5+', { default: '-1' }),
  ],
});

export type EndTxnRequest = MessageOf<typeof endTxnRequest>;
export type EndTxnRequestInput = MessageInputOf<typeof endTxnRequest>;
export type EndTxnResponse = MessageOf<typeof endTxnResponse>;
export type EndTxnResponseInput = MessageInputOf<typeof endTxnResponse>;
