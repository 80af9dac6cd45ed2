import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QuartetError } from '../../../src/base/errors.js';
import { encodeNeutralMarker } from '../../../src/core/txn-index.js';
import { BatchFlags, BatchFormat, type AppendRequest, type StoredBatch } from '../../../src/log/types.js';
import { ErrorCode } from '../../../src/protocols/kafka/codec/errors.js';
import { appendRequestFromBatch, kafkaBatchFormatCodec } from '../../../src/protocols/kafka/codec/kafka-format.js';
import {
  BatchAttributes,
  batchRecords,
  buildRecordBatch,
  computeBatchCrc,
  decodeControlRecord,
  encodeControlRecordKey,
  encodeControlRecordValue,
  patchBaseOffset,
  validateRecordBatch,
} from '../../../src/protocols/kafka/codec/record-batch.js';
import { endTxnHandler } from '../../../src/protocols/kafka/handlers/end-txn.js';
import { produceHandler } from '../../../src/protocols/kafka/handlers/produce.js';
import { addPartitionsToTxnHandler } from '../../../src/protocols/kafka/handlers/add-partitions-to-txn.js';
import { encodeKafkaMarker, kafkaMarkerKind, kafkaTransactionHooks, kafkaTxnErrorCode } from '../../../src/protocols/kafka/transactions.js';
import { txnHarness } from './handlers/transactions-harness.js';

/** The AppendRequest as the log would store it at `baseOffset`. */
function stored(request: AppendRequest, baseOffset: number): StoredBatch {
  const payload = Buffer.from(request.payload);
  kafkaBatchFormatCodec.stamp!({ ...request, payload }, { baseOffset, appendTime: 0, appendMicros: 0 });
  return {
    format: request.format,
    flags: request.flags,
    baseOffset,
    lastOffset: baseOffset + request.recordCount - 1,
    recordCount: request.recordCount,
    firstTimestamp: request.firstTimestamp,
    maxTimestamp: request.maxTimestamp,
    producerId: request.producerId,
    producerEpoch: request.producerEpoch,
    baseSequence: request.baseSequence,
    payload,
  };
}

test('the Kafka marker is a valid control RecordBatch v2 with one control record', () => {
  for (const commit of [true, false]) {
    const request = encodeKafkaMarker({ producerId: 4242, producerEpoch: 7, commit, coordinatorEpoch: 3, timestamp: 1_700_000_000_123 });
    assert.equal(request.format, BatchFormat.kafka);
    assert.equal(request.flags, BatchFlags.control | BatchFlags.transactional);
    assert.equal(request.recordCount, 1);
    assert.equal(request.producerId, 4242);
    assert.equal(request.producerEpoch, 7);
    assert.equal(request.baseSequence, -1);

    const batch = stored(request, 1234).payload;
    const v = validateRecordBatch(batch);
    assert.ok(v.ok, v.ok ? '' : v.reason);
    const h = v.header;
    assert.equal(h.baseOffset, 1234, 'stamp patches the base offset');
    assert.equal(h.magic, 2);
    assert.equal(h.crc, computeBatchCrc(batch), 'CRC-32C over attributes..end');
    assert.equal(h.attributes, BatchAttributes.control | BatchAttributes.transactional, 'no compression, CreateTime');
    assert.equal(h.isControl, true);
    assert.equal(h.isTransactional, true);
    assert.equal(h.producerId, 4242);
    assert.equal(h.producerEpoch, 7);
    assert.equal(h.baseSequence, -1);
    assert.equal(h.lastOffsetDelta, 0);
    assert.equal(h.recordCount, 1);
    assert.equal(h.baseTimestamp, 1_700_000_000_123);
    const recs = batchRecords(batch, h);
    assert.ok(recs.ok);
    assert.equal(recs.value.length, 1);
    const rec = recs.value[0]!;
    // key = version 0 | type (1 commit, 0 abort); value = version 0 | coordinator epoch
    assert.deepEqual(rec.key, Buffer.from([0, 0, 0, commit ? 1 : 0]));
    assert.deepEqual(rec.value, Buffer.from([0, 0, 0, 0, 0, 3]));
    const control = decodeControlRecord(rec.key, rec.value);
    assert.ok(control.ok);
    assert.deepEqual(control.value, { type: commit ? 1 : 0, coordinatorEpoch: 3 });
    // The log's transcoder sees no user records in it.
    assert.deepEqual(kafkaBatchFormatCodec.decode(stored(request, 1234)), []);
  }
});

