// Users, permissions and personal access tokens end to end: CRUD with the reply layouts, every
// permission enforced with status 41, tokens with expiry, login with a token.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CommandCode, EvictionReason, IggyErrorCode, type Permissions } from '../../../../src/protocols/iggy/codec/index.js';
import { UserStatus } from '../../../../src/protocols/iggy/codec/commands/users.js';
import { silentLogger } from '../../../../src/base/logger.js';
import { IggyFrontend } from '../../../../src/protocols/iggy/frontend.js';
import { sendRequest, sid, startIggy, type IggyTestClient } from '../harness.js';

const none = {
  manageServers: false,
  readServers: false,
  manageUsers: false,
  readUsers: false,
  manageStreams: false,
  readStreams: false,
  manageTopics: false,
  readTopics: false,
  pollMessages: false,
  sendMessages: false,
};

describe('iggy users', () => {
  it('creates, gets, lists, updates, changes passwords and deletes users', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    const perms: Permissions = { global: { ...none, readStreams: true }, streams: [] };
    const created = await c.ok(CommandCode.createUser, { username: 'alice', password: 'password-1', status: UserStatus.active, permissions: perms, options: [] });
    assert.equal(created.username, 'alice');
    assert.deepEqual(created.permissions, perms);
    assert.deepEqual(await c.call(CommandCode.createUser, { username: 'alice', password: 'password-1', status: 1, permissions: null, options: [] }), { rejected: IggyErrorCode.userAlreadyExists });
    // The reference's bounds: usernames of 3..50 bytes (43), passwords of 3..100 bytes (44).
    for (const [username, password, code] of [
      ['al', 'password', IggyErrorCode.invalidUsername],
      ['a'.repeat(51), 'password', IggyErrorCode.invalidUsername],
      ['bob', 'pw', IggyErrorCode.invalidPassword],
      ['bob', 'p'.repeat(101), IggyErrorCode.invalidPassword],
    ] as const) {
      assert.deepEqual(await c.call(CommandCode.createUser, { username, password, status: 1, permissions: null, options: [] }), { rejected: code }, `${username.length} / ${password.length}`);
    }
    assert.ok('value' in (await c.call(CommandCode.createUser, { username: 'a'.repeat(50), password: 'p'.repeat(100), status: 1, permissions: null, options: [] })), 'both at their maximum');
    assert.deepEqual(await c.call(CommandCode.updateUser, { userId: sid('alice'), username: 'al', status: null, options: [] }), { rejected: IggyErrorCode.invalidUsername });
    assert.deepEqual(await c.call(CommandCode.changePassword, { userId: sid('alice'), currentPassword: '', newPassword: 'pw' }), { rejected: IggyErrorCode.invalidPassword });
    const got = await c.ok(CommandCode.getUser, { userId: sid('alice') });
    assert.equal(got?.id, created.id);
    assert.equal(await c.ok(CommandCode.getUser, { userId: sid(999) }), null);
    const users = await c.ok(CommandCode.getUsers, {});
    assert.deepEqual(users.map((u) => u.username), ['iggy', 'alice', 'a'.repeat(50)]);
    assert.equal(users[0]!.id, 0, 'root is user 0');
    // Root is reported with every global permission, as the reference server's root user.
    const root = await c.ok(CommandCode.getUser, { userId: sid(0) });
    const all = Object.fromEntries(Object.keys(none).map((k) => [k, true]));
    assert.deepEqual(root?.permissions, { global: all, streams: [] });
    await c.ok(CommandCode.updateUser, { userId: sid(created.id), username: 'alice2', status: null, options: [] });
    // The current password is checked even when root changes another user's (as the reference's).
    assert.deepEqual(await c.call(CommandCode.changePassword, { userId: sid('alice2'), currentPassword: 'wrong-password', newPassword: 'password-2' }), { rejected: IggyErrorCode.invalidCredentials });
    const wrong = await h.client();
    assert.deepEqual(await wrong.login('alice2', 'password-2'), { evicted: EvictionReason.invalidCredentials }, 'the password did not change');
    const a1 = await h.client();
    assert.ok('value' in (await a1.login('alice2', 'password-1')));
    await c.ok(CommandCode.changePassword, { userId: sid('alice2'), currentPassword: 'password-1', newPassword: 'password-2' });
    const a = await h.client();
    assert.ok('value' in (await a.login('alice2', 'password-2')));
    assert.deepEqual(await c.call(CommandCode.deleteUser, { userId: sid(0) }), { rejected: IggyErrorCode.cannotDeleteUser });
    assert.deepEqual(await c.call(CommandCode.updatePermissions, { userId: sid(0), permissions: null }), { rejected: IggyErrorCode.cannotChangePermissions });
    await c.ok(CommandCode.deleteUser, { userId: sid('alice2') });
    assert.deepEqual(await c.call(CommandCode.deleteUser, { userId: sid('alice2') }), { rejected: IggyErrorCode.resourceNotFound });
    // the deleted user's session is gone
    assert.deepEqual(await a.call(CommandCode.getStreams, {}), { evicted: 1 });
  });

  it('enforces permissions with status 41', async (t) => {
    const h = await startIggy(t);
    const root = await h.root();
    const s = await root.ok(CommandCode.createStream, { name: 'shop', options: [] });
    await root.ok(CommandCode.createTopic, { streamId: sid(s.id), partitionsCount: 1, name: 'orders', options: [] });
    await root.ok(CommandCode.createUser, { username: 'reader', password: 'password-1', status: 1, permissions: { global: { ...none }, streams: [{ streamId: s.id, manageStream: false, readStream: true, manageTopics: false, readTopics: true, pollMessages: true, sendMessages: false, topics: [] }] }, options: [] });
    await root.ok(CommandCode.createUser, { username: 'nobody', password: 'password-1', status: 1, permissions: null, options: [] });
    const reader = await h.client();
    await reader.login('reader', 'password-1');
    const nobody = await h.client();
    await nobody.login('nobody', 'password-1');
    const denied = { status: IggyErrorCode.unauthorized };
    // reader: reads and polls the stream, may not send, manage or see users/servers
    assert.ok('value' in (await reader.call(CommandCode.getStream, { streamId: sid(s.id) })));
    assert.ok('value' in (await reader.call(CommandCode.pollMessages, { consumer: { kind: 1, id: sid(1) }, streamId: sid(s.id), topicId: sid('orders'), partitionId: 0, strategy: { kind: 3, value: 0n }, count: 1, autoCommit: false })));
    assert.deepEqual(await reader.call(CommandCode.sendMessages, sendRequest(sid(s.id), sid('orders'), ['x'])), denied);
    // A send that does not resolve is ResourceNotFound before any permission is asked (the reference's dispatch order).
    assert.deepEqual(await reader.call(CommandCode.sendMessages, sendRequest(sid(s.id), sid('missing'), ['x'])), { status: IggyErrorCode.resourceNotFound });
    assert.deepEqual(await reader.call(CommandCode.createTopic, { streamId: sid(s.id), partitionsCount: 1, name: 'x', options: [] }), denied);
    assert.deepEqual(await reader.call(CommandCode.deleteStream, { streamId: sid(s.id) }), denied);
    assert.deepEqual(await reader.call(CommandCode.getUsers, {}), denied);
    assert.deepEqual(await reader.call(CommandCode.getStats, {}), denied);
    assert.deepEqual(await reader.call(CommandCode.createUser, { username: 'x', password: 'password-1', status: 1, permissions: null, options: [] }), denied);
    // The stream list takes a global read_streams (or manage_streams), as the reference
    // permissioner: a per-stream grant reads that stream, not the list.
    assert.deepEqual(await reader.call(CommandCode.getStreams, {}), denied);
    // nobody: no streams, no topics
    assert.deepEqual(await nobody.call(CommandCode.getStreams, {}), denied);
    assert.deepEqual(await nobody.call(CommandCode.getStream, { streamId: sid(s.id) }), denied);
    assert.deepEqual(await nobody.call(CommandCode.createStream, { name: 'mine', options: [] }), denied);
    assert.deepEqual(await nobody.call(CommandCode.getTopic, { streamId: sid(s.id), topicId: sid('orders') }), denied);
    // granting send at the topic level
    await root.ok(CommandCode.updatePermissions, { userId: sid('nobody'), permissions: { global: { ...none }, streams: [{ streamId: s.id, manageStream: false, readStream: false, manageTopics: false, readTopics: false, pollMessages: false, sendMessages: false, topics: [{ topicId: 0, manageTopic: false, readTopic: false, pollMessages: false, sendMessages: true }] }] } });
    assert.ok('value' in (await nobody.call(CommandCode.sendMessages, sendRequest(sid(s.id), sid('orders'), ['y']))));
    // Reading another user takes read_users; one's own account none (the reference GetUser gate);
    // a user that does not exist is not found before any permission is asked.
    assert.equal((await nobody.ok(CommandCode.getUser, { userId: sid('nobody') }))?.username, 'nobody');
    assert.equal((await reader.ok(CommandCode.getUser, { userId: sid(1) }))?.username, 'reader', 'oneself by id');
    assert.deepEqual(await nobody.call(CommandCode.getUser, { userId: sid('reader') }), denied);
    assert.equal(await nobody.ok(CommandCode.getUser, { userId: sid('ghost') }), null);
    // a user changes its own password without manage_users
    assert.ok('value' in (await nobody.call(CommandCode.changePassword, { userId: sid('nobody'), currentPassword: 'password-1', newPassword: 'password-9' })));
    assert.deepEqual(await nobody.call(CommandCode.changePassword, { userId: sid('reader'), currentPassword: 'password-1', newPassword: 'password-9' }), denied);
  });
});

