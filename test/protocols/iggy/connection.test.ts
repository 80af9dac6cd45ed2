// IggyConnection over real loopback sockets: the header rules (status replies vs evictions vs
// close), request checksums, PING before login, pipelining order, backpressure-safe garbage
// handling, and that one bad connection never disturbs another.

import assert from 'node:assert/strict';
import { ManualClock } from '../../../src/base/clock.js';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { describe, it } from 'node:test';
import {
  CommandCode,
  ConsumerKind,
  PollingKind,
  EvictionReason,
  IggyErrorCode,
  Operation,
  encodeRequestHeader,
  headerBytes,
  iggyProtocolVersion,
  iggyProtocolVersionMin,
  option,
  type EvictionHeader,
} from '../../../src/protocols/iggy/codec/index.js';
import { QuartetError } from '../../../src/base/errors.js';
import { IggyConnection, unauthenticatedFrameBytesMax } from '../../../src/protocols/iggy/connection.js';
import { eventually, rootPassword, sendRequest, sid, startIggy, type Received } from './harness.js';
import { holdPurgeStart } from '../../core/helpers.js';

function evictionReason(r: Received): number {
  assert.equal(r.kind, 'eviction', 'expected an eviction frame');
  if (r.kind !== 'eviction') return -1;
  assert.notEqual(typeof r.eviction, 'string', `eviction must decode: ${String(r.eviction)}`);
  return (r.eviction as EvictionHeader).reason;
}

function pingFrame(client: bigint, request: bigint, patch?: (b: Buffer) => void): Buffer {
  const h = encodeRequestHeader({ size: headerBytes, client, request, operation: Operation.nonReplicated, session: 0n, commandCode: CommandCode.ping });
  patch?.(h);
  return h;
}

