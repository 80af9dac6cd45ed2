// Consumer groups end to end: create/get/list/delete, join/sync/leave with server-side assignment
// and generations, rebalance on join, leave, disconnect and partition growth, polls as a group
// member, and StaleClient eviction of a silent member driven by a manual clock and scheduler.

import assert from 'node:assert/strict';
import { xxh32 } from '@node-rs/xxhash';
import { describe, it } from 'node:test';
import { ManualClock } from '../../../../src/base/clock.js';
import { ManualScheduler } from '../../../../src/core/scheduler.js';
import { CommandCode, ConsumerKind, EvictionReason, IggyErrorCode, PollingKind } from '../../../../src/protocols/iggy/codec/index.js';
import { eventually, sendRequest, sid, startIggy, type IggyTestClient } from '../harness.js';

const ref = { streamId: sid('default'), topicId: sid('g') };
const group = { ...ref, groupId: sid('workers') };

async function sync(c: IggyTestClient) {
  return c.ok(CommandCode.syncConsumerGroup, group);
}

/**
 * Topic `g` of 2 partitions with messages x, y in partition 1, group `workers`, `a` a member and
 * `b` a second client, not yet joined.
 */
async function twoMembersOfWorkers(t: Parameters<typeof startIggy>[0]) {
  const h = await startIggy(t);
  const a = await h.root();
  const b = await h.root();
  await a.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 2, name: 'g', options: [] });
  await a.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('g'), ['x', 'y'], { kind: 'partitionId', partitionId: 1 }));
  await a.ok(CommandCode.createConsumerGroup, { ...ref, name: 'workers' });
  await a.ok(CommandCode.joinConsumerGroup, group);
  return { h, a, b, consumer: { kind: ConsumerKind.consumerGroup, id: sid('workers') } };
}

