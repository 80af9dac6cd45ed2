// The Felix SDK against the scripted peer (fake-peer.ts) where a test needs to set the broker up
// or see what reached it: negotiation and the JSON fallback (what each advertised set makes the
// client send, and the featured requests it never sends), auth failure, the pools, loss detection
// from offsets, resume after the broker drops every connection, per-subscriber event frames,
// batches without offsets, idempotent resends and refusals, lagged and resnapshotted watches,
// timeouts that leave the stream usable, errors answering the oldest request, and the error
// classes of the notes' texts.

import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { after, describe, test } from 'node:test';
import {
  Feature,
  FelixAuthError,
  FelixClient,
  FelixConnectionError,
  FelixError,
  FelixForbiddenError,
  FelixNotFoundError,
  FelixNotLeaderError,
  FelixOverloadedError,
  FelixProtocolError,
  FelixPublishRefusedError,
  FelixCursorError,
  FelixRequestError,
  FelixTimeoutError,
  FelixUnsupportedError,
  Flag,
  felixError,
  isRetryable,
  type CacheChange,
  type EventBatch,
  type FelixClientOptions,
  type Gap,
} from '../../../src/clients/felix/index.js';
import { encodeMessage, encodeMessageFrame, knownFlags, singleNodeFeatures } from '../../../src/protocols/felix/codec/index.js';
import { FakeFelixPeer, type FakePeerOptions } from './fake-peer.js';

const open: Array<{ close(): Promise<void> }> = [];
after(async () => {
  for (const x of open.reverse()) await x.close();
});

async function setup(peerOptions: FakePeerOptions = {}, clientOptions: Partial<FelixClientOptions> = {}): Promise<{ peer: FakeFelixPeer; client: FelixClient }> {
  const peer = await FakeFelixPeer.start(peerOptions);
  open.push(peer);
  peer.model.createStream('default', 'default', 's');
  peer.model.createCache('default', 'default', 'c');
  const client = new FelixClient({ addr: peer.addr, ca: peer.certificate, token: 'tok', requestTimeoutMs: 5_000, backoffMinMs: 10, backoffMaxMs: 50, ...clientOptions });
  open.push(client);
  return { peer, client };
}

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const count = (peer: FakeFelixPeer, type: string): number => peer.received.filter((r) => r.type === type).length;
const flagsOf = (peer: FakeFelixPeer, type: string): number[] => peer.received.filter((r) => r.type === type).map((r) => r.flags);

