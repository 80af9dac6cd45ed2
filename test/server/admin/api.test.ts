// The admin API over HTTP against a whole in-process server (every listener on 127.0.0.1 port 0):
// every route, authentication (Basic, Bearer, failures), permissions, the CSRF rules (JSON only,
// no foreign Origin), the body limit and the error replies.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CursusClient } from '../../../src/clients/cursus/index.js';
import { IggyClient } from '../../../src/clients/iggy/index.js';
import { allGlobalGrants, globalGrants } from '../../../src/core/access.js';
import type { Broker } from '../../../src/core/broker.js';
import { encodeNeutralBatch } from '../../../src/log/index.js';
import { silentLogger } from '../../../src/base/logger.js';
import { MetricsRegistry } from '../../../src/core/metrics.js';
import { ADMIN_BODY_BYTES_MAX, AdminApi } from '../../../src/server/admin/api.js';
import { adminRoutes } from '../../../src/server/admin/routes.js';
import { HttpEndpoint } from '../../../src/server/http.js';
import { startBroker, type StartedBroker } from '../../conformance/helpers.js';

let started: StartedBroker;
let broker: Broker;
let base: string;
let host: string;

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const root = basic('root', 'root-password');

interface Reply {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

async function call(method: string, path: string, options: { auth?: string | null; body?: unknown; raw?: string; type?: string | null; headers?: Record<string, string> } = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  const auth = options.auth === undefined ? root : options.auth;
  if (auth !== null) headers.Authorization = auth;
  const hasBody = options.body !== undefined || options.raw !== undefined;
  const type = options.type === undefined ? (method === 'GET' ? null : 'application/json') : options.type;
  if (type !== null) headers['Content-Type'] = type;
  const res = await fetch(`${base}${path}`, { method, headers, ...(hasBody ? { body: options.raw ?? JSON.stringify(options.body) } : {}) });
  const text = await res.text();
  return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>), headers: res.headers };
}

function errorCode(reply: Reply): string | undefined {
  return (reply.body.error as { code?: string } | undefined)?.code;
}

async function expectError(reply: Promise<Reply>, status: number, code: string): Promise<void> {
  const r = await reply;
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(errorCode(r), code, JSON.stringify(r.body));
  assert.equal(typeof (r.body.error as { message?: unknown }).message, 'string');
}

before(async () => {
  started = await startBroker({ kafka: true, flags: { 'iggy-enabled': true } });
  broker = started.broker!;
  const http = started.server!.httpAddress()!;
  host = `127.0.0.1:${http.port}`;
  base = `http://${host}/api/v1/`;
  await broker.users.create({ username: 'reader', password: 'reader-password', permissions: globalGrants(['read_topics', 'read_servers']) });
  await broker.users.create({ username: 'nobody', password: 'nobody-password', permissions: globalGrants([]) });
  await broker.users.create({ username: 'admin', password: 'admin-password', permissions: allGlobalGrants() });
});
after(() => started?.stop());

describe('authentication', () => {
  test('no credentials, a wrong password, an unknown scheme, a bad token: 401 with a challenge', async () => {
    const none = await call('GET', 'topics', { auth: null });
    assert.equal(none.status, 401);
    assert.equal(errorCode(none), 'unauthenticated');
    assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer realm="quartet"/);
    await expectError(call('GET', 'topics', { auth: basic('root', 'wrong') }), 401, 'invalid_credentials');
    await expectError(call('GET', 'topics', { auth: basic('ghost', 'whatever') }), 401, 'invalid_credentials');
    await expectError(call('GET', 'topics', { auth: 'Digest abc' }), 401, 'unauthenticated');
    await expectError(call('GET', 'topics', { auth: 'Bearer not-a-token' }), 401, 'invalid_token');
    await expectError(call('GET', 'topics', { auth: `Basic ${Buffer.from('no-colon').toString('base64')}` }), 401, 'unauthenticated');
  });

  test('failed logins are counted by the core throttle under protocol http', async () => {
    const before = broker.metrics.render().match(/quartet_auth_failures_total\{protocol="http"\} (\d+)/)?.[1] ?? '0';
    await expectError(call('GET', 'whoami', { auth: basic('root', 'wrong-again') }), 401, 'invalid_credentials');
    const after = broker.metrics.render().match(/quartet_auth_failures_total\{protocol="http"\} (\d+)/)?.[1];
    assert.equal(Number(after), Number(before) + 1);
  });

  test('a personal access token works as Bearer until it is deleted', async () => {
    const created = await call('POST', 'tokens', { body: { name: 'ci' } });
    assert.equal(created.status, 201);
    const secret = created.body.secret as string;
    const me = await call('GET', 'whoami', { auth: `Bearer ${secret}` });
    assert.equal(me.status, 200);
    assert.equal((me.body.user as { username: string }).username, 'root');
    const listed = await call('GET', 'tokens');
    assert.deepEqual((listed.body.tokens as Array<{ name: string }>).map((t) => t.name), ['ci']);
    assert.equal((await call('DELETE', 'tokens/ci')).status, 200);
    await expectError(call('GET', 'whoami', { auth: `Bearer ${secret}` }), 401, 'invalid_token');
  });
});