describe('iggy consumer groups', () => {
  it('assigns partitions server-side with generations and rebalances on join, leave and disconnect', async (t) => {
    const h = await startIggy(t);
    const a = await h.root();
    await a.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 4, name: 'g', options: [] });
    const created = await a.ok(CommandCode.createConsumerGroup, { ...ref, name: 'workers' });
    assert.deepEqual(created, { id: 0, partitionsCount: 4, membersCount: 0, name: 'workers' });
    assert.deepEqual(await a.call(CommandCode.createConsumerGroup, { ...ref, name: 'workers' }), { rejected: IggyErrorCode.consumerGroupNameAlreadyExists });
    assert.deepEqual((await a.ok(CommandCode.getConsumerGroups, ref)).map((g) => g.name), ['workers']);
    assert.equal(await a.ok(CommandCode.getConsumerGroup, { ...ref, groupId: sid(9) }), null);
    assert.deepEqual(await a.call(CommandCode.getConsumerGroup, { ...ref, streamId: sid(999), groupId: sid(0) }), { status: IggyErrorCode.streamIdNotFound });
    assert.equal(await a.ok(CommandCode.syncConsumerGroup, group), null, 'not a member yet');
    // Lists of a missing stream or topic are refused like Get; Sync answers anything missing with an empty body.
    assert.deepEqual(await a.call(CommandCode.getConsumerGroups, { ...ref, streamId: sid('nope') }), { status: IggyErrorCode.streamIdNotFound });
    assert.deepEqual(await a.call(CommandCode.getConsumerGroups, { ...ref, topicId: sid(77) }), { status: IggyErrorCode.topicIdNotFound });
    assert.equal(await a.ok(CommandCode.syncConsumerGroup, { ...group, streamId: sid('nope') }), null);
    assert.equal(await a.ok(CommandCode.syncConsumerGroup, { ...group, topicId: sid('nope') }), null);

    await a.ok(CommandCode.joinConsumerGroup, group);
    const s1 = await sync(a);
    assert.deepEqual(s1?.partitions, [0, 1, 2, 3]);
    const b = await h.root();
    await b.ok(CommandCode.joinConsumerGroup, group);
    const sa = await sync(a);
    const sb = await sync(b);
    assert.ok(sa!.generation > s1!.generation);
    assert.equal(sa!.generation, sb!.generation);
    // Balanced and sticky: the first member keeps its lowest partitions, the newcomer takes the rest
    // (nothing was in flight, so they move at once).
    assert.deepEqual(sa?.partitions, [0, 1]);
    assert.deepEqual(sb?.partitions, [2, 3]);
    const details = await a.ok(CommandCode.getConsumerGroup, group);
    assert.equal(details?.membersCount, 2);
    assert.deepEqual(details?.members.map((m) => m.partitions), [[0, 1], [2, 3]]);
    const me = await b.ok(CommandCode.getMe, {});
    assert.deepEqual(me?.consumerGroups, [{ streamId: h.broker.catalog.requireNamespace('default').id, topicId: 0, groupId: 0 }]);

    // polling as a member: only owned partitions
    await a.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('g'), ['p2'], { kind: 'partitionId', partitionId: 2 }));
    const consumer = { kind: ConsumerKind.consumerGroup, id: sid('workers') };
    const polled = await b.ok(CommandCode.pollMessages, { consumer, ...ref, partitionId: 2, strategy: { kind: PollingKind.next, value: 0n }, count: 10, autoCommit: true });
    assert.equal(polled.messagesCount, 1);
    // Not owned: the reference's fence, an empty poll for partition u32::MAX (sync again), and no offset moves.
    const resync = { partitionId: 0xffff_ffff, currentOffset: 0n, messagesCount: 0, batches: [] };
    const fenced = await a.ok(CommandCode.pollMessages, { consumer, ...ref, partitionId: 2, strategy: { kind: PollingKind.next, value: 0n }, count: 10, autoCommit: true });
    assert.deepEqual(fenced, resync);
    assert.deepEqual(await a.ok(CommandCode.pollMessages, { consumer, ...ref, partitionId: 99, strategy: { kind: PollingKind.next, value: 0n }, count: 10, autoCommit: true }), resync, 'a partition that does not exist is not owned either');
    const outsider = await h.root();
    assert.deepEqual(await outsider.ok(CommandCode.pollMessages, { consumer, ...ref, partitionId: 0, strategy: { kind: PollingKind.next, value: 0n }, count: 10, autoCommit: true }), resync, 'not a member');
    assert.deepEqual(await outsider.ok(CommandCode.pollMessages, { consumer, ...ref, partitionId: null, strategy: { kind: PollingKind.next, value: 0n }, count: 10, autoCommit: true }), resync, 'not a member, no partition');
    for (const missing of [sid('nobody'), sid(99)]) {
      assert.deepEqual(await outsider.ok(CommandCode.pollMessages, { consumer: { kind: ConsumerKind.consumerGroup, id: missing }, ...ref, partitionId: 0, strategy: { kind: PollingKind.next, value: 0n }, count: 10, autoCommit: true }), resync, 'no such group');
    }
    // group offsets are shared by the group: after a rebalance the other member resumes
    b.destroy();
    await eventually(() => h.frontend.groups.list(h.broker.catalog.requireTopic({ topic: 'g' }))[0]!.members.size === 1, 'b to leave on disconnect');
    assert.deepEqual((await sync(a))?.partitions, [0, 1, 2, 3]);
    const resumed = await a.ok(CommandCode.pollMessages, { consumer, ...ref, partitionId: 2, strategy: { kind: PollingKind.next, value: 0n }, count: 10, autoCommit: true });
    assert.equal(resumed.messagesCount, 0, 'the group offset was committed by b');

    // partitions added: reassigned
    await a.ok(CommandCode.createPartitions, { ...ref, partitionsCount: 1 });
    assert.deepEqual((await sync(a))?.partitions, [0, 1, 2, 3, 4]);
    await a.ok(CommandCode.leaveConsumerGroup, group);
    assert.deepEqual(await a.call(CommandCode.leaveConsumerGroup, group), { rejected: IggyErrorCode.consumerGroupMemberNotFound });
    await a.ok(CommandCode.deleteConsumerGroup, group);
    assert.deepEqual(await a.call(CommandCode.joinConsumerGroup, group), { rejected: IggyErrorCode.consumerGroupIdNotFound });
  });

  it('hands a partition over cooperatively: one with messages served and not committed moves once its owner commits them, or at the deadline, or when the owner leaves', async (t) => {
    const clock = new ManualClock(1_700_000_000_000);
    const scheduler = new ManualScheduler(clock);
    const h = await startIggy(t, { clock, scheduler, settings: { rebalancingTimeoutMs: 5_000 } });
    const a = await h.root();
    const b = await h.root();
    await a.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 4, name: 'g', options: [] });
    for (const p of [0, 1, 2, 3]) await a.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('g'), [`m${p}-0`, `m${p}-1`], { kind: 'partitionId', partitionId: p }));
    await a.ok(CommandCode.createConsumerGroup, { ...ref, name: 'workers' });
    const consumer = { kind: ConsumerKind.consumerGroup, id: sid('workers') };
    const poll = (c: IggyTestClient, partitionId: number, autoCommit: boolean) =>
      c.ok(CommandCode.pollMessages, { consumer, ...ref, partitionId, strategy: { kind: PollingKind.next, value: 0n }, count: 10, autoCommit });
    const members = async () => (await a.ok(CommandCode.getConsumerGroup, group))!.members.map((m) => m.partitions);
    /** One more message in `partition`, polled by `owner` without a commit: in flight. */
    const servedNotCommitted = async (owner: IggyTestClient, partition: number, payload: string) => {
      await a.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('g'), [payload], { kind: 'partitionId', partitionId: partition }));
      assert.equal((await poll(owner, partition, false)).messagesCount, 1);
    };
    /** A new connection that joins the group. */
    const joiner = async () => {
      const c = await h.root();
      await c.ok(CommandCode.joinConsumerGroup, group);
      return c;
    };
    const resync = { partitionId: 0xffff_ffff, currentOffset: 0n, messagesCount: 0, batches: [] };

    await a.ok(CommandCode.joinConsumerGroup, group);
    // Served and committed (auto-commit): nothing in flight. Served, not committed: in flight.
    assert.equal((await poll(a, 2, true)).messagesCount, 2);
    assert.equal((await poll(a, 3, false)).messagesCount, 2);
    await b.ok(CommandCode.joinConsumerGroup, group);
    const joined = await sync(b);
    // Partition 2 moved at once; partition 3 is pending: still a's (for its commits), polled by nobody.
    assert.deepEqual(joined?.partitions, [2]);
    assert.deepEqual((await sync(a))?.partitions, [0, 1]);
    assert.deepEqual(await members(), [[0, 1, 3], [2]]);
    assert.deepEqual(await poll(a, 3, false), resync, 'the owner no longer polls a partition pending revocation');
    const rotated = new Set<number>();
    for (let i = 0; i < 4; i++) rotated.add((await a.ok(CommandCode.pollMessages, { consumer, ...ref, partitionId: null, strategy: { kind: PollingKind.next, value: 0n }, count: 1, autoCommit: true })).partitionId);
    assert.deepEqual([...rotated].sort(), [0, 1], 'polls without a partition rotate over the partitions it polls');
    assert.deepEqual(await poll(b, 3, false), resync, 'nor does its next owner, yet');
    // A commit short of what was served keeps it pending; the last one served completes the hand-off.
    await a.ok(CommandCode.storeConsumerOffset, { consumer, ...ref, partitionId: 3, offset: 0n, ack: 1 });
    assert.deepEqual((await sync(b))?.partitions, [2]);
    await a.ok(CommandCode.storeConsumerOffset, { consumer, ...ref, partitionId: 3, offset: 1n, ack: 1 });
    const handed = await sync(b);
    assert.deepEqual(handed?.partitions, [2, 3]);
    assert.ok(handed!.generation > joined!.generation, 'the hand-off is a new generation');
    assert.deepEqual(await members(), [[0, 1], [2, 3]]);
    assert.equal((await poll(b, 3, true)).messagesCount, 0, 'b resumes after what a committed');

    // The deadline: c joins while b has partition 3's new message in flight and never commits it.
    await servedNotCommitted(b, 3, 'm3-2');
    const c = await joiner();
    assert.deepEqual(await members(), [[0, 1], [2, 3], []]);
    assert.deepEqual((await sync(c))?.partitions, []);
    // The stale-member sweep completes it, and runs every tenth of the deadline.
    scheduler.advance(4_999);
    assert.deepEqual((await sync(c))?.partitions, []);
    scheduler.advance(500);
    assert.deepEqual((await sync(c))?.partitions, [3]);
    assert.deepEqual(await members(), [[0, 1], [2], [3]]);

    // The owner leaving: what it had pending goes to its next owner at once.
    await servedNotCommitted(a, 1, 'm1-2');
    const d = await joiner();
    assert.deepEqual(await members(), [[0, 1], [2], [3], []], 'partition 1 is pending for d');
    assert.deepEqual((await sync(d))?.partitions, []);
    await a.ok(CommandCode.leaveConsumerGroup, group);
    assert.deepEqual(await members(), [[0, 2], [3], [1]]);
    assert.deepEqual((await sync(d))?.partitions, [1]);

    // A purge leaves nothing in flight: the pending hand-offs complete.
    await servedNotCommitted(b, 2, 'm2-2');
    const e = await joiner();
    assert.deepEqual((await sync(e))?.partitions, [], 'partition 2 is pending for e');
    await a.ok(CommandCode.purgeTopic, ref);
    assert.deepEqual((await sync(e))?.partitions, [2]);
    // And a stream's purge likewise.
    await e.ok(CommandCode.leaveConsumerGroup, group);
    assert.deepEqual(await members(), [[0, 2], [3], [1]]);
    await servedNotCommitted(b, 2, 'm2-9');
    await joiner();
    assert.deepEqual(await members(), [[0, 2], [3], [1], []], 'partition 2 is pending for f');
    await a.ok(CommandCode.purgeStream, { streamId: sid('default') });
    assert.deepEqual(await members(), [[0], [3], [1], [2]]);
  });

  it('a deleted group offset leaves nothing to wait for: the hand-off completes', async (t) => {
    const { a, b, consumer } = await twoMembersOfWorkers(t);
    assert.equal((await a.ok(CommandCode.pollMessages, { consumer, ...ref, partitionId: 1, strategy: { kind: PollingKind.next, value: 0n }, count: 10, autoCommit: false })).messagesCount, 2);
    await b.ok(CommandCode.joinConsumerGroup, group);
    assert.deepEqual((await sync(b))?.partitions, [], 'pending: a was served 2 messages it has not committed');
    await a.ok(CommandCode.storeConsumerOffset, { consumer, ...ref, partitionId: 1, offset: 0n, ack: 1 });
    await a.ok(CommandCode.deleteConsumerOffset, { consumer, ...ref, partitionId: 1, ack: 1 });
    assert.deepEqual((await sync(b))?.partitions, [1]);
  });

  it('a poll under way when its partition moves hands out nothing and commits nothing', async (t) => {
    for (const autoCommit of [false, true]) {
      const { h, a, b, consumer } = await twoMembersOfWorkers(t);
      // Hold a's poll of partition 1 after it read its stored offset (none: its first await) while b joins.
      const offsets = h.broker.offsets;
      const fetch = offsets.fetch.bind(offsets);
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let held = false;
      offsets.fetch = async (...args: Parameters<typeof fetch>) => {
        const result = await fetch(...args);
        if (!held && args[3] === 1) {
          held = true;
          await gate;
        }
        return result;
      };
      const polling = a.ok(CommandCode.pollMessages, { consumer, ...ref, partitionId: 1, strategy: { kind: PollingKind.next, value: 0n }, count: 1, autoCommit });
      await eventually(() => held, "a's poll inside its await");
      await b.ok(CommandCode.joinConsumerGroup, group);
      assert.deepEqual((await sync(b))?.partitions, [1], 'nothing was in flight yet: it moved at once');
      const polledByB = await b.ok(CommandCode.pollMessages, { consumer, ...ref, partitionId: 1, strategy: { kind: PollingKind.next, value: 0n }, count: 10, autoCommit: true });
      assert.equal(polledByB.messagesCount, 2);
      release();
      assert.deepEqual(await polling, { partitionId: 0xffff_ffff, currentOffset: 0n, messagesCount: 0, batches: [] }, `autoCommit ${autoCommit}`);
      assert.equal((await b.ok(CommandCode.getConsumerOffset, { consumer, ...ref, partitionId: 1 }))?.storedOffset, 1n, "b's commit stands");
    }
  });

  it('fences a group\'s offset writes to the partitions the caller owns, and reads a missing group\'s offset as none', async (t) => {
    const h = await startIggy(t);
    const a = await h.root();
    const b = await h.root();
    await a.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 2, name: 'g', options: [] });
    for (const p of [0, 1]) await a.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('g'), ['x', 'y'], { kind: 'partitionId', partitionId: p }));
    await a.ok(CommandCode.createConsumerGroup, { ...ref, name: 'workers' });
    const consumer = { kind: ConsumerKind.consumerGroup, id: sid('workers') };
    const at = (partitionId: number | null) => ({ consumer, ...ref, partitionId });
    // Not a member: refused, nothing stored.
    assert.deepEqual(await a.call(CommandCode.storeConsumerOffset, { ...at(0), offset: 1n, ack: 1 }), { status: IggyErrorCode.consumerGroupPartitionNotOwned });
    await a.ok(CommandCode.joinConsumerGroup, group);
    await b.ok(CommandCode.joinConsumerGroup, group);
    assert.deepEqual((await sync(a))?.partitions, [0]);
    assert.deepEqual(await a.call(CommandCode.storeConsumerOffset, { ...at(null), offset: 1n, ack: 1 }), { status: IggyErrorCode.invalidIdentifier });
    assert.deepEqual(await a.call(CommandCode.storeConsumerOffset, { ...at(1), offset: 1n, ack: 1 }), { status: IggyErrorCode.consumerGroupPartitionNotOwned });
    await a.ok(CommandCode.storeConsumerOffset, { ...at(0), offset: 1n, ack: 1 });
    await b.ok(CommandCode.storeConsumerOffset, { ...at(1), offset: 0n, ack: 1 });
    assert.deepEqual(await b.call(CommandCode.deleteConsumerOffset, { ...at(0), ack: 1 }), { status: IggyErrorCode.consumerGroupPartitionNotOwned });
    // Anyone may read them; the partition defaults to 0.
    assert.equal((await b.ok(CommandCode.getConsumerOffset, at(null)))?.storedOffset, 1n);
    assert.equal((await a.ok(CommandCode.getConsumerOffset, at(1)))?.storedOffset, 0n);
    await a.ok(CommandCode.deleteConsumerOffset, { ...at(0), ack: 1 });
    assert.equal(await a.ok(CommandCode.getConsumerOffset, at(0)), null);
    // A group that does not exist has no offset (not an error), by name and by id.
    assert.equal(await a.ok(CommandCode.getConsumerOffset, { ...at(0), consumer: { kind: ConsumerKind.consumerGroup, id: sid('nobody') } }), null);
    assert.equal(await a.ok(CommandCode.getConsumerOffset, { ...at(0), consumer: { kind: ConsumerKind.consumerGroup, id: sid(42) } }), null);
  });

  it("checks a group's offset writes in the reference's order: partition named (6), stream and topic (20), group (5000/5003), ownership (5009), then permission", async (t) => {
    const h = await startIggy(t);
    const root = await h.root();
    await root.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'g', options: [] });
    await root.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('g'), ['x']));
    await root.ok(CommandCode.createConsumerGroup, { ...ref, name: 'workers' });
    await root.ok(CommandCode.createUser, { username: 'nobody', password: 'secret-nobody', status: 1, permissions: null, options: [] });
    const user = await h.client();
    await user.login('nobody', 'secret-nobody');
    const groupConsumer = (id: string | number) => ({ kind: ConsumerKind.consumerGroup, id: typeof id === 'string' ? sid(id) : { kind: 'numeric' as const, value: id } });
    const write = (c: typeof root, code: typeof CommandCode.storeConsumerOffset | typeof CommandCode.deleteConsumerOffset, over: Record<string, unknown>) =>
      c.call(code, { consumer: groupConsumer('workers'), ...ref, partitionId: 0, offset: 0n, ack: 1, ...over } as never);
    for (const code of [CommandCode.storeConsumerOffset, CommandCode.deleteConsumerOffset] as const) {
      assert.deepEqual(await write(root, code, { streamId: sid('nope'), partitionId: null }), { status: IggyErrorCode.invalidIdentifier });
      assert.deepEqual(await write(root, code, { streamId: sid('nope') }), { status: IggyErrorCode.resourceNotFound });
      assert.deepEqual(await write(root, code, { topicId: sid('nope') }), { status: IggyErrorCode.resourceNotFound });
      assert.deepEqual(await write(user, code, { consumer: groupConsumer('others') }), { status: IggyErrorCode.consumerGroupNameNotFound }, 'before the permission');
      assert.deepEqual(await write(user, code, { consumer: groupConsumer(99) }), { status: IggyErrorCode.consumerGroupIdNotFound });
      assert.deepEqual(await write(user, code, {}), { status: IggyErrorCode.consumerGroupPartitionNotOwned });
      // A plain consumer's writes name the level that missed.
      const plain = { consumer: { kind: ConsumerKind.consumer, id: sid('c') } };
      assert.deepEqual(await write(root, code, { ...plain, streamId: sid('nope') }), { status: IggyErrorCode.streamIdNotFound });
      assert.deepEqual(await write(root, code, { ...plain, topicId: sid('nope') }), { status: IggyErrorCode.topicIdNotFound });
      assert.deepEqual(await write(user, code, { ...plain, partitionId: 5 }), { status: IggyErrorCode.partitionNotFound }, 'before the permission');
      assert.deepEqual(await write(user, code, plain), { status: IggyErrorCode.unauthorized });
    }
  });

  it('never gives a deleted group\'s id again, across restarts, and deletes its offsets with it', async (t) => {
    const h = await startIggy(t, { keepDataDir: true });
    const a = await h.root();
    await a.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'g', options: [] });
    await a.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('g'), ['x', 'y', 'z']));
    const consumer = { kind: ConsumerKind.consumerGroup, id: sid('workers') };
    const at = { consumer, ...ref, partitionId: 0 };
    assert.equal((await a.ok(CommandCode.createConsumerGroup, { ...ref, name: 'workers' })).id, 0);
    await a.ok(CommandCode.joinConsumerGroup, group);
    await a.ok(CommandCode.storeConsumerOffset, { ...at, offset: 2n, ack: 1 });
    await a.ok(CommandCode.deleteConsumerGroup, group);
    assert.deepEqual((await h.broker.offsets.listGroups('iggy')).filter((k) => k.startsWith('g:')), [], 'the deleted group\'s offsets went with it');
    const again = await a.ok(CommandCode.createConsumerGroup, { ...ref, name: 'workers' });
    assert.equal(again.id, 1, 'a new id, not the deleted group\'s 0');
    assert.equal(await a.ok(CommandCode.getConsumerOffset, at), null);
    await a.ok(CommandCode.joinConsumerGroup, group);
    const polled = await a.ok(CommandCode.pollMessages, { ...at, strategy: { kind: PollingKind.next, value: 0n }, count: 10, autoCommit: false });
    assert.equal(polled.messagesCount, 3, 'the new group reads from the start');
    await a.ok(CommandCode.deleteConsumerGroup, group);
    // Left behind by earlier builds or a crash: a group's offsets that outlived it, and a named
    // consumer's offset stored under its name. The next start removes the one, moves the other.
    const topicId = h.broker.catalog.requireTopic({ topic: 'g' }).internalId;
    await h.broker.offsets.commit('iggy', `g:0|${topicId}|0`, [{ topicInternalId: topicId, partition: 0, offset: 1 }]);
    await h.broker.offsets.commit('iggy', `c:s:app|${topicId}|0`, [{ topicInternalId: topicId, partition: 0, offset: 2 }]);
    await h.broker.offsets.commit('iggy', `c:s:two\nlines|${topicId}|0`, [{ topicInternalId: topicId, partition: 0, offset: 1 }]);
    await h.broker.offsets.commit('iggy', `c:n:5|999|0`, [{ topicInternalId: 999, partition: 0, offset: 1 }]);
    await h.stop();
    const h2 = await startIggy(t, { dataDir: h.dataDir });
    const idOf = (name: string) => xxh32(Buffer.from(name), 0);
    assert.deepEqual((await h2.broker.offsets.listGroups('iggy')).sort(), [`c:n:${idOf('app')}|${topicId}|0`, `c:n:${idOf('two\nlines')}|${topicId}|0`].sort(), 'moved by id; a deleted topic\'s offsets gone');
    const c = await h2.root();
    assert.equal((await c.ok(CommandCode.getConsumerOffset, { ...at, consumer: { kind: ConsumerKind.consumer, id: sid('app') } }))?.storedOffset, 2n);
    assert.equal((await c.ok(CommandCode.createConsumerGroup, { ...ref, name: 'workers' })).id, 2, 'the counter survived the restart');
    assert.equal((await c.ok(CommandCode.createConsumerGroup, { ...ref, name: 'more' })).id, 3);
  });

  it('evicts a member that stops pinging (StaleClient 13) and rebalances', async (t) => {
    const clock = new ManualClock();
    const scheduler = new ManualScheduler(clock);
    const h = await startIggy(t, { clock, scheduler, settings: { heartbeatIntervalMs: 30_000 } });
    const a = await h.root();
    await a.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 2, name: 'g', options: [] });
    await a.ok(CommandCode.createConsumerGroup, { ...ref, name: 'workers' });
    const b = await h.root();
    await a.ok(CommandCode.joinConsumerGroup, group);
    await b.ok(CommandCode.joinConsumerGroup, group);
    const idle = await h.root(); // not a member: never evicted for silence
    assert.deepEqual((await sync(a))?.partitions, [0]);
    scheduler.advance(20_000);
    await a.ok(CommandCode.ping, {});
    scheduler.advance(30_000); // b silent for 50 s > 36 s; a for 30 s
    const ev = await b.next();
    assert.equal(ev.kind === 'eviction' && typeof ev.eviction !== 'string' && ev.eviction.reason, EvictionReason.staleClient);
    await b.whenClosed();
    assert.deepEqual((await sync(a))?.partitions, [0, 1]);
    assert.equal(idle.closed, false);
    assert.ok('value' in (await idle.call(CommandCode.ping, {})));
  });
});
