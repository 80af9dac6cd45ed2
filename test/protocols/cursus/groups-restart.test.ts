// What of Cursus groups survives a broker restart (over a data directory): registrations (selector
// and expansion, re-expanded over the topics as they are at start), committed offsets, and, as
// Cursus v1 keeps them, the members with their generation and assignments (each with a fresh
// session window: one that does not heartbeat within it is removed then).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { silentLogger } from '../../../src/base/logger.js';
import { cursusGroupScope, CursusGroups, sessionTimeoutMsDefault } from '../../../src/protocols/cursus/groups.js';
import { groupsHarness } from './groups-harness.js';

describe('Cursus groups across a restart', () => {
  it('committed offsets, the registration and the members with their generation and assignments survive', async (t) => {
    const h = await groupsHarness(t, { durable: true, topics: { t: 2 } });
    await h.ok('JOIN_GROUP', { topic: 't', group: 'g', member: 'a' });
    await h.ok('JOIN_GROUP', { topic: 't', group: 'g', member: 'b' });
    assert.deepEqual(await h.ok('SYNC_GROUP', { group: 'g', member: 'a-0001', generation: '2' }), { assignments: '[0]' });
    await h.ok('COMMIT_OFFSET', { topic: 't', partition: '0', group: 'g', member: 'a-0001', generation: '2', offset: '11' });
    await h.ok('REGISTER_GROUP', { group: 'idle', topics: 't' });
    const before = await h.json('GROUP_STATUS', { group: 'g' });
    await h.restart();
    assert.deepEqual(await h.ok('LIST_GROUPS'), { count: '2', groups: 'g,idle' });
    assert.deepEqual(await h.ok('FETCH_OFFSET', { topic: 't', partition: '0', group: 'g' }), { offset: '11' });
    assert.deepEqual(await h.ok('FETCH_OFFSET', { topic: 't', partition: '0', group: 'idle' }), { offset: '0' }, 'a registration without commits reads 0');
    const after = await h.json('GROUP_STATUS', { group: 'g' });
    assert.deepEqual(
      [after.generation, after.member_count, (after.members as Array<{ member_id: string; assignments: number[] }>).map((m) => [m.member_id, m.assignments]), after.last_rebalance],
      [2, 2, [['a-0001', [0]], ['b-0002', [1]]], before.last_rebalance],
      'the same generation, members and assignments: no rebalance',
    );
    assert.deepEqual(await h.ok('HEARTBEAT', { topic: 't', group: 'g', member: 'b-0002', generation: '2' }), { member: 'b-0002', generation: '2' });
    assert.deepEqual(await h.ok('SYNC_GROUP', { group: 'g', member: 'a-0001', generation: '2' }), { assignments: '[0]' });
    assert.equal(await h.refused('COMMIT_OFFSET', { topic: 't', partition: '1', group: 'g', offset: '5', member: 'a-0001', generation: '2' }), 'NOT_OWNER partition=1 member=a-0001 group=g generation=2', 'ownership is fenced as before');
    assert.equal(await h.refused('COMMIT_OFFSET', { topic: 't', partition: '0', group: 'g', offset: '5', member: 'a-0001', generation: '2' }), 'offset_regression reason="offset 5 of partition 0 is below the committed offset 11"', 'monotonic across the restart');
    assert.deepEqual(await h.ok('JOIN_GROUP', { group: 'g', member: 'c' }), { generation: '3', member: 'c-0003', assignments: '[]' }, 'the next join goes on from generation 2');
    assert.deepEqual(await h.ok('JOIN_GROUP', { group: 'idle', member: 'd' }), { generation: '1', member: 'd-0004', topic_assignments: 't:P0,t:P1' }, 'a topics= group is still one');
  });

  it('restored members start a fresh session window: one that does not heartbeat is removed, and that is kept too', async (t) => {
    const h = await groupsHarness(t, { durable: true, topics: { t: 2 } });
    await h.ok('JOIN_GROUP', { topic: 't', group: 'g', member: 'a' });
    await h.ok('JOIN_GROUP', { topic: 't', group: 'g', member: 'b' });
    h.scheduler.advance(sessionTimeoutMsDefault - 1_000);
    await h.restart();
    h.scheduler.advance(sessionTimeoutMsDefault - 1_000);
    assert.deepEqual(await h.ok('HEARTBEAT', { topic: 't', group: 'g', member: 'a-0001', generation: '2' }), { member: 'a-0001', generation: '2' }, 'alive: the old deadline was not kept');
    h.scheduler.advance(1_000);
    const status = await h.json('GROUP_STATUS', { group: 'g' });
    assert.deepEqual([status.generation, status.member_count], [3, 1], 'b missed its window: removed, the group rebalanced');
    await h.restart();
    const again = await h.json('GROUP_STATUS', { group: 'g' });
    assert.deepEqual([again.generation, (again.members as Array<{ member_id: string; assignments: number[] }>).map((m) => [m.member_id, m.assignments])], [3, [['a-0001', [0, 1]]]]);
  });

  it('LEAVE_GROUP is kept; a registration written before members were kept loads with none', async (t) => {
    const h = await groupsHarness(t, { durable: true, topics: { t: 1 } });
    await h.ok('JOIN_GROUP', { topic: 't', group: 'g', member: 'a' });
    await h.ok('LEAVE_GROUP', { topic: 't', group: 'g', member: 'a-0001' });
    await h.broker.groups.save(cursusGroupScope, 'old', { version: 1, selector: { kind: 'topic', topic: 't' }, expansion: [{ topic: 't', partitions: 1 }], registeredAt: 1 });
    await h.restart();
    assert.deepEqual([(await h.json('GROUP_STATUS', { group: 'g' })).member_count, (await h.json('GROUP_STATUS', { group: 'g' })).generation], [0, 2]);
    assert.deepEqual([(await h.json('GROUP_STATUS', { group: 'old' })).member_count, (await h.json('GROUP_STATUS', { group: 'old' })).generation], [0, 0]);
  });

  it('members of a group whose topics changed while it was down are put back, then rebalanced over the topics as they are', async (t) => {
    const h = await groupsHarness(t, { durable: true, topics: { 'logs-a': 2 } });
    await h.ok('REGISTER_GROUP', { group: 'p', pattern: 'logs-*' });
    await h.ok('JOIN_GROUP', { group: 'p', member: 'a' });
    await h.ok('JOIN_GROUP', { group: 'p', member: 'b' });
    await h.groups.close();
    await h.broker.createTopic('default', 'logs-b', { partitions: 2 });
    await h.restart();
    const status = await h.json('GROUP_STATUS', { group: 'p' });
    const members = status.members as Array<{ member_id: string; assignments: string[] }>;
    assert.deepEqual([status.generation, status.partition_count, status.state], [3, 4, 'Rebalancing'], 'one rebalance over the new expansion');
    assert.deepEqual(members.map((m) => [m.member_id, m.assignments.length]), [['a-0001', 2], ['b-0002', 2]]);
    assert.deepEqual(members.flatMap((m) => m.assignments).sort(), ['logs-a:P0', 'logs-a:P1', 'logs-b:P0', 'logs-b:P1']);
  });

  it('a pattern registration is expanded again at start over topics created while groups were not running; a group whose topic went is dropped', async (t) => {
    const h = await groupsHarness(t, { durable: true, topics: { 'logs-a': 1, solo: 1 } });
    await h.ok('REGISTER_GROUP', { group: 'p', pattern: 'logs-*' });
    await h.ok('REGISTER_GROUP', { group: 's', topic: 'solo' });
    // Topic changes the groups service does not hear of: it is closed.
    await h.groups.close();
    await h.broker.createTopic('default', 'logs-b', { partitions: 2 });
    await h.broker.deleteTopic({ topic: 'solo' });
    await h.restart();
    const p = await h.json('GROUP_STATUS', { group: 'p' });
    assert.deepEqual([p.topic_name, p.partition_count], ['logs-*', 3]);
    assert.deepEqual(await h.ok('LIST_GROUPS'), { count: '1', groups: 'p' });
    const stored = await h.broker.groups.load(cursusGroupScope, 'p');
    assert.deepEqual((stored?.state as { expansion: unknown }).expansion, [{ topic: 'logs-a', partitions: 1 }, { topic: 'logs-b', partitions: 2 }], 'the new expansion was stored');
    assert.equal(await h.broker.groups.load(cursusGroupScope, 's'), null, 'the dropped registration was removed');
  });

  it('an unreadable registration is left alone and logged, not loaded', async (t) => {
    const h = await groupsHarness(t, { durable: true, topics: { t: 1 } });
    await h.broker.groups.save(cursusGroupScope, 'future', { version: 2, selector: { kind: 'regex', pattern: '.*' } });
    const warned: string[] = [];
    const logger = { ...silentLogger, warn: (msg: string) => void warned.push(msg), child: () => logger };
    const groups = new CursusGroups({ broker: h.broker, logger, clock: h.clock, scheduler: h.scheduler });
    await groups.start();
    t.after(() => groups.close());
    assert.equal(groups.get('future'), undefined);
    assert.deepEqual(warned, ['ignoring an unreadable cursus group registration']);
    assert.notEqual(await h.broker.groups.load(cursusGroupScope, 'future'), null, 'a later version may read it');
  });
});
