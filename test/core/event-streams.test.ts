// Event-sourced aggregates over the partition logs (src/core/event-streams.ts): optimistic
// concurrency, exact retries, the index rebuilt from the log after a restart and caught up with
// records another writer appended, snapshots in the metadata store, and what a topic deletion
// takes with it. Events are neutral-format records here (version and event id in headers): the
// core knows events only through the reader it is given.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Broker, type Topic } from '../../src/core/broker.js';
import { ManualClock } from '../../src/base/clock.js';
import { EventStreams, eventIndexCost, payloadDigest, type EventRecordsFn } from '../../src/core/event-streams.js';
import { BatchFormat, decodeNeutralBatch, encodeNeutralBatch, type AppendRequest } from '../../src/log/index.js';
import { tempDir, testScryptCost } from './helpers.js';

const header = (name: string, headers: Array<{ key: string; value: Buffer | null }>): string | null => headers.find((h) => h.key === name)?.value?.toString() ?? null;

/** Neutral records with a `v` header are events of their key. */
const neutralEvents: EventRecordsFn = (batch) =>
  decodeNeutralBatch(batch).flatMap((r) => {
    const v = header('v', r.headers);
    return v === null || r.key === null ? [] : [{ offset: r.offset, key: r.key, version: Number(v), eventId: header('id', r.headers), payload: r.value ?? Buffer.alloc(0) }];
  });

function eventRecord(key: string, version: number, payload: string, eventId: string | null = null): AppendRequest {
  const headers = [{ key: 'v', value: String(version) }, ...(eventId === null ? [] : [{ key: 'id', value: eventId }])];
  return encodeNeutralBatch([{ key, value: payload, headers }], { timestamp: 1000 });
}

function append(streams: EventStreams, topic: Topic, key: string, version: number, payload: string, eventId: string | null = null) {
  return streams.append(topic, 0, { key: Buffer.from(key), version, eventId, payload: Buffer.from(payload), build: (v) => eventRecord(key, v, payload, eventId) });
}

async function openBroker(t: { after(fn: () => Promise<void> | void): void }, dataDir: string, memory = false): Promise<Broker> {
  const broker = await Broker.open({ dataDir, memory, clock: new ManualClock(), rootUser: { username: 'root', password: 'pw' }, maintenanceIntervalMs: 0, scryptCost: testScryptCost });
  t.after(() => broker.close());
  return broker;
}

function streamsOf(broker: Broker): EventStreams {
  return new EventStreams({ broker, readers: { [BatchFormat.neutral]: neutralEvents } });
}

test('an event is appended only as the next version; an exact retry is answered without a second append', async (t) => {
  const broker = await openBroker(t, tempDir(t), true);
  const topic = await broker.createTopic('default', 'orders', { partitions: 1 });
  const streams = streamsOf(broker);
  assert.deepEqual(await append(streams, topic, 'o-1', 1, 'created', 'e1'), { kind: 'appended', version: 1, offset: 0 });
  assert.deepEqual(await append(streams, topic, 'o-2', 1, 'other'), { kind: 'appended', version: 1, offset: 1 });
  assert.deepEqual(await append(streams, topic, 'o-1', 3, 'skipped'), { kind: 'conflict', current: 1 }, 'a gap is a conflict');
  assert.deepEqual(await append(streams, topic, 'o-1', 1, 'created', 'e1'), { kind: 'duplicate', version: 1, offset: 0 }, 'same id and payload');
  assert.deepEqual(await append(streams, topic, 'o-1', 1, 'changed', 'e1'), { kind: 'conflict', current: 1 }, 'same id, other payload');
  assert.deepEqual(await append(streams, topic, 'o-1', 1, 'created'), { kind: 'conflict', current: 1 }, 'no event id: never a retry');
  assert.deepEqual(await append(streams, topic, 'o-1', 2, 'paid', 'e2'), { kind: 'appended', version: 2, offset: 2 });
  assert.equal(broker.partition(topic, 0).stats().nextOffset, 3, 'the retry appended nothing');
  const read = await streams.events(topic, 0, Buffer.from('o-1'), 2);
  assert.equal(read.current, 2);
  assert.deepEqual(read.events.map((e) => [e.version, e.offset, e.eventId]), [[2, 2, 'e2']]);
  assert.ok(read.events[0]!.digest.equals(payloadDigest(Buffer.from('paid'))));
  assert.equal(await streams.version(topic, 0, Buffer.from('none')), 0);
});

test('two appends racing for the same version: exactly one wins', async (t) => {
  const broker = await openBroker(t, tempDir(t), true);
  const topic = await broker.createTopic('default', 'race', { partitions: 1 });
  const streams = streamsOf(broker);
  const outcomes = await Promise.all([append(streams, topic, 'k', 1, 'a'), append(streams, topic, 'k', 1, 'b'), append(streams, topic, 'k', 1, 'c')]);
  assert.deepEqual(outcomes.map((o) => o.kind).sort(), ['appended', 'conflict', 'conflict']);
  assert.equal(broker.partition(topic, 0).stats().nextOffset, 1);
  assert.equal(await streams.version(topic, 0, Buffer.from('k')), 1);
});

