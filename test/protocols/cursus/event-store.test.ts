// The event-sourcing commands (src/protocols/cursus/handlers/events.ts) at the handler level over
// a real Broker: versions and conflicts (also under racing appends), routing by aggregate key,
// the stored CBV2 event fields, the two-frame READ_STREAM with snapshots, SAVE/READ_SNAPSHOT,
// topics without event sourcing, and a restart.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeBatch, type CursusBatch } from '../../../src/protocols/cursus/codec/batch.js';
import { encodeOkLine } from '../../../src/protocols/cursus/codec/lines.js';
import { cursusErrorRegistry, type CursusError } from '../../../src/protocols/cursus/codec/errors.js';
import type { CursusReply, CursusStreamSink } from '../../../src/protocols/cursus/handler.js';
import { fnv1a64Mod } from '../../../src/protocols/cursus/routing.js';
import { eventIndexCost } from '../../../src/core/event-streams.js';
import { tempDir } from '../../core/helpers.js';
import { openFixture, okFields, type Fixture } from './txn-event-fixtures.js';

interface StreamFrames {
  frames: Array<{ payload: Buffer; end: boolean }>;
  error: CursusError | null;
}

/** Runs a stream reply into a sink that records its frames. */
async function collect(reply: CursusReply): Promise<StreamFrames> {
  assert.equal(reply.kind, 'stream');
  const out: StreamFrames = { frames: [], error: null };
  const sink: CursusStreamSink = {
    send: async (payload, end = false) => void out.frames.push({ payload: Buffer.concat(payload), end }),
    fail: async (error) => void (out.error = error),
    closed: new AbortController().signal,
  };
  if (reply.kind === 'stream') await reply.run(sink);
  return out;
}

async function readStream(f: Fixture, fields: Record<string, string>): Promise<{ envelope: Record<string, unknown>; batch: CursusBatch }> {
  const r = await collect(await f.run('READ_STREAM', fields));
  assert.equal(r.error, null);
  assert.deepEqual(r.frames.map((x) => x.end), [false, true], 'two frames, the second with END');
  const envelope = JSON.parse(r.frames[0]!.payload.toString('utf8')) as Record<string, unknown>;
  const batch = decodeBatch(r.frames[1]!.payload);
  assert.ok(batch.ok, 'frame 2 is a CBV2 batch');
  return { envelope, batch: batch.value };
}

async function esTopic(f: Fixture, name: string, partitions = 4): Promise<void> {
  await f.broker.createTopic('default', name, { partitions });
  f.flags.set(name, { eventSourcing: true });
}

const append = (topic: string, key: string, version: number, message: string, extra: Record<string, string> = {}) => ({ topic, key, version: String(version), message, ...extra });

test('FNV-1a 64 as spec §8 hashes keys (known hashes, modulo a large prime)', () => {
  const n = 0x7fff_ffff;
  assert.equal(fnv1a64Mod(Buffer.alloc(0), n), Number(0xcbf29ce484222325n % BigInt(n)));
  assert.equal(fnv1a64Mod(Buffer.from('a'), n), Number(0xaf63dc4c8601ec8cn % BigInt(n)));
  assert.equal(fnv1a64Mod(Buffer.from('foobar'), n), Number(0x85944171f73967e8n % BigInt(n)));
});

test('APPEND_STREAM appends the next version to the partition of its key, with the event fields in the record', async (t) => {
  const f = await openFixture(t);
  await esTopic(f, 'orders');
  const partition = fnv1a64Mod(Buffer.from('order-1'), 4);
  const first = await f.ok('APPEND_STREAM', append('orders', 'order-1', 1, '{"total":10}', { event_type: 'OrderCreated', schema_version: '3', metadata: '{"src":"web"}', event_id: 'e-1' }));
  assert.deepEqual([...first], [['version', '1'], ['offset', '0'], ['partition', String(partition)]]);
  const second = await f.ok('APPEND_STREAM', append('orders', 'order-1', 2, 'paid'));
  assert.deepEqual([second.get('version'), second.get('offset')], ['2', '1']);
  const conflict = await f.fails('APPEND_STREAM', append('orders', 'order-1', 2, 'again'));
  assert.deepEqual([conflict.code, conflict.fields.get('current'), conflict.fields.get('expected')], ['version_conflict', '2', '2']);
  assert.equal((await f.fails('APPEND_STREAM', append('orders', 'order-1', 5, 'gap'))).code, 'version_conflict');
  assert.deepEqual([...(await f.ok('STREAM_VERSION', { topic: 'orders', key: 'order-1' }))], [['version', '2']]);
  assert.deepEqual([...(await f.ok('STREAM_VERSION', { topic: 'orders', key: 'nobody' }))], [['version', '0']]);

  const stored = await f.broker.read({ topic: 'orders' }, partition, 0, { maxBytes: 1 << 20 });
  const d = decodeBatch(stored[0]!.payload);
  assert.ok(d.ok);
  const r = d.value.records[0]!;
  assert.deepEqual(
    [r.offset, r.key?.toString(), r.eventType, r.schemaVersion, r.aggregateVersion, r.metadata, r.eventId, r.payload.toString()],
    [0, 'order-1', 'OrderCreated', 3, 1, '{"src":"web"}', 'e-1', '{"total":10}'],
  );
});

