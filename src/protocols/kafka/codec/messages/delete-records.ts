// DeleteRecords (key 21). Transcribed from apache/kafka DeleteRecordsRequest.json /
// DeleteRecordsResponse.json (flexible 2+); franz-go generate/definitions/21_delete_records.
//
// DeleteRecordsRequest => Topics[Name Partitions[PartitionIndex Offset]] TimeoutMs
// DeleteRecordsResponse => ThrottleTimeMs Topics[Name Partitions[PartitionIndex LowWatermark ErrorCode]]
import { ApiKey } from '../api-keys.js';
import { f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const deleteRecordsRequest = message({
  name: 'DeleteRecordsRequest',
  apiKey: ApiKey.DeleteRecords,
  validVersions: '0-2',
  flexibleVersions: '2+',
  fields: [
    list('topics', '0+', [
      f('name', 'string', '0+'),
      list('partitions', '0+', [f('partitionIndex', 'int32', '0+'), f('offset', 'int64', '0+')]),
    ]),
    f('timeoutMs', 'int32', '0+'),
  ],
});

export const deleteRecordsResponse = message({
  name: 'DeleteRecordsResponse',
  apiKey: ApiKey.DeleteRecords,
  validVersions: '0-2',
  flexibleVersions: '2+',
  fields: [
    f('throttleTimeMs', 'int32', '0+'),
    list('topics', '0+', [
      f('name', 'string', '0+'),
      list('partitions', '0+', [
        f('partitionIndex', 'int32', '0+'),
        f('lowWatermark', 'int64', '0+'),
        f('errorCode', 'int16', '0+'),
      ]),
    ]),
  ],
});

export type DeleteRecordsRequest = MessageOf<typeof deleteRecordsRequest>;
export type DeleteRecordsRequestInput = MessageInputOf<typeof deleteRecordsRequest>;
export type DeleteRecordsResponse = MessageOf<typeof deleteRecordsResponse>;
export type DeleteRecordsResponseInput = MessageInputOf<typeof deleteRecordsResponse>;
