// ListTransactions (key 66), v0-1, flexible from v0 (KIP-664; v1 adds DurationFilter, KIP-994).
// Transcribed from apache/kafka ListTransactionsRequest.json / ListTransactionsResponse.json.
//
// ListTransactionsRequest => StateFilters[string] ProducerIdFilters[int64] DurationFilter(v1+)
// ListTransactionsResponse => ThrottleTimeMs ErrorCode UnknownStateFilters[string]
//   TransactionStates[TransactionalId ProducerId TransactionState]
import { ApiKey } from '../api-keys.js';
import { arr, f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const listTransactionsRequest = message({
  name: 'ListTransactionsRequest',
  apiKey: ApiKey.ListTransactions,
  validVersions: '0-1',
  flexibleVersions: '0+',
  fields: [
    arr('stateFilters', 'string', '0+'),
    arr('producerIdFilters', 'int64', '0+'),
    f('durationFilter', 'int64', '1+', { default: '-1' }),
  ],
});

export const listTransactionsResponse = message({
  name: 'ListTransactionsResponse',
  apiKey: ApiKey.ListTransactions,
  validVersions: '0-1',
  flexibleVersions: '0+',
  fields: [
    f('throttleTimeMs', 'int32', '0+'),
    f('errorCode', 'int16', '0+'),
    arr('unknownStateFilters', 'string', '0+'),
    list('transactionStates', '0+', [
      f('transactionalId', 'string', '0+'),
      f('producerId', 'int64', '0+'),
      f('transactionState', 'string', '0+'),
    ]),
  ],
});

export type ListTransactionsRequest = MessageOf<typeof listTransactionsRequest>;
export type ListTransactionsRequestInput = MessageInputOf<typeof listTransactionsRequest>;
export type ListTransactionsResponse = MessageOf<typeof listTransactionsResponse>;
export type ListTransactionsResponseInput = MessageInputOf<typeof listTransactionsResponse>;