describe('request rules', () => {
  test('a change without Content-Type: application/json is refused before anything happens (CSRF)', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', null]) {
      await expectError(call('POST', 'topics', { raw: JSON.stringify({ name: 'csrf' }), type }), 415, 'unsupported_media_type');
    }
    await expectError(call('DELETE', 'users/nobody', { type: 'text/plain' }), 415, 'unsupported_media_type');
    assert.equal(broker.catalog.getTopic({ topic: 'csrf' }), null);
    assert.notEqual(broker.users.get('nobody'), null);
    assert.equal((await call('POST', 'topics', { raw: JSON.stringify({ name: 'csrf-ok' }), type: 'application/json; charset=utf-8' })).status, 201);
  });

  test('a request from another origin is refused; the same origin is served', async () => {
    await expectError(call('POST', 'topics', { body: { name: 'evil' }, headers: { Origin: 'https://evil.example' } }), 403, 'forbidden_origin');
    await expectError(call('GET', 'topics', { headers: { Origin: 'https://evil.example' } }), 403, 'forbidden_origin');
    assert.equal(broker.catalog.getTopic({ topic: 'evil' }), null);
    assert.equal((await call('GET', 'whoami', { headers: { Origin: `http://${host}` } })).status, 200);
  });

  test('query strings, unknown routes, wrong methods, bad JSON and oversized bodies get JSON errors', async () => {
    await expectError(call('GET', 'whoami?password=x'), 400, 'query_not_allowed');
    await expectError(call('GET', 'nothing/here'), 404, 'not_found');
    const wrong = await call('PUT', 'topics', { body: {} });
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get('allow'), 'GET, POST');
    await expectError(call('POST', 'topics', { raw: '{"name": ' }), 400, 'invalid_request');
    await expectError(call('POST', 'topics', { raw: '[1,2]' }), 400, 'invalid_request');
    await expectError(call('POST', 'topics', { body: { name: 'x'.repeat(ADMIN_BODY_BYTES_MAX) } }), 413, 'payload_too_large');
    // The connection that sent the oversized body is closed; the next request is served.
    assert.equal((await call('GET', 'whoami')).status, 200);
  });

  test('before the broker is open the API answers 503 not_ready', async () => {
    const endpoint = new HttpEndpoint({
      addr: { host: '127.0.0.1', port: 0 },
      metrics: new MetricsRegistry(),
      readiness: () => 'starting',
      logger: silentLogger,
      admin: new AdminApi({ broker: () => null, routes: adminRoutes, info: { version: 'test', startedAtMs: 0, listeners: () => [] }, logger: silentLogger }),
    });
    const { port } = await endpoint.start();
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/whoami`, { headers: { Authorization: root } });
      assert.equal(res.status, 503);
      assert.deepEqual(((await res.json()) as { error: { code: string } }).error.code, 'not_ready');
    } finally {
      await endpoint.stop();
    }
  });

  test('/live, /ready and /metrics still answer without credentials', async () => {
    const res = await fetch(`http://${host}/ready`);
    assert.equal(res.status, 200);
  });
});

