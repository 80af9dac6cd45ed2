import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ManualClock } from '../../../src/base/clock.js';
import type { ServerSideAssignor } from '../../../src/core/groups/assignors.js';
import { newServerSideGroup, ServerSideGroups, type ServerSideGroup } from '../../../src/core/groups/server-side.js';
import { ManualScheduler } from '../../../src/core/scheduler.js';

function setup(over: { membersPerGroupMax?: number; assignor?: ServerSideAssignor } = {}) {
  const clock = new ManualClock(10_000);
  const scheduler = new ManualScheduler(clock);
  const expired: string[] = [];
  const engine = new ServerSideGroups<string>({
    clock,
    scheduler,
    rebalancingTimeoutMs: 5_000,
    membersPerGroupMax: over.membersPerGroupMax ?? 100,
    onSessionExpired: (_group, memberId) => void expired.push(memberId),
    ...(over.assignor ? { assignor: over.assignor } : {}),
  });
  return { clock, scheduler, engine, expired, group: newServerSideGroup<string>() };
}

/** member → its partitions, for members that own any. */
function owners(group: ServerSideGroup<string>): Record<string, number[]> {
  return Object.fromEntries([...group.members.values()].map((m) => [m.memberId, m.partitions]));
}

/** Every partition owned by exactly one member. */
function assertCoversOnce(group: ServerSideGroup<string>, partitions: number): void {
  const all = [...group.members.values()].flatMap((m) => m.partitions).sort((a, b) => a - b);
  assert.deepEqual(all, Array.from({ length: group.members.size === 0 ? 0 : partitions }, (_, p) => p));
}