test('two APPEND_STREAMs racing for the same version: exactly one wins', async (t) => {
  const f = await openFixture(t);
  await esTopic(f, 'race');
  await f.ok('APPEND_STREAM', append('race', 'k', 1, 'base'));
  const results = await Promise.allSettled([f.ok('APPEND_STREAM', append('race', 'k', 2, 'left')), f.ok('APPEND_STREAM', append('race', 'k', 2, 'right'))]);
  assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
  const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
  assert.equal((lost.reason as { error: CursusError }).error.code, 'version_conflict');
  const { batch } = await readStream(f, { topic: 'race', key: 'k' });
  assert.deepEqual(batch.records.map((r) => r.aggregateVersion), [1, 2]);
});

test('READ_STREAM: the envelope, then the events after the snapshot that applies', async (t) => {
  const f = await openFixture(t);
  await esTopic(f, 'acct', 2);
  for (let v = 1; v <= 5; v++) await f.ok('APPEND_STREAM', append('acct', 'a-1', v, `event ${v}`));
  const partition = fnv1a64Mod(Buffer.from('a-1'), 2);
  let r = await readStream(f, { topic: 'acct', key: 'a-1' });
  assert.deepEqual(r.envelope, { status: 'OK', topic: 'acct', key: 'a-1', partition, count: 5 });
  assert.deepEqual([r.batch.topic, r.batch.partition, r.batch.acks, r.batch.idempotent], ['acct', partition, '1', false]);
  assert.deepEqual(r.batch.records.map((x) => x.payload.toString()), ['event 1', 'event 2', 'event 3', 'event 4', 'event 5']);
  r = await readStream(f, { topic: 'acct', key: 'a-1', from_version: '4' });
  assert.deepEqual(r.batch.records.map((x) => x.aggregateVersion), [4, 5]);

  const exceeds = await f.fails('SAVE_SNAPSHOT', { topic: 'acct', key: 'a-1', version: '6', message: 'state' });
  assert.deepEqual([exceeds.code, exceeds.fields.get('version'), exceeds.fields.get('current')], ['snapshot_version_exceeds_stream', '6', '5']);
  assert.deepEqual([...(await f.ok('READ_SNAPSHOT', { topic: 'acct', key: 'a-1' }))], [['snapshot', 'null']]);
  assert.deepEqual([...(await f.ok('SAVE_SNAPSHOT', { topic: 'acct', key: 'a-1', version: '3', message: 'balance=30' }))], [['version', '3'], ['partition', String(partition)]]);
  assert.deepEqual(JSON.parse((await f.ok('READ_SNAPSHOT', { topic: 'acct', key: 'a-1' })).get('snapshot')!), { version: 3, payload: 'balance=30' });

  r = await readStream(f, { topic: 'acct', key: 'a-1' });
  assert.deepEqual(r.envelope, { status: 'OK', topic: 'acct', key: 'a-1', partition, count: 2, snapshot: { version: 3, payload: 'balance=30' } });
  assert.deepEqual(r.batch.records.map((x) => x.aggregateVersion), [4, 5], 'the events after the snapshot');
  r = await readStream(f, { topic: 'acct', key: 'a-1', from_version: '5' });
  assert.equal(r.envelope.snapshot, undefined, 'a snapshot before from_version does not apply');
  assert.deepEqual(r.batch.records.map((x) => x.aggregateVersion), [5]);
  r = await readStream(f, { topic: 'acct', key: 'nobody' });
  assert.deepEqual([r.envelope.count, r.batch.records.length], [0, 0], 'an empty batch');

  for (const bad of ['0', 'x', '-1']) {
    const failed = await collect(await f.run('READ_STREAM', { topic: 'acct', key: 'a-1', from_version: bad }));
    assert.deepEqual(failed.frames, [], 'no frame before the error');
    assert.equal(failed.error?.code, 'invalid_from_version');
    assert.deepEqual(JSON.parse(failed.error!.message), { status: 'ERROR', error: 'invalid_from_version' });
  }
});