test('after a restart the versions are rebuilt from the log and the snapshots are still there', async (t) => {
  const dir = tempDir(t);
  let broker = await openBroker(t, dir);
  let topic = await broker.createTopic('default', 'durable', { partitions: 1 });
  let streams = streamsOf(broker);
  for (let v = 1; v <= 3; v++) assert.equal((await append(streams, topic, 'agg', v, `event ${v}`, `id-${v}`)).kind, 'appended');
  assert.deepEqual(await streams.saveSnapshot(topic, 0, Buffer.from('agg'), { version: 4, payload: Buffer.from('too new') }), { kind: 'exceeds', current: 3 });
  assert.deepEqual(await streams.saveSnapshot(topic, 0, Buffer.from('agg'), { version: 2, payload: Buffer.from('state@2') }), { kind: 'saved' });
  streams.close();
  await broker.close();

  broker = await openBroker(t, dir);
  topic = broker.catalog.requireTopic({ topic: 'durable' });
  streams = streamsOf(broker);
  assert.equal(await streams.version(topic, 0, Buffer.from('agg')), 3);
  assert.deepEqual(await append(streams, topic, 'agg', 3, 'event 3', 'id-3'), { kind: 'duplicate', version: 3, offset: 2 }, 'event ids and digests are rebuilt too');
  assert.deepEqual(await append(streams, topic, 'agg', 3, 'late'), { kind: 'conflict', current: 3 });
  const snapshot = await streams.snapshot(topic, 0, Buffer.from('agg'));
  assert.deepEqual([snapshot?.version, snapshot?.payload.toString()], [2, 'state@2']);
  await broker.close(); // before the directory goes (hooks run in the order they were added)
});

test('events another writer appended are indexed before the next operation; other records are not events', async (t) => {
  const broker = await openBroker(t, tempDir(t), true);
  const topic = await broker.createTopic('default', 'shared', { partitions: 1 });
  const streams = streamsOf(broker);
  assert.equal((await append(streams, topic, 'k', 1, 'one')).kind, 'appended');
  await broker.append(topic, 0, encodeNeutralBatch([{ key: 'k', value: 'plain record' }], { timestamp: 1000 }));
  await broker.append(topic, 0, eventRecord('k', 2, 'two', 'x'));
  await broker.append(topic, 0, eventRecord('k', 2, 'two again', 'y'));
  const read = await streams.events(topic, 0, Buffer.from('k'));
  assert.deepEqual(read.events.map((e) => [e.version, e.offset]), [[1, 0], [2, 2]], 'the record written as an older version is no event');
});

test('a deleted topic takes its streams and snapshots with it; the same name starts over', async (t) => {
  const broker = await openBroker(t, tempDir(t), true);
  let topic = await broker.createTopic('default', 'gone', { partitions: 1 });
  const streams = streamsOf(broker);
  await append(streams, topic, 'k', 1, 'one');
  await streams.saveSnapshot(topic, 0, Buffer.from('k'), { version: 1, payload: Buffer.from('s') });
  await broker.deleteTopic(topic);
  topic = await broker.createTopic('default', 'gone', { partitions: 1 });
  assert.equal(await streams.version(topic, 0, Buffer.from('k')), 0);
  assert.equal(await streams.snapshot(topic, 0, Buffer.from('k')), null);
});

test('every partition index together stays under indexBytesMax: an append past it is refused before writing, a scan past it refuses rather than answer partially', async (t) => {
  const dir = tempDir(t);
  const broker = await openBroker(t, dir, true);
  const a = await broker.createTopic('default', 'a', { partitions: 1 });
  const b = await broker.createTopic('default', 'b', { partitions: 1 });
  const k = Buffer.from('k1');
  // Room for two new streams of a 2-byte key and one more event, not for a third stream.
  const max = 2 * eventIndexCost(k, true) + eventIndexCost(k, false);
  const streams = new EventStreams({ broker, readers: { [BatchFormat.neutral]: neutralEvents }, indexBytesMax: max });
  assert.equal((await append(streams, a, 'k1', 1, 'x')).kind, 'appended');
  assert.equal((await append(streams, b, 'k1', 1, 'x')).kind, 'appended', 'the bound is over both topics');
  assert.equal((await append(streams, a, 'k1', 2, 'y')).kind, 'appended');
  assert.equal(streams.indexBytes, max);
  await assert.rejects(append(streams, b, 'k2', 1, 'z'), (e: Error & { code?: string }) => e.code === 'resource_exhausted' && /holds \d+ of the \d+ bytes it may/.test(e.message));
  await assert.rejects(append(streams, b, 'k1', 2, 'z'), { code: 'resource_exhausted' });
  assert.equal(broker.partition(b, 0).stats().nextOffset, 1, 'a refused append writes nothing');
  assert.equal(await streams.version(a, 0, k), 2, 'reads go on');

  // Deleting a topic frees what its index held.
  await broker.deleteTopic(b);
  assert.equal(streams.indexBytes, eventIndexCost(k, true) + eventIndexCost(k, false));
  const c = await broker.createTopic('default', 'c', { partitions: 1 });
  assert.equal((await append(streams, c, 'k1', 1, 'x')).kind, 'appended');

  // A fresh instance with a smaller bound scans a's log: the partition does not fit, so it is refused, not half-indexed.
  const small = new EventStreams({ broker, readers: { [BatchFormat.neutral]: neutralEvents }, indexBytesMax: eventIndexCost(k, true) });
  await assert.rejects(small.version(a, 0, k), { code: 'resource_exhausted' });
  assert.equal(small.indexBytes, 0, 'the partial index was dropped');
  assert.equal(await small.version(c, 0, k), 1, 'a partition that fits is served');
  streams.close();
  small.close();
});
