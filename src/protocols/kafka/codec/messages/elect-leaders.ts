// ElectLeaders (key 43). Transcribed from apache/kafka ElectLeadersRequest.json /
// ElectLeadersResponse.json (v1 adds ElectionType and the top-level ErrorCode, KIP-460; flexible 2+).
//
// ElectLeadersRequest => ElectionType(v1+) TopicPartitions(nullable: all)[Topic PartitionId[int32]]
//   TimeoutMs
// ElectLeadersResponse => ThrottleTimeMs ErrorCode(v1+) ReplicaElectionResults[Topic
//   PartitionResult[PartitionId ErrorCode ErrorMessage(nullable)]]
import { ApiKey } from '../api-keys.js';
import { arr, f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const electLeadersRequest = message({
  name: 'ElectLeadersRequest',
  apiKey: ApiKey.ElectLeaders,
  validVersions: '0-2',
  flexibleVersions: '2+',
  fields: [
    f('electionType', 'int8', '1+'),
    list('topicPartitions', '0+', [
      f('topic', 'string', '0+'),
      arr('partitionId', 'int32', '0+'),
    ], { nullable: '0+' }),
    f('timeoutMs', 'int32', '0+', { default: '60000' }),
  ],
});

export const electLeadersResponse = message({
  name: 'ElectLeadersResponse',
  apiKey: ApiKey.ElectLeaders,
  validVersions: '0-2',
  flexibleVersions: '2+',
  fields: [
    f('throttleTimeMs', 'int32', '0+'),
    f('errorCode', 'int16', '1+'),
    list('replicaElectionResults', '0+', [
      f('topic', 'string', '0+'),
      list('partitionResult', '0+', [
        f('partitionId', 'int32', '0+'),
        f('errorCode', 'int16', '0+'),
        f('errorMessage', 'string', '0+', { nullable: '0+' }),
      ]),
    ]),
  ],
});

export type ElectLeadersRequest = MessageOf<typeof electLeadersRequest>;
export type ElectLeadersRequestInput = MessageInputOf<typeof electLeadersRequest>;
export type ElectLeadersResponse = MessageOf<typeof electLeadersResponse>;
export type ElectLeadersResponseInput = MessageInputOf<typeof electLeadersResponse>;
