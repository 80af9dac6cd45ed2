import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Broker, type BrokerOptions } from '../../src/core/broker.js';
import { ManualClock } from '../../src/base/clock.js';
import { isQuartetError, type CoreErrorCode } from '../../src/base/errors.js';
import { decodeNeutralBatch, encodeNeutralBatch, type StoredBatch } from '../../src/log/index.js';
import { FaultyFileSystem } from '../../src/log/fs.js';
import { fullHoldMs } from '../../src/core/storage-health.js';
import { HeldFileSystem, holdPurgeStart, tempDir, testScryptCost } from './helpers.js';

function code(expected: CoreErrorCode) {
  return (err: unknown) => isQuartetError(err) && err.code === expected;
}

function options(dataDir: string, clock: ManualClock, extra: Partial<BrokerOptions> = {}): BrokerOptions {
  return { dataDir, clock, rootUser: { username: 'root', password: 'pw' }, maintenanceIntervalMs: 0, scryptCost: testScryptCost, ...extra };
}

function batch(clock: ManualClock, values: string[], producer?: { producerId: number; producerEpoch: number; baseSequence: number }) {
  return encodeNeutralBatch(values.map((value) => ({ key: 'k', value })), { timestamp: clock.now(), ...producer });
}

function values(batches: StoredBatch[]): string[] {
  return batches.flatMap((b) => decodeNeutralBatch(b).map((r) => r.value?.toString() ?? ''));
}

test('end to end with file logs: create, append, read, reopen, read again', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  let broker = await Broker.open(options(dir, clock));
  assert.equal(broker.generatedRootPassword, null);
  const topic = await broker.createTopic('default', 'orders', { partitions: 2, config: { 'segment.bytes': '4096' } });
  assert.ok(existsSync(join(dir, 'logs', String(topic.internalId), '1')));
  const r0 = await broker.append({ topic: 'orders' }, 0, batch(clock, ['a', 'b']));
  const r1 = await broker.append(topic, 0, batch(clock, ['c']));
  await broker.append({ namespace: 0, topic: topic.id }, 1, batch(clock, ['x']));
  assert.deepEqual([r0.baseOffset, r0.lastOffset, r1.baseOffset], [0, 1, 2]);
  assert.deepEqual(values(await broker.read({ topic: 'orders' }, 0, 0, { maxBytes: 1 << 20 })), ['a', 'b', 'c']);
  const labels = { namespace: 'default', topic: 'orders', partition: '0' };
  assert.equal(broker.metrics.counter('quartet_partition_appended_records_total', '').get(labels), 3);
  assert.ok(broker.metrics.counter('quartet_partition_appended_bytes_total', '').get(labels) > 0);
  assert.equal(broker.metrics.gauge('quartet_partition_log_end_offset', '').get(labels), 3);
  assert.match(broker.metrics.render(), /quartet_partition_log_end_offset\{namespace="default",partition="1",topic="orders"\} 1/);
  await broker.close();
  await broker.close(); // idempotent
  await assert.rejects(broker.append(topic, 0, batch(clock, ['late'])), code('shutting_down'));

  broker = await Broker.open(options(dir, clock));
  const reopened = broker.catalog.requireTopic({ topic: 'orders' });
  assert.equal(reopened.internalId, topic.internalId);
  assert.deepEqual(reopened.config, { 'segment.bytes': 4096 });
  assert.equal(broker.partition(reopened, 0).config.segmentBytes, 4096);
  assert.deepEqual(values(await broker.read(reopened, 0, 0, { maxBytes: 1 << 20 })), ['a', 'b', 'c']);
  assert.deepEqual(values(await broker.read(reopened, 1, 0, { maxBytes: 1 << 20 })), ['x']);
  assert.equal(broker.metrics.gauge('quartet_partition_log_end_offset', '').get(labels), 3, 'gauge set at open');
  const r2 = await broker.append(reopened, 0, batch(clock, ['d']));
  assert.equal(r2.baseOffset, 3);
  await broker.close();
});

test('unknown topics and partitions', async (t) => {
  const clock = new ManualClock();
  const broker = await Broker.open(options(tempDir(t), clock, { memory: true }));
  t.after(() => broker.close());
  const topic = await broker.createTopic('default', 't');
  assert.equal(topic.partitions, 1);
  assert.throws(() => broker.partition({ topic: 'nope' }, 0), code('unknown_topic'));
  assert.throws(() => broker.partition({ namespace: 'nope', topic: 't' }, 0), code('unknown_namespace'));
  assert.throws(() => broker.partition(topic, 1), code('unknown_partition'));
  assert.throws(() => broker.partition(topic, -1), code('unknown_partition'));
  await assert.rejects(broker.append(topic, 5, batch(clock, ['v'])), code('unknown_partition'));
  await assert.rejects(broker.read({ topic: 'nope' }, 0, 0, { maxBytes: 100 }), code('unknown_topic'));
});

