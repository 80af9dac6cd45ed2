import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../../src/base/clock.js';
import { AppendWaiters } from '../../../src/core/append-waiters.js';
import { Broker } from '../../../src/core/broker.js';
import type { Topic } from '../../../src/core/catalog.js';
import { QueueGroups, type ClaimRequest, type QueueClaim, type QueueGroupConfig } from '../../../src/core/groups/queue.js';
import { ManualScheduler } from '../../../src/core/scheduler.js';
import { encodeNeutralBatch } from '../../../src/log/index.js';
import { tempDir, testScryptCost } from '../helpers.js';
import { mulberry32 } from '../../fixtures/seeded-random.js';

type TestContext = { after(fn: () => Promise<void> | void): void };

const config: Partial<QueueGroupConfig> = { visibilityTimeoutMs: 1_000, deliveryAttemptsMax: 3 };

async function openBroker(dataDir: string, clock: ManualClock, scheduler: ManualScheduler, memory: boolean): Promise<Broker> {
  return Broker.open({ dataDir, memory, clock, scheduler, rootUser: { username: 'root', password: 'pw' }, maintenanceIntervalMs: 0, scryptCost: testScryptCost });
}

async function setup(t: TestContext, over: Partial<QueueGroupConfig> = {}, partitions = 1) {
  const clock = new ManualClock(1_000_000);
  const scheduler = new ManualScheduler(clock);
  const broker = await openBroker(tempDir(t), clock, scheduler, true);
  const topic = await broker.createTopic('default', 'jobs', { partitions });
  const waiters = new AppendWaiters();
  const queue = new QueueGroups({ broker, scope: 'test', clock, scheduler, waiters, config: { ...config, ...over } });
  t.after(async () => {
    queue.close();
    waiters.close();
    await broker.close();
  });
  return { clock, scheduler, broker, topic, queue };
}

async function publish(broker: Broker, topic: Topic, values: string[], partition = 0): Promise<void> {
  await broker.append(topic, partition, encodeNeutralBatch(values.map((value) => ({ value })), { timestamp: 1_000 }));
}

function claimer(queue: QueueGroups, topic: Topic) {
  return async (memberId: string | null, recordsMax: number, over: Partial<ClaimRequest> = {}): Promise<QueueClaim[]> => {
    const result = await queue.claim({ groupId: 'g', memberId, topic, recordsMax, ...over });
    assert.equal(result.error, 'none');
    return result.claims;
  };
}

/** [offset, attempt, value] of each claim. */
const seen = (claims: readonly QueueClaim[]) => claims.map((c) => [c.offset, c.deliveryAttempt, c.record.value!.toString()]);
const refs = (topic: Topic, ...offsets: number[]) => offsets.map((offset) => ({ topicInternalId: topic.internalId, partition: 0, offset }));

