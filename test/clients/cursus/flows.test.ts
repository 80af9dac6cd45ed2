// The SDK's flows through its public API only, against whatever peer.ts gives (the fake's
// in-memory broker now, a real Cursus broker with CURSUS_PEER_ADDR): topic administration,
// keyed idempotent produce and a group consume that resumes from its commits, STREAM mode,
// transactions read committed, and an event-sourced aggregate with a snapshot.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  CursusClient,
  CursusConsumer,
  CursusError,
  CursusEventStore,
  CursusProducer,
  CursusTransactionalProducer,
  partitionForKey,
  type ConsumedBatch,
  type CursusConsumerOptions,
} from '../../../src/clients/cursus/index.js';
import { startPeer, uniqueName, type CursusPeer } from './peer.js';

let peer: CursusPeer;
let client: CursusClient;

before(async () => {
  peer = await startPeer();
  client = new CursusClient({ addr: peer.addr, requestTimeoutMs: 5_000, reconnect: { attemptsMax: 3, backoffMinMs: 10, backoffMaxMs: 50 } });
});
after(async () => {
  await client.close();
  await peer.close();
});

/** Runs a group consumer until it has `count` records (bounded), then closes it. */
async function consumeCount(options: CursusConsumerOptions, count: number, deadlineMs = 10_000): Promise<ConsumedBatch[]> {
  const consumer = new CursusConsumer(client, { waitMs: 50, heartbeatIntervalMs: 200, ...options });
  const seen: ConsumedBatch[] = [];
  let reached!: () => void;
  const enough = new Promise<void>((resolve) => (reached = resolve));
  const running = consumer.run((b) => {
    seen.push(b);
    if (seen.reduce((n, x) => n + x.records.length, 0) >= count) reached();
  });
  const timer = setTimeout(reached, deadlineMs);
  await Promise.race([enough, running]);
  clearTimeout(timer);
  await consumer.close();
  await running;
  return seen;
}

