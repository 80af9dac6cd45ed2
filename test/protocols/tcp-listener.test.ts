import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { createLogger, type Logger } from '../../src/base/logger.js';
import { MetricsRegistry } from '../../src/core/metrics.js';
import { TcpListener, type CloseReason, type ConnectionFactory, type TcpListenerOptions } from '../../src/protocols/tcp-listener.js';

/** A line protocol: every line is a request echoed back; lines starting with "slow" wait for release. */
class EchoFrontEnd {
  readonly pending = new Map<string, () => void>();
  readonly closeReasons: CloseReason[] = [];
  private onPending: (() => void) | null = null;

  readonly factory: ConnectionFactory = (socket, ctx) => {
    let closing = false;
    let buffered = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (closing) continue;
        const slow = line.startsWith('slow');
        const done = ctx.beginRequest(slow ? 'slow' : 'echo');
        const reply = (): void => {
          socket.write(`${line}\n`);
          done();
        };
        if (!slow) reply();
        else {
          this.pending.set(line, reply);
          this.onPending?.();
        }
      }
    });
    return {
      close: (reason) => {
        closing = true;
        this.closeReasons.push(reason);
      },
    };
  };

  /** Resolves once `line` is in flight. */
  async inFlight(line: string): Promise<void> {
    while (!this.pending.has(line)) await new Promise<void>((resolve) => (this.onPending = resolve));
  }

  release(line: string): void {
    const reply = this.pending.get(line);
    assert.ok(reply, `${line} is not pending`);
    this.pending.delete(line);
    reply();
  }
}

function captureLogger(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  return { logger: createLogger('debug', (line) => lines.push(JSON.parse(line) as Record<string, unknown>)), lines };
}

async function startListener(frontEnd: EchoFrontEnd, overrides: Partial<TcpListenerOptions> = {}) {
  const metrics = new MetricsRegistry();
  const { logger, lines } = captureLogger();
  const listener = new TcpListener({
    name: 'echo',
    addr: { host: '127.0.0.1', port: 0 },
    maxConnections: 100,
    logger,
    metrics,
    connectionFactory: frontEnd.factory,
    ...overrides,
  });
  const { port } = await listener.start();
  return { listener, port, metrics, lines };
}

/** A client that collects what it receives and knows when the server closed it. */
class Client {
  received = '';
  readonly closed: Promise<void>;
  private waiters: Array<() => void> = [];

  constructor(readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.received += chunk;
      for (const wake of this.waiters.splice(0)) wake();
    });
    socket.on('error', () => {});
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
  }

  static open(port: number): Promise<Client> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port }, () => resolve(new Client(socket)));
      socket.once('error', reject);
    });
  }

  send(line: string): void {
    this.socket.write(`${line}\n`);
  }

  async receive(text: string): Promise<void> {
    while (!this.received.includes(text)) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
}

