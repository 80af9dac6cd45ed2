import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { authorizedOperationsOmitted, describeGroupsHandler, groupAuthorizedOperations } from '../../../../src/protocols/kafka/handlers/describe-groups.js';
import { joinGroupHandler } from '../../../../src/protocols/kafka/handlers/join-group.js';
import { offsetCommitHandler } from '../../../../src/protocols/kafka/handlers/offset-commit.js';
import { formGroup, groupsHarness, rebalanceTimeoutMs, sessionTimeoutMs, settle, subscription } from './groups-harness.js';

describe('DescribeGroups handler', () => {
  it('an unknown group is Dead with no error (v0-5)', async (t) => {
    const h = await groupsHarness(t);
    const res = await h.call(describeGroupsHandler, 5, { groups: ['nope'], includeAuthorizedOperations: false });
    assert.deepEqual(res.groups.map((g) => [g.groupId, g.errorCode, g.groupState, g.protocolType, g.protocolData, g.members.length]), [['nope', 0, 'Dead', '', '', 0]]);
  });

  it('a Stable group shows its protocol, members, metadata and assignments', async (t) => {
    const h = await groupsHarness(t);
    const { memberIds } = await formGroup(h, 'g', 2);
    const res = await h.call(describeGroupsHandler, 0, { groups: ['g'] });
    const g = res.groups[0]!;
    assert.deepEqual([g.errorCode, g.groupState, g.protocolType, g.protocolData], [0, 'Stable', 'consumer', 'range']);
    const members = g.members.map((m) => [m.memberId, m.clientId, m.clientHost, m.memberMetadata.toString(), m.memberAssignment.toString()]).sort();
    assert.deepEqual(members, memberIds.map((id, i) => [id, 'test-client', '/127.0.0.1', 'subscription', `assignment-${i}`]).sort());
  });

  it('v4+ shows static instance ids; metadata is empty while the group rebalances', async (t) => {
    const h = await groupsHarness(t);
    const join = h.call(joinGroupHandler, 5, { groupId: 'g', sessionTimeoutMs, rebalanceTimeoutMs, memberId: '', groupInstanceId: 'i-1', protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscription }] });
    const pendingState = await h.call(describeGroupsHandler, 4, { groups: ['g'] });
    assert.equal(pendingState.groups[0]!.groupState, 'PreparingRebalance');
    assert.deepEqual(pendingState.groups[0]!.members.map((m) => [m.groupInstanceId, m.memberMetadata.length]), [['i-1', 0]]);
    await settle(h, join);
    const v3 = await h.call(describeGroupsHandler, 3, { groups: ['g'], includeAuthorizedOperations: false });
    assert.equal(v3.groups[0]!.members[0]!.groupInstanceId, null);
    assert.equal(v3.groups[0]!.groupState, 'CompletingRebalance');
  });

  it('a group known only by committed offsets is Empty', async (t) => {
    const h = await groupsHarness(t, { topics: { orders: 1 } });
    await h.call(offsetCommitHandler, 2, { groupId: 'simple', generationIdOrMemberEpoch: -1, memberId: '', topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 1, committedMetadata: null }] }] });
    const res = await h.call(describeGroupsHandler, 1, { groups: ['simple', 'unknown'] });
    assert.deepEqual(res.groups.map((g) => [g.groupId, g.groupState, g.protocolType]), [['simple', 'Empty', ''], ['unknown', 'Dead', '']]);
  });

  it('v3+ answers authorized operations only when asked', async (t) => {
    const h = await groupsHarness(t);
    await formGroup(h, 'g', 1);
    const asked = await h.call(describeGroupsHandler, 5, { groups: ['g'], includeAuthorizedOperations: true });
    assert.equal(asked.groups[0]!.authorizedOperations, groupAuthorizedOperations);
    const notAsked = await h.call(describeGroupsHandler, 5, { groups: ['g'], includeAuthorizedOperations: false });
    assert.equal(notAsked.groups[0]!.authorizedOperations, authorizedOperationsOmitted);
  });

  it('a stopped coordinator answers COORDINATOR_NOT_AVAILABLE per group', async (t) => {
    const h = await groupsHarness(t);
    h.frontend.groups.close();
    const res = await h.call(describeGroupsHandler, 2, { groups: ['a', 'b'] });
    assert.deepEqual(res.groups.map((g) => g.errorCode), [ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_NOT_AVAILABLE]);
  });
});
