// Idempotent Cursus producers at the handler level: the seqNum and epoch rules of spec §9, for
// text PUBLISH and CBV2 batches, and their survival across a broker restart.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../../src/base/clock.js';
import type { Broker, Topic } from '../../../src/core/broker.js';
import { fnv1a64Mod } from '../../../src/protocols/cursus/routing.js';
import { batchRequest, dataFixture, dataPathOver, failure, fieldsOf, handle, json, openBroker, records, request } from './data-harness.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

type Fx = Parameters<typeof handle>[0];

function idempotent(fx: Fx, seqNum: number, fields: Record<string, string> = {}) {
  return handle(fx, request('PUBLISH', { topic: 'orders', producerId: 'p-1', message: `m${seqNum}`, seqNum: String(seqNum), epoch: '7', isIdempotent: 'true', acks: 'all', partition: '0', ...fields }));
}

function end(broker: Broker, topic: Topic): number {
  return broker.partition(topic, 0).stats().nextOffset;
}

describe('idempotent producers', () => {
  it('a new producer starts at seqNum 1; the next one appends; a gap is refused; a retry is answered with the original offset, appending nothing', async (t) => {
    const fx = await dataFixture(t);
    const topic = await fx.broker.createTopic('default', 'orders', { partitions: 1 });
    const gap = await failure(fx, request('PUBLISH', { topic: 'orders', producerId: 'p-1', message: 'x', seqNum: '2', isIdempotent: 'true', acks: 'all' }));
    assert.deepEqual([gap.code, gap.class, fieldsOf(gap)], ['out_of_order_sequence', 'conflict', { producer: 'p-1', expected: '1', got: '2' }]);
    assert.deepEqual(json(await idempotent(fx, 1)), { status: 'OK', last_offset: 0, producer_id: 'p-1', producer_epoch: 7, seq_start: 1, seq_end: 1 });
    assert.equal(json(await idempotent(fx, 2)).last_offset, 1);
    await handle(fx, request('PUBLISH', { topic: 'orders', producerId: 'other', message: 'y' }));
    assert.equal(json(await idempotent(fx, 3)).last_offset, 3);
    assert.equal(end(fx.broker, topic), 4);

    assert.deepEqual(json(await idempotent(fx, 2)), { status: 'OK', last_offset: 1, producer_id: 'p-1', producer_epoch: 7, seq_start: 2, seq_end: 2 }, 'the retry gets its original offset');
    assert.equal(json(await idempotent(fx, 3)).last_offset, 3);
    assert.equal(end(fx.broker, topic), 4, 'retries append nothing');
    const ahead = await failure(fx, request('PUBLISH', { topic: 'orders', producerId: 'p-1', message: 'x', seqNum: '9', epoch: '7', isIdempotent: 'true', acks: '-1' }));
    assert.deepEqual(fieldsOf(ahead), { producer: 'p-1', expected: '4', got: '9' });
    assert.equal(json(await idempotent(fx, 4)).last_offset, 4);
  });

  it('a duplicate older than the window is still answered OK without appending', async (t) => {
    const fx = await dataFixture(t);
    const topic = await fx.broker.createTopic('default', 'orders', { partitions: 1 });
    for (let s = 1; s <= 8; s++) await idempotent(fx, s);
    const before = end(fx.broker, topic);
    const reply = json(await idempotent(fx, 1));
    assert.equal(reply.status, 'OK');
    assert.equal(typeof reply.last_offset, 'number');
    assert.equal(json(await idempotent(fx, 6)).last_offset, 5, 'one the window holds: its own offset');
    assert.equal(end(fx.broker, topic), before);
  });

  it('epochs: a lower one is stale_producer_epoch; a higher one fences the old session and starts again at 1', async (t) => {
    const fx = await dataFixture(t);
    const topic = await fx.broker.createTopic('default', 'orders', { partitions: 2 });
    await idempotent(fx, 1);
    await idempotent(fx, 2);
    const restart = await failure(fx, request('PUBLISH', { topic: 'orders', producerId: 'p-1', message: 'x', seqNum: '3', epoch: '8', isIdempotent: 'true', acks: 'all', partition: '0' }));
    assert.deepEqual(fieldsOf(restart), { producer: 'p-1', expected: '1', got: '3' }, 'a new epoch starts at 1');
    assert.equal(json(await idempotent(fx, 1, { epoch: '8' })).last_offset, 2);
    const stale = await failure(fx, request('PUBLISH', { topic: 'orders', producerId: 'p-1', message: 'x', seqNum: '3', epoch: '7', isIdempotent: 'true', acks: 'all', partition: '0' }));
    assert.deepEqual([stale.code, stale.class, stale.retryable, fieldsOf(stale)], ['stale_producer_epoch', 'fencing', false, { producer: 'p-1', current: '8', got: '7' }]);
    const elsewhere = await failure(fx, request('PUBLISH', { topic: 'orders', producerId: 'p-1', message: 'x', seqNum: '1', epoch: '7', isIdempotent: 'true', acks: 'all', partition: '1' }));
    assert.equal(elsewhere.code, 'stale_producer_epoch', 'the fenced session is fenced on every partition');
    assert.equal(end(fx.broker, topic), 3);
  });

  it('without a partition or a key, a deduplicated publish and its retries go to the partition of its producer id', async (t) => {
    const fx = await dataFixture(t, { views: new Map([['orders', { partitioner: 'round_robin' }]]) });
    const topic = await fx.broker.createTopic('default', 'orders', { partitions: 4 });
    const send = (seqNum: number) => handle(fx, request('PUBLISH', { topic: 'orders', producerId: 'roamer', message: `m${seqNum}`, seqNum: String(seqNum), isIdempotent: 'true', acks: 'all' }));
    for (const s of [1, 1, 2, 2, 1]) await send(s);
    const ends = Array.from({ length: 4 }, (_, p) => fx.broker.partition(topic, p).stats().nextOffset);
    assert.deepEqual(ends.filter((n) => n > 0), [2], 'two records, on one partition, retries dropped');
    assert.equal(ends.indexOf(2), fnv1a64Mod(Buffer.from('roamer'), 4));
  });

  it('idempotent publishing needs acks=all or -1, refused before any sequence is taken', async (t) => {
    const fx = await dataFixture(t);
    const topic = await fx.broker.createTopic('default', 'orders', { partitions: 1 });
    const weak = await failure(fx, request('PUBLISH', { topic: 'orders', producerId: 'p-1', message: 'x', seqNum: '1', isIdempotent: 'true', acks: '1' }));
    assert.deepEqual([weak.code, fieldsOf(weak)], ['invalid_acks', { command: 'PUBLISH' }]);
    assert.deepEqual(await handle(fx, request('PUBLISH', { topic: 'orders', producerId: 'p-1', message: 'x', seqNum: '1', isIdempotent: 'true', acks: '0' })), { kind: 'none' });
    assert.equal(end(fx.broker, topic), 0);
    assert.equal(json(await idempotent(fx, 1)).last_offset, 0, 'seqNum 1 is still the first');
  });

  it('seqNum 0 disables dedup; on an idempotent topic seqNum > 0 deduplicates without isIdempotent', async (t) => {
    const fx = await dataFixture(t, { views: new Map([['dedup', { idempotent: true }]]) });
    const orders = await fx.broker.createTopic('default', 'orders', { partitions: 1 });
    const dedup = await fx.broker.createTopic('default', 'dedup', { partitions: 1 });
    for (let i = 0; i < 2; i++) await handle(fx, request('PUBLISH', { topic: 'orders', producerId: 'p-1', message: 'x', seqNum: '0', isIdempotent: 'true', acks: 'all' }));
    assert.equal(end(fx.broker, orders), 2, 'seqNum 0: both appended');
    for (let i = 0; i < 2; i++) await handle(fx, request('PUBLISH', { topic: 'orders', producerId: 'p-2', message: 'x', seqNum: '5' }));
    assert.equal(end(fx.broker, orders), 4, 'neither the topic nor the request is idempotent: no dedup');
    for (let i = 0; i < 2; i++) assert.equal(json(await handle(fx, request('PUBLISH', { topic: 'dedup', producerId: 'p-3', message: 'x', seqNum: '1' }))).last_offset, 0);
    assert.equal(end(fx.broker, dedup), 1, 'the idempotent topic deduplicates');
  });

  it('CBV2 batches: batch_start..batch_end as one claim; a retry of the batch or of part of it appends nothing; an overlap is refused', async (t) => {
    const fx = await dataFixture(t);
    const topic = await fx.broker.createTopic('default', 'orders', { partitions: 1 });
    const batch = (start: number, payloads: string[], epoch = 2) =>
      batchRequest({ idempotent: true, topic: 'orders', partition: 0, acks: 'all', batchStart: start, batchEnd: start + payloads.length - 1, records: records('orders', payloads, (i) => ({ partition: 0, producerId: 'b-1', producerEpoch: epoch, seqNum: start + i })) });
    assert.deepEqual(json(await handle(fx, batch(1, ['a', 'b', 'c']))), { status: 'OK', last_offset: 2, producer_id: 'b-1', producer_epoch: 2, seq_start: 1, seq_end: 3 });
    assert.equal(json(await handle(fx, batch(4, ['d', 'e']))).last_offset, 4);
    assert.equal(json(await handle(fx, batch(1, ['a', 'b', 'c']))).last_offset, 2, 'the whole batch again: its offsets');
    assert.equal(json(await handle(fx, batch(2, ['b']))).last_offset, 1, 'part of it: the offset of its record');
    assert.equal(end(fx.broker, topic), 5);
    const overlap = await failure(fx, batch(5, ['e', 'f']));
    assert.deepEqual([overlap.code, fieldsOf(overlap)], ['out_of_order_sequence', { producer: 'b-1', expected: '6', got: '5' }]);
    const mixed = await failure(
      fx,
      batchRequest({ idempotent: true, topic: 'orders', partition: 0, acks: 'all', batchStart: 6, batchEnd: 7, records: records('orders', ['f', 'g'], (i) => ({ partition: 0, producerId: i === 0 ? 'b-1' : 'b-2', producerEpoch: 2, seqNum: 6 + i })) }),
    );
    assert.equal(mixed.code, 'batch_decode_failed');
    const weak = await failure(fx, batchRequest({ idempotent: true, topic: 'orders', partition: 0, acks: '1', batchStart: 6, batchEnd: 6, records: records('orders', ['f'], () => ({ partition: 0, producerId: 'b-1', producerEpoch: 2, seqNum: 6 })) }));
    assert.equal(weak.code, 'invalid_acks');
    assert.equal(end(fx.broker, topic), 5);
  });

  it('producer sequences and epochs survive a restart (core producer state and the producer names table)', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'quartet-cursus-producers-'));
    const clock = new ManualClock();
    const first = await openBroker(clock, dir);
    const fx1 = { broker: first, ...dataPathOver({ after: () => undefined }, first, clock) };
    const topic = await first.createTopic('default', 'orders', { partitions: 1 });
    for (let s = 1; s <= 3; s++) await idempotent(fx1, s);
    await idempotent(fx1, 1, { epoch: '9', message: 'epoch-9' });
    await fx1.data.close();
    await first.close();

    const second = await openBroker(clock, dir);
    // Closed before its directory goes.
    t.after(async () => {
      await second.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const fx2 = { broker: second, ...dataPathOver(t, second, clock) };
    const reopened = second.catalog.requireTopic({ topic: 'orders' });
    assert.equal(end(second, reopened), 4);
    assert.deepEqual(json(await idempotent(fx2, 1, { epoch: '9', message: 'epoch-9' })), { status: 'OK', last_offset: 3, producer_id: 'p-1', producer_epoch: 9, seq_start: 1, seq_end: 1 }, 'the retry after the restart is still a duplicate');
    assert.equal((await failure(fx2, request('PUBLISH', { topic: 'orders', producerId: 'p-1', message: 'x', seqNum: '3', epoch: '9', isIdempotent: 'true', acks: 'all' }))).code, 'out_of_order_sequence');
    assert.deepEqual(fieldsOf(await failure(fx2, request('PUBLISH', { topic: 'orders', producerId: 'p-1', message: 'x', seqNum: '4', epoch: '7', isIdempotent: 'true', acks: 'all' }))), { producer: 'p-1', current: '9', got: '7' });
    assert.equal(json(await idempotent(fx2, 2, { epoch: '9' })).last_offset, 4);
    assert.equal(end(second, reopened), 5);
    assert.equal(topic.internalId, reopened.internalId);
  });
});