describe('negotiation and the JSON fallback', () => {
  test('a broker with every flag gets binary acked (0x0009) and keyed (0x0049) batches; ack none goes unacked (0x0001)', async () => {
    const { peer, client } = await setup();
    const p = client.publisher('s');
    assert.equal((await p.send('a')).encoding, 'binary');
    assert.equal((await p.send('b', { key: 'k' })).encoding, 'binary');
    assert.deepEqual(await p.send('c', { ack: 'none' }), { requestId: 0n, encoding: 'binary', acked: false, owner: null });
    await until(() => count(peer, 'publish_batch') === 3, 'three batches');
    assert.deepEqual(flagsOf(peer, 'publish_batch'), [0x0009, 0x0049, 0x0001]);
    const auth = peer.received.find((r) => r.type === 'auth');
    assert.equal(auth?.flags, 0);
  });

  test('a broker without 0x0008 gets JSON publishes with request_id (keyed too); ack none stays binary 0x0001', async () => {
    const { peer, client } = await setup({ serverFlags: 0x0007 });
    const p = client.publisher('s');
    assert.equal((await p.send('a')).encoding, 'json');
    assert.equal((await p.sendBatch(['b', 'c'], { key: 'k' })).encoding, 'json');
    assert.equal((await p.send('d', { ack: 'none' })).encoding, 'binary');
    await until(() => peer.received.filter((r) => r.type.startsWith('publish')).length === 3, 'the unacked batch');
    const publishes = peer.received.filter((r) => r.type.startsWith('publish')).map((r) => [r.type, r.flags]);
    assert.deepEqual(publishes, [
      ['publish', 0],
      ['publish_batch', 0],
      ['publish_batch', 0x0001],
    ]);
  });

  test('a broker with 0x0008 but not 0x0040 gets binary unkeyed batches and JSON keyed ones', async () => {
    const { peer, client } = await setup({ serverFlags: 0x000f });
    const p = client.publisher('s');
    assert.equal((await p.send('a')).encoding, 'binary');
    assert.equal((await p.send('b', { key: 'k' })).encoding, 'json');
    assert.deepEqual(flagsOf(peer, 'publish_batch'), [0x0009]);
    assert.deepEqual(flagsOf(peer, 'publish'), [0]);
  });

  test('a legacy broker (ok, no features): JSON publishes, and no featured request is ever sent', async () => {
    const { peer, client } = await setup({ legacy: true });
    assert.deepEqual(await client.connect(), { flags: 0x0007, features: 0 });
    assert.equal((await client.publisher('s').send('a')).encoding, 'json');
    const cache = client.cache('c');
    await cache.put('k', 'v');
    assert.equal((await cache.get('k'))?.toString(), 'v');
    const refused = [
      cache.delete('k'),
      cache.addCounter('n', 1),
      cache.getCounter('n'),
      cache.watch({ key: 'k' }),
      client.groupConsumer('s', 'g').poll(),
      client.groupConsumer('s', 'g').poll({ waitMs: 100 }),
      client.groupConsumer('s', 'g').deadLetters(),
      client.streamShards('s'),
      client.idempotentPublisher('s').send('x'),
    ];
    for (const r of await Promise.allSettled(refused)) {
      assert.ok(r.status === 'rejected' && r.reason instanceof FelixUnsupportedError, String(r.status === 'rejected' ? r.reason : 'resolved'));
    }
    for (const type of ['cache_delete', 'counter_add', 'counter_get', 'cache_watch', 'group_poll', 'group_dead_letters', 'stream_shards', 'producer_init', 'publish_idempotent']) {
      assert.equal(count(peer, type), 0, `${type} was not sent`);
    }
  });

  test('a client offering no flags (legacy auth) gets ok and publishes JSON', async () => {
    const { peer, client } = await setup({}, { clientFlags: null });
    assert.deepEqual(await client.connect(), { flags: 0x0007, features: 0 });
    assert.equal((await client.publisher('s').send('a')).encoding, 'json');
    assert.equal(count(peer, 'publish'), 1);
  });

  test('a retained watch needs CACHE_WATCH_RETAINED as well as CACHE_WATCH', async () => {
    const { peer, client } = await setup({ serverFeatures: singleNodeFeatures & ~Feature.cacheWatchRetained });
    const err = await client.cache('c').watch({ prefix: '', retained: true }).catch((e: unknown) => e);
    assert.ok(err instanceof FelixUnsupportedError && err.bit === Feature.cacheWatchRetained, String(err));
    assert.equal(count(peer, 'cache_watch'), 0);
    const plain = await client.cache('c').watch({ prefix: '' });
    await plain.close();
  });

  test('a wrong token is a FelixAuthError (auth failed)', async () => {
    const { client } = await setup({ tokens: { default: 'right' } });
    const err = await client.connect().catch((e: unknown) => e);
    assert.ok(err instanceof FelixAuthError && err.text === 'auth failed', String(err));
  });

  test('the publish pool spreads sends over its connections × streams, each stream authenticated', async () => {
    const { peer, client } = await setup({}, { pools: { publish: { connections: 2, streamsPerConnection: 2 } } });
    const p = client.publisher('s');
    await Promise.all(Array.from({ length: 8 }, (_, i) => p.send(`m${i}`)));
    assert.equal(count(peer, 'auth'), 4);
    assert.equal(count(peer, 'publish_batch'), 8);
  });
});

