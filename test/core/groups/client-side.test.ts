// The client-side model of the core group engine, through its own (neutral) answers. Kafka's
// classic protocol over it is covered by test/protocols/kafka/coordinator.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../../src/base/clock.js';
import { ClientSideGroups } from '../../../src/core/groups/client-side.js';
import type { JoinGroupRequest } from '../../../src/core/groups/client-side-types.js';
import type { JoinGroupResult } from '../../../src/core/groups/client-side-group.js';
import { ManualScheduler } from '../../../src/core/scheduler.js';

const sessionTimeoutMs = 10_000;
const rebalanceTimeoutMs = 20_000;
const initialRebalanceDelayMs = 100;

function setup() {
  const clock = new ManualClock(0);
  const scheduler = new ManualScheduler(clock);
  let seq = 0;
  const engine = new ClientSideGroups({ clock, scheduler, config: { initialRebalanceDelayMs, sessionTimeoutMsMin: 1_000 }, newMemberId: (prefix) => `${prefix}-${++seq}` });
  engine.restore([]);
  return { clock, scheduler, engine };
}

type Harness = ReturnType<typeof setup>;

function request(over: Partial<JoinGroupRequest> = {}): JoinGroupRequest {
  return {
    groupId: 'g',
    memberId: '',
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: Buffer.from('m') }],
    sessionTimeoutMs,
    rebalanceTimeoutMs,
    requireMemberId: false,
    clientId: 'c',
    clientHost: '/127.0.0.1',
    ...over,
  };
}

/** Joins members without ids, waits for the join phase, syncs the leader: a Stable group. */
async function stable(h: Harness, clients: string[]): Promise<JoinGroupResult[]> {
  const joins = clients.map((clientId) => h.engine.joinGroup(request({ clientId })));
  h.scheduler.advance(initialRebalanceDelayMs * (clients.length + 1));
  const joined = await Promise.all(joins);
  const leader = joined.find((j) => j.leaderId === j.memberId)!;
  const syncs = joined.map((j) =>
    h.engine.syncGroup({ groupId: 'g', generationId: j.generationId, memberId: j.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: j === leader ? joined.map((x) => ({ memberId: x.memberId, assignment: Buffer.from(x.memberId) })) : [] }),
  );
  for (const s of await Promise.all(syncs)) assert.equal(s.error, 'none');
  return joined;
}

function heartbeat(h: Harness, memberId: string, generationId: number) {
  return h.engine.heartbeat({ groupId: 'g', memberId, generationId, groupInstanceId: null });
}

describe('ClientSideGroups', () => {
  it('bumps the generation when a member joins and when one leaves', async () => {
    const h = setup();
    const [a] = await stable(h, ['a']);
    assert.equal(a!.generationId, 1);
    const b = h.engine.joinGroup(request({ clientId: 'b' }));
    assert.equal(heartbeat(h, a!.memberId, 1), 'rebalance_in_progress');
    const a2 = h.engine.joinGroup(request({ memberId: a!.memberId }));
    const [ja, jb] = await Promise.all([a2, b]);
    assert.equal(ja.generationId, 2);
    assert.equal(jb.generationId, 2);
    assert.equal(ja.leaderId, a!.memberId);
    assert.deepEqual(ja.members.map((m) => m.memberId), [a!.memberId, jb.memberId], 'the leader gets the member list');
    assert.deepEqual(jb.members, []);

    assert.equal(h.engine.leaveGroup('g', [{ memberId: jb.memberId, groupInstanceId: null }]).members[0]!.error, 'none');
    assert.equal(h.engine.describeGroup('g').groupState, 'PreparingRebalance');
    const again = await h.engine.joinGroup(request({ memberId: a!.memberId }));
    assert.equal(again.generationId, 3);
  });

  it('removes a member that misses its session timeout, and a rebalance follows', async () => {
    const h = setup();
    const [a, b] = await stable(h, ['a', 'b']);
    h.scheduler.advance(sessionTimeoutMs - 1);
    assert.equal(heartbeat(h, a!.memberId, 1), 'none');
    h.scheduler.advance(1);
    const described = h.engine.describeGroup('g');
    assert.deepEqual(described.members.map((m) => m.memberId), [a!.memberId], 'b expired');
    assert.equal(described.groupState, 'PreparingRebalance', 'a rebalance follows');
    assert.equal(heartbeat(h, a!.memberId, 1), 'rebalance_in_progress');
    assert.equal(heartbeat(h, b!.memberId, 1), 'unknown_member');
    const rejoined = await h.engine.joinGroup(request({ memberId: a!.memberId }));
    assert.equal(rejoined.generationId, 2);
    assert.deepEqual(rejoined.members.map((m) => m.memberId), [a!.memberId]);
  });

  it('refuses a stale generation in heartbeats, syncs and offset commits (fencing)', async () => {
    const h = setup();
    const [a] = await stable(h, ['a']);
    assert.equal(heartbeat(h, a!.memberId, 0), 'stale_generation');
    const sync = await h.engine.syncGroup({ groupId: 'g', generationId: 7, memberId: a!.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
    assert.equal(sync.error, 'stale_generation');
    assert.equal(h.engine.validateOffsetCommit('g', 0, a!.memberId, null), 'stale_generation');
    assert.equal(h.engine.validateOffsetCommit('g', 1, a!.memberId, null), 'none');
    assert.equal(h.engine.validateOffsetCommit('g', 1, 'ghost', null), 'unknown_member');
  });

  it('hands out a member id first when asked to, and fences a replaced static member', async () => {
    const h = setup();
    const first = await h.engine.joinGroup(request({ requireMemberId: true }));
    assert.equal(first.error, 'member_id_required');
    assert.notEqual(first.memberId, '');
    const joining = h.engine.joinGroup(request({ memberId: first.memberId, requireMemberId: true }));
    h.scheduler.advance(initialRebalanceDelayMs);
    assert.equal((await joining).error, 'none');

    const s = setup();
    const old = s.engine.joinGroup(request({ groupInstanceId: 'i' }));
    s.scheduler.advance(initialRebalanceDelayMs);
    const oldId = (await old).memberId;
    const synced = await s.engine.syncGroup({ groupId: 'g', generationId: 1, memberId: oldId, groupInstanceId: 'i', protocolType: null, protocolName: null, assignments: [] });
    assert.equal(synced.error, 'none');
    const replaced = await s.engine.joinGroup(request({ groupInstanceId: 'i' }));
    assert.equal(replaced.error, 'none');
    assert.notEqual(replaced.memberId, oldId);
    assert.equal(s.engine.heartbeat({ groupId: 'g', memberId: oldId, generationId: replaced.generationId, groupInstanceId: 'i' }), 'fenced_instance');
  });

  it('answers with closed once stopped', async () => {
    const h = setup();
    const pending = h.engine.joinGroup(request());
    h.engine.close();
    assert.equal((await pending).error, 'closed');
    assert.equal((await h.engine.joinGroup(request())).error, 'unavailable');
  });
});