describe('topics', () => {
  test('create, list with the name under each protocol, describe with offsets and config', async () => {
    const created = await call('POST', 'topics', { body: { name: 'orders', partitions: 2, config: { 'retention.ms': 3_600_000 } } });
    assert.equal(created.status, 201);
    const nested = await call('POST', 'topics', { body: { namespace: 'shop', name: 'eu orders', partitions: 1 } });
    assert.equal(nested.status, 201);
    const topic = broker.catalog.requireTopic({ topic: 'orders' });
    await broker.append(topic, 1, encodeNeutralBatch([{ value: 'a' }, { value: 'b' }, { value: 'c' }], { timestamp: 1_000 }));

    const list = await call('GET', 'topics');
    const topics = list.body.topics as Array<{ namespace: string; name: string; partitions: number; messages: number; sizeBytes: number; names: Record<string, unknown> }>;
    const orders = topics.find((t) => t.name === 'orders')!;
    assert.equal(orders.partitions, 2);
    assert.equal(orders.messages, 3);
    assert.ok(orders.sizeBytes > 0);
    assert.deepEqual(orders.names, {
      kafka: 'orders',
      iggy: { stream: 'default', streamId: topic.namespaceId, topic: 'orders', topicId: topic.id },
      cursus: 'orders',
      felix: { tenant: 'default', namespace: 'default', stream: 'orders' },
    });
    const eu = topics.find((t) => t.name === 'eu orders')!;
    assert.equal(eu.namespace, 'shop');
    assert.equal((eu.names as { kafka: string }).kafka, 'shop.eu_20orders');
    assert.equal((eu.names as { cursus: string | null }).cursus, null);

    const described = await call('GET', 'topics/default/orders');
    assert.equal(described.status, 200);
    assert.deepEqual(
      (described.body.partitionDetails as Array<{ partition: number; startOffset: number; endOffset: number; messages: number }>).map((p) => [p.partition, p.startOffset, p.endOffset, p.messages]),
      [
        [0, 0, 0, 0],
        [1, 0, 3, 3],
      ],
    );
    const config = described.body.config as Array<{ key: string; value: unknown; source: string }>;
    assert.deepEqual(config.find((c) => c.key === 'retention.ms'), { ...config.find((c) => c.key === 'retention.ms'), value: 3_600_000, source: 'topic' });
    assert.equal((await call('GET', `topics/shop/${encodeURIComponent('eu orders')}`)).status, 200);
    await expectError(call('GET', 'topics/default/missing'), 404, 'unknown_topic');
    await expectError(call('GET', 'topics/nowhere/orders'), 404, 'unknown_namespace');
    await expectError(call('POST', 'topics', { body: { name: 'orders' } }), 409, 'topic_exists');
    await expectError(call('POST', 'topics', { body: { name: 'bad', config: { 'no.such.key': 1 } } }), 400, 'invalid_config');
    await expectError(call('POST', 'topics', { body: { partitions: 1 } }), 400, 'invalid_request');
  });

  test('records: a page from an offset or a timestamp, keys, values and headers in base64, with where the next page starts', async () => {
    await call('POST', 'topics', { body: { name: 'browsed', partitions: 1 } });
    const topic = broker.catalog.requireTopic({ topic: 'browsed' });
    await broker.append(topic, 0, encodeNeutralBatch([{ key: 'k0', value: 'v0', headers: [{ key: 'h', value: 'x' }] }, { value: 'v1' }], { timestamp: 1_000 }));
    for (let i = 2; i < 130; i += 2) await broker.append(topic, 0, encodeNeutralBatch([{ value: `v${i}` }, { value: `v${i + 1}` }], { timestamp: 1_000 + i }));
    const first = await call('GET', 'topics/default/browsed/partitions/0/records/0');
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const records = first.body.records as Array<{ offset: number; key: string | null; value: string; headers: Array<{ key: string; value: string }>; timestampMs: number }>;
    assert.equal(records.length, 100);
    assert.deepEqual(records[0], { offset: 0, timestamp: new Date(1_000).toISOString(), timestampMs: 1_000, key: Buffer.from('k0').toString('base64'), value: Buffer.from('v0').toString('base64'), headers: [{ key: 'h', value: Buffer.from('x').toString('base64') }] });
    assert.equal(records[1]!.key, null);
    assert.equal(first.body.nextOffset, 100);
    assert.equal(first.body.endOffset, 130);
    const second = await call('GET', 'topics/default/browsed/partitions/0/records/100');
    assert.deepEqual((second.body.records as Array<{ offset: number }>).map((r) => r.offset), Array.from({ length: 30 }, (_, i) => 100 + i));
    assert.equal(second.body.nextOffset, 130);
    assert.deepEqual((await call('GET', 'topics/default/browsed/partitions/0/records/130')).body.records, []);
    const byTime = await call('GET', 'topics/default/browsed/partitions/0/records-at/1050');
    assert.equal((byTime.body.records as Array<{ offset: number }>)[0]!.offset, 50);
    await expectError(call('GET', 'topics/default/browsed/partitions/3/records/0'), 404, 'unknown_partition');
    await expectError(call('GET', 'topics/default/browsed/partitions/0/records/-1'), 400, 'invalid_request');
    await expectError(call('GET', 'topics/default/browsed/partitions/0/records/0', { auth: basic('nobody', 'nobody-password') }), 403, 'unauthorized');
  });

  test('alter-config sets and removes keys; a bad value changes nothing', async () => {
    await call('POST', 'topics', { body: { name: 'configured', partitions: 1 } });
    const set = await call('PATCH', 'topics/default/configured/config', { body: { set: { 'retention.ms': 60_000, 'cleanup.policy': 'compact' } } });
    assert.equal(set.status, 200);
    assert.deepEqual(broker.catalog.requireTopic({ topic: 'configured' }).config, { 'retention.ms': 60_000, 'cleanup.policy': 'compact' });
    await expectError(call('PATCH', 'topics/default/configured/config', { body: { set: { 'retention.ms': 'soon' } } }), 400, 'invalid_config');
    await expectError(call('PATCH', 'topics/default/configured/config', { body: {} }), 400, 'invalid_request');
    const removed = await call('PATCH', 'topics/default/configured/config', { body: { delete: ['cleanup.policy'] } });
    assert.equal(removed.status, 200);
    assert.deepEqual(broker.catalog.requireTopic({ topic: 'configured' }).config, { 'retention.ms': 60_000 });
  });

  test('purge empties the topic; delete removes it', async () => {
    await call('POST', 'topics', { body: { name: 'doomed', partitions: 1 } });
    await broker.append(broker.catalog.requireTopic({ topic: 'doomed' }), 0, encodeNeutralBatch([{ value: 'x' }, { value: 'y' }]));
    assert.equal((await call('POST', 'topics/default/doomed/purge')).status, 200);
    const after = await call('GET', 'topics/default/doomed');
    assert.equal(after.body.messages, 0);
    assert.equal((await call('DELETE', 'topics/default/doomed')).status, 200);
    assert.equal(broker.catalog.getTopic({ topic: 'doomed' }), null);
    await expectError(call('DELETE', 'topics/default/doomed'), 404, 'unknown_topic');
  });

  test('read-only users read and cannot change; users without rights see nothing', async () => {
    const reader = basic('reader', 'reader-password');
    const nobody = basic('nobody', 'nobody-password');
    assert.ok(((await call('GET', 'topics', { auth: reader })).body.topics as unknown[]).length > 0);
    assert.equal((await call('GET', 'topics/default/orders', { auth: reader })).status, 200);
    await expectError(call('POST', 'topics', { auth: reader, body: { name: 'nope' } }), 403, 'unauthorized');
    await expectError(call('PATCH', 'topics/default/orders/config', { auth: reader, body: { set: { 'retention.ms': 1 } } }), 403, 'unauthorized');
    await expectError(call('DELETE', 'topics/default/orders', { auth: reader }), 403, 'unauthorized');
    await expectError(call('POST', 'topics/default/orders/purge', { auth: reader }), 403, 'unauthorized');
    assert.deepEqual((await call('GET', 'topics', { auth: nobody })).body.topics, []);
    await expectError(call('GET', 'topics/default/orders', { auth: nobody }), 403, 'unauthorized');
    // Nor does it learn which topics exist.
    await expectError(call('GET', 'topics/default/missing', { auth: nobody }), 403, 'unauthorized');
    await expectError(call('GET', 'topics/default/missing', { auth: reader }), 404, 'unknown_topic');
    assert.equal(broker.catalog.requireTopic({ topic: 'orders' }).config['retention.ms'], 3_600_000);
  });
});