test('idempotent appends: duplicates return the original offsets, also after a reopen', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  let broker = await Broker.open(options(dir, clock));
  const topic = await broker.createTopic('default', 'idem', { partitions: 1 });
  const { producerId, epoch } = await broker.producers.initProducer();
  const p = (baseSequence: number) => ({ producerId, producerEpoch: epoch, baseSequence });
  // Pipelined: the second batch is checked before the first one's write completes.
  const [first, second] = await Promise.all([broker.append(topic, 0, batch(clock, ['a', 'b'], p(0))), broker.append(topic, 0, batch(clock, ['c'], p(2)))]);
  assert.deepEqual([first.baseOffset, second.baseOffset], [0, 2]);
  const retry = await broker.append(topic, 0, batch(clock, ['a', 'b'], p(0)));
  assert.deepEqual([retry.baseOffset, retry.lastOffset], [0, 1]);
  await assert.rejects(broker.append(topic, 0, batch(clock, ['z'], p(9))), code('out_of_order_sequence'));
  assert.equal(broker.partition(topic, 0).stats().nextOffset, 3, 'nothing appended twice');
  await broker.close();

  broker = await Broker.open(options(dir, clock));
  const again = await broker.append(topic, 0, batch(clock, ['c'], p(2)));
  assert.equal(again.baseOffset, 2);
  assert.equal((await broker.append(topic, 0, batch(clock, ['d'], p(3)))).baseOffset, 3);
  const bumped = await broker.producers.initProducer({ producerId, epoch });
  await assert.rejects(broker.append(topic, 0, batch(clock, ['old'], p(4))), code('producer_fenced'));
  assert.equal((await broker.append(topic, 0, batch(clock, ['new'], { producerId, producerEpoch: bumped.epoch, baseSequence: 0 }))).baseOffset, 4);
  await broker.close();
});

test('deleteTopic removes its directory, offsets and producer state; orphans are removed at open', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  let broker = await Broker.open(options(dir, clock));
  const doomed = await broker.createTopic('default', 'doomed', { partitions: 2 });
  const kept = await broker.createTopic('default', 'kept');
  await broker.append(doomed, 1, batch(clock, ['v']));
  await broker.offsets.commit('kafka', 'g', [{ topicInternalId: doomed.internalId, partition: 1, offset: 1 }, { topicInternalId: kept.internalId, partition: 0, offset: 0 }]);
  const topicDir = join(dir, 'logs', String(doomed.internalId));
  assert.ok(existsSync(topicDir));
  await broker.deleteTopic({ topic: 'doomed' });
  assert.equal(existsSync(topicDir), false);
  assert.throws(() => broker.partition(doomed, 0), code('unknown_topic'));
  assert.deepEqual((await broker.offsets.fetchGroup('kafka', 'g')).map((o) => o.topicInternalId), [kept.internalId]);
  // Recreating the name gives a new topic: new internal id, empty log.
  const reborn = await broker.createTopic('default', 'doomed');
  assert.notEqual(reborn.internalId, doomed.internalId);
  assert.equal(broker.partition(reborn, 0).stats().nextOffset, 0);
  await broker.close();

  mkdirSync(join(dir, 'logs', '999', '0'), { recursive: true });
  broker = await Broker.open(options(dir, clock));
  assert.deepEqual(readdirSync(join(dir, 'logs')).sort(), [String(kept.internalId), String(reborn.internalId)].sort());
  await broker.close();
});

