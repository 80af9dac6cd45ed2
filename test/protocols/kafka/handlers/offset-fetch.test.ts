import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QuartetError } from '../../../../src/base/errors.js';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { offsetCommitHandler } from '../../../../src/protocols/kafka/handlers/offset-commit.js';
import { offsetFetchHandler } from '../../../../src/protocols/kafka/handlers/offset-fetch.js';
import { groupsHarness, type GroupsHarness } from './groups-harness.js';

async function commit(h: GroupsHarness, groupId: string, topic: string, entries: [number, number, string?][]): Promise<void> {
  const res = await h.call(offsetCommitHandler, 7, {
    groupId,
    generationIdOrMemberEpoch: -1,
    memberId: '',
    topics: [{ name: topic, partitions: entries.map(([partitionIndex, committedOffset, metadata]) => ({ partitionIndex, committedOffset, committedLeaderEpoch: 2, committedMetadata: metadata ?? null })) }],
  });
  for (const t of res.topics) for (const p of t.partitions) assert.equal(p.errorCode, 0);
}

type Row = [string, number, number, string | null, number];
function rows(topics: { name: string; partitions: { partitionIndex: number; committedOffset: number; metadata: string | null; errorCode: number }[] }[]): Row[] {
  return topics.flatMap((t) => t.partitions.map((p): Row => [t.name, p.partitionIndex, p.committedOffset, p.metadata, p.errorCode]));
}

describe('OffsetFetch handler', () => {
  it('no committed offset, unknown group or unknown topic: offset -1, metadata "" and NONE', async (t) => {
    const h = await groupsHarness(t, { topics: { orders: 2 } });
    await commit(h, 'g', 'orders', [[0, 10, 'meta']]);
    for (const version of [0, 1, 3, 6, 7]) {
      const res = await h.call(offsetFetchHandler, version, { groupId: 'g', topics: [{ name: 'orders', partitionIndexes: [0, 1] }, { name: 'nope', partitionIndexes: [0] }] });
      assert.deepEqual(rows(res.topics), [
        ['orders', 0, 10, 'meta', 0],
        ['orders', 1, -1, '', 0],
        ['nope', 0, -1, '', 0],
      ], `v${version}`);
      assert.equal(res.errorCode, 0);
    }
    const unknownGroup = await h.call(offsetFetchHandler, 1, { groupId: 'other', topics: [{ name: 'orders', partitionIndexes: [0] }] });
    assert.deepEqual(rows(unknownGroup.topics), [['orders', 0, -1, '', 0]]);
  });

  it('v5+ returns the committed leader epoch; v4 has none', async (t) => {
    const h = await groupsHarness(t, { topics: { orders: 1 } });
    await commit(h, 'g', 'orders', [[0, 10]]);
    const v5 = await h.call(offsetFetchHandler, 5, { groupId: 'g', topics: [{ name: 'orders', partitionIndexes: [0] }] });
    assert.equal(v5.topics[0]!.partitions[0]!.committedLeaderEpoch, 2);
    const v4 = await h.call(offsetFetchHandler, 4, { groupId: 'g', topics: [{ name: 'orders', partitionIndexes: [0] }] });
    assert.equal(v4.topics[0]!.partitions[0]!.committedLeaderEpoch, -1);
  });

  it('v2+ null topics: every committed offset of the group, of topics that still exist', async (t) => {
    const h = await groupsHarness(t, { topics: { orders: 3, audit: 1, doomed: 1 } });
    await commit(h, 'g', 'orders', [[2, 20], [0, 5]]);
    await commit(h, 'g', 'audit', [[0, 1]]);
    await commit(h, 'g', 'doomed', [[0, 1]]);
    await h.broker.deleteTopic({ namespace: 'default', topic: 'doomed' });
    const res = await h.call(offsetFetchHandler, 2, { groupId: 'g', topics: null });
    assert.deepEqual(rows(res.topics).sort(), [
      ['audit', 0, 1, '', 0],
      ['orders', 0, 5, '', 0],
      ['orders', 2, 20, '', 0],
    ]);
    const empty = await h.call(offsetFetchHandler, 6, { groupId: 'nobody', topics: null });
    assert.deepEqual(empty.topics, []);
  });

  it('v7 require_stable answers normally while no transaction holds offsets', async (t) => {
    const h = await groupsHarness(t, { topics: { orders: 1 } });
    await commit(h, 'g', 'orders', [[0, 3]]);
    const res = await h.call(offsetFetchHandler, 7, { groupId: 'g', topics: [{ name: 'orders', partitionIndexes: [0] }], requireStable: true });
    assert.equal(res.errorCode, 0);
    assert.deepEqual(rows(res.topics), [['orders', 0, 3, '', 0]]);
  });

  it('v8 batches groups, each with its own topics (or null for all)', async (t) => {
    const h = await groupsHarness(t, { topics: { orders: 2 } });
    await commit(h, 'a', 'orders', [[0, 1]]);
    await commit(h, 'b', 'orders', [[1, 2]]);
    const res = await h.call(offsetFetchHandler, 8, {
      groups: [
        { groupId: 'a', topics: [{ name: 'orders', partitionIndexes: [0, 1] }] },
        { groupId: 'b', topics: null },
        { groupId: 'c', topics: null },
      ],
      requireStable: false,
    });
    assert.deepEqual(res.groups.map((g) => [g.groupId, g.errorCode, rows(g.topics)]), [
      ['a', 0, [['orders', 0, 1, '', 0], ['orders', 1, -1, '', 0]]],
      ['b', 0, [['orders', 1, 2, '', 0]]],
      ['c', 0, []],
    ]);
  });

  it('a storage failure is per partition in v0-1, top-level in v2-7 and per group in v8', async (t) => {
    const h = await groupsHarness(t, { topics: { orders: 1 } });
    h.broker.offsets.fetchGroup = () => Promise.reject(new QuartetError('storage_error', 'disk gone'));
    const v1 = await h.call(offsetFetchHandler, 1, { groupId: 'g', topics: [{ name: 'orders', partitionIndexes: [0] }] });
    assert.deepEqual(rows(v1.topics), [['orders', 0, -1, '', ErrorCode.COORDINATOR_NOT_AVAILABLE]]);
    const v3 = await h.call(offsetFetchHandler, 3, { groupId: 'g', topics: [{ name: 'orders', partitionIndexes: [0] }] });
    assert.equal(v3.errorCode, ErrorCode.COORDINATOR_NOT_AVAILABLE);
    assert.deepEqual(v3.topics, []);
    const v8 = await h.call(offsetFetchHandler, 8, { groups: [{ groupId: 'g', topics: null }] });
    assert.deepEqual(v8.groups.map((g) => [g.groupId, g.errorCode]), [['g', ErrorCode.COORDINATOR_NOT_AVAILABLE]]);
  });
});