describe('groups', () => {
  test('a Kafka group: listed with lag, described per partition, offsets reset (dry run first), deleted', async () => {
    await call('POST', 'topics', { body: { name: 'lagging', partitions: 2 } });
    const topic = broker.catalog.requireTopic({ topic: 'lagging' });
    await broker.append(topic, 0, encodeNeutralBatch([{ value: '1' }, { value: '2' }, { value: '3' }, { value: '4' }], { timestamp: 10_000 }));
    await broker.append(topic, 0, encodeNeutralBatch([{ value: '5' }], { timestamp: 20_000 }));
    await broker.append(topic, 1, encodeNeutralBatch([{ value: '6' }]));
    await broker.offsets.commit('kafka', 'billing', [
      { topicInternalId: topic.internalId, partition: 0, offset: 1 },
      { topicInternalId: topic.internalId, partition: 1, offset: 1 },
    ]);

    const list = await call('GET', 'groups');
    const billing = (list.body.groups as Array<Record<string, unknown>>).find((g) => g.group === 'billing');
    assert.deepEqual(billing, { protocol: 'kafka', group: 'billing', state: 'empty', members: 0, topics: ['default/lagging'], lag: 4 });

    const described = await call('GET', 'groups/kafka/billing');
    assert.deepEqual(described.body.offsets, [
      { namespace: 'default', topic: 'lagging', partition: 0, committed: 1, endOffset: 5, lag: 4 },
      { namespace: 'default', topic: 'lagging', partition: 1, committed: 1, endOffset: 1, lag: 0 },
    ]);

    const dry = await call('POST', 'groups/kafka/billing/reset-offsets', { body: { to: 'earliest', dryRun: true } });
    assert.equal(dry.status, 200);
    assert.deepEqual(dry.body.offsets, [
      { namespace: 'default', topic: 'lagging', partition: 0, previous: 1, offset: 0 },
      { namespace: 'default', topic: 'lagging', partition: 1, previous: 1, offset: 0 },
    ]);
    assert.equal((await broker.offsets.fetch('kafka', 'billing', topic.internalId, 0))?.offset, 1, 'a dry run changes nothing');

    const byTime = await call('POST', 'groups/kafka/billing/reset-offsets', { body: { to: 'timestamp', timestamp: 15_000, topic: 'lagging', partitions: [0] } });
    assert.deepEqual((byTime.body.offsets as Array<{ offset: number }>).map((o) => o.offset), [4]);
    assert.equal((await broker.offsets.fetch('kafka', 'billing', topic.internalId, 0))?.offset, 4);
    const latest = await call('POST', 'groups/kafka/billing/reset-offsets', { body: { to: 'latest' } });
    assert.deepEqual((latest.body.offsets as Array<{ offset: number }>).map((o) => o.offset), [5, 1]);
    const clamped = await call('POST', 'groups/kafka/billing/reset-offsets', { body: { to: 'offset', offset: 99, partitions: [0] } });
    assert.deepEqual((clamped.body.offsets as Array<{ offset: number }>).map((o) => o.offset), [5]);
    await expectError(call('POST', 'groups/kafka/billing/reset-offsets', { body: { to: 'sideways' } }), 400, 'invalid_request');
    await expectError(call('POST', 'groups/kafka/billing/reset-offsets', { body: { to: 'earliest', partitions: [7] } }), 404, 'unknown_partition');
    await expectError(call('POST', 'groups/kafka/billing/reset-offsets', { auth: basic('reader', 'reader-password'), body: { to: 'earliest' } }), 403, 'unauthorized');

    assert.equal((await call('DELETE', 'groups/kafka/billing')).status, 200);
    assert.deepEqual(await broker.offsets.fetchGroup('kafka', 'billing'), []);
    await expectError(call('GET', 'groups/kafka/billing'), 404, 'unknown_group');
  });

  test('a Cursus group: listed and described from its registration and its (Kafka-scope) offsets, offsets reset', async () => {
    await call('POST', 'topics', { body: { name: 'jobs', partitions: 1 } });
    const topic = broker.catalog.requireTopic({ topic: 'jobs' });
    await broker.append(topic, 0, encodeNeutralBatch([{ value: 'j1' }, { value: 'j2' }]));
    await broker.groups.save('cursus', 'runners', { version: 1, selector: { topic: 'jobs' }, expansion: [{ topic: 'jobs', partitions: 1 }], registeredAt: 0 });
    await broker.offsets.commit('kafka', 'runners', [{ topicInternalId: topic.internalId, partition: 0, offset: 1 }]);
    const listed = (await call('GET', 'groups')).body.groups as Array<{ protocol: string; group: string; lag: number }>;
    assert.deepEqual(listed.find((g) => g.group === 'runners'), { protocol: 'cursus', group: 'runners', state: 'empty', members: 0, topics: ['default/jobs'], lag: 1 });
    const described = await call('GET', 'groups/cursus/runners');
    assert.deepEqual(described.body.offsets, [{ namespace: 'default', topic: 'jobs', partition: 0, committed: 1, endOffset: 2, lag: 1 }]);
    await expectError(call('GET', 'groups/kafka/runners'), 404, 'unknown_group');
    const reset = await call('POST', 'groups/cursus/runners/reset-offsets', { body: { to: 'latest' } });
    assert.deepEqual((reset.body.offsets as Array<{ offset: number }>).map((o) => o.offset), [2]);
    assert.equal((await broker.offsets.fetch('kafka', 'runners', topic.internalId, 0))?.offset, 2);
  });

  test('a Cursus group with a live member: delete refused until it leaves, then its registration, coordinator state and offsets are gone', async () => {
    await call('POST', 'topics', { body: { name: 'tasks', partitions: 1 } });
    const topic = broker.catalog.requireTopic({ topic: 'tasks' });
    await broker.append(topic, 0, encodeNeutralBatch([{ value: 't1' }, { value: 't2' }]));
    const cursusAddress = started.server!.listenerAddresses().get('cursus');
    assert.ok(cursusAddress, 'the Cursus listener is up');
    const cursus = new CursusClient({ addr: `127.0.0.1:${cursusAddress.port}`, reconnect: false, requestTimeoutMs: 10_000 });
    const registered = async (): Promise<boolean> => (await broker.groups.list('cursus')).some((g) => g.groupId === 'crew');
    try {
      const { memberId, generation } = await cursus.joinGroup({ group: 'crew', member: 'worker', topic: 'tasks' });
      await cursus.commitOffset({ topic: 'tasks', partition: 0, group: 'crew', offset: 1, member: memberId, generation });
      const refused = await call('DELETE', 'groups/cursus/crew');
      assert.equal(refused.status, 409, JSON.stringify(refused.body));
      assert.equal(errorCode(refused), 'group_not_empty');
      assert.match((refused.body.error as { message: string }).message, /1 active member/);
      assert.ok(await registered(), 'nothing is deleted while it has a member');
      assert.equal((await broker.offsets.fetch('kafka', 'crew', topic.internalId, 0))?.offset, 1);
      await expectError(call('DELETE', 'groups/cursus/crew', { auth: basic('reader', 'reader-password') }), 403, 'unauthorized');

      await cursus.leaveGroup({ topic: 'tasks', group: 'crew', member: memberId });
      const deleted = await call('DELETE', 'groups/cursus/crew');
      assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
      assert.deepEqual(deleted.body, { deleted: { protocol: 'cursus', group: 'crew' } });
      assert.equal(await registered(), false, 'the stored registration is gone');
      assert.deepEqual(await broker.offsets.fetchGroup('kafka', 'crew'), [], 'its offsets are gone');
      assert.ok(!(await cursus.listGroups()).includes('crew'), 'the coordinator forgot it');
      await expectError(call('GET', 'groups/cursus/crew'), 404, 'unknown_group');
      await expectError(call('DELETE', 'groups/cursus/crew'), 404, 'unknown_group');
      // A new join registers it afresh, with no offsets from before.
      await cursus.joinGroup({ group: 'crew', member: 'worker', topic: 'tasks' });
      assert.equal(await cursus.fetchOffset({ topic: 'tasks', partition: 0, group: 'crew' }), 0);
    } finally {
      await cursus.close();
    }
  });

  test('an Iggy group with a live member: members shown, reset and delete refused until it leaves', async () => {
    await call('POST', 'topics', { body: { namespace: 'app', name: 'events', partitions: 1 } });
    const topic = broker.catalog.requireTopic({ namespace: 'app', topic: 'events' });
    await broker.append(topic, 0, encodeNeutralBatch([{ value: 'a' }, { value: 'b' }, { value: 'c' }]));
    const [iggyHost, iggyPort] = started.iggyAddress!.split(':');
    const sdk = new IggyClient({ host: iggyHost!, port: Number(iggyPort), credentials: { username: 'root', password: 'root-password' } });
    await sdk.connect();
    try {
      await sdk.createConsumerGroup('app', 'events', 'workers');
      await sdk.joinConsumerGroup('app', 'events', 'workers');
      const described = await call('GET', 'groups/iggy/app/events/workers');
      assert.equal(described.status, 200, JSON.stringify(described.body));
      assert.equal(described.body.state, 'active');
      assert.deepEqual((described.body.members as Array<{ partitions: number[] }>).map((m) => m.partitions), [[0]]);
      assert.deepEqual(described.body.offsets, [{ namespace: 'app', topic: 'events', partition: 0, committed: null, endOffset: 3, lag: null }]);
      await expectError(call('POST', 'groups/iggy/app/events/workers/reset-offsets', { body: { to: 'offset', offset: 2 } }), 409, 'group_not_empty');
      await expectError(call('DELETE', 'groups/iggy/app/events/workers'), 409, 'group_not_empty');
      await sdk.leaveConsumerGroup('app', 'events', 'workers');

      const reset = await call('POST', 'groups/iggy/app/events/workers/reset-offsets', { body: { to: 'offset', offset: 2 } });
      assert.equal(reset.status, 200, JSON.stringify(reset.body));
      // Iggy stores the last consumed offset: 1, so that the group reads from 2.
      assert.equal((await broker.offsets.fetch('iggy', `g:0|${topic.internalId}|0`, topic.internalId, 0))?.offset, 1);
      const after = await call('GET', 'groups/iggy/app/events/workers');
      assert.deepEqual(after.body.offsets, [{ namespace: 'app', topic: 'events', partition: 0, committed: 2, endOffset: 3, lag: 1 }]);
      assert.equal((await call('DELETE', 'groups/iggy/app/events/workers')).status, 200);
      await expectError(call('GET', 'groups/iggy/app/events/workers'), 404, 'unknown_group');
      // The Iggy listener forgot it too: the name is free again.
      await sdk.createConsumerGroup('app', 'events', 'workers');
    } finally {
      await sdk.close();
    }
  });
});