describe('iggy user administration limits', () => {
  it('nobody renames, deactivates or re-permissions root, and an administrator grants only what it holds', async (t) => {
    const h = await startIggy(t);
    const root = await h.root();
    const s = await root.ok(CommandCode.createStream, { name: 'shop', options: [] });
    const other = await root.ok(CommandCode.createStream, { name: 'other', options: [] });
    const streamGrant = (streamId: number, rights: Partial<Record<'manageStream' | 'readStream' | 'manageTopics' | 'readTopics' | 'pollMessages' | 'sendMessages', boolean>>) => ({
      streamId,
      manageStream: false,
      readStream: false,
      manageTopics: false,
      readTopics: false,
      pollMessages: false,
      sendMessages: false,
      topics: [],
      ...rights,
    });
    // An administrator: manages users, reads every stream, manages topics of 'shop' only.
    const adminPermissions: Permissions = { global: { ...none, manageUsers: true, readStreams: true }, streams: [streamGrant(s.id, { manageTopics: true })] };
    await root.ok(CommandCode.createUser, { username: 'admin', password: 'password-1', status: 1, permissions: adminPermissions, options: [] });
    const admin = await h.client();
    await admin.login('admin', 'password-1');
    const refused = { rejected: IggyErrorCode.unauthorized };
    // Root stays root, whoever asks (root itself too).
    for (const c of [admin, root]) {
      assert.deepEqual(await c.call(CommandCode.updateUser, { userId: sid(0), username: null, status: UserStatus.inactive, options: [] }), refused, 'deactivate root');
      assert.deepEqual(await c.call(CommandCode.updateUser, { userId: sid(0), username: 'mallory', status: null, options: [] }), refused, 'rename root');
      assert.deepEqual(await c.call(CommandCode.updatePermissions, { userId: sid(0), permissions: null }), { rejected: IggyErrorCode.cannotChangePermissions });
      assert.deepEqual(await c.call(CommandCode.deleteUser, { userId: sid(0) }), { rejected: IggyErrorCode.cannotDeleteUser });
    }
    const rootNow = await root.ok(CommandCode.getUser, { userId: sid(0) });
    assert.deepEqual([rootNow?.username, rootNow?.status], ['iggy', UserStatus.active]);
    // Setting root's own status or name to what they are changes nothing and is allowed.
    await root.ok(CommandCode.updateUser, { userId: sid(0), username: 'iggy', status: UserStatus.active, options: [] });
    // What the administrator holds, it may grant: globally read streams, manage users, and the
    // 'shop' stream's topics (through the global read, also 'other''s reading rights).
    const within: Permissions = { global: { ...none, readStreams: true, readTopics: true, pollMessages: true }, streams: [streamGrant(s.id, { manageTopics: true, sendMessages: true }), streamGrant(other.id, { readStream: true, pollMessages: true })] };
    await admin.ok(CommandCode.createUser, { username: 'helper', password: 'password-1', status: 1, permissions: within, options: [] });
    await admin.ok(CommandCode.updatePermissions, { userId: sid('helper'), permissions: { global: { ...none, manageUsers: true }, streams: [] } });
    // More than it holds: refused, and nothing changes.
    const beyond: Permissions[] = [
      { global: { ...none, manageServers: true }, streams: [] },
      { global: { ...none, manageStreams: true }, streams: [] },
      { global: { ...none, sendMessages: true }, streams: [] },
      { global: { ...none }, streams: [streamGrant(other.id, { manageTopics: true })] },
      { global: { ...none }, streams: [streamGrant(s.id, { manageStream: true })] },
      { global: { ...none }, streams: [{ ...streamGrant(other.id, {}), topics: [{ topicId: 1, manageTopic: false, readTopic: false, pollMessages: false, sendMessages: true }] }] },
    ];
    for (const permissions of beyond) {
      assert.deepEqual(await admin.call(CommandCode.updatePermissions, { userId: sid('helper'), permissions }), refused, JSON.stringify(permissions));
      assert.deepEqual(await admin.call(CommandCode.createUser, { username: 'escalator', password: 'password-1', status: 1, permissions, options: [] }), refused);
    }
    assert.deepEqual(await admin.call(CommandCode.updatePermissions, { userId: sid('admin'), permissions: { global: { ...none, manageServers: true, manageUsers: true }, streams: [] } }), refused, 'not to itself either');
    assert.deepEqual((await root.ok(CommandCode.getUser, { userId: sid('helper') }))?.permissions, { global: { ...none, manageUsers: true }, streams: [] });
    assert.equal(await root.ok(CommandCode.getUser, { userId: sid('escalator') }), null);
    // Root grants anything.
    await root.ok(CommandCode.updatePermissions, { userId: sid('helper'), permissions: beyond[0]! });
  });
});

