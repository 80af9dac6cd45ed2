import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../../../src/base/clock.js';
import {
  GroupCoordinator,
  kafkaCodeOfGroupError,
  type GroupCoordinatorConfig,
  type GroupSnapshot,
  type JoinGroupRequest,
  type JoinGroupResult,
  type SyncGroupResult,
} from '../../../../src/protocols/kafka/coordinator/group-coordinator.js';
import { KafkaError } from '../../../../src/protocols/kafka/coordinator/kafka-errors.js';
import { ManualScheduler } from '../../../../src/core/scheduler.js';
import { allGroupErrors } from '../../../../src/core/groups/model.js';

const sessionTimeoutMs = 10_000;
const rebalanceTimeoutMs = 30_000;
const initialRebalanceDelayMs = 300;

function setup(config: Partial<GroupCoordinatorConfig> = {}, snapshots: GroupSnapshot[] = []) {
  const clock = new ManualClock(1_000_000);
  const scheduler = new ManualScheduler(clock);
  const persisted = new Map<string, GroupSnapshot | null>();
  let persistCalls = 0;
  let seq = 0;
  const coordinator = new GroupCoordinator({
    clock,
    scheduler,
    config: { initialRebalanceDelayMs, ...config },
    persist: (groupId, snapshot) => {
      persistCalls++;
      persisted.set(groupId, snapshot);
    },
    newMemberId: (prefix) => `${prefix}-${++seq}`,
  });
  coordinator.restore(snapshots);
  return { clock, scheduler, coordinator, persisted, persistCalls: () => persistCalls };
}

type Harness = ReturnType<typeof setup>;

function joinRequest(over: Partial<JoinGroupRequest> = {}): JoinGroupRequest {
  return {
    groupId: 'g',
    memberId: '',
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: Buffer.from('sub') }],
    sessionTimeoutMs,
    rebalanceTimeoutMs,
    apiVersion: 5,
    clientId: 'client',
    clientHost: '/127.0.0.1',
    ...over,
  };
}

/** Resolves with the value if the promise has settled by the next macrotask, else 'pending'. */
async function peek<T>(promise: Promise<T>): Promise<T | 'pending'> {
  return Promise.race([promise, new Promise<'pending'>((resolve) => setImmediate(() => resolve('pending')))]);
}

/** JoinGroup v5 from scratch: MEMBER_ID_REQUIRED, then the real join (left pending). */
async function joinNew(h: Harness, over: Partial<JoinGroupRequest> = {}): Promise<{ memberId: string; join: Promise<JoinGroupResult> }> {
  const first = await h.coordinator.joinGroup(joinRequest(over));
  assert.equal(first.errorCode, KafkaError.MEMBER_ID_REQUIRED);
  assert.notEqual(first.memberId, '');
  return { memberId: first.memberId, join: h.coordinator.joinGroup(joinRequest({ ...over, memberId: first.memberId })) };
}

function sync(h: Harness, memberId: string, generationId: number, assignments: Record<string, string> = {}): Promise<SyncGroupResult> {
  return h.coordinator.syncGroup({
    groupId: 'g',
    generationId,
    memberId,
    groupInstanceId: null,
    protocolType: 'consumer',
    protocolName: 'range',
    assignments: Object.entries(assignments).map(([id, a]) => ({ memberId: id, assignment: Buffer.from(a) })),
  });
}

function heartbeat(h: Harness, memberId: string, generationId: number, groupInstanceId: string | null = null) {
  return h.coordinator.heartbeat({ groupId: 'g', generationId, memberId, groupInstanceId });
}

/**
 * A new group waits the initial delay, and once more because further members arrived during
 * it (InitialDelayedJoin's newMemberAdded).
 */
function settleFirstJoin(h: Harness): void {
  h.scheduler.advance(2 * initialRebalanceDelayMs);
}

/** Two dynamic members through join and sync: a Stable group at generation 1. */
async function stableGroupOfTwo(h: Harness) {
  const a = await joinNew(h, { clientId: 'a' });
  const b = await joinNew(h, { clientId: 'b' });
  settleFirstJoin(h);
  const [ja, jb] = await Promise.all([a.join, b.join]);
  const followerSync = sync(h, b.memberId, 1);
  const leaderSync = sync(h, a.memberId, 1, { [a.memberId]: 'A', [b.memberId]: 'B' });
  const [sa, sb] = await Promise.all([leaderSync, followerSync]);
  return { a: a.memberId, b: b.memberId, ja, jb, sa, sb };
}

