// OffsetDelete (key 47), v0 (never flexible). Transcribed from apache/kafka OffsetDeleteRequest.json
// / OffsetDeleteResponse.json (v1 of the response, flexible, goes with a request version 1 that the
// request schema does not define yet; v0 only).
//
// OffsetDeleteRequest => GroupId Topics[Name Partitions[PartitionIndex]]
// OffsetDeleteResponse => ErrorCode ThrottleTimeMs Topics[Name Partitions[PartitionIndex ErrorCode]]
import { ApiKey } from '../api-keys.js';
import { f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const offsetDeleteRequest = message({
  name: 'OffsetDeleteRequest',
  apiKey: ApiKey.OffsetDelete,
  validVersions: '0',
  flexibleVersions: 'none',
  fields: [
    f('groupId', 'string', '0+'),
    list('topics', '0+', [
      f('name', 'string', '0+'),
      list('partitions', '0+', [f('partitionIndex', 'int32', '0+')]),
    ]),
  ],
});

export const offsetDeleteResponse = message({
  name: 'OffsetDeleteResponse',
  apiKey: ApiKey.OffsetDelete,
  validVersions: '0',
  flexibleVersions: 'none',
  fields: [
    f('errorCode', 'int16', '0+'),
    f('throttleTimeMs', 'int32', '0+'),
    list('topics', '0+', [
      f('name', 'string', '0+'),
      list('partitions', '0+', [
        f('partitionIndex', 'int32', '0+'),
        f('errorCode', 'int16', '0+'),
      ]),
    ]),
  ],
});

export type OffsetDeleteRequest = MessageOf<typeof offsetDeleteRequest>;
export type OffsetDeleteRequestInput = MessageInputOf<typeof offsetDeleteRequest>;
export type OffsetDeleteResponse = MessageOf<typeof offsetDeleteResponse>;
export type OffsetDeleteResponseInput = MessageInputOf<typeof offsetDeleteResponse>;
