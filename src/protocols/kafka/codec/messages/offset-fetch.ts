// OffsetFetch (key 9). Transcribed from apache/kafka OffsetFetchRequest.json /
// OffsetFetchResponse.json (flexible 6+); franz-go generate/definitions/09_offset_fetch.
//
// OffsetFetchRequest => GroupId(v0-7) Topics(v0-7, nullable v2-7)[Name PartitionIndexes]
//   Groups(v8+)[GroupId MemberId(v9+) MemberEpoch(v9+) Topics(nullable)[Name PartitionIndexes]]
//   RequireStable(v7+)
// OffsetFetchResponse => ThrottleTimeMs(v3+) Topics(v0-7)[Name Partitions[PartitionIndex
//   CommittedOffset CommittedLeaderEpoch(v5-7) Metadata ErrorCode]] ErrorCode(v2-7)
//   Groups(v8+)[GroupId Topics[Name Partitions[PartitionIndex CommittedOffset
//   CommittedLeaderEpoch Metadata ErrorCode]] ErrorCode]
import { ApiKey } from '../api-keys.js';
import { arr, f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const offsetFetchRequest = message({
  name: 'OffsetFetchRequest',
  apiKey: ApiKey.OffsetFetch,
  validVersions: '0-8',
  flexibleVersions: '6+',
  fields: [
    f('groupId', 'string', '0-7'),
    list('topics', '0-7', [f('name', 'string', '0-7'), arr('partitionIndexes', 'int32', '0-7')], {
      nullable: '2-7',
    }),
    list('groups', '8+', [
      f('groupId', 'string', '8+'),
      f('memberId', 'string', '9+', { nullable: '9+', default: 'null' }),
      f('memberEpoch', 'int32', '9+', { default: '-1' }),
      list('topics', '8+', [f('name', 'string', '8+'), arr('partitionIndexes', 'int32', '8+')], {
        nullable: '8+',
      }),
    ]),
    f('requireStable', 'bool', '7+', { default: 'false' }),
  ],
});

export const offsetFetchResponse = message({
  name: 'OffsetFetchResponse',
  apiKey: ApiKey.OffsetFetch,
  validVersions: '0-8',
  flexibleVersions: '6+',
  fields: [
    f('throttleTimeMs', 'int32', '3+'),
    list('topics', '0-7', [
      f('name', 'string', '0-7'),
      list('partitions', '0-7', [
        f('partitionIndex', 'int32', '0-7'),
        f('committedOffset', 'int64', '0-7'),
        f('committedLeaderEpoch', 'int32', '5-7', { default: '-1' }),
        f('metadata', 'string', '0-7', { nullable: '0-7' }),
        f('errorCode', 'int16', '0-7'),
      ]),
    ]),
    f('errorCode', 'int16', '2-7', { default: '0' }),
    list('groups', '8+', [
      f('groupId', 'string', '8+'),
      list('topics', '8+', [
        f('name', 'string', '8+'),
        list('partitions', '8+', [
          f('partitionIndex', 'int32', '8+'),
          f('committedOffset', 'int64', '8+'),
          f('committedLeaderEpoch', 'int32', '8+', { default: '-1' }),
          f('metadata', 'string', '8+', { nullable: '8+' }),
          f('errorCode', 'int16', '8+'),
        ]),
      ]),
      f('errorCode', 'int16', '8+'),
    ]),
  ],
});

export type OffsetFetchRequest = MessageOf<typeof offsetFetchRequest>;
export type OffsetFetchRequestInput = MessageInputOf<typeof offsetFetchRequest>;
export type OffsetFetchResponse = MessageOf<typeof offsetFetchResponse>;
export type OffsetFetchResponseInput = MessageInputOf<typeof offsetFetchResponse>;