describe('iggy connection: header rules', () => {
  it('answers PING before login and refuses everything else with status 40', async (t) => {
    const h = await startIggy(t);
    const c = await h.client();
    const ping = await c.raw(CommandCode.ping, {});
    assert.equal(ping.kind, 'reply');
    if (ping.kind === 'reply') {
      assert.equal(ping.header.status, 0);
      assert.equal(ping.body.length, 0);
      assert.equal(ping.header.client, c.clientId);
    }
    assert.deepEqual(await c.call(CommandCode.getStreams, {}), { status: IggyErrorCode.unauthenticated });
    assert.deepEqual(await c.call(CommandCode.getClusterMetadata, {}), { status: IggyErrorCode.unauthenticated });
    assert.equal(c.closed, false);
  });

  it('logs in with a result-prefixed reply whose header op is the session', async (t) => {
    const h = await startIggy(t);
    const c = await h.client();
    c.write(c.frame(CommandCode.loginRegister, { versionInfo: { protocolVersion: iggyProtocolVersion, sdkName: 'x', sdkVersion: '1' }, username: 'iggy', password: 'secret-root', context: null }, { request: 0n, session: 0n }));
    const r = await c.next();
    assert.equal(r.kind, 'reply');
    if (r.kind !== 'reply') return;
    assert.equal(r.header.status, 0);
    assert.deepEqual([...r.body.subarray(0, 4)], [0, 0, 0, 0], 'success prefix');
    const userId = r.body.readUInt32LE(4);
    const session = r.body.readBigUInt64LE(8);
    assert.equal(userId, 0);
    assert.ok(session > 0n);
    assert.equal(r.header.op, session);
    assert.equal(r.body.readUInt32LE(16), iggyProtocolVersion);
    assert.equal(r.header.operation, Operation.register);
  });

  it('echoes timestamp, request number, operation and request checksum in replies', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    c.write(c.frame(CommandCode.getStreams, {}, { request: 77n }));
    const r = await c.next();
    assert.equal(r.kind, 'reply');
    if (r.kind !== 'reply') return;
    assert.equal(r.header.request, 77n);
    assert.equal(r.header.operation, Operation.nonReplicated);
    assert.equal(r.header.op, c.session);
  });

  it('evicts on release != 0 (3), reserved and internal operations (4), bad register numbers (12), missing session (1)', async (t) => {
    const h = await startIggy(t);
    const cases: Array<[string, (b: Buffer) => void, number]> = [
      ['release', (b) => b.writeUInt32LE(1, 56), EvictionReason.clientReleaseTooHigh],
      ['operation 0', (b) => (b[176] = 0), EvictionReason.invalidRequestOperation],
      ['internal operation', (b) => (b[176] = 64), EvictionReason.invalidRequestOperation],
      ['register with session', (b) => ((b[176] = Operation.register), b.writeBigUInt64LE(5n, 184)), EvictionReason.sessionError],
      ['replicated without session', (b) => (b[176] = Operation.createStream), EvictionReason.noSession],
      ['unknown operation', (b) => ((b[176] = 200), b.writeBigUInt64LE(1n, 184)), EvictionReason.invalidRequestOperation],
    ];
    for (const [what, patch, reason] of cases) {
      const c = await h.client();
      c.write([pingFrame(c.clientId, 1n, patch)]);
      const r = await c.next();
      assert.equal(evictionReason(r), reason, what);
      if (r.kind === 'eviction' && typeof r.eviction !== 'string') assert.equal(r.eviction.client, c.clientId);
      await c.whenClosed();
    }
  });

  it('closes without a reply on client 0, a non-request command byte, and a size below 256', async (t) => {
    const h = await startIggy(t);
    const patches: Array<(b: Buffer) => void> = [
      (b) => b.fill(0, 128, 144),
      (b) => (b[60] = 8),
      (b) => b.writeUInt32LE(100, 48),
    ];
    for (const patch of patches) {
      const c = await h.client();
      c.write([pingFrame(c.clientId, 1n, patch)]);
      await c.whenClosed();
      assert.equal(c.received.length, 0);
    }
  });

  it('evicts an oversized frame with reason 6 before reading its body', async (t) => {
    const h = await startIggy(t, { settings: { frameBytesMax: 4096 } });
    const c = await h.client();
    c.write([pingFrame(c.clientId, 1n, (b) => b.writeUInt32LE(1_000_000, 48))]);
    assert.equal(evictionReason(await c.next()), EvictionReason.invalidRequestBodySize);
    await c.whenClosed();
  });

  it('answers a request checksum mismatch with status 4, an unknown command with 3 (40 before login), a misrouted one with 5', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    const frame = c.frame(CommandCode.createStream, { name: 'checked', options: [] });
    const header = Buffer.from(frame[0]!);
    header.writeBigUInt64LE(header.readBigUInt64LE(144) ^ 1n, 144);
    c.write([header, ...frame.slice(1)]);
    const r = await c.next();
    assert.equal(r.kind === 'reply' && r.header.status, IggyErrorCode.invalidFormat);
    assert.equal(h.broker.catalog.getNamespace('checked'), null);
    // a correct checksum is accepted
    assert.ok('value' in (await c.call(CommandCode.createStream, { name: 'checked', options: [] })));
    c.write([pingFrame(c.clientId, ++c.requestNo, (b) => b.writeUInt32LE(9999, 196))]);
    const unknown = await c.next();
    assert.equal(unknown.kind === 'reply' && unknown.header.status, IggyErrorCode.invalidCommand);
    // A replicated command's code sent as NonReplicated: no such read, FeatureUnavailable (5).
    c.write([pingFrame(c.clientId, ++c.requestNo, (b) => b.writeUInt32LE(CommandCode.createStream, 196))]);
    const misrouted = await c.next();
    assert.equal(misrouted.kind === 'reply' && misrouted.header.status, IggyErrorCode.featureUnavailable);
    // Logout (39) is a session operation, not a replicated command: as NonReplicated it is unknown (3), and the session stays.
    c.write([pingFrame(c.clientId, ++c.requestNo, (b) => b.writeUInt32LE(CommandCode.logoutUser, 196))]);
    const logoutAsRead = await c.next();
    assert.equal(logoutAsRead.kind === 'reply' && logoutAsRead.header.status, IggyErrorCode.invalidCommand);
    assert.ok('value' in (await c.call(CommandCode.getMe, {})));
    // Before login, any non-replicated code but Ping is Unauthenticated (40), unknown ones included.
    const fresh = await h.client();
    fresh.write([pingFrame(fresh.clientId, 1n, (b) => b.writeUInt32LE(9999, 196))]);
    const early = await fresh.next();
    assert.equal(early.kind === 'reply' && early.header.status, IggyErrorCode.unauthenticated);
  });

  it('evicts legacy logins 38/44 with reason 15', async (t) => {
    const h = await startIggy(t);
    for (const code of [CommandCode.loginUser, CommandCode.loginWithPersonalAccessToken]) {
      const c = await h.client();
      c.write([pingFrame(c.clientId, 1n, (b) => b.writeUInt32LE(code, 196))]);
      assert.equal(evictionReason(await c.next()), EvictionReason.malformedLogin);
      await c.whenClosed();
    }
  });

  it('answers an undecodable body with status 3, an options block over 100,000 bytes with 4043, and keeps the session', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    const body = Buffer.from([9, 9, 9]);
    const nr = encodeRequestHeader({ size: headerBytes + 3, client: c.clientId, request: ++c.requestNo, operation: Operation.nonReplicated, session: c.session, commandCode: CommandCode.getStream });
    c.write([nr, body]);
    const r = await c.next();
    assert.equal(r.kind === 'reply' && r.header.status, IggyErrorCode.invalidCommand);
    const rep = encodeRequestHeader({ size: headerBytes + 3, client: c.clientId, request: ++c.requestNo, operation: Operation.createStream, session: c.session });
    c.write([rep, body]);
    const r2 = await c.next();
    assert.equal(r2.kind === 'reply' && r2.header.status, IggyErrorCode.invalidCommand);
    // CreateStream: name 's', then an options block of 100,001 bytes.
    const big = Buffer.concat([Buffer.from([1, 0x73]), Buffer.alloc(100_001, 1)]);
    const huge = encodeRequestHeader({ size: headerBytes + big.length, client: c.clientId, request: ++c.requestNo, operation: Operation.createStream, session: c.session });
    c.write([huge, big]);
    const r3 = await c.next();
    assert.equal(r3.kind === 'reply' && r3.header.status, IggyErrorCode.optionsBlockTooLarge);
    assert.equal(r3.kind === 'reply' && r3.header.request, c.requestNo);
    // Duplicate option keys: refused, nothing created, and the connection still answers.
    const dup = await c.call(CommandCode.createStream, { name: 'dup', options: [option('k', { kind: 'string', value: 'a' }), option('k', { kind: 'string', value: 'b' })] });
    assert.deepEqual(dup, { status: IggyErrorCode.invalidCommand });
    assert.equal(h.broker.catalog.getNamespace('dup'), null);
    assert.ok('value' in (await c.call(CommandCode.ping, {})));
  });

  it('keeps replies of pipelined requests in order', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    const frames: Buffer[] = [];
    const n = 40;
    for (let i = 0; i < n; i++) frames.push(...c.frame(i % 2 === 0 ? CommandCode.getStreams : CommandCode.ping, {} as never));
    const first = c.requestNo - BigInt(n) + 1n;
    c.write(frames);
    for (let i = 0; i < n; i++) {
      const r = await c.next();
      assert.equal(r.kind, 'reply');
      if (r.kind === 'reply') assert.equal(r.header.request, first + BigInt(i));
    }
  });

  it('answers the requests pipelined before a frame that ends the connection, then closes or evicts', async (t) => {
    const h = await startIggy(t, { settings: { frameBytesMax: 1 << 20 } });
    // The bad frame, a variant of a good ping frame: [header offset, bytes, what follows].
    const cases: Array<{ what: string; patch: (f: Buffer) => Buffer; then: 'close' | 'eviction' }> = [
      { what: 'command byte 4', patch: (f) => (f.writeUInt8(4, 60), f), then: 'close' },
      { what: 'client id 0', patch: (f) => (f.fill(0, 128, 144), f), then: 'close' },
      { what: 'size below the header', patch: (f) => (f.writeUInt32LE(100, 48), f), then: 'close' },
      { what: 'size over the maximum', patch: (f) => (f.writeUInt32LE(2 << 20, 48), f), then: 'eviction' },
      { what: 'operation 0', patch: (f) => (f.writeUInt8(0, 176), f), then: 'eviction' },
    ];
    for (const c of cases) {
      const client = await h.root();
      t.after(() => client.destroy());
      const frames: Buffer[] = [];
      for (let i = 0; i < 3; i++) frames.push(...client.frame(CommandCode.getStreams, {}));
      const bad = c.patch(Buffer.concat(client.frame(CommandCode.ping, {})));
      client.write([...frames, bad]);
      for (let i = 0; i < 3; i++) assert.equal((await client.next()).kind, 'reply', `${c.what}: reply ${i}`);
      if (c.then === 'eviction') assert.equal((await client.next()).kind, 'eviction', c.what);
      await client.whenClosed();
      assert.equal(client.received.length, 0, `${c.what}: nothing after`);
    }
    // A SendMessages pipelined before the bad frame is applied and acknowledged.
    await h.broker.createTopic('default', 'acked', { partitions: 1 });
    const sender = await h.root();
    t.after(() => sender.destroy());
    const send = sender.frame(CommandCode.sendMessages, sendRequest(sid('default'), sid('acked'), ['x']));
    const bad = Buffer.concat(sender.frame(CommandCode.ping, {}));
    bad.writeUInt8(4, 60);
    sender.write([...send, bad]);
    const ack = await sender.next();
    assert.ok(ack.kind === 'reply' && ack.header.status === 0);
    await sender.whenClosed();
  });

  for (const readInto of [true, false]) {
    it(`answers what a client sent before it half-closed, then ends (${readInto ? 'read buffers' : 'data events'})`, async (t) => {
      const h = await startIggy(t, { readInto });
      await h.broker.createTopic('default', 'half', { partitions: 1 });
      const c = await h.root();
      t.after(() => c.destroy());
      // The send is held until the server has seen the FIN, so its reply surely comes after it.
      const serverSide = [...h.frontend.sessions.values()].map((s) => (s as unknown as { socket: Socket }).socket).find((s) => s.remotePort === c.socket.localPort)!;
      const sawEnd = serverSide.readableEnded ? Promise.resolve() : once(serverSide, 'end').then(() => undefined);
      const append = h.broker.append.bind(h.broker);
      h.broker.append = async (...args) => {
        await sawEnd;
        return append(...args);
      };
      const frames: Buffer[] = [];
      for (let i = 0; i < 3; i++) frames.push(...c.frame(CommandCode.getStreams, {}));
      frames.push(...c.frame(CommandCode.sendMessages, sendRequest(sid('default'), sid('half'), ['x', 'y'])));
      // The first bytes of one more frame: unfinished at the FIN, so dropped.
      const partial = Buffer.concat(c.frame(CommandCode.ping, {})).subarray(0, 100);
      c.write([...frames, partial]);
      c.socket.end();
      for (let i = 0; i < 4; i++) {
        const r = await c.next();
        assert.ok(r.kind === 'reply' && r.header.status === 0, `reply ${i}`);
      }
      await c.whenClosed();
      assert.equal(c.received.length, 0, 'nothing for the partial frame');
      assert.equal(h.broker.partition({ topic: 'half' }, 0).stats().nextOffset, 2, 'the send was applied');
    });
  }

  /** A broker with halfClosedStallMs `stallMs`, and a root client whose topic holds `count` messages of `bytes`. */
  async function withStoredMessages(t: Parameters<typeof startIggy>[0], stallMs: number, topic: string, count: number, bytes: number) {
    const h = await startIggy(t, { settings: { halfClosedStallMs: stallMs } });
    const c = await h.root();
    t.after(() => c.destroy());
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: topic, options: [] });
    await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid(topic), Array.from({ length: count }, () => Buffer.alloc(bytes, 7))));
    /** `n` polls of every message, as frames. */
    const polls = (n: number): Buffer[] =>
      Array.from({ length: n }, () => c.frame(CommandCode.pollMessages, { consumer: { kind: ConsumerKind.consumer, id: sid(1) }, streamId: sid('default'), topicId: sid(topic), partitionId: 0, strategy: { kind: PollingKind.first, value: 0n }, count, autoCommit: false })).flat();
    return { h, c, polls };
  }

  it('cuts off a client that half-closed and stopped reading its replies once the output stalls', async (t) => {
    const stallMs = 300;
    const { h, c, polls } = await withStoredMessages(t, stallMs, 'big', 4, 900_000);
    const serverSide = [...h.frontend.sessions.values()].map((s) => (s as unknown as { socket: Socket }).socket).find((s) => s.remotePort === c.socket.localPort)!;
    // The polls are held until the server has seen the FIN: its reading pauses once its output is
    // blocked, and a FIN that came after that would never be seen.
    const sawEnd = once(serverSide, 'end').then(() => Date.now());
    const openSettled = h.broker.reads.openSettled.bind(h.broker.reads);
    h.broker.reads.openSettled = async (...args) => {
      await sawEnd;
      return openSettled(...args);
    };
    // 40 polls of 3.6 MB each: far more than the socket buffers hold while the client reads nothing.
    c.socket.pause();
    c.write(polls(40));
    c.socket.end();
    const endedAt = await sawEnd;
    await eventually(() => serverSide.destroyed, 'the stalled half-closed connection to be destroyed', 20 * stallMs + 5000);
    assert.ok(Date.now() - endedAt >= stallMs, 'not before the output stalled for halfClosedStallMs');
    await eventually(() => h.frontend.sessions.size === 0, 'its session to go');
  });

  it('does not cut off a half-closed client whose request takes long with nothing to send', async (t) => {
    const stallMs = 300;
    const { h } = await withStoredMessages(t, stallMs, 'slow', 1, 10);
    // A send held (by a purge) for several stall periods, with nothing waiting to go out meanwhile.
    const d = await h.root();
    t.after(() => d.destroy());
    const { inPurge, release } = holdPurgeStart(h.broker);
    const purged = h.broker.purgeTopic({ topic: 'slow' });
    await inPurge;
    d.write(d.frame(CommandCode.sendMessages, sendRequest(sid('default'), sid('slow'), ['held'])));
    d.socket.end();
    await new Promise((resolve) => setTimeout(resolve, 4 * stallMs));
    release();
    await purged;
    const ack = await d.next();
    assert.ok(ack.kind === 'reply' && ack.header.status === 0, 'the held send is acknowledged');
  });

  it('bounds the in-flight queue: a burst larger than the limit is paused, not dropped, and answered in order', async (t) => {
    const h = await startIggy(t, { settings: { inFlightRequestsMax: 4 } });
    const c = await h.root();
    const n = 300;
    const frames: Buffer[] = [];
    for (let i = 0; i < n; i++) frames.push(...c.frame(CommandCode.getStreams, {}, { request: BigInt(1000 + i) }));
    c.write(frames);
    for (let i = 0; i < n; i++) {
      const r = await c.next();
      assert.equal(r.kind === 'reply' && r.header.request, BigInt(1000 + i));
    }
  });

  it('survives garbage and split frames; other connections keep working', async (t) => {
    const h = await startIggy(t);
    const good = await h.root();
    const bad = await h.client();
    bad.write([Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(20))]);
    await bad.whenClosed();
    // a frame fed one byte at a time
    const slow = await h.client();
    const frame = Buffer.concat(slow.frame(CommandCode.ping, {}));
    for (const byte of frame) slow.socket.write(Buffer.from([byte]));
    const r = await slow.next();
    assert.equal(r.kind === 'reply' && r.header.status, 0);
    // random bytes with a plausible size field
    for (let i = 0; i < 5; i++) {
      const junk = await h.client();
      const b = Buffer.alloc(300, 0xab);
      b.writeUInt32LE(300, 48);
      junk.write([b]);
      await junk.whenClosed();
    }
    assert.ok('value' in (await good.call(CommandCode.getStreams, {})));
  });

  it('before login, evicts a frame over the largest login (reason 6) before reading its body; the largest login passes; after it, the usual limit holds', async (t) => {
    const h = await startIggy(t);
    const early = await h.client();
    early.write([pingFrame(early.clientId, 1n, (b) => b.writeUInt32LE(unauthenticatedFrameBytesMax + 1, 48))]);
    assert.equal(evictionReason(await early.next()), EvictionReason.invalidRequestBodySize);
    await early.whenClosed();
    // The largest LoginRegister that decodes: 255-byte SDK name and version, a 64 KiB context.
    const c = await h.client();
    const login = c.frame(CommandCode.loginRegister, {
      versionInfo: { protocolVersion: iggyProtocolVersion, sdkName: 'n'.repeat(255), sdkVersion: 'v'.repeat(255) },
      username: 'iggy',
      password: rootPassword,
      context: 'c'.repeat(64 * 1024),
    });
    assert.ok(login.reduce((n, b) => n + b.length, 0) > unauthenticatedFrameBytesMax - 1024);
    c.write(login);
    const r = await c.next();
    assert.ok(r.kind === 'reply' && r.header.status === 0, 'the largest login is served');
    c.session = r.header.op;
    // Logged in: a 1 MiB send is framed and applied.
    await h.broker.createTopic('default', 'big', { partitions: 1 });
    const sent = await c.call(CommandCode.sendMessages, sendRequest(sid('default'), sid('big'), [Buffer.alloc(1 << 20, 7)]));
    assert.ok('value' in sent, 'the send is applied');
  });

  it('before login, stops reading while a request is handled: a peer that pipelines holds about one frame', async (t) => {
    const h = await startIggy(t);
    // The login's verification waits for the test: meanwhile the peer has sent 3.6 MiB behind it.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered = false;
    const verify = h.broker.users.verifyPassword.bind(h.broker.users);
    h.broker.users.verifyPassword = async (username, password) => {
      entered = true;
      await gate;
      return verify(username, password);
    };
    const c = await h.client();
    const frames: Buffer[] = [...c.frame(CommandCode.loginRegister, { versionInfo: { protocolVersion: iggyProtocolVersion, sdkName: 'quartet-test', sdkVersion: '0' }, username: 'iggy', password: rootPassword, context: null })];
    const n = 60;
    // Pings carrying 60 KiB each (bytes after a whole request are ignored).
    for (let i = 1; i <= n; i++) frames.push(pingFrame(c.clientId, BigInt(i), (b) => b.writeUInt32LE(headerBytes + 60 * 1024, 48)), Buffer.alloc(60 * 1024));
    c.write(frames);
    await eventually(() => entered, 'the login to be verified');
    const conn = [...h.frontend.sessions.values()][0] as IggyConnection;
    let most = 0;
    const deadline = Date.now() + 500;
    while (Date.now() < deadline) {
      most = Math.max(most, conn.heldRequestBytes);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.ok(most <= 192 * 1024, `held ${most} bytes before login`);
    release();
    const r = await c.next();
    assert.ok(r.kind === 'reply' && r.header.status === 0, 'login');
    for (let i = 0; i < n; i++) {
      const p = await c.next();
      assert.ok(p.kind === 'reply' && p.header.status === 0, `ping ${i}`);
    }
  });

  it('closes a connection that has not logged in within the deadline; a logged-in one stays', async (t) => {
    const h = await startIggy(t, { authTimeoutMs: 300 });
    const idle = await h.client();
    const pinging = await h.client();
    const member = await h.root();
    // Pings are answered before login, but do not lift the deadline.
    assert.ok('value' in (await pinging.call(CommandCode.ping, {})));
    await idle.whenClosed();
    await pinging.whenClosed();
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.ok('value' in (await member.call(CommandCode.ping, {})), 'the logged-in connection still answers');
    // A Logout returns it to "before login": the deadline runs again.
    assert.ok('value' in (await member.call(CommandCode.logoutUser, {})));
    await member.whenClosed();
  });
});

