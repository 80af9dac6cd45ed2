// TxnOffsetCommit (key 28). Transcribed from apache/kafka TxnOffsetCommitRequest.json /
// TxnOffsetCommitResponse.json (flexible 3+); franz-go 28_txn_offset_commit.
//
// TxnOffsetCommitRequest => TransactionalId GroupId ProducerId ProducerEpoch GenerationId(v3+)
//   MemberId(v3+) GroupInstanceId(v3+) Topics[Name Partitions[PartitionIndex CommittedOffset
//   CommittedLeaderEpoch(v2+) CommittedMetadata]]
// TxnOffsetCommitResponse => ThrottleTimeMs Topics[Name Partitions[PartitionIndex ErrorCode]]
import { ApiKey } from '../api-keys.js';
import { f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const txnOffsetCommitRequest = message({
  name: 'TxnOffsetCommitRequest',
  apiKey: ApiKey.TxnOffsetCommit,
  validVersions: '0-3',
  flexibleVersions: '3+',
  fields: [
    f('transactionalId', 'string', '0+'),
    f('groupId', 'string', '0+'),
    f('producerId', 'int64', '0+'),
    f('producerEpoch', 'int16', '0+'),
    f('generationId', 'int32', '3+', { default: '-1' }),
    f('memberId', 'string', '3+', { default: '' }),
    f('groupInstanceId', 'string', '3+', { nullable: '3+', default: 'null' }),
    list('topics', '0+', [
      f('name', 'string', '0+'),
      list('partitions', '0+', [
        f('partitionIndex', 'int32', '0+'),
        f('committedOffset', 'int64', '0+'),
        f('committedLeaderEpoch', 'int32', '2+', { default: '-1' }),
        f('committedMetadata', 'string', '0+', { nullable: '0+' }),
      ]),
    ]),
  ],
});

export const txnOffsetCommitResponse = message({
  name: 'TxnOffsetCommitResponse',
  apiKey: ApiKey.TxnOffsetCommit,
  validVersions: '0-3',
  flexibleVersions: '3+',
  fields: [
    f('throttleTimeMs', 'int32', '0+'),
    list('topics', '0+', [
      f('name', 'string', '0+'),
      list('partitions', '0+', [f('partitionIndex', 'int32', '0+'), f('errorCode', 'int16', '0+')]),
    ]),
  ],
});

export type TxnOffsetCommitRequest = MessageOf<typeof txnOffsetCommitRequest>;
export type TxnOffsetCommitRequestInput = MessageInputOf<typeof txnOffsetCommitRequest>;
export type TxnOffsetCommitResponse = MessageOf<typeof txnOffsetCommitResponse>;
export type TxnOffsetCommitResponseInput = MessageInputOf<typeof txnOffsetCommitResponse>;