describe('QueueGroups', () => {
  it('claims records once each, acks them, and commits the lowest unsettled offset as the position', async (t) => {
    const { broker, topic, queue } = await setup(t);
    const claim = claimer(queue, topic);
    await publish(broker, topic, ['a', 'b', 'c']);
    assert.deepEqual(seen(await claim(null, 2)), [[0, 1, 'a'], [1, 1, 'b']]);
    assert.deepEqual(seen(await claim(null, 5)), [[2, 1, 'c']]);
    assert.deepEqual(await claim(null, 5), [], 'everything is claimed');

    assert.deepEqual((await queue.settle('g', null, refs(topic, 1), { kind: 'ack' })).results, ['none']);
    assert.equal(await queue.position('g', topic.internalId, 0), 0, 'offset 0 is not settled: the position stays');
    assert.deepEqual((await queue.settle('g', null, refs(topic, 0, 2), { kind: 'ack' })).results, ['none', 'none']);
    assert.equal(await queue.position('g', topic.internalId, 0), 3);
    assert.equal((await broker.offsets.fetch('test', 'g', topic.internalId, 0))?.offset, 3, 'the position is the committed offset');
    assert.deepEqual((await queue.settle('g', null, refs(topic, 2, 7), { kind: 'ack' })).results, ['stale_claim', 'stale_claim'], 'settled and never-delivered records are not claims');
  });

  it('never gives two members the same record, and a member settles only its own claims', async (t) => {
    const { broker, topic, queue } = await setup(t, {}, 2);
    const claim = claimer(queue, topic);
    for (let i = 0; i < 6; i++) await publish(broker, topic, [`p0-${i}`], 0);
    for (let i = 0; i < 6; i++) await publish(broker, topic, [`p1-${i}`], 1);
    assert.equal(await queue.join('g', 'm1', 10_000), 'none');
    assert.equal(await queue.join('g', 'm2', 10_000), 'none');
    const held = new Map<string, string>();
    const all = await Promise.all(Array.from({ length: 8 }, (_, i) => claim(i % 2 === 0 ? 'm1' : 'm2', 3).then((cs) => cs.map((c) => ({ c, member: i % 2 === 0 ? 'm1' : 'm2' })))));
    for (const { c, member } of all.flat()) {
      const key = `${c.partition}/${c.offset}`;
      assert.equal(held.get(key), undefined, `${key} claimed twice`);
      held.set(key, member);
    }
    assert.equal(held.size, 12, 'every record was claimed by someone');
    const [key, owner] = [...held].find(([, m]) => m === 'm1')!;
    const [partition, offset] = key.split('/').map(Number) as [number, number];
    const ref = [{ topicInternalId: topic.internalId, partition, offset }];
    assert.deepEqual((await queue.settle('g', 'm2', ref, { kind: 'ack' })).results, ['stale_claim'], "m2 cannot ack m1's claim");
    assert.deepEqual((await queue.settle('g', owner, ref, { kind: 'ack' })).results, ['none']);
    assert.equal((await queue.claim({ groupId: 'g', memberId: 'nobody', topic, recordsMax: 1 })).error, 'unknown_member');
  });

  it('delivers a record again once its visibility deadline passes, and refuses the lapsed claim', async (t) => {
    const { broker, topic, queue, scheduler } = await setup(t);
    const claim = claimer(queue, topic);
    await publish(broker, topic, ['a']);
    await queue.join('g', 'slow', 60_000);
    await queue.join('g', 'fast', 60_000);
    assert.deepEqual(seen(await claim('slow', 1)), [[0, 1, 'a']]);
    scheduler.advance(999);
    assert.deepEqual(await claim('fast', 1), [], 'still claimed 1 ms before the deadline');
    scheduler.advance(1);
    assert.deepEqual(seen(await claim('fast', 1)), [[0, 2, 'a']], 'the second delivery');
    assert.deepEqual((await queue.settle('g', 'slow', refs(topic, 0), { kind: 'ack' })).results, ['stale_claim']);
    const extended = await queue.extend('g', 'fast', refs(topic, 0), 5_000);
    assert.deepEqual(extended.results, ['none']);
    scheduler.advance(4_999);
    assert.deepEqual(await claim('slow', 1), [], 'the extended claim still holds');
    assert.deepEqual((await queue.settle('g', 'fast', refs(topic, 0), { kind: 'ack' })).results, ['none']);
  });

  it('nack gives the record back at once or after its delay, counting attempts', async (t) => {
    const { broker, topic, queue, scheduler } = await setup(t, { deliveryAttemptsMax: 10 });
    const claim = claimer(queue, topic);
    await publish(broker, topic, ['a']);
    await claim(null, 1);
    await queue.settle('g', null, refs(topic, 0), { kind: 'nack', delayMs: 0 });
    assert.deepEqual(seen(await claim(null, 1)), [[0, 2, 'a']]);
    await queue.settle('g', null, refs(topic, 0), { kind: 'nack', delayMs: 500 });
    assert.deepEqual(await claim(null, 1), [], 'held back for its delay');
    scheduler.advance(500);
    assert.deepEqual(seen(await claim(null, 1)), [[0, 3, 'a']]);
    assert.equal(await queue.position('g', topic.internalId, 0), 0);
  });

  it('dead-letters a record at the delivery limit or on reject; lists, discards and redrives them', async (t) => {
    const { broker, topic, queue, scheduler } = await setup(t);
    const claim = claimer(queue, topic);
    await publish(broker, topic, ['poison', 'bad', 'ok']);
    assert.equal((await claim(null, 3)).length, 3);
    await queue.settle('g', null, refs(topic, 2), { kind: 'ack' });
    await queue.settle('g', null, refs(topic, 1), { kind: 'reject' });
    for (let attempt = 2; attempt <= 3; attempt++) {
      scheduler.advance(1_000); // the claim lapses: a release
      assert.deepEqual(seen(await claim(null, 3)), [[0, attempt, 'poison']]);
    }
    await queue.settle('g', null, refs(topic, 0), { kind: 'nack', delayMs: 0 });
    assert.deepEqual(await claim(null, 3), [], 'the third delivery was the last');
    assert.deepEqual((await queue.deadLetters('g', topic.internalId, 0)).offsets, [0, 1]);
    assert.equal(await queue.position('g', topic.internalId, 0), 3, 'dead letters count as settled');

    assert.deepEqual(await queue.discard('g', refs(topic, 1)[0]!), { error: 'none', found: true });
    assert.deepEqual(await queue.discard('g', refs(topic, 1)[0]!), { error: 'none', found: false });
    assert.deepEqual(await queue.redrive('g', refs(topic, 0)[0]!), { error: 'none', found: true });
    assert.deepEqual((await queue.deadLetters('g', topic.internalId, 0)).offsets, []);
    assert.deepEqual(seen(await claim(null, 3)), [[0, 1, 'poison']], 'redriven: delivered again, attempts from zero');
    assert.equal(await queue.position('g', topic.internalId, 0), 3, 'a redrive does not move the position back');
    await queue.settle('g', null, refs(topic, 0), { kind: 'ack' });
    assert.deepEqual(await claim(null, 3), []);
  });

  it("releases a member's claims when it leaves or misses its session", async (t) => {
    const { broker, topic, queue, scheduler } = await setup(t, { visibilityTimeoutMs: 60_000 });
    const claim = claimer(queue, topic);
    await publish(broker, topic, ['a', 'b']);
    await queue.join('g', 'm1', 1_000);
    await queue.join('g', 'm2', 100_000);
    assert.deepEqual(seen(await claim('m1', 1)), [[0, 1, 'a']]);
    scheduler.advance(999);
    assert.equal(await queue.heartbeat('g', 'm1'), 'none');
    scheduler.advance(1_000);
    assert.deepEqual(await queue.members('g'), ['m2'], 'm1 missed its session');
    assert.deepEqual(seen(await claim('m2', 1)), [[0, 2, 'a']], "m1's claim went back at once");
    assert.deepEqual(seen(await claim('m2', 1)), [[1, 1, 'b']]);
    assert.equal(await queue.join('g', 'm3', 100_000), 'none');
    assert.equal(await queue.leave('g', 'm2'), 'none');
    assert.deepEqual(seen(await claim('m3', 5)), [[0, 3, 'a'], [1, 2, 'b']]);
    assert.equal(await queue.leave('g', 'm2'), 'unknown_member');
  });

  it('tracks at most claimsMax records per partition', async (t) => {
    const { broker, topic, queue } = await setup(t, { claimsMax: 2 });
    const claim = claimer(queue, topic);
    await publish(broker, topic, ['a', 'b', 'c', 'd']);
    assert.deepEqual(seen(await claim(null, 10)).map((s) => s[0]), [0, 1]);
    await queue.settle('g', null, refs(topic, 1), { kind: 'ack' });
    assert.deepEqual(await claim(null, 10), [], 'the ack above the unsettled offset 0 still counts');
    await queue.settle('g', null, refs(topic, 0), { kind: 'ack' });
    assert.deepEqual(seen(await claim(null, 10)).map((s) => s[0]), [2, 3]);
  });

  it('a long poll wakes up on an append, a release and a lapsed claim', async (t) => {
    const { broker, topic, queue, scheduler } = await setup(t);
    const claim = claimer(queue, topic);
    const waiting = claim(null, 5, { waitMs: 20_000 });
    await publish(broker, topic, ['late']);
    assert.deepEqual(seen(await waiting), [[0, 1, 'late']]);

    const waitingForNack = claim(null, 5, { waitMs: 20_000 });
    await queue.settle('g', null, refs(topic, 0), { kind: 'nack', delayMs: 0 });
    assert.deepEqual(seen(await waitingForNack), [[0, 2, 'late']]);

    const waitingForLapse = claim(null, 5, { waitMs: 20_000 });
    scheduler.advance(1_000);
    assert.deepEqual(seen(await waitingForLapse), [[0, 3, 'late']]);

    const abort = new AbortController();
    const aborted = claim(null, 5, { waitMs: 20_000, signal: abort.signal });
    abort.abort();
    assert.deepEqual(await aborted, [], 'an aborted long poll answers with nothing');
  });

  it('deletes a group without members (state and positions), and forgets a deleted topic', async (t) => {
    const { broker, topic, queue } = await setup(t);
    const claim = claimer(queue, topic);
    await publish(broker, topic, ['a', 'b']);
    await claim(null, 1);
    await queue.settle('g', null, refs(topic, 0), { kind: 'ack' });
    await queue.join('g', 'm', 10_000);
    assert.equal(await queue.deleteGroup('g'), 'group_not_empty');
    await queue.leave('g', 'm');
    assert.equal(await queue.deleteGroup('g'), 'none');
    assert.equal(await broker.offsets.fetch('test', 'g', topic.internalId, 0), null);
    assert.equal(await broker.groups.load('test.queue', 'g'), null);
    assert.deepEqual(seen(await claim(null, 5)), [[0, 1, 'a'], [1, 1, 'b']], 'a new group of the same name starts over');

    await queue.settle('g', null, refs(topic, 0), { kind: 'reject' });
    await broker.deleteTopic(topic);
    assert.deepEqual((await queue.deadLetters('g', topic.internalId, 0)).offsets, [], "the deleted topic's dead letters are gone");
    assert.equal(await queue.position('g', topic.internalId, 0), null);
  });

  it('refuses bad input with invalid_request or invalid_group_id and loses nothing', async (t) => {
    const { broker, topic, queue } = await setup(t);
    const claim = claimer(queue, topic);
    await publish(broker, topic, ['a']);
    await claim(null, 1);
    for (const delayMs of [Number.NaN, -1, Infinity]) {
      await assert.rejects(queue.settle('g', null, refs(topic, 0), { kind: 'nack', delayMs }), { code: 'invalid_request' });
    }
    await assert.rejects(queue.extend('g', null, refs(topic, 0), Number.NaN), { code: 'invalid_request' });
    await assert.rejects(queue.claim({ groupId: 'g', memberId: null, topic, recordsMax: 0 }), { code: 'invalid_request' });
    await assert.rejects(queue.claim({ groupId: 'g', memberId: null, topic, recordsMax: 1, partitions: [1] }), { code: 'unknown_partition' });
    assert.equal((await queue.claim({ groupId: '', memberId: null, topic, recordsMax: 1 })).error, 'invalid_group_id');
    assert.equal((await queue.claim({ groupId: 'x'.repeat(2_000), memberId: null, topic, recordsMax: 1 })).error, 'invalid_group_id');
    assert.equal(await queue.join('g', 'm', Number.NaN), 'invalid_session_timeout');
    assert.deepEqual((await queue.settle('g', null, refs(topic, 0), { kind: 'ack' })).results, ['none'], 'the claim survived the bad requests');
  });

  it('starts over in a partition whose log a purge replaced', async (t) => {
    const { broker, topic, queue } = await setup(t);
    const claim = claimer(queue, topic);
    await publish(broker, topic, ['a', 'b', 'c']);
    await claim(null, 3);
    await queue.settle('g', null, refs(topic, 0, 1, 2), { kind: 'ack' });
    await broker.purgeTopic(topic);
    await publish(broker, topic, ['new']);
    assert.deepEqual(seen(await claim(null, 3)), [[0, 1, 'new']]);
  });

  it('past groupsMax, unloads an idle group (its state comes back from the stores), never one with members or claims', async (t) => {
    const { broker, topic, clock, scheduler } = await setup(t);
    const waiters = new AppendWaiters();
    const queue = new QueueGroups({ broker, scope: 'small', clock, scheduler, waiters, config, groupsMax: 2 });
    t.after(() => {
      queue.close();
      waiters.close();
    });
    await publish(broker, topic, ['a', 'b']);
    const claimIn = async (groupId: string, memberId: string | null = null) => queue.claim({ groupId, memberId, topic, recordsMax: 1 });
    assert.deepEqual((await claimIn('idle')).claims.map((c) => c.offset), [0]);
    await queue.settle('idle', null, refs(topic, 0), { kind: 'ack' });
    await queue.join('busy', 'm', 10_000);
    assert.equal((await claimIn('third')).error, 'none', "'idle' was unloaded to make room");
    assert.equal((await claimIn('fourth')).error, 'unavailable', "'busy' has a member and 'third' a claim");
    await queue.settle('third', null, refs(topic, 0), { kind: 'ack' });
    assert.deepEqual((await claimIn('idle')).claims.map((c) => [c.offset, c.deliveryAttempt]), [[1, 1]], "'idle' reloaded at its position");
    assert.deepEqual(await queue.members('busy'), ['m']);
  });

  it('simulation: random claims, settlements, lapses and departures never give a record to two holders, nor an acked one again', async (t) => {
    for (const seed of [1, 2, 3, 4, 5]) await simulate(t, seed);
  });

  it('keeps the position, the acks above it, delivery counts and dead letters across a restart; claims are released', async (t) => {
    const dataDir = tempDir(t);
    const clock = new ManualClock(1_000_000);
    const scheduler = new ManualScheduler(clock);
    let broker = await openBroker(dataDir, clock, scheduler, false);
    const topic = await broker.createTopic('default', 'jobs', { partitions: 1 });
    await publish(broker, topic, ['a', 'b', 'c', 'd', 'e']);
    let waiters = new AppendWaiters();
    let queue = new QueueGroups({ broker, scope: 'test', clock, scheduler, waiters, config: { ...config, deliveryAttemptsMax: 2 } });
    assert.equal((await claimer(queue, topic)(null, 5)).length, 5);
    await queue.settle('g', null, refs(topic, 0, 2), { kind: 'ack' });
    await queue.settle('g', null, refs(topic, 3), { kind: 'reject' });
    queue.close();
    waiters.close();
    await broker.close();

    broker = await openBroker(dataDir, clock, scheduler, false);
    waiters = new AppendWaiters();
    queue = new QueueGroups({ broker, scope: 'test', clock, scheduler, waiters, config: { ...config, deliveryAttemptsMax: 2 } });
    try {
      assert.equal((await broker.offsets.fetch('test', 'g', topic.internalId, 0))?.offset, 1);
      assert.deepEqual((await queue.deadLetters('g', topic.internalId, 0)).offsets, [3]);
      assert.deepEqual(seen(await claimer(queue, topic)(null, 5)), [[1, 2, 'b'], [4, 2, 'e']], 'only the unsettled records, their deliveries counted');
      await queue.settle('g', null, refs(topic, 1, 4), { kind: 'nack', delayMs: 0 });
      assert.deepEqual((await queue.deadLetters('g', topic.internalId, 0)).offsets, [1, 3, 4], 'the second delivery was the last');
      assert.equal(await queue.position('g', topic.internalId, 0), 5);
    } finally {
      // Before the data directory goes (tempDir's own after hook).
      queue.close();
      waiters.close();
      await broker.close();
    }
  });
});

