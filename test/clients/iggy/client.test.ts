// IggyClient against the fake server: framing, request numbering, pipelining, errors, evictions,
// timeouts (and requests the server never answers), reconnect + re-login, login replays, the login
// prefix, and the message replies the reference server sends (empty SendMessages bodies, opaque
// user headers in a poll).

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import {
  CommandCode,
  EvictionReason,
  Operation,
  encodeReply,
  requestBodyChecksum,
} from '../../../src/protocols/iggy/codec/index.js';
import {
  IggyClient,
  IggyClosedError,
  IggyConnectionError,
  IggyError,
  IggyEvictedError,
  IggyProducer,
  IggyTimeoutError,
  isIggyClientError,
  type IggyClientOptions,
} from '../../../src/clients/iggy/index.js';
import { quartetVersion } from '../../../src/base/version.js';
import { vector } from '../../protocols/iggy/codec/vectors.js';
import { FakeIggyServer, type FakeRequest } from './fake-server.js';

let server: FakeIggyServer;
const clients: IggyClient[] = [];

function client(options: IggyClientOptions = {}): IggyClient {
  const c = new IggyClient({
    addr: server.addr,
    credentials: { username: 'root', password: 'secret' },
    pingIntervalMs: 0,
    requestTimeoutMs: 2_000,
    reconnect: { attemptsMax: 5, backoffMinMs: 5, backoffMaxMs: 20 },
    random: () => 0.5,
    ...options,
  });
  clients.push(c);
  return c;
}

before(async () => {
  server = await FakeIggyServer.start();
});
after(async () => {
  await server.close();
});
beforeEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  server.requests.length = 0;
  server.handler = () => undefined;
  server.trickle = false;
});

function afterLogin(): FakeRequest[] {
  return server.requests.filter((r) => r.header.operation !== Operation.register);
}

