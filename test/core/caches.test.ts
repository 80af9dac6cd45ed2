// The cache service (src/core/caches/): values with TTLs on an injected clock, counters and their
// i64 range, limits, the topics the state lives in (read back by a Kafka-format read), compaction
// and a restart on the same data directory.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BatchFormat, decodeNeutralBatch, encodeNeutralBatch, type NeutralRecord } from '../../src/log/index.js';
import { cacheTopicName, expiredHeader, expiresAtHeader, i64Max, i64Min, shardOfKey } from '../../src/core/caches/index.js';
import { murmur2 } from '../../src/core/caches/records.js';
import { Broker } from '../../src/core/broker.js';
import { ManualClock } from '../../src/base/clock.js';
import { FaultyFileSystem } from '../../src/log/fs.js';
import { testScryptCost } from './helpers.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { batchRecords, buildRecordBatch, readBatchHeader } from '../../src/protocols/kafka/codec/record-batch.js';
import { appendRequestFromBatch } from '../../src/protocols/kafka/codec/kafka-format.js';
import { code, openBroker, openCaches, smallSegments } from './caches-helpers.js';

const v = (s: string): Buffer => Buffer.from(s);

async function records(broker: Broker, topic: string, partition = 0, namespace = 'default'): Promise<NeutralRecord[]> {
  const batches = await broker.read({ namespace, topic }, partition, 0, { maxBytes: 1 << 24 });
  return batches.flatMap((b) => decodeNeutralBatch(b));
}

const header = (r: NeutralRecord, name: string): string | undefined => r.headers.find((h) => h.key === name)?.value?.toString();

test('put, get and delete: offsets, the removed value, a delete of nothing writes nothing', async (t) => {
  const { broker, caches } = await openCaches(t);
  assert.equal(await caches.get('default', 'sessions', 'a'), null, 'a cache never written reads empty');
  assert.equal(broker.catalog.getTopic({ topic: '__cache.sessions' }), null, 'a read creates nothing');
  const first = await caches.put('default', 'sessions', 'a', v('one'));
  const second = await caches.put('default', 'sessions', 'b', v('two'));
  assert.deepEqual([first.offset, second.offset, first.expiresAtMillis], [0, 1, 0]);
  assert.deepEqual(await caches.get('default', 'sessions', 'a'), v('one'));
  await caches.put('default', 'sessions', 'a', v('uno'));
  assert.deepEqual(await caches.delete('default', 'sessions', 'a'), v('uno'));
  assert.equal(await caches.get('default', 'sessions', 'a'), null);
  assert.equal(await caches.delete('default', 'sessions', 'a'), null);
  const stored = await records(broker, '__cache.sessions');
  assert.deepEqual(
    stored.map((r) => [r.offset, r.key!.toString(), r.value?.toString() ?? null]),
    [[0, 'a', 'one'], [1, 'b', 'two'], [2, 'a', 'uno'], [3, 'a', null]],
    'one record per change; the second delete appended nothing',
  );
  const topic = broker.catalog.requireTopic({ topic: '__cache.sessions' });
  assert.equal(broker.logConfigFor(topic).cleanupPolicy, 'compact');
  assert.deepEqual(caches.describeCache('default', 'sessions'), { scope: 'default', cache: 'sessions', shards: 1, valuesTopic: '__cache.sessions', countersTopic: null });
  assert.deepEqual(caches.listCaches('default'), ['sessions']);
});

test('TTL: absolute expiry in the record; expired reads as absent and gets a tombstone', async (t) => {
  const { broker, caches, clock } = await openCaches(t);
  const now = clock.now();
  const put = await caches.put('default', 'c', 'k', v('x'), { ttlMs: 1000 });
  assert.equal(put.expiresAtMillis, now + 1000);
  assert.equal((await caches.getEntry('default', 'c', 'k'))?.expiresAtMillis, now + 1000);
  clock.advance(999);
  assert.deepEqual(await caches.get('default', 'c', 'k'), v('x'));
  clock.advance(1);
  assert.equal(await caches.get('default', 'c', 'k'), null, 'expired at its expiry time');
  // The read queued the tombstone on the cache's queue; a sweep runs after it and finds nothing left.
  assert.equal(await caches.sweepExpired(), 0);
  const stored = await records(broker, '__cache.c');
  assert.equal(stored.length, 2);
  assert.equal(header(stored[0]!, expiresAtHeader), String(now + 1000));
  assert.equal(stored[1]!.value, null);
  assert.equal(header(stored[1]!, expiredHeader), '1');
  assert.equal(await caches.delete('default', 'c', 'k'), null);
});

