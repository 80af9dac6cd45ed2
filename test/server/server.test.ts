import assert from 'node:assert/strict';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Broker, type BrokerOptions } from '../../src/core/broker.js';
import { createLogger } from '../../src/base/logger.js';
import { loadConfig, type QuartetConfig } from '../../src/server/config.js';
import type { ListenerFactory, ProtocolName } from '../../src/server/listeners.js';
import { acquireDataDirLock, DataDirLockedError } from '../../src/server/lock.js';
import { startServer, type StartServerOptions } from '../../src/server/server.js';
import { tcpProtocolListener } from '../../src/protocols/tcp-listener.js';

const root = mkdtempSync(join(tmpdir(), 'quartet-server-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

function config(overrides: Record<string, string | boolean> = {}): QuartetConfig {
  const flags = { 'data-dir': join(root, `d${n++}`), 'http-addr': '127.0.0.1:0', 'felix-addr': '127.0.0.1:0', 'kafka-addr': '127.0.0.1:0', 'iggy-addr': '127.0.0.1:0', ...overrides };
  return loadConfig({ flags, env: {}, available: new Set(['http', 'kafka']) }).config;
}

function deferred<T = void>(): { promise: Promise<T>; resolve(value: T): void; reject(err: Error): void } {
  let resolve!: (value: T) => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** What the server uses of a Broker, with hooks to hold open() and close(). */
class FakeBroker {
  closed = false;
  /** As Broker.storage: whether appends fail for lack of disk space, and corrupt batches held. */
  storage = { full: false, corrupt: 0, corruptBatches: (): number => this.storage.corrupt };
  openedWith: BrokerOptions | null = null;
  /** What the server asked root to be, once its listeners were bound. */
  rootEnsured: { username: string; password?: string } | null = null;
  generatedRootPassword: string | null = null;
  constructor(private readonly passwordToGenerate: string | null) {}
  async ensureRootUser(rootUser: { username: string; password?: string }): Promise<void> {
    this.rootEnsured = rootUser;
    this.generatedRootPassword = this.passwordToGenerate;
  }
  closeGate: Promise<void> = Promise.resolve();
  async close(): Promise<void> {
    await this.closeGate;
    this.closed = true;
  }
}

/** A "kafka" front-end that answers every byte with "ok". */
const okListener: ListenerFactory = tcpProtocolListener(() => (socket, ctx) => {
  socket.on('data', () => {
    const done = ctx.beginRequest('poke');
    socket.write('ok');
    done();
  });
  return { close: () => {} };
});

function harness(fake: FakeBroker, openGate: Promise<void> = Promise.resolve()) {
  const stdout: string[] = [];
  const logs: string[] = [];
  const options: StartServerOptions = {
    logger: createLogger('debug', (line) => logs.push(line)),
    handleSignals: false,
    stdout: (text) => stdout.push(text),
    listenerFactories: new Map<ProtocolName, ListenerFactory>([['kafka', okListener]]),
    brokerWatchers: [],
    openBroker: async (options) => {
      fake.openedWith = options;
      await openGate;
      return fake as unknown as Broker;
    },
  };
  return { options, stdout, logs, messages: () => logs.map((l) => (JSON.parse(l) as { msg: string }).msg) };
}

function httpGet(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    }).on('error', reject);
  });
}

