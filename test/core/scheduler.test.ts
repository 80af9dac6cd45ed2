import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/base/clock.js';
import { ManualScheduler } from '../../src/core/scheduler.js';

describe('ManualScheduler', () => {
  it('fires due timers in deadline order, with the clock at each deadline', () => {
    const clock = new ManualClock(0);
    const scheduler = new ManualScheduler(clock);
    const fired: string[] = [];
    scheduler.schedule(30, () => fired.push(`c@${clock.now()}`));
    scheduler.schedule(10, () => fired.push(`a@${clock.now()}`));
    scheduler.schedule(10, () => fired.push(`b@${clock.now()}`));
    scheduler.advance(20);
    assert.deepEqual(fired, ['a@10', 'b@10']);
    assert.equal(clock.now(), 20);
    scheduler.advance(10);
    assert.deepEqual(fired, ['a@10', 'b@10', 'c@30']);
    assert.equal(scheduler.pendingCount, 0);
  });

  it('runs timers scheduled by callbacks inside the window and skips cancelled ones', () => {
    const clock = new ManualClock(0);
    const scheduler = new ManualScheduler(clock);
    const fired: number[] = [];
    scheduler.schedule(5, () => scheduler.schedule(5, () => fired.push(clock.now())));
    const cancelled = scheduler.schedule(7, () => fired.push(-1));
    cancelled.cancel();
    scheduler.advance(10);
    assert.deepEqual(fired, [10]);
  });
});