describe('login-register', () => {
  test('sends operation Register, session 0, request 0, a fresh client id and the ClientVersionInfo prefix', async () => {
    const c = client();
    const login = await c.connect();
    assert.ok(login);
    const [req] = server.requests;
    assert.equal(req!.header.operation, Operation.register);
    assert.equal(req!.header.session, 0n);
    assert.equal(req!.header.request, 0n);
    assert.notEqual(req!.header.client, 0n);
    assert.equal(req!.header.client, login.clientId);
    const body = req!.login;
    assert.ok(body && typeof body !== 'string');
    assert.deepEqual(body.versionInfo, { protocolVersion: 11264, sdkName: 'quartet-ts', sdkVersion: quartetVersion });
    assert.deepEqual(body.password, { username: 'root', password: 'secret', context: null });
    // The login reply is result-framed: 00000000 + payload; the client strips the prefix.
    assert.equal(login.session, 1n);
    assert.equal(login.userId, 0);
    assert.equal(login.serverVersion, 'fake-0.11');
    assert.equal(c.state, 'ready');
  });

  test('a login reply without the result prefix is a protocol error, not a mis-read', async () => {
    server.handler = (r) =>
      r.header.operation === Operation.register
        ? { reply: [Buffer.from('0300000001000000000000000000000000', 'hex')] } // 17 bytes: not 00000000 + payload
        : undefined;
    const c = client({ reconnect: false });
    await assert.rejects(c.connect(), (e: unknown) => isIggyClientError(e) && e.kind === 'protocol');
  });

  test('personal access token login uses code 45 with the token body', async () => {
    const c = client({ credentials: { token: 'tok-1' } });
    await c.connect();
    assert.equal(server.requests[0]!.code, CommandCode.loginRegisterWithPat);
    const body = server.requests[0]!.login;
    assert.ok(body && typeof body !== 'string');
    assert.equal(body.token?.token, 'tok-1');
  });

  test('bad credentials: Eviction 9 becomes IggyEvictedError code 42, terminal (no retry)', async () => {
    const c = client({ credentials: { username: 'root', password: 'nope' } });
    await assert.rejects(c.connect(), (e: unknown) => {
      assert.ok(e instanceof IggyEvictedError);
      assert.equal(e.reason, EvictionReason.invalidCredentials);
      assert.equal(e.code, 42);
      assert.equal(e.codeName, 'invalidCredentials');
      assert.equal(e.retriable, false);
      return true;
    });
    assert.equal(server.requests.length, 1);
    await assert.rejects(c.ping(), IggyEvictedError);
  });

  test('an eviction with an unknown reason is IggyEvictedError code 3, not a protocol error', async () => {
    server.handler = (r) => (r.code === CommandCode.getStreams ? { evict: 99 } : undefined);
    const c = client();
    await c.connect();
    await assert.rejects(c.getStreams(), (e: unknown) => {
      assert.ok(e instanceof IggyEvictedError, String(e));
      assert.deepEqual([e.reason, e.code, e.codeName, e.reasonName, e.retriable], [99, 3, 'invalidCommand', 'reason 99', false]);
      return true;
    });
    await assert.rejects(c.ping(), IggyEvictedError, 'terminal: no reconnect');
  });

  test('IncompatibleProtocol with an invalid version window is IggyEvictedError code 40', async () => {
    for (const window of [{ serverProtocolVersion: 11264, serverProtocolVersionMin: 0 }, { serverProtocolVersion: 11264, serverProtocolVersionMin: 11265 }]) {
      server.handler = (r) => (r.header.operation === Operation.register ? { evict: EvictionReason.incompatibleProtocol, ...window } : undefined);
      const c = client();
      await assert.rejects(c.connect(), (e: unknown) => {
        assert.ok(e instanceof IggyEvictedError, String(e));
        assert.deepEqual([e.reason, e.code, e.codeName, e.serverProtocolWindow], [EvictionReason.incompatibleProtocol, 40, 'unauthenticated', null]);
        assert.doesNotMatch(e.message, /server accepts/);
        return true;
      });
    }
  });

  test('IncompatibleProtocol carries the server version window', async () => {
    const c = client({ protocolVersion: (0 << 20) | (12 << 10) });
    await assert.rejects(c.connect(), (e: unknown) => {
      assert.ok(e instanceof IggyEvictedError);
      assert.equal(e.reason, EvictionReason.incompatibleProtocol);
      assert.equal(e.code, 14003);
      assert.deepEqual(e.serverProtocolWindow, { min: '0.11.0', max: '0.11.0' });
      assert.match(e.message, /0\.11\.0/);
      return true;
    });
  });

  test('TransientNotCommitted (57) on login is replayed on the same connection with the same client id', async () => {
    let first = true;
    server.handler = (r) => {
      if (r.header.operation === Operation.register && first) {
        first = false;
        return { rejected: 57 };
      }
      return undefined;
    };
    const c = client();
    const login = await c.connect();
    assert.equal(server.requests.length, 2);
    const [rejected, replay] = server.requests as [FakeRequest, FakeRequest];
    // The register may have committed: a new id would orphan its client-table entry.
    assert.equal(replay.header.client, rejected.header.client);
    assert.equal(replay.conn, rejected.conn);
    assert.deepEqual([replay.header.operation, replay.header.request, replay.header.session], [Operation.register, 0n, 0n]);
    assert.equal(login?.clientId, rejected.header.client);
  });

  test('TransientNotAccepted (58) on login is replayed with a new client id', async () => {
    const refusals = [58, 57];
    server.handler = (r) => {
      const code = r.header.operation === Operation.register ? refusals.shift() : undefined;
      return code === undefined ? undefined : { rejected: code };
    };
    const c = client();
    const login = await c.connect();
    const ids = server.requests.map((r) => r.header.client);
    assert.equal(ids.length, 3);
    assert.notEqual(ids[1], ids[0], 'nothing was committed: a fresh identity');
    assert.equal(ids[2], ids[1], 'after 57 the id stays');
    assert.equal(login?.clientId, ids[2]);
  });

  test('logout sends code 39 on operation Logout, and the session is dropped', async () => {
    const c = client();
    await c.connect();
    await c.logout();
    const req = afterLogin()[0]!;
    assert.equal(req.code, CommandCode.logoutUser);
    assert.equal(req.header.operation, Operation.logout);
    assert.equal(c.loginInfo, null);
  });
});