test('kafkaMarkerKind reads commit and abort back, and ignores everything else', () => {
  const commit = stored(encodeKafkaMarker({ producerId: 1, producerEpoch: 0, commit: true, coordinatorEpoch: 0, timestamp: 1 }), 10);
  const abort = stored(encodeKafkaMarker({ producerId: 1, producerEpoch: 0, commit: false, coordinatorEpoch: 0, timestamp: 1 }), 11);
  assert.equal(kafkaMarkerKind(commit), 'commit');
  assert.equal(kafkaMarkerKind(abort), 'abort');

  // A transactional data batch is not a marker.
  const data = appendRequestFromBatch(buildRecordBatch([{ timestamp: 1, key: null, value: Buffer.from('x') }], { transactional: true, producerId: 1, producerEpoch: 0, baseSequence: 0 }));
  assert.ok(data.ok);
  assert.equal(kafkaMarkerKind(stored(data.request, 12)), null);

  // A control batch whose record is not a transaction marker (e.g. KRaft LEADER_CHANGE, type 2).
  const other = buildRecordBatch([{ timestamp: 1, key: encodeControlRecordKey(2), value: encodeControlRecordValue(0) }], { control: true, transactional: true, producerId: 1, producerEpoch: 0 });
  const otherReq = appendRequestFromBatch(other);
  assert.ok(otherReq.ok);
  assert.equal(kafkaMarkerKind(stored(otherReq.request, 13)), null);

  // A corrupt control batch (CRC no longer matches) is not trusted.
  const corrupt = stored(encodeKafkaMarker({ producerId: 1, producerEpoch: 0, commit: true, coordinatorEpoch: 0, timestamp: 1 }), 14);
  corrupt.payload[corrupt.payload.length - 1] ^= 0xff;
  assert.equal(kafkaMarkerKind(corrupt), null);

  // Other formats are not read by the Kafka reader.
  const neutral = encodeNeutralMarker({ producerId: 1, producerEpoch: 0, commit: true, coordinatorEpoch: 0, timestamp: 1 });
  assert.equal(kafkaMarkerKind(stored(neutral, 15)), null);

  // patchBaseOffset keeps the batch valid (baseOffset is outside the CRC).
  const moved = Buffer.from(commit.payload);
  patchBaseOffset(moved, 999);
  assert.ok(validateRecordBatch(moved).ok);
});

