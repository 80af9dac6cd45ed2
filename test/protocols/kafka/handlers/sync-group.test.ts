import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { joinGroupHandler } from '../../../../src/protocols/kafka/handlers/join-group.js';
import { syncGroupHandler } from '../../../../src/protocols/kafka/handlers/sync-group.js';
import { formGroup, groupsHarness, peek, rebalanceTimeoutMs, sessionTimeoutMs, settle, subscription } from './groups-harness.js';

describe('SyncGroup handler', () => {
  it('followers wait for the leader and then get their own assignment', async (t) => {
    const h = await groupsHarness(t);
    const joins = [0, 1].map(() =>
      h.call(joinGroupHandler, 5, { groupId: 'g', sessionTimeoutMs, rebalanceTimeoutMs, memberId: '', groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscription }] }),
    );
    // v5: both first get MEMBER_ID_REQUIRED, then rejoin with their ids.
    const ids = (await Promise.all(joins)).map((j) => j.memberId);
    const rejoins = ids.map((memberId) =>
      h.call(joinGroupHandler, 5, { groupId: 'g', sessionTimeoutMs, rebalanceTimeoutMs, memberId, protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscription }] }),
    );
    const joined = await settle(h, Promise.all(rejoins));
    const leader = joined[0]!.leader;
    const follower = ids.find((id) => id !== leader)!;
    const generationId = joined[0]!.generationId;

    const followerSync = h.call(syncGroupHandler, 3, { groupId: 'g', generationId, memberId: follower, assignments: [] });
    assert.equal(await peek(followerSync), 'pending');
    const leaderSync = await h.call(syncGroupHandler, 3, {
      groupId: 'g',
      generationId,
      memberId: leader,
      assignments: [
        { memberId: leader, assignment: Buffer.from('for-leader') },
        { memberId: follower, assignment: Buffer.from('for-follower') },
      ],
    });
    assert.equal(leaderSync.errorCode, ErrorCode.NONE);
    assert.equal(leaderSync.assignment.toString(), 'for-leader');
    const res = await followerSync;
    assert.equal(res.errorCode, ErrorCode.NONE);
    assert.equal(res.assignment.toString(), 'for-follower');
  });

  it('v5 requires the protocol type and name (INCONSISTENT_GROUP_PROTOCOL when null) and answers them', async (t) => {
    const h = await groupsHarness(t);
    const group = await formGroup(h, 'g', 1);
    const memberId = group.memberIds[0]!;
    const base = { groupId: 'g', generationId: group.generationId, memberId, assignments: [] };
    const missing = await h.call(syncGroupHandler, 5, { ...base, protocolType: 'consumer', protocolName: null });
    assert.equal(missing.errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    const wrong = await h.call(syncGroupHandler, 5, { ...base, protocolType: 'consumer', protocolName: 'roundrobin' });
    assert.equal(wrong.errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    const ok = await h.call(syncGroupHandler, 5, { ...base, protocolType: 'consumer', protocolName: 'range' });
    assert.deepEqual([ok.errorCode, ok.protocolType, ok.protocolName, ok.assignment.toString()], [0, 'consumer', 'range', 'assignment-0']);
    // Before v5 the fields do not exist and are not checked.
    const v4 = await h.call(syncGroupHandler, 4, base);
    assert.equal(v4.errorCode, ErrorCode.NONE);
  });

  it('checks the generation and the member', async (t) => {
    const h = await groupsHarness(t);
    const group = await formGroup(h, 'g', 1);
    const memberId = group.memberIds[0]!;
    const stale = await h.call(syncGroupHandler, 1, { groupId: 'g', generationId: group.generationId + 1, memberId, assignments: [] });
    assert.equal(stale.errorCode, ErrorCode.ILLEGAL_GENERATION);
    const stranger = await h.call(syncGroupHandler, 0, { groupId: 'g', generationId: group.generationId, memberId: 'nobody', assignments: [] });
    assert.equal(stranger.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
    const unknownGroup = await h.call(syncGroupHandler, 0, { groupId: 'other', generationId: 1, memberId, assignments: [] });
    assert.equal(unknownGroup.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  });

  it('v3+ checks the static instance id (FENCED_INSTANCE_ID for a stale member id)', async (t) => {
    const h = await groupsHarness(t);
    const pending = h.call(joinGroupHandler, 5, { groupId: 'g', sessionTimeoutMs, rebalanceTimeoutMs, memberId: '', groupInstanceId: 'i-1', protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscription }] });
    const joined = await settle(h, pending);
    const res = await h.call(syncGroupHandler, 3, { groupId: 'g', generationId: joined.generationId, memberId: 'someone-else', groupInstanceId: 'i-1', assignments: [] });
    assert.equal(res.errorCode, ErrorCode.FENCED_INSTANCE_ID);
  });
});