test('removePartitions destroys the last partitions: logs, directories, offsets, producer state', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  let broker = await Broker.open(options(dir, clock));
  const topic = await broker.createTopic('default', 'shrink', { partitions: 3 });
  const { producerId, epoch } = await broker.producers.initProducer();
  const producer = (baseSequence: number) => ({ producerId, producerEpoch: epoch, baseSequence });
  await broker.append(topic, 0, batch(clock, ['p0']));
  await broker.append(topic, 2, batch(clock, ['a'], producer(0)));
  await broker.append(topic, 2, batch(clock, ['b'], producer(1)));
  const commits = [0, 1, 2].map((partition) => ({ topicInternalId: topic.internalId, partition, offset: 1 }));
  await broker.offsets.commit('kafka', 'g', commits);
  await broker.offsets.commit('iggy', 'c:n:1', commits);
  const partitionDir = (p: number) => join(dir, 'logs', String(topic.internalId), String(p));
  await assert.rejects(broker.removePartitions(topic, 3), code('invalid_partitions'));

  const shrunk = await broker.removePartitions({ topic: 'shrink' }, 1);
  assert.equal(shrunk.partitions, 1);
  assert.equal(existsSync(partitionDir(1)), false);
  assert.equal(existsSync(partitionDir(2)), false);
  assert.ok(existsSync(partitionDir(0)));
  assert.throws(() => broker.partition(shrunk, 1), code('unknown_partition'));
  await assert.rejects(broker.append(shrunk, 2, batch(clock, ['late'])), code('unknown_partition'));
  assert.deepEqual((await broker.offsets.fetchGroup('kafka', 'g')).map((o) => o.partition), [0]);
  assert.deepEqual((await broker.offsets.fetchGroup('iggy', 'c:n:1')).map((o) => o.partition), [0]);
  assert.deepEqual(values(await broker.read(shrunk, 0, 0, { maxBytes: 1 << 20 })), ['p0']);
  await broker.close();

  // The count persists; partitions added again start empty, with no producer state.
  broker = await Broker.open(options(dir, clock));
  assert.equal(broker.catalog.requireTopic({ topic: 'shrink' }).partitions, 1);
  assert.equal(existsSync(partitionDir(2)), false);
  const regrown = await broker.addPartitions({ topic: 'shrink' }, 3);
  assert.equal(broker.partition(regrown, 2).stats().nextOffset, 0);
  const again = await broker.append(regrown, 2, batch(clock, ['a'], producer(0)));
  assert.equal(again.baseOffset, 0);
  assert.equal(broker.partition(regrown, 2).stats().nextOffset, 1, 'appended, not taken for a duplicate');
  // Down to zero partitions (Iggy allows it).
  assert.equal((await broker.removePartitions(regrown, 0)).partitions, 0);
  assert.deepEqual(readdirSync(join(dir, 'logs', String(topic.internalId))), []);
  await broker.close();
});

test('removePartitions with memory logs', async (t) => {
  const clock = new ManualClock();
  const broker = await Broker.open(options(tempDir(t), clock, { memory: true }));
  t.after(() => broker.close());
  const topic = await broker.createTopic('default', 'm', { partitions: 2 });
  await broker.append(topic, 1, batch(clock, ['x']));
  const shrunk = await broker.removePartitions(topic, 1);
  assert.throws(() => broker.partition(shrunk, 1), code('unknown_partition'));
  const regrown = await broker.addPartitions(shrunk, 2);
  assert.equal(broker.partition(regrown, 1).stats().nextOffset, 0);
});

test('namespaces, partitions and config changes reach the logs', async (t) => {
  const clock = new ManualClock();
  const broker = await Broker.open(options(tempDir(t), clock, { memory: true, topicDefaults: { 'retention.ms': 1000 } }));
  t.after(() => broker.close());
  await broker.createNamespace('stream-a');
  const topic = await broker.createTopic('stream-a', 'events', { partitions: 1 });
  assert.equal(broker.partition(topic, 0).config.retentionMs, 1000, 'broker default applies');
  await broker.append(topic, 0, batch(clock, ['v']));
  assert.equal(broker.metrics.counter('quartet_partition_appended_records_total', '').get({ namespace: 'stream-a', topic: 'events', partition: '0' }), 1);
  await broker.addPartitions(topic, 3);
  assert.equal(broker.partition({ namespace: 'stream-a', topic: 'events' }, 2).stats().nextOffset, 0);
  await broker.updateTopicConfig({ namespace: 'stream-a', topic: 'events' }, { 'retention.ms': '5000', 'cleanup.policy': 'compact' });
  for (const p of [0, 1, 2]) {
    const config = broker.partition({ namespace: 'stream-a', topic: 'events' }, p).config;
    assert.equal(config.retentionMs, 5000);
    assert.equal(config.cleanupPolicy, 'compact');
  }
  const described = Object.fromEntries(broker.describeTopicConfig({ namespace: 'stream-a', topic: 'events' }).map((e) => [e.key, e]));
  assert.equal(described['retention.ms']!.source, 'topic');
  await assert.rejects(broker.updateTopicConfig({ namespace: 'stream-a', topic: 'events' }, { 'segment.bytes': 1 }), code('invalid_config'));
  await broker.deleteNamespace('stream-a');
  assert.throws(() => broker.partition({ namespace: 'stream-a', topic: 'events' }, 0), code('unknown_namespace'));
});