test('TTL: the sweep tombstones what expired; a rewrite before the sweep keeps the key', async (t) => {
  const { broker, caches, clock } = await openCaches(t);
  await caches.put('default', 'c', 'gone', v('1'), { ttlMs: 10 });
  await caches.put('default', 'c', 'renewed', v('2'), { ttlMs: 10 });
  await caches.put('default', 'c', 'forever', v('3'));
  clock.advance(5);
  await caches.put('default', 'c', 'renewed', v('2b'), { ttlMs: 100 });
  clock.advance(10);
  assert.equal(await caches.sweepExpired(), 1);
  assert.equal(await caches.sweepExpired(), 0, 'nothing twice');
  assert.equal(await caches.get('default', 'c', 'gone'), null);
  assert.deepEqual(await caches.get('default', 'c', 'renewed'), v('2b'));
  assert.deepEqual(await caches.get('default', 'c', 'forever'), v('3'));
  const last = (await records(broker, '__cache.c')).at(-1)!;
  assert.deepEqual([last.key!.toString(), last.value], ['gone', null]);
});

test('bad input is refused with a core code and writes nothing', async (t) => {
  const { broker, caches } = await openCaches(t, { limits: { keyBytesMax: 8, valueBytesMax: 16, cacheBytesMax: 150, cachesPerScopeMax: 2 } });
  for (const ttlMs of [0, -1, 1.5, Number.NaN, 11 * 365 * 24 * 3600 * 1000]) {
    await assert.rejects(caches.put('default', 'c', 'k', v('x'), { ttlMs }), code('invalid_request'), `ttl ${ttlMs}`);
  }
  await assert.rejects(caches.put('default', 'c', 'k'.repeat(9), v('x')), code('invalid_request'));
  await assert.rejects(caches.put('default', 'c', 'a\ud800', v('x')), code('invalid_request'), 'a lone surrogate');
  await assert.rejects(caches.put('default', 'c', 'k', Buffer.alloc(17)), code('record_too_large'));
  await assert.rejects(caches.put('nowhere', 'c', 'k', v('x')), code('unknown_namespace'));
  await assert.rejects(caches.put('default', '', 'k', v('x')), code('invalid_name'));
  await assert.rejects(caches.put('default', 'bad\u0001name', 'k', v('x')), code('invalid_name'));
  assert.equal(broker.catalog.getTopic({ topic: '__cache.c' }), null, 'nothing created by refused puts');
  // The index bound: 64 bytes of overhead per entry, so the third entry passes 150.
  await caches.put('default', 'c', 'a', v('1'));
  await caches.put('default', 'c', 'b', v('1'));
  await assert.rejects(caches.put('default', 'c', 'c', v('1')), code('resource_exhausted'));
  await caches.put('default', 'c', 'a', v('2'), {});
  assert.equal((await records(broker, '__cache.c')).length, 3, 'the refused put wrote nothing; replacing an entry of the same size is allowed');
  await caches.delete('default', 'c', 'b');
  await caches.put('default', 'c', 'c', v('1'));
  // Caches per scope.
  await caches.counterAdd('default', 'd', 'k', 1n);
  await assert.rejects(caches.put('default', 'e', 'k', v('x')), code('resource_exhausted'));
  await caches.put('default', 'd', 'k', v('x')); // the same cache's values: no new cache
});

test('caches without auto-creation: created explicitly, unknown ones refused', async (t) => {
  const { caches } = await openCaches(t, { autoCreate: false });
  await assert.rejects(caches.put('default', 'c', 'k', v('x')), code('unknown_topic'));
  await assert.rejects(caches.get('default', 'c', 'k'), code('unknown_topic'));
  await assert.rejects(caches.counterAdd('default', 'c', 'k', 1n), code('unknown_topic'));
  await caches.createCache('default', 'c', { shards: 3 });
  await assert.rejects(caches.createCache('default', 'c'), code('topic_exists'));
  await caches.put('default', 'c', 'k', v('x'));
  assert.equal(await caches.counterAdd('default', 'c', 'k', 2n), 2n, 'counters of a created cache are created on first add');
  assert.equal(caches.describeCache('default', 'c')?.countersTopic, '__counter.c');
});