describe('request numbering', () => {
  test('metadata requests advance the counter; others send the current value; session echoed', async () => {
    const c = client();
    const login = await c.connect();
    await c.createStream('a');
    await c.getStreams();
    await c.createStream('b');
    await c.sendMessages({ streamId: 1, topicId: 1, partitioning: { partitionId: 0 }, messages: ['x'] });
    await c.ping();
    const reqs = afterLogin();
    assert.deepEqual(
      reqs.map((r) => [r.code, r.header.request]),
      [
        [CommandCode.createStream, 1n],
        [CommandCode.getStreams, 2n],
        [CommandCode.createStream, 2n],
        [CommandCode.sendMessages, 3n],
        [CommandCode.ping, 3n],
      ],
    );
    for (const r of reqs) {
      assert.equal(r.header.session, login!.session);
      assert.equal(r.header.client, login!.clientId);
    }
    // Metadata bodies are stamped with XXH3-64(body); the rest carry 0. NonReplicated carries the code.
    assert.equal(reqs[0]!.header.requestChecksum, requestBodyChecksum(reqs[0]!.body));
    assert.equal(reqs[1]!.header.requestChecksum, 0n);
    assert.equal(reqs[1]!.header.operation, Operation.nonReplicated);
    assert.equal(reqs[1]!.header.commandCode, CommandCode.getStreams);
    assert.equal(reqs[3]!.header.operation, Operation.sendMessages);
  });

  test('ping works before login (session 0)', async () => {
    const c = client({ credentials: undefined });
    assert.equal(await c.connect(), null);
    await c.ping();
    assert.equal(server.requests[0]!.header.session, 0n);
    await assert.rejects(c.getStreams(), (e: unknown) => e instanceof IggyError && e.code === 40 && e.codeName === 'unauthenticated');
    await c.login('root', 'secret');
    await c.getStreams();
  });
});

describe('pipelining and framing', () => {
  test('requests are pipelined and replies matched in order', async () => {
    const held: FakeRequest[] = [];
    server.handler = (r) => {
      if (r.code !== CommandCode.createStream) return undefined;
      held.push(r);
      if (held.length < 5) return { hold: true };
      // All five are on the wire before the first reply: answer them in one write, in order.
      for (const h of held) {
        const name = (h.decoded as { request: { name: string } }).request.name;
        h.conn.reply(h, encodeReply(CommandCode.createStream, { id: Number(name), createdAt: 0n, topicsCount: 0, sizeBytes: 0n, messagesCount: 0n, name, options: [] }));
      }
      return { hold: true };
    };
    const c = client();
    await c.connect();
    const results = await Promise.all(['1', '2', '3', '4', '5'].map((n) => c.createStream(n)));
    assert.deepEqual(results.map((s) => s.id), [1, 2, 3, 4, 5]);
    assert.deepEqual(afterLogin().map((r) => r.header.request), [1n, 2n, 3n, 4n, 5n]);
  });

  test('replies that arrive one byte at a time are reassembled', async () => {
    server.trickle = true;
    const c = client();
    await c.connect();
    const [a, b] = await Promise.all([c.createStream('x'), c.ping()]);
    assert.equal(a.name, 'x');
    assert.equal(b, undefined);
  });

  test('inflightRequestsMax bounds what is on the wire; the rest wait in order', async () => {
    let onWire = 0;
    let maxOnWire = 0;
    const held: FakeRequest[] = [];
    server.handler = (r) => {
      if (r.code !== CommandCode.ping) return undefined;
      onWire++;
      maxOnWire = Math.max(maxOnWire, onWire);
      held.push(r);
      setImmediate(() => {
        onWire--;
        r.conn.reply(r, []);
      });
      return { hold: true };
    };
    const c = client({ inflightRequestsMax: 2 });
    await c.connect();
    await Promise.all([...Array(6)].map(() => c.ping()));
    assert.equal(held.length, 6);
    assert.ok(maxOnWire <= 2, `max on wire ${maxOnWire}`);
  });
});

