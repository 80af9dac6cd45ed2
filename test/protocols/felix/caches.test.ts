// Felix caches and counters over real QUIC with raw frames: put/get/delete with and without a
// request_id (one answer, then the stream ends), TTL expiry on the broker's clock, counters, the
// scope and tenant errors, cache watches (key, prefix with retained values, resume by offset, an
// offset past the end, lagged then a gapless re-watch), the features advertised; and after a
// restart on the same data directory the values and counters are still there.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Feature, type FelixMessage } from '../../../src/protocols/felix/codec/index.js';
import { startFelix, type FelixHarness, type FrameReader, type TestClient, type TestStream } from './harness.js';

const cache = { tenantId: 'default', namespace: 'default', cache: 'sessions' };

/** Every feature bit (a client that offers all of them). */
const allFlags = 0x00ff;

/** The broker's clock: the wall clock moved on by `shift` ms. */
const clock = { shift: 0, now: (): number => Date.now() + clock.shift };

async function changes(reader: FrameReader, n: number): Promise<FelixMessage[]> {
  const out: FelixMessage[] = [];
  for (let i = 0; i < n; i++) out.push(await reader.message());
  return out;
}

function event(key: string, value: string | null, offset: number, expiresAtMillis = 0n): FelixMessage {
  return { type: 'cache_event', key, ...(value !== null ? { value: Buffer.from(value) } : {}), offset: BigInt(offset), expiresAtMillis };
}

