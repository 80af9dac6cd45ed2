// Felix subscriptions over real QUIC: the notes' ordering (event_stream_hello on the new event
// stream, `subscribed` on the request stream, which then ends, then history), start positions
// and cursor errors, shared event batches with and without offsets (as the client negotiated),
// the live tail, two subscribers of one position getting the same batches, the subscription limit.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PartitionReader } from '../../../src/core/reads.js';
import { encodePublishBatch, recordPayloads, type FelixFrame } from '../../../src/protocols/felix/codec/index.js';
import { startFelix, type FelixHarness, type FrameReader, type TestClient } from './harness.js';

const name = { tenantId: 'default', namespace: 'default' };

/** The next event batch of an event stream: its base offset (null: none sent) and payloads. */
async function batch(r: FrameReader): Promise<{ baseOffset: bigint | null; payloads: string[]; frame: FelixFrame }> {
  const got = await r.next();
  if (got.kind !== 'frame' || got.frame.kind !== 'event_batch') throw new Error(`expected an event batch, got ${JSON.stringify(got.kind === 'frame' ? got.frame.kind : got)}`);
  const b = got.frame.batch;
  assert.equal(b.subscriptionId, null, 'the shared form');
  return { baseOffset: b.baseOffset, payloads: recordPayloads(b.records).map((p) => p.toString()), frame: got.frame };
}

/** Payloads from an event stream until `count` arrived, with the offset of each. */
async function collect(r: FrameReader, count: number): Promise<Array<[number, string]>> {
  const out: Array<[number, string]> = [];
  while (out.length < count) {
    const b = await batch(r);
    b.payloads.forEach((p, i) => out.push([Number(b.baseOffset ?? -1n) + i, p]));
  }
  return out;
}

