// Cursus offsets at the handler level: COMMIT_OFFSET (fenced by member, generation and ownership;
// monotonic; idempotent), BATCH_COMMIT (all or nothing), FETCH_OFFSET, and the core offset store
// under them, shared with Kafka groups.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kafkaOffsetScope, offsetCommitHandler } from '../../../src/protocols/kafka/handlers/offset-commit.js';
import { offsetFetchHandler } from '../../../src/protocols/kafka/handlers/offset-fetch.js';
import { formatLine } from '../../../src/protocols/cursus/codec/lines.js';
import { cursusOffsetScope } from '../../../src/protocols/cursus/groups.js';
import { CursusFailure } from '../../../src/protocols/cursus/handler.js';
import { dataHarness } from '../kafka/handlers/data-harness.js';
import { groupsHarness, type GroupsHarness } from './groups-harness.js';

/** Group `g` on topic `t` (4 partitions): a owns 0 and 1, b owns 2 and 3, generation 2. */
async function twoMembers(h: GroupsHarness): Promise<void> {
  await h.ok('JOIN_GROUP', { topic: 't', group: 'g', member: 'a' });
  await h.ok('JOIN_GROUP', { topic: 't', group: 'g', member: 'b' });
  assert.deepEqual(await h.ok('SYNC_GROUP', { group: 'g', member: 'a-0001', generation: '2' }), { assignments: '[0,1]' });
}

async function fetched(h: GroupsHarness, partition: number, group = 'g'): Promise<string> {
  return (await h.ok('FETCH_OFFSET', { topic: 't', partition: String(partition), group })).offset!;
}

const commit = (partition: number, offset: number, member = 'a-0001', generation = '2') => ({ topic: 't', partition: String(partition), group: 'g', offset: String(offset), member, generation });

