import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BufferLease } from '../../src/base/buffer-pool.js';

describe('BufferLease', () => {
  it('never hands a buffer to a second lease before the first releases it', () => {
    const a = new BufferLease();
    const b = new BufferLease();
    const first = a.buffer(1024 * 1024);
    const second = b.buffer(1024 * 1024);
    assert.notEqual(first.buffer, second.buffer, 'two live leases never share memory');
    first.fill(1);
    second.fill(2);
    assert.equal(first[0], 1, 'writes through one lease do not show through the other');
    b.release();
    a.release();
  });

  it('reuses released buffers instead of allocating new ones', () => {
    // The pool is process-wide: whatever it held before, after releasing these two the next
    // lease of a size that fits takes one of them.
    const a = new BufferLease();
    const released = new Set([a.buffer(512 * 1024).buffer, a.buffer(512 * 1024).buffer]);
    a.release();
    const b = new BufferLease();
    const again = b.buffer(300 * 1024);
    assert.equal(again.length, 300 * 1024, 'a view of exactly the asked length');
    const c = new BufferLease();
    const other = c.buffer(300 * 1024);
    assert.ok(released.has(again.buffer) || released.has(other.buffer), 'a released buffer was taken again');
    assert.notEqual(again.buffer, other.buffer, 'two live leases never share a buffer');
    b.release();
    b.release(); // idempotent: the buffer goes back once
    c.release();
    const d = new BufferLease();
    const e = new BufferLease();
    assert.notEqual(d.buffer(300 * 1024).buffer, e.buffer(300 * 1024).buffer, 'a double release did not pool a buffer twice');
    d.release();
    e.release();
  });
});