describe('backpressure', () => {
  test('a burst larger than the stream buffer goes out in call order as the stream drains, every send acked', async () => {
    const { peer, client } = await setup({}, { pools: { publish: { connections: 1, streamsPerConnection: 1 } } });
    const p = client.publisher('s');
    const payloads = Array.from({ length: 40 }, (_, i) => Buffer.alloc(64 << 10, i));
    const results = await Promise.all(payloads.map((x) => p.send(x)));
    assert.ok(results.every((r) => r.acked));
    const unacked = await Promise.all([p.send(Buffer.alloc(64 << 10, 0xee), { ack: 'none' }), p.send(Buffer.alloc(64 << 10, 0xef), { ack: 'none' })]);
    assert.ok(unacked.every((r) => !r.acked));
    const shards = peer.model.shards('default', 'default', 's');
    assert.ok(typeof shards !== 'string');
    await until(() => shards[0]!.records.length === 42, 'every record');
    assert.deepEqual(shards[0]!.records.map((r) => r[0]), [...payloads.map((x) => x[0]), 0xee, 0xef], 'in call order');
  });
});

describe('subscriptions', () => {
  test('a dropped batch is reported as a gap before the next batch', async () => {
    const { peer, client } = await setup();
    const sub = await client.subscribe('s');
    const seen: Array<string | Gap> = [];
    sub.on('batch', (b: EventBatch) => b.payloads.forEach((p) => seen.push(p.toString())));
    sub.on('gap', (g: Gap) => seen.push(g));
    const p = client.publisher('s');
    await p.send('a');
    await until(() => seen.length === 1, 'the first event');
    peer.dropNextEventBatches(1);
    await p.send('b');
    await p.send('c');
    await until(() => seen.length === 3, 'the gap and the next event');
    assert.deepEqual(seen, ['a', { from: 1n, to: 1n, count: 1n }, 'c']);
    assert.equal(sub.lostCount, 1n);
    await sub.close();
  });

  test('after the broker drops every connection, the subscription resumes at the next offset, without duplicates', async () => {
    const { peer, client } = await setup();
    const p = client.publisher('s');
    await p.sendBatch(['a', 'b']);
    const sub = await client.subscribe('s', { start: 'earliest' });
    const offsets: bigint[] = [];
    sub.on('batch', (b: EventBatch) => b.payloads.forEach((_, i) => offsets.push(b.baseOffset! + BigInt(i))));
    await until(() => offsets.length === 2, 'the history');
    const resubscribed = once(sub, 'resubscribed') as Promise<[{ from: bigint }]>;
    await peer.dropConnections();
    const [info] = await resubscribed;
    assert.equal(info.from, 2n);
    await p.sendBatch(['c', 'd']);
    await until(() => offsets.length === 4, 'the events after the resume');
    assert.deepEqual(offsets, [0n, 1n, 2n, 3n]);
    assert.equal(sub.lostCount, 0n);
    await sub.close();
  });

  test('per-subscriber event frames (0x0002) are read as well as shared ones', async () => {
    const { client } = await setup({ perSubscriberEvents: true });
    await client.publisher('s').sendBatch(['x', 'y']);
    const sub = await client.subscribe('s', { start: 'earliest' });
    const seen: EventBatch[] = [];
    sub.on('batch', (b: EventBatch) => seen.push(b));
    await until(() => seen.length === 1, 'the batch');
    assert.deepEqual([seen[0]!.baseOffset, seen[0]!.payloads.map(String)], [0n, ['x', 'y']]);
    await sub.close();
  });

  test('without 0x0020 offered, batches carry no offsets and nothing is reported lost', async () => {
    const { peer, client } = await setup({}, { clientFlags: knownFlags & ~Flag.eventBatchOffsets });
    const sub = await client.subscribe('s');
    const seen: EventBatch[] = [];
    sub.on('batch', (b: EventBatch) => seen.push(b));
    sub.on('gap', () => assert.fail('no gap without offsets'));
    peer.dropNextEventBatches(1);
    await client.publisher('s').send('lost');
    await client.publisher('s').send('kept');
    await until(() => seen.length === 1, 'the kept batch');
    assert.deepEqual([seen[0]!.baseOffset, seen[0]!.payloads.map(String)], [null, ['kept']]);
    await sub.close();
  });
});

