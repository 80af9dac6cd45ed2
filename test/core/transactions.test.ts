import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Broker, type BrokerOptions } from '../../src/core/broker.js';
import { ManualClock } from '../../src/base/clock.js';
import { isQuartetError, type CoreErrorCode } from '../../src/base/errors.js';
import { silentLogger } from '../../src/base/logger.js';
import { SqliteMetadataStore, type MetadataStore } from '../../src/core/metadata-store.js';
import { ManualScheduler } from '../../src/core/scheduler.js';
import type { Topic } from '../../src/core/catalog.js';
import { TxnState, type TxnIdentity } from '../../src/core/transactions.js';
import { TxnIndex, encodeNeutralMarker, neutralMarkerKind, visibleCommitted } from '../../src/core/txn-index.js';
import { BatchFlags, BatchFormat, decodeNeutralBatch, encodeNeutralBatch, type StoredBatch } from '../../src/log/index.js';
import { FaultyFileSystem } from '../../src/log/fs.js';
import { HeldFileSystem, holdPurgeStart, memoryStore, tempDir, testScryptCost } from './helpers.js';

function code(expected: CoreErrorCode) {
  return (err: unknown) => isQuartetError(err) && err.code === expected;
}

interface Harness {
  clock: ManualClock;
  scheduler: ManualScheduler;
}

function harness(): Harness {
  const clock = new ManualClock();
  return { clock, scheduler: new ManualScheduler(clock) };
}

function options(dataDir: string, h: Harness, extra: Partial<BrokerOptions> = {}): BrokerOptions {
  return { dataDir, clock: h.clock, scheduler: h.scheduler, rootUser: { username: 'root', password: 'pw' }, maintenanceIntervalMs: 0, scryptCost: testScryptCost, ...extra };
}

/** A broker on in-memory logs, closed after the test, with the harness and its transactions. */
async function inMemoryBroker(t: { after(fn: () => Promise<void> | void): void }): Promise<{ h: Harness; broker: Broker; tx: Broker['transactions'] }> {
  const h = harness();
  const broker = await Broker.open(options(tempDir(t), h, { memory: true }));
  t.after(() => broker.close());
  return { h, broker, tx: broker.transactions };
}

function plain(clock: ManualClock, values: string[]) {
  return encodeNeutralBatch(values.map((value) => ({ value })), { timestamp: clock.now() });
}

function txnBatch(clock: ManualClock, id: TxnIdentity, baseSequence: number, values: string[]) {
  return encodeNeutralBatch(values.map((value) => ({ value })), {
    timestamp: clock.now(),
    producerId: id.producerId,
    producerEpoch: id.producerEpoch,
    baseSequence,
    flags: BatchFlags.transactional,
  });
}

function valuesOf(batches: StoredBatch[]): string[] {
  return batches.flatMap((b) => decodeNeutralBatch(b).map((r) => r.value?.toString() ?? ''));
}

async function readAll(broker: Broker, topic: string, partition: number): Promise<StoredBatch[]> {
  return broker.read({ topic }, partition, 0, { maxBytes: 1 << 20 });
}

async function begin(broker: Broker, transactionalId: string, timeoutMs = 60_000): Promise<TxnIdentity> {
  const { producerId, epoch } = await broker.transactions.initProducerId({ scope: 'kafka', transactionalId, transactionTimeoutMs: timeoutMs });
  return { scope: 'kafka', transactionalId, producerId, producerEpoch: epoch };
}

