// Group changes in the log, written by the core for every protocol (src/core/groups/events.ts):
// a Kafka group (client-side engine, through the Kafka handlers) and an Iggy group (server-side
// engine, through an Iggy listener) each log their creation, members joining and leaving, their
// generations, offsets deleted and their deletion, once each; member churn at most one info line
// per kind and second (the rest at debug).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../../src/base/clock.js';
import { createLogger } from '../../../src/base/logger.js';
import { AppendWaiters } from '../../../src/core/append-waiters.js';
import { Broker } from '../../../src/core/broker.js';
import { QueueGroups } from '../../../src/core/groups/queue.js';
import { ManualScheduler } from '../../../src/core/scheduler.js';
import { CommandCode, ConsumerKind } from '../../../src/protocols/iggy/codec/index.js';
import { deleteGroupsHandler } from '../../../src/protocols/kafka/handlers/delete-groups.js';
import { leaveGroupHandler } from '../../../src/protocols/kafka/handlers/leave-group.js';
import { offsetCommitHandler } from '../../../src/protocols/kafka/handlers/offset-commit.js';
import { eventually, sendRequest, sid, startIggy } from '../../protocols/iggy/harness.js';
import { formGroup, groupsHarness } from '../../protocols/kafka/handlers/groups-harness.js';
import { tempDir, testScryptCost } from '../helpers.js';

type Line = Record<string, unknown> & { level: string; msg: string };

/** A debug-level logger collecting its lines, and the group lines among them as [level, msg, fields...]. */
function collector() {
  const lines: Line[] = [];
  const logger = createLogger('debug', (line) => void lines.push(JSON.parse(line) as Line));
  const groupLines = (...keys: string[]) => lines.filter((l) => /consumer group/.test(l.msg)).map((l) => [l.level, l.msg, ...keys.map((k) => l[k])]);
  return { lines, logger, groupLines };
}

