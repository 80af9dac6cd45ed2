// OffsetCommit (key 8). Transcribed from apache/kafka OffsetCommitRequest.json /
// OffsetCommitResponse.json (flexible 8+); franz-go generate/definitions/08_offset_commit.
//
// OffsetCommitRequest => GroupId GenerationIdOrMemberEpoch(v1+) MemberId(v1+)
//   GroupInstanceId(v7+) RetentionTimeMs(v2-4) Topics[Name Partitions[PartitionIndex
//   CommittedOffset CommittedLeaderEpoch(v6+) CommitTimestamp(v1) CommittedMetadata(nullable)]]
// OffsetCommitResponse => ThrottleTimeMs(v3+) Topics[Name Partitions[PartitionIndex ErrorCode]]
import { ApiKey } from '../api-keys.js';
import { f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const offsetCommitRequest = message({
  name: 'OffsetCommitRequest',
  apiKey: ApiKey.OffsetCommit,
  validVersions: '0-8',
  flexibleVersions: '8+',
  fields: [
    f('groupId', 'string', '0+'),
    f('generationIdOrMemberEpoch', 'int32', '1+', { default: '-1' }),
    f('memberId', 'string', '1+'),
    f('groupInstanceId', 'string', '7+', { nullable: '7+', default: 'null' }),
    f('retentionTimeMs', 'int64', '2-4', { default: '-1' }),
    list('topics', '0+', [
      f('name', 'string', '0+'),
      list('partitions', '0+', [
        f('partitionIndex', 'int32', '0+'),
        f('committedOffset', 'int64', '0+'),
        f('committedLeaderEpoch', 'int32', '6+', { default: '-1' }),
        f('commitTimestamp', 'int64', '1', { default: '-1' }),
        f('committedMetadata', 'string', '0+', { nullable: '0+' }),
      ]),
    ]),
  ],
});

export const offsetCommitResponse = message({
  name: 'OffsetCommitResponse',
  apiKey: ApiKey.OffsetCommit,
  validVersions: '0-8',
  flexibleVersions: '8+',
  fields: [
    f('throttleTimeMs', 'int32', '3+'),
    list('topics', '0+', [
      f('name', 'string', '0+'),
      list('partitions', '0+', [f('partitionIndex', 'int32', '0+'), f('errorCode', 'int16', '0+')]),
    ]),
  ],
});

export type OffsetCommitRequest = MessageOf<typeof offsetCommitRequest>;
export type OffsetCommitRequestInput = MessageInputOf<typeof offsetCommitRequest>;
export type OffsetCommitResponse = MessageOf<typeof offsetCommitResponse>;
export type OffsetCommitResponseInput = MessageInputOf<typeof offsetCommitResponse>;