test('maintenance applies retention by age with a manual clock', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const broker = await Broker.open(options(dir, clock));
  const topic = await broker.createTopic('default', 'short', { config: { 'segment.bytes': 1024, 'retention.ms': 60_000 } });
  const big = 'x'.repeat(700);
  for (let i = 0; i < 4; i++) await broker.append(topic, 0, batch(clock, [big])); // one batch per segment
  const log = broker.partition(topic, 0);
  assert.ok(log.stats().segmentCount >= 3, `segments: ${log.stats().segmentCount}`);
  await broker.runMaintenance();
  assert.equal(log.stats().logStartOffset, 0, 'nothing is old enough yet');
  clock.advance(60_001);
  await broker.append(topic, 0, batch(clock, [big])); // a fresh batch that must survive
  await broker.runMaintenance();
  assert.equal(log.stats().logStartOffset, 4);
  assert.deepEqual((await broker.read(topic, 0, 4, { maxBytes: 1 << 20 })).map((b) => b.baseOffset), [4]);
  await broker.close();
});

test('root user: generated password when none is configured, only on the first open', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  let broker = await Broker.open({ dataDir: dir, clock, maintenanceIntervalMs: 0, scryptCost: testScryptCost, rootUser: { username: 'iggy' } });
  const password = broker.generatedRootPassword;
  assert.ok(password);
  assert.equal((await broker.users.verifyPassword('iggy', password)).root, true);
  await broker.close();
  broker = await Broker.open({ dataDir: dir, clock, maintenanceIntervalMs: 0, scryptCost: testScryptCost, rootUser: { username: 'iggy' } });
  assert.equal(broker.generatedRootPassword, null);
  assert.equal(broker.users.get(0)?.username, "iggy");
  await broker.close();
});

test('a failed write leaves no producer state behind: the retry is appended, not taken for a duplicate', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const fs = new FaultyFileSystem();
  const broker = await Broker.open(options(dir, clock, { logFs: fs, directWrites: null }));
  const topic = await broker.createTopic('default', 'faulty');
  const { producerId, epoch } = await broker.producers.initProducer();
  const p = { producerId, producerEpoch: epoch, baseSequence: 0 };
  fs.failNextWrite();
  await assert.rejects(broker.append(topic, 0, batch(clock, ['a'], p)));
  const retry = await broker.append(topic, 0, batch(clock, ['a'], p));
  assert.equal(retry.baseOffset, broker.partition(topic, 0).stats().nextOffset - 1);
  assert.deepEqual(values(await broker.read(topic, 0, 0, { maxBytes: 1 << 20 })), ['a']);
  await broker.close();
});

test('an append that fails for lack of space marks the storage full (quartet_storage_full) until an append is written and none has failed so for fullHoldMs; other failures do not', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const fs = new FaultyFileSystem();
  const broker = await Broker.open(options(dir, clock, { logFs: fs, directWrites: null }));
  t.after(() => broker.close().catch(() => undefined));
  const topic = await broker.createTopic('default', 'disk');
  fs.failNextWrite();
  await assert.rejects(broker.append(topic, 0, batch(clock, ['eio'])));
  assert.equal(broker.storage.full, false, 'an I/O error is not a full disk');
  fs.shortNextWrite(3);
  await assert.rejects(broker.append(topic, 0, batch(clock, ['enospc'])), (err: unknown) => isQuartetError(err) && err.code === 'storage_error');
  assert.equal(broker.storage.full, true);
  assert.match(broker.metrics.render(), /quartet_storage_full 1/);
  await broker.append(topic, 0, batch(clock, ['space again']));
  assert.equal(broker.storage.full, true, 'a small append that fits does not make a nearly full disk ready at once');
  clock.advance(fullHoldMs - 1);
  fs.shortNextWrite(3);
  await assert.rejects(broker.append(topic, 0, batch(clock, ['too big again'])));
  clock.advance(fullHoldMs - 1);
  await broker.append(topic, 0, batch(clock, ['fits']));
  assert.equal(broker.storage.full, true, 'the hold runs from the last failure');
  clock.advance(1);
  await broker.metrics.collect();
  assert.match(broker.metrics.render(), /quartet_storage_full 0/, 'a scrape sees the hold end');
  assert.equal(broker.storage.full, false);
  clock.advance(fullHoldMs);
  assert.equal(broker.storage.full, false, 'without a failure the disk stays ready');
});

test('a disk found full stays full past the hold until an append is written', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const fs = new FaultyFileSystem();
  const broker = await Broker.open(options(dir, clock, { logFs: fs, directWrites: null }));
  t.after(() => broker.close().catch(() => undefined));
  const topic = await broker.createTopic('default', 'idle-full');
  fs.shortNextWrite(3);
  await assert.rejects(broker.append(topic, 0, batch(clock, ['enospc'])));
  clock.advance(fullHoldMs * 3);
  assert.equal(broker.storage.full, true, 'no append has shown there is space');
  await broker.append(topic, 0, batch(clock, ['space again']));
  assert.equal(broker.storage.full, false);
});