test('event commands on a topic without event sourcing, or no topic, are refused', async (t) => {
  const f = await openFixture(t);
  await f.broker.createTopic('default', 'plain', { partitions: 1 });
  const e = await f.fails('APPEND_STREAM', append('plain', 'k', 1, 'x'));
  assert.deepEqual([e.code, e.fields.get('topic')], ['event_sourcing_not_enabled', 'plain']);
  assert.equal((await f.fails('STREAM_VERSION', { topic: 'plain', key: 'k' })).code, 'event_sourcing_not_enabled');
  assert.equal((await f.fails('SAVE_SNAPSHOT', { topic: 'plain', key: 'k', version: '1', message: 's' })).code, 'event_sourcing_not_enabled');
  assert.equal((await f.fails('READ_SNAPSHOT', { topic: 'missing', key: 'k' })).code, 'topic_not_found');
  const read = await collect(await f.run('READ_STREAM', { topic: 'plain', key: 'k' }));
  assert.deepEqual([read.frames.length, read.error?.code], [0, 'event_sourcing_not_enabled']);
  assert.deepEqual(JSON.parse(read.error!.message), { status: 'ERROR', error: 'event_sourcing_not_enabled topic=plain' });
  await esTopic(f, 'es', 1);
  assert.equal((await f.fails('APPEND_STREAM', append('es', 'k', 0, 'x'))).code, 'invalid_version');
  assert.equal((await f.fails('APPEND_STREAM', append('es', 'k', 1, 'x', { schema_version: '-1' }))).code, 'invalid_schema_version');
  assert.equal((await f.fails('APPEND_STREAM', append('es', 'k', 1, 'x', { metadata: '{not json' }))).code, 'invalid_metadata');
  assert.equal((await f.fails('APPEND_STREAM', { topic: 'es', key: 'k', version: '1' })).code, 'missing_message');
  assert.equal(f.broker.partition({ topic: 'es' }, 0).stats().nextOffset, 0, 'nothing was appended');
});

test('versions, events and snapshots survive a restart', async (t) => {
  const dataDir = tempDir(t, 'quartet-cursus-es-');
  let f = await openFixture(t, { dataDir });
  await esTopic(f, 'ledger', 3);
  for (let v = 1; v <= 3; v++) await f.ok('APPEND_STREAM', append('ledger', 'acct-9', v, `entry ${v}`, { event_id: `id-${v}` }));
  await f.ok('APPEND_STREAM', append('ledger', 'acct-7', 1, 'other'));
  await f.ok('SAVE_SNAPSHOT', { topic: 'ledger', key: 'acct-9', version: '2', message: 'snap' });
  const flags = f.flags;
  await f.close();

  f = await openFixture(t, { dataDir, flags });
  assert.equal((await f.ok('STREAM_VERSION', { topic: 'ledger', key: 'acct-9' })).get('version'), '3');
  assert.equal((await f.ok('STREAM_VERSION', { topic: 'ledger', key: 'acct-7' })).get('version'), '1');
  assert.equal((await f.fails('APPEND_STREAM', append('ledger', 'acct-9', 3, 'stale'))).fields.get('current'), '3');
  const r = await readStream(f, { topic: 'ledger', key: 'acct-9' });
  assert.deepEqual([r.envelope.count, (r.envelope.snapshot as { version: number }).version], [1, 2]);
  assert.deepEqual(r.batch.records.map((x) => [x.aggregateVersion, x.eventId, x.payload.toString()]), [[3, 'id-3', 'entry 3']]);
  assert.equal((await f.ok('APPEND_STREAM', append('ledger', 'acct-9', 4, 'entry 4'))).get('version'), '4');
  await f.close();
});

test('READ_SNAPSHOT answers the snapshot as compact JSON in the OK line', async (t) => {
  const f = await openFixture(t);
  await esTopic(f, 'snap', 1);
  await f.ok('APPEND_STREAM', append('snap', 'k', 1, 'x'));
  await f.ok('SAVE_SNAPSHOT', { topic: 'snap', key: 'k', version: '1', message: 'two words' });
  const reply = await f.run('READ_SNAPSHOT', { topic: 'snap', key: 'k' });
  assert.equal(reply.kind, 'text');
  if (reply.kind !== 'text') return;
  const line = encodeOkLine(reply.fields);
  assert.equal(line.toString(), 'OK snapshot="{\\"version\\":1,\\"payload\\":\\"two words\\"}"', 'a value with a space is a JSON string literal (docs §7.1)');
  assert.deepEqual(JSON.parse(okFields(line).get('snapshot')!), { version: 1, payload: 'two words' });
});

test('past the event index bound APPEND_STREAM is event_index_exhausted (availability, not retryable) and appends nothing', async (t) => {
  const key = Buffer.from('order-1');
  const f = await openFixture(t, { eventIndexBytesMax: eventIndexCost(key, true) + eventIndexCost(key, false) });
  await esTopic(f, 'orders', 1);
  await f.ok('APPEND_STREAM', append('orders', 'order-1', 1, 'a'));
  await f.ok('APPEND_STREAM', append('orders', 'order-1', 2, 'b'));
  const full = await f.fails('APPEND_STREAM', append('orders', 'order-1', 3, 'c'));
  assert.deepEqual([full.code, [...full.fields]], ['event_index_exhausted', [['topic', 'orders'], ['partition', '0']]]);
  assert.deepEqual(cursusErrorRegistry.event_index_exhausted, { class: 'availability', retryable: false });
  assert.equal(f.broker.partition(f.broker.catalog.requireTopic({ topic: 'orders' }), 0).stats().nextOffset, 2, 'nothing was appended');
  assert.deepEqual([...(await f.ok('STREAM_VERSION', { topic: 'orders', key: 'order-1' }))], [['version', '2']], 'reads go on');
});
