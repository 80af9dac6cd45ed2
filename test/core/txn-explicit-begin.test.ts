// The transaction coordinator as a protocol that opens transactions explicitly uses it (Cursus
// BEGIN_TXN): beginTransaction, one transaction per epoch, joins refused outside an open
// transaction, the outcome of the last completed transaction kept across a restart, and the
// producer state's last sequence per partition.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Broker, type BrokerOptions } from '../../src/core/broker.js';
import { ManualClock } from '../../src/base/clock.js';
import { isQuartetError, type CoreErrorCode } from '../../src/base/errors.js';
import { ManualScheduler } from '../../src/core/scheduler.js';
import { partitionKey } from '../../src/core/producer-state.js';
import { TxnState, type TxnIdentity } from '../../src/core/transactions.js';
import { BatchFlags, encodeNeutralBatch } from '../../src/log/index.js';
import { tempDir, testScryptCost } from './helpers.js';

function code(expected: CoreErrorCode) {
  return (err: unknown) => isQuartetError(err) && err.code === expected;
}

function options(dataDir: string, clock: ManualClock, extra: Partial<BrokerOptions> = {}): BrokerOptions {
  return { dataDir, clock, scheduler: new ManualScheduler(clock), rootUser: { username: 'root', password: 'pw' }, maintenanceIntervalMs: 0, scryptCost: testScryptCost, ...extra };
}

async function init(broker: Broker, transactionalId: string): Promise<TxnIdentity> {
  const { producerId, epoch } = await broker.transactions.initProducerId({ scope: 'test', transactionalId, transactionTimeoutMs: 60_000 });
  return { scope: 'test', transactionalId, producerId, producerEpoch: epoch };
}

function txnBatch(id: TxnIdentity, baseSequence: number, value: string) {
  return encodeNeutralBatch([{ value }], { timestamp: 1000, producerId: id.producerId, producerEpoch: id.producerEpoch, baseSequence, flags: BatchFlags.transactional });
}

test('beginTransaction opens an empty transaction; with oncePerEpoch a completed epoch may not open another', async (t) => {
  const clock = new ManualClock();
  const broker = await Broker.open(options(tempDir(t), clock, { memory: true }));
  t.after(() => broker.close());
  const tx = broker.transactions;
  await broker.createTopic('default', 't', { partitions: 1 });
  const id = await init(broker, 'explicit');
  await assert.rejects(tx.addPartitions(id, [{ topic: { topic: 't' }, partition: 0 }], { ongoingOnly: true }), code('invalid_txn_state'), 'nothing is open yet');
  await assert.rejects(tx.addOffsets(id, 'g', { ongoingOnly: true }), code('invalid_txn_state'));
  await tx.beginTransaction(id, { oncePerEpoch: true });
  assert.equal(tx.describe('test', 'explicit')?.state, TxnState.Ongoing);
  await tx.beginTransaction(id, { oncePerEpoch: true }); // a retry changes nothing
  await tx.addPartitions(id, [{ topic: { topic: 't' }, partition: 0 }], { ongoingOnly: true });
  assert.deepEqual(await tx.endTxn(id, true), { state: TxnState.CompleteCommit });
  await assert.rejects(tx.beginTransaction(id, { oncePerEpoch: true }), code('invalid_txn_state'));
  await tx.beginTransaction(id); // Kafka's rule: the same epoch may go on
  assert.deepEqual(await tx.endTxn(id, false), { state: TxnState.CompleteAbort });
});

test('an empty transaction opened explicitly times out like any other', async (t) => {
  const clock = new ManualClock();
  const scheduler = new ManualScheduler(clock);
  const broker = await Broker.open(options(tempDir(t), clock, { memory: true, scheduler }));
  t.after(() => broker.close());
  const { producerId, epoch } = await broker.transactions.initProducerId({ scope: 'test', transactionalId: 'slow', transactionTimeoutMs: 1_000 });
  const id = { scope: 'test', transactionalId: 'slow', producerId, producerEpoch: epoch };
  await broker.transactions.beginTransaction(id);
  scheduler.advance(1_001);
  await broker.transactions.settled();
  const after = broker.transactions.describe('test', 'slow');
  assert.equal(after?.state, TxnState.CompleteAbort);
  assert.ok(after!.producerEpoch > epoch, 'the timed-out producer is fenced');
});

test('the outcome of the last completed transaction (partitions, staged offsets) survives a restart', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  let broker = await Broker.open(options(dir, clock));
  const topic = await broker.createTopic('default', 'out', { partitions: 2 });
  const id = await init(broker, 'summary');
  const tx = broker.transactions;
  await tx.beginTransaction(id);
  await tx.addPartitions(id, [{ topic, partition: 0 }, { topic, partition: 1 }]);
  await broker.append(topic, 0, txnBatch(id, 0, 'a'), { transaction: id });
  await broker.append(topic, 0, txnBatch(id, 1, 'b'), { transaction: id });
  await tx.addOffsets(id, 'g');
  await tx.txnOffsetCommit(id, 'g', [{ topicInternalId: topic.internalId, partition: 0, offset: 5 }, { topicInternalId: topic.internalId, partition: 1, offset: 7 }]);
  const open = tx.describe('test', 'summary')!;
  assert.deepEqual([open.partitions.length, open.stagedOffsets, open.outcome], [2, 2, null]);
  assert.deepEqual(broker.producers.lastSequence(partitionKey(topic.internalId, 0), id.producerId), { epoch: id.producerEpoch, sequence: 1 });
  assert.equal(broker.producers.lastSequence(partitionKey(topic.internalId, 1), id.producerId), null);
  await tx.endTxn(id, true);
  const done = tx.describe('test', 'summary')!;
  assert.deepEqual([done.partitions.length, done.stagedOffsets], [0, 0]);
  assert.deepEqual(done.outcome, { partitions: [{ topicInternalId: topic.internalId, partition: 0 }, { topicInternalId: topic.internalId, partition: 1 }], offsets: 2 });
  await broker.close();

  broker = await Broker.open(options(dir, clock));
  const again = broker.transactions.describe('test', 'summary')!;
  assert.equal(again.state, TxnState.CompleteCommit);
  assert.deepEqual(again.outcome, done.outcome);
  assert.deepEqual(broker.producers.lastSequence(partitionKey(topic.internalId, 0), id.producerId), { epoch: id.producerEpoch, sequence: 1 }, 'rebuilt from the log');
  await broker.close();
});