/** Polls `check` until it holds, failing after `deadlineMs`. */
async function eventually(check: () => boolean, what: string, deadlineMs = 5_000): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (!check()) {
    if (Date.now() > until) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

test('echo round trip, connection tracking and request metrics', async () => {
  const fe = new EchoFrontEnd();
  const { listener, port, metrics } = await startListener(fe);
  const a = await Client.open(port);
  const b = await Client.open(port);
  a.send('hello');
  b.send('world');
  await a.receive('hello\n');
  await b.receive('world\n');
  await eventually(() => listener.connectionCount === 2, 'two connections');
  const text = metrics.render();
  assert.match(text, /quartet_listener_connections\{listener="echo"\} 2/);
  assert.match(text, /quartet_listener_connections_total\{listener="echo"\} 2/);
  assert.match(text, /quartet_listener_requests_total\{listener="echo",operation="echo"\} 2/);
  assert.match(text, /quartet_request_duration_seconds_count\{listener="echo",operation="echo"\} 2/);
  a.socket.end();
  await a.closed;
  await eventually(() => listener.connectionCount === 1, 'one connection after a client left');
  assert.match(metrics.render(), /quartet_listener_connections\{listener="echo"\} 1/);
  await listener.stop(1_000);
  await b.closed;
});

test('connections beyond maxConnections, all authenticated, are closed at once and logged', async () => {
  const fe = new EchoFrontEnd();
  const { listener, port, metrics, lines } = await startListener(fe, { maxConnections: 2, connectionFactory: authenticatingFactory(fe) });
  const a = await Client.open(port);
  const b = await Client.open(port);
  a.send('login');
  await a.receive('login\n');
  b.send('login');
  await b.receive('login\n');
  const c = await Client.open(port);
  const cPort = c.socket.localPort;
  await c.closed;
  assert.equal(c.received, '');
  await eventually(() => lines.some((l) => l.msg === 'connection limit reached; connection closed'), 'the log line');
  assert.match(metrics.render(), /quartet_listener_connections_rejected_total\{listener="echo"\} 1/);
  const warn = lines.find((l) => l.msg === 'connection limit reached; connection closed')!;
  assert.equal(warn.maxConnections, 2);
  assert.equal(warn.remote, `127.0.0.1:${cPort}`, 'the refused peer is named');
  assert.equal(listener.connectionCount, 2);
  await listener.stop(1_000);
});

test('graceful stop: no new connections, in-flight requests finish, then sockets end', async () => {
  const fe = new EchoFrontEnd();
  const { listener, port } = await startListener(fe);
  const busy = await Client.open(port);
  const idle = await Client.open(port);
  idle.send('ping');
  await idle.receive('ping\n');
  busy.send('slow-1');
  await fe.inFlight('slow-1');

  let stopped = false;
  const stopping = listener.stop(5_000).then(() => (stopped = true));
  await idle.closed; // nothing in flight: closed straight away
  await assert.rejects(Client.open(port), /ECONNREFUSED/);
  assert.deepEqual(fe.closeReasons, ['shutdown', 'shutdown']);
  assert.equal(stopped, false, 'stop waits for the in-flight request');

  busy.send('after-close'); // the front-end stops reading new requests once told to close
  fe.release('slow-1');
  await busy.receive('slow-1\n');
  await busy.closed;
  await stopping;
  assert.equal(busy.received, 'slow-1\n');
});

test('drain timeout: connections with requests still in flight are destroyed', async () => {
  const fe = new EchoFrontEnd();
  const { listener, port, lines } = await startListener(fe);
  const stuck = await Client.open(port);
  stuck.send('slow-forever');
  await fe.inFlight('slow-forever');
  const started = Date.now();
  await listener.stop(100);
  await stuck.closed;
  assert.ok(Date.now() - started < 3_000);
  assert.ok(lines.some((l) => l.msg === 'drain timeout; closing connections with requests in flight' && l.connections === 1));
});

test('a factory that throws closes only that connection', async () => {
  let calls = 0;
  const fe = new EchoFrontEnd();
  const factory: ConnectionFactory = (socket, ctx) => {
    if (calls++ === 0) throw new Error('boom');
    return fe.factory(socket, ctx);
  };
  const { listener, port, lines } = await startListener(fe, { connectionFactory: factory });
  const first = await Client.open(port);
  await first.closed;
  assert.ok(lines.some((l) => l.msg === 'connection handler failed to start; connection closed'));
  const second = await Client.open(port);
  second.send('ok');
  await second.receive('ok\n');
  await listener.stop(1_000);
});

test('a port in use is a clear start error', async () => {
  const fe = new EchoFrontEnd();
  const { listener, port } = await startListener(fe);
  const other = new TcpListener({ name: 'echo2', addr: { host: '127.0.0.1', port }, maxConnections: 1, logger: captureLogger().logger, metrics: new MetricsRegistry(), connectionFactory: fe.factory });
  await assert.rejects(other.start(), new RegExp(`cannot listen for echo2 on 127.0.0.1:${port}`));
  await listener.stop(100);
});

const certDir = mkdtempSync(join(tmpdir(), 'quartet-tls-'));
after(() => rmSync(certDir, { recursive: true, force: true }));

function makeCert(): { certFile: string; keyFile: string } | null {
  const certFile = join(certDir, 'cert.pem');
  const keyFile = join(certDir, 'key.pem');
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=localhost'], { stdio: 'ignore' });
    return { certFile, keyFile };
  } catch {
    return null;
  }
}

test('TLS: the front-end sees the decrypted stream; stop drains it', async (t) => {
  const tls = makeCert();
  if (!tls) return t.skip('openssl is not installed');
  const fe = new EchoFrontEnd();
  const { listener, port, metrics } = await startListener(fe, { tls });
  const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false });
  await new Promise((resolve) => socket.once('secureConnect', resolve));
  const client = new Client(socket);
  client.send('secret');
  await client.receive('secret\n');
  assert.match(metrics.render(), /quartet_listener_connections\{listener="echo"\} 1/);
  await listener.stop(1_000);
  await client.closed;
  assert.match(metrics.render(), /quartet_listener_connections\{listener="echo"\} 0/);
});