function state(h: Harness, groupId = 'g') {
  return h.coordinator.describeGroup(groupId).groupState;
}

describe('GroupCoordinator', () => {
  it('takes a single member through join, sync and heartbeat', async () => {
    const h = setup();
    const { memberId, join } = await joinNew(h);
    assert.equal(memberId, 'client-1');
    assert.equal(state(h), 'PreparingRebalance');
    assert.equal(await peek(join), 'pending', 'a new group waits the initial rebalance delay');
    h.scheduler.advance(initialRebalanceDelayMs - 1);
    assert.equal(await peek(join), 'pending');
    h.scheduler.advance(1);
    const joined = await join;
    assert.equal(joined.errorCode, KafkaError.NONE);
    assert.equal(joined.generationId, 1);
    assert.equal(joined.leaderId, memberId);
    assert.equal(joined.protocolName, 'range');
    assert.equal(joined.protocolType, 'consumer');
    assert.deepEqual(joined.members, [{ memberId, groupInstanceId: null, metadata: Buffer.from('sub') }]);
    assert.equal(state(h), 'CompletingRebalance');

    const synced = await sync(h, memberId, 1, { [memberId]: 'p0,p1' });
    assert.equal(synced.errorCode, KafkaError.NONE);
    assert.equal(synced.assignment.toString(), 'p0,p1');
    assert.equal(state(h), 'Stable');
    assert.equal(heartbeat(h, memberId, 1), KafkaError.NONE);
    assert.equal(heartbeat(h, memberId, 0), KafkaError.ILLEGAL_GENERATION);
    assert.equal(heartbeat(h, 'nobody', 1), KafkaError.UNKNOWN_MEMBER_ID);
    assert.equal(h.persisted.get('g')?.generationId, 1);
    assert.equal(h.persisted.get('g')?.members[0]?.assignment.toString(), 'p0,p1');
  });

  it('gives the member list to the leader only and assignments to both', async () => {
    const h = setup();
    const { a, b, ja, jb, sa, sb } = await stableGroupOfTwo(h);
    assert.equal(ja.leaderId, a);
    assert.equal(jb.leaderId, a);
    assert.deepEqual(ja.members.map((m) => m.memberId), [a, b]);
    assert.deepEqual(jb.members, []);
    assert.equal(ja.generationId, 1);
    assert.equal(jb.generationId, 1);
    assert.equal(sa.assignment.toString(), 'A');
    assert.equal(sb.assignment.toString(), 'B', 'the follower waited for the leader');
  });

  it('rebalances when a third member joins: REBALANCE_IN_PROGRESS, rejoin, next generation', async () => {
    const h = setup();
    const { a, b } = await stableGroupOfTwo(h);
    const c = await joinNew(h, { clientId: 'c' });
    assert.equal(state(h), 'PreparingRebalance');
    assert.equal(heartbeat(h, a, 1), KafkaError.REBALANCE_IN_PROGRESS);
    assert.equal(heartbeat(h, b, 1), KafkaError.REBALANCE_IN_PROGRESS);
    const ra = h.coordinator.joinGroup(joinRequest({ memberId: a }));
    assert.equal(await peek(ra), 'pending');
    const rb = h.coordinator.joinGroup(joinRequest({ memberId: b }));
    // Everyone is back: the join phase completes at once (no delay: the group was not Empty).
    const [ja, jb, jc] = await Promise.all([ra, rb, c.join]);
    for (const r of [ja, jb, jc]) assert.equal(r.generationId, 2);
    assert.equal(ja.leaderId, a);
    assert.equal(ja.members.length, 3);
    assert.deepEqual(jc.members, []);
  });

  it('answers a pending SyncGroup with REBALANCE_IN_PROGRESS when a rebalance starts', async () => {
    const h = setup();
    const a = await joinNew(h, { clientId: 'a' });
    const b = await joinNew(h, { clientId: 'b' });
    settleFirstJoin(h);
    await Promise.all([a.join, b.join]);
    const followerSync = sync(h, b.memberId, 1);
    assert.equal(await peek(followerSync), 'pending');
    await joinNew(h, { clientId: 'c' });
    assert.equal((await followerSync).errorCode, KafkaError.REBALANCE_IN_PROGRESS);
    assert.equal((await sync(h, a.memberId, 1)).errorCode, KafkaError.REBALANCE_IN_PROGRESS);
  });

  it('rebalances when a member leaves', async () => {
    const h = setup();
    const { a, b } = await stableGroupOfTwo(h);
    const left = h.coordinator.leaveGroup('g', [{ memberId: b, groupInstanceId: null }]);
    assert.deepEqual(left, { errorCode: KafkaError.NONE, members: [{ memberId: b, groupInstanceId: null, errorCode: KafkaError.NONE }] });
    assert.equal(state(h), 'PreparingRebalance');
    assert.equal(heartbeat(h, a, 1), KafkaError.REBALANCE_IN_PROGRESS);
    const ja = await h.coordinator.joinGroup(joinRequest({ memberId: a }));
    assert.equal(ja.generationId, 2);
    assert.equal(ja.members.length, 1);
    assert.equal(h.coordinator.leaveGroup('g', [{ memberId: b, groupInstanceId: null }]).members[0]?.errorCode, KafkaError.UNKNOWN_MEMBER_ID);
  });

  it('removes a member whose session expires and rebalances the rest', async () => {
    const h = setup();
    const { a, b } = await stableGroupOfTwo(h);
    for (let t = 0; t < 3; t++) {
      h.scheduler.advance(3_000);
      assert.equal(heartbeat(h, a, 1), KafkaError.NONE);
    }
    h.scheduler.advance(1_000); // b has now been silent for exactly its session timeout
    assert.equal(state(h), 'PreparingRebalance');
    assert.equal(heartbeat(h, b, 1), KafkaError.UNKNOWN_MEMBER_ID);
    assert.equal(heartbeat(h, a, 1), KafkaError.REBALANCE_IN_PROGRESS);
    const ja = await h.coordinator.joinGroup(joinRequest({ memberId: a }));
    assert.deepEqual(ja.members.map((m) => m.memberId), [a]);
  });

  it('drops a member that does not rejoin within the rebalance timeout', async () => {
    const h = setup();
    const { a, b } = await stableGroupOfTwo(h);
    const ra = h.coordinator.joinGroup(joinRequest({ memberId: a })); // the leader forces a rebalance
    for (let elapsed = 0; elapsed < rebalanceTimeoutMs - 3_000; elapsed += 3_000) {
      h.scheduler.advance(3_000);
      assert.equal(heartbeat(h, b, 1), KafkaError.REBALANCE_IN_PROGRESS, 'b stays alive but never rejoins');
    }
    assert.equal(await peek(ra), 'pending');
    h.scheduler.advance(3_000);
    const ja = await ra;
    assert.equal(ja.generationId, 2);
    assert.deepEqual(ja.members.map((m) => m.memberId), [a]);
    assert.equal(heartbeat(h, b, 1), KafkaError.UNKNOWN_MEMBER_ID);
  });

  it('removes members that do not sync within the rebalance timeout', async () => {
    const h = setup();
    const a = await joinNew(h, { clientId: 'a' });
    const b = await joinNew(h, { clientId: 'b' });
    settleFirstJoin(h);
    await Promise.all([a.join, b.join]);
    await sync(h, a.memberId, 1, { [a.memberId]: 'A' });
    assert.equal(state(h), 'Stable');
    for (let elapsed = 0; elapsed < rebalanceTimeoutMs; elapsed += 3_000) {
      h.scheduler.advance(3_000);
      heartbeat(h, a.memberId, 1);
      heartbeat(h, b.memberId, 1);
    }
    assert.equal(state(h), 'PreparingRebalance');
    assert.equal(heartbeat(h, b.memberId, 1), KafkaError.UNKNOWN_MEMBER_ID);
  });

  it('hands out member ids with MEMBER_ID_REQUIRED from JoinGroup v4 and expires unused ones', async () => {
    const h = setup();
    const first = await h.coordinator.joinGroup(joinRequest({ apiVersion: 4 }));
    assert.deepEqual(first, { errorCode: KafkaError.MEMBER_ID_REQUIRED, generationId: -1, protocolType: null, protocolName: null, leaderId: '', memberId: 'client-1', members: [] });
    assert.equal(h.coordinator.listGroups().groups.length, 1);
    h.scheduler.advance(sessionTimeoutMs);
    assert.equal(h.coordinator.listGroups().groups.length, 0, 'a group that never had a member is forgotten');
    const late = await h.coordinator.joinGroup(joinRequest({ memberId: 'client-1' }));
    assert.equal(late.errorCode, KafkaError.UNKNOWN_MEMBER_ID);

    const v3 = h.coordinator.joinGroup(joinRequest({ apiVersion: 3 }));
    h.scheduler.advance(initialRebalanceDelayMs);
    const joined = await v3;
    assert.equal(joined.errorCode, KafkaError.NONE, 'v3 joins without the extra round trip');
    assert.equal(joined.memberId, 'client-2');
  });

  it('lets a pending member id hold the join phase until it rejoins', async () => {
    const h = setup();
    const { a } = await stableGroupOfTwo(h);
    const first = await h.coordinator.joinGroup(joinRequest({ clientId: 'c' }));
    assert.equal(first.errorCode, KafkaError.MEMBER_ID_REQUIRED);
    assert.equal(state(h), 'Stable', 'a pending id alone does not start a rebalance');
    const leaderRejoin = h.coordinator.joinGroup(joinRequest({ memberId: a }));
    assert.equal(await peek(leaderRejoin), 'pending');
  });

  it('replaces a static member that rejoins without its id and fences the old id', async () => {
    const h = setup();
    const request = joinRequest({ groupInstanceId: 'host-1', clientId: 'static' });
    const join = h.coordinator.joinGroup(request); // static members skip MEMBER_ID_REQUIRED
    h.scheduler.advance(initialRebalanceDelayMs);
    const joined = await join;
    assert.equal(joined.memberId, 'host-1-1');
    await h.coordinator.syncGroup({ groupId: 'g', generationId: 1, memberId: 'host-1-1', groupInstanceId: 'host-1', protocolType: null, protocolName: null, assignments: [{ memberId: 'host-1-1', assignment: Buffer.from('A') }] });
    const persistsBefore = h.persistCalls();

    const rejoined = await h.coordinator.joinGroup(request);
    assert.equal(rejoined.errorCode, KafkaError.NONE);
    assert.equal(rejoined.memberId, 'host-1-2');
    assert.equal(rejoined.generationId, 1, 'no rebalance for a Stable group');
    assert.equal(rejoined.leaderId, 'host-1-1', 'the old leader id, so that no assignment is attempted');
    assert.equal(state(h), 'Stable');
    assert.equal(h.persistCalls(), persistsBefore + 1);
    assert.equal(h.persisted.get('g')?.members[0]?.memberId, 'host-1-2');

    assert.equal(heartbeat(h, 'host-1-1', 1, 'host-1'), KafkaError.FENCED_INSTANCE_ID);
    assert.equal(heartbeat(h, 'host-1-2', 1, 'host-1'), KafkaError.NONE);
    assert.equal(h.coordinator.validateOffsetCommit('g', 1, 'host-1-1', 'host-1'), KafkaError.FENCED_INSTANCE_ID);
    const synced = await h.coordinator.syncGroup({ groupId: 'g', generationId: 1, memberId: 'host-1-2', groupInstanceId: 'host-1', protocolType: null, protocolName: null, assignments: [] });
    assert.equal(synced.assignment.toString(), 'A', 'the assignment carries over');
    assert.equal(h.coordinator.leaveGroup('g', [{ memberId: 'host-1-1', groupInstanceId: 'host-1' }]).members[0]?.errorCode, KafkaError.FENCED_INSTANCE_ID);
    assert.equal(h.coordinator.leaveGroup('g', [{ memberId: '', groupInstanceId: 'host-1' }]).members[0]?.errorCode, KafkaError.NONE);
    assert.equal(state(h), 'Empty');
  });

  it('fences a static member waiting in a join phase when its instance rejoins', async () => {
    const h = setup();
    const join = h.coordinator.joinGroup(joinRequest({ groupInstanceId: 'host-1' }));
    const again = h.coordinator.joinGroup(joinRequest({ groupInstanceId: 'host-1' }));
    const first = await join;
    assert.equal(first.errorCode, KafkaError.FENCED_INSTANCE_ID);
    h.scheduler.advance(initialRebalanceDelayMs);
    assert.equal((await again).errorCode, KafkaError.NONE);
  });

  it('validates offset commits by Kafka rules', async () => {
    const h = setup();
    assert.equal(h.coordinator.validateOffsetCommit('simple', -1, '', null), KafkaError.NONE, 'simple consumer, unknown group');
    assert.equal(h.coordinator.validateOffsetCommit('simple', 3, 'm', null), KafkaError.ILLEGAL_GENERATION);

    const a = await joinNew(h, { clientId: 'a' });
    const b = await joinNew(h, { clientId: 'b' });
    settleFirstJoin(h);
    await Promise.all([a.join, b.join]);
    assert.equal(h.coordinator.validateOffsetCommit('g', 1, a.memberId, null), KafkaError.REBALANCE_IN_PROGRESS, 'CompletingRebalance');
    await sync(h, a.memberId, 1, {});
    assert.equal(h.coordinator.validateOffsetCommit('g', 1, a.memberId, null), KafkaError.NONE);
    assert.equal(h.coordinator.validateOffsetCommit('g', 0, a.memberId, null), KafkaError.ILLEGAL_GENERATION);
    assert.equal(h.coordinator.validateOffsetCommit('g', 1, 'stranger', null), KafkaError.UNKNOWN_MEMBER_ID);
    assert.equal(h.coordinator.validateOffsetCommit('g', -1, '', null), KafkaError.UNKNOWN_MEMBER_ID, 'simple commit into a live group');
    assert.equal(h.coordinator.validateOffsetCommit('g', 1, a.memberId, 'no-such-instance'), KafkaError.UNKNOWN_MEMBER_ID);

    h.coordinator.leaveGroup('g', [{ memberId: b.memberId, groupInstanceId: null }]);
    assert.equal(state(h), 'PreparingRebalance');
    assert.equal(h.coordinator.validateOffsetCommit('g', 1, a.memberId, null), KafkaError.NONE, 'allowed while preparing');
    h.coordinator.leaveGroup('g', [{ memberId: a.memberId, groupInstanceId: null }]);
    assert.equal(state(h), 'Empty');
    assert.equal(h.coordinator.validateOffsetCommit('g', -1, '', null), KafkaError.NONE, 'simple commit into an Empty group');
  });

  it('lists, describes and deletes groups', async () => {
    const h = setup();
    const { a, b } = await stableGroupOfTwo(h);
    const described = h.coordinator.describeGroup('g');
    assert.equal(described.groupState, 'Stable');
    assert.equal(described.protocolType, 'consumer');
    assert.equal(described.protocolData, 'range');
    assert.deepEqual(described.members.map((m) => [m.memberId, m.clientId, m.memberAssignment.toString(), m.memberMetadata.toString()]), [
      [a, 'a', 'A', 'sub'],
      [b, 'b', 'B', 'sub'],
    ]);
    assert.deepEqual(h.coordinator.describeGroup('nope'), { errorCode: KafkaError.NONE, groupId: 'nope', groupState: 'Dead', protocolType: '', protocolData: '', members: [] });

    assert.deepEqual(h.coordinator.listGroups(), { errorCode: KafkaError.NONE, groups: [{ groupId: 'g', protocolType: 'consumer', groupState: 'Stable' }] });
    assert.equal(h.coordinator.listGroups(['STABLE']).groups.length, 1);
    assert.equal(h.coordinator.listGroups(['Empty']).groups.length, 0);

    assert.deepEqual(h.coordinator.deleteGroups(['g', 'nope']), [
      { groupId: 'g', errorCode: KafkaError.NON_EMPTY_GROUP },
      { groupId: 'nope', errorCode: KafkaError.GROUP_ID_NOT_FOUND },
    ]);
    h.coordinator.leaveGroup('g', [{ memberId: a, groupInstanceId: null }, { memberId: b, groupInstanceId: null }]);
    assert.equal(state(h), 'Empty');
    assert.equal(h.persisted.get('g')?.generationId, 2, 'the empty generation is persisted');
    assert.equal(h.coordinator.listGroups(['empty']).groups.length, 1);
    assert.deepEqual(h.coordinator.deleteGroups(['g']), [{ groupId: 'g', errorCode: KafkaError.NONE }]);
    assert.equal(h.persisted.get('g'), null);
    assert.equal(h.coordinator.listGroups().groups.length, 0);
  });

  it('restores persisted groups with fresh session deadlines', async () => {
    const first = setup();
    const { a, b } = await stableGroupOfTwo(first);
    const snapshot = first.persisted.get('g');
    assert(snapshot);
    first.coordinator.close();

    const h = setup({}, [snapshot]);
    const described = h.coordinator.describeGroup('g');
    assert.equal(described.groupState, 'Stable');
    assert.deepEqual(described.members.map((m) => [m.memberId, m.memberAssignment.toString()]), [
      [a, 'A'],
      [b, 'B'],
    ]);
    assert.equal(heartbeat(h, a, 1), KafkaError.NONE);
    assert.equal((await sync(h, b, 1)).assignment.toString(), 'B');
    h.scheduler.advance(sessionTimeoutMs - 1);
    assert.equal(heartbeat(h, a, 1), KafkaError.NONE);
    h.scheduler.advance(1);
    assert.equal(state(h), 'PreparingRebalance', 'b never came back after the restart');
    const ja = await h.coordinator.joinGroup(joinRequest({ memberId: a }));
    assert.equal(ja.generationId, 2);
    assert.equal(ja.leaderId, a);
  });

  it('checks session timeouts, group ids and protocols', async () => {
    const h = setup();
    const tooShort = await h.coordinator.joinGroup(joinRequest({ sessionTimeoutMs: 5_999 }));
    assert.equal(tooShort.errorCode, KafkaError.INVALID_SESSION_TIMEOUT);
    const tooLong = await h.coordinator.joinGroup(joinRequest({ sessionTimeoutMs: 1_800_001 }));
    assert.equal(tooLong.errorCode, KafkaError.INVALID_SESSION_TIMEOUT);
    assert.equal((await h.coordinator.joinGroup(joinRequest({ groupId: '' }))).errorCode, KafkaError.INVALID_GROUP_ID);
    assert.equal((await h.coordinator.joinGroup(joinRequest({ protocols: [] }))).errorCode, KafkaError.INCONSISTENT_GROUP_PROTOCOL);
    assert.equal((await h.coordinator.joinGroup(joinRequest({ memberId: 'ghost' }))).errorCode, KafkaError.UNKNOWN_MEMBER_ID);
    assert.equal(h.coordinator.listGroups().groups.length, 0, 'failed joins leave no group behind');

    await stableGroupOfTwo(h);
    const otherType = await h.coordinator.joinGroup(joinRequest({ protocolType: 'connect' }));
    assert.equal(otherType.errorCode, KafkaError.INCONSISTENT_GROUP_PROTOCOL);
    const otherProtocol = await h.coordinator.joinGroup(joinRequest({ protocols: [{ name: 'sticky', metadata: Buffer.alloc(0) }] }));
    assert.equal(otherProtocol.errorCode, KafkaError.INCONSISTENT_GROUP_PROTOCOL);
  });

  it('selects the protocol every member supports with the most votes', async () => {
    const h = setup();
    const p = (...names: string[]) => names.map((name) => ({ name, metadata: Buffer.from(name) }));
    const a = await joinNew(h, { clientId: 'a', protocols: p('sticky', 'range', 'roundrobin') });
    const b = await joinNew(h, { clientId: 'b', protocols: p('roundrobin', 'range') });
    const c = await joinNew(h, { clientId: 'c', protocols: p('range', 'roundrobin') });
    settleFirstJoin(h);
    const [ja] = await Promise.all([a.join, b.join, c.join]);
    // sticky is not supported by all; a and c vote range, b votes roundrobin.
    assert.equal(ja.protocolName, 'range');
    assert.deepEqual(ja.members.map((m) => m.metadata.toString()), ['range', 'range', 'range']);
  });

  it('extends the initial delay while members keep arriving, within the rebalance timeout', async () => {
    const h = setup({}, []);
    const a = await joinNew(h, { clientId: 'a', rebalanceTimeoutMs: 1_000 });
    h.scheduler.advance(200);
    const b = await joinNew(h, { clientId: 'b', rebalanceTimeoutMs: 1_000 });
    h.scheduler.advance(100); // first delay over, but b arrived: wait another delay
    assert.equal(await peek(a.join), 'pending');
    h.scheduler.advance(300);
    const [ja, jb] = await Promise.all([a.join, b.join]);
    assert.equal(ja.generationId, 1);
    assert.equal(jb.generationId, 1);
  });

  it('refuses members beyond groupMembersMax', async () => {
    const h = setup({ groupMembersMax: 2 });
    await stableGroupOfTwo(h);
    const third = await h.coordinator.joinGroup(joinRequest({ clientId: 'c' }));
    assert.equal(third.errorCode, KafkaError.GROUP_MAX_SIZE_REACHED);
  });

  it('refuses new groups beyond groupsMax', async () => {
    const h = setup({ groupsMax: 1 });
    await joinNew(h);
    const other = await h.coordinator.joinGroup(joinRequest({ groupId: 'other' }));
    assert.equal(other.errorCode, KafkaError.COORDINATOR_NOT_AVAILABLE);
  });

  it('checks SyncGroup generation, member and protocol', async () => {
    const h = setup();
    const { a } = await stableGroupOfTwo(h);
    assert.equal((await sync(h, a, 2)).errorCode, KafkaError.ILLEGAL_GENERATION);
    assert.equal((await sync(h, 'ghost', 1)).errorCode, KafkaError.UNKNOWN_MEMBER_ID);
    const wrongName = await h.coordinator.syncGroup({ groupId: 'g', generationId: 1, memberId: a, groupInstanceId: null, protocolType: 'consumer', protocolName: 'sticky', assignments: [] });
    assert.equal(wrongName.errorCode, KafkaError.INCONSISTENT_GROUP_PROTOCOL);
    const unknownGroup = await h.coordinator.syncGroup({ groupId: 'nope', generationId: 1, memberId: a, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
    assert.equal(unknownGroup.errorCode, KafkaError.UNKNOWN_MEMBER_ID);
  });

  it('fails the generation when persisting the assignment fails', async () => {
    const clock = new ManualClock(0);
    const scheduler = new ManualScheduler(clock);
    let failing = true;
    const coordinator = new GroupCoordinator({
      clock,
      scheduler,
      config: { initialRebalanceDelayMs },
      persist: () => {
        if (failing) throw new Error('disk full');
      },
    });
    const join = coordinator.joinGroup(joinRequest({ apiVersion: 3 }));
    scheduler.advance(initialRebalanceDelayMs);
    const joined = await join;
    const synced = await coordinator.syncGroup({ groupId: 'g', generationId: 1, memberId: joined.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
    assert.equal(synced.errorCode, KafkaError.COORDINATOR_NOT_AVAILABLE);
    assert.equal(coordinator.describeGroup('g').groupState, 'PreparingRebalance');
    failing = false;
    const rejoined = await coordinator.joinGroup(joinRequest({ memberId: joined.memberId }));
    assert.equal(rejoined.generationId, 2);
  });

  it('answers waiting requests with NOT_COORDINATOR on close', async () => {
    const h = setup();
    const { join } = await joinNew(h);
    h.coordinator.close();
    assert.equal((await join).errorCode, KafkaError.NOT_COORDINATOR);
    assert.equal(h.scheduler.pendingCount, 0, 'no timers left behind');
    assert.equal(heartbeat(h, 'x', 1), KafkaError.COORDINATOR_NOT_AVAILABLE);
  });
});

describe('the Kafka codes of the group engine errors', () => {
  it('gives every engine error its own Kafka code, NONE for none', () => {
    assert.deepEqual(Object.keys(kafkaCodeOfGroupError).sort(), [...allGroupErrors].sort());
    const codes = allGroupErrors.map((e) => kafkaCodeOfGroupError[e]);
    assert.equal(new Set(codes).size, codes.length, 'one code per error');
    assert.equal(kafkaCodeOfGroupError.none, KafkaError.NONE);
    assert.equal(kafkaCodeOfGroupError.stale_generation, KafkaError.ILLEGAL_GENERATION);
    assert.equal(kafkaCodeOfGroupError.closed, KafkaError.NOT_COORDINATOR);
  });
});