test('counters: absolute values in the log, never written is null, i64 overflow refused', async (t) => {
  const { broker, caches } = await openCaches(t);
  assert.equal(await caches.counterGet('default', 'hits', 'x'), null);
  assert.equal(await caches.counterAdd('default', 'hits', 'x', 5n), 5n);
  assert.equal(await caches.counterAdd('default', 'hits', 'x', -7n), -2n);
  assert.equal(await caches.counterGet('default', 'hits', 'x'), -2n);
  assert.equal(await caches.counterAdd('default', 'hits', 'zero', 0n), 0n);
  assert.equal(await caches.counterGet('default', 'hits', 'zero'), 0n, 'a sum of zero is not "never written"');
  assert.deepEqual((await records(broker, '__counter.hits')).map((r) => r.value!.toString()), ['5', '-2', '0']);
  // Counters live beside the values: the same key is another thing.
  assert.equal(await caches.get('default', 'hits', 'x'), null);
  await caches.put('default', 'hits', 'x', v('text'));
  assert.equal(await caches.counterGet('default', 'hits', 'x'), -2n);

  assert.equal(await caches.counterAdd('default', 'hits', 'big', i64Max), i64Max);
  await assert.rejects(caches.counterAdd('default', 'hits', 'big', 1n), (err: Error & { code?: string }) => err.code === 'invalid_request' && /overflow/.test(err.message));
  assert.equal(await caches.counterGet('default', 'hits', 'big'), i64Max, 'the refused add changed nothing');
  assert.equal(await caches.counterAdd('default', 'hits', 'small', i64Min), i64Min);
  await assert.rejects(caches.counterAdd('default', 'hits', 'small', -1n), code('invalid_request'));
  await assert.rejects(caches.counterAdd('default', 'hits', 'x', i64Max + 1n), code('invalid_request'));
});

test('counters: concurrent adds are serialised, every add sees the ones before it', async (t) => {
  const { caches } = await openCaches(t);
  const n = 100;
  const results = await Promise.all(Array.from({ length: n }, () => caches.counterAdd('default', 'c', 'k', 1n)));
  assert.deepEqual([...results].sort((a, b) => Number(a - b)), Array.from({ length: n }, (_, i) => BigInt(i + 1)));
  assert.equal(await caches.counterGet('default', 'c', 'k'), BigInt(n));
});

test('restart: values, expiries and counters come back from the log', async (t) => {
  const { broker, caches, clock, dataDir, defer } = await openCaches(t);
  await caches.put('default', 'c', 'a', v('1'));
  await caches.put('default', 'c', 'b', v('2'), { ttlMs: 1000 });
  await caches.put('default', 'c', 'a', v('3'));
  await caches.delete('default', 'c', 'gone');
  await caches.counterAdd('default', 'c', 'n', 41n);
  await caches.counterAdd('default', 'c', 'n', 1n);
  await broker.close();
  assert.equal(caches.watchCount, 0);

  const reopened = await openBroker(dataDir, clock);
  defer(() => reopened.close());
  const again = reopened.caches;
  assert.deepEqual(await again.get('default', 'c', 'a'), v('3'));
  assert.deepEqual(await again.getEntry('default', 'c', 'b'), { value: v('2'), offset: 1, shard: 0, expiresAtMillis: clock.now() + 1000 });
  assert.equal(await again.counterGet('default', 'c', 'n'), 42n);
  assert.equal(await again.counterAdd('default', 'c', 'n', 8n), 50n);
  clock.advance(1000);
  assert.equal(await again.get('default', 'c', 'b'), null, 'the expiry survived the restart');
});

test('compaction keeps the latest record per key; the index rebuilt from the compacted log is the same', async (t) => {
  const { broker, caches, clock, dataDir, defer } = await openCaches(t, { topicConfig: smallSegments });
  for (let i = 0; i < 60; i++) await caches.put('default', 'c', `k${i % 4}`, v(`value-${i}`));
  await caches.delete('default', 'c', 'k3');
  await caches.counterAdd('default', 'c', 'n', 60n);
  const before = await records(broker, '__cache.c');
  await broker.runMaintenance();
  const after = await records(broker, '__cache.c');
  assert.ok(after.length < before.length / 2, `compaction removed superseded values (${before.length} → ${after.length})`);
  await broker.close();
  const reopened = await openBroker(dataDir, clock);
  defer(() => reopened.close());
  const again = reopened.caches;
  assert.deepEqual(await again.get('default', 'c', 'k0'), v('value-56'));
  assert.deepEqual(await again.get('default', 'c', 'k1'), v('value-57'));
  assert.deepEqual(await again.get('default', 'c', 'k2'), v('value-58'));
  assert.equal(await again.get('default', 'c', 'k3'), null);
  assert.equal(await again.counterGet('default', 'c', 'n'), 60n);
});

