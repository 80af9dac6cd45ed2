import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, test } from 'node:test';
import { silentLogger } from '../../src/base/logger.js';
import { MetricsRegistry } from '../../src/core/metrics.js';
import { HttpEndpoint, type Readiness } from '../../src/server/http.js';

let state: Readiness = 'starting';
const metrics = new MetricsRegistry();
metrics.counter('quartet_test_total', 'A test counter').inc({ kind: 'x' }, 3);
const endpoint = new HttpEndpoint({ addr: { host: '127.0.0.1', port: 0 }, metrics, readiness: () => state, logger: silentLogger });
let port = 0;

before(async () => {
  port = (await endpoint.start()).port;
});
after(() => endpoint.stop());

function call(method: string, path: string): Promise<{ status: number; type: string; body: string; allow: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body, allow: res.headers.allow }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('/live is 200 whatever the readiness', async () => {
  state = 'starting';
  assert.equal((await call('GET', '/live')).status, 200);
});

test('/ready follows the readiness: 503 starting, 200 ready, 503 stopping', async () => {
  state = 'starting';
  assert.deepEqual(await call('GET', '/ready').then((r) => [r.status, r.body]), [503, 'starting\n']);
  state = 'ready';
  assert.deepEqual(await call('GET', '/ready').then((r) => [r.status, r.body]), [200, 'ready\n']);
  state = 'stopping';
  assert.deepEqual(await call('GET', '/ready').then((r) => [r.status, r.body]), [503, 'stopping\n']);
});

test('/metrics renders the registry as Prometheus text 0.0.4', async () => {
  const r = await call('GET', '/metrics?x=1');
  assert.equal(r.status, 200);
  assert.match(r.type, /^text\/plain; version=0\.0\.4/);
  assert.match(r.body, /# TYPE quartet_test_total counter\nquartet_test_total\{kind="x"\} 3\n/);
});

test('HEAD is served like GET without a body', async () => {
  const r = await call('HEAD', '/live');
  assert.equal(r.status, 200);
  assert.equal(r.body, '');
});

test('unknown paths are 404, other methods 405 with Allow', async () => {
  assert.equal((await call('GET', '/nope')).status, 404);
  const r = await call('POST', '/ready');
  assert.equal(r.status, 405);
  assert.equal(r.allow, 'GET, HEAD');
});

test('a port in use is a clear start error', async () => {
  const other = new HttpEndpoint({ addr: { host: '127.0.0.1', port }, metrics, readiness: () => state, logger: silentLogger });
  await assert.rejects(other.start(), new RegExp(`cannot listen for http on 127.0.0.1:${port}: .*EADDRINUSE`));
});

test('connections that never finish their headers cannot lock out a probe: the oldest is closed for a new one', async () => {
  const { connect } = await import('node:net');
  const { HTTP_CONNECTIONS_MAX } = await import('../../src/server/http.js');
  const slow = Array.from({ length: HTTP_CONNECTIONS_MAX + 8 }, () => {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    socket.on('connect', () => socket.write('GET /ready HTTP/1.1\r\nHost: x\r\n'));
    return socket;
  });
  try {
    await Promise.all(slow.map((s) => new Promise((resolve) => (s.readyState === 'open' ? resolve(null) : s.once('connect', resolve)))));
    state = 'ready';
    // Without eviction the endpoint would hold the probe's connection unanswered until the slow
    // ones hit the headers timeout (5 s, checked every 30 s); the deadline here is below that.
    const r = await Promise.race([
      call('GET', '/ready'),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the probe was not answered within 4 s')), 4000).unref()),
    ]);
    assert.equal(r.status, 200);
    assert.match(metrics.render(), /quartet_http_connections_evicted_total \d+/);
    const evicted = Number(/quartet_http_connections_evicted_total (\d+)/.exec(metrics.render())?.[1]);
    assert.ok(evicted >= 9, `evicted ${evicted}`);
  } finally {
    for (const s of slow) s.destroy();
  }
});

test('a connection that sends its headers a byte a second is closed soon after the headers timeout', async () => {
  const { connect } = await import('node:net');
  const { HTTP_HEADERS_TIMEOUT_MS, HTTP_TIMEOUT_CHECK_MS } = await import('../../src/server/http.js');
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await new Promise((resolve) => socket.once('connect', resolve));
  const opened = Date.now();
  const head = Buffer.from('GET /ready HTTP/1.1\r\nHost: x\r\nX-Slow: ' + 'a'.repeat(64));
  let sent = 0;
  const trickle = setInterval(() => {
    if (sent < head.length) socket.write(head.subarray(sent, ++sent));
  }, 1000);
  const deadlineMs = HTTP_HEADERS_TIMEOUT_MS + HTTP_TIMEOUT_CHECK_MS + 1500;
  try {
    await Promise.race([
      new Promise((resolve) => socket.once('close', resolve)),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still open after ${deadlineMs} ms`)), deadlineMs).unref()),
    ]);
    assert.ok(Date.now() - opened >= HTTP_HEADERS_TIMEOUT_MS - 100, `closed after ${Date.now() - opened} ms, before the headers timeout`);
  } finally {
    clearInterval(trickle);
    socket.destroy();
  }
});
