// Cursus authentication and authorization over the wire (spec §8, docs/cursus.md "Authentication"):
// AUTH and inline principal/auth_token with passwords and personal access tokens, the auth
// throttle, cursus.requireAuth off and on, the permissions derived from Quartet grants, and the
// topic policies handlers check with authorizeTopic.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { globalGrants, type Grants } from '../../../src/core/access.js';
import type { User } from '../../../src/core/users.js';
import { authorizeTopic, permissionsOf } from '../../../src/protocols/cursus/access.js';
import type { CursusCommandHandler } from '../../../src/protocols/cursus/handler.js';
import { rootName, rootPassword, startCursus } from './harness.js';
import { assertError, errorOf, okFields, type CursusWireClient } from './wire-client.js';

/** Stand-ins for data-path commands: they check what their real handlers check. */
const probes: CursusCommandHandler[] = [
  {
    command: 'CONSUME',
    permissions: ['topic.read', 'group'],
    handle(ctx, req) {
      const topic = ctx.services.topics.require(req.payload!.fields.get('topic')!.toString());
      authorizeTopic(ctx, topic, 'read');
      return { kind: 'text', fields: [['read', topic.name]] };
    },
  },
  {
    command: 'PUBLISH',
    permissions: ['topic.write'],
    handle(ctx, req) {
      const topic = ctx.services.topics.require(req.payload!.fields.get('topic')!.toString());
      authorizeTopic(ctx, topic, 'write');
      return { kind: 'text', fields: [['wrote', topic.name]] };
    },
  },
  { command: 'TXN_STATUS', permissions: ['transaction'], handle: () => ({ kind: 'text', fields: [] }) },
];

async function ok(c: CursusWireClient, command: string, fields: Record<string, string> = {}): Promise<Map<string, string>> {
  return okFields((await c.request(command, fields))[0]!);
}

const consume = (topic: string): Record<string, string> => ({ topic, partition: '0', offset: '0', member: 'm' });
const publish = (topic: string): Record<string, string> => ({ topic, producerId: 'p', message: 'm' });

describe('requireAuth off (the default)', () => {
  it('lets anonymous requests do everything, topic policies included, and still checks AUTH', async (t) => {
    const h = await startCursus(t, { handlers: [probes] });
    const c = await h.client();
    await ok(c, 'CREATE', { topic: 'locked', auth_policy: 'acl', read_acl: 'alice' });
    await ok(c, 'CONSUME', consume('locked'));
    await ok(c, 'PUBLISH', publish('locked'));
    assertError(await c.request('AUTH', { principal: rootName, token: 'wrong' }), 'authentication_failed', { principal: rootName });
    assert.deepEqual(Object.fromEntries(await ok(c, 'AUTH', { principal: rootName, token: rootPassword })), { principal: rootName, authenticated: 'true' });
  });
});