test('start-up: live first, ready after recovery and listeners; password once on stdout only', async () => {
  const fake = new FakeBroker('pw-Secret-123');
  const gate = deferred();
  const h = harness(fake, gate.promise);
  const cfg = config({ 'iggy-enabled': true, 'root-username': 'admin' });
  const server = await startServer(cfg, h.options);
  const httpPort = server.httpAddress()!.port;
  assert.equal(await httpGet(httpPort, '/live'), 200);
  assert.equal(await httpGet(httpPort, '/ready'), 503);
  assert.equal(server.readiness(), 'starting');

  gate.resolve();
  await server.ready;
  assert.equal(await httpGet(httpPort, '/ready'), 200);
  assert.equal(fake.openedWith?.dataDir, cfg.dataDir);
  assert.equal(fake.openedWith?.rootUser, null, 'root is not created while opening');
  assert.deepEqual(fake.rootEnsured, { username: 'admin' });
  assert.equal(fake.openedWith?.metrics, server.metrics);

  assert.deepEqual(h.stdout, ["quartet: generated root password for user 'admin': pw-Secret-123 (shown once; set QUARTET_ROOT_PASSWORD to choose it)\n"]);
  assert.ok(h.logs.every((l) => !l.includes('pw-Secret-123')), 'the password never reaches the log');
  assert.ok(h.messages().includes('listener iggy not available yet'));
  assert.ok(!h.messages().some((m) => m.startsWith('SECURITY')), 'listeners on loopback: no warning');
  const ready = h.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'ready')!;
  assert.equal(typeof ready.recoveryMs, 'number');
  assert.deepEqual(ready.listeners, ['kafka']);

  const kafka = server.listenerAddresses().get('kafka')!;
  assert.ok(kafka.port > 0);
  assert.match(server.metrics.render(), /quartet_ready 1/);

  const closeGate = deferred();
  fake.closeGate = closeGate.promise;
  const stopping = server.stop();
  assert.equal(server.readiness(), 'stopping');
  assert.equal(await httpGet(httpPort, '/ready'), 503, 'not ready while stopping');
  closeGate.resolve();
  assert.equal(await stopping, 0);
  assert.equal(await server.stopped, 0);
  assert.equal(fake.closed, true);
  acquireDataDirLock(cfg.dataDir).release(); // the lock was released
  assert.deepEqual(h.messages().slice(-2), ['listener stopped', 'stopped']);
});

test('/ready is 503 storage_full while appends fail for lack of disk space, and 200 again once one is written', async () => {
  const fake = new FakeBroker(null);
  const server = await startServer(config(), harness(fake).options);
  await server.ready;
  const httpPort = server.httpAddress()!.port;
  assert.equal(await httpGet(httpPort, '/ready'), 200);
  fake.storage.full = true;
  assert.equal(server.readiness(), 'storage_full');
  assert.equal(await httpGet(httpPort, '/ready'), 503);
  fake.storage.full = false;
  assert.equal(await httpGet(httpPort, '/ready'), 200);
  assert.equal(await server.stop(), 0);
});

test('/ready is 503 storage_corrupt while the logs hold batches found corrupt, and 200 again once none is held', async () => {
  const fake = new FakeBroker(null);
  const server = await startServer(config(), harness(fake).options);
  await server.ready;
  const httpPort = server.httpAddress()!.port;
  fake.storage.corrupt = 2;
  assert.equal(server.readiness(), 'storage_corrupt');
  assert.equal(await httpGet(httpPort, '/ready'), 503);
  fake.storage.full = true;
  assert.equal(server.readiness(), 'storage_full', 'a full disk is told first');
  fake.storage.full = false;
  fake.storage.corrupt = 0;
  assert.equal(await httpGet(httpPort, '/ready'), 200);
  assert.equal(await server.stop(), 0);
});

test('no generated password, no stdout line', async () => {
  const h = harness(new FakeBroker(null));
  const server = await startServer(config(), h.options);
  await server.ready;
  assert.deepEqual(h.stdout, []);
  assert.equal(await server.stop(), 0);
});

test('a held data directory refuses to start', async () => {
  const cfg = config();
  const lock = acquireDataDirLock(cfg.dataDir);
  try {
    await assert.rejects(startServer(cfg, harness(new FakeBroker(null)).options), DataDirLockedError);
  } finally {
    lock.release();
  }
});

test('a failed recovery rejects ready, cleans up and stops with code 1', async () => {
  const fake = new FakeBroker(null);
  const gate = deferred();
  const h = harness(fake, gate.promise);
  const cfg = config();
  const server = await startServer(cfg, h.options);
  const httpPort = server.httpAddress()!.port;
  gate.reject(new Error('disk on fire'));
  await assert.rejects(server.ready, /disk on fire/);
  assert.equal(await server.stopped, 1);
  await assert.rejects(httpGet(httpPort, '/live'), /ECONNREFUSED/, 'http is closed');
  acquireDataDirLock(cfg.dataDir).release();
  assert.ok(h.messages().includes('start-up failed'));
});

