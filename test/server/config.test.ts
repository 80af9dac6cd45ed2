import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ConfigError, loadConfig, parseHostPort, resolveAdvertisedAddress, settings, type ConfigSources } from '../../src/server/config.js';
import type { ListenerName } from '../../src/server/listeners.js';

const dir = mkdtempSync(join(tmpdir(), 'quartet-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const allAvailable = new Set<ListenerName>(['kafka', 'iggy', 'cursus', 'felix', 'http']);

function load(sources: ConfigSources) {
  return loadConfig({ env: {}, cwd: dir, available: allAvailable, ...sources });
}

function writeConfig(name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
  return path;
}

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
    return [...err.problems];
  }
  assert.fail('expected a ConfigError');
}

describe('defaults', () => {
  test('every setting has a default and the result is complete', () => {
    const { config, warnings } = load({});
    assert.equal(config.dataDir, join(dir, 'data'));
    assert.equal(config.logLevel, 'info');
    assert.deepEqual(config.listeners.kafka.addr, { host: '0.0.0.0', port: 9092 });
    assert.deepEqual(config.listeners.iggy.addr, { host: '0.0.0.0', port: 8090 });
    assert.deepEqual(config.listeners.cursus.addr, { host: '0.0.0.0', port: 9000 });
    assert.deepEqual(config.listeners.felix.addr, { host: '0.0.0.0', port: 5000 });
    assert.deepEqual(config.listeners.http, { enabled: true, addr: { host: '0.0.0.0', port: 9080 } });
    assert.deepEqual(config.root, { username: 'root', password: null });
    assert.deepEqual(config.topicDefaults, {}, 'only operator-set topic defaults reach the broker');
    assert.equal(config.defaultPartitions, 1);
    assert.ok(config.drainTimeoutMs < config.shutdownTimeoutMs);
    assert.deepEqual(warnings, []);
  });

  test('a protocol listener is enabled by default only when the build has it', () => {
    const { config } = load({ available: new Set<ListenerName>(['http', 'iggy']) });
    assert.equal(config.listeners.iggy.enabled, true);
    assert.equal(config.listeners.kafka.enabled, false);
    assert.equal(config.listeners.felix.enabled, false);
  });

  test('this build opens Cursus on 9000 beside Kafka and Iggy, without required authentication', () => {
    const { config } = loadConfig({ env: {}, cwd: dir });
    for (const name of ['kafka', 'iggy', 'cursus'] as const) assert.equal(config.listeners[name].enabled, true, name);
    assert.deepEqual(config.listeners.cursus.addr, { host: '0.0.0.0', port: 9000 });
    assert.equal(config.listeners.cursus.maxConnections, 1000);
    assert.equal(config.listeners.cursus.idleTimeoutMs, 60_000);
    assert.equal(config.listeners.cursus.advertisedAddr, null);
    assert.deepEqual(config.cursus, { requireAuth: false, v1Compat: false, requestBytesMax: 256 * 1024 * 1024 });
  });

  test('this build opens Felix on UDP 5000, without required authentication; felix.* from flags', () => {
    const { config } = loadConfig({ env: {}, cwd: dir });
    assert.equal(config.listeners.felix.enabled, true);
    assert.deepEqual(config.listeners.felix.addr, { host: '0.0.0.0', port: 5000 });
    assert.deepEqual(config.felix, { requireAuth: false, frameBytesMax: 16 * 1024 * 1024, subscriptionsPerConnectionMax: 4096 });
    const set = load({ flags: { 'felix-require-auth': true, 'felix-frame-bytes-max': '1048576', 'felix-subscriptions-per-connection-max': '8' } }).config.felix;
    assert.deepEqual(set, { requireAuth: true, frameBytesMax: 1_048_576, subscriptionsPerConnectionMax: 8 });
  });

  test('cursus.v1Compat from a flag, the environment or the file; off by default', () => {
    assert.equal(load({}).config.cursus?.v1Compat, false);
    assert.equal(load({ flags: { 'cursus-v1-compat': true } }).config.cursus?.v1Compat, true);
    assert.equal(load({ env: { QUARTET_CURSUS_V1_COMPAT: 'true' } }).config.cursus?.v1Compat, true);
    const file = writeConfig('cursus-v1.json', { cursus: { v1Compat: true } });
    assert.equal(load({ flags: { config: file } }).config.cursus?.v1Compat, true);
  });

  test('cursus.requireAuth and the Cursus advertised address from a flag, the environment or the file', () => {
    assert.equal(load({ flags: { 'cursus-require-auth': true } }).config.cursus?.requireAuth, true);
    assert.equal(load({ env: { QUARTET_CURSUS_REQUIRE_AUTH: 'true' } }).config.cursus?.requireAuth, true);
    const file = writeConfig('cursus.json', { cursus: { requireAuth: true }, listeners: { cursus: { advertisedAddr: 'broker.example:19000' } } });
    const { config } = load({ flags: { config: file } });
    assert.equal(config.cursus?.requireAuth, true);
    assert.deepEqual(config.listeners.cursus.advertisedAddr, { host: 'broker.example', port: 19000 });
    assert.ok(problemsOf(() => load({ env: { QUARTET_CURSUS_REQUIRE_AUTH: 'sometimes' } })).some((p) => p.includes('QUARTET_CURSUS_REQUIRE_AUTH')));
  });
});

