import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TaskSlots } from '../../src/log/task-slots.js';

/** A task that runs until its `finish` is called. */
function heldTask(log: string[], name: string) {
  let finish!: (value: string) => void;
  let fail!: (error: Error) => void;
  const done = new Promise<string>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  return {
    task: async () => {
      log.push(`start ${name}`);
      return done;
    },
    finish: () => finish(name),
    fail: () => fail(new Error(`${name} failed`)),
  };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('TaskSlots', () => {
  it('runs at most max tasks at once and starts the rest in arrival order as slots free', async () => {
    const slots = new TaskSlots(2);
    const log: string[] = [];
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((n) => heldTask(log, n));
    const outcomes = Promise.allSettled([a, b, c, d].map((t) => slots.run(t!.task)));
    await settle();
    assert.deepEqual(log, ['start a', 'start b']);
    assert.equal(slots.active, 2);
    assert.equal(slots.queued, 2);
    b!.finish();
    await settle();
    assert.deepEqual(log, ['start a', 'start b', 'start c']);
    assert.equal(slots.active, 2);
    a!.fail();
    await settle();
    assert.deepEqual(log, ['start a', 'start b', 'start c', 'start d'], 'a failed task frees its slot too');
    c!.finish();
    d!.finish();
    assert.deepEqual((await outcomes).map((x) => x.status), ['rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
    assert.equal(slots.active, 0);
    assert.equal(slots.queued, 0);
  });

  it('drops a scheduled task that has not started when it is cancelled; a started one runs on', async () => {
    const slots = new TaskSlots(1);
    const log: string[] = [];
    const [a, b, c] = ['a', 'b', 'c'].map((n) => heldTask(log, n));
    const first = slots.schedule(a!.task);
    const second = slots.schedule(b!.task);
    const third = slots.schedule(c!.task);
    await settle();
    assert.equal(first.cancel(), false, 'a running task is not cancelled');
    assert.equal(second.cancel(), true);
    assert.equal(second.cancel(), false, 'only once');
    assert.equal(await second.done, undefined);
    assert.equal(slots.queued, 1);
    a!.finish();
    await settle();
    assert.deepEqual(log, ['start a', 'start c'], 'the slot went to the next task still waiting');
    c!.finish();
    assert.deepEqual([await first.done, await third.done], ['a', 'c']);
    assert.equal(slots.active, 0);
  });

  it('refuses a bound below one', () => {
    assert.throws(() => new TaskSlots(0), RangeError);
    assert.throws(() => new TaskSlots(1.5), RangeError);
  });
});