/** Yields to the event loop until `done()` holds; fails after 5 s. */
async function until(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!done()) {
    assert.ok(Date.now() < deadline, what);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function hw(broker: Broker, topic: string, partition: number): number {
  return broker.partition({ topic }, partition).stats().highWatermark;
}

/** Two one-partition topics, and a transaction holding partition 0 of both, a record in each, and group `g`. */
async function transactionOverTwo(broker: Broker, h: Harness, transactionalId: string, names: readonly [string, string]): Promise<{ id: TxnIdentity; first: Topic; second: Topic }> {
  const first = await broker.createTopic('default', names[0], { partitions: 1 });
  const second = await broker.createTopic('default', names[1], { partitions: 1 });
  const id = await begin(broker, transactionalId);
  await broker.transactions.addPartitions(id, [
    { topic: first, partition: 0 },
    { topic: second, partition: 0 },
  ]);
  await broker.append(first, 0, txnBatch(h.clock, id, 0, [names[0]]), { transaction: id });
  await broker.append(second, 0, txnBatch(h.clock, id, 0, [names[1]]), { transaction: id });
  await broker.transactions.addOffsets(id, 'g');
  return { id, first, second };
}

test('commit: markers in every partition, offsets committed only at commit, LSO follows', async (t) => {
  const { h, broker, tx } = await inMemoryBroker(t);
  await broker.createTopic('default', 'out', { partitions: 2 });
  const input = await broker.createTopic('default', 'in', { partitions: 1 });
  await broker.append({ topic: 'out' }, 0, plain(h.clock, ['before']));

  const id = await begin(broker, 'tx-1');
  assert.equal(id.producerEpoch, 0);
  assert.equal(tx.describe('kafka', 'tx-1')?.state, TxnState.Empty);
  assert.throws(() => tx.checkProduce(id, { topic: 'out' }, 0), code('invalid_txn_state'), 'not added yet');
  await tx.addPartitions(id, [
    { topic: { topic: 'out' }, partition: 0 },
    { topic: { topic: 'out' }, partition: 1 },
  ]);
  assert.equal(tx.describe('kafka', 'tx-1')?.state, TxnState.Ongoing);
  tx.checkProduce(id, { topic: 'out' }, 0);
  assert.throws(() => tx.checkProduce({ ...id, producerEpoch: 1 }, { topic: 'out' }, 0), code('invalid_producer_epoch'));
  assert.throws(() => tx.checkProduce({ ...id, producerId: 99 }, { topic: 'out' }, 0), code('transactional_id_not_found'));
  await broker.append({ topic: 'out' }, 0, txnBatch(h.clock, id, 0, ['a', 'b']), { transaction: id });
  await broker.append({ topic: 'out' }, 1, txnBatch(h.clock, id, 0, ['c']), { transaction: id });
  await broker.append({ topic: 'out' }, 0, plain(h.clock, ['after']));
  assert.equal(tx.lastStableOffset({ topic: 'out' }, 0), 1, 'LSO stops at the open transaction');
  assert.equal(hw(broker, 'out', 0), 4);
  assert.deepEqual(tx.openTransactions({ topic: 'out' }, 0), [{ producerId: id.producerId, firstOffset: 1 }]);
  const uncommitted = await tx.readCommitted({ topic: 'out' }, 0, 0, { maxBytes: 1 << 20 });
  assert.deepEqual(valuesOf(uncommitted.batches), ['before']);

  await tx.addOffsets(id, 'g1');
  await tx.txnOffsetCommit(id, 'g1', [{ topicInternalId: input.internalId, partition: 0, offset: 5, metadata: 'm' }]);
  await tx.txnOffsetCommit(id, 'g1', [{ topicInternalId: input.internalId, partition: 0, offset: 7 }]);
  assert.equal(await broker.offsets.fetch('kafka', 'g1', input.internalId, 0), null, 'pending offsets are invisible');

  assert.deepEqual(await tx.endTxn(id, true), { state: TxnState.CompleteCommit });
  for (const partition of [0, 1]) {
    const last = (await readAll(broker, 'out', partition)).at(-1)!;
    assert.equal(last.flags, BatchFlags.control | BatchFlags.transactional);
    assert.equal(last.producerId, id.producerId);
    assert.equal(neutralMarkerKind(last), 'commit');
    assert.equal(tx.lastStableOffset({ topic: 'out' }, partition), hw(broker, 'out', partition));
    assert.deepEqual(tx.abortedTransactions({ topic: 'out' }, partition, 0, 100), []);
  }
  assert.equal((await broker.offsets.fetch('kafka', 'g1', input.internalId, 0))?.offset, 7);
  const committed = await tx.readCommitted({ topic: 'out' }, 0, 0, { maxBytes: 1 << 20 });
  assert.deepEqual(valuesOf(committed.batches), ['before', 'a', 'b', 'after']);
  assert.equal(committed.nextOffset, 5);

  // A retried commit succeeds; an abort of the committed transaction does not.
  assert.deepEqual(await tx.endTxn(id, true), { state: TxnState.CompleteCommit });
  await assert.rejects(tx.endTxn(id, false), code('invalid_txn_state'));
  // The next transaction of the same producer starts from CompleteCommit.
  await tx.addPartitions(id, [{ topic: { topic: 'out' }, partition: 1 }]);
  assert.deepEqual(tx.describe('kafka', 'tx-1')?.partitions, [{ topicInternalId: broker.catalog.requireTopic({ topic: 'out' }).internalId, partition: 1 }]);
  assert.deepEqual(tx.describe('kafka', 'tx-1')?.groups, []);
});

test('abort: markers, aborted index, offsets dropped, read_committed filtering; invalid states', async (t) => {
  const { h, broker, tx } = await inMemoryBroker(t);
  const topic = await broker.createTopic('default', 'out', { partitions: 1 });
  const id = await begin(broker, 'tx-a');
  await assert.rejects(tx.endTxn(id, true), code('invalid_txn_state'), 'nothing to end in Empty');
  await assert.rejects(tx.txnOffsetCommit(id, 'g', [{ topicInternalId: topic.internalId, partition: 0, offset: 1 }]), code('invalid_txn_state'));

  await broker.append(topic, 0, plain(h.clock, ['x']));
  await tx.addPartitions(id, [{ topic, partition: 0 }]);
  await tx.addOffsets(id, 'g');
  await tx.txnOffsetCommit(id, 'g', [{ topicInternalId: topic.internalId, partition: 0, offset: 3 }]);
  await assert.rejects(tx.txnOffsetCommit(id, 'other', []), code('invalid_txn_state'), 'group not added');
  await broker.append(topic, 0, txnBatch(h.clock, id, 0, ['t1', 't2']), { transaction: id });
  await broker.append(topic, 0, plain(h.clock, ['y']));
  await broker.append(topic, 0, txnBatch(h.clock, id, 2, ['t3']), { transaction: id });
  assert.deepEqual(await tx.endTxn(id, false), { state: TxnState.CompleteAbort });
  await broker.append(topic, 0, plain(h.clock, ['z']));

  const batches = await readAll(broker, 'out', 0);
  const marker = batches.find((b) => (b.flags & BatchFlags.control) !== 0)!;
  assert.equal(neutralMarkerKind(marker), 'abort');
  assert.equal(marker.baseOffset, 5);
  const aborted = tx.abortedTransactions(topic, 0, 0, 100);
  assert.deepEqual(aborted, [{ producerId: id.producerId, firstOffset: 1, lastOffset: 5 }]);
  assert.equal(tx.lastStableOffset(topic, 0), 7);
  assert.equal(await broker.offsets.fetch('kafka', 'g', topic.internalId, 0), null, 'aborted offsets are never committed');
  assert.deepEqual(valuesOf(visibleCommitted(batches, aborted)), ['x', 'y', 'z']);
  assert.deepEqual(valuesOf((await tx.readCommitted(topic, 0, 0, { maxBytes: 1 << 20 })).batches), ['x', 'y', 'z']);
  // Kafka clients filter themselves: every batch is there for read_uncommitted.
  assert.equal(batches.length, 6);
  await assert.rejects(tx.endTxn(id, true), code('invalid_txn_state'));
  assert.deepEqual(await tx.endTxn(id, false), { state: TxnState.CompleteAbort }, 'retried abort');
});

test('fencing: a newer InitProducerId aborts the open transaction and fences the old epoch', async (t) => {
  const { h, broker, tx } = await inMemoryBroker(t);
  const topic = await broker.createTopic('default', 'out', { partitions: 1 });
  const old = await begin(broker, 'tx-f');
  await tx.addPartitions(old, [{ topic, partition: 0 }]);
  await broker.append(topic, 0, txnBatch(h.clock, old, 0, ['zombie']), { transaction: old });

  const next = await begin(broker, 'tx-f');
  assert.equal(next.producerId, old.producerId);
  assert.equal(next.producerEpoch, old.producerEpoch + 1);
  assert.equal(tx.describe('kafka', 'tx-f')?.state, TxnState.Empty);
  const marker = (await readAll(broker, 'out', 0)).at(-1)!;
  assert.equal(neutralMarkerKind(marker), 'abort');
  assert.equal(marker.producerEpoch, next.producerEpoch, 'the abort marker carries the new epoch');
  assert.deepEqual(tx.abortedTransactions(topic, 0, 0, 10), [{ producerId: old.producerId, firstOffset: 0, lastOffset: 1 }]);
  assert.equal(tx.lastStableOffset(topic, 0), 2);

  await assert.rejects(tx.addPartitions(old, [{ topic, partition: 0 }]), code('producer_fenced'));
  await assert.rejects(tx.endTxn(old, true), code('producer_fenced'));
  await assert.rejects(broker.append(topic, 0, txnBatch(h.clock, old, 1, ['late']), { transaction: old }), code('producer_fenced'));
  await assert.rejects(tx.endTxn({ ...next, producerId: next.producerId + 1 }, true), code('transactional_id_not_found'));
  await assert.rejects(tx.endTxn({ ...next, transactionalId: 'nope' }, true), code('transactional_id_not_found'));
  await assert.rejects(tx.endTxn({ ...next, scope: 'cursus' }, true), code('transactional_id_not_found'), 'scopes keep ids apart');
  await assert.rejects(tx.endTxn({ ...next, producerEpoch: next.producerEpoch + 1 }, true), code('invalid_producer_epoch'));

  // KIP-360: bump with the expected id/epoch; a retry of the same bump gets the same answer.
  const bumped = await tx.initProducerId({ scope: 'kafka', transactionalId: 'tx-f', transactionTimeoutMs: 1000, expected: { producerId: next.producerId, epoch: next.producerEpoch } });
  assert.deepEqual(bumped, { producerId: next.producerId, epoch: next.producerEpoch + 1 });
  const retried = await tx.initProducerId({ scope: 'kafka', transactionalId: 'tx-f', transactionTimeoutMs: 1000, expected: { producerId: next.producerId, epoch: next.producerEpoch } });
  assert.deepEqual(retried, bumped);
  await assert.rejects(tx.initProducerId({ scope: 'kafka', transactionalId: 'tx-f', transactionTimeoutMs: 1000, expected: { producerId: old.producerId, epoch: old.producerEpoch } }), code('producer_fenced'));
  await assert.rejects(tx.initProducerId({ scope: 'kafka', transactionalId: 'tx-f', transactionTimeoutMs: 1000, expected: { producerId: 999, epoch: 0 } }), code('producer_fenced'));
  // A fresh producer of the new epoch writes from sequence 0.
  const current = { ...next, producerEpoch: bumped.epoch };
  await tx.addPartitions(current, [{ topic, partition: 0 }]);
  await broker.append(topic, 0, txnBatch(h.clock, current, 0, ['fresh']), { transaction: current });
  assert.deepEqual(await tx.endTxn(current, true), { state: TxnState.CompleteCommit });
  // Non-transactional producers get ids from the producer state; bad arguments are refused.
  const idem = await tx.initProducerId({ scope: 'kafka', transactionalId: null, transactionTimeoutMs: 0 });
  assert.equal(idem.epoch, 0);
  assert.notEqual(idem.producerId, next.producerId);
  await assert.rejects(tx.initProducerId({ scope: 'kafka', transactionalId: '', transactionTimeoutMs: 1000 }), code('invalid_request'));
  await assert.rejects(tx.initProducerId({ scope: 'kafka', transactionalId: 'x', transactionTimeoutMs: 0 }), code('invalid_request'));
  await assert.rejects(tx.initProducerId({ scope: 'kafka', transactionalId: 'x', transactionTimeoutMs: tx.transactionTimeoutMsMax + 1 }), code('invalid_request'));
});

test('timeout: an Ongoing transaction past its timeout is aborted and its producer fenced', async (t) => {
  const { h, broker, tx } = await inMemoryBroker(t);
  const topic = await broker.createTopic('default', 'out', { partitions: 1 });
  const id = await begin(broker, 'tx-t', 10_000);
  await tx.addPartitions(id, [{ topic, partition: 0 }]);
  await broker.append(topic, 0, txnBatch(h.clock, id, 0, ['slow']), { transaction: id });
  h.scheduler.advance(9_999);
  await tx.settled();
  assert.equal(tx.describe('kafka', 'tx-t')?.state, TxnState.Ongoing);
  assert.equal(tx.lastStableOffset(topic, 0), 0);
  h.scheduler.advance(1);
  await tx.settled();
  const described = tx.describe('kafka', 'tx-t')!;
  assert.equal(described.state, TxnState.CompleteAbort);
  assert.equal(described.producerEpoch, id.producerEpoch + 1, 'epoch bumped: the zombie is fenced');
  assert.equal(tx.lastStableOffset(topic, 0), 2);
  assert.deepEqual(tx.abortedTransactions(topic, 0, 0, 2), [{ producerId: id.producerId, firstOffset: 0, lastOffset: 1 }]);
  await assert.rejects(tx.endTxn(id, true), code('producer_fenced'));
  await assert.rejects(broker.append(topic, 0, txnBatch(h.clock, id, 1, ['zombie']), { transaction: id }), code('producer_fenced'));
  // An ended transaction's timer is gone: no abort fires later.
  const again = await begin(broker, 'tx-t', 10_000);
  await tx.addPartitions(again, [{ topic, partition: 0 }]);
  assert.deepEqual(await tx.endTxn(again, true), { state: TxnState.CompleteCommit });
  h.scheduler.advance(60_000);
  await tx.settled();
  assert.equal(tx.describe('kafka', 'tx-t')?.state, TxnState.CompleteCommit);
  assert.equal(h.scheduler.pendingCount, 0);
});

test('LSO with two open transactions and aborted-index ranges', async (t) => {
  const { h, broker, tx } = await inMemoryBroker(t);
  const topic = await broker.createTopic('default', 'out', { partitions: 1 });
  const a = await begin(broker, 'A');
  const b = await begin(broker, 'B');
  await tx.addPartitions(a, [{ topic, partition: 0 }]);
  await tx.addPartitions(b, [{ topic, partition: 0 }]);
  await broker.append(topic, 0, txnBatch(h.clock, a, 0, ['a0']), { transaction: a }); // 0
  await broker.append(topic, 0, txnBatch(h.clock, b, 0, ['b0']), { transaction: b }); // 1
  await broker.append(topic, 0, txnBatch(h.clock, a, 1, ['a1']), { transaction: a }); // 2
  assert.equal(tx.lastStableOffset(topic, 0), 0);
  await tx.endTxn(a, false); // abort marker at 3
  assert.equal(tx.lastStableOffset(topic, 0), 1, 'B still open');
  await broker.append(topic, 0, plain(h.clock, ['p'])); // 4
  await tx.endTxn(b, false); // abort marker at 5
  assert.equal(tx.lastStableOffset(topic, 0), 6);
  const aAborted = { producerId: a.producerId, firstOffset: 0, lastOffset: 3 };
  const bAborted = { producerId: b.producerId, firstOffset: 1, lastOffset: 5 };
  assert.deepEqual(tx.abortedTransactions(topic, 0, 0, 6), [aAborted, bAborted]);
  assert.deepEqual(tx.abortedTransactions(topic, 0, 4, 6), [bAborted], 'A ends before the range');
  assert.deepEqual(tx.abortedTransactions(topic, 0, 0, 1), [aAborted], 'B starts at the range end');
  assert.deepEqual(tx.abortedTransactions(topic, 0, 6, 10), []);
  assert.deepEqual(valuesOf((await tx.readCommitted(topic, 0, 0, { maxBytes: 1 << 20 })).batches), ['p']);
});

test('a failed marker write leaves PrepareCommit, answers concurrent_transactions, and is retried', async (t) => {
  const h = harness();
  let failing = true;
  const broker = await Broker.open(
    options(tempDir(t), h, {
      memory: true,
      transactions: {
        markerRetryBackoffMs: 500,
        markerEncoders: {
          kafka: (m) => {
            if (failing) throw new Error('marker encoder down');
            return encodeNeutralMarker(m);
          },
        },
      },
    }),
  );
  t.after(() => broker.close());
  const tx = broker.transactions;
  const topic = await broker.createTopic('default', 'out', { partitions: 1 });
  const id = await begin(broker, 'tx-r');
  await tx.addPartitions(id, [{ topic, partition: 0 }]);
  await broker.append(topic, 0, txnBatch(h.clock, id, 0, ['v']), { transaction: id });
  assert.deepEqual(await tx.endTxn(id, true), { state: TxnState.PrepareCommit }, 'the decision is durable even though markers failed');
  await assert.rejects(tx.addPartitions(id, [{ topic, partition: 0 }]), code('concurrent_transactions'));
  await assert.rejects(tx.endTxn(id, true), code('concurrent_transactions'));
  await assert.rejects(tx.endTxn(id, false), code('invalid_txn_state'));
  assert.equal(tx.lastStableOffset(topic, 0), 0);
  failing = false;
  h.scheduler.advance(500);
  await tx.settled();
  assert.equal(tx.describe('kafka', 'tx-r')?.state, TxnState.CompleteCommit);
  assert.equal(tx.lastStableOffset(topic, 0), 2);
});

test('restart in PrepareCommit: open() writes the markers and commits the offsets', async (t) => {
  const dir = tempDir(t);
  const h = harness();
  const failingEncoders = {
    kafka: () => {
      throw new Error('crash before the markers');
    },
  };
  let broker = await Broker.open(options(dir, h, { transactions: { markerEncoders: failingEncoders } }));
  const topic = await broker.createTopic('default', 'out', { partitions: 2 });
  const id = await begin(broker, 'tx-p');
  await broker.transactions.addPartitions(id, [
    { topic, partition: 0 },
    { topic, partition: 1 },
  ]);
  await broker.transactions.addOffsets(id, 'g');
  await broker.transactions.txnOffsetCommit(id, 'g', [{ topicInternalId: topic.internalId, partition: 1, offset: 42 }]);
  await broker.append(topic, 0, txnBatch(h.clock, id, 0, ['v0']), { transaction: id });
  await broker.append(topic, 1, txnBatch(h.clock, id, 0, ['v1']), { transaction: id });
  assert.equal((await broker.transactions.endTxn(id, true)).state, TxnState.PrepareCommit);
  assert.equal(await broker.offsets.fetch('kafka', 'g', topic.internalId, 1), null);
  await broker.close();

  broker = await Broker.open(options(dir, h));
  const tx = broker.transactions;
  assert.equal(tx.describe('kafka', 'tx-p')?.state, TxnState.CompleteCommit);
  assert.equal(tx.coordinatorEpoch, 1, 'the coordinator epoch grows at every open');
  for (const partition of [0, 1]) {
    const batches = await readAll(broker, 'out', partition);
    assert.equal(neutralMarkerKind(batches.at(-1)!), 'commit');
    assert.equal(tx.lastStableOffset(topic, partition), 2);
  }
  assert.equal((await broker.offsets.fetch('kafka', 'g', topic.internalId, 1))?.offset, 42);
  // The producer keeps its epoch; the next transaction works.
  await tx.addPartitions(id, [{ topic, partition: 0 }]);
  assert.deepEqual(await tx.endTxn(id, false), { state: TxnState.CompleteAbort });
  await broker.close(); // not in t.after: the temp directory goes first there
});

test('reopen rebuilds the LSO and aborted index from the checkpoint and from the log', async (t) => {
  const dir = tempDir(t);
  const h = harness();
  let broker = await Broker.open(options(dir, h));
  const topic = await broker.createTopic('default', 'out', { partitions: 1, config: { 'segment.bytes': '1024' } });
  const aborted = await begin(broker, 'ab', 30_000);
  await broker.transactions.addPartitions(aborted, [{ topic, partition: 0 }]);
  for (let i = 0; i < 5; i++) await broker.append(topic, 0, txnBatch(h.clock, aborted, i, [`ab${i}`.repeat(40)]), { transaction: aborted });
  await broker.transactions.endTxn(aborted, false); // marker at 5
  const committed = await begin(broker, 'co');
  await broker.transactions.addPartitions(committed, [{ topic, partition: 0 }]);
  await broker.append(topic, 0, txnBatch(h.clock, committed, 0, ['co']), { transaction: committed }); // 6
  await broker.transactions.endTxn(committed, true); // 7
  await broker.append(topic, 0, plain(h.clock, ['plain'])); // 8
  const open = await begin(broker, 'op', 30_000);
  await broker.transactions.addPartitions(open, [{ topic, partition: 0 }]);
  await broker.append(topic, 0, txnBatch(h.clock, open, 0, ['open']), { transaction: open }); // 9
  const expectAborted = [{ producerId: aborted.producerId, firstOffset: 0, lastOffset: 5 }];
  assert.equal(broker.transactions.lastStableOffset(topic, 0), 9);
  assert.deepEqual(broker.transactions.abortedTransactions(topic, 0, 0, 10), expectAborted);
  await broker.close();

  // From the checkpoint written at close.
  broker = await Broker.open(options(dir, h));
  assert.equal(broker.transactions.lastStableOffset(topic, 0), 9);
  assert.deepEqual(broker.transactions.abortedTransactions(topic, 0, 0, 10), expectAborted);
  await broker.close();

  // With no checkpoint (a crash before the first one): a scan of the whole log.
  const store = SqliteMetadataStore.openInDataDir(dir);
  await store.deleteTxnCheckpoints([`${topic.internalId}:0`]);
  assert.deepEqual(await store.listTxnCheckpoints(), []);
  await store.close();
  broker = await Broker.open(options(dir, h));
  const tx = broker.transactions;
  assert.ok(broker.partition(topic, 0).stats().segmentCount > 1, 'the scan crosses segments');
  assert.equal(tx.lastStableOffset(topic, 0), 9);
  assert.deepEqual(tx.abortedTransactions(topic, 0, 0, 10), expectAborted);
  assert.deepEqual(valuesOf((await tx.readCommitted(topic, 0, 0, { maxBytes: 1 << 20 })).batches), ['co', 'plain']);

  // The open transaction's timeout was re-armed at open: it still aborts on time.
  assert.equal(tx.describe('kafka', 'op')?.state, TxnState.Ongoing);
  h.scheduler.advance(30_000);
  await tx.settled();
  assert.equal(tx.describe('kafka', 'op')?.state, TxnState.CompleteAbort);
  assert.equal(tx.lastStableOffset(topic, 0), 11);
  assert.deepEqual(tx.abortedTransactions(topic, 0, 9, 11), [{ producerId: open.producerId, firstOffset: 9, lastOffset: 10 }]);
  await broker.close();
});

test('expiry of idle transactional ids, and the metadata store round trip', async (t) => {
  const h = harness();
  const broker = await Broker.open(options(tempDir(t), h, { memory: true, transactions: { transactionalIdExpirationMs: 1000 } }));
  t.after(() => broker.close());
  const id = await begin(broker, 'old');
  h.clock.advance(1000);
  await broker.runMaintenance();
  assert.equal(broker.transactions.describe('kafka', 'old'), null);
  await assert.rejects(broker.transactions.endTxn(id, true), code('transactional_id_not_found'));

  const store = memoryStore();
  t.after(() => store.close());
  await store.putTransaction({ scope: 'kafka', transactionalId: 't', state: { a: 1 }, updatedAt: 5 });
  await store.putTransaction({ scope: 'kafka', transactionalId: 't', state: { a: 2 }, updatedAt: 6 });
  assert.deepEqual(await store.listTransactions(), [{ scope: 'kafka', transactionalId: 't', state: { a: 2 }, updatedAt: 6 }]);
  assert.equal(await store.deleteTransaction('kafka', 't'), true);
  assert.equal(await store.deleteTransaction('kafka', 't'), false);
  await store.putTxnCheckpoints([{ partitionKey: '1:0', nextOffset: 3, state: { open: [] }, takenAt: 1 }]);
  assert.deepEqual(await store.listTxnCheckpoints(), [{ partitionKey: '1:0', nextOffset: 3, state: { open: [] }, takenAt: 1 }]);
});

test('neutral markers round-trip; visibleCommitted drops controls and aborted ranges only', () => {
  const request = encodeNeutralMarker({ producerId: 7, producerEpoch: 2, commit: false, coordinatorEpoch: 3, timestamp: 1 });
  const stored = (baseOffset: number, flags: number, producerId: number, payload = request.payload): StoredBatch => ({
    format: BatchFormat.neutral,
    flags,
    baseOffset,
    lastOffset: baseOffset,
    recordCount: 1,
    firstTimestamp: 1,
    maxTimestamp: 1,
    producerId,
    producerEpoch: 2,
    baseSequence: -1,
    payload,
  });
  assert.equal(request.flags, BatchFlags.control | BatchFlags.transactional);
  assert.equal(neutralMarkerKind(stored(0, request.flags, 7)), 'abort');
  const commit = encodeNeutralMarker({ producerId: 7, producerEpoch: 2, commit: true, coordinatorEpoch: 3, timestamp: 1 });
  assert.equal(neutralMarkerKind(stored(0, commit.flags, 7, commit.payload)), 'commit');
  assert.equal(neutralMarkerKind(stored(0, 0, 7)), null, 'not a control batch');
  assert.equal(neutralMarkerKind({ ...stored(0, request.flags, 7), format: BatchFormat.kafka }), null, 'another format');
  assert.equal(neutralMarkerKind(stored(0, request.flags, 7, Buffer.from([9]))), null, 'garbage');

  const data = plain(new ManualClock(), ['x']).payload;
  const batches = [stored(0, BatchFlags.transactional, 7, data), stored(1, BatchFlags.transactional, 8, data), stored(2, 0, -1, data), stored(3, request.flags, 7), stored(4, BatchFlags.transactional, 7, data)];
  const visible = visibleCommitted(batches, [{ producerId: 7, firstOffset: 0, lastOffset: 3 }]);
  assert.deepEqual(
    visible.map((b) => b.baseOffset),
    [1, 2, 4],
  );
});

test("under fsyncPolicy 'interval' Complete* is recorded only once the markers are flushed", async (t) => {
  const dir = tempDir(t);
  const h = harness();
  const fs = new FaultyFileSystem();
  const broker = await Broker.open(options(dir, h, { logFs: fs, directWrites: null, transactions: { markerRetryBackoffMs: 500 } }));
  // flush.ms at its maximum: only an explicit flush fsyncs during the test.
  const topic = await broker.createTopic('default', 'out', { partitions: 1, config: { 'flush.ms': String(2 ** 31 - 1) } });
  const tx = broker.transactions;
  const id = await begin(broker, 'tx-f');
  await tx.addPartitions(id, [{ topic, partition: 0 }]);
  await broker.append(topic, 0, txnBatch(h.clock, id, 0, ['a']), { transaction: id });
  let syncs = fs.fsyncCalls;
  assert.deepEqual(await tx.endTxn(id, true), { state: TxnState.CompleteCommit });
  assert.ok(fs.fsyncCalls > syncs, 'the marker partition was flushed before CompleteCommit');

  // The flush fails: the marker is not known durable, so CompleteCommit must not be recorded.
  await tx.addPartitions(id, [{ topic, partition: 0 }]);
  await broker.append(topic, 0, txnBatch(h.clock, id, 1, ['b']), { transaction: id });
  syncs = fs.fsyncCalls;
  fs.failNextFsync();
  assert.deepEqual(await tx.endTxn(id, true), { state: TxnState.PrepareCommit });
  assert.ok(fs.fsyncCalls > syncs);
  await broker.close().catch(() => undefined); // the log went read-only after the fsync error

  // A restart finishes the transaction from PrepareCommit.
  const reopened = await Broker.open(options(dir, h));
  assert.equal(reopened.transactions.describe('kafka', 'tx-f')?.state, TxnState.CompleteCommit);
  assert.equal(reopened.transactions.lastStableOffset(topic, 0), hw(reopened, 'out', 0));
  assert.deepEqual(valuesOf((await reopened.transactions.readCommitted(topic, 0, 0, { maxBytes: 1 << 20 })).batches), ['a', 'b']);
  await reopened.close();
});

test('open() rewrites the marker a Complete* transaction lost, at the same epoch only', async (t) => {
  const dir = tempDir(t);
  const h = harness();
  let broker = await Broker.open(options(dir, h));
  const topic = await broker.createTopic('default', 'out', { partitions: 3 });
  const ids: TxnIdentity[] = [];
  for (const [i, name] of ['tx-c', 'tx-a', 'tx-old'].entries()) {
    const id = await begin(broker, name);
    await broker.transactions.addPartitions(id, [{ topic, partition: i }]);
    await broker.append(topic, i, txnBatch(h.clock, id, 0, [name]), { transaction: id });
    ids.push(id);
  }
  await broker.close();
  // As if the coordinator had recorded Complete* and a power loss had lost the markers
  // (possible before markers were flushed first). 'tx-old' is Complete* at a later epoch: the
  // open transaction is not the one it completed, so it is left alone.
  const store = SqliteMetadataStore.openInDataDir(dir);
  const completed = { 'tx-c': ['CompleteCommit', 0], 'tx-a': ['CompleteAbort', 0], 'tx-old': ['CompleteCommit', 1] } as const;
  for (const record of await store.listTransactions()) {
    const [state, bump] = completed[record.transactionalId as keyof typeof completed];
    const old = record.state as { producerEpoch: number };
    await store.putTransaction({ ...record, state: { ...old, state, producerEpoch: old.producerEpoch + bump, partitions: [], groups: [], startedAt: -1 } });
  }
  await store.close();

  broker = await Broker.open(options(dir, h));
  const tx = broker.transactions;
  const batches = await readAll(broker, 'out', 0);
  assert.equal(neutralMarkerKind(batches.at(-1)!), 'commit');
  assert.equal(tx.lastStableOffset(topic, 0), 2);
  assert.deepEqual(valuesOf((await tx.readCommitted(topic, 0, 0, { maxBytes: 1 << 20 })).batches), ['tx-c']);
  assert.equal(neutralMarkerKind((await readAll(broker, 'out', 1)).at(-1)!), 'abort');
  assert.equal(tx.lastStableOffset(topic, 1), 2);
  assert.deepEqual(tx.abortedTransactions(topic, 1, 0, 2), [{ producerId: ids[1]!.producerId, firstOffset: 0, lastOffset: 1 }]);
  assert.equal((await readAll(broker, 'out', 2)).length, 1, 'no marker for a transaction of another epoch');
  assert.equal(tx.lastStableOffset(topic, 2), 0);
  await broker.close();
});

test('the index checkpoint covers the high watermark; a failed transactional write leaves no open transaction behind', async (t) => {
  const dir = tempDir(t);
  const h = harness();
  const fs = new HeldFileSystem();
  const crashed = await Broker.open(options(dir, h, { logFs: fs, directWrites: null }));
  // Compaction (no sealed segment yet) does not wait for the held write, retention would.
  const topic = await crashed.createTopic('default', 'out', { partitions: 1, config: { 'cleanup.policy': 'compact' } });
  const id = await begin(crashed, 'tx-h');
  await crashed.transactions.addPartitions(id, [{ topic, partition: 0 }]);
  const write = fs.holdNextWrite();
  const failed = crashed.append(topic, 0, txnBatch(h.clock, id, 0, ['lost']), { transaction: id }).then(
    () => true,
    () => false,
  );
  await write.reached; // offset 0 assigned (and shown to the index), not written
  await crashed.runMaintenance(); // checkpoints the index now
  write.fail();
  assert.equal(await failed, false);
  assert.equal(crashed.transactions.lastStableOffset(topic, 0), 0);
  assert.equal((await crashed.append(topic, 0, plain(h.clock, ['other']))).baseOffset, 0, 'the offset is reused');
  assert.deepEqual(crashed.transactions.openTransactions(topic, 0), [], 'the failed batch opened nothing');
  assert.equal(crashed.transactions.lastStableOffset(topic, 0), 1);

  // The process dies (no close: no newer checkpoint); the next open must not find it open either.
  const broker = await Broker.open(options(dir, h));
  t.after(() => broker.close().catch(() => undefined));
  t.after(() => crashed.close().catch(() => undefined));
  assert.deepEqual(broker.transactions.openTransactions(topic, 0), []);
  assert.equal(broker.transactions.lastStableOffset(topic, 0), 1);
});

test('TxnIndex: checkpoints leave out what lies at or above the high watermark; undo of failed observations', () => {
  const index = new TxnIndex(neutralMarkerKind, silentLogger);
  const k = '1:0';
  index.observeData(k, 7, 0);
  assert.equal(index.observeData(k, 7, 1), null, 'already open: nothing to undo');
  const undoOpen8 = index.observeData(k, 8, 2)!;
  assert.deepEqual(index.checkpoints([{ key: k, nextOffset: 2 }], 1)[0]!.state, { open: [[7, 0]], aborted: [] }, 'opened at 2: not written yet');
  const undoAbort7 = index.observeMarker(k, 7, 3, 'abort')!;
  assert.deepEqual(index.checkpoints([{ key: k, nextOffset: 3 }], 1), [], 'a marker at or above it closed a transaction: no checkpoint this time');
  assert.deepEqual(index.checkpoints([{ key: k, nextOffset: 4 }], 1)[0]!.state, { open: [[8, 2]], aborted: [[7, 0, 3]] });
  // The writes at 2 and 3 fail (in either order): the index is as before them.
  undoAbort7();
  undoOpen8();
  assert.deepEqual(index.openTransactions(k), [{ producerId: 7, firstOffset: 0 }]);
  assert.deepEqual(index.abortedTransactions(k, 0, 10), []);
  // A marker failing together with a transaction opened after it: the closed one is open again.
  const undoCommit = index.observeMarker(k, 7, 4, 'commit')!;
  const undoReopen = index.observeData(k, 7, 5)!;
  undoCommit();
  undoReopen();
  assert.deepEqual(index.openTransactions(k), [{ producerId: 7, firstOffset: 0 }]);
});

test('InitProducerId: a failed metadata write fences nobody, and the retry goes through', async (t) => {
  const { h, broker, tx } = await inMemoryBroker(t);
  const topic = await broker.createTopic('default', 'out', { partitions: 1 });
  const store = (broker as unknown as { store: MetadataStore }).store;
  const put = store.putTransaction.bind(store);
  let failures = 0;
  store.putTransaction = (record) => (failures-- > 0 ? Promise.reject(new Error('disk full')) : put(record));

  // Re-init of an idle transactional id.
  const id = await begin(broker, 'tx-w');
  failures = 1;
  await assert.rejects(tx.initProducerId({ scope: 'kafka', transactionalId: 'tx-w', transactionTimeoutMs: 60_000 }), /disk full/);
  // Nothing changed: the current producer still works...
  await tx.addPartitions(id, [{ topic, partition: 0 }]);
  await broker.append(topic, 0, txnBatch(h.clock, id, 0, ['a']), { transaction: id });
  assert.deepEqual(await tx.endTxn(id, true), { state: TxnState.CompleteCommit });
  // ...and the retried InitProducerId bumps the epoch once.
  const bumped = await begin(broker, 'tx-w');
  assert.deepEqual([bumped.producerId, bumped.producerEpoch], [id.producerId, id.producerEpoch + 1]);

  // Re-init with an Ongoing transaction: the fencing abort's PrepareAbort write fails.
  await tx.addPartitions(bumped, [{ topic, partition: 0 }]);
  await broker.append(topic, 0, txnBatch(h.clock, bumped, 0, ['b']), { transaction: bumped });
  failures = 1;
  await assert.rejects(tx.initProducerId({ scope: 'kafka', transactionalId: 'tx-w', transactionTimeoutMs: 60_000 }), /disk full/);
  assert.equal(tx.describe('kafka', 'tx-w')?.state, TxnState.Ongoing);
  const again = await begin(broker, 'tx-w');
  assert.deepEqual([again.producerId, again.producerEpoch], [id.producerId, id.producerEpoch + 2]);
  assert.equal(tx.describe('kafka', 'tx-w')?.state, TxnState.Empty);
  assert.equal(neutralMarkerKind((await readAll(broker, 'out', 0)).at(-1)!), 'abort');
  assert.equal(tx.lastStableOffset(topic, 0), hw(broker, 'out', 0));
  await assert.rejects(broker.append(topic, 0, txnBatch(h.clock, bumped, 1, ['zombie']), { transaction: bumped }), code('producer_fenced'));
});

test('a purge, a partition removal or a topic deletion takes the partitions out of unfinished transactions: no marker there, no staged offset committed', async (t) => {
  const h = harness();
  const dataDir = tempDir(t);
  const broker = await Broker.open(options(dataDir, h));
  t.after(() => broker.close());
  const tx = broker.transactions;
  const kept = await broker.createTopic('default', 'kept', { partitions: 1 });
  const purged = await broker.createTopic('default', 'purged', { partitions: 2 });
  const deleted = await broker.createTopic('default', 'deleted', { partitions: 1 });
  for (const [topic, partition] of [['kept', 0], ['purged', 0], ['purged', 1], ['deleted', 0]] as const) {
    await broker.append({ topic }, partition, plain(h.clock, ['x', 'y', 'z']));
  }
  const id = await begin(broker, 'tx-drop');
  await tx.addPartitions(id, [
    { topic: { topic: 'kept' }, partition: 0 },
    { topic: { topic: 'purged' }, partition: 0 },
    { topic: { topic: 'purged' }, partition: 1 },
    { topic: { topic: 'deleted' }, partition: 0 },
  ]);
  for (const [topic, partition] of [['kept', 0], ['purged', 0], ['purged', 1], ['deleted', 0]] as const) {
    await broker.append({ topic }, partition, txnBatch(h.clock, id, 0, ['in-txn']), { transaction: id });
  }
  await tx.addOffsets(id, 'g');
  await tx.txnOffsetCommit(id, 'g', [
    { topicInternalId: kept.internalId, partition: 0, offset: 3 },
    { topicInternalId: purged.internalId, partition: 0, offset: 3 },
    { topicInternalId: purged.internalId, partition: 1, offset: 3 },
    { topicInternalId: deleted.internalId, partition: 0, offset: 3 },
  ]);

  await broker.purgeTopic({ topic: 'purged' });
  await broker.removePartitions({ topic: 'purged' }, 1);
  await broker.addPartitions({ topic: 'purged' }, 2);
  await broker.deleteTopic({ topic: 'deleted' });
  assert.deepEqual(tx.describe('kafka', 'tx-drop')?.partitions, [{ topicInternalId: kept.internalId, partition: 0 }]);
  // The produce path refuses the dropped partitions like ones never added.
  assert.throws(() => tx.checkProduce(id, { topic: 'purged' }, 0), code('invalid_txn_state'));
  // Stored so: the transaction is finished by a broker started again.
  await broker.close();
  const reopened = await Broker.open(options(dataDir, h));
  assert.deepEqual(reopened.transactions.describe('kafka', 'tx-drop')?.partitions, [{ topicInternalId: kept.internalId, partition: 0 }]);
  assert.deepEqual(await reopened.transactions.endTxn(id, true), { state: TxnState.CompleteCommit });

  assert.equal(neutralMarkerKind((await readAll(reopened, 'kept', 0)).at(-1)!), 'commit');
  for (const partition of [0, 1]) assert.equal(hw(reopened, 'purged', partition), 0, `purged partition ${partition}: no marker in the new log`);
  assert.equal((await reopened.offsets.fetch('kafka', 'g', kept.internalId, 0))?.offset, 3);
  for (const partition of [0, 1]) assert.equal(await reopened.offsets.fetch('kafka', 'g', purged.internalId, partition), null);
  assert.equal(await reopened.offsets.fetch('kafka', 'g', deleted.internalId, 0), null, 'nothing stored under the deleted topic');
  await reopened.close(); // not in t.after: the temp directory goes first there
});

test('a purge takes its partitions out of the stored transaction before it returns, even while the transaction is busy completing', async (t) => {
  const h = harness();
  const dataDir = tempDir(t);
  const fs = new HeldFileSystem();
  const broker = await Broker.open(options(dataDir, h, { logFs: fs, directWrites: null }));
  const tx = broker.transactions;
  const { id, first: kept, second: purged } = await transactionOverTwo(broker, h, 'tx-busy', ['kept', 'purged']);
  await tx.txnOffsetCommit(id, 'g', [
    { topicInternalId: kept.internalId, partition: 0, offset: 1 },
    { topicInternalId: purged.internalId, partition: 0, offset: 1 },
  ]);

  // The commit's marker in `kept` is held: the transaction's turn stays taken until it is written.
  const gate = fs.holdNextWrite();
  const ended = tx.endTxn(id, true);
  await gate.reached;
  await until(() => hw(broker, 'purged', 0) === 2, "the held write is not kept's marker: purged's was never written");
  await broker.purgeTopic(purged);

  // What a crash now would leave to a restart: the stored record, read as open() reads it.
  const store = SqliteMetadataStore.openInDataDir(dataDir);
  const record = (await store.listTransactions()).find((r) => r.transactionalId === 'tx-busy');
  await store.close();
  const state = record?.state as { state: string; partitions: Array<[number, number]>; groups: Array<[string, Array<{ topicInternalId: number }>]> };
  assert.equal(state.state, TxnState.PrepareCommit);
  assert.deepEqual(state.partitions, [[kept.internalId, 0]], 'the purged partition is out of the stored transaction');
  assert.deepEqual(state.groups.map(([g, commits]) => [g, commits.map((c) => c.topicInternalId)]), [['g', [kept.internalId]]], 'and so is its staged offset');

  gate.open();
  assert.deepEqual(await ended, { state: TxnState.CompleteCommit });
  assert.equal(hw(broker, 'purged', 0), 0, 'no marker in the new log');
  assert.equal((await broker.offsets.fetch('kafka', 'g', kept.internalId, 0))?.offset, 1);
  assert.equal(await broker.offsets.fetch('kafka', 'g', purged.internalId, 0), null);
  await broker.close(); // not in t.after: the temp directory goes first there
});

test('a partition added to a transaction while a purge empties it joins the new log and stays', async (t) => {
  const { h, broker, tx } = await inMemoryBroker(t);
  const purged = await broker.createTopic('default', 'purged', { partitions: 1 });
  await broker.append(purged, 0, plain(h.clock, ['a', 'b', 'c']));
  const id = await begin(broker, 'tx-add-in-purge');

  const { inPurge, release } = holdPurgeStart(broker);
  const purge = broker.purgeTopic(purged);
  await inPurge;
  let added = false;
  const adding = tx.addPartitions(id, [{ topic: purged, partition: 0 }]).then(() => (added = true));
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(added, false, 'the add waits for the new log');
  release();
  await purge;
  await adding;
  assert.deepEqual(tx.describe('kafka', 'tx-add-in-purge')?.partitions, [{ topicInternalId: purged.internalId, partition: 0 }]);
  await broker.append(purged, 0, txnBatch(h.clock, id, 0, ['in-txn']), { transaction: id });
  assert.deepEqual(await tx.endTxn(id, true), { state: TxnState.CompleteCommit });
  const batches = await readAll(broker, 'purged', 0);
  assert.deepEqual(valuesOf(batches.slice(0, 1)), ['in-txn'], 'the new log holds the transaction from offset 0');
  assert.equal(neutralMarkerKind(batches.at(-1)!), 'commit');
});

/** The broker's metadata store with putTransaction that fails `failures` times, or waits at `hold`. */
function patchedTransactionWrites(broker: Broker): { failures: number; hold: Promise<void> | null } {
  const store = (broker as unknown as { store: MetadataStore }).store;
  const put = store.putTransaction.bind(store);
  const control: { failures: number; hold: Promise<void> | null } = { failures: 0, hold: null };
  store.putTransaction = async (record) => {
    if (control.failures > 0) {
      control.failures--;
      throw new Error('disk full');
    }
    const hold = control.hold;
    control.hold = null;
    if (hold !== null) await hold;
    return put(record);
  };
  return control;
}

async function storedTransaction(dataDir: string, transactionalId: string): Promise<{ state: string; partitions: Array<[number, number]> } | undefined> {
  const store = SqliteMetadataStore.openInDataDir(dataDir);
  const record = (await store.listTransactions()).find((r) => r.transactionalId === transactionalId);
  await store.close();
  return record?.state as { state: string; partitions: Array<[number, number]> } | undefined;
}

test('a purge after a failed transaction write rewrites what the store holds, not what failed to reach it', async (t) => {
  const h = harness();
  const dataDir = tempDir(t);
  const broker = await Broker.open(options(dataDir, h));
  const tx = broker.transactions;
  const a = await broker.createTopic('default', 'a', { partitions: 1 });
  const b = await broker.createTopic('default', 'b', { partitions: 1 });
  const writes = patchedTransactionWrites(broker);
  // An AddPartitionsToTxn whose write fails begins nothing.
  const idle = await begin(broker, 'tx-failed-begin');
  writes.failures = 1;
  await assert.rejects(tx.addPartitions(idle, [{ topic: a, partition: 0 }, { topic: b, partition: 0 }]), /disk full/);
  // An EndTxn whose write fails leaves the transaction Ongoing.
  const ongoing = await begin(broker, 'tx-failed-end');
  await tx.addPartitions(ongoing, [{ topic: a, partition: 0 }, { topic: b, partition: 0 }]);
  writes.failures = 1;
  await assert.rejects(tx.endTxn(ongoing, true), /disk full/);

  await broker.purgeTopic(b);
  assert.equal((await storedTransaction(dataDir, 'tx-failed-begin'))?.state, TxnState.Empty, 'a transaction that never began is not stored as begun');
  const stored = await storedTransaction(dataDir, 'tx-failed-end');
  assert.equal(stored?.state, TxnState.Ongoing, 'a commit that failed is not stored as decided');
  assert.deepEqual(stored?.partitions, [[a.internalId, 0]]);
  await broker.close(); // not in t.after: the temp directory goes first there
});

test('a purge whose transaction rewrite fails still lets go of the partitions\' transaction index', async (t) => {
  const { h, broker, tx } = await inMemoryBroker(t);
  const p = await broker.createTopic('default', 'p', { partitions: 1 });
  const id = await begin(broker, 'tx-rewrite-fails');
  await tx.addPartitions(id, [{ topic: p, partition: 0 }]);
  await broker.append(p, 0, txnBatch(h.clock, id, 0, ['open']), { transaction: id });
  patchedTransactionWrites(broker).failures = 1;
  await broker.purgeTopic(p);
  await broker.append(p, 0, plain(h.clock, ['new-1', 'new-2']));
  assert.equal(tx.lastStableOffset(p, 0), 2, 'read_committed sees the new log');
});

test('an AddPartitionsToTxn waiting for a purge keeps the transaction\'s later requests behind it', async (t) => {
  const { h, broker, tx } = await inMemoryBroker(t);
  const a = await broker.createTopic('default', 'a', { partitions: 1 });
  const b = await broker.createTopic('default', 'b', { partitions: 1 });
  const id = await begin(broker, 'tx-order');
  await tx.addPartitions(id, [{ topic: a, partition: 0 }]);
  await broker.append(a, 0, txnBatch(h.clock, id, 0, ['a']), { transaction: id });
  const { inPurge, release } = holdPurgeStart(broker);
  const purge = broker.purgeTopic(b);
  await inPurge;
  const order: string[] = [];
  const added = tx.addPartitions(id, [{ topic: b, partition: 0 }]).then(() => order.push('add'));
  const ended = tx.endTxn(id, true).then((r) => order.push(`end ${r.state}`));
  release();
  await Promise.all([purge, added, ended]);
  assert.deepEqual(order, ['add', `end ${TxnState.CompleteCommit}`]);
  assert.equal(neutralMarkerKind((await readAll(broker, 'b', 0)).at(-1)!), 'commit', 'the partition added in the purge got its marker');
});

test('a partition added after a purge by a request queued before it stays in the transaction', async (t) => {
  const { broker, tx } = await inMemoryBroker(t);
  const a = await broker.createTopic('default', 'a', { partitions: 1 });
  const b = await broker.createTopic('default', 'b', { partitions: 1 });
  const id = await begin(broker, 'tx-queued-add');
  await tx.addPartitions(id, [{ topic: a, partition: 0 }]);
  const writes = patchedTransactionWrites(broker);
  let releaseWrite!: () => void;
  writes.hold = new Promise<void>((resolve) => (releaseWrite = resolve));
  const busy = tx.addOffsets(id, 'g'); // takes the transaction's turn; its write waits
  const adding = tx.addPartitions(id, [{ topic: b, partition: 0 }]); // queued behind it
  const { inPurge, release } = holdPurgeStart(broker);
  const purge = broker.purgeTopic(b);
  await inPurge;
  release();
  releaseWrite();
  await Promise.all([purge, busy, adding]);
  await tx.settled();
  assert.deepEqual(tx.describe('kafka', 'tx-queued-add')?.partitions, [
    { topicInternalId: a.internalId, partition: 0 },
    { topicInternalId: b.internalId, partition: 0 },
  ]);
});

test('an offset staged by a TxnOffsetCommit whose write is under way when a purge ends is not committed by the EndTxn behind it', async (t) => {
  const { h, broker, tx } = await inMemoryBroker(t);
  const { id, first: a, second: b } = await transactionOverTwo(broker, h, 'tx-staged-in-purge', ['a', 'b']);
  const writes = patchedTransactionWrites(broker);
  let releaseWrite!: () => void;
  writes.hold = new Promise<void>((resolve) => (releaseWrite = resolve));
  const staged = tx.txnOffsetCommit(id, 'g', [
    { topicInternalId: b.internalId, partition: 0, offset: 7 },
    { topicInternalId: a.internalId, partition: 0, offset: 3 },
  ]);
  const ended = tx.endTxn(id, true); // pipelined behind it
  // The purge ends (dropPartitions runs) while the TxnOffsetCommit's write is held.
  const drop = tx.dropPartitions.bind(tx);
  let dropped!: () => void;
  const inDrop = new Promise<void>((resolve) => (dropped = resolve));
  tx.dropPartitions = (keys) => {
    const done = drop(keys);
    dropped();
    return done;
  };
  const purge = broker.purgeTopic(b);
  await inDrop;
  releaseWrite();
  await Promise.all([purge, staged, ended]);
  assert.equal((await broker.offsets.fetch('kafka', 'g', a.internalId, 0))?.offset, 3);
  assert.equal(await broker.offsets.fetch('kafka', 'g', b.internalId, 0), null, 'nothing committed past the purged log\'s end');
  assert.equal(hw(broker, 'b', 0), 0, 'no marker in the new log');
});

test('a commit whose marker would wait for a purge of its partition writes none into the new log', async (t) => {
  const { h, broker, tx } = await inMemoryBroker(t);
  const purged = await broker.createTopic('default', 'purged', { partitions: 1 });
  await broker.append({ topic: 'purged' }, 0, plain(h.clock, ['a', 'b', 'c']));
  const id = await begin(broker, 'tx-purge-race');
  await tx.addPartitions(id, [{ topic: { topic: 'purged' }, partition: 0 }]);
  await broker.append({ topic: 'purged' }, 0, txnBatch(h.clock, id, 0, ['in-txn']), { transaction: id });
  await tx.addOffsets(id, 'g');
  await tx.txnOffsetCommit(id, 'g', [{ topicInternalId: purged.internalId, partition: 0, offset: 3 }]);

  const { inPurge, release } = holdPurgeStart(broker);
  const purge = broker.purgeTopic({ topic: 'purged' });
  await inPurge;
  const ended = tx.endTxn(id, true);
  // The commit is decided and its marker write issued while the purge holds the logs.
  await until(() => tx.describe('kafka', 'tx-purge-race')?.state === TxnState.PrepareCommit, 'the commit never reached PrepareCommit');
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
  release();
  await purge;
  assert.deepEqual(await ended, { state: TxnState.CompleteCommit });
  assert.deepEqual(await readAll(broker, 'purged', 0), [], 'the new log starts empty at offset 0');
  assert.equal(await broker.offsets.fetch('kafka', 'g', purged.internalId, 0), null);
});

test('a purge that fails part-way: the partition it left as it was still gets the marker of a commit issued meanwhile', async (t) => {
  const h = harness();
  const dataDir = tempDir(t);
  const broker = await Broker.open(options(dataDir, h));
  const tx = broker.transactions;
  await broker.createTopic('default', 't', { partitions: 2 });
  const id = await begin(broker, 'tx-failed-purge');
  await tx.addPartitions(id, [
    { topic: { topic: 't' }, partition: 0 },
    { topic: { topic: 't' }, partition: 1 },
  ]);
  for (const partition of [0, 1]) await broker.append({ topic: 't' }, partition, txnBatch(h.clock, id, partition, [`txn${partition}`]), { transaction: id });
  // Partition 1's directory cannot be renamed away: the purge empties partition 0 and stops there.
  const internals = (broker as unknown as { logs: { discardPartitionDir(internalId: number, partition: number): Promise<void> } }).logs;
  const discard = internals.discardPartitionDir.bind(internals);
  internals.discardPartitionDir = (internalId, partition) => (partition === 1 ? Promise.reject(new Error('EIO on rename')) : discard(internalId, partition));
  const { inPurge, release } = holdPurgeStart(broker);
  const purge = broker.purgeTopic({ topic: 't' });
  await inPurge;
  const ended = tx.endTxn(id, true);
  await until(() => tx.describe('kafka', 'tx-failed-purge')?.state === TxnState.PrepareCommit, 'the commit never reached PrepareCommit');
  release();
  await assert.rejects(purge, /EIO on rename/);
  assert.deepEqual(await ended, { state: TxnState.CompleteCommit });
  assert.deepEqual(await readAll(broker, 't', 0), [], 'partition 0 was purged: no marker in its new log');
  const kept = await readAll(broker, 't', 1);
  assert.deepEqual(valuesOf(kept.filter((b) => (b.flags & BatchFlags.control) === 0)), ['txn1']);
  assert.equal(neutralMarkerKind(kept.at(-1)!), 'commit', 'partition 1 kept its records and gets its marker');
  assert.equal(tx.lastStableOffset({ topic: 't' }, 1), hw(broker, 't', 1));
  await broker.close(); // not in t.after: the temp directory goes first there
});

test('a transactional batch that waited for a purge of its partition is refused; a plain one goes to the new log', async (t) => {
  const { h, broker, tx } = await inMemoryBroker(t);
  await broker.createTopic('default', 't', { partitions: 1 });
  const id = await begin(broker, 'tx-waiting');
  await tx.addPartitions(id, [{ topic: { topic: 't' }, partition: 0 }]);
  await broker.append({ topic: 't' }, 0, txnBatch(h.clock, id, 0, ['before']), { transaction: id });
  const { inPurge, release } = holdPurgeStart(broker);
  const purge = broker.purgeTopic({ topic: 't' });
  await inPurge;
  tx.checkProduce(id, { topic: 't' }, 0); // so the append's check on arrival passes: it is refused once the purge has ended
  const transactional = broker.append({ topic: 't' }, 0, txnBatch(h.clock, id, 1, ['waited']), { transaction: id });
  const plainAppend = broker.append({ topic: 't' }, 0, plain(h.clock, ['plain']));
  release();
  await purge;
  await assert.rejects(transactional, code('invalid_txn_state'));
  assert.equal((await plainAppend).baseOffset, 0);
  assert.deepEqual(valuesOf(await readAll(broker, 't', 0)), ['plain']);
  assert.equal(tx.lastStableOffset({ topic: 't' }, 0), 1, 'nothing left open in the new log');
  assert.deepEqual(await tx.endTxn(id, true), { state: TxnState.CompleteCommit });
  assert.deepEqual(valuesOf(await readAll(broker, 't', 0)), ['plain']);
});

test('a marker already queued in the log a purge closes is not flushed again (nor written twice when the purge keeps the partition)', async (t) => {
  const h = harness();
  const dataDir = tempDir(t);
  const fs = new HeldFileSystem();
  const broker = await Broker.open(options(dataDir, h, { logFs: fs, directWrites: null }));
  const tx = broker.transactions;
  await broker.createTopic('default', 't', { partitions: 1 });
  const id = await begin(broker, 'tx-queued-marker');
  await tx.addPartitions(id, [{ topic: { topic: 't' }, partition: 0 }]);
  await broker.append({ topic: 't' }, 0, txnBatch(h.clock, id, 0, ['data']), { transaction: id });
  // The purge fails to rename the partition away: it keeps its records.
  (broker as unknown as { logs: { discardPartitionDir(): Promise<void> } }).logs.discardPartitionDir = () => Promise.reject(new Error('EIO on rename'));
  const oldLog = broker.partition({ topic: 't' }, 0);
  const write = fs.holdNextWrite();
  const ended = tx.endTxn(id, true);
  await write.reached; // the commit marker is being written into the log
  const purge = broker.purgeTopic({ topic: 't' });
  const logs = (broker as unknown as { logs: { isClosedByPurge(log: object): boolean } }).logs;
  await until(() => logs.isClosedByPurge(oldLog), 'the purge never began closing the log');
  write.open();
  await assert.rejects(purge, /EIO on rename/);
  assert.deepEqual(await ended, { state: TxnState.CompleteCommit }, 'the close wrote the marker: nothing to retry');
  const batches = await readAll(broker, 't', 0);
  assert.deepEqual(batches.map((b) => ((b.flags & BatchFlags.control) !== 0 ? neutralMarkerKind(b) : 'data')), ['data', 'commit']);
  assert.equal(tx.lastStableOffset({ topic: 't' }, 0), 2);
  await broker.close(); // not in t.after: the temp directory goes first there
});

test('after a crash, an open transaction whose first batch straddles the log start (DeleteRecords inside it) still holds the LSO', async (t) => {
  const h = harness();
  const dir = tempDir(t);
  const crashed = await Broker.open(options(dir, h));
  t.after(() => crashed.close().catch(() => undefined));
  await crashed.createTopic('default', 'straddle', { partitions: 1 });
  const id = await begin(crashed, 'tx-straddle');
  await crashed.transactions.addPartitions(id, [{ topic: { topic: 'straddle' }, partition: 0 }]);
  await crashed.append({ topic: 'straddle' }, 0, plain(h.clock, ['before']));
  await crashed.append({ topic: 'straddle' }, 0, txnBatch(h.clock, id, 0, ['t1', 't2', 't3']), { transaction: id });
  assert.equal(await crashed.partition({ topic: 'straddle' }, 0).deleteRecordsBefore(3), 3, 'the log start falls inside the open transaction');
  assert.equal(crashed.transactions.lastStableOffset({ topic: 'straddle' }, 0), 1);
  // The process dies: no close, so no transaction checkpoint; a new broker opens the directory.
  const broker = await Broker.open(options(dir, { clock: h.clock, scheduler: new ManualScheduler(h.clock) }));
  try {
    assert.ok(broker.transactions.lastStableOffset({ topic: 'straddle' }, 0) <= 3, 'the open transaction still bounds the LSO');
    assert.deepEqual(valuesOf((await broker.transactions.readCommitted({ topic: 'straddle' }, 0, 3, { maxBytes: 1 << 20 })).batches), []);
  } finally {
    await broker.close();
  }
});
