import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { transferableOf, WorkerPool, WorkerTaskError } from '../../src/base/worker-pool.js';

const tasks = import.meta.resolve('../fixtures/worker-tasks.js');

describe('WorkerPool', { timeout: 30_000 }, () => {
  const pool = new WorkerPool({ threads: 2, queueMax: 4 });
  after(() => pool.close());

  it('runs a function of a module by URL and transfers the buffers it hands over', async () => {
    const input = Buffer.allocUnsafeSlow(64 * 1024);
    for (let i = 0; i < input.length; i++) input[i] = i & 0xff;
    const expected = Buffer.from(input).reverse();
    const out = await pool.tryRun<Uint8Array>(tasks, 'reversed', [input], transferableOf(input));
    assert.equal(input.buffer.byteLength, 0, 'the input was transferred, not copied');
    assert.ok(out !== null);
    assert.deepEqual(Buffer.from(out), expected);
  });

  it('fails a task that throws with its message, and goes on', async () => {
    await assert.rejects(pool.tryRun(tasks, 'fails', ['bad input'])!, (err: unknown) => err instanceof WorkerTaskError && err.code === 'task_failed' && /bad input/.test(err.message));
    await assert.rejects(pool.tryRun(tasks, 'missing', [])!, /exports no function missing/);
    assert.equal(await pool.tryRun<number>(tasks, 'spins', [0]), 0);
  });

  it('fails the task of a worker that dies, replaces the worker and runs the next', async () => {
    await assert.rejects(pool.tryRun(tasks, 'crashes', [])!, (err: unknown) => err instanceof WorkerTaskError && err.code === 'worker_crashed');
    const results = await Promise.all([1, 2, 3].map(() => pool.tryRun<number>(tasks, 'spins', [1])!));
    assert.equal(results.length, 3);
  });

  it('answers null once the queue is full, and runs what it queued', async () => {
    const running = [0, 1, 2, 3, 4, 5].map(() => pool.tryRun<number>(tasks, 'spins', [20]));
    assert.ok(running.every((r) => r !== null), 'two running and four queued');
    assert.equal(pool.tryRun(tasks, 'spins', [0]), null);
    await Promise.all(running);
    assert.equal(pool.pending, 0);
  });

  it('fails what is still running or queued when it closes', async () => {
    const own = new WorkerPool({ threads: 1, queueMax: 1 });
    const running = own.tryRun(tasks, 'spins', [2_000])!;
    const queued = own.tryRun(tasks, 'spins', [0])!;
    const failed = Promise.all([assert.rejects(running, /closed/), assert.rejects(queued, /closed/)]);
    await own.close();
    await failed;
    await assert.rejects(own.tryRun(tasks, 'spins', [0])!, /closed/);
  });
});
