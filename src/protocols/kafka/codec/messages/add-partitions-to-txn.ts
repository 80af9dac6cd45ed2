// AddPartitionsToTxn (key 24). Transcribed from apache/kafka AddPartitionsToTxnRequest.json /
// AddPartitionsToTxnResponse.json (flexible 3+); franz-go 24_add_partitions_to_txn. Only the
// client form (v0-3) is covered: v4+ is the batched broker-to-broker form and is not advertised.
// The schema's V3AndBelow* names are shortened here; the wire layout is the same.
//
// AddPartitionsToTxnRequest => TransactionalId ProducerId ProducerEpoch Topics[Name Partitions[int32]]
// AddPartitionsToTxnResponse => ThrottleTimeMs Results[Name Results[PartitionIndex PartitionErrorCode]]
import { ApiKey } from '../api-keys.js';
import { arr, f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const addPartitionsToTxnRequest = message({
  name: 'AddPartitionsToTxnRequest',
  apiKey: ApiKey.AddPartitionsToTxn,
  validVersions: '0-3',
  flexibleVersions: '3+',
  fields: [
    f('transactionalId', 'string', '0-3'),
    f('producerId', 'int64', '0-3'),
    f('producerEpoch', 'int16', '0-3'),
    list('topics', '0-3', [f('name', 'string', '0+'), arr('partitions', 'int32', '0+')]),
  ],
});

export const addPartitionsToTxnResponse = message({
  name: 'AddPartitionsToTxnResponse',
  apiKey: ApiKey.AddPartitionsToTxn,
  validVersions: '0-3',
  flexibleVersions: '3+',
  fields: [
    f('throttleTimeMs', 'int32', '0+'),
    list('results', '0-3', [
      f('name', 'string', '0+'),
      list('results', '0+', [f('partitionIndex', 'int32', '0+'), f('partitionErrorCode', 'int16', '0+')]),
    ]),
  ],
});

export type AddPartitionsToTxnRequest = MessageOf<typeof addPartitionsToTxnRequest>;
export type AddPartitionsToTxnRequestInput = MessageInputOf<typeof addPartitionsToTxnRequest>;
export type AddPartitionsToTxnResponse = MessageOf<typeof addPartitionsToTxnResponse>;
export type AddPartitionsToTxnResponseInput = MessageInputOf<typeof addPartitionsToTxnResponse>;
