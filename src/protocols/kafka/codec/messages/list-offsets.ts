// ListOffsets (key 2). Transcribed from apache/kafka ListOffsetsRequest.json (0-8, flexible 6+)
// and ListOffsetsResponse.json (0-10); franz-go generate/definitions/02_list_offsets.
//
// ListOffsetsRequest => ReplicaId IsolationLevel(v2+)
//   Topics[Name Partitions[PartitionIndex CurrentLeaderEpoch(v4+) Timestamp MaxNumOffsets(v0)]]
// ListOffsetsResponse => ThrottleTimeMs(v2+) Topics[Name Partitions[PartitionIndex ErrorCode
//   OldStyleOffsets(v0)[int64] Timestamp(v1+) Offset(v1+) LeaderEpoch(v4+)]]
import { ApiKey } from '../api-keys.js';
import { arr, f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const listOffsetsRequest = message({
  name: 'ListOffsetsRequest',
  apiKey: ApiKey.ListOffsets,
  validVersions: '0-7',
  flexibleVersions: '6+',
  fields: [
    f('replicaId', 'int32', '0+', { default: '-1' }),
    f('isolationLevel', 'int8', '2+'),
    list('topics', '0+', [
      f('name', 'string', '0+'),
      list('partitions', '0+', [
        f('partitionIndex', 'int32', '0+'),
        f('currentLeaderEpoch', 'int32', '4+', { default: '-1' }),
        f('timestamp', 'int64', '0+'),
        f('maxNumOffsets', 'int32', '0', { default: '1' }),
      ]),
    ]),
  ],
});

export const listOffsetsResponse = message({
  name: 'ListOffsetsResponse',
  apiKey: ApiKey.ListOffsets,
  validVersions: '0-7',
  flexibleVersions: '6+',
  fields: [
    f('throttleTimeMs', 'int32', '2+'),
    list('topics', '0+', [
      f('name', 'string', '0+'),
      list('partitions', '0+', [
        f('partitionIndex', 'int32', '0+'),
        f('errorCode', 'int16', '0+'),
        arr('oldStyleOffsets', 'int64', '0'),
        f('timestamp', 'int64', '1+', { default: '-1' }),
        f('offset', 'int64', '1+', { default: '-1' }),
        f('leaderEpoch', 'int32', '4+', { default: '-1' }),
      ]),
    ]),
  ],
});

export type ListOffsetsRequest = MessageOf<typeof listOffsetsRequest>;
export type ListOffsetsRequestInput = MessageInputOf<typeof listOffsetsRequest>;
export type ListOffsetsResponse = MessageOf<typeof listOffsetsResponse>;
export type ListOffsetsResponseInput = MessageInputOf<typeof listOffsetsResponse>;
