// Hostile input at the Felix listener while a well-behaved client works beside it: garbage UDP
// datagrams (random, QUIC-looking long headers, oversized), truncated and oversized frames before
// and after auth, unknown flag bits, a flood of streams past the connection's limit, and a
// connection that never authenticates. Each gets the notes' answer (an error text, the stream or
// the connection ended), nothing crashes, and the bystander's subscription, publishes and cache
// requests go on throughout, with every record it published delivered once, in order.

import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { encodeFrameHeader, encodeMessageFrame, frameHeaderBytes, recordPayloads } from '../../../src/protocols/felix/codec/index.js';
import { startFelix, type FelixHarness, type FrameReader, type TestClient, type TestStream } from './harness.js';

const name = { tenantId: 'default', namespace: 'default', stream: 'calm' };
const streamsMax = 16;
const frameBytesMax = 1 << 20;

function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}

describe('felix listener under hostile input', () => {
  let h: FelixHarness;
  let bystander: TestClient;
  let calm: TestStream;
  let events: FrameReader;
  let published = 0;
  let received: string[] = [];
  let id = 1n;

  after(() => h.stop());
  before(async () => {
    h = await startFelix(null, { settings: { streamsPerConnectionMax: streamsMax, frameBytesMax }, listener: { authTimeoutMs: 2_000 } });
    await h.broker.createTopic('default', 'calm', { partitions: 1 });
    bystander = await h.connect();
    const sub = await bystander.authed('default', 'x', 0x00ff);
    sub.send({ type: 'subscribe', ...name, start: 'earliest' });
    assert.equal((await sub.reader.message()).type, 'subscribed');
    events = await bystander.eventStream(0);
    assert.equal((await events.message()).type, 'event_stream_hello');
    calm = await bystander.authed('default', 'x', 0x00ff);
  });

  /** The bystander publishes a record, reads it back from its subscription, and uses a cache. */
  async function bystanderWorks(): Promise<void> {
    const payload = `r${published++}`;
    calm.send({ type: 'publish', ...name, payload: Buffer.from(payload), requestId: id++ });
    assert.deepEqual(await calm.reader.message(), { type: 'publish_ok', requestId: id - 1n });
    while (received.length < published) {
      const got = await events.next();
      if (got.kind !== 'frame' || got.frame.kind !== 'event_batch') throw new Error(`the bystander's subscription broke: ${JSON.stringify(got.kind)}`);
      received.push(...recordPayloads(got.frame.batch.records).map((p) => p.toString()));
    }
    assert.deepEqual(received, Array.from({ length: published }, (_, i) => `r${i}`));
    calm.send({ type: 'counter_add', tenantId: 'default', namespace: 'default', cache: 'calm', key: 'n', delta: 1n, requestId: id++ });
    assert.deepEqual(await calm.reader.message(), { type: 'counter_value', value: BigInt(published), requestId: id - 1n });
  }

  it('serves the bystander before anything else', async () => {
    received = [];
    await bystanderWorks();
  });

  it('drops garbage datagrams: random, QUIC-looking long headers, oversized', async () => {
    const udp = createSocket('udp4');
    let seed = 0x51ed_270b;
    const random = (): number => ((seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0) >>> 16) & 0xff;
    const sizes = [1, 5, 21, 64, 1199, 1200, 1350, 9000, 65_000];
    for (const size of sizes) {
      const junk = Buffer.alloc(size);
      for (let i = 0; i < size; i++) junk[i] = random();
      udp.send(junk, h.port, '127.0.0.1');
      // A long header (0xc0), version 1, random connection ids: an Initial that is not one.
      const initial = Buffer.from(junk);
      initial[0] = 0xc0;
      if (size >= 5) initial.writeUInt32BE(1, 1);
      udp.send(initial, h.port, '127.0.0.1');
      // An unknown QUIC version: the server may answer version negotiation, and must go on.
      if (size >= 5) {
        const version = Buffer.from(initial);
        version.writeUInt32BE(0x0a0a_0a0a, 1);
        udp.send(version, h.port, '127.0.0.1');
      }
    }
    await new Promise<void>((resolve) => udp.send(Buffer.alloc(0), h.port, '127.0.0.1', () => resolve()));
    udp.close();
    await bystanderWorks();
  });

  it('ends streams with truncated or oversized frames, before and after auth; answers unknown flags and keeps the stream', async () => {
    const c = await h.connect();
    // Truncated: the header says 100 bytes, 10 arrive, then FIN.
    const truncated = c.stream();
    truncated.write([encodeFrameHeader(0, 100), Buffer.alloc(10, 0x7b)]);
    truncated.raw.end();
    await truncated.reader.end();
    // Only part of a header.
    const half = await c.authed();
    half.write(encodeMessageFrame({ type: 'auth', tenantId: 'default', token: 'x' }).subarray(0, frameHeaderBytes - 5));
    half.raw.end();
    await half.reader.end();
    // Oversized before auth (64 KiB) and after (frameBytesMax): the stream ends, nothing is buffered.
    const before = c.stream();
    before.write(encodeFrameHeader(0, 65_537));
    await before.reader.end();
    const afterAuth = await c.authed();
    afterAuth.write(encodeFrameHeader(0x0001, frameBytesMax + 1));
    await afterAuth.reader.end();
    // A length field at its maximum.
    const huge = await c.authed();
    huge.write(encodeFrameHeader(0, 0xffff_ffff));
    await huge.reader.end();
    // Unknown flag bits, on their own and beside known ones: refused, the stream goes on.
    const flags = await c.authed('default', 'x', 0x00ff);
    for (const f of [0x0100, 0x8000, 0x4001]) {
      flags.write([encodeFrameHeader(f, 3), Buffer.from('abc')]);
      assert.deepEqual(await flags.reader.message(), { type: 'error', message: 'unsupported frame flags' });
    }
    flags.send({ type: 'stream_shards', ...name, requestId: 9n });
    assert.deepEqual(await flags.reader.message(), { type: 'stream_shards_view', shards: 1, requestId: 9n });
    await c.close();
    await bystanderWorks();
  });

  it('refuses streams past the connection limit in the transport; the streams within it are served', async () => {
    const c = await h.connect();
    const open: TestStream[] = [];
    let refused = 0;
    for (let i = 0; i < streamsMax + 4; i++) {
      try {
        const s = c.stream();
        s.send({ type: 'auth', tenantId: 'default', token: 'x' });
        open.push(s);
      } catch {
        refused++;
      }
    }
    assert.equal(open.length, streamsMax);
    assert.equal(refused, 4);
    for (const s of open) assert.deepEqual(await s.reader.message(10_000), { type: 'ok' });
    // Every stream within the limit goes on serving.
    const last = open[open.length - 1]!;
    last.send({ type: 'stream_shards', ...name, requestId: 1n });
    assert.deepEqual(await last.reader.message(), { type: 'stream_shards_view', shards: 1, requestId: 1n });
    await c.close();
    await bystanderWorks();
  });

  it('closes a connection that never authenticates (code 1), however much it sends', async () => {
    const c = await h.connect();
    const closed = once(c.quic, 'close');
    for (let i = 0; i < 4; i++) c.stream().write(Buffer.alloc(1_000, 0x41));
    const s = c.stream();
    s.send({ type: 'cache_get', tenantId: 'default', namespace: 'default', cache: 'c', key: 'k' });
    assert.deepEqual(await s.reader.message(), { type: 'error', message: 'auth required' });
    await within(closed, 10_000, 'the unauthenticated connection closed');
    assert.match(h.metrics.render(), /quartet_listener_auth_timeouts_total\{listener="felix"\} [1-9]/);
    await bystanderWorks();
  });
});