describe('iggy permission implications (the reference permissioner)', () => {
  it('read/manage topics, globally or per stream, poll (and manage sends); consumer groups take read-topic', async (t) => {
    const h = await startIggy(t);
    const root = await h.root();
    const s = await root.ok(CommandCode.createStream, { name: 'shop', options: [] });
    const topic = await root.ok(CommandCode.createTopic, { streamId: sid(s.id), partitionsCount: 1, name: 'orders', options: [] });
    await root.ok(CommandCode.sendMessages, sendRequest(sid(s.id), sid('orders'), ['m']));
    const noStream = { manageStream: false, readStream: false, manageTopics: false, readTopics: false, pollMessages: false, sendMessages: false };
    const noTopic = { manageTopic: false, readTopic: false, pollMessages: false, sendMessages: false };
    const grants: Record<string, { global?: Partial<typeof none>; stream?: Partial<typeof noStream>; topic?: Partial<typeof noTopic> }> = {
      globalRead: { global: { readTopics: true } },
      globalManage: { global: { manageTopics: true } },
      streamRead: { stream: { readTopics: true } },
      streamManage: { stream: { manageTopics: true } },
      topicRead: { topic: { readTopic: true } },
      topicPoll: { topic: { pollMessages: true } },
    };
    const clients: Record<string, IggyTestClient> = {};
    for (const [name, g] of Object.entries(grants)) {
      const streams = g.stream || g.topic ? [{ streamId: s.id, ...noStream, ...g.stream, topics: g.topic ? [{ topicId: topic.id, ...noTopic, ...g.topic }] : [] }] : [];
      await root.ok(CommandCode.createUser, { username: name, password: 'password-1', status: 1, permissions: { global: { ...none, ...g.global }, streams }, options: [] });
      clients[name] = await h.client();
      await clients[name].login(name, 'password-1');
    }
    const ref = { streamId: sid(s.id), topicId: sid('orders') };
    const can = async (c: IggyTestClient, code: number, req: unknown): Promise<boolean> => {
      const r = await c.call(code as never, req as never);
      if ('status' in r && r.status === IggyErrorCode.unauthorized) return false;
      assert.ok('value' in r, `code ${code}: ${Object.keys(r).join()} ${'status' in r ? r.status : ''}`);
      return true;
    };
    const poll = { ...ref, consumer: { kind: 1, id: sid(1) }, partitionId: 0, strategy: { kind: 3, value: 0n }, count: 1, autoCommit: false };
    const table: Record<string, boolean[]> = {};
    for (const name of Object.keys(grants)) {
      const c = clients[name]!;
      const group = `g-${name}`;
      table[name] = [
        await can(c, CommandCode.pollMessages, poll),
        await can(c, CommandCode.sendMessages, sendRequest(sid(s.id), sid('orders'), ['x'])),
        await can(c, CommandCode.createConsumerGroup, { ...ref, name: group }),
      ];
      if (table[name]![2]) {
        for (const code of [CommandCode.joinConsumerGroup, CommandCode.leaveConsumerGroup, CommandCode.deleteConsumerGroup]) {
          assert.ok(await can(c, code, { ...ref, groupId: sid(group) }), `${name}: ${code}`);
        }
      } else {
        await root.ok(CommandCode.createConsumerGroup, { ...ref, name: group });
        assert.equal(await can(c, CommandCode.joinConsumerGroup, { ...ref, groupId: sid(group) }), false, `${name}: join`);
      }
    }
    // [poll, send, create group (and join, leave, delete)]
    assert.deepEqual(table, {
      globalRead: [true, false, true],
      globalManage: [true, true, true],
      streamRead: [true, false, true],
      streamManage: [true, true, true],
      topicRead: [true, false, true],
      topicPoll: [true, false, false],
    });
  });
});

