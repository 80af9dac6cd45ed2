// CursusEventStore against the fake peer: APPEND_STREAM's fields and optimistic concurrency,
// READ_STREAM's two frames (envelope, then the batch) with and without a snapshot, load() with a
// snapshot applied, automatic snapshots every N events, and READ_STREAM failures.

import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { encodeBatch, encodeErrorPayload, cursusError, encodeJsonEnvelope, Status } from '../../../src/protocols/cursus/codec/index.js';
import { CursusClient, CursusError, CursusEventStore, CursusProtocolError, type CursusClientOptions } from '../../../src/clients/cursus/index.js';
import { FakeCursusBroker, step } from './fake-broker.js';

let fake: FakeCursusBroker;
const clients: CursusClient[] = [];

function client(options: CursusClientOptions = {}): CursusClient {
  const c = new CursusClient({ addr: fake.addr, compression: ['snappy'], requestTimeoutMs: 2_000, reconnect: false, ...options });
  clients.push(c);
  return c;
}

before(async () => {
  fake = await FakeCursusBroker.start();
});
after(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  fake.model.addTopic('orders', 1, { eventSourcing: true });
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

describe('event store', () => {
  test('append sends version = expected + 1 with the event fields; a stale expectation is version_conflict', async () => {
    const es = new CursusEventStore(client(), { topic: 'orders' });
    const first = await es.append('order-1', 0, { type: 'OrderCreated', payload: { total: 5 }, schemaVersion: 2, metadata: { src: 'web' }, eventId: 'e-1' });
    assert.deepEqual(first, { version: 1, offset: 0, partition: 0, snapshotted: false });
    assert.deepEqual(Object.fromEntries(fake.of('APPEND_STREAM')[0]!.fields), {
      event_id: 'e-1',
      event_type: 'OrderCreated',
      key: 'order-1',
      message: '{"total":5}',
      metadata: '{"src":"web"}',
      schema_version: '2',
      topic: 'orders',
      version: '1',
    });
    await es.append('order-1', 1, { type: 'OrderPaid', payload: 'paid' });
    const err = await es.append('order-1', 1, { type: 'OrderPaid', payload: 'again' }).catch((e: unknown) => e);
    assert.ok(err instanceof CursusError);
    assert.deepEqual([err.code, err.class, err.numberField('current'), err.numberField('expected')], ['version_conflict', 'conflict', 2, 2]);
    assert.equal(await es.version('order-1'), 2);
    assert.equal(await es.version('order-unknown'), 0);
  });

  test('read parses both frames: the envelope and the CBV2 batch of events with their fields', async () => {
    const es = new CursusEventStore(client(), { topic: 'orders' });
    await es.append('o', 0, { type: 'A', payload: 'one', metadata: '{"n":1}', eventId: 'id-1' });
    await es.append('o', 1, { type: 'B', payload: 'two' });
    await es.append('o', 2, { type: 'C', payload: 'three' });
    const all = await es.read('o');
    assert.equal(all.snapshot, null);
    assert.equal(all.version, 3);
    assert.deepEqual(
      all.events.map((e) => [e.version, e.type, e.payload.toString(), e.metadata, e.eventId]),
      [
        [1, 'A', 'one', '{"n":1}', 'id-1'],
        [2, 'B', 'two', undefined, undefined],
        [3, 'C', 'three', undefined, undefined],
      ],
    );
    const later = await es.read('o', 3);
    assert.deepEqual(later.events.map((e) => e.version), [3]);
    assert.equal(fake.of('READ_STREAM')[1]!.fields.get('from_version'), '3');
  });

  test('a snapshot is applied: events start after it, and load() folds snapshot then events', async () => {
    const es = new CursusEventStore(client(), { topic: 'orders' });
    for (let v = 0; v < 5; v++) await es.append('acc', v, { type: 'Deposited', payload: String(10 * (v + 1)) });
    await es.saveSnapshot('acc', 3, { balance: 60 });
    assert.deepEqual(await es.readSnapshot('acc'), { version: 3, payload: '{"balance":60}' });
    const r = await es.read('acc');
    assert.deepEqual(r.snapshot, { version: 3, payload: '{"balance":60}' });
    assert.deepEqual(r.events.map((e) => e.version), [4, 5]);
    assert.equal(r.version, 5);
    const loaded = await es.load('acc', {
      initial: 0,
      fromSnapshot: (payload) => (JSON.parse(payload) as { balance: number }).balance,
      apply: (balance, e) => balance + Number(e.payload.toString()),
    });
    assert.deepEqual(loaded, { state: 150, version: 5 });
    await assert.rejects(es.load('acc', { initial: 0, apply: (s) => s }), /needs fromSnapshot/);
    const err = await es.saveSnapshot('acc', 9, 'x').catch((e: unknown) => e);
    assert.ok(err instanceof CursusError && err.code === 'snapshot_version_exceeds_stream');
  });

  test('automatic snapshots every N events, from the state callback', async () => {
    const states: number[] = [];
    const es = new CursusEventStore(client(), {
      topic: 'orders',
      snapshotEvery: 3,
      snapshotState: (key, version) => {
        states.push(version);
        return JSON.stringify({ key, version });
      },
    });
    const results = [];
    for (let v = 0; v < 7; v++) results.push(await es.append('agg', v, { payload: `e${v + 1}` }));
    assert.deepEqual(states, [3, 6]);
    assert.deepEqual(results.map((r) => r.snapshotted), [false, false, true, false, false, true, false]);
    assert.deepEqual(
      fake.of('SAVE_SNAPSHOT').map((r) => [r.fields.get('version'), r.fields.get('message')]),
      [
        ['3', '{"key":"agg","version":3}'],
        ['6', '{"key":"agg","version":6}'],
      ],
    );
    assert.equal(new CursusEventStore(clients[0]!, { topic: 'orders' }).snapshotEvery, 500, 'the default is 500');
  });

  test('an automatic snapshot that fails does not fail the append', async () => {
    const failures: number[] = [];
    const es = new CursusEventStore(client(), {
      topic: 'orders',
      snapshotEvery: 1,
      snapshotState: () => {
        throw new Error('no state');
      },
      onSnapshotError: (_e, _key, version) => failures.push(version),
    });
    assert.equal((await es.append('x', 0, { payload: 'p' })).snapshotted, false);
    assert.deepEqual(failures, [1]);
  });

  test('READ_STREAM failures: an ERROR frame (invalid_from_version), and frames that do not agree', async () => {
    const es = new CursusEventStore(client(), { topic: 'orders' });
    fake.handler = (req) =>
      req.command === 'READ_STREAM' && req.fields.get('from_version') === '0'
        ? { stream: [step(encodeErrorPayload(cursusError('invalid_from_version', [], '{"status":"ERROR","error":"invalid_from_version"}')), true, Status.error)] }
        : undefined;
    const err = await es.read('o', 0).catch((e: unknown) => e);
    assert.ok(err instanceof CursusError && err.code === 'invalid_from_version' && err.class === 'validation');
    fake.handler = () => ({
      stream: [
        step(encodeJsonEnvelope({ status: 'OK', topic: 'orders', key: 'o', partition: 0, count: 2 })),
        step(Buffer.concat(encodeBatch({ idempotent: false, topic: 'orders', partition: 0, acks: '1', batchStart: 0, batchEnd: 0, records: [] })), true),
      ],
    });
    await assert.rejects(es.read('o'), (e: unknown) => e instanceof CursusProtocolError && /count 2, batch of 0/.test(e.message));
    fake.handler = () => ({ stream: [step(encodeJsonEnvelope({ status: 'OK', topic: 'orders', key: 'o', partition: 0, count: 0 }), true)] });
    await assert.rejects(es.read('o'), /did not both come/);
  });

  test('append on a topic without event sourcing is event_sourcing_not_enabled', async () => {
    fake.model.addTopic('plain', 1);
    const es = new CursusEventStore(client(), { topic: 'plain' });
    const err = await es.append('k', 0, { payload: 'x' }).catch((e: unknown) => e);
    assert.ok(err instanceof CursusError && err.code === 'event_sourcing_not_enabled' && err.class === 'validation');
  });
});
