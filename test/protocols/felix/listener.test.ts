// The Felix listener over real QUIC on 127.0.0.1: per-stream authentication (ok, auth_ok with
// the advertised flags and features), the notes' error texts on every path of docs/protocols/
// felix-wire-v1.md §7 (auth required, auth already established, unexpected message type, refused
// flags answered and the stream kept, bad magic, a pre-auth frame over 64 KiB, truncated frames),
// garbage datagrams at the UDP socket, the authentication deadline (close code 1) and the
// connection limits, with requireAuth: auth failed, tenant mismatch, forbidden.

import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Feature, encodeFrameHeader, encodeMessageFrame, encodePublishBatch, frameHeaderBytes, serverFlags } from '../../../src/protocols/felix/codec/index.js';
import { globalGrants } from '../../../src/core/access.js';
import { selfSignedCertificateFile } from '../../../src/protocols/felix/listener.js';
import { startFelix, type FelixHarness, type TestClient } from './harness.js';

describe('felix listener: streams and authentication', () => {
  let h: FelixHarness;
  let client: TestClient;

  after(() => h.stop());
  before(async () => {
    h = await startFelix(null);
    client = await h.connect();
  });

  it('answers a legacy auth with ok, and one with client_flags with auth_ok and what is served', async () => {
    const legacy = client.stream();
    legacy.send({ type: 'auth', tenantId: 'default', token: 'anything' });
    assert.deepEqual(await legacy.reader.message(), { type: 'ok' });
    const negotiated = client.stream();
    negotiated.send({ type: 'auth', tenantId: 'default', token: 'anything', clientFlags: 0x00ff, clientFeatures: 0x3ff });
    const reply = await negotiated.reader.message();
    assert.equal(reply.type, 'auth_ok');
    assert.ok(reply.type === 'auth_ok');
    assert.equal(reply.serverFlags, serverFlags);
    const features = reply.serverFeatures ?? 0;
    assert.equal(features & (Feature.topology | Feature.redirect), 0, 'no cluster features on one node');
    assert.equal(features, h.listener.frontend.server.features, 'exactly the features of the handlers in place');
  });

  it('closes a stream whose first request is not auth with "auth required"', async () => {
    const s = client.stream();
    s.send({ type: 'publish', tenantId: 'default', namespace: 'default', stream: 'x', payload: Buffer.from('a'), ack: 'none' });
    assert.deepEqual(await s.reader.message(), { type: 'error', message: 'auth required' });
    await s.reader.end();
    const b = client.stream();
    b.write(encodePublishBatch({ acked: null, key: null, tenantId: 'default', namespace: 'default', stream: 'x', payloads: [Buffer.from('a')] }));
    assert.deepEqual(await b.reader.message(), { type: 'error', message: 'auth required' });
    await b.reader.end();
  });

  it('closes a stream on a second auth with "auth already established"', async () => {
    const s = await client.authed();
    s.send({ type: 'auth', tenantId: 'default', token: 'again' });
    assert.deepEqual(await s.reader.message(), { type: 'error', message: 'auth already established' });
    await s.reader.end();
  });

  it('answers broker-to-client messages with "unexpected message type" and closes; a client error closes silently', async () => {
    for (const m of [{ type: 'ok' }, { type: 'publish_ok', requestId: 1n }, { type: 'event_stream_hello', subscriptionId: 1n }] as const) {
      const s = await client.authed();
      s.send(m);
      assert.deepEqual(await s.reader.message(), { type: 'error', message: 'unexpected message type' }, m.type);
      await s.reader.end();
    }
    const c = await client.authed();
    c.send({ type: 'subscribe_cursor_error', reason: 'too_old', requested: 1n, available: 2n });
    assert.deepEqual(await c.reader.message(), { type: 'error', message: 'subscribe_cursor_error is a server-to-client message' });
    await c.reader.end();
    const e = await client.authed();
    e.send({ type: 'error', message: 'bye' });
    await e.reader.end();
  });

  it('answers refused flags with "unsupported frame flags" and keeps the stream', async () => {
    const s = await client.authed();
    for (const flags of [0x0100, 0x0008, 0x0003]) {
      const payload = Buffer.from('xyz');
      s.write([encodeFrameHeader(flags, payload.length), payload]);
      assert.deepEqual(await s.reader.message(), { type: 'error', message: 'unsupported frame flags' }, `flags ${flags}`);
    }
    s.send({ type: 'auth', tenantId: 'default', token: 'x' });
    assert.deepEqual(await s.reader.message(), { type: 'error', message: 'auth already established' }, 'the stream went on');
  });

  it('ends a stream on a bad magic, a pre-auth frame over 64 KiB, a JSON payload that does not decode', async () => {
    const magic = client.stream();
    const frame = encodeMessageFrame({ type: 'auth', tenantId: 'default', token: 'x' });
    frame.writeUInt32BE(0xdeadbeef, 0);
    magic.write(frame);
    await magic.reader.end();
    const big = client.stream();
    big.write(encodeFrameHeader(0, 65_537));
    await big.reader.end();
    const json = client.stream();
    const bad = Buffer.from('{"type":"auth",');
    json.write([encodeFrameHeader(0, bad.length), bad]);
    await json.reader.end();
    // A pre-auth frame of exactly 64 KiB is read (and, not being JSON, ends the stream only then).
    const edge = client.stream();
    edge.write([encodeFrameHeader(0, 65_536), Buffer.alloc(65_536, 0x20)]);
    await edge.reader.end();
  });

  it('ends a stream whose peer finishes it in the middle of a frame, answering the whole frames before', async () => {
    const s = client.stream();
    const auth = encodeMessageFrame({ type: 'auth', tenantId: 'default', token: 'x' });
    s.write([auth, auth.subarray(0, frameHeaderBytes + 3)]);
    s.raw.end();
    assert.deepEqual(await s.reader.message(), { type: 'ok' });
    await s.reader.end();
  });

  it('survives garbage datagrams at its UDP socket and serves afterwards', async () => {
    const udp = createSocket('udp4');
    for (const size of [1, 40, 1200, 1350]) {
      const junk = Buffer.alloc(size);
      for (let i = 0; i < size; i++) junk[i] = (i * 131 + size) & 0xff;
      udp.send(junk, h.port, '127.0.0.1');
    }
    udp.send(Buffer.from('FLX1 but not QUIC'), h.port, '127.0.0.1');
    await new Promise<void>((resolve) => udp.send(Buffer.alloc(0), h.port, '127.0.0.1', () => resolve()));
    udp.close();
    const other = await h.connect();
    const s = await other.authed();
    s.send({ type: 'auth', tenantId: 'default', token: 'x' });
    assert.deepEqual(await s.reader.message(), { type: 'error', message: 'auth already established' });
  });

  it('survives random bytes on streams, before and after auth, and serves afterwards', async () => {
    let seed = 0x2f6b_1c3d;
    const random = (): number => ((seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0) >>> 16) & 0xff;
    const streams = [];
    for (let i = 0; i < 12; i++) {
      const s = i % 2 === 0 ? client.stream() : await client.authed();
      const junk = Buffer.alloc(200 + i * 97);
      for (let j = 0; j < junk.length; j++) junk[j] = random();
      // A third of them look like frames: a valid header, then junk of the declared length.
      if (i % 3 === 0) {
        junk.writeUInt32BE(0x464c5831, 0);
        junk.writeUInt16BE(1, 4);
        junk.writeUInt16BE(random() & 0x7f, 6);
        junk.writeUInt32BE(junk.length - 12, 8);
      }
      s.write(junk);
      s.raw.end();
      streams.push(s);
    }
    for (const s of streams) {
      // Whatever each got (an error, an ack, nothing), every stream ends.
      for (let r = await s.reader.next(); r.kind !== 'end'; r = await s.reader.next());
    }
    const after = await client.authed();
    after.send({ type: 'auth', tenantId: 'default', token: 'x' });
    assert.deepEqual(await after.reader.message(), { type: 'error', message: 'auth already established' });
  });

  it('writes the self-signed certificate it made to the data directory', () => {
    assert.equal(readFileSync(join(h.dataDir, selfSignedCertificateFile), 'utf8'), h.listener.certificate);
  });

  it('reports its connections and requests in the listener metrics', () => {
    const text = h.metrics.render();
    assert.match(text, /quartet_listener_connections\{listener="felix"\} [1-9]/);
    assert.match(text, /quartet_listener_requests_total\{listener="felix",operation="auth"\} [1-9]/);
  });
});