describe('iggy grants of deleted streams and topics', () => {
  it('are dropped with the stream or topic, so a new one under the same id does not inherit them', async (t) => {
    const h = await startIggy(t, { defaultStream: false });
    const root = await h.root();
    const shop = await root.ok(CommandCode.createStream, { name: 'shop', options: [] });
    const other = await root.ok(CommandCode.createStream, { name: 'other', options: [] });
    const orders = await root.ok(CommandCode.createTopic, { streamId: sid(other.id), partitionsCount: 1, name: 'orders', options: [] });
    const streamGrant = { streamId: shop.id, manageStream: false, readStream: true, manageTopics: false, readTopics: true, pollMessages: true, sendMessages: false, topics: [] };
    const topicGrant = { topicId: orders.id, manageTopic: false, readTopic: true, pollMessages: true, sendMessages: true };
    const otherGrant = { streamId: other.id, manageStream: false, readStream: false, manageTopics: false, readTopics: false, pollMessages: false, sendMessages: false, topics: [topicGrant] };
    await root.ok(CommandCode.createUser, { username: 'scoped', password: 'password-1', status: 1, permissions: { global: { ...none }, streams: [streamGrant, otherGrant] }, options: [] });
    const scoped = await h.client();
    await scoped.login('scoped', 'password-1');
    assert.ok('value' in (await scoped.call(CommandCode.getStream, { streamId: sid(shop.id) })));

    // The topic goes (here through the broker, as a Kafka DeleteTopics would): its grant goes too.
    await h.broker.deleteTopic({ namespace: other.id, topic: 'orders' });
    const afterTopic = await root.ok(CommandCode.getUser, { userId: sid('scoped') });
    assert.deepEqual(afterTopic?.permissions?.streams.map((s) => [s.streamId, s.topics.length]), [[shop.id, 0], [other.id, 0]]);
    const again = await root.ok(CommandCode.createTopic, { streamId: sid(other.id), partitionsCount: 1, name: 'again', options: [] });
    assert.equal(again.id, orders.id, 'the id is handed out again');
    assert.deepEqual(await scoped.call(CommandCode.sendMessages, sendRequest(sid(other.id), sid(again.id), ['x'])), { status: IggyErrorCode.unauthorized });

    // The stream goes: its grant goes, and a new stream under its id is not readable.
    await root.ok(CommandCode.deleteStream, { streamId: sid(shop.id) });
    const afterStream = await root.ok(CommandCode.getUser, { userId: sid('scoped') });
    assert.deepEqual(afterStream?.permissions?.streams.map((s) => s.streamId), [other.id]);
    const reborn = await root.ok(CommandCode.createStream, { name: 'reborn', options: [] });
    assert.equal(reborn.id, shop.id);
    assert.deepEqual(await scoped.call(CommandCode.getStream, { streamId: sid(reborn.id) }), { status: IggyErrorCode.unauthorized });
    // Iggy's own state of a topic deleted elsewhere goes as well (its stored options).
    assert.deepEqual((await h.broker.topicOptions.list('iggy')).map((g) => String(g.topicInternalId)), [String(h.broker.catalog.requireTopic({ namespace: other.id, topic: 'again' }).internalId)]);
  });
});