test('appends failing on a full disk log one line a second per partition, the next saying how many were dropped', async (t) => {
  const { createLogger } = await import('../../src/base/logger.js');
  const dir = tempDir(t);
  const clock = new ManualClock();
  const fs = new FaultyFileSystem();
  const lines: Array<{ msg: string; dropped?: number }> = [];
  const logger = createLogger('info', (line) => void lines.push(JSON.parse(line) as { msg: string; dropped?: number }));
  const broker = await Broker.open(options(dir, clock, { logFs: fs, directWrites: null, logger }));
  t.after(() => broker.close().catch(() => undefined));
  const topic = await broker.createTopic('default', 'full');
  const failures = (): Array<{ msg: string; dropped?: number }> => lines.filter((l) => l.msg === 'append failed; rolling back');
  for (let i = 0; i < 5; i++) {
    fs.shortNextWrite(3);
    await assert.rejects(broker.append(topic, 0, batch(clock, [`retry ${i}`])));
  }
  assert.equal(failures().length, 1, 'five failures within a second: one line');
  clock.advance(1_000);
  fs.shortNextWrite(3);
  await assert.rejects(broker.append(topic, 0, batch(clock, ['a second later'])));
  assert.deepEqual(failures().map((l) => l.dropped), [undefined, 4]);
});

test('a retry of an in-flight idempotent batch is not acknowledged before the original is written', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const fs = new FaultyFileSystem();
  const broker = await Broker.open(options(dir, clock, { logFs: fs, directWrites: null }));
  t.after(() => broker.close().catch(() => undefined));
  const topic = await broker.createTopic('default', 'dup');
  const { producerId, epoch } = await broker.producers.initProducer();
  const p = { producerId, producerEpoch: epoch, baseSequence: 0 };
  fs.failNextWrite(); // the original's write will fail
  const settle = (r: Promise<unknown>) => r.then((): boolean => true, (): boolean => false);
  const original = settle(broker.append(topic, 0, batch(clock, ['a'], p)));
  // The client's retry (request timeout, reconnect...) arrives while the original is queued.
  const retry = settle(broker.append(topic, 0, batch(clock, ['a'], p)));
  assert.equal(await original, false, 'the original write failed');
  assert.equal(await retry, false, 'the retry fails with it: acknowledging it would lose the record');
  assert.deepEqual(values(await broker.read(topic, 0, 0, { maxBytes: 1 << 20 })), []);
  // The failed batch is forgotten: the next retry is appended.
  assert.equal((await broker.append(topic, 0, batch(clock, ['a'], p))).baseOffset, 0);
  assert.deepEqual(values(await broker.read(topic, 0, 0, { maxBytes: 1 << 20 })), ['a']);
});

test("under fsyncPolicy 'always' a retry of an in-flight batch is acknowledged only after the original's fsync", async (t) => {
  const clock = new ManualClock();
  const fs = new HeldFileSystem();
  const broker = await Broker.open(options(tempDir(t), clock, { logFs: fs, directWrites: null }));
  t.after(() => broker.close().catch(() => undefined));
  const topic = await broker.createTopic('default', 'synced', { config: { 'quartet.fsync.policy': 'always' } });
  const { producerId, epoch } = await broker.producers.initProducer();
  const p = { producerId, producerEpoch: epoch, baseSequence: 0 };
  const order: string[] = [];
  const sync = fs.holdNextSync();
  const original = broker.append(topic, 0, batch(clock, ['a'], p)).then((r) => (order.push('original'), r));
  await sync.reached; // written, its fsync held
  const retry = broker.append(topic, 0, batch(clock, ['a'], p)).then((r) => (order.push('retry'), r));
  await new Promise((resolve) => setImmediate(resolve));
  const early = [...order];
  sync.open();
  assert.deepEqual(early, [], 'nothing is acknowledged before the fsync');
  const [o, r] = await Promise.all([original, retry]);
  assert.deepEqual(order.sort(), ['original', 'retry']);
  assert.deepEqual([r.baseOffset, r.lastOffset, r.appendTime], [o.baseOffset, o.lastOffset, o.appendTime], 'the retry gets the original offsets');
  assert.deepEqual(values(await broker.read(topic, 0, 0, { maxBytes: 1 << 20 })), ['a'], 'appended once');
  // Once written, a retry is answered at once from the window.
  assert.equal((await broker.append(topic, 0, batch(clock, ['a'], p))).baseOffset, o.baseOffset);
});