describe('precedence: defaults < file < env < flags', () => {
  const file = writeConfig('precedence.json', {
    logLevel: 'warn',
    listeners: { kafka: { addr: '10.0.0.1:1111' }, iggy: { addr: '10.0.0.1:2222' }, cursus: { addr: '10.0.0.1:3333' } },
    topicDefaults: { retentionMs: 1000 },
  });

  test('each layer overrides the one below', () => {
    const { config } = load({
      flags: { config: file, 'kafka-addr': '127.0.0.1:4444' },
      env: { QUARTET_KAFKA_ADDR: '127.0.0.2:5555', QUARTET_IGGY_ADDR: '127.0.0.2:6666' },
    });
    assert.deepEqual(config.listeners.kafka.addr, { host: '127.0.0.1', port: 4444 }, 'flag beats env and file');
    assert.deepEqual(config.listeners.iggy.addr, { host: '127.0.0.2', port: 6666 }, 'env beats file');
    assert.deepEqual(config.listeners.cursus.addr, { host: '10.0.0.1', port: 3333 }, 'file beats default');
    assert.deepEqual(config.listeners.felix.addr, { host: '0.0.0.0', port: 5000 }, 'default');
    assert.equal(config.logLevel, 'warn');
    assert.deepEqual(config.topicDefaults, { 'retention.ms': 1000 });
    assert.equal(config.configFile, file);
  });

  test('QUARTET_CONFIG names the file when --config is absent', () => {
    const { config } = load({ env: { QUARTET_CONFIG: file } });
    assert.equal(config.logLevel, 'warn');
  });

  test('boolean flags, --no- forms and env spellings', () => {
    assert.equal(load({ flags: { 'http-enabled': false } }).config.listeners.http.enabled, false);
    assert.equal(load({ env: { QUARTET_HTTP_ENABLED: 'no' } }).config.listeners.http.enabled, false);
    assert.equal(load({ env: { QUARTET_KAFKA_ENABLED: '0' } }).config.listeners.kafka.enabled, false);
  });

  test('relative paths: flags and env against the working dir, the file against its own dir', () => {
    const file2 = writeConfig('rel.json', { dataDir: 'from-file' });
    assert.equal(load({ flags: { 'data-dir': 'x' } }).config.dataDir, join(dir, 'x'));
    assert.equal(load({ flags: { config: file2 } }).config.dataDir, join(dir, 'from-file'));
  });

  test('topic defaults map onto the core topic config keys', () => {
    const { config } = load({ flags: { 'fsync-policy': 'always', 'fsync-interval-ms': '50', 'segment-bytes': '1048576', 'segment-ms': '60000', 'retention-bytes': '-1' } });
    assert.deepEqual(config.topicDefaults, { 'quartet.fsync.policy': 'always', 'flush.ms': 50, 'segment.bytes': 1048576, 'segment.ms': 60000, 'retention.bytes': -1 });
  });

  test('the root password comes from the environment', () => {
    const { config } = load({ env: { QUARTET_ROOT_USERNAME: 'admin', QUARTET_ROOT_PASSWORD: 's3cret-pw' } });
    assert.deepEqual(config.root, { username: 'admin', password: 's3cret-pw' });
  });
});