for (const transport of ['tcp', 'tls'] as const) {
  test(`allowHalfOpen (${transport}): a reply written after the client's FIN reaches it; without the option the socket ends at the FIN`, async (t) => {
    const tls = transport === 'tls' ? makeCert() : null;
    if (transport === 'tls' && !tls) return t.skip('openssl is not installed');
    // The front-end answers only once the input has ended (a reply still being worked on at the FIN).
    const factory: ConnectionFactory = (socket) => {
      socket.on('data', () => undefined);
      socket.on('end', () => setTimeout(() => socket.writable && socket.end('late reply'), 20));
      return { close: () => undefined, whenIdle: () => Promise.resolve() };
    };
    for (const allowHalfOpen of [true, false]) {
      const { listener, port } = await startListener(new EchoFrontEnd(), { connectionFactory: factory, allowHalfOpen, ...(tls ? { tls } : {}) });
      const socket = tls ? tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }) : connect(port, '127.0.0.1');
      await new Promise((resolve) => socket.once(tls ? 'secureConnect' : 'connect', resolve));
      let got = '';
      socket.on('data', (d: Buffer) => (got += d.toString()));
      socket.on('error', () => undefined);
      socket.write('request');
      socket.end();
      await new Promise((resolve) => socket.once('close', resolve));
      assert.equal(got, allowHalfOpen ? 'late reply' : '', `allowHalfOpen ${allowHalfOpen}`);
      await listener.stop(1_000);
    }
  });
}

test('TLS with allowHalfOpen: a peer that sends its FIN before the handshake is closed at once', async (t) => {
  const tls = makeCert();
  if (!tls) return t.skip('openssl is not installed');
  const { listener, port } = await startListener(new EchoFrontEnd(), { tls, allowHalfOpen: true });
  t.after(() => listener.stop(1_000));
  const probe = connect(port, '127.0.0.1');
  await new Promise((resolve) => probe.once('connect', resolve));
  probe.on('error', () => undefined);
  const closed = new Promise((resolve) => probe.once('close', resolve));
  probe.end();
  const timedOut = await Promise.race([closed.then(() => false), new Promise((resolve) => setTimeout(() => resolve(true), 5_000))]);
  assert.equal(timedOut, false, 'the server closed the connection, not left it half-open');
});

test('readInto: plain TCP sockets read into one reused buffer; bytes arrive intact across pause and resume', async () => {
  const received: Buffer[] = [];
  const buffers = new Set<ArrayBufferLike>();
  let paused = false;
  let pausedNow = false;
  let chunksWhilePaused = 0;
  let readIntoSeen: boolean | null = null;
  const fe = new EchoFrontEnd();
  const factory: ConnectionFactory = (socket, ctx) => {
    readIntoSeen = ctx.readInto !== undefined;
    let total = 0;
    ctx.readInto?.((chunk) => {
      if (pausedNow) chunksWhilePaused++;
      buffers.add(chunk.buffer);
      received.push(Buffer.from(chunk)); // a copy: the chunk is only valid during the call
      total += chunk.length;
      if (!paused && total >= 1 << 20) {
        paused = true;
        pausedNow = true;
        socket.pause();
        setTimeout(() => {
          pausedNow = false;
          socket.resume();
        }, 20);
      }
      if (total === sent.length) socket.end('done');
    });
    return { close: () => {} };
  };
  const sent = Buffer.alloc(4 << 20);
  for (let i = 0; i < sent.length; i += 4) sent.writeUInt32LE(i, i);
  const { listener, port } = await startListener(fe, { connectionFactory: factory, readInto: true });
  const client = await Client.open(port);
  for (let at = 0; at < sent.length; at += 100_000) client.socket.write(sent.subarray(at, at + 100_000));
  await client.receive('done');
  assert.equal(readIntoSeen, true);
  assert.ok(paused, 'the connection paused the socket once');
  assert.equal(chunksWhilePaused, 0, 'no chunk arrives while the socket is paused');
  assert.ok(Buffer.concat(received).equals(sent), 'every byte arrived, in order');
  assert.equal(buffers.size, 1, `all ${received.length} chunks were read into one (shared) buffer`);
  assert.equal(listener.connectionCount, 1);
  await listener.stop(1_000);
  await client.closed;
  assert.equal(listener.connectionCount, 0);
});

test('readInto is absent without the option: the front-end gets data events', async () => {
  const fe = new EchoFrontEnd();
  let readIntoSeen: boolean | null = null;
  const factory: ConnectionFactory = (socket, ctx) => {
    readIntoSeen = ctx.readInto !== undefined;
    return fe.factory(socket, ctx);
  };
  const { listener, port } = await startListener(fe, { connectionFactory: factory });
  const client = await Client.open(port);
  client.send('hello');
  await client.receive('hello\n');
  assert.equal(readIntoSeen, false);
  await listener.stop(1_000);
});

