// DescribeProducers (key 61), v0, flexible from v0 (KIP-664). Transcribed from apache/kafka
// DescribeProducersRequest.json / DescribeProducersResponse.json.
//
// DescribeProducersRequest => Topics[Name PartitionIndexes[int32]]
// DescribeProducersResponse => ThrottleTimeMs Topics[Name Partitions[PartitionIndex ErrorCode
//   ErrorMessage(nullable) ActiveProducers[ProducerId ProducerEpoch(int32) LastSequence
//   LastTimestamp CoordinatorEpoch CurrentTxnStartOffset]]]
import { ApiKey } from '../api-keys.js';
import { arr, f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const describeProducersRequest = message({
  name: 'DescribeProducersRequest',
  apiKey: ApiKey.DescribeProducers,
  validVersions: '0',
  flexibleVersions: '0+',
  fields: [
    list('topics', '0+', [
      f('name', 'string', '0+'),
      arr('partitionIndexes', 'int32', '0+'),
    ]),
  ],
});

export const describeProducersResponse = message({
  name: 'DescribeProducersResponse',
  apiKey: ApiKey.DescribeProducers,
  validVersions: '0',
  flexibleVersions: '0+',
  fields: [
    f('throttleTimeMs', 'int32', '0+'),
    list('topics', '0+', [
      f('name', 'string', '0+'),
      list('partitions', '0+', [
        f('partitionIndex', 'int32', '0+'),
        f('errorCode', 'int16', '0+'),
        f('errorMessage', 'string', '0+', { nullable: '0+', default: 'null' }),
        list('activeProducers', '0+', [
          f('producerId', 'int64', '0+'),
          f('producerEpoch', 'int32', '0+'),
          f('lastSequence', 'int32', '0+', { default: '-1' }),
          f('lastTimestamp', 'int64', '0+', { default: '-1' }),
          f('coordinatorEpoch', 'int32', '0+'),
          f('currentTxnStartOffset', 'int64', '0+', { default: '-1' }),
        ]),
      ]),
    ]),
  ],
});

export type DescribeProducersRequest = MessageOf<typeof describeProducersRequest>;
export type DescribeProducersRequestInput = MessageInputOf<typeof describeProducersRequest>;
export type DescribeProducersResponse = MessageOf<typeof describeProducersResponse>;
export type DescribeProducersResponseInput = MessageInputOf<typeof describeProducersResponse>;
