// CreatePartitions (key 37). Transcribed from apache/kafka CreatePartitionsRequest.json /
// CreatePartitionsResponse.json (flexible 2+); franz-go 37_create_partitions.
//
// CreatePartitionsRequest => Topics[Name Count Assignments(nullable)[BrokerIds]] TimeoutMs ValidateOnly
// CreatePartitionsResponse => ThrottleTimeMs Results[Name ErrorCode ErrorMessage]
import { ApiKey } from '../api-keys.js';
import { arr, f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const createPartitionsRequest = message({
  name: 'CreatePartitionsRequest',
  apiKey: ApiKey.CreatePartitions,
  validVersions: '0-3',
  flexibleVersions: '2+',
  fields: [
    list('topics', '0+', [
      f('name', 'string', '0+'),
      f('count', 'int32', '0+'),
      list('assignments', '0+', [arr('brokerIds', 'int32', '0+')], { nullable: '0+' }),
    ]),
    f('timeoutMs', 'int32', '0+'),
    f('validateOnly', 'bool', '0+'),
  ],
});

export const createPartitionsResponse = message({
  name: 'CreatePartitionsResponse',
  apiKey: ApiKey.CreatePartitions,
  validVersions: '0-3',
  flexibleVersions: '2+',
  fields: [
    f('throttleTimeMs', 'int32', '0+'),
    list('results', '0+', [
      f('name', 'string', '0+'),
      f('errorCode', 'int16', '0+'),
      f('errorMessage', 'string', '0+', { nullable: '0+', default: 'null' }),
    ]),
  ],
});

export type CreatePartitionsRequest = MessageOf<typeof createPartitionsRequest>;
export type CreatePartitionsRequestInput = MessageInputOf<typeof createPartitionsRequest>;
export type CreatePartitionsResponse = MessageOf<typeof createPartitionsResponse>;
export type CreatePartitionsResponseInput = MessageInputOf<typeof createPartitionsResponse>;