test('a listener that cannot bind fails start-up and closes the broker', async () => {
  const busy = createTcpServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  const port = (busy.address() as AddressInfo).port;
  try {
    const fake = new FakeBroker(null);
    const h = harness(fake);
    const server = await startServer(config({ 'kafka-addr': `127.0.0.1:${port}` }), h.options);
    await assert.rejects(server.ready, new RegExp(`cannot listen for kafka on 127.0.0.1:${port}`));
    assert.equal(await server.stopped, 1);
    assert.equal(fake.closed, true);
    assert.equal(fake.rootEnsured, null, 'no root for a start that failed');
  } finally {
    busy.close();
  }
});

test('a start that fails on a port in use creates no root user and prints no password (real broker)', async () => {
  const busy = createTcpServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  const port = (busy.address() as AddressInfo).port;
  const cfg = config({ 'kafka-addr': `127.0.0.1:${port}` });
  const { openBroker: _fake, ...options } = harness(new FakeBroker(null)).options;
  const stdout: string[] = [];
  const toStdout = (text: string): void => void stdout.push(text);
  try {
    const server = await startServer(cfg, { ...options, stdout: toStdout });
    await assert.rejects(server.ready, /cannot listen for kafka/);
    assert.equal(await server.stopped, 1);
  } finally {
    busy.close();
  }
  assert.deepEqual(stdout, [], 'no password printed');
  const broker = await Broker.open({ dataDir: cfg.dataDir, rootUser: null });
  try {
    assert.deepEqual(broker.users.list(), [], 'no user was stored');
  } finally {
    await broker.close();
  }
  // The next start that binds creates root and prints its password once.
  const server = await startServer(cfg, { ...options, stdout: toStdout });
  await server.ready;
  assert.equal(stdout.length, 1);
  assert.match(stdout[0]!, /generated root password for user 'root'/);
  assert.equal(await server.stop(), 0);
});

test('stop during recovery waits for it, then shuts down cleanly', async () => {
  const fake = new FakeBroker('pw');
  const gate = deferred();
  const h = harness(fake, gate.promise);
  const server = await startServer(config(), h.options);
  const stopping = server.stop('test');
  gate.resolve();
  assert.equal(await stopping, 0);
  await assert.rejects(server.ready, /stopped during start-up/);
  assert.equal(fake.closed, true);
  assert.equal(server.listenerAddresses().size, 0, 'no listener opened after a stop request');
});

test('signals: SIGTERM stops; a stop past shutdownTimeoutMs exits 1; a second signal exits at once', async () => {
  const fake = new FakeBroker(null);
  const closeGate = deferred();
  fake.closeGate = closeGate.promise;
  const h = harness(fake);
  const exits: number[] = [];
  const exited = deferred();
  const handlersBefore = process.listenerCount('SIGTERM');
  const server = await startServer(config({ 'drain-timeout-ms': '0', 'shutdown-timeout-ms': '100' }), {
    ...h.options,
    handleSignals: true,
    exit: (code) => {
      exits.push(code);
      exited.resolve();
    },
  });
  await server.ready;
  process.emit('SIGTERM', 'SIGTERM');
  assert.equal(server.readiness(), 'stopping');
  await exited.promise; // the broker's close hangs: the hard timeout fires
  assert.deepEqual(exits, [1]);
  assert.ok(h.messages().includes('shutdown did not finish in time; exiting'));
  process.emit('SIGINT', 'SIGINT');
  assert.deepEqual(exits, [1, 1]);
  assert.ok(h.messages().includes('second signal during shutdown; exiting now'));
  closeGate.resolve();
  assert.equal(await server.stopped, 0);
  assert.equal(process.listenerCount('SIGTERM'), handlersBefore, 'signal handlers removed after the stop');
});
