import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { heartbeatHandler } from '../../../../src/protocols/kafka/handlers/heartbeat.js';
import { clientHostOf, joinGroupHandler } from '../../../../src/protocols/kafka/handlers/join-group.js';
import { syncGroupHandler } from '../../../../src/protocols/kafka/handlers/sync-group.js';
import { groupsHarness, initialRebalanceDelayMs, peek, rebalanceTimeoutMs, sessionTimeoutMs, subscription, type GroupsHarness } from './groups-harness.js';

const protocols = [{ name: 'range', metadata: subscription }];

function join(h: GroupsHarness, version: number, over: { memberId?: string; groupInstanceId?: string | null; sessionTimeoutMs?: number; rebalanceTimeoutMs?: number } = {}) {
  return h.call(joinGroupHandler, version, {
    groupId: 'g',
    sessionTimeoutMs: over.sessionTimeoutMs ?? sessionTimeoutMs,
    rebalanceTimeoutMs: over.rebalanceTimeoutMs ?? rebalanceTimeoutMs,
    memberId: over.memberId ?? '',
    groupInstanceId: over.groupInstanceId ?? null,
    protocolType: 'consumer',
    protocols,
  });
}

describe('JoinGroup handler', () => {
  it('v0: the first member becomes leader after the initial rebalance delay', async (t) => {
    const h = await groupsHarness(t);
    const pending = join(h, 0);
    assert.equal(await peek(pending), 'pending');
    h.scheduler.advance(initialRebalanceDelayMs);
    const res = await pending;
    assert.equal(res.errorCode, ErrorCode.NONE);
    assert.equal(res.generationId, 1);
    assert.equal(res.protocolName, 'range');
    assert.equal(res.leader, res.memberId);
    assert.match(res.memberId, /^test-client-/);
    assert.deepEqual(res.members.map((m) => [m.memberId, m.metadata.toString()]), [[res.memberId, 'subscription']]);
  });

  it('v0 has no rebalance timeout: the session timeout bounds the join phase', async (t) => {
    for (const [version, expectDoneAtSessionTimeout] of [[0, true], [1, false]] as const) {
      const h = await groupsHarness(t);
      const first = join(h, version);
      await peek(first);
      h.scheduler.advance(initialRebalanceDelayMs);
      const a = await first;
      const synced = await h.call(syncGroupHandler, 0, { groupId: 'g', generationId: a.generationId, memberId: a.memberId, assignments: [{ memberId: a.memberId, assignment: Buffer.from('x') }] });
      assert.equal(synced.errorCode, ErrorCode.NONE);
      // A second member joins; the first keeps heartbeating but never rejoins.
      const second = join(h, version, { rebalanceTimeoutMs: sessionTimeoutMs });
      assert.equal(await peek(second), 'pending');
      for (let elapsed = 0; elapsed < sessionTimeoutMs; elapsed += 2_000) {
        h.scheduler.advance(2_000);
        const hb = await h.call(heartbeatHandler, 0, { groupId: 'g', generationId: a.generationId, memberId: a.memberId });
        if (hb.errorCode === ErrorCode.UNKNOWN_MEMBER_ID) break;
        assert.equal(hb.errorCode, ErrorCode.REBALANCE_IN_PROGRESS);
      }
      h.scheduler.advance(100);
      const state = await peek(second);
      if (expectDoneAtSessionTimeout) {
        assert.notEqual(state, 'pending', 'v0: the join phase ends at the first member\'s session timeout');
        assert.equal(state !== 'pending' && state.errorCode, ErrorCode.NONE);
        assert.equal(state !== 'pending' && state.generationId, 2);
      } else {
        assert.equal(state, 'pending', `v1: the ${rebalanceTimeoutMs} ms rebalance timeout still runs`);
        h.scheduler.advance(rebalanceTimeoutMs);
        assert.equal((await second).generationId, 2);
      }
    }
  });

  it('v4+ hands a new dynamic member its id with MEMBER_ID_REQUIRED first (KIP-394)', async (t) => {
    const h = await groupsHarness(t);
    const first = await join(h, 4);
    assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
    assert.match(first.memberId, /^test-client-/);
    assert.equal(first.generationId, -1);
    const second = join(h, 4, { memberId: first.memberId });
    h.scheduler.advance(initialRebalanceDelayMs);
    const res = await second;
    assert.equal(res.errorCode, ErrorCode.NONE);
    assert.equal(res.memberId, first.memberId);
    assert.equal(res.leader, first.memberId);
  });

  it('v5+ static members join at once with their instance id in the member list', async (t) => {
    const h = await groupsHarness(t);
    const pending = join(h, 5, { groupInstanceId: 'instance-a' });
    h.scheduler.advance(initialRebalanceDelayMs);
    const res = await pending;
    assert.equal(res.errorCode, ErrorCode.NONE);
    assert.match(res.memberId, /^instance-a-/);
    assert.deepEqual(res.members.map((m) => m.groupInstanceId), ['instance-a']);
  });

  it('v7 answers the protocol type and a null protocol name on errors; v6 an empty name', async (t) => {
    const h = await groupsHarness(t);
    const v7 = await join(h, 7, { sessionTimeoutMs: 1_000 });
    assert.equal(v7.errorCode, ErrorCode.INVALID_SESSION_TIMEOUT);
    assert.equal(v7.protocolName, null);
    assert.equal(v7.protocolType, null);
    const v6 = await join(h, 6, { sessionTimeoutMs: 1_000 });
    assert.equal(v6.errorCode, ErrorCode.INVALID_SESSION_TIMEOUT);
    assert.equal(v6.protocolName, '');

    const ok = join(h, 7, { groupInstanceId: 'static' });
    h.scheduler.advance(initialRebalanceDelayMs);
    const res = await ok;
    assert.equal(res.protocolType, 'consumer');
    assert.equal(res.protocolName, 'range');
  });

  it('an empty group id is INVALID_GROUP_ID', async (t) => {
    const h = await groupsHarness(t);
    const res = await h.call(joinGroupHandler, 2, { groupId: '', sessionTimeoutMs, rebalanceTimeoutMs, memberId: '', protocolType: 'consumer', protocols });
    assert.equal(res.errorCode, ErrorCode.INVALID_GROUP_ID);
  });

  it('records the client id and the client host in Kafka\'s "/address" form', async (t) => {
    const h = await groupsHarness(t, { remote: '10.1.2.3:40000' });
    const pending = join(h, 3);
    h.scheduler.advance(initialRebalanceDelayMs);
    await pending;
    const described = h.frontend.groups.describeGroup('g');
    assert.deepEqual(described.members.map((m) => [m.clientId, m.clientHost]), [['test-client', '/10.1.2.3']]);
  });

  it('clientHostOf strips ports and brackets and unmaps IPv4-mapped addresses', () => {
    assert.equal(clientHostOf('127.0.0.1:9092'), '/127.0.0.1');
    assert.equal(clientHostOf('[::1]:9092'), '/::1');
    assert.equal(clientHostOf('[::ffff:10.0.0.7]:1234'), '/10.0.0.7');
    assert.equal(clientHostOf('fe80::1'), '/fe80::1');
    assert.equal(clientHostOf('localhost'), '/localhost');
  });
});