test('a producer snapshot covers the high watermark: a batch in flight then failed is not remembered after a crash', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const fs = new HeldFileSystem();
  const crashed = await Broker.open(options(dir, clock, { logFs: fs, directWrites: null }));
  // Compaction (no sealed segment yet) does not wait for the held write, retention would.
  const topic = await crashed.createTopic('default', 'snap', { config: { 'cleanup.policy': 'compact' } });
  const { producerId, epoch } = await crashed.producers.initProducer();
  const p = { producerId, producerEpoch: epoch, baseSequence: 0 };
  const write = fs.holdNextWrite();
  const original = crashed.append(topic, 0, batch(clock, ['a'], p)).then(
    () => true,
    () => false,
  );
  await write.reached; // offset 0 assigned, not written
  await crashed.runMaintenance(); // snapshots producer state now
  write.fail();
  assert.equal(await original, false);
  // Another writer gets offset 0; then the process dies (no close, so no newer snapshot).
  assert.equal((await crashed.append(topic, 0, batch(clock, ['other']))).baseOffset, 0);

  const broker = await Broker.open(options(dir, clock));
  t.after(() => broker.close().catch(() => undefined));
  t.after(() => crashed.close().catch(() => undefined));
  const retry = await broker.append(topic, 0, batch(clock, ['a'], p));
  assert.equal(retry.baseOffset, 1, 'the retry is appended, not answered with the offset of another record');
  assert.deepEqual(values(await broker.read(topic, 0, 0, { maxBytes: 1 << 20 })), ['other', 'a']);
});

test('after a crash (no close, no snapshot) producer state is rebuilt from the logs', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const crashed = await Broker.open(options(dir, clock));
  const topic = await crashed.createTopic('default', 'crashy');
  const { producerId } = await crashed.producers.initProducer();
  for (let s = 0; s < 3; s++) await crashed.append(topic, 0, batch(clock, [`v${s}`], { producerId, producerEpoch: 0, baseSequence: s }));
  // The process "dies": nothing is closed, so no producer snapshot exists. The data is in the
  // page cache, which a process crash does not lose.
  const broker = await Broker.open(options(dir, clock));
  const retry = await broker.append(topic, 0, batch(clock, ['v2'], { producerId, producerEpoch: 0, baseSequence: 2 }));
  assert.equal(retry.baseOffset, 2);
  assert.equal(broker.partition(topic, 0).stats().nextOffset, 3);
  await assert.rejects(broker.append(topic, 0, batch(clock, ['v9'], { producerId, producerEpoch: 0, baseSequence: 9 })), code('out_of_order_sequence'));
  await broker.close();
  await crashed.close().catch(() => undefined);
});

for (const memory of [true, false]) {
  test(`purgeTopic empties every partition, restarts it at offset 0 and drops the topic's committed offsets (${memory ? 'memory' : 'file'} logs)`, async (t) => {
    const clock = new ManualClock();
    const dir = tempDir(t);
    const broker = await Broker.open(options(dir, clock, { memory }));
    let closed = false;
    t.after(() => (closed ? undefined : broker.close()));
    const topic = await broker.createTopic('default', 'purge', { partitions: 2 });
    const other = await broker.createTopic('default', 'other', { partitions: 1 });
    for (const p of [0, 1]) await broker.append(topic, p, batch(clock, ['a', 'b', 'c']));
    await broker.append(other, 0, batch(clock, ['x']));
    await broker.offsets.commit('kafka', 'g', [{ topicInternalId: topic.internalId, partition: 0, offset: 3 }, { topicInternalId: other.internalId, partition: 0, offset: 1 }]);
    await broker.purgeTopic({ topic: 'purge' });
    for (const p of [0, 1]) {
      assert.equal(broker.partition(topic, p).stats().highWatermark, 0);
      assert.deepEqual(await broker.read(topic, p, 0, { maxBytes: 1 << 20 }), []);
    }
    assert.equal(await broker.offsets.fetch('kafka', 'g', topic.internalId, 0), null, "the purged topic's offsets are gone");
    assert.equal((await broker.offsets.fetch('kafka', 'g', other.internalId, 0))?.offset, 1, "another topic's stay");
    assert.equal((await broker.append(topic, 0, batch(clock, ['d']))).baseOffset, 0);
    assert.equal((await broker.read(topic, 0, 0, { maxBytes: 1 << 20 })).length, 1);
    assert.equal(broker.partition(other, 0).stats().highWatermark, 1, 'other topics untouched');
    if (memory) return;
    // What the purge left on disk is what a restart finds.
    await broker.close();
    closed = true;
    const reopened = await Broker.open(options(dir, clock));
    try {
      const again = reopened.catalog.requireTopic({ topic: 'purge' });
      assert.equal(reopened.partition(again, 0).stats().highWatermark, 1);
      assert.equal(reopened.partition(again, 1).stats().highWatermark, 0);
    } finally {
      await reopened.close();
    }
  });
}

