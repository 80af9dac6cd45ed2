// The Felix SDK's flows through its public API only, against whatever peer.ts gives (Quartet's
// Felix listener by default; the scripted fake with FELIX_PEER=fake; a broker with FELIX_PEER_ADDR):
// negotiation, binary acked and keyed publishes pipelined and read back by a subscription with
// offsets, start positions and cursor errors, not-found errors, idempotent publishing, caches with
// TTL, deletes, counters and watches (live, retained, resumed), queue groups (poll, long poll,
// ack, nack, dead letters, redrive, discard), stream_shards, and close.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  Feature,
  FelixClient,
  FelixClosedError,
  FelixCursorError,
  FelixNotFoundError,
  Flag,
  type CacheChange,
  type EventBatch,
  type FelixCacheWatch,
  type FelixSubscription,
} from '../../../src/clients/felix/index.js';
import { startPeer, uniqueName, type FelixPeer } from './peer.js';

let peer: FelixPeer | undefined;
let client: FelixClient;

/** The peer, started in before(). */
function thePeer(): FelixPeer {
  if (peer === undefined) throw new Error('no peer');
  return peer;
}

before(async () => {
  const p = (peer = await startPeer());
  client = new FelixClient({
    addr: p.addr,
    ca: p.ca,
    tenantId: p.tenantId,
    token: p.token,
    requestTimeoutMs: 10_000,
    pools: { publish: { connections: 2, streamsPerConnection: 2 }, cache: { connections: 2, streamsPerConnection: 2 }, eventConnections: 2 },
  });
});
after(async () => {
  // (before() may have failed: no peer, no client.)
  await client?.close();
  await peer?.close();
});

