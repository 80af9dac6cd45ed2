import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { addPartitionsToTxnHandler } from '../../../../src/protocols/kafka/handlers/add-partitions-to-txn.js';
import { initProducerIdHandler } from '../../../../src/protocols/kafka/handlers/init-producer-id.js';
import { kafkaMarkerKind } from '../../../../src/protocols/kafka/transactions.js';
import { txnHarness } from './transactions-harness.js';

test('InitProducerId advertises 0-4', () => {
  assert.equal(initProducerIdHandler.minVersion, 0);
  assert.equal(initProducerIdHandler.maxVersion, 4);
});

test('an idempotent producer (null transactional id) gets a new producer id with epoch 0 at every version', async (t) => {
  const h = await txnHarness(t);
  const seen = new Set<number>();
  for (let version = 0; version <= 4; version++) {
    const r = await h.call(initProducerIdHandler, version, { transactionalId: null, transactionTimeoutMs: -1 });
    assert.equal(r.errorCode, ErrorCode.NONE, `v${version}`);
    assert.equal(r.producerEpoch, 0);
    assert.ok(r.producerId >= 0);
    assert.ok(!seen.has(r.producerId), 'ids are not reused');
    seen.add(r.producerId);
  }
});

test('v3+: an idempotent producer naming its id and epoch gets the epoch bumped (KIP-360); an unknown id starts over', async (t) => {
  const h = await txnHarness(t);
  const first = await h.call(initProducerIdHandler, 4, { transactionalId: null, transactionTimeoutMs: 0 });
  const bumped = await h.call(initProducerIdHandler, 4, { transactionalId: null, transactionTimeoutMs: 0, producerId: first.producerId, producerEpoch: first.producerEpoch });
  assert.deepEqual([bumped.errorCode, bumped.producerId, bumped.producerEpoch], [0, first.producerId, 1]);
  const unknown = await h.call(initProducerIdHandler, 3, { transactionalId: null, transactionTimeoutMs: 0, producerId: 987_654, producerEpoch: 3 });
  assert.equal(unknown.errorCode, 0);
  assert.notEqual(unknown.producerId, 987_654);
  assert.equal(unknown.producerEpoch, 0);
  // A stale epoch of a known id also starts over rather than failing (Kafka always starts over).
  const stale = await h.call(initProducerIdHandler, 4, { transactionalId: null, transactionTimeoutMs: 0, producerId: first.producerId, producerEpoch: 0 });
  assert.equal(stale.errorCode, 0);
  assert.notEqual(stale.producerId, first.producerId);
});

test('a transactional id keeps its producer id and the epoch grows with every InitProducerId', async (t) => {
  const h = await txnHarness(t);
  const a = await h.call(initProducerIdHandler, 1, { transactionalId: 'tx-1', transactionTimeoutMs: 60_000 });
  assert.deepEqual([a.errorCode, a.producerEpoch], [0, 0]);
  const b = await h.call(initProducerIdHandler, 1, { transactionalId: 'tx-1', transactionTimeoutMs: 60_000 });
  assert.deepEqual([b.errorCode, b.producerId, b.producerEpoch], [0, a.producerId, 1]);
  const other = await h.call(initProducerIdHandler, 1, { transactionalId: 'tx-2', transactionTimeoutMs: 60_000 });
  assert.notEqual(other.producerId, a.producerId);
  const described = h.broker.transactions.describe('kafka', 'tx-1');
  assert.equal(described?.state, 'Empty');
  assert.equal(described?.producerEpoch, 1);
});

test('transaction_timeout_ms outside 1..max answers INVALID_TRANSACTION_TIMEOUT; an empty id INVALID_REQUEST', async (t) => {
  const h = await txnHarness(t);
  const max = h.broker.transactions.transactionTimeoutMsMax;
  for (const timeout of [0, -1, max + 1]) {
    const r = await h.call(initProducerIdHandler, 2, { transactionalId: 'tx-t', transactionTimeoutMs: timeout });
    assert.deepEqual([r.errorCode, r.producerId, r.producerEpoch], [ErrorCode.INVALID_TRANSACTION_TIMEOUT, -1, -1], `timeout ${timeout}`);
  }
  assert.equal((await h.call(initProducerIdHandler, 2, { transactionalId: 'tx-t', transactionTimeoutMs: max })).errorCode, 0);
  assert.equal((await h.call(initProducerIdHandler, 2, { transactionalId: '', transactionTimeoutMs: 1000 })).errorCode, ErrorCode.INVALID_REQUEST);
});

