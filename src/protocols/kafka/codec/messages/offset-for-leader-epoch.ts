// OffsetForLeaderEpoch (key 23). Transcribed from apache/kafka OffsetForLeaderEpochRequest.json /
// OffsetForLeaderEpochResponse.json (flexible 4+); franz-go 23_offset_for_leader_epoch.
//
// OffsetForLeaderEpochRequest => ReplicaId(v3+) Topics[Topic Partitions[Partition
//   CurrentLeaderEpoch(v2+) LeaderEpoch]]
// OffsetForLeaderEpochResponse => ThrottleTimeMs(v2+) Topics[Topic Partitions[ErrorCode Partition
//   LeaderEpoch(v1+) EndOffset]]
import { ApiKey } from '../api-keys.js';
import { f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const offsetForLeaderEpochRequest = message({
  name: 'OffsetForLeaderEpochRequest',
  apiKey: ApiKey.OffsetForLeaderEpoch,
  validVersions: '0-4',
  flexibleVersions: '4+',
  fields: [
    f('replicaId', 'int32', '3+', { default: '-2' }),
    list('topics', '0+', [
      f('topic', 'string', '0+'),
      list('partitions', '0+', [
        f('partition', 'int32', '0+'),
        f('currentLeaderEpoch', 'int32', '2+', { default: '-1' }),
        f('leaderEpoch', 'int32', '0+'),
      ]),
    ]),
  ],
});

export const offsetForLeaderEpochResponse = message({
  name: 'OffsetForLeaderEpochResponse',
  apiKey: ApiKey.OffsetForLeaderEpoch,
  validVersions: '0-4',
  flexibleVersions: '4+',
  fields: [
    f('throttleTimeMs', 'int32', '2+'),
    list('topics', '0+', [
      f('topic', 'string', '0+'),
      list('partitions', '0+', [
        f('errorCode', 'int16', '0+'),
        f('partition', 'int32', '0+'),
        f('leaderEpoch', 'int32', '1+', { default: '-1' }),
        f('endOffset', 'int64', '0+', { default: '-1' }),
      ]),
    ]),
  ],
});

export type OffsetForLeaderEpochRequest = MessageOf<typeof offsetForLeaderEpochRequest>;
export type OffsetForLeaderEpochRequestInput = MessageInputOf<typeof offsetForLeaderEpochRequest>;
export type OffsetForLeaderEpochResponse = MessageOf<typeof offsetForLeaderEpochResponse>;
export type OffsetForLeaderEpochResponseInput = MessageInputOf<typeof offsetForLeaderEpochResponse>;
