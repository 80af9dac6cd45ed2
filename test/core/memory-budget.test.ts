import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryBudget, bufferedBytes } from '../../src/core/memory-budget.js';

describe('MemoryBudget', () => {
  it('grants what it has left, and nothing once spent', () => {
    const budget = new MemoryBudget(100);
    const a = budget.reserve(60);
    assert.equal(a.bytes, 60);
    const b = budget.reserve(60);
    assert.equal(b.bytes, 40, 'what is left');
    const c = budget.reserve(10);
    assert.equal(c.bytes, 0, 'spent: the read reads one batch');
    assert.equal(budget.heldBytes, 100);
    assert.equal(budget.openReservations, 3);
  });

  it('settles to what the read took, over the grant included, and gives it all back on release', () => {
    const budget = new MemoryBudget(100);
    const a = budget.reserve(100);
    a.settle(30);
    assert.equal(budget.heldBytes, 30);
    const b = budget.reserve(0);
    assert.equal(b.grow(1_000), 70);
    // The one batch a spent read returns is counted.
    b.settle(120);
    assert.equal(budget.heldBytes, 150);
    assert.equal(budget.peakHeldBytes, 150);
    assert.equal(budget.availableBytes, 0);
    a.release();
    a.release();
    b.release();
    assert.equal(budget.heldBytes, 0);
    assert.equal(budget.openReservations, 0);
    assert.equal(b.grow(10), 0, 'a released reservation takes nothing');
    budget.resetPeak();
    assert.equal(budget.peakHeldBytes, 0);
  });

  it('counts buffers, not file slices', () => {
    assert.equal(bufferedBytes([Buffer.alloc(10), { length: 1_000 }, Buffer.alloc(5)]), 15);
  });

  it('refuses a budget that is not a non-negative integer', () => {
    assert.throws(() => new MemoryBudget(-1), RangeError);
    assert.throws(() => new MemoryBudget(1.5), RangeError);
  });
});
