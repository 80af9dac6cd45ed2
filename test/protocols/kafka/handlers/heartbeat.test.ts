import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { heartbeatHandler } from '../../../../src/protocols/kafka/handlers/heartbeat.js';
import { joinGroupHandler } from '../../../../src/protocols/kafka/handlers/join-group.js';
import { formGroup, groupsHarness, initialRebalanceDelayMs, rebalanceTimeoutMs, sessionTimeoutMs, subscription } from './groups-harness.js';

describe('Heartbeat handler', () => {
  it('answers NONE in a Stable group and keeps the session alive', async (t) => {
    const h = await groupsHarness(t);
    const { generationId, memberIds } = await formGroup(h, 'g', 1);
    const memberId = memberIds[0]!;
    for (let i = 0; i < 5; i++) {
      h.scheduler.advance(sessionTimeoutMs / 2);
      for (const version of [0, 4]) {
        const res = await h.call(heartbeatHandler, version, { groupId: 'g', generationId, memberId });
        assert.equal(res.errorCode, ErrorCode.NONE);
      }
    }
    assert.equal(h.frontend.groups.describeGroup('g').groupState, 'Stable');
  });

  it('a member that stops heartbeating is removed after its session timeout', async (t) => {
    const h = await groupsHarness(t);
    const { generationId, memberIds } = await formGroup(h, 'g', 1);
    h.scheduler.advance(sessionTimeoutMs + 1);
    assert.equal(h.frontend.groups.describeGroup('g').groupState, 'Empty');
    const res = await h.call(heartbeatHandler, 1, { groupId: 'g', generationId, memberId: memberIds[0]! });
    assert.equal(res.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  });

  it('tells members about a rebalance, a stale generation and unknown members', async (t) => {
    const h = await groupsHarness(t);
    const { generationId, memberIds } = await formGroup(h, 'g', 1);
    const memberId = memberIds[0]!;
    assert.equal((await h.call(heartbeatHandler, 2, { groupId: 'g', generationId: generationId - 1, memberId })).errorCode, ErrorCode.ILLEGAL_GENERATION);
    assert.equal((await h.call(heartbeatHandler, 2, { groupId: 'g', generationId, memberId: 'ghost' })).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
    assert.equal((await h.call(heartbeatHandler, 2, { groupId: 'nope', generationId, memberId })).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
    assert.equal((await h.call(heartbeatHandler, 2, { groupId: '', generationId, memberId })).errorCode, ErrorCode.INVALID_GROUP_ID);
    // A newcomer starts a rebalance.
    void h.call(joinGroupHandler, 3, { groupId: 'g', sessionTimeoutMs, rebalanceTimeoutMs, memberId: '', protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscription }] });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal((await h.call(heartbeatHandler, 3, { groupId: 'g', generationId, memberId })).errorCode, ErrorCode.REBALANCE_IN_PROGRESS);
  });

  it('v3+ fences a static member whose instance id now belongs to another member id', async (t) => {
    const h = await groupsHarness(t);
    const join = (memberId: string) =>
      h.call(joinGroupHandler, 5, { groupId: 'g', sessionTimeoutMs, rebalanceTimeoutMs, memberId, groupInstanceId: 'i-1', protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscription }] });
    const first = join('');
    h.scheduler.advance(initialRebalanceDelayMs);
    const joined = await first;
    const res = await h.call(heartbeatHandler, 3, { groupId: 'g', generationId: joined.generationId, memberId: 'stale-id', groupInstanceId: 'i-1' });
    assert.equal(res.errorCode, ErrorCode.FENCED_INSTANCE_ID);
  });
});