describe('iggy grants at start-up', () => {
  it('drops grants that name streams or topics that no longer exist (deleted while no Iggy front-end listened)', async (t) => {
    const h = await startIggy(t, { defaultStream: false });
    const root = await h.root();
    const kept = await root.ok(CommandCode.createStream, { name: 'kept', options: [] });
    const topic = await root.ok(CommandCode.createTopic, { streamId: sid(kept.id), partitionsCount: 1, name: 't', options: [] });
    const grant = (streamId: number, topicIds: number[]) => ({
      streamId,
      manageStream: false,
      readStream: true,
      manageTopics: false,
      readTopics: true,
      pollMessages: true,
      sendMessages: false,
      topics: topicIds.map((topicId) => ({ topicId, manageTopic: false, readTopic: true, pollMessages: true, sendMessages: false })),
    });
    const user = await h.broker.users.create({ username: 'stale', password: 'password1', status: 'active' });
    await h.broker.users.setPermissions(user.id, { global: { ...none }, streams: [grant(kept.id, [topic.id, 41]), grant(77, [0])] });
    const late = new IggyFrontend({ broker: h.broker, logger: silentLogger });
    await late.start();
    late.close();
    const after = await root.ok(CommandCode.getUser, { userId: sid('stale') });
    assert.deepEqual(after?.permissions?.streams.map((s) => [s.streamId, s.topics.map((x) => x.topicId)]), [[kept.id, [topic.id]]]);
  });
});