describe('ServerSideGroups', () => {
  it('restore puts back a generation and members with their partitions, without a rebalance, each with a fresh session window', () => {
    const { engine, group, scheduler, expired } = setup();
    engine.restore(group, 7n, 4, [{ memberId: 'a', partitions: [0, 1] }, { memberId: 'b', partitions: [1, 2, 3, 9] }], 1_000);
    assert.equal(group.generation, 7n, 'no new generation');
    assert.deepEqual(owners(group), { a: [0, 1], b: [2, 3] }, 'a partition owned twice, or past the count, is dropped');
    assert.deepEqual(group.members.get('b')!.pollable, [2, 3]);
    assert.equal(engine.validate(group, 'a', 7n), 'none');
    scheduler.advance(999);
    assert.equal(engine.heartbeat(group, 'a', 7n), 'none');
    scheduler.advance(1);
    assert.deepEqual(expired, ['b'], 'b missed its window');
    assert.equal(group.generation, 8n);
    assert.deepEqual(owners(group), { a: [0, 1, 2, 3] });
    assert.throws(() => engine.restore(group, 1n, 4, []), /empty group/);
  });

  it('bumps the generation on every join and leave, and reassigns', () => {
    const { engine, group } = setup();
    assert.equal(engine.join(group, 'a', 4), 'none');
    assert.equal(group.generation, 1n);
    assert.deepEqual(owners(group), { a: [0, 1, 2, 3] });
    assert.equal(engine.join(group, 'a', 4), 'none', 'joining again is a no-op');
    assert.equal(group.generation, 1n);
    engine.join(group, 'b', 4);
    assert.equal(group.generation, 2n);
    assert.deepEqual(owners(group), { a: [0, 1], b: [2, 3] });
    assert.equal(engine.leave(group, 'a', 4), 'none');
    assert.equal(group.generation, 3n);
    assert.deepEqual(owners(group), { b: [0, 1, 2, 3] });
    assert.equal(engine.leave(group, 'a', 4), 'unknown_member');
    assert.equal(group.generation, 3n);
  });

  it('removes a member that misses its session timeout, and rebalances', () => {
    const { engine, group, scheduler, expired } = setup();
    engine.join(group, 'a', 3, 1_000);
    engine.join(group, 'b', 3, 1_000);
    assert.equal(group.generation, 2n);
    scheduler.advance(900);
    assert.equal(engine.heartbeat(group, 'a', 2n), 'none');
    scheduler.advance(100);
    assert.deepEqual(expired, ['b'], 'b sent nothing for its session timeout');
    assert.equal(group.members.has('b'), false);
    assert.equal(group.generation, 3n, 'a rebalance followed');
    assert.deepEqual(owners(group), { a: [0, 1, 2] });
    scheduler.advance(899);
    assert.deepEqual(expired, ['b'], 'a heartbeat pushed a past the first deadline');
    scheduler.advance(1);
    assert.deepEqual(expired, ['b', 'a']);
    assert.equal(group.members.size, 0);
    assert.equal(scheduler.pendingCount, 0);
  });

  it('a member that leaves takes its session timer with it', () => {
    const { engine, group, scheduler, expired } = setup();
    engine.join(group, 'a', 1, 1_000);
    engine.leave(group, 'a', 1);
    assert.equal(scheduler.pendingCount, 0);
    scheduler.advance(5_000);
    assert.deepEqual(expired, []);
  });

  it('refuses a stale generation and an unknown member (fencing); a refused heartbeat keeps nobody alive', () => {
    const { engine, group, scheduler, expired } = setup();
    engine.join(group, 'a', 2, 1_000);
    assert.equal(engine.validate(group, 'a', 1n), 'none');
    engine.join(group, 'b', 2, 1_000);
    assert.equal(engine.validate(group, 'a', 1n), 'stale_generation', 'a missed the rebalance b caused');
    assert.equal(engine.validate(group, 'a', 2n), 'none');
    assert.equal(engine.validate(group, 'c', 2n), 'unknown_member');
    scheduler.advance(999);
    assert.equal(engine.heartbeat(group, 'a', 1n), 'stale_generation');
    scheduler.advance(1);
    assert.deepEqual(expired.sort(), ['a', 'b'], 'the stale heartbeat did not push a');
    assert.equal(engine.owns(group, 'a', 0), false);
  });

  it('refuses members over the limit', () => {
    const { engine, group } = setup({ membersPerGroupMax: 2 });
    engine.join(group, 'a', 1);
    engine.join(group, 'b', 1);
    assert.equal(engine.join(group, 'c', 1), 'group_full');
    assert.equal(group.members.size, 2);
    assert.equal(group.generation, 2n);
  });

  it('holds a partition with records in flight until its owner commits them, then hands it over', () => {
    const { engine, group } = setup();
    engine.join(group, 'a', 2);
    engine.served(group, 1, 41);
    engine.join(group, 'b', 2);
    const gen = group.generation;
    assert.deepEqual(owners(group), { a: [0, 1], b: [] }, 'a still owns 1 (for its commit)');
    assert.deepEqual(group.members.get('a')!.pollable, [0], 'but no longer polls it');
    assert.equal(engine.owns(group, 'a', 1), true);
    engine.committed(group, 1, 40);
    assert.deepEqual(owners(group), { a: [0, 1], b: [] }, 'not drained yet');
    engine.committed(group, 1, 41);
    assert.deepEqual(owners(group), { a: [0], b: [1] });
    assert.equal(group.generation, gen + 1n, 'the hand-off is a new generation');
    assert.deepEqual(group.members.get('b')!.pollable, [1]);
  });

  it('completes a pending hand-off after the rebalancing timeout, on an offset deletion, or on a purge', () => {
    for (const complete of ['timeout', 'offsetDeleted', 'purged'] as const) {
      const { engine, group, clock } = setup();
      engine.join(group, 'a', 2);
      engine.served(group, 1, 7);
      engine.join(group, 'b', 2);
      assert.deepEqual(group.members.get('b')!.partitions, [], complete);
      if (complete === 'timeout') {
        clock.advance(4_999);
        engine.expireRevocations(group);
        assert.deepEqual(group.members.get('b')!.partitions, [], 'not before the deadline');
        clock.advance(1);
        engine.expireRevocations(group);
      } else if (complete === 'offsetDeleted') {
        engine.offsetDeleted(group, 1);
      } else {
        engine.purged(group);
      }
      assert.deepEqual(owners(group), { a: [0], b: [1] }, complete);
    }
  });

  it('covers every partition exactly once through any sequence of joins, leaves, expiries and partition changes', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('join' as const), member: fc.integer({ min: 0, max: 6 }), session: fc.boolean() }),
      fc.record({ kind: fc.constant('leave' as const), member: fc.integer({ min: 0, max: 6 }) }),
      fc.record({ kind: fc.constant('partitions' as const), count: fc.integer({ min: 0, max: 24 }) }),
      fc.record({ kind: fc.constant('serve' as const), partition: fc.integer({ min: 0, max: 23 }), offset: fc.integer({ min: 0, max: 100 }) }),
      fc.record({ kind: fc.constant('commit' as const), partition: fc.integer({ min: 0, max: 23 }), offset: fc.integer({ min: 0, max: 100 }) }),
      fc.record({ kind: fc.constant('time' as const), ms: fc.integer({ min: 0, max: 3_000 }) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 24 }), fc.array(op, { maxLength: 40 }), (initial, ops) => {
        const { engine, group, scheduler } = setup();
        let partitions = initial;
        let generation = group.generation;
        for (const o of ops) {
          if (o.kind === 'join') engine.join(group, `m${o.member}`, partitions, o.session ? 2_000 : undefined);
          else if (o.kind === 'leave') engine.leave(group, `m${o.member}`, partitions);
          else if (o.kind === 'partitions') engine.rebalance(group, (partitions = o.count));
          else if (o.kind === 'serve' && o.partition < partitions) engine.served(group, o.partition, o.offset);
          else if (o.kind === 'commit' && o.partition < partitions) engine.committed(group, o.partition, o.offset);
          else if (o.kind === 'time') {
            scheduler.advance(o.ms);
            engine.expireRevocations(group);
          }
          assertCoversOnce(group, partitions);
          assert.ok(group.generation >= generation, 'generations never go back');
          generation = group.generation;
          for (const m of group.members.values()) {
            assert.deepEqual(m.pollable, m.partitions.filter((p) => !group.revocations.has(p)));
            for (const [p, r] of group.revocations) assert.ok(group.members.has(r.target) && p < partitions);
          }
        }
      }),
    );
  });

  it('renumbers: owners follow their partitions when a flat list of several topics changes', () => {
    // Flat list [a:0, a:1, b:0, b:1]; then topic `a` grows one partition: [a:0, a:1, a:2, b:0, b:1].
    const { engine, group } = setup();
    engine.join(group, 'x', 4);
    engine.join(group, 'y', 4);
    assert.deepEqual(owners(group), { x: [0, 1], y: [2, 3] });
    const gen = group.generation;
    engine.renumber(group, 5, (old) => (old < 2 ? old : old + 1));
    assert.equal(group.generation, gen + 1n, 'a new generation');
    assert.deepEqual(owners(group), { x: [0, 1, 2], y: [3, 4] }, 'b:0 and b:1 (now 3 and 4) stay with y; the new a:2 goes to a member');
    assertCoversOnce(group, 5);
    // Topic `a` goes: [b:0, b:1].
    engine.renumber(group, 2, (old) => (old >= 3 ? old - 3 : undefined));
    assert.deepEqual(owners(group), { x: [1], y: [0] }, 'y keeps b:0 and gives up its highest, b:1, to x, which lost all of `a`');
    assertCoversOnce(group, 2);
  });

  it('renumbers hand-offs and positions with their partitions, and refuses a numbering that is not one', () => {
    const { engine, group } = setup();
    engine.join(group, 'a', 2);
    engine.served(group, 1, 9);
    engine.join(group, 'b', 2);
    assert.equal(group.revocations.has(1), true, 'partition 1 is pending, a has records in flight');
    // A new first partition: old 0 → 1, old 1 → 2.
    engine.renumber(group, 3, (old) => old + 1);
    assert.deepEqual([...group.revocations.keys()], [2], 'the hand-off moved with its partition');
    assert.deepEqual([...group.served], [[2, 9]]);
    assert.equal(engine.owns(group, 'a', 2), true, 'a still owns it until it commits');
    engine.committed(group, 2, 9);
    assert.equal(engine.owns(group, 'b', 2), true, 'drained: handed over under its new number');
    assertCoversOnce(group, 3);
    assert.throws(() => engine.renumber(group, 3, () => 0), /two partitions renumbered to 0/);
    assert.throws(() => engine.renumber(group, 3, () => 3), /outside/);
  });

  it('takes its assignment from a pluggable assignor', () => {
    // Everything to the latest member: not what the default would do.
    const latest: ServerSideAssignor = (members, _current, partitions) => Array.from({ length: partitions }, () => members[members.length - 1]!);
    const { engine, group } = setup({ assignor: latest });
    engine.join(group, 'a', 3);
    engine.join(group, 'b', 3);
    assert.deepEqual(owners(group), { a: [], b: [0, 1, 2] });
  });
});