describe('requireAuth on', () => {
  it('refuses protected commands without a principal, serves the unprotected ones', async (t) => {
    const h = await startCursus(t, { settings: { requireAuth: true }, handlers: [probes] });
    const c = await h.client();
    okFields((await c.request('HELP'))[0]!);
    okFields((await c.request('FIND_COORDINATOR', { group: 'g' }))[0]!);
    const error = assertError(await c.request('CREATE', { topic: 'orders' }), 'authentication_required', { command: 'CREATE' });
    assert.equal(error.class, 'authorization');
    assertError(await c.request('LIST'), 'authentication_required', { command: 'LIST' });
    assert.equal(h.broker.catalog.getTopic({ namespace: 'default', topic: 'orders' }), null);
    // AUTH makes the connection root's.
    assert.deepEqual(Object.fromEntries(await ok(c, 'AUTH', { principal: rootName, token: rootPassword })), { principal: rootName, authenticated: 'true' });
    await ok(c, 'CREATE', { topic: 'orders' });
    await ok(c, 'LIST');
  });

  it('authenticates inline principal/auth_token on any request, for the rest of the connection', async (t) => {
    const h = await startCursus(t, { settings: { requireAuth: true } });
    const c = await h.client();
    await ok(c, 'CREATE', { topic: 'orders', principal: rootName, auth_token: rootPassword });
    await ok(c, 'LIST');
    assertError(await c.request('LIST', { principal: rootName }), 'missing_auth_token', { command: 'LIST' });
    assertError(await c.request('LIST', { auth_token: rootPassword }), 'missing_principal', { command: 'LIST' });
    const other = await h.client();
    assertError(await other.request('LIST', { principal: rootName, auth_token: 'nope' }), 'authentication_failed');
    assertError(await other.request('LIST'), 'authentication_required');
  });

  it('accepts a personal access token of the named user only', async (t) => {
    const h = await startCursus(t, { settings: { requireAuth: true } });
    await h.broker.users.create({ username: 'svc', password: 'svc-password', permissions: globalGrants(['read_topics']) });
    await h.broker.users.create({ username: 'other', password: 'other-password', permissions: globalGrants(['read_topics']) });
    const { token } = await h.broker.users.createToken('svc', 'ci', null);
    const c = await h.client();
    assertError(await c.request('AUTH', { principal: 'other', token }), 'authentication_failed', { principal: 'other' });
    assert.equal((await ok(c, 'AUTH', { principal: 'svc', token })).get('principal'), 'svc');
    await ok(c, 'LIST');
  });

  it('closes a connection that does not authenticate within the listener deadline', async (t) => {
    const h = await startCursus(t, { settings: { requireAuth: true }, authTimeoutMs: 200 });
    const c = await h.client();
    okFields((await c.request('HELP'))[0]!);
    await c.closed();
  });

  it('throttles failed attempts: a locked-out name is refused even with the right password', async (t) => {
    const h = await startCursus(t, { settings: { requireAuth: true }, broker: { authThrottle: { delayAfterFailures: 0, lockoutAfterFailures: 2, lockoutMs: 60_000 } } });
    await h.broker.users.create({ username: 'idle', password: 'idle-password', status: 'inactive' });
    const c = await h.client();
    assertError(await c.request('AUTH', { principal: 'idle', token: 'idle-password' }), 'authentication_failed', { principal: 'idle' });
    for (let i = 0; i < 2; i++) assertError(await c.request('AUTH', { principal: rootName, token: `wrong-${i}` }), 'authentication_failed');
    assertError(await c.request('AUTH', { principal: rootName, token: rootPassword }), 'authentication_failed');
    const text = h.broker.metrics.render();
    assert.match(text, /quartet_auth_locked_out_total\{[^}]*protocol="cursus"/);
  });

  it('derives permissions from Quartet grants, read again on every request', async (t) => {
    const h = await startCursus(t, { settings: { requireAuth: true }, handlers: [probes] });
    await h.broker.users.create({ username: 'reader', password: 'reader-pw', permissions: globalGrants(['read_topics']) });
    await h.broker.users.create({ username: 'writer', password: 'writer-pw', permissions: globalGrants(['send_messages']) });
    const admin = await h.client();
    await ok(admin, 'CREATE', { topic: 'orders', principal: rootName, auth_token: rootPassword });

    const reader = await h.client();
    await ok(reader, 'AUTH', { principal: 'reader', token: 'reader-pw' });
    await ok(reader, 'LIST');
    await ok(reader, 'CONSUME', consume('orders'));
    assertError(await reader.request('CREATE', { topic: 'x' }), 'NOT_AUTHORIZED_FOR_OPERATION', { command: 'CREATE', permission: 'admin' });
    assertError(await reader.request('PUBLISH', publish('orders')), 'NOT_AUTHORIZED_FOR_OPERATION', { command: 'PUBLISH', permission: 'topic.write' });

    const writer = await h.client();
    await ok(writer, 'AUTH', { principal: 'writer', token: 'writer-pw' });
    await ok(writer, 'PUBLISH', publish('orders'));
    await ok(writer, 'TXN_STATUS', { transactional_id: 't' });
    assertError(await writer.request('CONSUME', consume('orders')), 'NOT_AUTHORIZED_FOR_OPERATION', { command: 'CONSUME', permission: 'topic.read' });

    await h.broker.users.setPermissions('reader', globalGrants(['manage_topics']));
    await ok(reader, 'CREATE', { topic: 'by-reader' });
    await h.broker.users.update('reader', { status: 'inactive' });
    assertError(await reader.request('LIST'), 'authentication_required');
  });

  it('applies topic policies after the coarse permissions', async (t) => {
    const h = await startCursus(t, { settings: { requireAuth: true }, handlers: [probes] });
    for (const name of ['alice', 'bob']) await h.broker.users.create({ username: name, password: `${name}-pw`, permissions: globalGrants(['read_topics', 'send_messages']) });
    const root = await h.client();
    await ok(root, 'AUTH', { principal: rootName, token: rootPassword });
    await ok(root, 'CREATE', { topic: 'acl', auth_policy: 'acl', read_acl: 'alice', write_acl: '*' });
    await ok(root, 'CREATE', { topic: 'frozen', auth_policy: 'deny_write' });
    await ok(root, 'CREATE', { topic: 'sealed', auth_policy: 'deny_read' });
    const alice = await h.client();
    await ok(alice, 'AUTH', { principal: 'alice', token: 'alice-pw' });
    const bob = await h.client();
    await ok(bob, 'AUTH', { principal: 'bob', token: 'bob-pw' });

    await ok(alice, 'CONSUME', consume('acl'));
    const denied = assertError(await bob.request('CONSUME', consume('acl')), 'NOT_AUTHORIZED_FOR_TOPIC', { topic: 'acl', operation: 'read' });
    assert.equal(denied.class, 'authorization');
    await ok(bob, 'PUBLISH', publish('acl'));
    assertError(await root.request('PUBLISH', publish('frozen')), 'NOT_AUTHORIZED_FOR_TOPIC', { topic: 'frozen', operation: 'write' });
    await ok(bob, 'CONSUME', consume('frozen'));
    assertError(await alice.request('CONSUME', consume('sealed')), 'NOT_AUTHORIZED_FOR_TOPIC', { topic: 'sealed', operation: 'read' });
    await ok(alice, 'PUBLISH', publish('sealed'));
  });

  it('applies topic policies to the event store and to transactional writes', async (t) => {
    const h = await startCursus(t, { settings: { requireAuth: true } });
    for (const name of ['alice', 'bob']) await h.broker.users.create({ username: name, password: `${name}-pw`, permissions: globalGrants(['read_topics', 'send_messages']) });
    const root = await h.client();
    await ok(root, 'AUTH', { principal: rootName, token: rootPassword });
    await ok(root, 'CREATE', { topic: 'events', event_sourcing: 'true', auth_policy: 'acl', read_acl: 'alice', write_acl: 'alice' });
    await ok(root, 'CREATE', { topic: 'ledger', auth_policy: 'acl', read_acl: 'alice', write_acl: 'alice' });
    const alice = await h.client();
    await ok(alice, 'AUTH', { principal: 'alice', token: 'alice-pw' });
    const bob = await h.client();
    await ok(bob, 'AUTH', { principal: 'bob', token: 'bob-pw' });

    await ok(alice, 'APPEND_STREAM', { topic: 'events', key: 'a-1', version: '1', message: 'opened' });
    assertError(await bob.request('APPEND_STREAM', { topic: 'events', key: 'a-1', version: '2', message: 'forged' }), 'NOT_AUTHORIZED_FOR_TOPIC', { topic: 'events', operation: 'write' });
    assertError(await bob.request('SAVE_SNAPSHOT', { topic: 'events', key: 'a-1', version: '1', message: '{}' }), 'NOT_AUTHORIZED_FOR_TOPIC', { topic: 'events', operation: 'write' });
    assertError(await bob.request('READ_SNAPSHOT', { topic: 'events', key: 'a-1' }), 'NOT_AUTHORIZED_FOR_TOPIC', { topic: 'events', operation: 'read' });
    assertError(await bob.request('STREAM_VERSION', { topic: 'events', key: 'a-1' }), 'NOT_AUTHORIZED_FOR_TOPIC', { topic: 'events', operation: 'read' });
    const refused = await bob.request('READ_STREAM', { topic: 'events', key: 'a-1' });
    assert.equal(refused.length, 1, 'a refused stream is one frame');
    assert.equal(errorOf(refused[0]!).code, 'NOT_AUTHORIZED_FOR_TOPIC');
    assert.equal(okFields((await alice.request('STREAM_VERSION', { topic: 'events', key: 'a-1' }))[0]!).get('version'), '1');

    const init = okFields((await bob.request('INIT_PRODUCER_ID', { transactional_id: 'bob-tx' }))[0]!);
    const session = { transactional_id: 'bob-tx', producerId: init.get('producerId')!, epoch: init.get('epoch')! };
    await ok(bob, 'BEGIN_TXN', session);
    assertError(await bob.request('TXN_PUBLISH', { ...session, topic: 'ledger', seqNum: '1', message: 'forged' }), 'NOT_AUTHORIZED_FOR_TOPIC', { topic: 'ledger', operation: 'write' });
  });
});