/** Resolves when `check` holds, polling every 10 ms; rejects after `ms`. */
async function until(check: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Collects a subscription's events as [offset, payload] pairs. */
function collect(sub: FelixSubscription): Array<[bigint | null, string]> {
  const seen: Array<[bigint | null, string]> = [];
  sub.on('batch', (b: EventBatch) => b.payloads.forEach((p, i) => seen.push([b.baseOffset === null ? null : b.baseOffset + BigInt(i), p.toString()])));
  return seen;
}

function changes(watch: FelixCacheWatch): CacheChange[] {
  const seen: CacheChange[] = [];
  watch.on('change', (c: CacheChange) => seen.push(c));
  return seen;
}

describe('felix flows', () => {
  test('negotiates on every stream: the broker advertises the binary acked, keyed and offsets flags', async () => {
    const caps = await client.connect();
    for (const flag of [Flag.binaryPublishAcked, Flag.binaryPublishKeyed, Flag.eventBatchOffsets]) assert.ok((caps.flags & flag) !== 0, `flag 0x${flag.toString(16)}`);
    assert.equal(caps.features & (Feature.topology | Feature.redirect), 0, 'one node advertises no topology or redirect');
    assert.ok((caps.features & Feature.counters) !== 0);
  });

  test('publishes binary acked batches, pipelined, keyed and not; a subscription from earliest reads them with offsets', async () => {
    const stream = uniqueName('orders');
    await thePeer().prepare({ streams: [{ name: stream }] });
    const publisher = client.publisher(stream);
    const sends = Array.from({ length: 40 }, (_, i) => publisher.send(`order-${i}`));
    const results = await Promise.all(sends);
    assert.ok(results.every((r) => r.acked && r.encoding === 'binary' && r.owner === null));
    assert.equal(new Set(results.map((r) => r.requestId)).size, 40, 'every send had its own request_id');
    const batch = await publisher.sendBatch(['b-0', 'b-1', 'b-2'], { ack: 'per_batch' });
    assert.equal(batch.encoding, 'binary');
    await publisher.close();

    const sub = await client.subscribe(stream, { start: 'earliest' });
    const seen = collect(sub);
    await until(() => seen.length >= 43, '43 events');
    assert.deepEqual(seen.slice(40), [
      [40n, 'b-0'],
      [41n, 'b-1'],
      [42n, 'b-2'],
    ]);
    assert.deepEqual(new Set(seen.slice(0, 40).map(([, p]) => p)), new Set(Array.from({ length: 40 }, (_, i) => `order-${i}`)));
    assert.deepEqual(seen.map(([o]) => o), Array.from({ length: 43 }, (_, i) => BigInt(i)), 'offsets 0..42, no gap');
    await sub.close();
  });

  test('a live subscription gets what is published after it, and {offset: n} starts at n', async () => {
    const stream = uniqueName('live');
    await thePeer().prepare({ streams: [{ name: stream }] });
    const publisher = client.publisher(stream);
    await publisher.sendBatch(['a', 'b', 'c']);
    const live = await client.subscribe(stream);
    const fromOne = await client.subscribe(stream, { start: { offset: 1 } });
    const liveSeen = collect(live);
    const fromOneSeen = collect(fromOne);
    await publisher.send('d');
    await until(() => liveSeen.length >= 1 && fromOneSeen.length >= 3, 'live and resumed events');
    assert.deepEqual(liveSeen, [[3n, 'd']]);
    assert.deepEqual(fromOneSeen, [
      [1n, 'b'],
      [2n, 'c'],
      [3n, 'd'],
    ]);
    await Promise.all([live.close(), fromOne.close()]);
  });

  test('a start past the tail is a cursor error (in_future, with the tail)', async () => {
    const stream = uniqueName('cursor');
    await thePeer().prepare({ streams: [{ name: stream }] });
    await client.publisher(stream).sendBatch(['x', 'y']);
    const err = await client.subscribe(stream, { start: { offset: 99 } }).catch((e: unknown) => e);
    assert.ok(err instanceof FelixCursorError, String(err));
    assert.deepEqual([err.reason, err.requested, err.available], ['in_future', 99n, 2n]);
  });

  test('publishing to a stream that does not exist is a FelixNotFoundError naming it', async () => {
    const stream = uniqueName('missing');
    const err = await client.publisher(stream).send('x').catch((e: unknown) => e);
    assert.ok(err instanceof FelixNotFoundError, String(err));
    assert.equal(err.what, 'stream');
    assert.equal(err.names['stream'], stream);
  });

  test('stream_shards counts the shards (0 for a stream the broker does not know)', async () => {
    const stream = uniqueName('sharded');
    await thePeer().prepare({ streams: [{ name: stream, shards: 3 }] });
    assert.equal(await client.streamShards(stream), 3);
    assert.equal(await client.streamShards(uniqueName('nothing')), 0);
  });

  test('keyed publishes: one key goes to one shard', async () => {
    const stream = uniqueName('keyed');
    await thePeer().prepare({ streams: [{ name: stream, shards: 2 }] });
    const publisher = client.publisher(stream, { key: 'customer-7' });
    for (let i = 0; i < 4; i++) await publisher.send(`k-${i}`);
    const subs = await Promise.all([0, 1].map((shard) => client.subscribe(stream, { shard, start: 'earliest' })));
    const seen = subs.map(collect);
    await until(() => seen[0]!.length + seen[1]!.length >= 4, 'four keyed events');
    const [a, b] = seen.map((s) => s.map(([, p]) => p));
    assert.ok((a!.length === 4 && b!.length === 0) || (a!.length === 0 && b!.length === 4), `one shard holds the key: ${JSON.stringify([a, b])}`);
    await Promise.all(subs.map((s) => s.close()));
  });

  test('an idempotent publisher numbers its batches from 0 and each lands once', async () => {
    const stream = uniqueName('idem');
    await thePeer().prepare({ streams: [{ name: stream }] });
    const publisher = client.idempotentPublisher(stream);
    const receipts = await Promise.all([publisher.send('one'), publisher.sendBatch(['two', 'three']), publisher.send('four')]);
    assert.deepEqual(receipts.map((r) => r.sequence), [0n, 1n, 2n]);
    assert.equal(new Set(receipts.map((r) => r.producerId)).size, 1);
    const sub = await client.subscribe(stream, { start: 'earliest' });
    const seen = collect(sub);
    await until(() => seen.length >= 4, 'four events');
    assert.deepEqual(seen.map(([, p]) => p), ['one', 'two', 'three', 'four']);
    await sub.close();
  });

  test('caches: put and get, a TTL that lapses, delete returning the value, a missing key', async () => {
    const name = uniqueName('sessions');
    await thePeer().prepare({ caches: [name] });
    const cache = client.cache(name);
    await cache.put('alice', 'token-a', { ttlMs: 60_000 });
    await cache.put('bob', 'token-b', { ttlMs: 1 });
    await cache.put('carol', 'token-c');
    assert.equal((await cache.get('alice'))?.toString(), 'token-a');
    await until(async () => (await cache.get('bob')) === null, 'the 1 ms entry to lapse');
    assert.equal((await cache.delete('carol'))?.toString(), 'token-c');
    assert.equal(await cache.delete('carol'), null, 'a second delete removes nothing');
    assert.equal(await cache.get('carol'), null);
    assert.equal(await cache.get('nobody'), null);
  });

  test('counters: add returns the sum, get reads it, a counter never written is null', async () => {
    const name = uniqueName('counters');
    await thePeer().prepare({ caches: [name] });
    const cache = client.cache(name);
    assert.equal(await cache.getCounter('hits'), null);
    assert.equal(await cache.addCounter('hits', 5), 5n);
    assert.equal(await cache.addCounter('hits', -2n), 3n);
    assert.equal(await cache.getCounter('hits'), 3n);
  });

  test('cache watches: a key watch sees puts and deletes live; a retained prefix watch starts with current values', async () => {
    const name = uniqueName('config');
    await thePeer().prepare({ caches: [name] });
    const cache = client.cache(name);
    await cache.put('app/a', '1');
    await cache.put('app/b', '2');
    await cache.put('other', 'x');
    const keyWatch = await cache.watch({ key: 'app/a' });
    const keySeen = changes(keyWatch);
    const retained = await cache.watch({ prefix: 'app/', retained: true });
    const retainedSeen = changes(retained);
    assert.equal(retained.started?.retainedCount, 2n);
    await until(() => retainedSeen.length >= 2, 'the retained values');
    assert.deepEqual(retainedSeen.map((c) => [c.key, c.value?.toString()]).sort(), [
      ['app/a', '1'],
      ['app/b', '2'],
    ]);
    await cache.put('app/a', '3');
    await cache.delete('app/a');
    await until(() => keySeen.length >= 2 && retainedSeen.length >= 4, 'the live changes');
    assert.deepEqual(keySeen.map((c) => [c.key, c.value?.toString() ?? null]), [
      ['app/a', '3'],
      ['app/a', null],
    ]);
    assert.ok(keySeen[1]!.offset > keySeen[0]!.offset);
    await Promise.all([keyWatch.close(), retained.close()]);
  });

  test('a watch from an offset replays the changes from there, then goes live', async () => {
    const name = uniqueName('replay');
    await thePeer().prepare({ caches: [name] });
    const cache = client.cache(name);
    const first = await cache.watch({ key: 'k' });
    const firstSeen = changes(first);
    for (const v of ['v0', 'v1', 'v2']) await cache.put('k', v);
    await until(() => firstSeen.length >= 3, 'three changes');
    await first.close();
    const resumed = await cache.watch({ key: 'k', fromOffset: firstSeen[1]!.offset });
    const resumedSeen = changes(resumed);
    await cache.put('k', 'v3');
    await until(() => resumedSeen.length >= 3, 'the replay and the live change');
    assert.deepEqual(resumedSeen.map((c) => c.value?.toString()), ['v1', 'v2', 'v3']);
    await resumed.close();
  });

  test('groups: poll claims, ack settles, nack redelivers, out of attempts is a dead letter; redrive and discard', async () => {
    const stream = uniqueName('jobs');
    await thePeer().prepare({ streams: [{ name: stream }] });
    await client.publisher(stream).sendBatch(['j0', 'j1', 'j2']);
    const group = client.groupConsumer(stream, uniqueName('workers'));
    const first = await group.poll({ maxRecords: 10 });
    assert.deepEqual(first.map((r) => [r.offset, r.payload.toString(), r.attempts]), [
      [0n, 'j0', 1],
      [1n, 'j1', 1],
      [2n, 'j2', 1],
    ]);
    await group.ack(0n);
    await group.ack(1n);
    // j2 fails every delivery until it is a dead letter.
    let attempts = 0;
    for (let round = 0; round < 10; round++) {
      await group.nack(2n);
      const again = await group.poll({ maxRecords: 10 });
      if (again.length === 0) break;
      assert.deepEqual(again.map((r) => r.offset), [2n]);
      attempts = again[0]!.attempts;
    }
    assert.ok(attempts >= 2, 'redelivered with a higher attempt count');
    assert.deepEqual(await group.deadLetters(), [2n]);
    await group.redrive(2n);
    assert.deepEqual(await group.deadLetters(), []);
    const redriven = await group.poll();
    assert.deepEqual(redriven.map((r) => r.offset), [2n]);
    await group.nack(2n);
    for (let round = 0; round < 10 && (await group.deadLetters()).length === 0; round++) {
      const r = await group.poll();
      for (const x of r) await group.nack(x.offset);
    }
    assert.deepEqual(await group.deadLetters(), [2n]);
    await group.discard(2n);
    assert.deepEqual(await group.deadLetters(), []);
    assert.deepEqual(await group.poll(), [], 'nothing left');
    await group.close();
  });

  test('a long poll waits for the next record and answers when it is published', async () => {
    const stream = uniqueName('longpoll');
    await thePeer().prepare({ streams: [{ name: stream }] });
    const group = client.groupConsumer(stream, uniqueName('waiters'));
    const started = Date.now();
    const polled = group.poll({ waitMs: 20_000 });
    await client.publisher(stream).send('late');
    const records = await polled;
    assert.deepEqual(records.map((r) => r.payload.toString()), ['late']);
    assert.ok(Date.now() - started < 20_000, 'answered before the wait ran out');
    await group.close();
  });

  test('run() acks what the handler took and nacks what it threw on', async () => {
    const stream = uniqueName('run');
    await thePeer().prepare({ streams: [{ name: stream }] });
    await client.publisher(stream).sendBatch(['ok-1', 'bad', 'ok-2']);
    const group = client.groupConsumer(stream, uniqueName('runners'), { waitMs: 50 });
    const handled: string[] = [];
    const running = group.run((r) => {
      handled.push(`${r.payload.toString()}#${r.attempts}`);
      if (r.payload.toString() === 'bad') throw new Error('cannot');
    });
    await until(() => handled.includes('bad#2'), 'a redelivery of the failing record');
    await group.close();
    await running;
    assert.ok(handled.includes('ok-1#1') && handled.includes('ok-2#1'));
    assert.ok(!handled.includes('ok-1#2'), 'an acked record is not delivered again');
  });

  test('after close every call fails with FelixClosedError', async () => {
    const p = thePeer();
    const own = new FelixClient({ addr: p.addr, ca: p.ca, tenantId: p.tenantId, token: p.token });
    await own.connect();
    await own.close();
    await assert.rejects(own.streamShards('x'), FelixClosedError);
    await assert.rejects(own.cache('c').get('k'), FelixClosedError);
  });
});