test('a Kafka-format read of the cache topic sees every change, with its expiry header and tombstones', async (t) => {
  const { broker, caches, clock } = await openCaches(t);
  await caches.put('default', 'c', 'user/1', v('alice'), { ttlMs: 5000 });
  await caches.delete('default', 'c', 'user/1');
  const topic = broker.catalog.requireTopic({ topic: cacheTopicName('cache', 'c') });
  const reader = broker.reads.open(topic, 0);
  const read = await reader.readBatches({ offset: 0, isolation: 'read_uncommitted', format: BatchFormat.kafka, bytesMax: 1 << 20, firstBatchWhole: true });
  const kafka = (read.chunks ?? []).flatMap((chunk) => {
    const batch = chunk as Buffer;
    const header = readBatchHeader(batch);
    const decoded = batchRecords(batch, header);
    assert.ok(decoded.ok);
    return decoded.value.map((r) => ({ offset: header.baseOffset + r.offsetDelta, key: r.key?.toString(), value: r.value?.toString() ?? null, headers: r.headers.map((h) => [h.key, h.value?.toString()]) }));
  });
  assert.deepEqual(kafka, [
    { offset: 0, key: 'user/1', value: 'alice', headers: [[expiresAtHeader, String(clock.now() + 5000)]] },
    { offset: 1, key: 'user/1', value: null, headers: [] },
  ]);
});

test('shards: keys hash as Kafka\'s default partitioner does; a key lives in its shard', async (t) => {
  // Kafka's own murmur2 vectors (org.apache.kafka.common.utils.UtilsTest).
  const vectors: Array<[string, number]> = [
    ['21', -973932308],
    ['foobar', -790332482],
    ['a-little-bit-long-string', -985981536],
    ['a-little-bit-longer-string', -1486304829],
    ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
    ['abc', 479470107],
  ];
  for (const [input, expected] of vectors) assert.equal(murmur2(Buffer.from(input)), expected, input);
  const { broker, caches } = await openCaches(t);
  await caches.createCache('default', 'sharded', { shards: 4 });
  const keys = Array.from({ length: 20 }, (_, i) => `key-${i}`);
  for (const key of keys) await caches.put('default', 'sharded', key, v(key));
  for (const key of keys) {
    const shard = shardOfKey(key, 4);
    assert.equal(caches.shardOf('default', 'sharded', key), shard);
    assert.equal((await caches.getEntry('default', 'sharded', key))?.shard, shard);
    assert.ok((await records(broker, '__cache.sharded', shard)).some((r) => r.key!.toString() === key));
  }
  assert.ok(new Set(keys.map((k) => shardOfKey(k, 4))).size > 1, 'keys spread over the shards');
  await assert.rejects(caches.createCache('default', 'too-many', { shards: 1000 }), code('invalid_partitions'));
});

test('another writer\'s records in the cache topic are read into the cache', async (t) => {
  const { broker, caches } = await openCaches(t);
  await caches.put('default', 'c', 'a', v('1'));
  await broker.append({ topic: '__cache.c' }, 0, encodeNeutralBatch([{ key: 'b', value: 'from elsewhere' }, { key: null, value: 'no key' }]));
  assert.deepEqual(await caches.get('default', 'c', 'b'), v('from elsewhere'));
  await caches.counterAdd('default', 'c', 'm', 1n);
  await broker.append({ topic: '__counter.c' }, 0, encodeNeutralBatch([{ key: 'n', value: 'not a number' }]));
  await assert.rejects(caches.counterGet('default', 'c', 'n'), code('invalid_request'));
});

test('a Kafka producer\'s keyed records in the cache topic are puts, with their expiry header; a null value is a delete', async (t) => {
  const { broker, caches, clock } = await openCaches(t);
  await caches.createCache('default', 'c');
  const expiry = clock.now() + 2000;
  const batch = buildRecordBatch([
    { key: Buffer.from('k'), value: Buffer.from('from kafka'), timestamp: clock.now(), headers: [{ key: expiresAtHeader, value: Buffer.from(String(expiry)) }] },
    { key: Buffer.from('gone'), value: Buffer.from('x'), timestamp: clock.now() },
    { key: Buffer.from('gone'), value: null, timestamp: clock.now() },
  ]);
  const request = appendRequestFromBatch(batch);
  assert.ok(request.ok);
  await broker.append({ topic: '__cache.c' }, 0, request.request);
  assert.deepEqual(await caches.getEntry('default', 'c', 'k'), { value: v('from kafka'), offset: 0, shard: 0, expiresAtMillis: expiry });
  assert.equal(await caches.get('default', 'c', 'gone'), null);
  clock.advance(2000);
  assert.equal(await caches.get('default', 'c', 'k'), null);
});

