// Produce (key 0). Transcribed from apache/kafka clients/src/main/resources/common/message/
// ProduceRequest.json (validVersions 0-9, flexibleVersions 9+) and ProduceResponse.json;
// cross-checked with franz-go generate/definitions/00_produce.
//
// ProduceRequest => TransactionalId(v3+, nullable) Acks TimeoutMs
//                   TopicData[Name PartitionData[Index Records(nullable, one RecordBatch)]]
// ProduceResponse => Responses[Name PartitionResponses[Index ErrorCode BaseOffset
//                    LogAppendTimeMs(v2+) LogStartOffset(v5+) RecordErrors(v8+) ErrorMessage(v8+)]]
//                    ThrottleTimeMs(v1+)
import { ApiKey } from '../api-keys.js';
import { f, list, message, struct, type MessageInputOf, type MessageOf } from '../schema.js';

export const produceRequest = message({
  name: 'ProduceRequest',
  apiKey: ApiKey.Produce,
  validVersions: '0-9',
  flexibleVersions: '9+',
  fields: [
    f('transactionalId', 'string', '3+', { nullable: '3+', default: 'null' }),
    f('acks', 'int16', '0+'),
    f('timeoutMs', 'int32', '0+'),
    list('topicData', '0+', [
      f('name', 'string', '0+'),
      list('partitionData', '0+', [f('index', 'int32', '0+'), f('records', 'records', '0+', { nullable: '0+' })]),
    ]),
  ],
});

export const produceResponse = message({
  name: 'ProduceResponse',
  apiKey: ApiKey.Produce,
  validVersions: '0-9',
  flexibleVersions: '9+',
  fields: [
    list('responses', '0+', [
      f('name', 'string', '0+'),
      list('partitionResponses', '0+', [
        f('index', 'int32', '0+'),
        f('errorCode', 'int16', '0+'),
        f('baseOffset', 'int64', '0+'),
        f('logAppendTimeMs', 'int64', '2+', { default: '-1' }),
        f('logStartOffset', 'int64', '5+', { default: '-1' }),
        list('recordErrors', '8+', [
          f('batchIndex', 'int32', '8+'),
          f('batchIndexErrorMessage', 'string', '8+', { nullable: '8+', default: 'null' }),
        ]),
        f('errorMessage', 'string', '8+', { nullable: '8+', default: 'null' }),
        struct(
          'currentLeader',
          '10+',
          [f('leaderId', 'int32', '10+', { default: '-1' }), f('leaderEpoch', 'int32', '10+', { default: '-1' })],
          { tag: 0, tagged: '10+' },
        ),
      ]),
    ]),
    f('throttleTimeMs', 'int32', '1+', { default: '0' }),
    list(
      'nodeEndpoints',
      '10+',
      [
        f('nodeId', 'int32', '10+'),
        f('host', 'string', '10+'),
        f('port', 'int32', '10+'),
        f('rack', 'string', '10+', { nullable: '10+', default: 'null' }),
      ],
      { tag: 0, tagged: '10+' },
    ),
  ],
});

export type ProduceRequest = MessageOf<typeof produceRequest>;
export type ProduceRequestInput = MessageInputOf<typeof produceRequest>;
export type ProduceResponse = MessageOf<typeof produceResponse>;
export type ProduceResponseInput = MessageInputOf<typeof produceResponse>;