describe('validation', () => {
  test('unknown key in the file names the key and suggests one', () => {
    const file = writeConfig('unknown.json', { listeners: { kafka: { adress: '1.2.3.4:5' } }, dataDri: '/x' });
    const problems = problemsOf(() => load({ flags: { config: file } }));
    assert.equal(problems.length, 2);
    assert.match(problems[0]!, /unknown key "listeners\.kafka\.adress"/);
    assert.match(problems[1]!, /unknown key "dataDri"/);
  });

  test('bad port, bad enum, bad integer, bad boolean: all reported, with their source', () => {
    const problems = problemsOf(() =>
      load({
        flags: { 'kafka-addr': '127.0.0.1:70000', 'log-level': 'loud' },
        env: { QUARTET_FSYNC_POLICY: 'sometimes', QUARTET_DEFAULT_PARTITIONS: 'many', QUARTET_HTTP_ENABLED: 'maybe' },
      }),
    );
    assert.equal(problems.length, 5, problems.join('\n'));
    assert.ok(problems.some((p) => p.startsWith('--kafka-addr: "127.0.0.1:70000"') && /port must be between 0 and 65535/.test(p)));
    assert.ok(problems.some((p) => p.startsWith('--log-level') && /debug, info, warn, error, silent/.test(p)));
    assert.ok(problems.some((p) => p.startsWith('QUARTET_FSYNC_POLICY') && /interval or always/.test(p)));
    assert.ok(problems.some((p) => p.startsWith('QUARTET_DEFAULT_PARTITIONS') && /integer/.test(p)));
    assert.ok(problems.some((p) => p.startsWith('QUARTET_HTTP_ENABLED') && /true or false/.test(p)));
  });

  test('file values of the wrong JSON type are rejected', () => {
    const file = writeConfig('types.json', { listeners: { http: { addr: 9080 } }, maintenanceIntervalMs: 'soon' });
    const problems = problemsOf(() => load({ flags: { config: file } }));
    assert.equal(problems.length, 2);
    assert.match(problems[0]!, /listeners\.http\.addr: 9080 is not valid/);
  });

  test('unreadable and malformed files', () => {
    assert.match(problemsOf(() => load({ flags: { config: join(dir, 'missing.json') } }))[0]!, /cannot read config file/);
    const bad = writeConfig('bad.json', '{ "dataDir": ');
    assert.match(problemsOf(() => load({ flags: { config: bad } }))[0]!, /not valid JSON/);
    const arr = writeConfig('arr.json', '[1]');
    assert.match(problemsOf(() => load({ flags: { config: arr } }))[0]!, /must be an object/);
  });

  test('cross-field checks: TLS pairs, drain below shutdown, port clashes', () => {
    const problems = problemsOf(() =>
      load({ flags: { 'kafka-tls-cert': '/c.pem', 'drain-timeout-ms': '9000', 'shutdown-timeout-ms': '5000', 'iggy-addr': '0.0.0.0:9092' } }),
    );
    assert.equal(problems.length, 3, problems.join('\n'));
    // Each names where its values came from.
    assert.ok(problems.includes('--kafka-tls-cert: TLS needs both a certificate (--kafka-tls-cert) and a key (--kafka-tls-key); only the certificate is given, not the key'), problems.join('\n'));
    assert.ok(problems.includes('drain timeout (9000 ms, from --drain-timeout-ms) must be below the shutdown timeout (5000 ms, from --shutdown-timeout-ms)'), problems.join('\n'));
    assert.ok(problems.includes('listeners kafka (from the default) and iggy (from --iggy-addr) both use port 9092'), problems.join('\n'));
    const fromEnv = problemsOf(() => load({ env: { QUARTET_KAFKA_TLS_KEY: '/k.pem', QUARTET_DRAIN_TIMEOUT_MS: '20000' } }));
    assert.ok(fromEnv.includes('QUARTET_KAFKA_TLS_KEY: TLS needs both a certificate (--kafka-tls-cert) and a key (--kafka-tls-key); only the key is given, not the certificate'), fromEnv.join('\n'));
    assert.ok(fromEnv.some((p) => p.startsWith('drain timeout (20000 ms, from QUARTET_DRAIN_TIMEOUT_MS) must be below the shutdown timeout (') && p.endsWith(' ms, from the default)')), fromEnv.join('\n'));
  });

  test('cross-field checks: every enabled listener\'s frame cap fits in the request byte budget', () => {
    const problems = problemsOf(() => load({ flags: { 'request-bytes-max': String(80 * 1024 * 1024) } }));
    assert.deepEqual(problems, [
      'kafka.requestBytesMax (104857600 bytes, from the default) must not exceed requestBytesMax (83886080 bytes, from --request-bytes-max): a frame that large could never be read',
    ]);
    const both = problemsOf(() => load({ env: { QUARTET_REQUEST_BYTES_MAX: String(1024 * 1024) }, flags: { 'kafka-request-bytes-max': String(1024 * 1024) } }));
    assert.deepEqual(both, ['iggy.frameBytesMax (67108864 bytes, from the default) must not exceed requestBytesMax (1048576 bytes, from QUARTET_REQUEST_BYTES_MAX): a frame that large could never be read']);
    // Caps that fit, or a listener that is off, pass.
    const { config } = load({ flags: { 'request-bytes-max': String(1024 * 1024), 'kafka-request-bytes-max': String(1024 * 1024), 'iggy-frame-bytes-max': String(1024 * 1024) } });
    assert.equal(config.requestBytesMax, 1024 * 1024);
    assert.equal(load({ flags: { 'request-bytes-max': String(1024 * 1024), 'kafka-enabled': 'false', 'iggy-enabled': 'false' } }).config.requestBytesMax, 1024 * 1024);
    assert.equal(load({}).config.requestBytesMax, 256 * 1024 * 1024);
  });

  test('a secret is never echoed in an error', () => {
    const problems = problemsOf(() => load({ env: { QUARTET_ROOT_PASSWORD: 'x'.repeat(10), QUARTET_LOG_LEVEL: 'nope' }, flags: { 'root-username': '' } }));
    assert.ok(problems.every((p) => !p.includes('xxxxxxxxxx')));
  });

  test('unknown flags are errors; unknown QUARTET_ variables are warnings', () => {
    assert.match(problemsOf(() => load({ flags: { 'kafka-adr': '1:2' } }))[0]!, /unknown flag --kafka-adr/);
    const { warnings } = load({ env: { QUARTET_DATADIR: '/x', QUARTET_NATIVE: '0', QUARTET_SENDFILE: '0' } });
    // The two process switches (docs/configuration.md "Native checksums") are known, not settings.
    assert.deepEqual(warnings, ['unknown environment variable QUARTET_DATADIR ignored']);
  });
});