/** Resolves with `promise`, or fails after `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms)));
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** The echo front-end, whose connections authenticate when they send "login" and stop when they send "logout". */
function authenticatingFactory(fe: EchoFrontEnd): ConnectionFactory {
  return (socket, ctx) => {
    socket.on('data', (chunk: Buffer | string) => {
      if (String(chunk).includes('logout')) ctx.unauthenticated();
      else if (String(chunk).includes('login')) ctx.authenticated();
    });
    return fe.factory(socket, ctx);
  };
}

test('a connection that does not authenticate within authTimeoutMs is closed and counted; one that does stays', async (t) => {
  const fe = new EchoFrontEnd();
  const { listener, port, metrics } = await startListener(fe, { connectionFactory: authenticatingFactory(fe), authTimeoutMs: 300 });
  t.after(() => listener.stop(1_000));
  const lazy = await Client.open(port);
  const prompt = await Client.open(port);
  prompt.send('login');
  await prompt.receive('login\n');
  const opened = Date.now();
  await within(lazy.closed, 5_000, 'the unauthenticated connection to close');
  assert.ok(Date.now() - opened >= 200, 'not before the deadline');
  assert.match(metrics.render(), /quartet_listener_auth_timeouts_total\{listener="echo"\} 1/);
  // Well past the deadline, the authenticated connection still answers.
  await new Promise((resolve) => setTimeout(resolve, 400));
  prompt.send('still here');
  await prompt.receive('still here\n');
  // Logged out, it has the deadline again, from then.
  const loggedOutAt = Date.now();
  prompt.send('logout');
  await prompt.receive('logout\n');
  await within(prompt.closed, 5_000, 'the logged-out connection to close');
  assert.ok(Date.now() - loggedOutAt >= 200, 'not before the new deadline');
  assert.match(metrics.render(), /quartet_listener_auth_timeouts_total\{listener="echo"\} 2/);
});

/** A client whose connection the server has seen: its first line has been echoed. */
async function openSeen(port: number, line: string, localAddress?: string): Promise<Client> {
  const client = localAddress === undefined ? await Client.open(port) : await openFrom(port, localAddress);
  client.send(line);
  await within(client.receive(`${line}\n`), 5_000, `the echo of ${line}`);
  return client;
}

function openFrom(port: number, localAddress: string): Promise<Client> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress }, () => resolve(new Client(socket)));
    socket.once('error', reject);
  });
}

test('beyond unauthenticatedConnectionsMax, the oldest unauthenticated connection is closed to make room; an authenticated one is never', async (t) => {
  const fe = new EchoFrontEnd();
  const { listener, port, metrics, lines } = await startListener(fe, { connectionFactory: authenticatingFactory(fe), unauthenticatedConnectionsMax: 2 });
  t.after(() => listener.stop(1_000));
  const member = await openSeen(port, 'login');
  const a = await openSeen(port, 'a');
  const b = await openSeen(port, 'b');
  const c = await openSeen(port, 'c');
  await within(a.closed, 5_000, 'the oldest unauthenticated connection to be closed');
  assert.match(metrics.render(), /quartet_listener_unauthenticated_evicted_total\{listener="echo"\} 1/);
  assert.ok(lines.some((l) => l.msg === 'connection limit reached; the oldest unauthenticated connection closed to make room'));
  // b authenticates: the next newcomer finds room without closing anyone.
  b.send('login');
  await b.receive('login\n');
  const d = await openSeen(port, 'd');
  assert.equal(listener.connectionCount, 4);
  // Now c is the oldest unauthenticated one.
  await openSeen(port, 'e');
  await within(c.closed, 5_000, 'c to be closed');
  for (const kept of [member, b, d]) {
    kept.send('still here');
    await kept.receive('still here\n');
  }
  assert.match(metrics.render(), /quartet_listener_unauthenticated_evicted_total\{listener="echo"\} 2/);
});

