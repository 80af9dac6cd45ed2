// Cursus group membership at the handler level (src/protocols/cursus/handlers/groups.ts over a real
// Broker, on a manual clock): JOIN_GROUP, SYNC_GROUP, HEARTBEAT, LEAVE_GROUP, GROUP_STATUS and
// LIST_GROUPS; generations, fencing, session expiry.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sessionTimeoutMsDefault } from '../../../src/protocols/cursus/groups.js';
import { groupsHarness } from './groups-harness.js';

describe('Cursus group membership', () => {
  it('a Cursus v1 JOIN_GROUP without a generation always makes a new member <member>-NNNN, as v1 does, even from a member still in', async (t) => {
    const h = await groupsHarness(t, { topics: { t: 2 } });
    assert.deepEqual(await h.ok('JOIN_GROUP', { topic: 't', group: 'g', member: 'a' }, 'v1'), { generation: '1', member: 'a-0001', assignments: '[0,1]' });
    assert.deepEqual(await h.ok('JOIN_GROUP', { topic: 't', group: 'g', member: 'a-0001' }, 'v1'), { generation: '2', member: 'a-0001-0002', assignments: '[1]' }, "v1 suffixes whatever member= says");
    const status = await h.json('GROUP_STATUS', { group: 'g' });
    assert.deepEqual((status.members as Array<{ member_id: string }>).map((m) => m.member_id), ['a-0001', 'a-0001-0002']);
    assert.deepEqual(await h.ok('JOIN_GROUP', { topic: 't', group: 'g', member: 'a-0001' }), { generation: '2', member: 'a-0001', assignments: '[0]' }, 'Wire v2 resumes a member that is still in');
  });

  it('joins, syncs, heartbeats and leaves with two members: every change a new generation, the stale member fenced', async (t) => {
    const h = await groupsHarness(t, { topics: { t: 4 } });
    const a = await h.ok('JOIN_GROUP', { topic: 't', group: 'g', member: 'a' });
    assert.deepEqual(a, { generation: '1', member: 'a-0001', assignments: '[0,1,2,3]' }, 'a fresh join registers the group; the member id gets a 4-digit suffix');
    assert.deepEqual(await h.ok('SYNC_GROUP', { group: 'g', member: 'a-0001', generation: '1' }), { assignments: '[0,1,2,3]' });
    assert.equal((await h.json('GROUP_STATUS', { group: 'g' })).state, 'Stable');

    const b = await h.ok('JOIN_GROUP', { topic: 't', group: 'g', member: 'b' });
    assert.deepEqual(b, { generation: '2', member: 'b-0002', assignments: '[2,3]' }, 'the join rebalances at once');
    assert.equal((await h.json('GROUP_STATUS', { group: 'g' })).state, 'Rebalancing', 'a has not seen generation 2 yet');
    assert.equal(await h.refused('HEARTBEAT', { topic: 't', group: 'g', member: 'a-0001', generation: '1' }), 'GEN_MISMATCH current=2 requested=1 group=g member=a-0001');
    assert.deepEqual(await h.ok('HEARTBEAT', { topic: 't', group: 'g', member: 'a-0001' }), { member: 'a-0001', generation: '2' }, 'without a generation it is not checked');
    assert.equal(await h.refused('SYNC_GROUP', { group: 'g', member: 'a-0001', generation: '1' }), 'GEN_MISMATCH current=2 requested=1 group=g member=a-0001');
    assert.equal(await h.refused('COMMIT_OFFSET', { topic: 't', partition: '0', group: 'g', offset: '1', member: 'a-0001', generation: '1' }), 'GEN_MISMATCH current=2 requested=1 group=g member=a-0001', 'the stale member cannot commit');
    assert.equal(await h.refused('COMMIT_OFFSET', { topic: 't', partition: '2', group: 'g', offset: '1', member: 'a-0001', generation: '2' }), 'NOT_OWNER partition=2 member=a-0001 group=g generation=2', 'partition 2 moved to b');
    assert.deepEqual(await h.ok('SYNC_GROUP', { group: 'g', member: 'a-0001', generation: '2' }), { assignments: '[0,1]' });

    const status = await h.json('GROUP_STATUS', { group: 'g' });
    assert.deepEqual(status, {
      group_name: 'g',
      topic_name: 't',
      state: 'Stable',
      generation: 2,
      member_count: 2,
      partition_count: 4,
      members: [
        { member_id: 'a-0001', last_heartbeat: '2023-11-14T22:13:20Z', assignments: [0, 1] },
        { member_id: 'b-0002', last_heartbeat: '2023-11-14T22:13:20Z', assignments: [2, 3] },
      ],
      last_rebalance: '2023-11-14T22:13:20Z',
    });
    assert.deepEqual(Object.keys(status), ['group_name', 'topic_name', 'state', 'generation', 'member_count', 'partition_count', 'members', 'last_rebalance'], 'the documented key order');

    h.clock.advance(1_500);
    assert.deepEqual(await h.ok('LEAVE_GROUP', { topic: 't', group: 'g', member: 'b-0002' }), { group: 'g', member: 'b-0002', left: 'true' });
    assert.equal(await h.refused('LEAVE_GROUP', { topic: 't', group: 'g', member: 'b-0002' }), 'member_not_found member=b-0002 group=g');
    assert.equal(await h.refused('HEARTBEAT', { topic: 't', group: 'g', member: 'b-0002', generation: '3' }), 'member_not_found member=b-0002 group=g');
    assert.equal(await h.refused('HEARTBEAT', { topic: 't', group: 'g', member: 'a-0001', generation: '2' }), 'GEN_MISMATCH current=3 requested=2 group=g member=a-0001');
    assert.deepEqual(await h.ok('SYNC_GROUP', { group: 'g', member: 'a-0001', generation: '3' }), { assignments: '[0,1,2,3]' }, 'a takes everything back');
    assert.equal((await h.json('GROUP_STATUS', { group: 'g' })).last_rebalance, '2023-11-14T22:13:21.500Z');
  });

  it('a member that joins again with its full id resumes: same id, same generation', async (t) => {
    const h = await groupsHarness(t, { topics: { t: 2 } });
    await h.ok('JOIN_GROUP', { topic: 't', group: 'g', member: 'a' });
    await h.ok('JOIN_GROUP', { topic: 't', group: 'g', member: 'b' });
    assert.deepEqual(await h.ok('JOIN_GROUP', { topic: 't', group: 'g', member: 'a-0001' }), { generation: '2', member: 'a-0001', assignments: '[0]' });
    assert.deepEqual(await h.ok('JOIN_GROUP', { group: 'g', member: 'a' }), { generation: '3', member: 'a-0003', assignments: '[]' }, 'a base id is a new member; the topic may be left out once the group exists');
  });

  it('removes a member that misses its session timeout (30 s by default) and rebalances', async (t) => {
    const h = await groupsHarness(t, { topics: { t: 2 } });
    assert.equal(sessionTimeoutMsDefault, 30_000);
    await h.ok('JOIN_GROUP', { topic: 't', group: 'g', member: 'a' });
    await h.ok('JOIN_GROUP', { topic: 't', group: 'g', member: 'b' });
    h.scheduler.advance(20_000);
    await h.ok('HEARTBEAT', { topic: 't', group: 'g', member: 'a-0001', generation: '2' });
    h.scheduler.advance(9_999);
    assert.equal((await h.json('GROUP_STATUS', { group: 'g' })).member_count, 2, 'b is within its session');
    h.scheduler.advance(1);
    assert.equal(await h.refused('HEARTBEAT', { topic: 't', group: 'g', member: 'b-0002' }), 'member_not_found member=b-0002 group=g', 'b sent nothing for 30 s');
    const status = await h.json('GROUP_STATUS', { group: 'g' });
    assert.equal(status.generation, 3, 'its removal is a rebalance');
    assert.deepEqual(status.members, [{ member_id: 'a-0001', last_heartbeat: '2023-11-14T22:13:40Z', assignments: [0, 1] }]);
    assert.equal(status.last_rebalance, '2023-11-14T22:13:50Z');
    h.scheduler.advance(20_000);
    const dead = await h.json('GROUP_STATUS', { group: 'g' });
    assert.deepEqual([dead.state, dead.member_count, dead.generation], ['Dead', 0, 4], 'a went quiet too; the registration stays');
    assert.equal(h.scheduler.pendingCount, 0, 'no timer left behind');
  });

  it('a group of several topics assigns each topic-partition once per generation and answers with topic_assignments', async (t) => {
    const h = await groupsHarness(t, { topics: { a: 2, b: 1, c: 1 } });
    assert.deepEqual(await h.ok('REGISTER_GROUP', { group: 'g', topics: 'b,a' }), { group: 'g', topics: 'a,b' });
    assert.deepEqual(await h.ok('JOIN_GROUP', { group: 'g', member: 'x' }), { generation: '1', member: 'x-0001', topic_assignments: 'a:P0,a:P1,b:P0' });
    const y = await h.ok('JOIN_GROUP', { group: 'g', member: 'y' });
    assert.deepEqual(y, { generation: '2', member: 'y-0002', topic_assignments: 'b:P0' });
    const x = await h.ok('SYNC_GROUP', { group: 'g', member: 'x-0001', generation: '2' });
    assert.deepEqual(x, { topic_assignments: 'a:P0,a:P1' });
    assert.equal(await h.refused('JOIN_GROUP', { group: 'g', member: 'z', topic: 'c' }), 'topic_not_assigned_to_group expected=a,b actual=c');
    const status = await h.json('GROUP_STATUS', { group: 'g' });
    assert.deepEqual([status.topic_name, status.partition_count], ['a,b', 3]);
    assert.deepEqual((status.members as Array<{ assignments: unknown }>).map((m) => m.assignments), [['a:P0', 'a:P1'], ['b:P0']]);
    // A commit names one of the topics.
    await h.ok('COMMIT_OFFSET', { topic: 'b', partition: '0', group: 'g', offset: '4', member: 'y-0002', generation: '2' });
    assert.equal(await h.refused('COMMIT_OFFSET', { topic: 'a', partition: '0', group: 'g', offset: '4', member: 'y-0002', generation: '2' }), 'NOT_OWNER partition=0 member=y-0002 group=g generation=2');
    assert.equal(await h.refused('COMMIT_OFFSET', { topic: 'c', partition: '0', group: 'g', offset: '4', member: 'y-0002', generation: '2' }), 'topic_not_assigned_to_group expected=a,b actual=c');
  });

  it('a pattern group takes topics and partitions as they appear and lets go of deleted ones', async (t) => {
    const h = await groupsHarness(t, { topics: { 'orders-eu': 2, audit: 1 } });
    assert.deepEqual(await h.ok('REGISTER_GROUP', { group: 'g', pattern: 'orders-*' }), { group: 'g', topics: 'orders-eu' });
    assert.deepEqual(await h.ok('JOIN_GROUP', { group: 'g', member: 'm' }), { generation: '1', member: 'm-0001', topic_assignments: 'orders-eu:P0,orders-eu:P1' });
    await h.broker.createTopic('default', 'orders-us', { partitions: 1 });
    assert.equal(await h.refused('HEARTBEAT', { topic: 'orders-eu', group: 'g', member: 'm-0001', generation: '1' }), 'GEN_MISMATCH current=2 requested=1 group=g member=m-0001', 'a topic created later is a rebalance');
    assert.deepEqual(await h.ok('SYNC_GROUP', { group: 'g', member: 'm-0001', generation: '2' }), { topic_assignments: 'orders-eu:P0,orders-eu:P1,orders-us:P0' });
    await h.broker.createTopic('default', 'payments', { partitions: 1 });
    assert.deepEqual(await h.ok('HEARTBEAT', { topic: 'orders-*', group: 'g', member: 'm-0001', generation: '2' }), { member: 'm-0001', generation: '2' }, 'a topic the pattern does not take changes nothing');
    await h.broker.addPartitions({ topic: 'orders-us' }, 2);
    assert.deepEqual(await h.ok('SYNC_GROUP', { group: 'g', member: 'm-0001', generation: '3' }), { topic_assignments: 'orders-eu:P0,orders-eu:P1,orders-us:P0,orders-us:P1' }, 'a partition added later too');
    await h.broker.deleteTopic({ topic: 'orders-eu' });
    assert.deepEqual(await h.ok('SYNC_GROUP', { group: 'g', member: 'm-0001', generation: '4' }), { topic_assignments: 'orders-us:P0,orders-us:P1' });
    const status = await h.json('GROUP_STATUS', { group: 'g' });
    assert.deepEqual([status.topic_name, status.partition_count], ['orders-*', 2]);
    assert.equal(h.groups.hasActiveMembers('orders-us'), true);
    assert.equal(h.groups.hasActiveMembers('orders-later'), true, 'a topic the pattern would take is blocked too');
    assert.equal(h.groups.hasActiveMembers('payments'), false);
    await h.ok('LEAVE_GROUP', { topic: 'orders-us', group: 'g', member: 'm-0001' });
    assert.equal(h.groups.hasActiveMembers('orders-us'), false);
  });

  it('registers exactly one selector, for topics that exist; registering again with another selector rebalances', async (t) => {
    const h = await groupsHarness(t, { topics: { a: 1, b: 1 } });
    assert.equal(await h.refused('REGISTER_GROUP', { group: 'g' }), 'missing_topic command=REGISTER_GROUP');
    assert.equal(await h.refused('REGISTER_GROUP', { group: 'g', topic: 'a', pattern: '*' }), 'invalid_group_selector command=REGISTER_GROUP');
    assert.equal(await h.refused('REGISTER_GROUP', { group: 'g', topic: 'nope' }), 'topic_not_found topic=nope');
    assert.equal(await h.refused('REGISTER_GROUP', { group: 'g', topics: 'a,nope' }), 'topic_not_found topic=nope');
    assert.equal(await h.refused('REGISTER_GROUP', { group: 'g', topics: ' , ' }), 'invalid_topics command=REGISTER_GROUP');
    assert.equal(await h.refused('REGISTER_GROUP', { topic: 'a' }), 'missing_group command=REGISTER_GROUP');
    assert.deepEqual(await h.ok('LIST_GROUPS'), { count: '0', groups: '' }, 'nothing refused was registered');
    assert.deepEqual(await h.ok('REGISTER_GROUP', { group: 'g', pattern: 'z*' }), { group: 'g', topics: '' }, 'a pattern may match nothing yet');
    await h.ok('JOIN_GROUP', { group: 'g', member: 'm' });
    assert.deepEqual(await h.ok('REGISTER_GROUP', { group: 'g', topic: 'a' }), { group: 'g', topics: 'a' });
    assert.deepEqual(await h.ok('SYNC_GROUP', { group: 'g', member: 'm-0001', generation: '2' }), { assignments: '[0]' }, 'the member rebalanced onto the new selector');
    assert.deepEqual(await h.ok('REGISTER_GROUP', { group: 'g', topic: 'a' }), { group: 'g', topics: 'a' });
    assert.equal((await h.json('GROUP_STATUS', { group: 'g' })).generation, 2, 'the same selector again changes nothing');
    await h.ok('REGISTER_GROUP', { group: 'f', topic: 'b' });
    assert.deepEqual(await h.ok('LIST_GROUPS'), { count: '2', groups: 'f,g' });
  });

  it('refuses joins and group commands it cannot serve with the spec codes', async (t) => {
    const h = await groupsHarness(t, { topics: { t: 1, u: 1 } });
    assert.equal(await h.refused('JOIN_GROUP', { group: 'g', member: 'm' }), 'group_not_found group=g', 'no group and no topic to register it against');
    assert.equal(await h.refused('JOIN_GROUP', { group: 'g', member: 'm', topic: 'nope' }), 'topic_not_found topic=nope');
    assert.equal(await h.refused('JOIN_GROUP', { group: 'g', topic: 't' }), 'missing_member command=JOIN_GROUP');
    assert.equal(await h.refused('JOIN_GROUP', { group: 'g', topic: 't', member: 'm'.repeat(251) }), 'invalid_member command=JOIN_GROUP');
    assert.equal(await h.refused('JOIN_GROUP', { group: 'g'.repeat(1025), topic: 't', member: 'm' }), 'invalid_group command=JOIN_GROUP');
    await h.ok('JOIN_GROUP', { group: 'g', member: 'm', topic: 't' });
    assert.equal(await h.refused('JOIN_GROUP', { group: 'g', member: 'm', topic: 'u' }), 'topic_not_assigned_to_group expected=t actual=u');
    assert.equal(await h.refused('SYNC_GROUP', { group: 'g', member: 'm-0001' }), 'missing_generation command=SYNC_GROUP');
    assert.equal(await h.refused('SYNC_GROUP', { group: 'g', member: 'm-0001', generation: 'one' }), 'invalid_generation command=SYNC_GROUP');
    assert.equal(await h.refused('HEARTBEAT', { group: 'g', member: 'm-0001' }), 'missing_topic command=HEARTBEAT');
    assert.equal(await h.refused('HEARTBEAT', { topic: 'u', group: 'g', member: 'm-0001' }), 'topic_not_assigned_to_group expected=t actual=u');
    assert.equal(await h.refused('HEARTBEAT', { topic: 't', group: 'h', member: 'm-0001' }), 'group_not_found group=h');
    assert.equal(await h.refused('LEAVE_GROUP', { group: 'g', member: 'm-0001' }), 'missing_topic command=LEAVE_GROUP');
    assert.equal(await h.refused('GROUP_STATUS', { group: 'h' }), 'group_not_found group=h');
    assert.equal((await h.json('GROUP_STATUS', { group: 'g' })).member_count, 1, 'nothing refused changed the group');
  });

  it('drops a group registered for one topic when that topic is deleted; the name can be joined again', async (t) => {
    const h = await groupsHarness(t, { topics: { t: 2 } });
    await h.ok('JOIN_GROUP', { group: 'g', member: 'm', topic: 't' });
    await h.broker.deleteTopic({ topic: 't' });
    assert.equal(await h.refused('HEARTBEAT', { topic: 't', group: 'g', member: 'm-0001' }), 'group_not_found group=g');
    assert.equal(h.scheduler.pendingCount, 0, 'its members\u2019 session timers stopped');
    await h.broker.createTopic('default', 't', { partitions: 1 });
    assert.deepEqual(await h.ok('JOIN_GROUP', { group: 'g', member: 'm', topic: 't' }), { generation: '1', member: 'm-0002', assignments: '[0]' });
  });
});
