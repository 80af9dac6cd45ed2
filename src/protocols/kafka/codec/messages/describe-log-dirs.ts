// DescribeLogDirs (key 35). Transcribed from apache/kafka DescribeLogDirsRequest.json /
// DescribeLogDirsResponse.json (v1 = v0; flexible 2+; v3 adds the top-level ErrorCode; v4 adds
// TotalBytes and UsableBytes per log dir, default -1).
//
// DescribeLogDirsRequest => Topics(nullable: all)[Topic Partitions[int32]]
// DescribeLogDirsResponse => ThrottleTimeMs ErrorCode(v3+) Results[ErrorCode LogDir
//   Topics[Name Partitions[PartitionIndex PartitionSize OffsetLag IsFutureKey]]
//   TotalBytes(v4+) UsableBytes(v4+)]
import { ApiKey } from '../api-keys.js';
import { arr, f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const describeLogDirsRequest = message({
  name: 'DescribeLogDirsRequest',
  apiKey: ApiKey.DescribeLogDirs,
  validVersions: '0-4',
  flexibleVersions: '2+',
  fields: [
    list('topics', '0+', [
      f('topic', 'string', '0+'),
      arr('partitions', 'int32', '0+'),
    ], { nullable: '0+' }),
  ],
});

export const describeLogDirsResponse = message({
  name: 'DescribeLogDirsResponse',
  apiKey: ApiKey.DescribeLogDirs,
  validVersions: '0-4',
  flexibleVersions: '2+',
  fields: [
    f('throttleTimeMs', 'int32', '0+'),
    f('errorCode', 'int16', '3+'),
    list('results', '0+', [
      f('errorCode', 'int16', '0+'),
      f('logDir', 'string', '0+'),
      list('topics', '0+', [
        f('name', 'string', '0+'),
        list('partitions', '0+', [
          f('partitionIndex', 'int32', '0+'),
          f('partitionSize', 'int64', '0+'),
          f('offsetLag', 'int64', '0+'),
          f('isFutureKey', 'bool', '0+'),
        ]),
      ]),
      f('totalBytes', 'int64', '4+', { default: '-1' }),
      f('usableBytes', 'int64', '4+', { default: '-1' }),
    ]),
  ],
});

export type DescribeLogDirsRequest = MessageOf<typeof describeLogDirsRequest>;
export type DescribeLogDirsRequestInput = MessageInputOf<typeof describeLogDirsRequest>;
export type DescribeLogDirsResponse = MessageOf<typeof describeLogDirsResponse>;
export type DescribeLogDirsResponseInput = MessageInputOf<typeof describeLogDirsResponse>;