describe('bad answers', () => {
  test('bytes the codec cannot read fail the call with FelixProtocolError; the next call gets a new stream', async () => {
    const { peer, client } = await setup({}, { pools: { cache: { connections: 1, streamsPerConnection: 1 } } });
    peer.script = (m) => (m.type === 'cache_get' ? [Buffer.from('not a felix frame at all')] : undefined);
    const err = await client.cache('c').get('k').catch((e: unknown) => e);
    assert.ok(err instanceof FelixProtocolError, String(err));
    peer.script = null;
    assert.equal(await client.cache('c').get('k'), null);
    assert.equal(count(peer, 'auth'), 2, 'the broken stream was replaced');
  });

  test('an answer of the wrong type for a request_id is a FelixProtocolError', async () => {
    const { peer, client } = await setup();
    peer.script = (m) => (m.type === 'counter_get' ? encodeMessage({ type: 'cache_ok', requestId: m.requestId }) : undefined);
    await assert.rejects(client.cache('c').getCounter('n'), FelixProtocolError);
  });

  test('a resume refused with a cursor error (too_old) ends the subscription with it', async () => {
    const { peer, client } = await setup();
    await client.publisher('s').send('a');
    const sub = await client.subscribe('s', { start: 'earliest' });
    sub.on('batch', () => {});
    await until(() => sub.nextOffset === 1n, 'the first event');
    const ended = once(sub, 'end') as Promise<[unknown]>;
    peer.script = (m) => (m.type === 'subscribe' ? encodeMessage({ type: 'subscribe_cursor_error', reason: 'too_old', requested: 1n, available: 5n }) : undefined);
    await peer.dropConnections();
    const [err] = await ended;
    assert.ok(err instanceof FelixCursorError && err.reason === 'too_old' && err.available === 5n, String(err));
  });

  test('not_leader answering a subscribe is a FelixNotLeaderError naming the leader', async () => {
    const { peer, client } = await setup();
    peer.script = (m) => (m.type === 'subscribe' ? encodeMessage({ type: 'not_leader', nodeId: 'n2', addr: '10.0.0.2:5000', generation: 7n }) : undefined);
    const err = await client.subscribe('s').catch((e: unknown) => e);
    assert.ok(err instanceof FelixNotLeaderError, String(err));
    assert.deepEqual([err.nodeId, err.addr, err.generation, err.retryable], ['n2', '10.0.0.2:5000', 7n, true]);
  });

  test('an event stream that begins without a hello is dropped; the subscription is unaffected', async () => {
    const { peer, client } = await setup();
    const sub = await client.subscribe('s');
    const seen: string[] = [];
    sub.on('batch', (b: EventBatch) => b.payloads.forEach((p) => seen.push(p.toString())));
    peer.script = (m) => {
      if (m.type === 'cache_get') {
        const [conn] = peer.openConnections();
        const stray = conn!.openUni();
        stray.on('error', () => {});
        stray.end(encodeMessageFrame({ type: 'ok' }));
      }
      return undefined;
    };
    await client.cache('c').get('k');
    await client.publisher('s').send('after');
    await until(() => seen.length === 1, 'the event');
    assert.deepEqual(seen, ['after']);
    await sub.close();
  });
});