describe('felix caches and counters', () => {
  let h: FelixHarness;
  let client: TestClient;
  let s: TestStream;
  let id = 1n;
  let uniSeen = 0;

  after(async () => {
    await h.stop();
    rmSync(h.dataDir, { recursive: true, force: true });
  });
  before(async () => {
    h = await startFelix(null, { keepDataDir: true, broker: { clock, caches: { limits: { watchQueueEventsMax: 4 }, sweepIntervalMs: 0 } } });
    client = await h.connect();
    s = await client.authed('default', 'x', allFlags);
  });

  const ask = async (m: FelixMessage): Promise<FelixMessage> => {
    s.send(m);
    return s.reader.message();
  };
  const put = (key: string, value: string, ttlMs: bigint | null = null): Promise<FelixMessage> => ask({ type: 'cache_put', ...cache, key, value: Buffer.from(value), requestId: id++, ttlMs });
  /** Opens a watch on a stream of its own: cache_watch_started, then the event stream after its hello. */
  const watch = async (fields: Partial<MessageOfWatch>): Promise<{ started: FelixMessage; events: FrameReader }> => {
    const w = await client.authed('default', 'x', allFlags);
    w.send({ type: 'cache_watch', ...cache, retained: false, ...fields });
    const started = await w.reader.message();
    if (started.type !== 'cache_watch_started') return { started, events: null as unknown as FrameReader };
    await w.reader.end();
    const events = await client.eventStream(uniSeen++);
    assert.deepEqual(await events.message(), { type: 'event_stream_hello', subscriptionId: started.subscriptionId });
    return { started, events };
  };

  it('advertises CACHE_DELETE, CACHE_WATCH, CACHE_WATCH_RETAINED and COUNTERS', () => {
    const f = h.listener.frontend.server.features;
    for (const bit of [Feature.cacheDelete, Feature.cacheWatch, Feature.cacheWatchRetained, Feature.counters]) assert.ok((f & bit) !== 0, `feature ${bit}`);
  });

  it('puts, gets and deletes with a request_id on a stream that stays open', async () => {
    assert.deepEqual(await put('a', 'one'), { type: 'cache_ok', requestId: id - 1n });
    assert.deepEqual(await ask({ type: 'cache_get', ...cache, key: 'a', requestId: 10n }), { type: 'cache_value', ...cache, key: 'a', value: Buffer.from('one'), requestId: 10n });
    assert.deepEqual(await ask({ type: 'cache_get', ...cache, key: 'zz', requestId: 11n }), { type: 'cache_value', ...cache, key: 'zz', value: null, requestId: 11n });
    assert.deepEqual(await put('d', 'gone soon'), { type: 'cache_ok', requestId: id - 1n });
    assert.deepEqual(await ask({ type: 'cache_delete', ...cache, key: 'd', requestId: 12n }), { type: 'cache_value', ...cache, key: 'd', value: Buffer.from('gone soon'), requestId: 12n });
    assert.deepEqual(await ask({ type: 'cache_delete', ...cache, key: 'd', requestId: 13n }), { type: 'cache_value', ...cache, key: 'd', value: null, requestId: 13n });
    // A cache is its compacted values topic in the scope's namespace (docs/caches.md).
    assert.equal(h.broker.catalog.getTopic({ namespace: 'default', topic: '__cache.sessions' })?.config['cleanup.policy'], 'compact');
  });

  it('without a request_id: one answer (ok, cache_value), then the stream ends', async () => {
    const p = await client.authed();
    p.send({ type: 'cache_put', ...cache, key: 'b', value: Buffer.from('two'), ttlMs: null });
    assert.deepEqual(await p.reader.message(), { type: 'ok' });
    await p.reader.end();
    const g = await client.authed();
    g.send({ type: 'cache_get', ...cache, key: 'b' });
    assert.deepEqual(await g.reader.message(), { type: 'cache_value', ...cache, key: 'b', value: Buffer.from('two') });
    await g.reader.end();
    const e = await client.authed();
    e.send({ type: 'cache_get', tenantId: 'default', namespace: 'nowhere', cache: 'c', key: 'b' });
    assert.deepEqual(await e.reader.message(), { type: 'error', message: 'cache scope not found: default/nowhere/c' });
    await e.reader.end();
  });

  it('an entry with a TTL reads as absent from its expiry on (the broker clock)', async () => {
    assert.equal((await put('t', 'brief', 60_000n)).type, 'cache_ok');
    assert.deepEqual(await ask({ type: 'cache_get', ...cache, key: 't', requestId: 20n }), { type: 'cache_value', ...cache, key: 't', value: Buffer.from('brief'), requestId: 20n });
    clock.shift += 60_001;
    assert.deepEqual(await ask({ type: 'cache_get', ...cache, key: 't', requestId: 21n }), { type: 'cache_value', ...cache, key: 't', value: null, requestId: 21n });
    assert.deepEqual(await ask({ type: 'cache_put', ...cache, key: 't', value: Buffer.from('x'), requestId: 22n, ttlMs: BigInt(11 * 365 * 24 * 3600 * 1000) }), { type: 'error', message: 'a cache TTL is an integer from 1 to 315360000000 ms, got 346896000000' });
  });

  it('a put with ttl_ms 0 expires as it is written: the key reads as absent, its old value gone, a watcher sees it deleted', async () => {
    assert.equal((await put('z', 'before')).type, 'cache_ok');
    const { started, events } = await watch({ key: 'z' });
    assert.equal(started.type, 'cache_watch_started');
    assert.deepEqual(await put('z', 'instant', 0n), { type: 'cache_ok', requestId: id - 1n });
    assert.deepEqual(await ask({ type: 'cache_get', ...cache, key: 'z', requestId: 23n }), { type: 'cache_value', ...cache, key: 'z', value: null, requestId: 23n });
    const change = await events.message();
    assert.equal(change.type, 'cache_event');
    assert.equal(change.type === 'cache_event' ? change.value : 'no event', undefined, 'a deletion');
    assert.equal(change.type === 'cache_event' ? change.key : '', 'z');
    assert.deepEqual(await put('fresh', 'instant', 0n), { type: 'cache_ok', requestId: id - 1n }, 'on a key never written too');
    assert.deepEqual(await ask({ type: 'cache_get', ...cache, key: 'fresh', requestId: 24n }), { type: 'cache_value', ...cache, key: 'fresh', value: null, requestId: 24n });
    const p = await client.authed();
    p.send({ type: 'cache_put', ...cache, key: 'z', value: Buffer.from('x'), ttlMs: 0n });
    assert.deepEqual(await p.reader.message(), { type: 'ok' }, 'without a request_id');
    await p.reader.end();
  });

  it('counters add and read; never written is an absent value, not 0', async () => {
    const c = { ...cache, key: 'hits' };
    assert.deepEqual(await ask({ type: 'counter_get', ...c, requestId: 30n }), { type: 'counter_value', requestId: 30n });
    assert.deepEqual(await ask({ type: 'counter_add', ...c, delta: 5n, requestId: 31n }), { type: 'counter_value', value: 5n, requestId: 31n });
    assert.deepEqual(await ask({ type: 'counter_add', ...c, delta: -7n, requestId: 32n }), { type: 'counter_value', value: -2n, requestId: 32n });
    assert.deepEqual(await ask({ type: 'counter_get', ...c, requestId: 33n }), { type: 'counter_value', value: -2n, requestId: 33n });
    const overflow = await ask({ type: 'counter_add', ...c, delta: -9223372036854775808n, requestId: 34n });
    assert.equal(overflow.type, 'error');
    assert.deepEqual(await ask({ type: 'counter_get', ...c, requestId: 35n }), { type: 'counter_value', value: -2n, requestId: 35n });
  });

  it('refuses another tenant and a scope that does not exist; the stream goes on', async () => {
    assert.deepEqual(await ask({ type: 'cache_get', ...cache, tenantId: 'other', key: 'a', requestId: 40n }), { type: 'error', message: 'tenant mismatch' });
    assert.deepEqual(await ask({ type: 'counter_get', ...cache, namespace: 'nowhere', key: 'a', requestId: 41n }), { type: 'error', message: 'cache scope not found: default/nowhere/sessions' });
    assert.deepEqual(await ask({ type: 'cache_get', ...cache, key: 'a', requestId: 42n }), { type: 'cache_value', ...cache, key: 'a', value: Buffer.from('one'), requestId: 42n });
  });

  it('a key watch delivers puts and deletes of its key from now on', async () => {
    const { started, events } = await watch({ key: 'k', subscriptionId: 77n });
    assert.equal(started.type, 'cache_watch_started');
    if (started.type !== 'cache_watch_started') return;
    assert.equal(started.subscriptionId, 77n);
    assert.equal(started.resnapshot, false);
    assert.equal(started.retainedCount, undefined);
    const at = Number(started.resumeOffset);
    await put('other', 'ignored');
    await put('k', 'v1');
    assert.deepEqual(await ask({ type: 'cache_delete', ...cache, key: 'k', requestId: 50n }), { type: 'cache_value', ...cache, key: 'k', value: Buffer.from('v1'), requestId: 50n });
    assert.deepEqual(await changes(events, 2), [event('k', 'v1', at + 1), event('k', null, at + 2)]);
  });

  it('a retained prefix watch sends the current values first, then live changes', async () => {
    await put('p/1', 'x1');
    await put('p/2', 'x2');
    const { started, events } = await watch({ prefix: 'p/', retained: true });
    if (started.type !== 'cache_watch_started') return assert.fail(JSON.stringify(started));
    assert.equal(started.retainedCount, 2n);
    const retained = await changes(events, 2);
    assert.deepEqual(
      retained.map((m) => (m.type === 'cache_event' ? [m.key, m.value?.toString()] : m.type)),
      [
        ['p/1', 'x1'],
        ['p/2', 'x2'],
      ],
    );
    await put('p/3', 'x3');
    assert.deepEqual(await events.message(), event('p/3', 'x3', Number(started.resumeOffset)));
    const empty = await watch({ prefix: 'none/', retained: true });
    assert.equal(empty.started.type === 'cache_watch_started' ? empty.started.retainedCount : null, 0n);
  });

  it('a watch resumes from an offset (replay, then live); past the end is subscribe_cursor_error', async () => {
    const first = await put('r', 'r1');
    assert.equal(first.type, 'cache_ok');
    const live = await watch({ key: 'r' });
    if (live.started.type !== 'cache_watch_started') return assert.fail();
    const from = Number(live.started.resumeOffset) - 1;
    await put('r', 'r2');
    const resumed = await watch({ key: 'r', fromOffset: BigInt(from) });
    if (resumed.started.type !== 'cache_watch_started') return assert.fail(JSON.stringify(resumed.started));
    assert.deepEqual(await changes(resumed.events, 2), [event('r', 'r1', from), event('r', 'r2', from + 1)]);
    const past = Number(resumed.started.resumeOffset) + 10;
    const w = await client.authed('default', 'x', allFlags);
    w.send({ type: 'cache_watch', ...cache, key: 'r', fromOffset: BigInt(past), retained: false });
    assert.deepEqual(await w.reader.message(), { type: 'subscribe_cursor_error', reason: 'in_future', requested: BigInt(past), available: live.started.resumeOffset + 1n });
    w.send({ type: 'cache_watch', ...cache, retained: false });
    assert.deepEqual(await w.reader.message(), { type: 'error', message: 'a cache watch names exactly one of key and prefix' });
  });

  it('a watch that falls behind ends with cache_watch_lagged; re-watching from there is gapless', async () => {
    const { started, events } = await watch({ prefix: 'lag/' });
    if (started.type !== 'cache_watch_started') return assert.fail();
    const base = Number(started.resumeOffset);
    // Writes that arrive together are applied together, faster than the watch's queue (4) drains.
    const written = 40;
    await Promise.all(Array.from({ length: written }, (_, i) => h.broker.caches.put('default', 'sessions', `lag/${i}`, Buffer.from(`v${i}`))));
    const got: FelixMessage[] = [];
    let lagged: FelixMessage | null = null;
    for (let i = 0; i <= written && lagged === null; i++) {
      const m = await events.message();
      if (m.type === 'cache_watch_lagged') lagged = m;
      else got.push(m);
    }
    if (lagged?.type !== 'cache_watch_lagged') return assert.fail('no cache_watch_lagged');
    await events.end();
    const resumeFrom = Number(lagged.resumeFrom);
    assert.equal(resumeFrom, base + got.length);
    const again = await watch({ prefix: 'lag/', fromOffset: BigInt(resumeFrom) });
    const rest = await changes(again.events, base + written - resumeFrom);
    assert.deepEqual(
      [...got, ...rest].map((m) => (m.type === 'cache_event' ? Number(m.offset) : -1)),
      Array.from({ length: written }, (_, i) => base + i),
    );
  });

  it('values and counters survive a restart', async () => {
    const dataDir = h.dataDir;
    await h.stop();
    h = await startFelix(null, { dataDir, broker: { clock } });
    client = await h.connect();
    s = await client.authed('default', 'x', allFlags);
    assert.deepEqual(await ask({ type: 'cache_get', ...cache, key: 'a', requestId: 60n }), { type: 'cache_value', ...cache, key: 'a', value: Buffer.from('one'), requestId: 60n });
    assert.deepEqual(await ask({ type: 'cache_get', ...cache, key: 'd', requestId: 61n }), { type: 'cache_value', ...cache, key: 'd', value: null, requestId: 61n });
    assert.deepEqual(await ask({ type: 'counter_get', ...cache, key: 'hits', requestId: 62n }), { type: 'counter_value', value: -2n, requestId: 62n });
  });
});

type MessageOfWatch = Extract<FelixMessage, { type: 'cache_watch' }>;