/** A file-log broker closed after the test, unless the test closed it itself (then call closedByTest). */
async function purgeTestBroker(t: { after(fn: () => unknown): void }, clock: ManualClock, dir = tempDir(t as never)) {
  const broker = await Broker.open(options(dir, clock));
  let closed = false;
  t.after(() => (closed ? undefined : broker.close()));
  return { broker, dir, closedByTest: () => void (closed = true) };
}

test('appends and reads that arrive while a purge replaces the logs wait for the new logs', async (t) => {
  const clock = new ManualClock();
  const { broker, closedByTest } = await purgeTestBroker(t, clock);
  const topic = await broker.createTopic('default', 'racing', { partitions: 1 });
  await broker.append(topic, 0, batch(clock, ['old1', 'old2']));
  // Hold the purge at its first step, so the racing calls surely arrive while it runs.
  const { inPurge, release } = holdPurgeStart(broker);
  const purged = broker.purgeTopic(topic);
  await inPurge;
  assert.ok(broker.purgeInProgress(topic) !== undefined);
  const appended = broker.append(topic, 0, batch(clock, ['new']));
  const read = broker.read(topic, 0, 0, { maxBytes: 1 << 20 });
  release();
  await purged;
  assert.equal((await appended).baseOffset, 0, 'into the new log');
  const seen = values(await read);
  assert.ok(seen.length === 0 || (seen.length === 1 && seen[0] === 'new'), `the new log, never the old one: ${seen.join()}`);
  assert.deepEqual(values(await broker.read(topic, 0, 0, { maxBytes: 1 << 20 })), ['new']);
  assert.equal(broker.purgeInProgress(topic), undefined);
  await broker.close();
  closedByTest();
});

test('a close during a purge waits for it; a log that fails to flush is purged all the same; a leftover renamed directory goes at the next start', async (t) => {
  const clock = new ManualClock();
  const { broker, dir } = await purgeTestBroker(t, clock);
  const topic = await broker.createTopic('default', 'closing', { partitions: 2 });
  for (const p of [0, 1]) await broker.append(topic, p, batch(clock, ['old']));
  const log0 = broker.partition(topic, 0);
  const closeLog0 = log0.close.bind(log0);
  log0.close = async () => {
    await closeLog0();
    throw new Error('flush failed');
  };
  const { inPurge, release } = holdPurgeStart(broker);
  const purged = broker.purgeTopic(topic);
  await inPurge;
  const closed = broker.close();
  release();
  await purged;
  await closed;
  // A crash after a purge renamed a partition directory away, before it was removed.
  const leftover = join(dir, 'logs', String(topic.internalId), `1${'.purged'}`);
  mkdirSync(leftover);
  const reopened = await Broker.open(options(dir, clock));
  try {
    for (const p of [0, 1]) assert.equal(reopened.partition(reopened.catalog.requireTopic({ topic: 'closing' }), p).stats().highWatermark, 0);
    assert.equal(existsSync(leftover), false);
  } finally {
    await reopened.close();
  }
});

test('a purge that fails at a partition leaves it with its records and the partitions after it untouched', async (t) => {
  const clock = new ManualClock();
  const { broker, closedByTest } = await purgeTestBroker(t, clock);
  const topic = await broker.createTopic('default', 'failing', { partitions: 2 });
  await broker.append(topic, 0, batch(clock, ['zero']));
  const { producerId, epoch } = await broker.producers.initProducer();
  const idempotent = () => batch(clock, ['idem'], { producerId, producerEpoch: epoch, baseSequence: 0 });
  await broker.append(topic, 1, idempotent());
  const internals = (broker as unknown as { logs: { discardPartitionDir(id: number, p: number): Promise<void> } }).logs;
  internals.discardPartitionDir = async () => {
    throw new Error('EIO on rename');
  };
  await assert.rejects(broker.purgeTopic(topic), /EIO on rename/);
  assert.equal(broker.purgeInProgress(topic), undefined);
  // Partition 0 was opened again with its records, and takes appends.
  assert.deepEqual(values(await broker.read(topic, 0, 0, { maxBytes: 1 << 20 })), ['zero']);
  assert.equal((await broker.append(topic, 0, batch(clock, ['one']))).baseOffset, 1);
  // Partition 1 was not reached: its producer state holds, so a retried batch is not appended twice.
  assert.equal((await broker.append(topic, 1, idempotent())).baseOffset, 0);
  assert.deepEqual(values(await broker.read(topic, 1, 0, { maxBytes: 1 << 20 })), ['idem']);
  await broker.close();
  closedByTest();
});