describe('idempotent publishing', () => {
  test('a batch whose answer was lost is sent again under the same sequence and lands once', async () => {
    const { peer, client } = await setup();
    peer.unanswered.set('publish_idempotent', 1);
    const p = client.idempotentPublisher('s', { timeoutMs: 300 });
    const receipt = await p.send('once');
    assert.deepEqual([receipt.sequence, receipt.attempts], [0n, 2]);
    assert.equal(count(peer, 'publish_idempotent'), 2);
    const shards = peer.model.shards('default', 'default', 's');
    assert.ok(typeof shards !== 'string');
    assert.deepEqual(shards[0]!.records.map(String), ['once']);
    assert.equal((await p.send('next')).sequence, 1n);
  });

  test('unknown_producer fails the batch; the next send starts again under a new producer id', async () => {
    const { peer, client } = await setup();
    const p = client.idempotentPublisher('s');
    const first = await p.send('a');
    peer.refusals.push({ kind: 'unknown_producer' });
    const err = await p.send('b').catch((e: unknown) => e);
    assert.ok(err instanceof FelixPublishRefusedError && err.reason.kind === 'unknown_producer', String(err));
    const again = await p.send('c');
    assert.notEqual(again.producerId, first.producerId);
    assert.equal(again.sequence, 0n);
  });

  test('sequence_gap stops the publisher until reset(); nothing more is sent meanwhile', async () => {
    const { peer, client } = await setup();
    const p = client.idempotentPublisher('s');
    await p.send('a');
    peer.refusals.push({ kind: 'sequence_gap', expected: 7n });
    const err = await p.send('b').catch((e: unknown) => e);
    assert.ok(err instanceof FelixPublishRefusedError && err.reason.kind === 'sequence_gap' && err.reason.expected === 7n, String(err));
    const sent = count(peer, 'publish_idempotent');
    await assert.rejects(p.send('c'), FelixPublishRefusedError);
    assert.equal(count(peer, 'publish_idempotent'), sent, 'a stopped publisher sends nothing');
    p.reset();
    assert.equal((await p.send('d')).sequence, 0n);
  });
});

describe('cache watches', () => {
  test('cache_watch_lagged: the watch says so and watches again from resume_from, missing nothing', async () => {
    const { peer, client } = await setup();
    const cache = client.cache('c');
    const watch = await cache.watch({ key: 'k' });
    const seen: CacheChange[] = [];
    watch.on('change', (c: CacheChange) => seen.push(c));
    const lagged = once(watch, 'lagged') as Promise<[{ resumeFrom: bigint }]>;
    const rewatched = once(watch, 'rewatched');
    peer.lagWatchesOnNextChange();
    await cache.put('k', 'v1');
    const [{ resumeFrom }] = await lagged;
    await rewatched;
    await cache.put('k', 'v2');
    await until(() => seen.length === 2, 'both changes');
    assert.deepEqual(seen.map((c) => [c.offset, c.value?.toString()]), [
      [resumeFrom, 'v1'],
      [resumeFrom + 1n, 'v2'],
    ]);
    await watch.close();
  });

  test('a resume into compacted history starts with a snapshot (resnapshot true)', async () => {
    const { peer, client } = await setup();
    const cache = client.cache('c');
    for (const v of ['v0', 'v1']) await cache.put('k', v);
    const model = peer.model.cache('default', 'default', 'c');
    assert.ok(typeof model !== 'string');
    model.compactedBefore = 2n;
    const watch = await cache.watch({ key: 'k', fromOffset: 0 });
    const seen: CacheChange[] = [];
    watch.on('change', (c: CacheChange) => seen.push(c));
    assert.equal(watch.started?.resnapshot, true);
    await until(() => seen.length === 1, 'the snapshot');
    assert.equal(seen[0]!.value?.toString(), 'v1');
    await watch.close();
  });
});

