import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/server/config.js';
import { isLoopbackHost, openListenerWarning, unauthenticatedListeners } from '../../src/server/exposure.js';

const available = new Set(['http', 'kafka', 'iggy', 'cursus'] as const);
const load = (flags: Record<string, string | boolean>) => loadConfig({ flags: { 'data-dir': '/tmp/quartet-exposure', ...flags }, env: {}, available: new Set(available) }).config;

test('loopback hosts', () => {
  for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1']) assert.equal(isLoopbackHost(host), true, host);
  for (const host of ['0.0.0.0', '::', '', '10.0.0.1', '128.0.0.1', 'example.com', '127.0.0.1.example.com']) assert.equal(isLoopbackHost(host), false, host);
});

test('the defaults (0.0.0.0) leave Kafka, Cursus and HTTP open without authentication; Iggy is not listed', () => {
  const open = unauthenticatedListeners(load({ 'cursus-enabled': true }));
  assert.deepEqual(open.map((o) => o.listener), ['kafka', 'cursus', 'http']);
  const kafka = open.find((o) => o.listener === 'kafka')!;
  assert.match(openListenerWarning(kafka), /^SECURITY: the kafka listener on 0\.0\.0\.0:9092 accepts clients without authentication: .*--kafka-sasl-required.*--secure/);
});

test('on loopback, or with authentication required, nothing is open', () => {
  assert.deepEqual(unauthenticatedListeners(load({ 'kafka-addr': '127.0.0.1:9092', 'cursus-addr': '127.0.0.1:9000', 'http-addr': 'localhost:9080' })), []);
  const auth = load({ 'kafka-sasl-required': true, 'cursus-enabled': true, 'cursus-require-auth': true });
  assert.deepEqual(unauthenticatedListeners(auth).map((o) => o.listener), ['http']);
});

test('--secure: SASL on Kafka, authentication on Cursus, HTTP on 127.0.0.1 (same port); nothing left open', () => {
  const config = load({ secure: true, 'cursus-enabled': true });
  assert.equal(config.kafka?.saslRequired, true);
  assert.equal(config.cursus?.requireAuth, true);
  assert.deepEqual(config.listeners.http.addr, { host: '127.0.0.1', port: 9080 });
  assert.deepEqual(unauthenticatedListeners(config), []);
});

test('--secure refuses a setting given against it', () => {
  assert.throws(() => load({ secure: true, 'kafka-sasl-required': 'false' }), (err: unknown) => err instanceof ConfigError && /--kafka-sasl-required: --secure requires SASL on Kafka/.test(err.message));
  assert.throws(() => load({ secure: true, 'http-addr': '0.0.0.0:9080' }), (err: unknown) => err instanceof ConfigError && /--http-addr: --secure requires HTTP on a loopback address/.test(err.message));
  assert.equal(load({ secure: true, 'kafka-sasl-required': true }).kafka?.saslRequired, true);
});

test('Felix: open without felix.requireAuth beyond loopback; --secure requires its authentication', () => {
  const withFelix = (flags: Record<string, string | boolean>) =>
    loadConfig({ flags: { 'data-dir': '/tmp/quartet-exposure', 'kafka-addr': '127.0.0.1:9092', 'cursus-addr': '127.0.0.1:9000', 'http-addr': '127.0.0.1:9080', ...flags }, env: {}, available: new Set([...available, 'felix'] as const) }).config;
  assert.deepEqual(unauthenticatedListeners(withFelix({})).map((o) => o.listener), ['felix']);
  assert.deepEqual(unauthenticatedListeners(withFelix({ 'felix-require-auth': true })), []);
  const secure = withFelix({ secure: true });
  assert.equal(secure.felix?.requireAuth, true);
  assert.deepEqual(unauthenticatedListeners(secure), []);
  assert.throws(() => withFelix({ secure: true, 'felix-require-auth': 'false' }), (err: unknown) => err instanceof ConfigError && /--felix-require-auth: --secure requires authentication on Felix/.test(err.message));
});