test('v3+: producer id and epoch must both be set or both be -1', async (t) => {
  const h = await txnHarness(t);
  const r1 = await h.call(initProducerIdHandler, 3, { transactionalId: 'tx-x', transactionTimeoutMs: 1000, producerId: -1, producerEpoch: 0 });
  assert.equal(r1.errorCode, ErrorCode.INVALID_REQUEST);
  const r2 = await h.call(initProducerIdHandler, 3, { transactionalId: null, transactionTimeoutMs: 1000, producerId: 5, producerEpoch: -1 });
  assert.equal(r2.errorCode, ErrorCode.INVALID_REQUEST);
});

test('v3+: a transactional bump with the current id/epoch succeeds; a stale epoch is PRODUCER_FENCED (v4) or INVALID_PRODUCER_EPOCH (v3)', async (t) => {
  const h = await txnHarness(t);
  const a = await h.initTxn('tx-k');
  const bumped = await h.call(initProducerIdHandler, 4, { transactionalId: 'tx-k', transactionTimeoutMs: 60_000, producerId: a.producerId, producerEpoch: a.producerEpoch });
  assert.deepEqual([bumped.errorCode, bumped.producerId, bumped.producerEpoch], [0, a.producerId, a.producerEpoch + 1]);
  // A retry of that same bump (the answer was lost) gets the same answer.
  const retried = await h.call(initProducerIdHandler, 4, { transactionalId: 'tx-k', transactionTimeoutMs: 60_000, producerId: a.producerId, producerEpoch: a.producerEpoch });
  assert.deepEqual([retried.errorCode, retried.producerEpoch], [0, bumped.producerEpoch]);
  // Bump again: the first epoch is now two behind.
  await h.call(initProducerIdHandler, 4, { transactionalId: 'tx-k', transactionTimeoutMs: 60_000, producerId: a.producerId, producerEpoch: bumped.producerEpoch });
  const v4 = await h.call(initProducerIdHandler, 4, { transactionalId: 'tx-k', transactionTimeoutMs: 60_000, producerId: a.producerId, producerEpoch: a.producerEpoch });
  assert.deepEqual([v4.errorCode, v4.producerId, v4.producerEpoch], [ErrorCode.PRODUCER_FENCED, -1, -1]);
  const v3 = await h.call(initProducerIdHandler, 3, { transactionalId: 'tx-k', transactionTimeoutMs: 60_000, producerId: a.producerId, producerEpoch: a.producerEpoch });
  assert.equal(v3.errorCode, ErrorCode.INVALID_PRODUCER_EPOCH);
});

test('re-initialising a transactional id with an open transaction aborts it and fences the old producer', async (t) => {
  const h = await txnHarness(t, { topics: { out: 1 } });
  const old = await h.initTxn('tx-z');
  await h.call(addPartitionsToTxnHandler, 3, { ...old, topics: [{ name: 'out', partitions: [0] }] });
  await h.produceTxn('out', 0, old, 0, ['zombie']);
  const fresh = await h.initTxn('tx-z');
  assert.equal(fresh.producerId, old.producerId);
  assert.ok(fresh.producerEpoch > old.producerEpoch);
  const batches = await h.readAll('out', 0);
  assert.deepEqual(batches.map((b) => kafkaMarkerKind(b)), [null, 'abort'], 'the zombie transaction was aborted with a Kafka marker');
  assert.equal(batches[1]!.producerEpoch, fresh.producerEpoch, 'the marker carries the new epoch');
  const late = await h.call(addPartitionsToTxnHandler, 3, { ...old, topics: [{ name: 'out', partitions: [0] }] });
  assert.equal(late.results[0]!.results[0]!.partitionErrorCode, ErrorCode.PRODUCER_FENCED);
});