describe('users, tokens and ACLs', () => {
  test('create (with a generated password), log in, change permissions, deactivate, delete', async () => {
    const created = await call('POST', 'users', { body: { username: 'dave', permissions: { global: ['read_topics'] } } });
    assert.equal(created.status, 201);
    const password = created.body.password as string;
    assert.equal(typeof password, 'string');
    const dave = basic('dave', password);
    assert.deepEqual(((await call('GET', 'whoami', { auth: dave })).body.user as { permissions: unknown }).permissions, { global: ['read_topics'], streams: [] });
    const listed = await call('GET', 'users');
    assert.ok((listed.body.users as Array<{ username: string }>).some((u) => u.username === 'dave'));

    const changed = await call('PUT', 'users/dave/permissions', { body: { global: ['read_topics', 'poll_messages'] } });
    assert.deepEqual((changed.body.user as { permissions: { global: string[] } }).permissions.global, ['read_topics', 'poll_messages']);
    await expectError(call('PUT', 'users/dave/permissions', { body: { global: ['fly'] } }), 400, 'invalid_request');
    await expectError(call('PUT', 'users/root/permissions', { body: { global: 'none' } }), 403, 'unauthorized');

    assert.equal((await call('PATCH', 'users/dave', { body: { status: 'inactive' } })).status, 200);
    await expectError(call('GET', 'whoami', { auth: dave }), 401, 'user_inactive');
    assert.equal((await call('DELETE', 'users/dave')).status, 200);
    assert.equal(broker.users.get('dave'), null);
    await expectError(call('DELETE', 'users/root'), 400, 'invalid_request');
    await expectError(call('POST', 'users', { body: { username: 'reader', password: 'x-password' } }), 409, 'user_exists');
    await expectError(call('GET', 'users/ghost'), 404, 'unknown_user');
  });

  test('users without manage_users cannot change others; anyone changes its own password and tokens', async () => {
    const reader = basic('reader', 'reader-password');
    await expectError(call('GET', 'users', { auth: reader }), 403, 'unauthorized');
    await expectError(call('POST', 'users', { auth: reader, body: { username: 'x', password: 'x-password' } }), 403, 'unauthorized');
    await expectError(call('PUT', 'users/nobody/password', { auth: reader, body: { password: 'new-password' } }), 403, 'unauthorized');
    assert.equal((await call('GET', 'users/reader', { auth: reader })).status, 200);
    await expectError(call('PUT', 'users/reader/password', { auth: reader, body: { password: 'reader-password-2' } }), 400, 'invalid_request');
    await expectError(call('PUT', 'users/reader/password', { auth: reader, body: { password: 'reader-password-2', currentPassword: 'wrong' } }), 401, 'invalid_credentials');
    assert.equal((await call('PUT', 'users/reader/password', { auth: reader, body: { password: 'reader-password-2', currentPassword: 'reader-password' } })).status, 200);
    const renewed = basic('reader', 'reader-password-2');
    assert.equal((await call('POST', 'tokens', { auth: renewed, body: { name: 'mine', expiresInMs: 60_000 } })).status, 201);
    const mine = await call('GET', 'tokens', { auth: renewed });
    assert.deepEqual((mine.body.tokens as Array<{ user: string; name: string }>).map((t) => [t.user, t.name]), [['reader', 'mine']]);
    await expectError(call('GET', 'users/admin/tokens', { auth: renewed }), 403, 'unauthorized');
    await expectError(call('DELETE', 'users/reader/tokens/mine', { auth: basic('nobody', 'nobody-password') }), 403, 'unauthorized');
    // An administrator lists and deletes another user's tokens.
    assert.deepEqual(((await call('GET', 'users/reader/tokens')).body.tokens as Array<{ name: string }>).map((t) => t.name), ['mine']);
    assert.equal((await call('DELETE', 'users/reader/tokens/mine')).status, 200);
    assert.deepEqual(broker.users.listTokens('reader'), []);
    await expectError(call('DELETE', 'users/reader/tokens/mine'), 404, 'not_found');
    // An administrator changes another user's password without the current one.
    assert.equal((await call('PUT', 'users/reader/password', { body: { password: 'reader-password' } })).status, 200);
  });

  test('a user with manage_users grants only rights it holds', async () => {
    await broker.users.create({ username: 'usermgr', password: 'usermgr-password', permissions: globalGrants(['manage_users', 'read_topics']) });
    const mgr = basic('usermgr', 'usermgr-password');
    await expectError(call('POST', 'users', { auth: mgr, body: { username: 'eve', password: 'eve-password', permissions: { global: ['manage_servers'] } } }), 403, 'unauthorized');
    assert.equal(broker.users.get('eve'), null);
    assert.equal((await call('POST', 'users', { auth: mgr, body: { username: 'eve', password: 'eve-password', permissions: { global: ['read_topics'] } } })).status, 201);
  });

  test('a user with manage_users cannot take over root or a user holding more: no password set, no token created for them', async () => {
    await broker.users.create({ username: 'helpdesk', password: 'helpdesk-password', permissions: globalGrants(['manage_users', 'read_users', 'read_topics', 'read_servers']) });
    const helpdesk = basic('helpdesk', 'helpdesk-password');
    await expectError(call('PUT', 'users/root/password', { auth: helpdesk, body: { password: 'taken-over' } }), 403, 'unauthorized');
    await expectError(call('POST', 'users/root/tokens', { auth: helpdesk, body: { name: 'backdoor' } }), 403, 'unauthorized');
    await expectError(call('PUT', 'users/admin/password', { auth: helpdesk, body: { password: 'taken-over' } }), 403, 'unauthorized');
    await expectError(call('POST', 'users/admin/tokens', { auth: helpdesk, body: { name: 'backdoor' } }), 403, 'unauthorized');
    assert.equal((await call('GET', 'whoami', { auth: root })).status, 200, 'root keeps its password');
    assert.equal((await call('GET', 'whoami', { auth: basic('admin', 'admin-password') })).status, 200, 'admin keeps its password');
    assert.deepEqual(broker.users.listTokens('root'), []);
    assert.deepEqual(broker.users.listTokens('admin'), []);
    // A user holding no more than the caller: both work.
    assert.equal((await call('PUT', 'users/reader/password', { auth: helpdesk, body: { password: 'reader-password' } })).status, 200);
    assert.equal((await call('POST', 'users/reader/tokens', { auth: helpdesk, body: { name: 'support' } })).status, 201);
    assert.equal((await call('DELETE', 'users/reader/tokens/support')).status, 200);
  });

  test('per-stream and per-topic grants: set through the API, checked, and shown by name in acl list', async () => {
    await broker.users.create({ username: 'shopper', password: 'shopper-password', permissions: globalGrants([]) });
    const shop = broker.catalog.requireNamespace('shop');
    const eu = broker.catalog.requireTopic({ namespace: 'shop', topic: 'eu orders' });
    const streams = [{ streamId: shop.id, readStream: true, topics: [{ topicId: eu.id, manageTopic: true }] }];
    const set = await call('PUT', 'users/shopper/permissions', { body: { global: 'none', streams } });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    const shopper = basic('shopper', 'shopper-password');
    assert.deepEqual(((await call('GET', 'topics', { auth: shopper })).body.topics as Array<{ name: string }>).map((t) => t.name), ['eu orders']);
    assert.equal((await call('PATCH', `topics/shop/${encodeURIComponent('eu orders')}/config`, { auth: shopper, body: { set: { 'retention.ms': 1000 } } })).status, 200);
    await expectError(call('PATCH', 'topics/default/orders/config', { auth: shopper, body: { set: { 'retention.ms': 1000 } } }), 403, 'unauthorized');
    const rows = (await call('GET', 'acls', { auth: shopper })).body.acls;
    assert.deepEqual(rows, [
      { user: 'shopper', resource: 'namespace', name: 'shop', rights: ['read_stream'] },
      { user: 'shopper', resource: 'topic', name: 'shop/eu orders', rights: ['manage_topic'] },
    ]);
    // Global permissions change; the stream grants stay when "streams" is not given.
    await call('PUT', 'users/shopper/permissions', { body: { global: ['read_servers'] } });
    assert.equal(((await call('GET', 'acls', { auth: shopper })).body.acls as unknown[]).length, 3);
    await expectError(call('PUT', 'users/shopper/permissions', { body: { global: 'none', streams: [{ readStream: true }] } }), 400, 'invalid_request');
  });

  test('acl list: every user\'s grants for an administrator, only its own for others', async () => {
    const all = await call('GET', 'acls');
    const rows = all.body.acls as Array<{ user: string; resource: string; name: string; rights: string[] }>;
    assert.deepEqual(rows.find((r) => r.user === 'root'), { user: 'root', resource: 'cluster', name: '*', rights: ['all (root)'] });
    assert.deepEqual(rows.find((r) => r.user === 'reader'), { user: 'reader', resource: 'cluster', name: '*', rights: ['read_servers', 'read_topics'] });
    const own = await call('GET', 'acls', { auth: basic('nobody', 'nobody-password') });
    assert.deepEqual(own.body.acls, []);
  });

  test('overview: version, listeners, totals', async () => {
    const o = await call('GET', 'overview');
    assert.equal(o.status, 200);
    const names = (o.body.listeners as Array<{ name: string }>).map((l) => l.name).sort();
    assert.deepEqual(names, ['cursus', 'felix', 'http', 'iggy', 'kafka']);
    assert.ok((o.body.topics as number) > 0);
  });
});
