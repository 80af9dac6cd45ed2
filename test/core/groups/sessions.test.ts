import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../../src/base/clock.js';
import { newMemberSession, SessionTimers } from '../../../src/core/groups/sessions.js';
import { ManualScheduler } from '../../../src/core/scheduler.js';

function setup() {
  const clock = new ManualClock(1_000);
  const scheduler = new ManualScheduler(clock);
  return { clock, scheduler, timers: new SessionTimers(clock, scheduler) };
}

describe('SessionTimers', () => {
  it('expires a member at its deadline, and a touch before it pushes the deadline without a new timer', () => {
    const { scheduler, timers } = setup();
    const session = newMemberSession();
    const expired: number[] = [];
    const expiry = { isCurrent: () => true, expired: (now: number) => void expired.push(now) };
    timers.touch(session, 100, expiry);
    assert.equal(session.sessionDeadlineMs, 1_100);
    scheduler.advance(60);
    timers.touch(session, 100, expiry);
    assert.equal(session.sessionDeadlineMs, 1_160);
    assert.equal(scheduler.pendingCount, 1, 'the armed timer is reused (it re-arms when it fires)');
    scheduler.advance(99);
    assert.deepEqual(expired, [], 'not at the old deadline');
    scheduler.advance(1);
    assert.deepEqual(expired, [1_160]);
    assert.equal(scheduler.pendingCount, 0);
  });

  it('an earlier deadline arms a new timer; cancel and a member no longer current stop it', () => {
    const { scheduler, timers } = setup();
    const session = newMemberSession();
    const expired: number[] = [];
    let current = true;
    const expiry = { isCurrent: () => current, expired: (now: number) => void expired.push(now) };
    timers.touch(session, 1_000, expiry);
    timers.touch(session, 10, expiry);
    scheduler.advance(10);
    assert.deepEqual(expired, [1_010], 'the shorter timeout wins');
    timers.touch(session, 10, expiry);
    timers.cancel(session);
    scheduler.advance(100);
    assert.deepEqual(expired, [1_010], 'cancelled');
    timers.touch(session, 10, expiry);
    current = false;
    scheduler.advance(100);
    assert.deepEqual(expired, [1_010], 'a removed member does not expire');
  });
});