/** A small seeded PRNG (mulberry32): a failing run prints its seed and replays. */
function prng(seed: number): (bound: number) => number {
  const next = mulberry32(seed);
  return (bound) => Math.floor(next() * bound);
}

async function simulate(t: TestContext, seed: number): Promise<void> {
  const { broker, topic, queue, scheduler, clock } = await setup(t, { claimsMax: 8, deliveryAttemptsMax: 4 }, 2);
  const random = prng(seed);
  const members = ['m0', 'm1', 'm2'];
  for (const m of members) await queue.join('g', m, 1_000_000);
  // The model: who holds each offset and until when; what was acked.
  const holders = new Map<string, { member: string; deadlineMs: number }>();
  const acked = new Set<string>();
  let published = 0;
  const keyOf = (c: { partition: number; offset: number }) => `${c.partition}/${c.offset}`;
  for (let step = 0; step < 300; step++) {
    const member = members[random(members.length)]!;
    const op = random(10);
    const context = `seed ${seed} step ${step}`;
    if (op < 2) {
      const partition = random(2);
      await publish(broker, topic, [`r${published++}`], partition);
    } else if (op < 5) {
      for (const c of await claimer(queue, topic)(member, 1 + random(4))) {
        const key = keyOf(c);
        assert.ok(!acked.has(key), `${context}: ${key} delivered after its ack`);
        const held = holders.get(key);
        assert.ok(held === undefined || held.deadlineMs <= clock.now(), `${context}: ${key} claimed while ${held?.member} holds it`);
        holders.set(key, { member, deadlineMs: c.visibleAtMs });
      }
    } else if (op < 9) {
      const mine = [...holders].filter(([, h]) => h.member === member);
      const pick = mine[random(mine.length + 1)];
      const key = pick?.[0] ?? `${random(2)}/${random(published + 1)}`;
      const [partition, offset] = key.split('/').map(Number) as [number, number];
      const kind = (['ack', 'ack', 'nack', 'reject'] as const)[random(4)]!;
      const how = kind === 'nack' ? { kind, delayMs: random(3) * 100 } : { kind };
      const { results } = await queue.settle('g', member, [{ topicInternalId: topic.internalId, partition, offset }], how);
      const held = holders.get(key);
      const valid = held !== undefined && held.member === member && held.deadlineMs > clock.now();
      assert.equal(results[0], valid ? 'none' : 'stale_claim', `${context}: settling ${key}`);
      if (valid) holders.delete(key);
      if (valid && kind === 'ack') acked.add(key);
    } else {
      scheduler.advance(random(1_500));
    }
  }
  // Drain: everything published ends acked or dead-lettered, and the positions reach the ends.
  for (let round = 0; round < 200; round++) {
    scheduler.advance(1_000);
    const claims = await claimer(queue, topic)('m0', 100);
    if (claims.length === 0 && holders.size === 0) break;
    for (const c of claims) holders.set(keyOf(c), { member: 'm0', deadlineMs: c.visibleAtMs });
    const { results } = await queue.settle('g', 'm0', claims, { kind: 'ack' });
    assert.ok(results.every((r) => r === 'none'), `seed ${seed}: draining acks`);
    for (const c of claims) {
      acked.add(keyOf(c));
      holders.delete(keyOf(c));
    }
    for (const [key, h] of [...holders]) if (h.deadlineMs <= clock.now()) holders.delete(key);
  }
  let settled = acked.size;
  for (const partition of [0, 1]) {
    const dead = (await queue.deadLetters('g', topic.internalId, partition)).offsets;
    for (const offset of dead) assert.ok(!acked.has(`${partition}/${offset}`), `seed ${seed}: ${partition}/${offset} both acked and dead`);
    settled += dead.length;
    const end = broker.reads.open(topic, partition).position().highWatermark;
    assert.equal(await queue.position('g', topic.internalId, partition), end, `seed ${seed}: partition ${partition} fully settled`);
  }
  assert.equal(settled, published, `seed ${seed}: every record acked or dead-lettered`);
}
