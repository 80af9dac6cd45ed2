// Fetch (key 1). Transcribed from apache/kafka FetchRequest.json / FetchResponse.json (v0-12;
// v12 flexible) and franz-go generate/definitions/01_fetch for the v12 tagged fields.
//
// FetchRequest => ClusterId(tag 0, v12+) ReplicaId MaxWaitMs MinBytes MaxBytes(v3+)
//   IsolationLevel(v4+) SessionId(v7+) SessionEpoch(v7+)
//   Topics[Topic Partitions[Partition CurrentLeaderEpoch(v9+) FetchOffset LastFetchedEpoch(v12+)
//          LogStartOffset(v5+) PartitionMaxBytes]]
//   ForgottenTopicsData(v7+)[Topic Partitions[int32]] RackId(v11+)
// FetchResponse => ThrottleTimeMs(v1+) ErrorCode(v7+) SessionId(v7+)
//   Responses[Topic Partitions[PartitionIndex ErrorCode HighWatermark LastStableOffset(v4+)
//     LogStartOffset(v5+) DivergingEpoch(tag 0) CurrentLeader(tag 1) SnapshotId(tag 2)
//     AbortedTransactions(v4+, nullable)[ProducerId FirstOffset] PreferredReadReplica(v11+)
//     Records(nullable: many RecordBatches, the last possibly partial)]]
import { ApiKey } from '../api-keys.js';
import { arr, f, list, message, struct, type MessageInputOf, type MessageOf } from '../schema.js';

export const fetchRequest = message({
  name: 'FetchRequest',
  apiKey: ApiKey.Fetch,
  validVersions: '0-12',
  flexibleVersions: '12+',
  fields: [
    f('clusterId', 'string', '12+', { nullable: '12+', default: 'null', tag: 0, tagged: '12+' }),
    f('replicaId', 'int32', '0+', { default: '-1' }),
    f('maxWaitMs', 'int32', '0+'),
    f('minBytes', 'int32', '0+'),
    f('maxBytes', 'int32', '3+', { default: '0x7fffffff' }),
    f('isolationLevel', 'int8', '4+', { default: '0' }),
    f('sessionId', 'int32', '7+', { default: '0' }),
    f('sessionEpoch', 'int32', '7+', { default: '-1' }),
    list('topics', '0+', [
      f('topic', 'string', '0-12'),
      f('topicId', 'uuid', '13+'),
      list('partitions', '0+', [
        f('partition', 'int32', '0+'),
        f('currentLeaderEpoch', 'int32', '9+', { default: '-1' }),
        f('fetchOffset', 'int64', '0+'),
        f('lastFetchedEpoch', 'int32', '12+', { default: '-1' }),
        f('logStartOffset', 'int64', '5+', { default: '-1' }),
        f('partitionMaxBytes', 'int32', '0+'),
      ]),
    ]),
    list('forgottenTopicsData', '7+', [
      f('topic', 'string', '7-12'),
      f('topicId', 'uuid', '13+'),
      arr('partitions', 'int32', '7+'),
    ]),
    f('rackId', 'string', '11+', { default: '' }),
  ],
});

export const fetchResponse = message({
  name: 'FetchResponse',
  apiKey: ApiKey.Fetch,
  validVersions: '0-12',
  flexibleVersions: '12+',
  fields: [
    f('throttleTimeMs', 'int32', '1+'),
    f('errorCode', 'int16', '7+'),
    f('sessionId', 'int32', '7+', { default: '0' }),
    list('responses', '0+', [
      f('topic', 'string', '0-12'),
      f('topicId', 'uuid', '13+'),
      list('partitions', '0+', [
        f('partitionIndex', 'int32', '0+'),
        f('errorCode', 'int16', '0+'),
        f('highWatermark', 'int64', '0+'),
        f('lastStableOffset', 'int64', '4+', { default: '-1' }),
        f('logStartOffset', 'int64', '5+', { default: '-1' }),
        struct(
          'divergingEpoch',
          '12+',
          [f('epoch', 'int32', '12+', { default: '-1' }), f('endOffset', 'int64', '12+', { default: '-1' })],
          { tag: 0, tagged: '12+' },
        ),
        struct(
          'currentLeader',
          '12+',
          [f('leaderId', 'int32', '12+', { default: '-1' }), f('leaderEpoch', 'int32', '12+', { default: '-1' })],
          { tag: 1, tagged: '12+' },
        ),
        struct(
          'snapshotId',
          '12+',
          [f('endOffset', 'int64', '0+', { default: '-1' }), f('epoch', 'int32', '0+', { default: '-1' })],
          { tag: 2, tagged: '12+' },
        ),
        list('abortedTransactions', '4+', [f('producerId', 'int64', '4+'), f('firstOffset', 'int64', '4+')], {
          nullable: '4+',
        }),
        f('preferredReadReplica', 'int32', '11+', { default: '-1' }),
        f('records', 'records', '0+', { nullable: '0+' }),
      ]),
    ]),
  ],
});

export type FetchRequest = MessageOf<typeof fetchRequest>;
export type FetchRequestInput = MessageInputOf<typeof fetchRequest>;
export type FetchResponse = MessageOf<typeof fetchResponse>;
export type FetchResponseInput = MessageInputOf<typeof fetchResponse>;