test('deleting a topic or removing partitions drops their metric series', async (t) => {
  const clock = new ManualClock();
  const broker = await Broker.open(options(tempDir(t), clock));
  const topic = await broker.createTopic('default', 'gone', { partitions: 3 });
  for (let p = 0; p < 3; p++) await broker.append(topic, p, batch(clock, ['v']));
  const series = (partition: number) => new RegExp(`quartet_partition_(appended_bytes_total|appended_records_total|log_end_offset)\\{namespace="default",partition="${partition}",topic="gone"\\}`);
  for (let p = 0; p < 3; p++) assert.match(broker.metrics.render(), series(p));
  await broker.removePartitions(topic, 1);
  const afterRemove = broker.metrics.render();
  assert.match(afterRemove, series(0));
  assert.doesNotMatch(afterRemove, series(1));
  assert.doesNotMatch(afterRemove, series(2));
  await broker.deleteTopic(topic);
  assert.doesNotMatch(broker.metrics.render(), /topic="gone"/);
  await broker.close();
});

test('renaming a topic moves its metric series to the new name', async (t) => {
  const clock = new ManualClock();
  const broker = await Broker.open(options(tempDir(t), clock));
  const topic = await broker.createTopic('default', 'before', { partitions: 1 });
  await broker.append(topic, 0, batch(clock, ['a', 'b']));
  await broker.catalog.renameTopic(topic, 'after');
  const text = broker.metrics.render();
  assert.doesNotMatch(text, /topic="before"/);
  assert.match(text, /quartet_partition_log_end_offset\{namespace="default",partition="0",topic="after"\} 2/);
  await broker.append({ topic: 'after' }, 0, batch(clock, ['c']));
  assert.equal(broker.metrics.counter('quartet_partition_appended_records_total', '').get({ namespace: 'default', topic: 'after', partition: '0' }), 1);
  await broker.close();
});

test('deletion listeners hear of each topic and then the namespace before its id is handed out again; a failing one fails nothing', async (t) => {
  const broker = await Broker.open(options(tempDir(t), new ManualClock()));
  t.after(() => broker.close());
  const ns = await broker.createNamespace('a');
  await broker.createTopic('a', 't', { partitions: 1 });
  const heard: string[] = [];
  // Slow and failing listeners: the deletion still completes, and a creation queued meanwhile
  // (which takes the freed id) waits for them.
  broker.onTopicChanges({
    topicDeleted: async (topic) => {
      await new Promise((resolve) => setImmediate(resolve));
      heard.push(`topic ${topic.name}, namespaces ${broker.catalog.listNamespaces().map((n) => n.name).join(',')}`);
      throw new Error('listener failed');
    },
    namespaceDeleted: async (gone) => {
      await new Promise((resolve) => setImmediate(resolve));
      heard.push(`namespace ${gone.name}, namespaces ${broker.catalog.listNamespaces().map((n) => n.name).join(',')}`);
      throw new Error('listener failed');
    },
  });
  const deleted = broker.deleteNamespace(ns.id);
  const created = broker.createNamespace('b');
  assert.equal((await deleted).name, 'a');
  assert.equal((await created).id, ns.id, 'the freed id, taken after the listeners');
  // The namespace left the catalog with its topics, in one step, before any listener heard.
  assert.deepEqual(heard, ['topic t, namespaces ', 'namespace a, namespaces ']);
  assert.equal(broker.catalog.getNamespace('a'), null);
});

test('creation listeners hear of a topic once it is in the catalog, before the creation returns; a failing one fails nothing', async (t) => {
  const broker = await Broker.open(options(tempDir(t), new ManualClock()));
  const heard: string[] = [];
  broker.onTopicChanges({
    topicCreated: async (topic) => {
      await new Promise((resolve) => setImmediate(resolve));
      heard.push(`${topic.namespace}/${topic.name} visible=${broker.catalog.getTopic({ topic: topic.name, namespace: topic.namespace }) !== null}`);
      throw new Error('listener failed');
    },
  });
  const created = await broker.createTopic('default', 'fresh', { partitions: 2 });
  assert.deepEqual(heard, ['default/fresh visible=true']);
  assert.equal(created.partitions, 2);
  await assert.rejects(broker.createTopic('default', 'fresh', { partitions: 1 }), (err: unknown) => isQuartetError(err) && err.code === 'topic_exists');
  assert.deepEqual(heard, ['default/fresh visible=true'], 'a refused creation is not heard');
  await broker.close();
});