describe('felix listener: deadlines and limits', () => {
  it('closes a connection none of whose streams authenticated in time with code 1', async (t) => {
    const h = await startFelix(t, { listener: { authTimeoutMs: 300 } });
    const c = await h.connect();
    c.stream().send({ type: 'ok' });
    const closed = once(c.quic, 'close');
    await Promise.race([closed, new Promise((_, reject) => setTimeout(() => reject(new Error('not closed in time')), 5_000))]);
    assert.match(h.metrics.render(), /quartet_listener_auth_timeouts_total\{listener="felix"\} 1/);
  });

  it('keeps an authenticated connection past the deadline', async (t) => {
    // Long enough for the first connection to authenticate on a loaded machine.
    const h = await startFelix(t, { listener: { authTimeoutMs: 1_500 } });
    const authed = await h.connect();
    await authed.authed();
    // A connection opened after it that never authenticates is closed: the deadline has passed for both.
    const idle = await h.connect();
    await Promise.race([once(idle.quic, 'close'), new Promise((_, reject) => setTimeout(() => reject(new Error('not closed in time')), 5_000))]);
    const s = authed.stream();
    s.send({ type: 'auth', tenantId: 'default', token: 'x' });
    assert.deepEqual(await s.reader.message(), { type: 'ok' });
    assert.match(h.metrics.render(), /quartet_listener_auth_timeouts_total\{listener="felix"\} 1/);
  });

  it('refuses a connection beyond the per-peer limit', async (t) => {
    const h = await startFelix(t, { listener: { connectionsPerPeerMax: 1 } });
    const first = await h.connect();
    await first.authed();
    const second = await h.connect().catch(() => null);
    if (second !== null) {
      await Promise.race([once(second.quic, 'close'), new Promise((_, reject) => setTimeout(() => reject(new Error('not refused')), 5_000))]);
    }
    assert.match(h.metrics.render(), /quartet_listener_peer_rejected_total\{listener="felix"\} 1/);
  });
});