describe('errors', () => {
  test('a non-zero status becomes IggyError with code and name', async () => {
    server.handler = (r) => (r.code === CommandCode.getStreams ? { status: 1009 } : undefined);
    const c = client();
    await assert.rejects(c.getStreams(), (e: unknown) => {
      assert.ok(e instanceof IggyError);
      assert.equal(e.code, 1009);
      assert.equal(e.codeName, 'streamIdNotFound');
      assert.equal(e.command, 'stream.list');
      assert.equal(e.kind, 'server');
      return true;
    });
  });

  test('a committed rejection in the result section becomes IggyError', async () => {
    server.handler = (r) => (r.code === CommandCode.createStream ? { rejected: 1012 } : undefined);
    const c = client();
    await assert.rejects(c.createStream('dup'), (e: unknown) => e instanceof IggyError && e.code === 1012 && e.codeName === 'streamNameAlreadyExists');
  });

  test('an eviction after login fails the in-flight requests with IggyEvictedError, then the client re-registers', async () => {
    let evicted = false;
    server.handler = (r) => {
      if (r.code === CommandCode.getStreams && !evicted) {
        evicted = true;
        return { evict: EvictionReason.staleClient };
      }
      return undefined;
    };
    const c = client();
    const first = await c.connect();
    await assert.rejects(c.getStreams(), (e: unknown) => e instanceof IggyEvictedError && e.code === 30 && e.retriable);
    await c.getStreams();
    assert.notEqual(c.loginInfo!.clientId, first!.clientId);
  });

  test('timeouts: the request fails, its late reply is dropped, the next request gets its own reply', async () => {
    let held: FakeRequest | null = null;
    server.handler = (r) => {
      if (r.code === CommandCode.createStream && held === null) {
        held = r;
        return { hold: true };
      }
      if (r.code === CommandCode.getStreams && held !== null) {
        // Answer the timed-out request first, then this one: order is preserved.
        held.conn.reply(held, encodeReply(CommandCode.createStream, { id: 1, createdAt: 0n, topicsCount: 0, sizeBytes: 0n, messagesCount: 0n, name: 'late', options: [] }));
      }
      return undefined;
    };
    const c = client();
    await c.connect();
    await assert.rejects(c.createStream('slow', { timeoutMs: 50 }), (e: unknown) => e instanceof IggyTimeoutError && e.retriable && e.timeoutMs === 50);
    assert.deepEqual(await c.getStreams(), []);
  });

  test('a request the server never answers times out, and the next request on the connection still gets its reply', async () => {
    // The reference server stays silent on a replicated request it could not submit.
    server.handler = (r) => (r.code === CommandCode.createStream ? { hold: true } : undefined);
    const c = client();
    const login = await c.connect();
    const disconnected: unknown[] = [];
    c.on('disconnect', (e) => disconnected.push(e));
    await assert.rejects(c.createStream('silent', { timeoutMs: 50 }), IggyTimeoutError);
    await assert.rejects(c.createStream('silent-too', { timeoutMs: 50 }), IggyTimeoutError);
    assert.deepEqual(await c.getStreams(), []);
    await c.ping();
    assert.deepEqual(
      afterLogin().map((r) => [r.code, r.header.request]),
      [
        [CommandCode.createStream, 1n],
        [CommandCode.createStream, 2n],
        [CommandCode.getStreams, 3n],
        [CommandCode.ping, 3n],
      ],
      'numbering as before: the silent requests keep their numbers',
    );
    assert.deepEqual(disconnected, []);
    assert.equal(c.loginInfo!.clientId, login!.clientId, 'the same connection and session');
    // A reply that matches nothing up to the first live request still means the stream is out of step.
    await assert.rejects(c.createStream('silent-again', { timeoutMs: 50 }), IggyTimeoutError);
    server.handler = (r) => {
      if (r.code !== CommandCode.ping) return undefined;
      r.conn.reply({ ...r, header: { ...r.header, request: 99n } }, []);
      return { hold: true };
    };
    await assert.rejects(c.ping(), (e: unknown) => isIggyClientError(e) && e.kind === 'protocol');
    assert.equal(disconnected.length, 1);
  });

  test('a pipelined request the server skips fails at once as unanswered when a later one is answered; the connection stays', async () => {
    server.handler = (r) => (r.code === CommandCode.createStream ? { hold: true } : undefined);
    const c = client();
    await c.connect();
    const disconnected: unknown[] = [];
    c.on('disconnect', (e) => disconnected.push(e));
    const skipped = c.createStream('never-answered', { timeoutMs: 60_000 });
    const answered = c.getStreams();
    assert.deepEqual(await answered, []);
    await assert.rejects(skipped, (e: unknown) => e instanceof IggyTimeoutError && e.retriable && e.timeoutMs === 0);
    await c.ping();
    assert.deepEqual(disconnected, []);
  });

  test('requests sharing a request number are told apart by the echoed timestamp: a silent ping does not take the next ping\'s reply', async () => {
    let held = 0;
    server.handler = (r) => (r.code === CommandCode.ping && held++ === 0 ? { hold: true } : undefined);
    const c = client();
    await c.connect();
    await assert.rejects(c.ping({ timeoutMs: 50 }), IggyTimeoutError);
    await c.ping({ timeoutMs: 2_000 });
    await c.ping({ timeoutMs: 2_000 });
    const pings = afterLogin().filter((r) => r.code === CommandCode.ping);
    assert.equal(pings.length, 3);
    assert.equal(new Set(pings.map((r) => r.header.request)).size, 1, 'one request number for all three');
    const stamps = pings.map((r) => r.header.timestamp);
    assert.ok(stamps[0]! < stamps[1]! && stamps[1]! < stamps[2]!, 'strictly increasing timestamps');
  });

  test('close() fails pending requests with IggyClosedError', async () => {
    server.handler = (r) => (r.code === CommandCode.getStreams ? { hold: true } : undefined);
    const c = client();
    await c.connect();
    const pending = c.getStreams();
    await new Promise((r) => setTimeout(r, 20));
    await c.close();
    await assert.rejects(pending, IggyClosedError);
    await assert.rejects(c.ping(), IggyClosedError);
    assert.equal(c.state, 'closed');
  });
});