test('kafkaTxnErrorCode maps core errors, with PRODUCER_FENCED only from the version that knows it', () => {
  const fenced = new QuartetError('producer_fenced');
  assert.equal(kafkaTxnErrorCode(fenced, 4, 4), ErrorCode.PRODUCER_FENCED);
  assert.equal(kafkaTxnErrorCode(fenced, 3, 4), ErrorCode.INVALID_PRODUCER_EPOCH);
  assert.equal(kafkaTxnErrorCode(fenced, 2, 2), ErrorCode.PRODUCER_FENCED);
  assert.equal(kafkaTxnErrorCode(fenced, 1, 2), ErrorCode.INVALID_PRODUCER_EPOCH);
  assert.equal(kafkaTxnErrorCode(fenced, 3, null), ErrorCode.INVALID_PRODUCER_EPOCH);
  assert.equal(kafkaTxnErrorCode(new QuartetError('transactional_id_not_found'), 3, 2), ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  assert.equal(kafkaTxnErrorCode(new QuartetError('invalid_txn_state'), 3, 2), ErrorCode.INVALID_TXN_STATE);
  assert.equal(kafkaTxnErrorCode(new QuartetError('concurrent_transactions'), 3, 2), ErrorCode.CONCURRENT_TRANSACTIONS);
  assert.equal(kafkaTxnErrorCode(new QuartetError('invalid_producer_epoch'), 3, 2), ErrorCode.INVALID_PRODUCER_EPOCH);
  assert.equal(kafkaTxnErrorCode(new QuartetError('storage_error'), 3, 2), ErrorCode.COORDINATOR_NOT_AVAILABLE);
  assert.equal(kafkaTxnErrorCode(new Error('disk on fire'), 3, 2), ErrorCode.COORDINATOR_NOT_AVAILABLE);
  assert.equal(kafkaTxnErrorCode(new QuartetError('shutting_down'), 3, 2), ErrorCode.COORDINATOR_NOT_AVAILABLE);
  assert.equal(kafkaTxnErrorCode(new QuartetError('not_ready'), 3, 2), ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  // The codes themselves (apache/kafka Errors.java).
  assert.deepEqual(
    [ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.INVALID_TXN_STATE, ErrorCode.INVALID_PRODUCER_ID_MAPPING, ErrorCode.INVALID_TRANSACTION_TIMEOUT, ErrorCode.CONCURRENT_TRANSACTIONS, ErrorCode.PRODUCER_FENCED],
    [47, 48, 49, 50, 51, 90],
  );
});

test('the data path: the produce check (in the core), last stable offset and aborted transactions', async (t) => {
  const h = await txnHarness(t, { topics: { out: 1 } });
  const hooks = kafkaTransactionHooks(h.broker);
  const topic = { namespace: 'default', topic: 'out' };
  const id = await h.initTxn('tx-hooks');
  // A Produce of a transactional batch of two records under `id`, or what `over` changes of it.
  const produce = async (over: Partial<{ transactionalId: string | null; producerId: number; producerEpoch: number }> = {}) => {
    const { transactionalId, producerId, producerEpoch } = { ...id, ...over };
    const records = buildRecordBatch(['a', 'b'].map((v) => ({ timestamp: h.clock.now(), key: null, value: Buffer.from(v) })), { transactional: true, producerId, producerEpoch, baseSequence: 0 });
    const r = await h.call(produceHandler, 9, { transactionalId, acks: -1, timeoutMs: 1000, topicData: [{ name: 'out', partitionData: [{ index: 0, records }] }] });
    return r.responses[0]!.partitionResponses[0]!;
  };

  assert.equal((await produce()).errorCode, ErrorCode.INVALID_TXN_STATE, 'partition not added yet');
  const added = await h.call(addPartitionsToTxnHandler, 3, { ...id, topics: [{ name: 'out', partitions: [0] }] });
  assert.equal(added.results[0]!.results[0]!.partitionErrorCode, 0);
  assert.equal((await produce({ transactionalId: null })).errorCode, ErrorCode.INVALID_TXN_STATE);
  assert.equal((await produce({ producerId: id.producerId + 100 })).errorCode, ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  assert.equal((await produce({ producerEpoch: id.producerEpoch + 1 })).errorCode, ErrorCode.INVALID_PRODUCER_EPOCH);

  const appended = await produce();
  assert.deepEqual([appended.errorCode, appended.baseOffset], [ErrorCode.NONE, 0]);
  assert.equal(hooks.lastStableOffset(topic, 0), 0, 'the open transaction holds the LSO at its first offset');
  const ended = await h.call(endTxnHandler, 3, { ...id, committed: false });
  assert.equal(ended.errorCode, 0);
  assert.equal(hooks.lastStableOffset(topic, 0), 3, 'two records and the abort marker');
  assert.deepEqual(hooks.abortedTransactions(topic, 0, 0, 3), [{ producerId: id.producerId, firstOffset: 0 }]);
  assert.deepEqual(hooks.abortedTransactions(topic, 0, 3, 3), []);
});

test('markers survive a restart: the index is rebuilt from the Kafka control batches in the log', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'quartet-kafka-txn-restart-'));
  const topic = { namespace: 'default', topic: 'out' };
  {
    const first = await txnHarness({ after: () => undefined }, { topics: { out: 1 }, dataDir, memory: false });
    const id = await first.initTxn('tx-restart');
    await first.call(addPartitionsToTxnHandler, 3, { ...id, topics: [{ name: 'out', partitions: [0] }] });
    await first.produceTxn('out', 0, id, 0, ['gone-1', 'gone-2']);
    assert.equal((await first.call(endTxnHandler, 3, { ...id, committed: false })).errorCode, 0);
    await first.call(addPartitionsToTxnHandler, 3, { ...id, topics: [{ name: 'out', partitions: [0] }] });
    await first.produceTxn('out', 0, id, 2, ['kept']);
    assert.equal((await first.call(endTxnHandler, 3, { ...id, committed: true })).errorCode, 0);
    await first.frontend.close();
    await first.broker.close();
  }
  const second = await txnHarness(t, { dataDir, memory: false });
  t.after(() => rmSync(dataDir, { recursive: true, force: true })); // runs after the harness closes
  const hooks = kafkaTransactionHooks(second.broker);
  const kinds = (await second.readAll('out', 0)).map((b) => kafkaMarkerKind(b));
  assert.deepEqual(kinds, [null, 'abort', null, 'commit']);
  assert.equal(hooks.lastStableOffset(topic, 0), 5);
  const pid = (await second.readAll('out', 0))[0]!.producerId;
  assert.deepEqual(hooks.abortedTransactions(topic, 0, 0, 5), [{ producerId: pid, firstOffset: 0 }]);
});
