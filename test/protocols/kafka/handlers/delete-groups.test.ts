import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { deleteGroupsHandler } from '../../../../src/protocols/kafka/handlers/delete-groups.js';
import { leaveGroupHandler } from '../../../../src/protocols/kafka/handlers/leave-group.js';
import { kafkaOffsetScope, offsetCommitHandler } from '../../../../src/protocols/kafka/handlers/offset-commit.js';
import { formGroup, groupsHarness, type GroupsHarness } from './groups-harness.js';

async function commit(h: GroupsHarness, groupId: string, generationIdOrMemberEpoch = -1, memberId = ''): Promise<void> {
  const res = await h.call(offsetCommitHandler, 5, { groupId, generationIdOrMemberEpoch, memberId, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 8, committedMetadata: null }] }] });
  assert.equal(res.topics[0]!.partitions[0]!.errorCode, 0);
}

describe('DeleteGroups handler', () => {
  it('deletes an Empty group and its committed offsets; a second delete finds nothing', async (t) => {
    const h = await groupsHarness(t, { topics: { orders: 1 } });
    const { generationId, memberIds } = await formGroup(h, 'g', 1);
    await commit(h, 'g', generationId, memberIds[0]!);
    await h.call(leaveGroupHandler, 0, { groupId: 'g', memberId: memberIds[0]! });
    for (const version of [0, 2]) {
      const res = await h.call(deleteGroupsHandler, version, { groupsNames: ['g'] });
      assert.deepEqual(res.results.map((r) => [r.groupId, r.errorCode]), [['g', version === 0 ? ErrorCode.NONE : ErrorCode.GROUP_ID_NOT_FOUND]]);
    }
    assert.deepEqual(await h.broker.offsets.fetchGroup(kafkaOffsetScope, 'g'), []);
    assert.equal(h.frontend.groups.describeGroup('g').groupState, 'Dead');
  });

  it('refuses a group with members (NON_EMPTY_GROUP) and keeps its offsets', async (t) => {
    const h = await groupsHarness(t, { topics: { orders: 1 } });
    const { generationId, memberIds } = await formGroup(h, 'busy', 1);
    await commit(h, 'busy', generationId, memberIds[0]!);
    const res = await h.call(deleteGroupsHandler, 1, { groupsNames: ['busy', 'ghost'] });
    assert.deepEqual(res.results.map((r) => [r.groupId, r.errorCode]), [['busy', ErrorCode.NON_EMPTY_GROUP], ['ghost', ErrorCode.GROUP_ID_NOT_FOUND]]);
    assert.equal((await h.broker.offsets.fetchGroup(kafkaOffsetScope, 'busy')).length, 1);
  });

  it('a group known only by committed offsets is deleted with NONE', async (t) => {
    const h = await groupsHarness(t, { topics: { orders: 1 } });
    await commit(h, 'simple');
    const res = await h.call(deleteGroupsHandler, 2, { groupsNames: ['simple'] });
    assert.deepEqual(res.results.map((r) => [r.groupId, r.errorCode]), [['simple', ErrorCode.NONE]]);
    assert.deepEqual(await h.broker.offsets.fetchGroup(kafkaOffsetScope, 'simple'), []);
  });
});