test('a full listener closes its oldest unauthenticated connection for a newcomer, which can then authenticate', async (t) => {
  const fe = new EchoFrontEnd();
  const { listener, port, metrics } = await startListener(fe, { connectionFactory: authenticatingFactory(fe), maxConnections: 4 });
  t.after(() => listener.stop(1_000));
  const member = await openSeen(port, 'login');
  const idle = [await openSeen(port, 'idle-0'), await openSeen(port, 'idle-1'), await openSeen(port, 'idle-2')];
  // Full: four connections, three of them idle and unauthenticated. A client that logs in gets in.
  const client = await openSeen(port, 'hello');
  await within(idle[0]!.closed, 5_000, 'the oldest idle connection to be closed');
  client.send('login');
  await client.receive('login\n');
  // And another: the next oldest idle one goes.
  const other = await openSeen(port, 'login');
  await within(idle[1]!.closed, 5_000, 'the next idle connection to be closed');
  assert.match(metrics.render(), /quartet_listener_unauthenticated_evicted_total\{listener="echo"\} 2/);
  assert.doesNotMatch(metrics.render(), /quartet_listener_connections_rejected_total\{listener="echo"\} [1-9]/, 'nobody was refused');
  for (const kept of [member, idle[2]!, client, other]) {
    kept.send('ok');
    await kept.receive('ok\n');
  }
});

test('at most connectionsPerPeerMax connections from one peer address; other peers are not held to its count', async (t) => {
  const fe = new EchoFrontEnd();
  const { listener, port, metrics, lines } = await startListener(fe, { connectionsPerPeerMax: 2 });
  t.after(() => listener.stop(1_000));
  const a = await openSeen(port, 'a');
  await openSeen(port, 'b');
  const refused = await Client.open(port);
  await within(refused.closed, 5_000, 'the third connection from the peer to be refused');
  assert.equal(refused.received, '');
  assert.match(metrics.render(), /quartet_listener_peer_rejected_total\{listener="echo"\} 1/);
  assert.ok(lines.some((l) => l.msg === 'connections per peer limit reached; connection closed' && l.connectionsPerPeerMax === 2));
  // Another loopback address is another peer (Linux routes all of 127/8 to lo).
  const elsewhere = await openSeen(port, 'from 127.0.0.2', '127.0.0.2');
  assert.equal(listener.connectionCount, 3);
  // Once one of the peer's connections has gone, it may open another.
  a.socket.end();
  await a.closed;
  await eventually(() => listener.connectionCount === 2, 'the closed connection to be released');
  await openSeen(port, 'c');
  elsewhere.send('still here');
  await elsewhere.receive('still here\n');
});

test('TLS: a handshake not finished within handshakeTimeoutMs is dropped', async (t) => {
  const tls = makeCert();
  if (!tls) return t.skip('openssl is not installed');
  const { listener, port, metrics } = await startListener(new EchoFrontEnd(), { tls, handshakeTimeoutMs: 200 });
  t.after(() => listener.stop(1_000));
  // A TCP peer that never starts the handshake.
  const silent = connect(port, '127.0.0.1');
  silent.on('error', () => undefined);
  await new Promise((resolve) => silent.once('connect', resolve));
  const closed = new Promise((resolve) => silent.once('close', resolve));
  const timedOut = await Promise.race([closed.then(() => false), new Promise((resolve) => setTimeout(() => resolve(true), 5_000))]);
  assert.equal(timedOut, false, 'the server dropped the handshake');
  await eventually(() => /quartet_listener_handshake_timeouts_total\{listener="echo"\} 1/.test(metrics.render()), 'the timeout to be counted');
});

test('a connection idle for idleTimeoutMs is closed and counted; one with a request in flight, or active, stays', async (t) => {
  const fe = new EchoFrontEnd();
  const { listener, port, metrics } = await startListener(fe, { idleTimeoutMs: 800 });
  t.after(() => listener.stop(1_000));
  const idle = await Client.open(port);
  const busy = await Client.open(port);
  const chatty = await Client.open(port);
  busy.send('slow-idle');
  await fe.inFlight('slow-idle');
  const opened = Date.now();
  // The chatty one asks something every 50 ms: never idle for 800 ms.
  const chatter = setInterval(() => chatty.send('hi'), 50);
  t.after(() => clearInterval(chatter));
  await within(idle.closed, 5_000, 'the idle connection to close');
  assert.ok(Date.now() - opened >= 700, 'not before the timeout');
  assert.match(metrics.render(), /quartet_listener_idle_closed_total\{listener="echo"\} 1/);
  assert.deepEqual(fe.closeReasons, ['idle']);
  // Well past the timeout, the one with a request in flight is still open and answered.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  fe.release('slow-idle');
  await busy.receive('slow-idle\n');
  chatty.send('still here');
  await chatty.receive('still here\n');
  clearInterval(chatter);
  // Once its request is answered, the busy one goes idle too, and the quiet chatty one after it.
  await within(busy.closed, 5_000, 'the connection idle since its answer to close');
  await within(chatty.closed, 5_000, 'the chatty connection, quiet now, to close');
  assert.match(metrics.render(), /quartet_listener_idle_closed_total\{listener="echo"\} 3/);
});
