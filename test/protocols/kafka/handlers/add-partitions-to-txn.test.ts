import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { addPartitionsToTxnHandler } from '../../../../src/protocols/kafka/handlers/add-partitions-to-txn.js';
import { initProducerIdHandler } from '../../../../src/protocols/kafka/handlers/init-producer-id.js';
import { txnHarness } from './transactions-harness.js';

function codes(r: { results: Array<{ name: string; results: Array<{ partitionIndex: number; partitionErrorCode: number }> }> }): string[] {
  return r.results.flatMap((t) => t.results.map((p) => `${t.name}/${p.partitionIndex}:${p.partitionErrorCode}`));
}

test('AddPartitionsToTxn advertises 0-3 (v4+ is broker-to-broker)', () => {
  assert.equal(addPartitionsToTxnHandler.minVersion, 0);
  assert.equal(addPartitionsToTxnHandler.maxVersion, 3);
});

test('partitions are added at every version and the transaction becomes Ongoing', async (t) => {
  const h = await txnHarness(t, { topics: { a: 2, b: 1 } });
  for (let version = 0; version <= 3; version++) {
    const id = await h.initTxn(`tx-${version}`);
    const r = await h.call(addPartitionsToTxnHandler, version, { ...id, topics: [{ name: 'a', partitions: [0, 1] }, { name: 'b', partitions: [0] }] });
    assert.deepEqual(codes(r), ['a/0:0', 'a/1:0', 'b/0:0'], `v${version}`);
    const d = h.broker.transactions.describe('kafka', id.transactionalId);
    assert.equal(d?.state, 'Ongoing');
    assert.equal(d?.partitions.length, 3);
    // Adding the same partitions again is a no-op success.
    const again = await h.call(addPartitionsToTxnHandler, version, { ...id, topics: [{ name: 'a', partitions: [1] }] });
    assert.deepEqual(codes(again), ['a/1:0']);
  }
});

test('an unknown topic or partition fails alone; the others answer OPERATION_NOT_ATTEMPTED and nothing is added', async (t) => {
  const h = await txnHarness(t, { topics: { a: 1 } });
  const id = await h.initTxn('tx-u');
  const r = await h.call(addPartitionsToTxnHandler, 3, { ...id, topics: [{ name: 'a', partitions: [0, 5] }, { name: 'missing', partitions: [0] }] });
  assert.deepEqual(codes(r), [`a/0:${ErrorCode.OPERATION_NOT_ATTEMPTED}`, `a/5:${ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}`, `missing/0:${ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}`]);
  assert.equal(h.broker.transactions.describe('kafka', 'tx-u')?.state, 'Empty');
});

test('an unknown transactional id or another producer id is INVALID_PRODUCER_ID_MAPPING on every partition', async (t) => {
  const h = await txnHarness(t, { topics: { a: 2 } });
  const unknown = await h.call(addPartitionsToTxnHandler, 1, { transactionalId: 'nobody', producerId: 7, producerEpoch: 0, topics: [{ name: 'a', partitions: [0, 1] }] });
  assert.deepEqual(codes(unknown), [`a/0:${ErrorCode.INVALID_PRODUCER_ID_MAPPING}`, `a/1:${ErrorCode.INVALID_PRODUCER_ID_MAPPING}`]);
  const id = await h.initTxn('tx-m');
  const wrong = await h.call(addPartitionsToTxnHandler, 3, { ...id, producerId: id.producerId + 1000, topics: [{ name: 'a', partitions: [0] }] });
  assert.deepEqual(codes(wrong), [`a/0:${ErrorCode.INVALID_PRODUCER_ID_MAPPING}`]);
});

test('a fenced epoch is PRODUCER_FENCED from v2 and INVALID_PRODUCER_EPOCH on v0-1', async (t) => {
  const h = await txnHarness(t, { topics: { a: 1 } });
  const old = await h.initTxn('tx-f');
  await h.call(initProducerIdHandler, 4, { transactionalId: 'tx-f', transactionTimeoutMs: 60_000 });
  const expected = [ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.PRODUCER_FENCED, ErrorCode.PRODUCER_FENCED];
  for (let version = 0; version <= 3; version++) {
    const r = await h.call(addPartitionsToTxnHandler, version, { ...old, topics: [{ name: 'a', partitions: [0] }] });
    assert.deepEqual(codes(r), [`a/0:${expected[version]}`], `v${version}`);
  }
  // An epoch from the future is INVALID_PRODUCER_EPOCH at every version.
  const future = await h.call(addPartitionsToTxnHandler, 3, { ...old, producerEpoch: old.producerEpoch + 5, topics: [{ name: 'a', partitions: [0] }] });
  assert.deepEqual(codes(future), [`a/0:${ErrorCode.INVALID_PRODUCER_EPOCH}`]);
});

test('errorResponse answers the code on every partition', () => {
  const r = addPartitionsToTxnHandler.errorResponse!(
    { transactionalId: 'x', producerId: 1, producerEpoch: 0, topics: [{ name: 'a', partitions: [0, 2] }] },
    ErrorCode.COORDINATOR_NOT_AVAILABLE,
    {} as never,
  );
  assert.deepEqual(codes(r as never), [`a/0:${ErrorCode.COORDINATOR_NOT_AVAILABLE}`, `a/2:${ErrorCode.COORDINATOR_NOT_AVAILABLE}`]);
});
