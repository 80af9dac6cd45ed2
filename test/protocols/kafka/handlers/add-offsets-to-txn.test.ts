import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { addOffsetsToTxnHandler } from '../../../../src/protocols/kafka/handlers/add-offsets-to-txn.js';
import { initProducerIdHandler } from '../../../../src/protocols/kafka/handlers/init-producer-id.js';
import { txnHarness } from './transactions-harness.js';

test('AddOffsetsToTxn advertises 0-3', () => {
  assert.equal(addOffsetsToTxnHandler.minVersion, 0);
  assert.equal(addOffsetsToTxnHandler.maxVersion, 3);
});

test('a group is added to the transaction at every version', async (t) => {
  const h = await txnHarness(t);
  for (let version = 0; version <= 3; version++) {
    const id = await h.initTxn(`tx-${version}`);
    const r = await h.call(addOffsetsToTxnHandler, version, { ...id, groupId: 'g1' });
    assert.equal(r.errorCode, ErrorCode.NONE, `v${version}`);
    const d = h.broker.transactions.describe('kafka', id.transactionalId);
    assert.equal(d?.state, 'Ongoing');
    assert.deepEqual(d?.groups, ['g1']);
    assert.equal((await h.call(addOffsetsToTxnHandler, version, { ...id, groupId: 'g1' })).errorCode, 0, 'again: no-op');
  }
});

test('an empty group id is INVALID_GROUP_ID; unknown ids INVALID_PRODUCER_ID_MAPPING', async (t) => {
  const h = await txnHarness(t);
  const id = await h.initTxn('tx-g');
  assert.equal((await h.call(addOffsetsToTxnHandler, 3, { ...id, groupId: '' })).errorCode, ErrorCode.INVALID_GROUP_ID);
  assert.equal((await h.call(addOffsetsToTxnHandler, 3, { ...id, transactionalId: 'other', groupId: 'g' })).errorCode, ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  assert.equal(h.broker.transactions.describe('kafka', 'tx-g')?.state, 'Empty');
});

test('a fenced epoch is PRODUCER_FENCED from v2 and INVALID_PRODUCER_EPOCH on v0-1', async (t) => {
  const h = await txnHarness(t);
  const old = await h.initTxn('tx-f');
  await h.call(initProducerIdHandler, 4, { transactionalId: 'tx-f', transactionTimeoutMs: 60_000 });
  const expected = [ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.PRODUCER_FENCED, ErrorCode.PRODUCER_FENCED];
  for (let version = 0; version <= 3; version++) {
    assert.equal((await h.call(addOffsetsToTxnHandler, version, { ...old, groupId: 'g' })).errorCode, expected[version], `v${version}`);
  }
});