describe('felix listener: tokens (requireAuth)', () => {
  let h: FelixHarness;
  let client: TestClient;
  let aliceToken: string;

  after(() => h.stop());
  before(async () => {
    h = await startFelix(null, { settings: { requireAuth: true } });
    const alice = await h.broker.users.create({ username: 'alice', password: 'alice-pw', permissions: globalGrants(['poll_messages']) });
    aliceToken = (await h.broker.users.createToken(alice.id, 'felix', null)).token;
    await h.broker.createTopic('default', 'orders', { partitions: 1 });
    client = await h.connect();
  });

  it('answers a bad token with "auth failed" and closes the stream', async () => {
    for (const token of ['nope', 'alice:wrong', 'nobody:x']) {
      const s = client.stream();
      s.send({ type: 'auth', tenantId: 'default', token });
      assert.deepEqual(await s.reader.message(), { type: 'error', message: 'auth failed' }, token);
      await s.reader.end();
    }
  });

  it('accepts a personal access token and user:password', async () => {
    await client.authed('default', aliceToken);
    await client.authed('default', `root:${'secret-root'}`);
  });

  it('refuses a request for another tenant with "tenant mismatch"', async () => {
    const s = await client.authed('acme', aliceToken);
    s.send({ type: 'publish', tenantId: 'default', namespace: 'default', stream: 'orders', payload: Buffer.from('a'), requestId: 1n });
    assert.deepEqual(await s.reader.message(), { type: 'publish_error', requestId: 1n, message: 'tenant mismatch' });
  });

  it('refuses what the grants do not allow with "forbidden"', async () => {
    const s = await client.authed('default', aliceToken);
    s.send({ type: 'publish', tenantId: 'default', namespace: 'default', stream: 'orders', payload: Buffer.from('a'), requestId: 2n });
    assert.deepEqual(await s.reader.message(), { type: 'publish_error', requestId: 2n, message: 'forbidden' });
    const root = await client.authed('default', 'root:secret-root');
    root.send({ type: 'publish', tenantId: 'default', namespace: 'default', stream: 'orders', payload: Buffer.from('a'), requestId: 3n });
    assert.deepEqual(await root.reader.message(), { type: 'publish_ok', requestId: 3n });
  });
});