describe('reconnect', () => {
  test('a dropped connection fails in-flight requests (retriable) and the client reconnects and logs in again', async () => {
    let dropped = false;
    server.handler = (r) => {
      if (r.code === CommandCode.getStreams && !dropped) {
        dropped = true;
        return { drop: true };
      }
      return undefined;
    };
    const c = client();
    const first = await c.connect();
    const reconnected = new Promise((resolve) => c.once('connect', resolve));
    await assert.rejects(c.getStreams(), (e: unknown) => e instanceof IggyConnectionError && e.retriable);
    await reconnected;
    assert.deepEqual(await c.getStreams(), []);
    const logins = server.requests.filter((r) => r.header.operation === Operation.register);
    assert.equal(logins.length, 2);
    const second = logins[1]!.login;
    assert.ok(second && typeof second !== 'string');
    assert.deepEqual(second.password, { username: 'root', password: 'secret', context: null });
    assert.notEqual(c.loginInfo!.clientId, first!.clientId);
    // The numbering restarts with the new session.
    const last = server.requests[server.requests.length - 1]!;
    assert.equal(last.header.session, c.loginInfo!.session);
  });

  test('requests made while reconnecting wait for the new session', async () => {
    const c = client();
    await c.connect();
    const disconnected = new Promise((resolve) => c.once('disconnect', resolve));
    server.dropAll();
    await disconnected;
    assert.equal(c.state, 'reconnecting');
    await c.ping();
    assert.equal(c.state, 'ready');
  });

  test('with reconnect off, a dropped connection stays down until connect()', async () => {
    const c = client({ reconnect: false });
    await c.connect();
    const disconnected = new Promise((resolve) => c.once('disconnect', resolve));
    server.dropAll();
    await disconnected;
    await assert.rejects(c.ping(), IggyConnectionError);
    await c.connect();
    await c.ping();
  });

  test('connection refused: bounded attempts with backoff, then IggyConnectionError', async () => {
    const c = new IggyClient({ addr: '127.0.0.1:1', pingIntervalMs: 0, reconnect: { attemptsMax: 3, backoffMinMs: 1, backoffMaxMs: 2 }, connectTimeoutMs: 500 });
    clients.push(c);
    const attempts: number[] = [];
    c.on('reconnect', (n: number) => attempts.push(n));
    await assert.rejects(c.connect(), IggyConnectionError);
    assert.deepEqual(attempts, [1, 2]);
  });
});

describe('message replies', () => {
  test('an empty SendMessages reply body is zero confirmations: sendMessages resolves with nulls', async () => {
    // What the reference sends for a de-duplicated send (and the Node SDK reads as { confirmations: [] }).
    server.handler = (r) => (r.code === CommandCode.sendMessages ? { reply: [] } : undefined);
    const c = client();
    await c.connect();
    assert.deepEqual(await c.sendMessages({ streamId: 1, topicId: 1, partitioning: { partitionId: 0 }, messages: ['x'] }), { partitionId: null, baseOffset: null });
    const producer = new IggyProducer(c, { streamId: 1, topicId: 1 });
    assert.deepEqual(await producer.send(['a', 'b'], { partitionId: 2 }), { partitionId: 2, firstOffset: null, count: 2 });
    await producer.close();
    // A count of 0 reads the same.
    server.handler = (r) => (r.code === CommandCode.sendMessages ? { reply: [Buffer.alloc(4)] } : undefined);
    assert.deepEqual(await c.sendMessages({ streamId: 1, topicId: 1, messages: ['y'] }), { partitionId: null, baseOffset: null });
  });

  test('pollMessages returns the golden poll reply, opaque user headers included', async () => {
    server.handler = (r) => (r.code === CommandCode.pollMessages ? { reply: [vector('poll_messages_reply_body')] } : undefined);
    const c = client();
    await c.connect();
    const polled = await c.pollMessages({ streamId: 1, topicId: 2, partitionId: 3, strategy: 'first', count: 2 });
    assert.equal(polled.currentOffset, 101n);
    assert.deepEqual(polled.messages.map((m) => [m.offset, m.payload.toString(), m.rawHeaders.toString(), m.headers]), [
      [100n, 'first-payload', '', []],
      [101n, 'second-payload', 'user-header-bytes', []],
    ]);
  });
});
