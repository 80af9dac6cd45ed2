import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { joinGroupHandler } from '../../../../src/protocols/kafka/handlers/join-group.js';
import { leaveGroupHandler } from '../../../../src/protocols/kafka/handlers/leave-group.js';
import { formGroup, groupsHarness, initialRebalanceDelayMs, rebalanceTimeoutMs, sessionTimeoutMs, subscription } from './groups-harness.js';

describe('LeaveGroup handler', () => {
  it('v0-2: the single member\'s error is the top-level error', async (t) => {
    const h = await groupsHarness(t);
    const { memberIds } = await formGroup(h, 'g', 1);
    const unknown = await h.call(leaveGroupHandler, 0, { groupId: 'g', memberId: 'ghost' });
    assert.equal(unknown.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
    const unknownGroup = await h.call(leaveGroupHandler, 1, { groupId: 'other', memberId: 'ghost' });
    assert.equal(unknownGroup.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
    const ok = await h.call(leaveGroupHandler, 2, { groupId: 'g', memberId: memberIds[0]! });
    assert.equal(ok.errorCode, ErrorCode.NONE);
    assert.deepEqual(ok.members, []);
    assert.equal(h.frontend.groups.describeGroup('g').groupState, 'Empty');
  });

  it('v1: an empty group id is INVALID_GROUP_ID', async (t) => {
    const h = await groupsHarness(t);
    const res = await h.call(leaveGroupHandler, 1, { groupId: '', memberId: 'm' });
    assert.equal(res.errorCode, ErrorCode.INVALID_GROUP_ID);
  });

  it('v3+ answers each member of a batch; the top level stays NONE', async (t) => {
    const h = await groupsHarness(t);
    const { memberIds } = await formGroup(h, 'g', 2);
    for (const version of [3, 4]) {
      const res = await h.call(leaveGroupHandler, version, {
        groupId: 'g',
        members: [
          { memberId: memberIds[version - 3]!, groupInstanceId: null },
          { memberId: 'ghost', groupInstanceId: null },
        ],
      });
      assert.equal(res.errorCode, ErrorCode.NONE);
      assert.deepEqual(res.members.map((m) => [m.memberId, m.groupInstanceId, m.errorCode]), [
        [memberIds[version - 3], null, ErrorCode.NONE],
        ['ghost', null, ErrorCode.UNKNOWN_MEMBER_ID],
      ]);
    }
    // Both members gone: a rebalance was prepared and completes with nobody left.
    h.scheduler.advance(rebalanceTimeoutMs);
    assert.equal(h.frontend.groups.describeGroup('g').groupState, 'Empty');
  });

  it('v3+ removes a static member by its instance id alone', async (t) => {
    const h = await groupsHarness(t);
    const pending = h.call(joinGroupHandler, 5, { groupId: 'g', sessionTimeoutMs, rebalanceTimeoutMs, memberId: '', groupInstanceId: 'i-1', protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscription }] });
    h.scheduler.advance(initialRebalanceDelayMs);
    assert.equal((await pending).errorCode, ErrorCode.NONE);
    const res = await h.call(leaveGroupHandler, 3, { groupId: 'g', members: [{ memberId: '', groupInstanceId: 'i-1' }] });
    assert.deepEqual(res.members.map((m) => [m.memberId, m.groupInstanceId, m.errorCode]), [['', 'i-1', ErrorCode.NONE]]);
    assert.equal(h.frontend.groups.describeGroup('g').members.length, 0);
  });
});
