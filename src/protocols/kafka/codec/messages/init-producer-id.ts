// InitProducerId (key 22). Transcribed from apache/kafka InitProducerIdRequest.json /
// InitProducerIdResponse.json (flexible 2+); franz-go generate/definitions/22_init_producer_id.
//
// InitProducerIdRequest => TransactionalId(nullable) TransactionTimeoutMs ProducerId(v3+)
//   ProducerEpoch(v3+)
// InitProducerIdResponse => ThrottleTimeMs ErrorCode ProducerId ProducerEpoch
import { ApiKey } from '../api-keys.js';
import { f, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const initProducerIdRequest = message({
  name: 'InitProducerIdRequest',
  apiKey: ApiKey.InitProducerId,
  validVersions: '0-4',
  flexibleVersions: '2+',
  fields: [
    f('transactionalId', 'string', '0+', { nullable: '0+' }),
    f('transactionTimeoutMs', 'int32', '0+'),
    f('producerId', 'int64', '3+', { default: '-1' }),
    f('producerEpoch', 'int16', '3+', { default: '-1' }),
  ],
});

export const initProducerIdResponse = message({
  name: 'InitProducerIdResponse',
  apiKey: ApiKey.InitProducerId,
  validVersions: '0-4',
  flexibleVersions: '2+',
  fields: [
    f('throttleTimeMs', 'int32', '0+'),
    f('errorCode', 'int16', '0+'),
    f('producerId', 'int64', '0+', { default: '-1' }),
    f('producerEpoch', 'int16', '0+'),
  ],
});

export type InitProducerIdRequest = MessageOf<typeof initProducerIdRequest>;
export type InitProducerIdRequestInput = MessageInputOf<typeof initProducerIdRequest>;
export type InitProducerIdResponse = MessageOf<typeof initProducerIdResponse>;
export type InitProducerIdResponseInput = MessageInputOf<typeof initProducerIdResponse>;