describe('group changes in the log', () => {
  it('a Kafka group: created, joined, generations, left, offsets and group deleted', async (t) => {
    const { logger, groupLines } = collector();
    const h = await groupsHarness(t, { topics: { orders: 1 }, brokerLogger: logger });
    const { generationId, memberIds } = await formGroup(h, 'billing', 1);
    const member = memberIds[0]!;
    assert.deepEqual(groupLines('protocol', 'group', 'member', 'peer', 'generation', 'members'), [
      ['info', 'consumer group member joined', 'kafka', 'billing', member, '/127.0.0.1', undefined, undefined],
      ['info', 'created consumer group', 'kafka', 'billing', undefined, undefined, undefined, undefined],
      ['info', 'consumer group rebalanced', 'kafka', 'billing', undefined, undefined, generationId, 1],
    ]);

    h.clock.advance(1_000);
    const commit = await h.call(offsetCommitHandler, 5, { groupId: 'billing', generationIdOrMemberEpoch: generationId, memberId: member, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 4, committedMetadata: null }] }] });
    assert.equal(commit.topics[0]!.partitions[0]!.errorCode, 0);
    await h.call(leaveGroupHandler, 0, { groupId: 'billing', memberId: member });
    assert.equal((await h.call(deleteGroupsHandler, 2, { groupsNames: ['billing'] })).results[0]!.errorCode, 0);
    assert.deepEqual(groupLines('protocol', 'group', 'member', 'reason', 'generation', 'members', 'offsets').slice(3), [
      ['info', 'consumer group member left', 'kafka', 'billing', member, 'left', undefined, undefined, undefined],
      ['info', 'consumer group rebalanced', 'kafka', 'billing', undefined, undefined, generationId + 1, 0, undefined],
      ['info', 'deleted consumer group', 'kafka', 'billing', undefined, undefined, undefined, undefined, undefined],
      ['info', 'deleted consumer group offsets', 'kafka', 'billing', undefined, undefined, undefined, undefined, 1],
    ]);
  });

  it('member churn writes one info line per kind and second; the others go to debug', async (t) => {
    const { logger, groupLines } = collector();
    const h = await groupsHarness(t, { topics: { orders: 1 }, brokerLogger: logger });
    await formGroup(h, 'fleet', 3);
    const joined = groupLines('member').filter(([, msg]) => msg === 'consumer group member joined');
    assert.deepEqual(joined.map(([level]) => level), ['info', 'debug', 'debug']);
    assert.equal(new Set(joined.map(([, , m]) => m)).size, 3, 'each member named once');
  });

  it('an Iggy group: created, joined, generations, left and disconnected, deleted', async (t) => {
    const { logger, groupLines } = collector();
    const clock = new ManualClock(1_700_000_000_000);
    const h = await startIggy(t, { clock, scheduler: new ManualScheduler(clock), broker: { logger } });
    const a = await h.root();
    const b = await h.root();
    const ref = { streamId: sid('default'), topicId: sid('g') };
    const group = { ...ref, groupId: sid('workers') };
    await a.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 2, name: 'g', options: [] });
    await a.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('g'), ['x', 'y'], { kind: 'partitionId', partitionId: 0 }));
    await a.ok(CommandCode.createConsumerGroup, { ...ref, name: 'workers' });
    await a.ok(CommandCode.joinConsumerGroup, group);
    clock.advance(1_000);
    await b.ok(CommandCode.joinConsumerGroup, group);
    clock.advance(1_000);
    await a.ok(CommandCode.storeConsumerOffset, { consumer: { kind: ConsumerKind.consumerGroup, id: sid('workers') }, ...ref, partitionId: 0, offset: 0n, ack: 1 });
    await a.ok(CommandCode.leaveConsumerGroup, group);
    clock.advance(1_000);
    b.destroy();
    await eventually(() => groupLines().length >= 8, 'the disconnected member left');
    clock.advance(1_000);
    await a.ok(CommandCode.deleteConsumerGroup, group);
    assert.deepEqual(groupLines('protocol', 'group', 'stream', 'topic', 'reason', 'generation', 'members'), [
      ['info', 'created consumer group', 'iggy', 'workers', 'default', 'g', undefined, undefined, undefined],
      ['info', 'consumer group member joined', 'iggy', 'workers', 'default', 'g', undefined, undefined, undefined],
      ['info', 'consumer group rebalanced', 'iggy', 'workers', 'default', 'g', undefined, 1, 1],
      ['info', 'consumer group member joined', 'iggy', 'workers', 'default', 'g', undefined, undefined, undefined],
      ['info', 'consumer group rebalanced', 'iggy', 'workers', 'default', 'g', undefined, 2, 2],
      ['info', 'consumer group member left', 'iggy', 'workers', 'default', 'g', 'left', undefined, undefined],
      ['info', 'consumer group rebalanced', 'iggy', 'workers', 'default', 'g', undefined, 3, 1],
      ['info', 'consumer group member left', 'iggy', 'workers', 'default', 'g', 'disconnected', undefined, undefined],
      // The core's offsets store logs them as the Iggy front-end reads its offset keys.
      ['info', 'deleted consumer group offsets', 'iggy', 'workers', 'default', 'g', undefined, undefined, undefined],
      ['info', 'deleted consumer group', 'iggy', 'workers', 'default', 'g', undefined, undefined, undefined],
    ]);
  });

  it('a queue group (Felix): members joining, leaving and expiring, and the group deleted', async (t) => {
    const { logger, groupLines } = collector();
    const clock = new ManualClock(1_000_000);
    const scheduler = new ManualScheduler(clock);
    const broker = await Broker.open({ dataDir: tempDir(t), memory: true, clock, scheduler, logger, rootUser: { username: 'root', password: 'pw' }, maintenanceIntervalMs: 0, scryptCost: testScryptCost });
    const waiters = new AppendWaiters();
    const queue = new QueueGroups({ broker, scope: 'felix', clock, scheduler, waiters });
    t.after(async () => {
      queue.close();
      waiters.close();
      await broker.close();
    });
    // A second apart each, so that no member line is held back by the one-per-second limit.
    assert.equal(await queue.join('jobs', 'm1', 10_000), 'none');
    clock.advance(1_000);
    assert.equal(await queue.join('jobs', 'm2', 60_000), 'none');
    assert.equal(await queue.join('jobs', 'm1', 10_000), 'none', 'a rejoin is only a refresh');
    clock.advance(1_000);
    assert.equal(await queue.leave('jobs', 'm2'), 'none');
    scheduler.advance(20_000);
    await eventually(() => groupLines().length >= 4, 'the expired member left');
    assert.equal(await queue.deleteGroup('jobs'), 'none');
    assert.deepEqual(groupLines('protocol', 'group', 'member', 'reason'), [
      ['info', 'consumer group member joined', 'felix', 'jobs', 'm1', undefined],
      ['info', 'consumer group member joined', 'felix', 'jobs', 'm2', undefined],
      ['info', 'consumer group member left', 'felix', 'jobs', 'm2', 'left'],
      ['info', 'consumer group member left', 'felix', 'jobs', 'm1', 'session expired'],
      ['info', 'deleted consumer group', 'felix', 'jobs', undefined, undefined],
    ]);
  });
});
