// DescribeTransactions (key 65), v0, flexible from v0 (KIP-664). Transcribed from apache/kafka
// DescribeTransactionsRequest.json / DescribeTransactionsResponse.json.
//
// DescribeTransactionsRequest => TransactionalIds[string]
// DescribeTransactionsResponse => ThrottleTimeMs TransactionStates[ErrorCode TransactionalId
//   TransactionState TransactionTimeoutMs TransactionStartTimeMs ProducerId ProducerEpoch(int16)
//   Topics[Topic Partitions[int32]]]
import { ApiKey } from '../api-keys.js';
import { arr, f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const describeTransactionsRequest = message({
  name: 'DescribeTransactionsRequest',
  apiKey: ApiKey.DescribeTransactions,
  validVersions: '0',
  flexibleVersions: '0+',
  fields: [arr('transactionalIds', 'string', '0+')],
});

export const describeTransactionsResponse = message({
  name: 'DescribeTransactionsResponse',
  apiKey: ApiKey.DescribeTransactions,
  validVersions: '0',
  flexibleVersions: '0+',
  fields: [
    f('throttleTimeMs', 'int32', '0+'),
    list('transactionStates', '0+', [
      f('errorCode', 'int16', '0+'),
      f('transactionalId', 'string', '0+'),
      f('transactionState', 'string', '0+'),
      f('transactionTimeoutMs', 'int32', '0+'),
      f('transactionStartTimeMs', 'int64', '0+'),
      f('producerId', 'int64', '0+'),
      f('producerEpoch', 'int16', '0+'),
      list('topics', '0+', [
        f('topic', 'string', '0+'),
        arr('partitions', 'int32', '0+'),
      ]),
    ]),
  ],
});

export type DescribeTransactionsRequest = MessageOf<typeof describeTransactionsRequest>;
export type DescribeTransactionsRequestInput = MessageInputOf<typeof describeTransactionsRequest>;
export type DescribeTransactionsResponse = MessageOf<typeof describeTransactionsResponse>;
export type DescribeTransactionsResponseInput = MessageInputOf<typeof describeTransactionsResponse>;