describe('Cursus offsets', () => {
  it('COMMIT_OFFSET: the owner in the current generation only; monotonic; the same offset again is a no-op', async (t) => {
    const h = await groupsHarness(t, { topics: { t: 4 } });
    await twoMembers(h);
    assert.equal(await fetched(h, 0), '0', 'nothing committed: 0');
    const { generation: _, ...noGeneration } = commit(0, 10);
    assert.equal(await h.refused('COMMIT_OFFSET', noGeneration), 'missing_generation command=COMMIT_OFFSET');
    const { member: __, ...noMember } = commit(0, 10);
    assert.equal(await h.refused('COMMIT_OFFSET', noMember), 'missing_member command=COMMIT_OFFSET');
    assert.equal(await h.refused('COMMIT_OFFSET', commit(0, -1)), 'invalid_offset command=COMMIT_OFFSET');
    assert.equal(await h.refused('COMMIT_OFFSET', commit(2, 10)), 'NOT_OWNER partition=2 member=a-0001 group=g generation=2');
    assert.equal(await h.refused('COMMIT_OFFSET', commit(0, 10, 'a-0001', '1')), 'GEN_MISMATCH current=2 requested=1 group=g member=a-0001');
    assert.equal(await h.refused('COMMIT_OFFSET', commit(0, 10, 'c-0009')), 'member_not_found member=c-0009 group=g');
    assert.equal(await h.refused('COMMIT_OFFSET', commit(7, 10)), 'PARTITION_NOT_FOUND partition=7');
    assert.equal(await h.refused('COMMIT_OFFSET', { ...commit(0, 10), group: 'other' }), 'group_not_found group=other');
    assert.equal(await fetched(h, 0), '0', 'nothing refused was committed');

    assert.deepEqual(await h.ok('COMMIT_OFFSET', commit(0, 10)), {});
    assert.equal(await fetched(h, 0), '10');
    const stored = await h.broker.offsets.fetch(cursusOffsetScope, 'g', h.broker.catalog.requireTopic({ topic: 't' }).internalId, 0);
    assert.equal(stored?.commitTime, h.clock.now());
    h.clock.advance(1_000);
    assert.deepEqual(await h.ok('COMMIT_OFFSET', commit(0, 10)), {}, 'the same offset again: OK');
    assert.equal((await h.broker.offsets.fetch(cursusOffsetScope, 'g', stored!.topicInternalId, 0))?.commitTime, stored!.commitTime, 'and nothing written');
    assert.equal(await h.refused('COMMIT_OFFSET', commit(0, 9)), 'offset_regression reason="offset 9 of partition 0 is below the committed offset 10"');
    assert.equal(await fetched(h, 0), '10', 'the offset did not go back');
    await h.ok('COMMIT_OFFSET', commit(0, 12));
    assert.equal(await fetched(h, 0), '12');
    assert.equal(await h.groups.committedOffset('g', 't', 0), 12);
    assert.equal(await h.groups.committedOffset('g', 't', 1), null, 'CONSUME tells "none" from 0');
  });

  it('COMMIT_OFFSET after a rebalance: the partition\u2019s new owner commits, its old owner is fenced', async (t) => {
    const h = await groupsHarness(t, { topics: { t: 4 } });
    await twoMembers(h);
    await h.ok('COMMIT_OFFSET', commit(2, 5, 'b-0002'));
    await h.ok('LEAVE_GROUP', { topic: 't', group: 'g', member: 'b-0002' });
    assert.equal(await h.refused('COMMIT_OFFSET', commit(2, 6, 'b-0002', '3')), 'member_not_found member=b-0002 group=g');
    assert.equal(await h.refused('COMMIT_OFFSET', commit(2, 6, 'a-0001', '2')), 'GEN_MISMATCH current=3 requested=2 group=g member=a-0001');
    await h.ok('COMMIT_OFFSET', commit(2, 6, 'a-0001', '3'));
    assert.equal(await fetched(h, 2), '6');
  });

  it('concurrent commits of one partition are applied one at a time: the lower one is a regression, never a step back', async (t) => {
    const h = await groupsHarness(t, { topics: { t: 1 } });
    await h.ok('JOIN_GROUP', { topic: 't', group: 'g', member: 'a' });
    const results = await Promise.allSettled([h.ask('COMMIT_OFFSET', commit(0, 20, 'a-0001', '1')), h.ask('COMMIT_OFFSET', commit(0, 10, 'a-0001', '1'))]);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected']);
    assert.equal(await fetched(h, 0), '20');
  });

  it('BATCH_COMMIT: all or nothing', async (t) => {
    const h = await groupsHarness(t, { topics: { t: 4 } });
    await twoMembers(h);
    const batch = (offsets: string, extra: Record<string, string> = {}) => ({ topic: 't', group: 'g', member: 'a-0001', generation: '2', offsets, ...extra });
    assert.deepEqual(await h.ok('BATCH_COMMIT', batch('P0:100,P1:200')), { batched: '2' });
    assert.deepEqual([await fetched(h, 0), await fetched(h, 1)], ['100', '200']);
    assert.equal(await h.refused('BATCH_COMMIT', batch('P0:150,P2:1')), 'NOT_OWNER partition=2 member=a-0001 group=g generation=2');
    assert.equal(await h.refused('BATCH_COMMIT', batch('P0:150,P1:199')), 'offset_regression reason="offset 199 of partition 1 is below the committed offset 200"');
    assert.equal(await h.refused('BATCH_COMMIT', batch('P0:150,P0:160')), 'duplicate_partition partition=0 group=g topic=t');
    assert.equal(await h.refused('BATCH_COMMIT', batch('P0:150,1:5')), 'invalid_batch_commit_entry reason="entry \\"1:5\\" is not P<partition>:<offset>"');
    assert.equal(await h.refused('BATCH_COMMIT', batch('')), 'no_valid_offsets');
    assert.equal(await h.refused('BATCH_COMMIT', { topic: 't', group: 'g', member: 'a-0001', generation: '2' }), 'invalid_batch_commit_entry reason="offsets is missing"');
    assert.equal(await h.refused('BATCH_COMMIT', { topic: 't', group: 'g', member: 'a-0001', offsets: 'P0:150' }), 'missing_generation command=BATCH_COMMIT');
    assert.equal(await h.refused('BATCH_COMMIT', batch('P0:150', { generation: '1' })), 'GEN_MISMATCH current=2 requested=1 group=g member=a-0001');
    assert.equal(await h.refused('BATCH_COMMIT', batch('P0:150,P9:1')), 'PARTITION_NOT_FOUND partition=9');
    assert.deepEqual([await fetched(h, 0), await fetched(h, 1)], ['100', '200'], 'no refused batch changed any offset');
    assert.deepEqual(await h.ok('BATCH_COMMIT', batch('P1:200,P0:150')), { batched: '2' }, 'an unchanged entry counts');
    assert.deepEqual([await fetched(h, 0), await fetched(h, 1)], ['150', '200']);
  });

  it('validateOwnership (SEND_OFFSETS_TO_TXN) fences as a commit does, without committing', async (t) => {
    const h = await groupsHarness(t, { topics: { t: 4, u: 1 } });
    await twoMembers(h);
    const refusal = (...args: Parameters<typeof h.groups.validateOwnership>): string => {
      try {
        h.groups.validateOwnership(...args);
        return 'owned';
      } catch (err) {
        assert.ok(err instanceof CursusFailure);
        return formatLine(err.error.code, err.error.fields);
      }
    };
    assert.equal(refusal('g', 'a-0001', 2, 't', [0, 1]), 'owned');
    assert.equal(refusal('g', 'a-0001', 2, 't', [1, 2]), 'NOT_OWNER partition=2 member=a-0001 group=g generation=2');
    assert.equal(refusal('g', 'a-0001', 1, 't', [0]), 'GEN_MISMATCH current=2 requested=1 group=g member=a-0001');
    assert.equal(refusal('g', 'x-0001', 2, 't', [0]), 'member_not_found member=x-0001 group=g');
    assert.equal(refusal('g', 'a-0001', 2, 'u', [0]), 'topic_not_assigned_to_group expected=t actual=u');
    assert.equal(refusal('nope', 'a-0001', 2, 't', [0]), 'group_not_found group=nope');
    assert.equal(refusal('g', 'a-0001', 2, 't', [4]), 'PARTITION_NOT_FOUND partition=4');
    assert.equal(await fetched(h, 0), '0');
  });

  it('FETCH_OFFSET needs a topic and partition that exist, not a registered group', async (t) => {
    const h = await groupsHarness(t, { topics: { t: 2 } });
    assert.deepEqual(await h.ok('FETCH_OFFSET', { topic: 't', partition: '1', group: 'never-joined' }), { offset: '0' });
    assert.equal(await h.refused('FETCH_OFFSET', { topic: 'nope', partition: '0', group: 'g' }), 'topic_not_found topic=nope');
    assert.equal(await h.refused('FETCH_OFFSET', { topic: 't', partition: '2', group: 'g' }), 'PARTITION_NOT_FOUND partition=2');
    assert.equal(await h.refused('FETCH_OFFSET', { topic: 't', partition: '-1', group: 'g' }), 'invalid_partition command=FETCH_OFFSET');
    assert.equal(await h.refused('FETCH_OFFSET', { topic: 't', group: 'g' }), 'missing_partition command=FETCH_OFFSET');
  });

  it('a Cursus group\u2019s committed offsets are that group\u2019s Kafka offsets, both ways', async (t) => {
    const kafka = await dataHarness(t, { topics: { t: 2 } });
    const h = await groupsHarness(t, { broker: kafka.broker });
    assert.equal(cursusOffsetScope, kafkaOffsetScope, 'one offset store key: (scope, group, topic, partition)');
    await h.ok('JOIN_GROUP', { topic: 't', group: 'shared', member: 'c' });
    await h.ok('BATCH_COMMIT', { topic: 't', group: 'shared', member: 'c-0001', generation: '1', offsets: 'P0:7,P1:3' });
    const seen = await kafka.ask(offsetFetchHandler, 8, { groups: [{ groupId: 'shared', memberId: null, memberEpoch: -1, topics: [{ name: 't', partitionIndexes: [0, 1] }] }], requireStable: false });
    assert.deepEqual(seen.groups[0]!.topics[0]!.partitions.map((p) => [p.partitionIndex, p.committedOffset, p.errorCode]), [[0, 7, 0], [1, 3, 0]]);

    // A Kafka client of the same group (committing outside group management) moves it on; Cursus sees it.
    const committed = await kafka.ask(offsetCommitHandler, 2, {
      groupId: 'kafka-side', generationIdOrMemberEpoch: -1, memberId: '', retentionTimeMs: -1,
      topics: [{ name: 't', partitions: [{ partitionIndex: 1, committedOffset: 42, committedMetadata: '' }] }],
    });
    assert.equal(committed.topics[0]!.partitions[0]!.errorCode, 0);
    assert.deepEqual(await h.ok('FETCH_OFFSET', { topic: 't', partition: '1', group: 'kafka-side' }), { offset: '42' });
    assert.equal(await h.groups.committedOffset('kafka-side', 't', 1), 42);
  });
});