describe('iggy connection: a full listener', () => {
  it('closes the oldest connection that has not logged in to make room, so idle connections cannot lock out a login', async (t) => {
    const h = await startIggy(t, { maxConnections: 4 });
    const member = await h.root();
    // Three idle connections that never log in (each pinged, so the listener has them all).
    const idle = [];
    for (let i = 0; i < 3; i++) {
      const c = await h.client();
      assert.ok('value' in (await c.call(CommandCode.ping, {})));
      idle.push(c);
    }
    // The listener is full; a client that logs in still gets in, and the oldest idle one goes.
    const late = await h.client();
    await late.login('iggy', rootPassword);
    await idle[0]!.whenClosed();
    assert.ok('value' in (await late.call(CommandCode.ping, {})));
    assert.ok('value' in (await member.call(CommandCode.ping, {})), 'a logged-in connection is never closed to make room');
    assert.ok('value' in (await idle[1]!.call(CommandCode.ping, {})));
  });
});

describe('iggy connection: sessions', () => {
  it('evicts incompatible protocol versions with the window (14) and malformed logins (15)', async (t) => {
    const h = await startIggy(t);
    const c = await h.client();
    c.write(c.frame(CommandCode.loginRegister, { versionInfo: { protocolVersion: (0 << 20) | (12 << 10), sdkName: 'x', sdkVersion: '1' }, username: 'iggy', password: 'secret-root', context: null }));
    const r = await c.next();
    assert.equal(evictionReason(r), EvictionReason.incompatibleProtocol);
    if (r.kind === 'eviction' && typeof r.eviction !== 'string') {
      assert.equal(r.eviction.serverProtocolVersion, iggyProtocolVersion);
      assert.equal(r.eviction.serverProtocolVersionMin, iggyProtocolVersionMin);
    }
    // 0.11.7 is accepted
    const ok = await h.client();
    const accepted = await ok.call(CommandCode.loginRegister, { versionInfo: { protocolVersion: iggyProtocolVersion + 7, sdkName: 'x', sdkVersion: '1' }, username: 'iggy', password: 'secret-root', context: null });
    assert.ok('value' in accepted);
    const m = await h.client();
    const header = encodeRequestHeader({ size: headerBytes + 2, client: m.clientId, request: 0n, operation: Operation.register, session: 0n });
    m.write([header, Buffer.from([1, 2])]);
    assert.equal(evictionReason(await m.next()), EvictionReason.malformedLogin);
  });

  it('evicts wrong passwords (9), bad tokens (10) and inactive users (11)', async (t) => {
    const h = await startIggy(t);
    const a = await h.client();
    assert.deepEqual(await a.login('iggy', 'nope'), { evicted: EvictionReason.invalidCredentials });
    const b = await h.client();
    assert.deepEqual(await b.loginWithToken('not-a-token'), { evicted: EvictionReason.invalidToken });
    await h.broker.users.create({ username: 'sleepy', password: 'password1', status: 'inactive' });
    const c = await h.client();
    assert.deepEqual(await c.login('sleepy', 'password1'), { evicted: EvictionReason.userInactive });
  });

  it('throttles failed logins: slowed, then refused as a wrong password even with the right one, until the window passes', async (t) => {
    const clock = new ManualClock(Date.now());
    const h = await startIggy(t, { clock, broker: { authThrottle: { delayAfterFailures: 2, lockoutAfterFailures: 4, lockoutMs: 60_000, delayBaseMs: 1, delayMaxMs: 1 } } });
    for (let i = 0; i < 4; i++) {
      const c = await h.client();
      assert.deepEqual(await c.login('iggy', `guess-${i}`), { evicted: EvictionReason.invalidCredentials });
    }
    // Locked out (the name, and this peer): the right password is refused without a check.
    const locked = await h.client();
    assert.deepEqual(await locked.login('iggy', 'secret-root'), { evicted: EvictionReason.invalidCredentials });
    const text = h.broker.metrics.render();
    assert.match(text, /quartet_auth_failures_total\{protocol="iggy"\} 5/);
    assert.match(text, /quartet_auth_delayed_total\{protocol="iggy"\} 2/);
    assert.match(text, /quartet_auth_locked_out_total\{protocol="iggy",scope="user"\} 1/);
    clock.advance(60_000);
    const later = await h.client();
    assert.ok('value' in (await later.login('iggy', 'secret-root')), 'the window passed');
  });

  it('fences an older registration of the same client id (7) and logs out', async (t) => {
    const h = await startIggy(t);
    const first = await h.root();
    const second = await h.client();
    second.clientId = first.clientId;
    await second.login('iggy', 'secret-root');
    assert.ok(second.session > first.session);
    assert.deepEqual(await first.call(CommandCode.getStreams, {}), { evicted: EvictionReason.sessionTooLow });
    assert.ok('value' in (await second.call(CommandCode.getStreams, {})));
    // logout: the connection is back to "before login"; the reply's op is the session it ended
    const ended = second.session;
    const out = await second.raw(CommandCode.logoutUser, {});
    assert.equal(out.kind === 'reply' && out.header.status, 0);
    assert.equal(out.kind === 'reply' && out.header.op, ended);
    second.session = 0n;
    const r = await second.call(CommandCode.getStreams, {});
    assert.deepEqual(r, { status: IggyErrorCode.unauthenticated });
    // A logout on a connection with no login (an SDK that reconnected logs out its old session
    // before logging in again) succeeds: what it asks for already holds. Its reply's op is 0.
    const again = await second.raw(CommandCode.logoutUser, {}, { session: ended });
    assert.ok(again.kind === 'reply' && again.header.status === 0 && again.header.op === 0n && again.body.length === 0);
    const reconnected = await h.client();
    const stale = await reconnected.raw(CommandCode.logoutUser, {}, { session: ended, request: 3n });
    assert.ok(stale.kind === 'reply' && stale.header.status === 0 && stale.body.length === 0);
    assert.ok('value' in (await reconnected.login('iggy', 'secret-root')));
  });

  it('does not track partition operations by request number; a new registration of the client id keeps its replies', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    await c.call(CommandCode.createTopic, { streamId: { kind: 'numeric', value: h.broker.catalog.requireNamespace('default').id }, partitionsCount: 1, name: 'n', options: [] }, { request: 5n });
    // Store/Delete offset and Send repeat the current counter (5): applied every time.
    const ref = { consumer: { kind: 1 as const, id: { kind: 'numeric' as const, value: 1 } }, streamId: { kind: 'string' as const, value: 'default' }, topicId: { kind: 'string' as const, value: 'n' }, partitionId: 0 };
    for (let i = 0; i < 2; i++) assert.ok('value' in (await c.call(CommandCode.sendMessages, sendRequest(ref.streamId, ref.topicId, ['a', 'b', 'c']), { request: 5n })));
    assert.equal(h.broker.partition(h.broker.catalog.getTopic({ topic: 'n' })!, 0).stats().highWatermark, 6, 'both sends appended');
    assert.ok('value' in (await c.call(CommandCode.storeConsumerOffset, { ...ref, offset: 3n, ack: 1 }, { request: 5n })));
    assert.ok('value' in (await c.call(CommandCode.storeConsumerOffset, { ...ref, offset: 4n, ack: 1 }, { request: 5n })));
    const got = await c.call(CommandCode.getConsumerOffset, ref, { request: 5n });
    assert.ok('value' in got && got.value?.storedOffset === 4n);
    // Same client id, new registration: the client resumes its request numbers. A retry of request
    // 5 is answered from the cache (the topic is not made twice), an older number is 59, and a
    // reuse of 5 for other arguments (another request_checksum) is refused with status 4.
    const topicsBefore = h.broker.catalog.listTopics().length;
    await c.login('iggy', 'secret-root');
    const retried = await c.call(CommandCode.createTopic, { streamId: { kind: 'numeric', value: h.broker.catalog.requireNamespace('default').id }, partitionsCount: 1, name: 'n', options: [] }, { request: 5n });
    assert.ok('value' in retried, 'the cached reply');
    assert.equal(h.broker.catalog.listTopics().length, topicsBefore);
    assert.deepEqual(await c.call(CommandCode.createStream, { name: 'late', options: [] }, { request: 1n }), { rejected: IggyErrorCode.requestAlreadyApplied });
    assert.deepEqual(await c.call(CommandCode.createStream, { name: 'other', options: [] }, { request: 5n }), { status: IggyErrorCode.invalidFormat });
    assert.equal(h.broker.catalog.getNamespace('other'), null);
    // Unstamped (request_checksum 0): another operation under the number is refused all the same,
    // and the same operation gets the cached reply (nothing to compare its arguments with).
    assert.deepEqual(await c.call(CommandCode.createStream, { name: 'other', options: [] }, { request: 5n, stampChecksum: false }), { status: IggyErrorCode.invalidFormat });
    const unstamped = await c.raw(CommandCode.createTopic, { streamId: { kind: 'string', value: 'default' }, partitionsCount: 1, name: 'n2', options: [] }, { request: 5n, stampChecksum: false });
    assert.ok(unstamped.kind === 'reply' && unstamped.header.status === 0);
    assert.equal(h.broker.catalog.getTopic({ topic: 'n2' }), null, 'answered from the cache, not applied');
    assert.equal(h.broker.catalog.getNamespace('other'), null);
    assert.ok('value' in (await c.call(CommandCode.createStream, { name: 'fresh', options: [] }, { request: 6n })));
    assert.notEqual(h.broker.catalog.getNamespace('fresh'), null);
  });

  it('does not number DeleteSegments as a metadata request, and does not remember transient refusals (57/58)', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    await c.call(CommandCode.createTopic, { streamId: { kind: 'string', value: 'default' }, partitionsCount: 1, name: 'seg', options: [] }, { request: 1n });
    // The Rust SDK sends DeleteSegments with the request number the next metadata request takes.
    const del = await c.raw(CommandCode.deleteSegments, { streamId: { kind: 'string', value: 'default' }, topicId: { kind: 'string', value: 'seg' }, partitionId: 0, segmentsCount: 1 }, { request: 2n });
    assert.ok(del.kind === 'reply' && del.header.status === 0);
    assert.ok('value' in (await c.call(CommandCode.createStream, { name: 'after-segments', options: [] }, { request: 2n })));
    assert.notEqual(h.broker.catalog.getNamespace('after-segments'), null, 'applied, not answered from a cache');
    // A transient refusal is replayed by the SDKs with the same request: the replay is applied.
    const createNamespace = h.broker.createNamespace;
    t.after(() => {
      h.broker.createNamespace = createNamespace;
    });
    let refusals = 1;
    h.broker.createNamespace = (name, options) => (refusals-- > 0 ? Promise.reject(new QuartetError('not_ready', 'starting')) : createNamespace.call(h.broker, name, options));
    assert.deepEqual(await c.call(CommandCode.createStream, { name: 'later', options: [] }, { request: 3n }), { rejected: IggyErrorCode.transientNotAccepted });
    const replayed = await c.call(CommandCode.createStream, { name: 'later', options: [] }, { request: 3n });
    assert.ok('value' in replayed, 'the replay is applied, not answered from the cache');
    assert.notEqual(h.broker.catalog.getNamespace('later'), null);
  });

  it('refuses a client id that belongs to another user (Eviction 12), and lets its owner back', async (t) => {
    const h = await startIggy(t);
    await h.broker.users.create({ username: 'other', password: 'password1', status: 'active' });
    const owner = await h.root();
    assert.ok('value' in (await owner.call(CommandCode.createStream, { name: 'mine', options: [] })));
    const thief = await h.client();
    thief.clientId = owner.clientId;
    assert.deepEqual(await thief.login('other', 'password1'), { evicted: EvictionReason.sessionError });
    assert.ok('value' in (await owner.call(CommandCode.getStreams, {})), 'the owner keeps its session');
    // Even with the owner gone, its client id (with remembered replies) stays its own.
    owner.destroy();
    await eventually(() => h.frontend.sessions.size === 0, 'the owner disconnected');
    const again = await h.client();
    again.clientId = owner.clientId;
    assert.deepEqual(await again.login('other', 'password1'), { evicted: EvictionReason.sessionError });
    const back = await h.client();
    back.clientId = owner.clientId;
    assert.ok('value' in (await back.login('iggy', 'secret-root')));
  });

  it('a Logout gives the client id up: the same connection logs in again as another user, its request numbers started over', async (t) => {
    const h = await startIggy(t);
    await h.broker.users.create({ username: 'bob', password: 'password1', status: 'active', permissions: { global: { manageServers: false, readServers: false, manageUsers: false, readUsers: false, manageStreams: true, readStreams: true, manageTopics: false, readTopics: false, pollMessages: false, sendMessages: false }, streams: [] } });
    const c = await h.root();
    c.requestNo = 0n;
    assert.ok('value' in (await c.call(CommandCode.createStream, { name: 'first', options: [] })));
    assert.equal(c.requestNo, 1n);
    const out = await c.raw(CommandCode.logoutUser, {});
    assert.ok(out.kind === 'reply' && out.header.status === 0);
    c.session = 0n;
    // As the SDKs do: Register again under the same client id (here as another user), numbering from 1.
    const login = await c.login('bob', 'password1');
    assert.ok('value' in login, 'not Eviction 12: the client id is free again');
    c.requestNo = 0n;
    assert.ok('value' in (await c.call(CommandCode.createStream, { name: 'second', options: [] })), 'request 1 again is a new request');
    assert.notEqual(h.broker.catalog.getNamespace('second'), null);
  });

  it('serves a retried metadata request from the reply cache, applying it once', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    const frame = c.frame(CommandCode.createStream, { name: 'once', options: [] }, { request: 50n });
    c.write(frame);
    const a = await c.next();
    c.write(frame);
    const b = await c.next();
    assert.ok(a.kind === 'reply' && b.kind === 'reply');
    if (a.kind === 'reply' && b.kind === 'reply') assert.deepEqual(b.body, a.body);
    assert.equal(h.broker.catalog.listNamespaces().filter((n) => n.name === 'once').length, 1);
    // a different request number is a new operation (and a duplicate name)
    c.requestNo = 50n;
    assert.deepEqual(await c.call(CommandCode.createStream, { name: 'once', options: [] }), { rejected: IggyErrorCode.streamNameAlreadyExists });
    // an old number no longer remembered: RequestAlreadyApplied
    h.frontend.settings.replyCacheEntriesMax = 1;
    c.requestNo = 60n;
    await c.call(CommandCode.createStream, { name: 'twice', options: [] });
    assert.deepEqual(await c.call(CommandCode.createStream, { name: 'x', options: [] }, { request: 50n }), { rejected: IggyErrorCode.requestAlreadyApplied });
  });
});