test('the index bound after a restart: a cache over it is read whole, grows no more, and shrinks', async (t) => {
  const { broker, caches, clock, dataDir, defer } = await openCaches(t);
  for (let i = 0; i < 4; i++) await caches.put('default', 'c', `k${i}`, Buffer.alloc(100));
  await broker.close();
  // 4 entries of 2 + 100 + 64 bytes = 664 bytes, over a bound of 400.
  const reopened = await openBroker(dataDir, clock, { limits: { cacheBytesMax: 400 } });
  defer(() => reopened.close());
  const again = reopened.caches;
  assert.equal((await again.get('default', 'c', 'k3'))?.length, 100, 'every entry is read back');
  await assert.rejects(again.put('default', 'c', 'k4', v('x')), code('resource_exhausted'));
  await assert.rejects(again.put('default', 'c', 'k0', Buffer.alloc(101)), code('resource_exhausted'));
  await again.put('default', 'c', 'k0', v('smaller'));
  await again.delete('default', 'c', 'k1');
  await again.delete('default', 'c', 'k2');
  await again.put('default', 'c', 'k4', v('fits again'));
});

test('writes queued together are decided in order, each against the ones before it, and appended as one batch', async (t) => {
  const { broker, caches } = await openCaches(t, { limits: { cacheBytesMax: 150 } });
  await caches.put('default', 'c', 'w', v('0')); // 66 bytes of index
  const settled = await Promise.allSettled([
    caches.put('default', 'c', 'a', v('1')), // 132
    caches.delete('default', 'c', 'a'), // sees the put before it: 66
    caches.put('default', 'c', 'b', v('2')), // 132
    caches.put('default', 'c', 'c', v('3')), // 198: refused alone
    caches.delete('default', 'c', 'nothing'), // writes nothing
  ]);
  assert.deepEqual(
    settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as { code: string }).code)),
    [{ shard: 0, offset: 1, expiresAtMillis: 0 }, v('1'), { shard: 0, offset: 3, expiresAtMillis: 0 }, 'resource_exhausted', null],
  );
  const batches = await broker.read({ topic: '__cache.c' }, 0, 0, { maxBytes: 1 << 20 });
  assert.equal(batches.length, 2, 'the queued writes went in one append');
  assert.deepEqual(decodeNeutralBatch(batches[1]!).map((r) => [r.offset, r.key!.toString(), r.value?.toString() ?? null]), [[1, 'a', '1'], [2, 'a', null], [3, 'b', '2']]);

  await caches.counterAdd('default', 'n', 'k', i64Max - 2n);
  const adds = await Promise.allSettled([1n, 1n, 1n, -5n].map((d) => caches.counterAdd('default', 'n', 'k', d)));
  assert.deepEqual(
    adds.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as { code: string }).code)),
    [i64Max - 1n, i64Max, 'invalid_request', i64Max - 5n],
  );
  assert.equal(await caches.counterGet('default', 'n', 'k'), i64Max - 5n);
});

test('a failed append fails every write queued in it and changes nothing the cache answers', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'quartet-caches-'));
  const logFs = new FaultyFileSystem();
  const broker = await Broker.open({ dataDir, clock: new ManualClock(), logFs, directWrites: null, rootUser: { username: 'root', password: 'pw' }, maintenanceIntervalMs: 0, scryptCost: testScryptCost, caches: { sweepIntervalMs: 0 } });
  t.after(async () => {
    // The log that failed a write refuses to flush on close: that is the failure under test.
    await broker.close().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  });
  const caches = broker.caches;
  await caches.put('default', 'c', 'a', v('kept'));
  await caches.counterAdd('default', 'c', 'n', 1n);
  logFs.failNextWrite();
  const settled = await Promise.allSettled([caches.put('default', 'c', 'a', v('lost')), caches.put('default', 'c', 'b', v('lost')), caches.delete('default', 'c', 'a')]);
  assert.deepEqual(settled.map((s) => s.status), ['rejected', 'rejected', 'rejected']);
  assert.ok(settled.every((s) => s.status === 'rejected' && (s.reason as { code?: string }).code === 'storage_error'));
  assert.deepEqual(await caches.get('default', 'c', 'a'), v('kept'));
  assert.equal(await caches.get('default', 'c', 'b'), null);
  assert.equal(await caches.counterGet('default', 'c', 'n'), 1n, 'the counters live in another topic: untouched');
});