test('host:port parsing', () => {
  assert.deepEqual(parseHostPort('127.0.0.1:0'), { host: '127.0.0.1', port: 0 });
  assert.deepEqual(parseHostPort('[::1]:9092'), { host: '::1', port: 9092 });
  assert.deepEqual(parseHostPort('broker.local:9092'), { host: 'broker.local', port: 9092 });
  for (const bad of ['9092', ':9092', 'host:', 'host:port', '::1:9092', 'a b:1', 'h:123456']) assert.equal(typeof parseHostPort(bad), 'string', bad);
});

test('advertised address: configured, else bound with loopback for a wildcard', () => {
  assert.deepEqual(resolveAdvertisedAddress(null, { host: '0.0.0.0', port: 9092 }), { host: '127.0.0.1', port: 9092 });
  assert.deepEqual(resolveAdvertisedAddress(null, { host: '10.1.2.3', port: 1 }), { host: '10.1.2.3', port: 1 });
  assert.deepEqual(resolveAdvertisedAddress({ host: 'b1', port: 19092 }, { host: '0.0.0.0', port: 9092 }), { host: 'b1', port: 19092 });
});

test('docs/configuration.md documents every setting: file key, flag and environment variable', () => {
  const docs = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
  const missing: string[] = [];
  for (const s of settings) {
    for (const name of [`\`${s.key}\``, `\`${s.env}\``, ...(s.flag ? [`\`--${s.flag}\``] : [])]) if (!docs.includes(name)) missing.push(name);
  }
  for (const name of ['`--config`', '`QUARTET_CONFIG`']) if (!docs.includes(name)) missing.push(name);
  assert.deepEqual(missing, [], 'settings missing from docs/configuration.md');
});
