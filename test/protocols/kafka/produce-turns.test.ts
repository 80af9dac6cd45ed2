// AppendTurns: appends to a partition start in call order even when some wait for a worker;
// other partitions do not wait; a failed preparation answers through `failed` and frees the turn.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppendTurns } from '../../../src/protocols/kafka/produce-turns.js';

function deferred<T>(): { promise: Promise<T>; resolve(v: T): void; reject(e: unknown): void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe('AppendTurns', () => {
  it('appends at once when nothing waits, and keeps later appends behind a deferred one', async () => {
    const turns = new AppendTurns();
    const order: string[] = [];
    const append = (v: string) => (order.push(v), v);
    assert.equal(turns.run('p', 'a', append, () => 'failed'), 'a', 'synchronous when nothing is pending');
    const slow = deferred<string>();
    const b = turns.run('p', slow.promise, append, () => 'failed');
    const c = turns.run('p', 'c', append, () => 'failed');
    const other = turns.run('q', 'x', append, () => 'failed');
    assert.equal(other, 'x', 'another partition does not wait');
    assert.deepEqual(order, ['a', 'x']);
    slow.resolve('b');
    assert.deepEqual(await Promise.all([b, c]), ['b', 'c']);
    assert.deepEqual(order, ['a', 'x', 'b', 'c']);
    assert.equal(turns.pending, 0);
  });

  it('answers a failed preparation through failed() and lets the next append go', async () => {
    const turns = new AppendTurns();
    const order: string[] = [];
    const broken = deferred<string>();
    const first = turns.run('p', broken.promise, (v: string) => (order.push(v), v), (e) => `failed: ${(e as Error).message}`);
    const second = turns.run('p', 'next', (v: string) => (order.push(v), v), () => 'failed');
    broken.reject(new Error('worker died'));
    assert.deepEqual(await Promise.all([first, second]), ['failed: worker died', 'next']);
    assert.deepEqual(order, ['next']);
    assert.equal(turns.pending, 0);
  });
});
