// CreateTopics (key 19). Transcribed from apache/kafka CreateTopicsRequest.json /
// CreateTopicsResponse.json (flexible 5+); franz-go generate/definitions/19_create_topics.
//
// CreateTopicsRequest => Topics[Name NumPartitions ReplicationFactor
//   Assignments[PartitionIndex BrokerIds] Configs[Name Value]] TimeoutMs ValidateOnly(v1+)
// CreateTopicsResponse => ThrottleTimeMs(v2+) Topics[Name TopicId(v7+) ErrorCode ErrorMessage(v1+)
//   TopicConfigErrorCode(tag 0, v5+) NumPartitions(v5+) ReplicationFactor(v5+)
//   Configs(v5+, nullable)[Name Value ReadOnly ConfigSource IsSensitive]]
import { ApiKey } from '../api-keys.js';
import { arr, f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const createTopicsRequest = message({
  name: 'CreateTopicsRequest',
  apiKey: ApiKey.CreateTopics,
  validVersions: '0-7',
  flexibleVersions: '5+',
  fields: [
    list('topics', '0+', [
      f('name', 'string', '0+'),
      f('numPartitions', 'int32', '0+'),
      f('replicationFactor', 'int16', '0+'),
      list('assignments', '0+', [f('partitionIndex', 'int32', '0+'), arr('brokerIds', 'int32', '0+')]),
      list('configs', '0+', [f('name', 'string', '0+'), f('value', 'string', '0+', { nullable: '0+' })]),
    ]),
    f('timeoutMs', 'int32', '0+', { default: '60000' }),
    f('validateOnly', 'bool', '1+', { default: 'false' }),
  ],
});

export const createTopicsResponse = message({
  name: 'CreateTopicsResponse',
  apiKey: ApiKey.CreateTopics,
  validVersions: '0-7',
  flexibleVersions: '5+',
  fields: [
    f('throttleTimeMs', 'int32', '2+'),
    list('topics', '0+', [
      f('name', 'string', '0+'),
      f('topicId', 'uuid', '7+'),
      f('errorCode', 'int16', '0+'),
      f('errorMessage', 'string', '1+', { nullable: '0+', default: 'null' }),
      f('topicConfigErrorCode', 'int16', '5+', { tag: 0, tagged: '5+' }),
      f('numPartitions', 'int32', '5+', { default: '-1' }),
      f('replicationFactor', 'int16', '5+', { default: '-1' }),
      list(
        'configs',
        '5+',
        [
          f('name', 'string', '5+'),
          f('value', 'string', '5+', { nullable: '5+' }),
          f('readOnly', 'bool', '5+'),
          f('configSource', 'int8', '5+', { default: '-1' }),
          f('isSensitive', 'bool', '5+'),
        ],
        { nullable: '5+', default: 'null' },
      ),
    ]),
  ],
});

export type CreateTopicsRequest = MessageOf<typeof createTopicsRequest>;
export type CreateTopicsRequestInput = MessageInputOf<typeof createTopicsRequest>;
export type CreateTopicsResponse = MessageOf<typeof createTopicsResponse>;
export type CreateTopicsResponseInput = MessageInputOf<typeof createTopicsResponse>;
