// PUBLISH at the handler level over a real broker: text and CBV2 batches, acks, partition choice,
// refusals. Idempotent producers: producers.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BatchFormat } from '../../../src/base/batch.js';
import type { Broker, Topic } from '../../../src/core/broker.js';
import { decodeBatch, type CursusRecord } from '../../../src/protocols/cursus/codec/index.js';
import { fnv1a64Mod } from '../../../src/protocols/cursus/routing.js';
import { batchRequest, dataFixture, failure, fieldsOf, handle, json, records, request } from './data-harness.js';

/** Every CBV2 record stored in the partition, in offset order. */
async function stored(broker: Broker, topic: Topic, partition: number): Promise<CursusRecord[]> {
  const batches = await broker.read(topic, partition, 0, { maxBytes: 1 << 24 });
  return batches.flatMap((b) => {
    assert.equal(b.format, BatchFormat.cursus);
    const d = decodeBatch(b.payload);
    assert.ok(d.ok);
    return d.value.records;
  });
}

function fnvReference(key: Buffer, n: number): number {
  let h = 0xcbf29ce484222325n;
  for (const b of key) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffff_ffff_ffff_ffffn;
  return Number(h % BigInt(n));
}

describe('PUBLISH', () => {
  it('a text message is stored as a CBV2 record and answered with the AckResponse', async (t) => {
    const fx = await dataFixture(t);
    const topic = await fx.broker.createTopic('default', 'orders', { partitions: 1 });
    const publish = (message: string) => handle(fx, request('PUBLISH', { topic: 'orders', producerId: 'p-1', message, key: 'k', epoch: '3' }));
    assert.deepEqual(json(await publish('first message')), { status: 'OK', last_offset: 0, producer_id: 'p-1', producer_epoch: 3, seq_start: 0, seq_end: 0 });
    fx.clock.advance(10);
    assert.equal(json(await publish('second = with spaces')).last_offset, 1);
    const [a, b] = await stored(fx.broker, topic, 0);
    assert.deepEqual([a!.offset, a!.partition, a!.payload.toString(), a!.key?.toString(), a!.producerId, a!.producerEpoch], [0, 0, 'first message', 'k', 'p-1', 3]);
    assert.deepEqual([b!.offset, b!.payload.toString(), b!.timestamp], [1, 'second = with spaces', fx.clock.now()]);
    assert.equal(a!.seqNum, undefined, 'seqNum 0 is not written');
  });

  it('a CBV2 batch is stored as sent, its partition and offsets stamped by the log', async (t) => {
    const fx = await dataFixture(t);
    const topic = await fx.broker.createTopic('default', 'orders', { partitions: 3 });
    const reply = json(await handle(fx, batchRequest({ idempotent: false, topic: 'orders', partition: 2, acks: '1', batchStart: 0, batchEnd: 0, records: records('orders', ['a', 'b', 'c'], (i) => ({ partition: 2, timestamp: 500 + i })) })));
    assert.deepEqual(reply, { status: 'OK', last_offset: 2, producer_id: '', producer_epoch: 0, seq_start: 0, seq_end: 0 });
    const kept = await stored(fx.broker, topic, 2);
    assert.deepEqual(kept.map((r) => [r.offset, r.partition, r.payload.toString(), r.timestamp]), [[0, 2, 'a', 500], [1, 2, 'b', 501], [2, 2, 'c', 502]]);
  });

  it('acks: 0 answers no frame (and still appends), -1 and all answer as 1, anything else is invalid_acks', async (t) => {
    const fx = await dataFixture(t);
    const topic = await fx.broker.createTopic('default', 'acks', { partitions: 1 });
    const publish = (acks: string) => handle(fx, request('PUBLISH', { topic: 'acks', producerId: 'p', message: `m-${acks}`, acks }));
    assert.deepEqual(await publish('0'), { kind: 'none' });
    assert.equal(json(await publish('1')).last_offset, 1);
    assert.equal(json(await publish('-1')).last_offset, 2);
    assert.equal(json(await publish('all')).last_offset, 3);
    const bad = await failure(fx, request('PUBLISH', { topic: 'acks', producerId: 'p', message: 'x', acks: '2' }));
    assert.deepEqual([bad.code, bad.class, fieldsOf(bad)], ['invalid_acks', 'validation', { command: 'PUBLISH' }]);
    assert.deepEqual((await stored(fx.broker, topic, 0)).map((r) => r.payload.toString()), ['m-0', 'm-1', 'm--1', 'm-all']);
    // acks=0 never answers, not even a failure.
    assert.deepEqual(await handle(fx, request('PUBLISH', { topic: 'missing', producerId: 'p', message: 'x', acks: '0' })), { kind: 'none' });
  });

  it('acks=all is refused before the append while the in-sync replicas are fewer than min_in_sync_replicas', async (t) => {
    const fx = await dataFixture(t, { views: new Map([['strict', { minInSyncReplicas: 2 }]]), settings: { minInSyncReplicas: 1 } });
    const topic = await fx.broker.createTopic('default', 'strict', { partitions: 1 });
    for (const acks of ['all', '-1']) {
      const e = await failure(fx, request('PUBLISH', { topic: 'strict', producerId: 'p', message: 'x', acks }));
      assert.deepEqual([e.code, e.class, e.retryable, fieldsOf(e)], ['not_enough_replicas', 'availability', true, { topic: 'strict', partition: '0', isr: '1', min_in_sync_replicas: '2' }]);
    }
    assert.equal(json(await handle(fx, request('PUBLISH', { topic: 'strict', producerId: 'p', message: 'ok', acks: '1' }))).last_offset, 0, 'acks=1 does not wait for replicas');
    assert.equal((await stored(fx.broker, topic, 0)).length, 1);

    // The broker's fallback applies to a topic without its own minimum.
    const fallback = await dataFixture(t, { settings: { minInSyncReplicas: 2 } });
    await fallback.broker.createTopic('default', 'plain', { partitions: 1 });
    assert.equal((await failure(fallback, request('PUBLISH', { topic: 'plain', producerId: 'p', message: 'x', acks: 'all' }))).code, 'not_enough_replicas');
  });

  it('a batch over the largest the topic takes is invalid_message_size, refused before the sequence is taken', async (t) => {
    const fx = await dataFixture(t);
    const topic = await fx.broker.createTopic('default', 'small', { partitions: 1, config: { 'max.message.bytes': 200 } });
    const publish = (message: string) => request('PUBLISH', { topic: 'small', producerId: 'p', message, seqNum: '1', isIdempotent: 'true', acks: 'all' });
    const e = await failure(fx, publish('x'.repeat(300)));
    assert.deepEqual([e.code, e.class], ['invalid_message_size', 'validation']);
    assert.equal(json(await handle(fx, publish('small'))).last_offset, 0, 'seqNum 1 is still the first');
    assert.equal(fx.broker.partition(topic, 0).stats().nextOffset, 1);
  });

  it('transaction metadata is refused on PUBLISH, in fields and in batch records', async (t) => {
    const fx = await dataFixture(t);
    const topic = await fx.broker.createTopic('default', 'orders', { partitions: 1 });
    for (const key of ['transactional_id', 'transaction_state', 'transaction_marker']) {
      const e = await failure(fx, request('PUBLISH', { topic: 'orders', producerId: 'p', message: 'x', [key]: 'v' }));
      assert.deepEqual([e.code, e.class, fieldsOf(e)], ['transaction_metadata_forbidden', 'authorization', { command: 'PUBLISH' }]);
    }
    for (const extra of [{ transactionalId: 'tx' }, { transactionState: 'open' }, { transactionMarker: 'commit' }, { controlBatchType: 'transaction' }]) {
      const e = await failure(fx, batchRequest({ idempotent: false, topic: 'orders', partition: -1, acks: '1', batchStart: 0, batchEnd: 0, records: records('orders', ['x'], () => extra) }));
      assert.equal(e.code, 'transaction_metadata_forbidden');
    }
    assert.equal((await stored(fx.broker, topic, 0)).length, 0, 'nothing was appended');
  });

  it('refuses unknown topics and partitions, aggregate_replay topics, and what authorization denies', async (t) => {
    const denied: string[] = [];
    const fx = await dataFixture(t, {
      views: new Map([['replay', { eventSourcing: true, aggregateReplay: true, idempotent: true }]]),
      authorize: (_ctx, view, operation) => {
        denied.push(`${view.name}:${operation}`);
        if (view.name === 'locked') throw new Error('not this one');
      },
    });
    await fx.broker.createTopic('default', 'orders', { partitions: 2 });
    await fx.broker.createTopic('default', 'replay', { partitions: 1 });
    await fx.broker.createTopic('default', 'locked', { partitions: 1 });
    const notFound = await failure(fx, request('PUBLISH', { topic: 'nope', producerId: 'p', message: 'x' }));
    assert.deepEqual([notFound.code, notFound.class, fieldsOf(notFound)], ['topic_not_found', 'not_found', { topic: 'nope' }]);
    const noPartition = await failure(fx, request('PUBLISH', { topic: 'orders', producerId: 'p', message: 'x', partition: '2' }));
    assert.deepEqual([noPartition.code, fieldsOf(noPartition)], ['partition_not_found', { partition: '2' }]);
    const replay = await failure(fx, request('PUBLISH', { topic: 'replay', producerId: 'p', message: 'x' }));
    assert.deepEqual([replay.code, fieldsOf(replay)], ['invalid_topic_policy', { topic: 'replay', command: 'PUBLISH' }]);
    await assert.rejects(handle(fx, request('PUBLISH', { topic: 'locked', producerId: 'p', message: 'x' })), /not this one/);
    assert.ok(denied.includes('locked:write') && denied.includes('orders:write'), 'writes are authorized as writes');
    for (const [fields, code] of [
      [{ producerId: 'p', message: 'x' }, 'missing_topic'],
      [{ topic: 'orders', message: 'x' }, 'missing_producerId'],
      [{ topic: 'orders', producerId: 'p' }, 'missing_message'],
      [{ topic: 'orders', producerId: 'p', message: 'x', partition: 'one' }, 'invalid_partition'],
      [{ topic: 'orders', producerId: 'p', message: 'x', isIdempotent: 'yes' }, 'invalid_isIdempotent'],
    ] as const) {
      assert.equal((await failure(fx, request('PUBLISH', fields))).code, code);
    }
  });

  it('partitions: explicit, else FNV-1a 64 of the key (hash_key), else round-robin; round_robin ignores keys', async (t) => {
    const fx = await dataFixture(t, { views: new Map([['rr', { partitioner: 'round_robin' }]]) });
    await fx.broker.createTopic('default', 'keyed', { partitions: 5 });
    await fx.broker.createTopic('default', 'rr', { partitions: 3 });
    /** The partition a publish went to: the one whose log grew. */
    const partitionOf = async (fields: Record<string, string>): Promise<number> => {
      const topic = fx.broker.catalog.requireTopic({ topic: fields.topic! });
      const ends = () => Array.from({ length: topic.partitions }, (_, p) => fx.broker.partition(topic, p).stats().nextOffset);
      const before = ends();
      json(await handle(fx, request('PUBLISH', { producerId: 'p', message: 'x', ...fields })));
      const after = ends();
      const grew = after.flatMap((n, p) => (n > before[p]! ? [p] : []));
      assert.equal(grew.length, 1);
      return grew[0]!;
    };
    for (const key of ['customer-1', 'customer-2', 'a', 'zz-top', '']) {
      const expected = key === '' ? null : fnv1a64Mod(Buffer.from(key), 5);
      const got = await partitionOf({ topic: 'keyed', key });
      if (expected !== null) assert.equal(got, expected, `key ${key}`);
      assert.equal(await partitionOf({ topic: 'keyed', key: 'customer-1' }), fnv1a64Mod(Buffer.from('customer-1'), 5), 'the same key, the same partition');
    }
    assert.equal(await partitionOf({ topic: 'keyed', key: 'x', partition: '4' }), 4, 'an explicit partition wins over the key');
    const unkeyed = [];
    for (let i = 0; i < 6; i++) unkeyed.push(await partitionOf({ topic: 'rr', key: 'same-key' }));
    assert.deepEqual(unkeyed, [0, 1, 2, 0, 1, 2], 'round_robin ignores keys');
  });

  it('FNV-1a 64 matches the reference hash', () => {
    for (const key of ['', 'a', 'foobar', 'customer-17', '\u00e9t\u00e9', 'x'.repeat(300)]) {
      for (const n of [1, 3, 7, 64, 1000, 0x7fff_ffff]) assert.equal(fnv1a64Mod(Buffer.from(key), n), fnvReference(Buffer.from(key), n), `${key} mod ${n}`);
    }
    // Published FNV-1a 64 test values.
    assert.equal(fnvReference(Buffer.from('a'), 2 ** 52), Number(0xaf63dc4c8601ec8cn % 2n ** 52n));
    assert.equal(fnv1a64Mod(Buffer.from('foobar'), 0x7fff_ffff), Number(0x85944171f73967e8n % 0x7fff_ffffn));
  });
});