describe('felix subscribe', () => {
  let h: FelixHarness;
  let client: TestClient;
  let uniSeen = 0;

  after(() => h.stop());
  before(async () => {
    h = await startFelix(null, { settings: { subscriptionsPerConnectionMax: 6 } });
    await h.broker.createTopic('default', 'events', { partitions: 2 });
    client = await h.connect();
    const s = await client.authed();
    s.send({ type: 'publish_batch', ...name, stream: 'events', payloads: ['e0', 'e1', 'e2'].map((p) => Buffer.from(p)), requestId: 1n });
    assert.deepEqual(await s.reader.message(), { type: 'publish_ok', requestId: 1n });
  });

  async function subscribe(c: TestClient, start: 'earliest' | 'latest' | { offset: bigint }, flags?: number, shard?: number): Promise<{ sub: bigint; events: FrameReader; startOffset?: bigint; liveOffset?: bigint }> {
    const s = await c.authed('default', 'x', flags);
    s.send({ type: 'subscribe', ...name, stream: 'events', start, ...(shard !== undefined ? { shard } : {}) });
    const reply = await s.reader.message();
    assert.equal(reply.type, 'subscribed', reply.type === 'error' ? reply.message : reply.type);
    await s.reader.end();
    const events = await c.eventStream(uniSeen++);
    const hello = await events.message();
    assert.equal(hello.type, 'event_stream_hello');
    assert.ok(reply.type === 'subscribed' && hello.type === 'event_stream_hello');
    assert.equal(hello.subscriptionId, reply.subscriptionId);
    return { sub: reply.subscriptionId, events, ...(reply.startOffset !== undefined ? { startOffset: reply.startOffset } : {}), ...(reply.liveOffset !== undefined ? { liveOffset: reply.liveOffset } : {}) };
  }

  it('earliest: hello, subscribed (the request stream ends), then history as shared batches with offsets', async () => {
    const sub = await subscribe(client, 'earliest', 0x00ff);
    assert.equal(sub.startOffset, 0n);
    assert.equal(sub.liveOffset, 3n);
    const b = await batch(sub.events);
    assert.equal(b.frame.kind === 'event_batch' && b.frame.batch.baseOffset, 0n);
    assert.deepEqual(b.payloads, ['e0', 'e1', 'e2']);
  });

  it('a legacy client (no client_flags) gets shared batches without offsets', async () => {
    const sub = await subscribe(client, { offset: 1n });
    const b = await batch(sub.events);
    assert.equal(b.baseOffset, null);
    assert.deepEqual(b.payloads, ['e1', 'e2']);
  });

  it('a client that offered flags without the shared form gets per-subscriber batches (0x0002)', async () => {
    const sub = await subscribe(client, { offset: 2n }, 0x0002 | 0x0020);
    const got = await sub.events.next();
    assert.ok(got.kind === 'frame' && got.frame.kind === 'event_batch');
    assert.equal(got.frame.batch.subscriptionId, sub.sub);
    assert.equal(got.frame.batch.baseOffset, 2n);
    assert.deepEqual(recordPayloads(got.frame.batch.records).map(String), ['e2']);
  });

  it('latest: only what is published after, delivered live to every subscriber, read and encoded once for all', async (t) => {
    const a = await subscribe(client, 'latest', 0x00ff);
    const other = await h.connect();
    const b = await (async () => {
      const s = await other.authed('default', 'x', 0x00ff);
      s.send({ type: 'subscribe', ...name, stream: 'events', start: 'latest' });
      assert.equal((await s.reader.message()).type, 'subscribed');
      const events = await other.eventStream(0);
      assert.equal((await events.message()).type, 'event_stream_hello');
      return events;
    })();
    // Every subscriber of the shard now waits at offset 3: one read serves them all.
    const reads: number[] = [];
    const original = PartitionReader.prototype.readRecords;
    PartitionReader.prototype.readRecords = function (this: PartitionReader, request) {
      if (this.topic.name === 'events' && this.partition === 0) reads.push(request.from);
      return original.call(this, request);
    };
    t.after(() => {
      PartitionReader.prototype.readRecords = original;
    });
    const p = await client.authed('default', 'x', 0x00ff);
    p.write(encodePublishBatch({ acked: { requestId: 5n, ackMode: 'per_batch' }, key: null, ...name, stream: 'events', payloads: [Buffer.from('live-1'), Buffer.from('live-2')] }));
    await p.reader.next();
    const fromA = await collect(a.events, 2);
    const fromB = await collect(b, 2);
    assert.deepEqual(fromA, [
      [3, 'live-1'],
      [4, 'live-2'],
    ]);
    assert.deepEqual(fromB, fromA);
    PartitionReader.prototype.readRecords = original;
    assert.deepEqual(reads, [3], 'four subscribers at offset 3, one read');
  });

  it('cursor errors: too_old below the log start, in_future past the end; the request stream goes on', async () => {
    const t = h.broker.catalog.requireTopic({ topic: 'events' });
    await h.broker.partition(t, 0).deleteRecordsBefore(1);
    const s = await client.authed();
    s.send({ type: 'subscribe', ...name, stream: 'events', start: { offset: 0n } });
    assert.deepEqual(await s.reader.message(), { type: 'subscribe_cursor_error', reason: 'too_old', requested: 0n, available: 1n });
    s.send({ type: 'subscribe', ...name, stream: 'events', start: { offset: 99n } });
    assert.deepEqual(await s.reader.message(), { type: 'subscribe_cursor_error', reason: 'in_future', requested: 99n, available: 5n });
    s.send({ type: 'subscribe', ...name, stream: 'nope' });
    assert.deepEqual(await s.reader.message(), { type: 'error', message: 'stream not found: tenant=default namespace=default stream=nope' });
    s.send({ type: 'subscribe', ...name, stream: 'events', shard: 2 });
    assert.deepEqual(await s.reader.message(), { type: 'error', message: 'stream not found: tenant=default namespace=default stream=events' });
  });

  it('a subscription to another shard sees that shard only', async () => {
    const sub = await subscribe(client, 'latest', 0x00ff, 1);
    const t = h.broker.catalog.requireTopic({ topic: 'events' });
    const s = await client.authed();
    // A key that routes to shard 1 of 2 (FNV-1a 64).
    s.send({ type: 'publish', ...name, stream: 'events', payload: Buffer.from('on-1'), key: Buffer.from('b'), requestId: 9n });
    assert.deepEqual(await s.reader.message(), { type: 'publish_ok', requestId: 9n });
    assert.equal(h.broker.reads.open(t, 1).position().highWatermark, 1, 'the key routed to shard 1');
    assert.deepEqual(await collect(sub.events, 1), [[0, 'on-1']]);
  });

  it('refuses a subscription beyond the connection limit with "max subscriptions per connection exceeded"', async () => {
    const c = await h.connect();
    for (let i = 0; i < 6; i++) {
      const s = await c.authed();
      s.send({ type: 'subscribe', ...name, stream: 'events' });
      assert.equal((await s.reader.message()).type, 'subscribed');
    }
    const s = await c.authed();
    s.send({ type: 'subscribe', ...name, stream: 'events' });
    assert.deepEqual(await s.reader.message(), { type: 'error', message: 'max subscriptions per connection exceeded' });
  });
});
