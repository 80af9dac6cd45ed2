// AddOffsetsToTxn (key 25). Transcribed from apache/kafka AddOffsetsToTxnRequest.json /
// AddOffsetsToTxnResponse.json (flexible 3+); franz-go 25_add_offsets_to_txn.
//
// AddOffsetsToTxnRequest => TransactionalId ProducerId ProducerEpoch GroupId
// AddOffsetsToTxnResponse => ThrottleTimeMs ErrorCode
import { ApiKey } from '../api-keys.js';
import { f, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const addOffsetsToTxnRequest = message({
  name: 'AddOffsetsToTxnRequest',
  apiKey: ApiKey.AddOffsetsToTxn,
  validVersions: '0-3',
  flexibleVersions: '3+',
  fields: [
    f('transactionalId', 'string', '0+'),
    f('producerId', 'int64', '0+'),
    f('producerEpoch', 'int16', '0+'),
    f('groupId', 'string', '0+'),
  ],
});

export const addOffsetsToTxnResponse = message({
  name: 'AddOffsetsToTxnResponse',
  apiKey: ApiKey.AddOffsetsToTxn,
  validVersions: '0-3',
  flexibleVersions: '3+',
  fields: [f('throttleTimeMs', 'int32', '0+'), f('errorCode', 'int16', '0+')],
});

export type AddOffsetsToTxnRequest = MessageOf<typeof addOffsetsToTxnRequest>;
export type AddOffsetsToTxnRequestInput = MessageInputOf<typeof addOffsetsToTxnRequest>;
export type AddOffsetsToTxnResponse = MessageOf<typeof addOffsetsToTxnResponse>;
export type AddOffsetsToTxnResponseInput = MessageInputOf<typeof addOffsetsToTxnResponse>;
