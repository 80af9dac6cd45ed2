import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { validateRecordBatch } from '../../../../src/protocols/kafka/codec/record-batch.js';
import { addOffsetsToTxnHandler } from '../../../../src/protocols/kafka/handlers/add-offsets-to-txn.js';
import { addPartitionsToTxnHandler } from '../../../../src/protocols/kafka/handlers/add-partitions-to-txn.js';
import { endTxnHandler } from '../../../../src/protocols/kafka/handlers/end-txn.js';
import { initProducerIdHandler } from '../../../../src/protocols/kafka/handlers/init-producer-id.js';
import { txnOffsetCommitHandler } from '../../../../src/protocols/kafka/handlers/txn-offset-commit.js';
import { kafkaMarkerKind } from '../../../../src/protocols/kafka/transactions.js';
import { txnHarness, type TxnHarness } from './transactions-harness.js';

async function openTxn(h: TxnHarness, transactionalId: string, values: string[]) {
  const id = await h.initTxn(transactionalId);
  const added = await h.call(addPartitionsToTxnHandler, 3, { ...id, topics: [{ name: 'out', partitions: [0, 1] }] });
  assert.ok(added.results.every((t) => t.results.every((p) => p.partitionErrorCode === 0)));
  await h.produceTxn('out', 0, id, 0, values);
  return id;
}

test('EndTxn advertises 0-4 (v5 bumps the epoch per transaction and is not served)', () => {
  assert.equal(endTxnHandler.minVersion, 0);
  assert.equal(endTxnHandler.maxVersion, 4);
});

test('commit writes a Kafka COMMIT control batch into every partition of the transaction, at every version', async (t) => {
  const h = await txnHarness(t, { topics: { out: 2 } });
  let nextOffset0 = 0;
  for (let version = 0; version <= 4; version++) {
    const id = await openTxn(h, `tx-${version}`, [`v${version}`]);
    const r = await h.call(endTxnHandler, version, { ...id, committed: true });
    assert.equal(r.errorCode, ErrorCode.NONE, `v${version}`);
    assert.equal(h.broker.transactions.describe('kafka', id.transactionalId)?.state, 'CompleteCommit');
    const p0 = (await h.readAll('out', 0)).slice(nextOffset0);
    assert.deepEqual(p0.map((b) => kafkaMarkerKind(b)), [null, 'commit']);
    const marker = validateRecordBatch(p0[1]!.payload);
    assert.ok(marker.ok);
    assert.deepEqual([marker.header.isControl, marker.header.isTransactional, marker.header.producerId, marker.header.producerEpoch], [true, true, id.producerId, id.producerEpoch]);
    nextOffset0 = p0[1]!.lastOffset + 1;
  }
  // Partition 1 was added but never written: it still gets each transaction's marker, as in Kafka.
  assert.deepEqual((await h.readAll('out', 1)).map((b) => kafkaMarkerKind(b)), ['commit', 'commit', 'commit', 'commit', 'commit']);
  assert.deepEqual(await h.values('out', 0), ['v0', 'v1', 'v2', 'v3', 'v4']);
});

test('abort writes ABORT markers; a retried EndTxn answers NONE; the other outcome is INVALID_TXN_STATE', async (t) => {
  const h = await txnHarness(t, { topics: { out: 2 } });
  const id = await openTxn(h, 'tx-a', ['x']);
  assert.equal((await h.call(endTxnHandler, 3, { ...id, committed: false })).errorCode, 0);
  assert.deepEqual((await h.readAll('out', 0)).map((b) => kafkaMarkerKind(b)), [null, 'abort']);
  assert.equal((await h.call(endTxnHandler, 3, { ...id, committed: false })).errorCode, 0, 'retry of the abort');
  assert.equal((await h.call(endTxnHandler, 3, { ...id, committed: true })).errorCode, ErrorCode.INVALID_TXN_STATE);
  assert.equal((await h.readAll('out', 0)).length, 2, 'no further marker');
});

test('nothing to end (Empty) is INVALID_TXN_STATE; unknown ids INVALID_PRODUCER_ID_MAPPING', async (t) => {
  const h = await txnHarness(t, { topics: { out: 2 } });
  const id = await h.initTxn('tx-e');
  assert.equal((await h.call(endTxnHandler, 1, { ...id, committed: true })).errorCode, ErrorCode.INVALID_TXN_STATE);
  assert.equal((await h.call(endTxnHandler, 1, { ...id, transactionalId: 'nope', committed: true })).errorCode, ErrorCode.INVALID_PRODUCER_ID_MAPPING);
});

test('a fenced epoch is PRODUCER_FENCED from v2 and INVALID_PRODUCER_EPOCH on v0-1', async (t) => {
  const h = await txnHarness(t, { topics: { out: 2 } });
  const old = await openTxn(h, 'tx-f', ['zombie']);
  await h.call(initProducerIdHandler, 4, { transactionalId: 'tx-f', transactionTimeoutMs: 60_000 });
  const expected = [ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.PRODUCER_FENCED, ErrorCode.PRODUCER_FENCED, ErrorCode.PRODUCER_FENCED];
  for (let version = 0; version <= 4; version++) {
    assert.equal((await h.call(endTxnHandler, version, { ...old, committed: true })).errorCode, expected[version], `v${version}`);
  }
  assert.deepEqual(await h.values('out', 0), ['zombie'], 'the data stays in the log');
  assert.deepEqual((await h.readAll('out', 0)).map((b) => kafkaMarkerKind(b)), [null, 'abort'], 'but it was aborted by the re-init');
});

test('commit stores the staged offsets; abort drops them', async (t) => {
  const h = await txnHarness(t, { topics: { out: 2, in: 1 } });
  const topicIn = h.broker.catalog.requireTopic({ namespace: 'default', topic: 'in' });
  const stage = async (transactionalId: string, offset: number) => {
    const id = await openTxn(h, transactionalId, ['r']);
    assert.equal((await h.call(addOffsetsToTxnHandler, 3, { ...id, groupId: 'g' })).errorCode, 0);
    const c = await h.call(txnOffsetCommitHandler, 3, { ...id, groupId: 'g', topics: [{ name: 'in', partitions: [{ partitionIndex: 0, committedOffset: offset, committedMetadata: 'm' }] }] });
    assert.equal(c.topics[0]!.partitions[0]!.errorCode, 0);
    assert.equal(await h.broker.offsets.fetch('kafka', 'g', topicIn.internalId, 0), null, 'staged, not committed');
    return id;
  };
  const aborted = await stage('tx-o1', 10);
  assert.equal((await h.call(endTxnHandler, 3, { ...aborted, committed: false })).errorCode, 0);
  assert.equal(await h.broker.offsets.fetch('kafka', 'g', topicIn.internalId, 0), null);
  const committed = await stage('tx-o2', 20);
  assert.equal((await h.call(endTxnHandler, 3, { ...committed, committed: true })).errorCode, 0);
  const stored = await h.broker.offsets.fetch('kafka', 'g', topicIn.internalId, 0);
  assert.equal(stored?.offset, 20);
  assert.equal(stored?.metadata, 'm');
});