describe('permissions from grants', () => {
  const user = (permissions: Grants | null, extra: Partial<User> = {}): User => ({ id: 5, username: 'u', status: 'active', permissions, createdAt: 0, root: false, ...extra });
  const sorted = (set: ReadonlySet<string>): string[] => [...set].sort();
  const none = globalGrants([]);

  it('maps the grant model onto admin, topic.read, topic.write, group and transaction', () => {
    assert.deepEqual(sorted(permissionsOf(user(null, { root: true, id: 0 }), 1)), ['*']);
    assert.deepEqual(sorted(permissionsOf(user(globalGrants(['manage_topics'])), 1)), ['admin', 'group', 'topic.read', 'topic.write', 'transaction']);
    assert.deepEqual(sorted(permissionsOf(user(globalGrants(['read_streams'])), 1)), ['group', 'topic.read']);
    assert.deepEqual(sorted(permissionsOf(user(globalGrants(['poll_messages'])), 1)), ['group', 'topic.read']);
    assert.deepEqual(sorted(permissionsOf(user(globalGrants(['send_messages'])), 1)), ['topic.write', 'transaction']);
    assert.deepEqual(sorted(permissionsOf(user(globalGrants(['manage_servers', 'manage_users'])), 1)), []);
    assert.deepEqual(sorted(permissionsOf(user(globalGrants(['manage_topics']), { status: 'inactive' }), 1)), []);
  });

  it('counts the grants of stream default, not of other streams', () => {
    const onStream = (streamId: number): Grants => ({
      global: none.global,
      streams: [{ streamId, manageStream: false, readStream: true, manageTopics: false, readTopics: false, pollMessages: false, sendMessages: true, topics: [] }],
    });
    assert.deepEqual(sorted(permissionsOf(user(onStream(1)), 1)), ['group', 'topic.read', 'topic.write', 'transaction']);
    assert.deepEqual(sorted(permissionsOf(user(onStream(2)), 1)), []);
  });
});
