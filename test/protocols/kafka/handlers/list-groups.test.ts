import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { joinGroupHandler } from '../../../../src/protocols/kafka/handlers/join-group.js';
import { leaveGroupHandler } from '../../../../src/protocols/kafka/handlers/leave-group.js';
import { listGroupsHandler } from '../../../../src/protocols/kafka/handlers/list-groups.js';
import { offsetCommitHandler } from '../../../../src/protocols/kafka/handlers/offset-commit.js';
import { formGroup, groupsHarness, rebalanceTimeoutMs, sessionTimeoutMs, subscription } from './groups-harness.js';

describe('ListGroups handler', () => {
  it('lists nothing on a fresh broker', async (t) => {
    const h = await groupsHarness(t);
    const res = await h.call(listGroupsHandler, 0, {});
    assert.deepEqual([res.errorCode, res.groups], [0, []]);
  });

  it('lists coordinator groups and groups known only by offsets (as Empty); v4 adds the state', async (t) => {
    const h = await groupsHarness(t, { topics: { orders: 1 } });
    const stable = await formGroup(h, 'stable', 1);
    void stable;
    const left = await formGroup(h, 'left', 1);
    await h.call(leaveGroupHandler, 1, { groupId: 'left', memberId: left.memberIds[0]! });
    void h.call(joinGroupHandler, 3, { groupId: 'joining', sessionTimeoutMs, rebalanceTimeoutMs, memberId: '', protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscription }] });
    await h.call(offsetCommitHandler, 2, { groupId: 'simple', generationIdOrMemberEpoch: -1, memberId: '', topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 1, committedMetadata: null }] }] });
    // A coordinator group that also has offsets is listed once.
    await h.call(offsetCommitHandler, 2, { groupId: 'left', generationIdOrMemberEpoch: -1, memberId: '', topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 1, committedMetadata: null }] }] });

    const v4 = await h.call(listGroupsHandler, 4, { statesFilter: [] });
    assert.deepEqual(v4.groups.map((g) => [g.groupId, g.protocolType, g.groupState]).sort(), [
      ['joining', 'consumer', 'PreparingRebalance'],
      ['left', 'consumer', 'Empty'],
      ['simple', '', 'Empty'],
      ['stable', 'consumer', 'Stable'],
    ]);
    const v2 = await h.call(listGroupsHandler, 2, {});
    assert.deepEqual(v2.groups.map((g) => [g.groupId, g.groupState]).sort(), [['joining', ''], ['left', ''], ['simple', ''], ['stable', '']]);
    const empty = await h.call(listGroupsHandler, 4, { statesFilter: ['EMPTY'] });
    assert.deepEqual(empty.groups.map((g) => g.groupId).sort(), ['left', 'simple']);
    const onlyStable = await h.call(listGroupsHandler, 4, { statesFilter: ['stable', 'completingrebalance'] });
    assert.deepEqual(onlyStable.groups.map((g) => g.groupId), ['stable']);
  });

  it('a stopped coordinator answers COORDINATOR_NOT_AVAILABLE', async (t) => {
    const h = await groupsHarness(t);
    h.frontend.groups.close();
    const res = await h.call(listGroupsHandler, 3, {});
    assert.equal(res.errorCode, ErrorCode.COORDINATOR_NOT_AVAILABLE);
  });
});
