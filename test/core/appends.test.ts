// The append path (src/core/appends.ts) through Broker.append: what is checked, and what is
// recorded the moment the log assigns the offsets, before the write settles. Purges, failed
// writes and retries in flight are in broker.test.ts and transactions.test.ts.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Broker } from '../../src/core/broker.js';
import { ManualClock } from '../../src/base/clock.js';
import { isQuartetError, type CoreErrorCode } from '../../src/base/errors.js';
import type { TxnIdentity } from '../../src/core/transactions.js';
import { BatchFlags, encodeNeutralBatch, type AppendRequest } from '../../src/log/index.js';
import { tempDir, testScryptCost } from './helpers.js';

function code(expected: CoreErrorCode) {
  return (err: unknown) => isQuartetError(err) && err.code === expected;
}

async function memoryBroker(t: { after(fn: () => Promise<void> | void): void }): Promise<{ clock: ManualClock; broker: Broker }> {
  const clock = new ManualClock();
  const broker = await Broker.open({ dataDir: tempDir(t), memory: true, clock, rootUser: { username: 'root', password: 'pw' }, maintenanceIntervalMs: 0, scryptCost: testScryptCost });
  t.after(() => broker.close());
  return { clock, broker };
}

function batch(clock: ManualClock, values: string[], producer: { producerId: number; producerEpoch: number; baseSequence: number; flags?: number }): AppendRequest {
  return encodeNeutralBatch(values.map((value) => ({ value })), { timestamp: clock.now(), ...producer });
}

async function begin(broker: Broker, transactionalId: string): Promise<TxnIdentity> {
  const { producerId, epoch } = await broker.transactions.initProducerId({ scope: 'kafka', transactionalId, transactionTimeoutMs: 60_000 });
  return { scope: 'kafka', transactionalId, producerId, producerEpoch: epoch };
}

test('pipelined batches of one producer are checked against the ones before them, with nothing awaited in between', async (t) => {
  const { clock, broker } = await memoryBroker(t);
  const topic = await broker.createTopic('default', 'p', { partitions: 1 });
  const { producerId, epoch } = await broker.producers.initProducer();
  const p = (baseSequence: number) => ({ producerId, producerEpoch: epoch, baseSequence });
  // Started back to back: the producer's window holds each batch from the moment its offsets are assigned.
  const first = broker.append(topic, 0, batch(clock, ['a', 'b', 'c'], p(0)));
  const second = broker.append(topic, 0, batch(clock, ['d'], p(3)));
  const gap = broker.append(topic, 0, batch(clock, ['x'], p(9)));
  const retry = broker.append(topic, 0, batch(clock, ['a', 'b', 'c'], p(0)));
  assert.deepEqual([(await first).baseOffset, (await second).baseOffset], [0, 3]);
  await assert.rejects(gap, code('out_of_order_sequence'), 'the gap is seen against the second batch, not yet written when it came');
  assert.deepEqual([(await retry).baseOffset, (await retry).lastOffset], [0, 2], 'the retry gets the original offsets');
  assert.equal(broker.partition(topic, 0).stats().nextOffset, 4);
});

test('a transactional batch is shown to the transaction index when its offsets are assigned, before the write settles', async (t) => {
  const { clock, broker } = await memoryBroker(t);
  const topic = await broker.createTopic('default', 'x', { partitions: 1 });
  const id = await begin(broker, 'tx-assigned');
  await broker.transactions.addPartitions(id, [{ topic, partition: 0 }]);
  await broker.append(topic, 0, batch(clock, ['plain'], { producerId: -1, producerEpoch: -1, baseSequence: -1 }));
  const appended = broker.append(topic, 0, batch(clock, ['t'], { ...id, baseSequence: 0, flags: BatchFlags.transactional }), { transaction: id });
  assert.deepEqual(broker.transactions.openTransactions(topic, 0), [{ producerId: id.producerId, firstOffset: 1 }], 'seen at assignment');
  assert.equal((await appended).baseOffset, 1);
  assert.equal(broker.transactions.lastStableOffset(topic, 0), 1);
});

test('a transactional batch is appended only under its transaction, by its producer and epoch, to a partition the transaction added', async (t) => {
  const { clock, broker } = await memoryBroker(t);
  const tx = broker.transactions;
  await broker.createTopic('default', 't', { partitions: 2 });
  const id = await begin(broker, 'tx-check');
  const append = (partition: number, transaction?: { scope: string; transactionalId: string | null }, over: Partial<TxnIdentity> = {}) =>
    broker.append({ topic: 't' }, partition, batch(clock, ['x'], { ...id, ...over, baseSequence: 0, flags: BatchFlags.transactional }), transaction === undefined ? {} : { transaction });
  await assert.rejects(append(0, id), code('invalid_txn_state'), 'the partition was not added');
  await tx.addPartitions(id, [{ topic: { topic: 't' }, partition: 0 }]);
  await assert.rejects(append(0), code('invalid_txn_state'), 'no transaction named');
  await assert.rejects(append(0, { scope: 'kafka', transactionalId: null }), code('invalid_txn_state'), 'no transactional id');
  await assert.rejects(append(0, { scope: 'kafka', transactionalId: 'other' }), code('transactional_id_not_found'));
  await assert.rejects(append(0, { scope: 'cursus', transactionalId: id.transactionalId }), code('transactional_id_not_found'), 'scopes keep ids apart');
  await assert.rejects(append(0, id, { producerEpoch: id.producerEpoch + 1 }), code('invalid_producer_epoch'), 'checked before the producer state');
  await assert.rejects(append(1, id), code('invalid_txn_state'), 'partition 1 was not added');
  assert.equal(broker.partition({ topic: 't' }, 0).stats().nextOffset, 0, 'nothing refused was appended');
  assert.equal((await append(0, id)).baseOffset, 0);
  assert.deepEqual(tx.openTransactions({ topic: 't' }, 0), [{ producerId: id.producerId, firstOffset: 0 }]);
});
