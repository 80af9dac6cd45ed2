// The Kafka side of the transaction coordinator (src/core/transactions.ts): how a marker looks in
// a Kafka log, how a stored Kafka control batch is read back, which core error becomes which Kafka
// code in the five transaction APIs, and the read_committed/produce seam of the data path.
//
// A marker is a control RecordBatch v2 holding one control record (Kafka's EndTransactionMarker,
// written by the broker with appendEndTxnMarker; DefaultRecordBatch / ControlRecordType /
// EndTransactionMarker in apache/kafka):
//
//   RecordBatch: attributes = isControl (0x20) | isTransactional (0x10), no compression,
//                producerId / producerEpoch of the transaction, baseSequence -1, one record
//   record key   := version int16 (0) | type int16 (0 ABORT, 1 COMMIT)
//   record value := version int16 (0) | coordinatorEpoch int32
//
// Clients never decode the value; they read the key's type to drop an aborted transaction's
// records (read_committed) and skip every control batch. The coordinator epoch is the core's
// counter (bumped at every open), as Kafka writes its coordinator epoch.

import type { Broker, BrokerTransactionOptions, TopicRef } from '../../core/broker.js';
import { coreCodeOf } from '../../base/errors.js';
import type { MarkerEncoder, MarkerKindFn } from '../../core/txn-index.js';
import { BatchFlags, BatchFormat } from '../../base/batch.js';
import { ErrorCode } from './codec/errors.js';
import { appendRequestFromBatch } from './codec/kafka-format.js';
import { ControlRecordType, batchRecords, buildControlBatch, decodeControlRecord, validateRecordBatch } from './codec/record-batch.js';
import { kafkaErrorTable } from './errors.js';
import type { KafkaFrontend, KafkaTransactionHooks } from './handlers/types.js';

/**
 * The core scope of Kafka transactional ids. It is also the OffsetStore scope their offsets are
 * committed under, so it must equal the Kafka groups' offset scope (handlers/offset-commit.ts).
 */
export const kafkaTransactionScope = 'kafka';

/** A Kafka control batch with one COMMIT or ABORT marker, as the log's AppendRequest. */
export const encodeKafkaMarker: MarkerEncoder = (marker) => {
  const batch = buildControlBatch({
    producerId: marker.producerId,
    producerEpoch: marker.producerEpoch,
    commit: marker.commit,
    coordinatorEpoch: marker.coordinatorEpoch,
    timestamp: marker.timestamp,
  });
  const built = appendRequestFromBatch(batch);
  // buildControlBatch writes a valid batch; failing here is a programmer error.
  if (!built.ok) throw new Error(`kafka marker batch is invalid: ${built.reason}`);
  return built.request;
};

/**
 * The marker type of a stored Kafka control batch: null for data batches, for control records
 * that are not transaction markers (e.g. KRaft's leader-change records, types 2+), and for a
 * batch that fails validation (the txn index then ignores it, as it would an unknown control).
 */
export const kafkaMarkerKind: MarkerKindFn = (batch) => {
  if (batch.format !== BatchFormat.kafka || (batch.flags & BatchFlags.control) === 0) return null;
  const v = validateRecordBatch(batch.payload);
  if (!v.ok || !v.header.isControl || v.header.recordCount < 1) return null;
  const records = batchRecords(batch.payload, v.header);
  if (!records.ok) return null;
  const first = records.value[0]!;
  const control = decodeControlRecord(first.key, first.value);
  if (!control.ok) return null;
  if (control.value.type === ControlRecordType.commit) return 'commit';
  if (control.value.type === ControlRecordType.abort) return 'abort';
  return null;
};

/** What Broker.open needs to write and read Kafka markers (src/server/server.ts passes it). */
export const kafkaBrokerTransactionOptions: BrokerTransactionOptions = Object.freeze({
  markerEncoders: Object.freeze({ [kafkaTransactionScope]: encodeKafkaMarker }),
  markerKinds: Object.freeze({ [BatchFormat.kafka]: kafkaMarkerKind }),
  markerFormats: Object.freeze({ [BatchFormat.kafka]: encodeKafkaMarker }),
});

/**
 * The Kafka code for a core error thrown by the transaction coordinator.
 *
 * - producer_fenced is PRODUCER_FENCED (90) only from the version that introduced it
 *   (InitProducerId v4, AddPartitionsToTxn / AddOffsetsToTxn / EndTxn v2: the "adds the support for
 *   new error code PRODUCER_FENCED" notes of the request schemas); older clients get
 *   INVALID_PRODUCER_EPOCH (47), as KafkaApis does. Pass `fencedSince: null` for an API that never
 *   answers PRODUCER_FENCED (TxnOffsetCommit, Produce).
 * - A failed write of the coordinator's own state (storage_error) is COORDINATOR_NOT_AVAILABLE, the
 *   retriable code Kafka answers when its transaction-log append fails; a closing coordinator is
 *   COORDINATOR_NOT_AVAILABLE too, so the client looks it up again.
 * - Everything else uses the front-end's table (src/protocols/kafka/errors.ts): e.g.
 *   transactional_id_not_found → INVALID_PRODUCER_ID_MAPPING (49), invalid_txn_state → 48,
 *   concurrent_transactions → 51, invalid_producer_epoch → 47.
 */
export function kafkaTxnErrorCode(error: unknown, version: number, fencedSince: number | null): number {
  const code = coreCodeOf(error);
  switch (code) {
    case 'producer_fenced':
      return fencedSince !== null && version >= fencedSince ? ErrorCode.PRODUCER_FENCED : ErrorCode.INVALID_PRODUCER_EPOCH;
    case 'storage_error':
    case 'shutting_down':
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    case 'not_ready':
      return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
    default:
      return kafkaErrorTable[code];
  }
}

/**
 * The read path's view of the coordinator (KafkaFrontend.transactions): Fetch and ListOffsets ask
 * the last stable offset and the aborted transactions for read_committed. (Produce needs no hook:
 * the core checks a transactional batch as it appends it, Broker.append.)
 */
export function kafkaTransactionHooks(broker: Broker): KafkaTransactionHooks {
  return {
    lastStableOffset(topic: TopicRef, partition: number): number {
      return broker.transactions.lastStableOffset(topic, partition);
    },
    abortedTransactions(topic: TopicRef, partition: number, fromOffset: number, toOffset: number) {
      return broker.transactions.abortedTransactions(topic, partition, fromOffset, toOffset).map((a) => ({ producerId: a.producerId, firstOffset: a.firstOffset }));
    },
  };
}

const hooksByBroker = new WeakMap<Broker, KafkaTransactionHooks>();

/**
 * The hooks the data path uses: the frontend's own when set (tests may stub them), else the
 * broker's coordinator (one hooks object per broker). Every Broker has a coordinator, so a
 * read_committed reader always sees the real last stable offset and aborted list.
 */
export function transactionHooksOf(frontend: KafkaFrontend): KafkaTransactionHooks {
  if (frontend.transactions) return frontend.transactions;
  let hooks = hooksByBroker.get(frontend.broker);
  if (hooks === undefined) {
    hooks = kafkaTransactionHooks(frontend.broker);
    hooksByBroker.set(frontend.broker, hooks);
  }
  return hooks;
}