describe('flows', () => {
  test('topic administration: create, list, describe, metadata, offsets, delete', async () => {
    const topic = uniqueName('admin');
    const def = await client.createTopic(topic, { partitions: 3, partitioner: 'hash_key' });
    assert.deepEqual([def.topic, def.partitions, def.partitioner], [topic, 3, 'hash_key']);
    assert.ok((await client.listTopics()).includes(topic));
    const d = await client.describeTopic(topic);
    assert.deepEqual([d.topic, d.definition.partitions, d.partitions.map((p) => p.id)], [topic, 3, [0, 1, 2]]);
    const m = await client.metadata(topic);
    assert.deepEqual([m.partitions, m.leaders.length, m.partitioner], [3, 3, 'hash_key']);
    const offsets = await client.listOffsets(topic);
    assert.deepEqual(offsets.map((o) => [o.partition, o.earliest, o.latest]), [
      [0, 0, 0],
      [1, 0, 0],
      [2, 0, 0],
    ]);
    assert.deepEqual(await client.deleteTopic(topic), { topic, deleted: true, cleanupPending: false });
    assert.equal((await client.deleteTopic(topic, { ifExists: true })).deleted, false);
    const err = await client.deleteTopic(topic).catch((e: unknown) => e);
    assert.ok(err instanceof CursusError && err.code === 'topic_not_found' && err.class === 'not_found');
  });

  test('keyed idempotent produce, then a group consume that resumes from its commits', async () => {
    const topic = uniqueName('orders');
    const group = uniqueName('billing');
    await client.createTopic(topic, { partitions: 3, idempotent: true });
    const producer = new CursusProducer(client, { topic, idempotent: true, producerId: uniqueName('p') });
    const keys = Array.from({ length: 20 }, (_, i) => `customer-${i}`);
    const receipts = await Promise.all(keys.map((k) => producer.send(`order of ${k}`, { key: k })));
    assert.deepEqual(
      receipts.map((r) => r.partition),
      keys.map((k) => partitionForKey(k, 3)),
    );
    const first = await consumeCount({ topic, group }, 20);
    const records = first.flatMap((b) => b.records.map((r) => ({ partition: b.partition, key: r.key!.toString(), value: r.payload.toString() })));
    assert.equal(records.length, 20);
    for (const r of records) {
      assert.equal(r.partition, partitionForKey(r.key, 3));
      assert.equal(r.value, `order of ${r.key}`);
    }
    await producer.send('late order', { key: 'customer-0' });
    await producer.close();
    const second = await consumeCount({ topic, group }, 1);
    assert.deepEqual(second.flatMap((b) => b.records.map((r) => r.payload.toString())), ['late order'], 'the group resumes after what it committed');
  });

  test('STREAM mode delivers what is published while the stream is open', async () => {
    const topic = uniqueName('live');
    await client.createTopic(topic, { partitions: 1 });
    const consumer = new CursusConsumer(client, { topic, group: uniqueName('watchers'), mode: 'stream', heartbeatIntervalMs: 200 });
    const seen: string[] = [];
    let done!: () => void;
    const three = new Promise<void>((resolve) => (done = resolve));
    const running = consumer.run((b) => {
      for (const r of b.records) seen.push(r.payload.toString());
      if (seen.length >= 3) done();
    });
    const producer = new CursusProducer(client, { topic, acks: 1 });
    for (const v of ['one', 'two', 'three']) await producer.send(v, { partition: 0 });
    const timer = setTimeout(done, 10_000);
    await three;
    clearTimeout(timer);
    await consumer.close();
    await running;
    assert.deepEqual(seen, ['one', 'two', 'three']);
  });

  test('a committed transaction is read, an aborted one never is', async () => {
    const topic = uniqueName('ledger');
    await client.createTopic(topic, { partitions: 1 });
    const txn = new CursusTransactionalProducer(client, { transactionalId: uniqueName('tx') });
    await txn.run(async (t) => {
      await t.send(topic, 'debit', { partition: 0 });
      await t.send(topic, 'credit', { partition: 0 });
    });
    await txn.begin();
    await txn.send(topic, 'never', { partition: 0 });
    await txn.abort();
    await txn.run(async (t) => {
      await t.send(topic, 'after', { partition: 0 });
    });
    const seen = await consumeCount({ topic, group: uniqueName('audit'), isolation: 'read_committed' }, 3);
    assert.deepEqual(seen.flatMap((b) => b.records.map((r) => r.payload.toString())), ['debit', 'credit', 'after']);
  });

  test('an event-sourced aggregate: appends, a conflict, a snapshot, and a load from it', async () => {
    const topic = uniqueName('accounts');
    await client.createTopic(topic, { partitions: 2, eventSourcing: true });
    const store = new CursusEventStore(client, { topic, snapshotEvery: 2, snapshotState: (_key, version) => JSON.stringify({ balance: version * 10 }) });
    for (let v = 0; v < 3; v++) await store.append('acc-1', v, { type: 'Deposited', payload: { amount: 10 } });
    const conflict = await store.append('acc-1', 1, { type: 'Deposited', payload: { amount: 1 } }).catch((e: unknown) => e);
    assert.ok(conflict instanceof CursusError && conflict.code === 'version_conflict');
    assert.equal(await store.version('acc-1'), 3);
    assert.deepEqual(await store.readSnapshot('acc-1'), { version: 2, payload: '{"balance":20}' });
    const loaded = await store.load('acc-1', {
      initial: { balance: 0 },
      fromSnapshot: (payload) => JSON.parse(payload) as { balance: number },
      apply: (s, e) => ({ balance: s.balance + (JSON.parse(e.payload.toString()) as { amount: number }).amount }),
    });
    assert.deepEqual(loaded, { state: { balance: 30 }, version: 3 });
  });
});