describe('errors and timeouts', () => {
  test('a request without an answer times out; the stream stays usable', async () => {
    const { peer, client } = await setup({}, { pools: { cache: { connections: 1, streamsPerConnection: 1 } } });
    const cache = client.cache('c');
    await cache.put('k', 'v');
    peer.unanswered.set('cache_get', 1);
    const err = await cache.get('k', { timeoutMs: 200 }).catch((e: unknown) => e);
    assert.ok(err instanceof FelixTimeoutError && isRetryable(err), String(err));
    assert.equal((await cache.get('k'))?.toString(), 'v');
    assert.equal(count(peer, 'auth'), 1, 'one stream throughout');
  });

  test('a broker that does not answer the handshake is a FelixConnectionError after the attempts', async () => {
    const silent = createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    const client = new FelixClient({ addr: `127.0.0.1:${silent.address().port}`, ca: '', connectTimeoutMs: 300, connectAttemptsMax: 2, backoffMinMs: 10 });
    try {
      const err = await client.connect().catch((e: unknown) => e);
      assert.ok(err instanceof FelixConnectionError && isRetryable(err), String(err));
    } finally {
      await client.close();
      silent.close();
    }
  });

  test('close() fails a call still waiting for its answer instead of leaving it hanging', async () => {
    const { peer, client } = await setup();
    peer.unanswered.set('cache_get', 1);
    const waiting = client.cache('c').get('k', { timeoutMs: 20_000 }).catch((e: unknown) => e);
    await until(() => count(peer, 'cache_get') === 1, 'the request to arrive');
    const started = Date.now();
    await client.close();
    const err = await waiting;
    assert.ok(err instanceof FelixConnectionError, String(err));
    assert.ok(Date.now() - started < 10_000);
  });

  test('an error answers the oldest request on the stream; later ones are answered as usual', async () => {
    const { client } = await setup({}, { pools: { cache: { connections: 1, streamsPerConnection: 1 } } });
    const [missing, present] = await Promise.allSettled([client.cache('nope').get('k'), client.cache('c').getCounter('n')]);
    assert.ok(missing.status === 'rejected' && missing.reason instanceof FelixNotFoundError, String(missing.status === 'rejected' && missing.reason));
    assert.deepEqual([missing.reason.what, missing.reason.names], ['cache', { tenant: 'default', namespace: 'default', cache: 'nope' }]);
    assert.deepEqual(present, { status: 'fulfilled', value: null });
  });

  test('the notes\' texts map to error classes', () => {
    const cases: Array<[string, new (...a: never[]) => FelixError]> = [
      ['auth failed', FelixAuthError],
      ['auth required', FelixAuthError],
      ['auth already established', FelixAuthError],
      ['tenant mismatch', FelixAuthError],
      ['forbidden', FelixForbiddenError],
      ['server overloaded', FelixOverloadedError],
      ['ingress overloaded', FelixOverloadedError],
      ['subscriber lane queue full during register', FelixOverloadedError],
      ['max subscriptions per connection exceeded', FelixOverloadedError],
      ['malformed publish batch', FelixRequestError],
      ['malformed acked publish prefix', FelixRequestError],
      ['missing request_id for acked publish', FelixRequestError],
      ['unsupported frame flags', FelixRequestError],
      ['unexpected message type', FelixRequestError],
      ['subscribe_cursor_error is a server-to-client message', FelixRequestError],
      ['stream not found: tenant=t1 namespace=default stream=orders', FelixNotFoundError],
      ['tenant not found: t9', FelixNotFoundError],
      ['namespace not found: tenant=t1 namespace=x', FelixNotFoundError],
      ['cache scope not found: t1/default/sessions', FelixNotFoundError],
    ];
    for (const [text, cls] of cases) {
      const e = felixError(text, 'publish');
      assert.ok(e instanceof cls, `${text} -> ${e.name}`);
      assert.equal(e.name, cls.name);
      assert.equal(e.text, text);
    }
    const s = felixError('stream not found: tenant=t1 namespace=default stream=orders', 'publish') as FelixNotFoundError;
    assert.deepEqual([s.what, s.names], ['stream', { tenant: 't1', namespace: 'default', stream: 'orders' }]);
    assert.equal(felixError('namespace not found: tenant=t1 namespace=x', 'p').constructor, FelixNotFoundError);
    assert.equal(felixError('something new', 'p').constructor, FelixError);
    assert.equal(isRetryable(felixError('server overloaded', 'p')), true);
    assert.equal(isRetryable(felixError('forbidden', 'p')), false);
  });
});