describe('iggy personal access tokens', () => {
  it('creates, lists, logs in with, and deletes tokens', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    const { token } = await c.ok(CommandCode.createPersonalAccessToken, { name: 'ci', expiry: 3_600_000_000n });
    await c.ok(CommandCode.createPersonalAccessToken, { name: 'forever', expiry: 0n });
    assert.deepEqual(await c.call(CommandCode.createPersonalAccessToken, { name: 'ci', expiry: 0n }), { rejected: IggyErrorCode.personalAccessTokenAlreadyExists });
    const list = await c.ok(CommandCode.getPersonalAccessTokens, {});
    assert.deepEqual(list.map((x) => x.name).sort(), ['ci', 'forever']);
    assert.ok(list.find((x) => x.name === 'ci')!.expiryAt > 0n);
    assert.equal(list.find((x) => x.name === 'forever')!.expiryAt, 0n);
    const p = await h.client();
    const login = await p.loginWithToken(token);
    assert.ok('value' in login && login.value.userId === 0);
    assert.ok('value' in (await p.call(CommandCode.getStreams, {})));
    await c.ok(CommandCode.deletePersonalAccessToken, { name: 'ci' });
    assert.deepEqual(await c.call(CommandCode.deletePersonalAccessToken, { name: 'ci' }), { rejected: IggyErrorCode.resourceNotFound });
    const q = await h.client();
    assert.deepEqual(await q.loginWithToken(token), { evicted: 10 });
    // The C# SDK's delete sends four zero bytes after the name: ignored, as by the reference server.
    const [header, ...body] = c.frame(CommandCode.deletePersonalAccessToken, { name: 'forever' }, { stampChecksum: false });
    const padded = Buffer.concat([...body, Buffer.alloc(4)]);
    header!.writeUInt32LE(header!.length + padded.length, 48);
    c.write([header!, padded]);
    const r = await c.next();
    assert.ok(r.kind === 'reply' && r.header.status === 0 && r.body.equals(Buffer.alloc(4)), 'R: empty success');
    assert.deepEqual(await c.ok(CommandCode.getPersonalAccessTokens, {}), []);
  });
});
