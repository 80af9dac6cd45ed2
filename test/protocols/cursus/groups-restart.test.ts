// What of Cursus groups survives a broker restart (over a data directory): registrations (selector
// and expansion, re-expanded over the topics as they are at start) and committed offsets; members
// do not (they rejoin).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { silentLogger } from '../../../src/base/logger.js';
import { cursusGroupScope, CursusGroups } from '../../../src/protocols/cursus/groups.js';
import { groupsHarness } from './groups-harness.js';

describe('Cursus groups across a restart', () => {
  it('committed offsets and the registration survive; members rejoin', async (t) => {
    const h = await groupsHarness(t, { durable: true, topics: { t: 2 } });
    await h.ok('JOIN_GROUP', { topic: 't', group: 'g', member: 'a' });
    await h.ok('BATCH_COMMIT', { topic: 't', group: 'g', member: 'a-0001', generation: '1', offsets: 'P0:11,P1:22' });
    await h.ok('REGISTER_GROUP', { group: 'idle', topics: 't' });
    await h.restart();
    assert.deepEqual(await h.ok('LIST_GROUPS'), { count: '2', groups: 'g,idle' });
    assert.deepEqual([(await h.ok('FETCH_OFFSET', { topic: 't', partition: '0', group: 'g' })).offset, (await h.ok('FETCH_OFFSET', { topic: 't', partition: '1', group: 'g' })).offset], ['11', '22']);
    assert.deepEqual(await h.ok('FETCH_OFFSET', { topic: 't', partition: '0', group: 'idle' }), { offset: '0' }, 'a registration without commits reads 0');
    const status = await h.json('GROUP_STATUS', { group: 'g' });
    assert.deepEqual([status.topic_name, status.partition_count, status.member_count, status.state], ['t', 2, 0, 'Dead']);
    assert.equal(await h.refused('HEARTBEAT', { topic: 't', group: 'g', member: 'a-0001' }), 'member_not_found member=a-0001 group=g');
    assert.deepEqual(await h.ok('JOIN_GROUP', { group: 'g', member: 'a' }), { generation: '1', member: 'a-0002', assignments: '[0,1]' }, 'the topic is not needed: the group is registered');
    assert.equal(await h.refused('COMMIT_OFFSET', { topic: 't', partition: '0', group: 'g', offset: '5', member: 'a-0002', generation: '1' }), 'offset_regression reason="offset 5 of partition 0 is below the committed offset 11"', 'monotonic across the restart');
    assert.deepEqual(await h.ok('JOIN_GROUP', { group: 'idle', member: 'b' }), { generation: '1', member: 'b-0003', topic_assignments: 't:P0,t:P1' }, 'a topics= group is still one');
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
