// The grant model every front-end checks (src/core/access.ts): the reference permissioner's
// implications, root, inactive users, and ids that exist nowhere.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mayCreateStream, mayCreateTopic, mayListStreams, mayServer, mayStream, mayTopic, globalGrants, noSuchId, type GlobalGrants, type Grants, type StreamGrants, type TopicAction } from '../../src/core/access.js';
import type { User } from '../../src/core/users.js';

const noGlobal: GlobalGrants = globalGrants([]).global;

const noStream = (streamId: number): StreamGrants => ({ streamId, manageStream: false, readStream: false, manageTopics: false, readTopics: false, pollMessages: false, sendMessages: false, topics: [] });

function user(permissions: Grants | null, extra: Partial<User> = {}): User {
  return { id: 7, username: 'u', status: 'active', permissions, createdAt: 0, root: false, ...extra };
}

const topicActions: TopicAction[] = ['manageTopic', 'readTopic', 'poll', 'send'];

/** The topic actions allowed on stream 1 / topic 2. */
function topicRights(u: User, streamId = 1, topicId = 2): TopicAction[] {
  return topicActions.filter((a) => mayTopic(u, streamId, topicId, a));
}

describe('core access grants', () => {
  it('global grants imply as the reference permissioner does', () => {
    const cases: Array<[Partial<GlobalGrants>, TopicAction[]]> = [
      [{ manageStreams: true }, ['manageTopic', 'readTopic', 'poll', 'send']],
      [{ readStreams: true }, ['readTopic', 'poll']],
      [{ manageTopics: true }, ['manageTopic', 'readTopic', 'poll', 'send']],
      [{ readTopics: true }, ['readTopic', 'poll']],
      [{ pollMessages: true }, ['poll']],
      [{ sendMessages: true }, ['send']],
      [{ manageServers: true, manageUsers: true }, []],
    ];
    for (const [grant, expected] of cases) {
      assert.deepEqual(topicRights(user({ global: { ...noGlobal, ...grant }, streams: [] })), expected, JSON.stringify(grant));
    }
  });

  it('stream and topic grants cover only their own ids', () => {
    const streamWide = user({ global: noGlobal, streams: [{ ...noStream(1), readTopics: true }] });
    assert.deepEqual(topicRights(streamWide), ['readTopic', 'poll']);
    assert.deepEqual(topicRights(streamWide, 3, 2), [], 'another stream');
    assert.deepEqual(topicRights(streamWide, 1, noSuchId), ['readTopic', 'poll'], 'a topic not made yet in that stream');
    const oneTopic = user({ global: noGlobal, streams: [{ ...noStream(1), topics: [{ topicId: 2, manageTopic: false, readTopic: false, pollMessages: false, sendMessages: true }] }] });
    assert.deepEqual(topicRights(oneTopic), ['send']);
    assert.deepEqual(topicRights(oneTopic, 1, 3), [], 'another topic of the stream');
    assert.deepEqual(topicRights(oneTopic, 1, noSuchId), []);
    assert.equal(mayStream(oneTopic, 1, 'readStream'), false);
    const manager = user({ global: noGlobal, streams: [{ ...noStream(1), manageStream: true }] });
    assert.deepEqual(topicRights(manager), topicActions);
    assert.equal(mayStream(manager, 1, 'manageStream'), true);
    assert.equal(mayStream(manager, 2, 'readStream'), false);
    assert.equal(mayCreateTopic(manager, 1), true);
    assert.equal(mayCreateTopic(manager, noSuchId), false, 'a stream made with the topic needs a global right');
    assert.equal(mayListStreams(manager), false, 'per-stream grants do not open the stream list');
  });

  it('server rights: manage implies read', () => {
    const reader = user({ global: { ...noGlobal, readServers: true, readUsers: true }, streams: [] });
    assert.deepEqual([mayServer(reader, 'readServers'), mayServer(reader, 'manageServers'), mayServer(reader, 'readUsers'), mayServer(reader, 'manageUsers')], [true, false, true, false]);
    const manager = user({ global: { ...noGlobal, manageServers: true, manageUsers: true }, streams: [] });
    assert.deepEqual([mayServer(manager, 'readServers'), mayServer(manager, 'manageServers'), mayServer(manager, 'readUsers'), mayServer(manager, 'manageUsers')], [true, true, true, true]);
  });

  it('root may do everything; no grants, unreadable grants or an inactive user nothing', () => {
    const root = user(null, { id: 0, root: true });
    assert.deepEqual(topicRights(root), topicActions);
    assert.equal(mayServer(root, 'manageUsers'), true);
    assert.equal(mayCreateStream(root), true);
    for (const [name, u] of [
      ['no grants', user(null)],
      ['not grants', user('everything' as unknown as Grants)],
      ['inactive', user({ global: { ...noGlobal, manageStreams: true, manageServers: true }, streams: [] }, { status: 'inactive' })],
      ['inactive root', user(null, { id: 0, root: true, status: 'inactive' })],
    ] as const) {
      assert.deepEqual(topicRights(u), [], name);
      assert.equal(mayServer(u, 'readServers'), false, name);
      assert.equal(mayCreateStream(u), false, name);
      assert.equal(mayCreateTopic(u, 1), false, name);
      assert.equal(mayListStreams(u), false, name);
      assert.equal(mayStream(u, 1, 'readStream'), false, name);
    }
  });
});
