// The broker-wide request byte budget and a framer's part in it (src/base/request-bytes.ts):
// frames that do not fit wait, first come first served; every byte taken comes back on release,
// on a dropped frame and on a closed connection, whether it held bytes or waited for them.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FrameAdmission, RequestByteBudget } from '../../src/base/request-bytes.js';

const KiB = 1024;

/** Resolves after pending process.nextTick callbacks (grants are delivered on one). */
const ticked = (): Promise<void> => new Promise((resolve) => process.nextTick(resolve));

describe('RequestByteBudget', () => {
  it('takes what fits, queues the rest and serves the queue in arrival order as bytes come back', async () => {
    const budget = new RequestByteBudget(100);
    assert.equal(budget.take(60), true);
    assert.equal(budget.take(50), false);
    const granted: string[] = [];
    budget.wait(50, () => granted.push('first'));
    budget.wait(10, () => granted.push('second'));
    // A small taker does not jump the queue, though it would fit.
    assert.equal(budget.take(10), false);
    assert.equal(budget.waiting, 2);
    assert.equal(budget.waitsTotal, 2);
    budget.give(60);
    assert.equal(budget.heldBytes, 60, 'both waiters fit once the 60 bytes are back');
    assert.deepEqual(granted, [], 'grants arrive on a later tick');
    await ticked();
    assert.deepEqual(granted, ['first', 'second']);
    assert.equal(budget.waiting, 0);
    assert.equal(budget.peakHeldBytes, 60);
  });

  it('a waiter that leaves the queue is never granted and holds nothing', async () => {
    const budget = new RequestByteBudget(100);
    budget.take(100);
    let granted = false;
    const leave = budget.wait(100, () => (granted = true));
    leave();
    budget.give(100);
    await ticked();
    assert.equal(granted, false);
    assert.equal(budget.heldBytes, 0);
  });
});

describe('FrameAdmission', () => {
  it('budgets frames from the minimum up and gives their bytes back when released', () => {
    const budget = new RequestByteBudget(256 * KiB);
    const admission = new FrameAdmission<object>(budget);
    assert.equal(admission.admit(64 * KiB - 1), true);
    admission.completed({});
    assert.equal(budget.heldBytes, 0, 'a small frame takes nothing');
    assert.equal(admission.admit(100 * KiB), true);
    const frame = {};
    admission.completed(frame);
    assert.equal(budget.heldBytes, 100 * KiB);
    admission.release(frame);
    admission.release(frame);
    assert.equal(budget.heldBytes, 0, 'released once, given back once');
  });

  it('waits when the budget is short, keeps its input, and is told once its bytes are taken', async () => {
    const budget = new RequestByteBudget(128 * KiB);
    const holder = new FrameAdmission<object>(budget);
    const waiter = new FrameAdmission<object>(budget);
    let told = 0;
    waiter.onGranted = () => told++;
    assert.equal(holder.admit(100 * KiB), true);
    const held = {};
    holder.completed(held);
    assert.equal(waiter.admit(100 * KiB), false);
    assert.equal(waiter.waiting, true);
    waiter.keep(Buffer.from('ab'));
    waiter.keep(Buffer.from('cd'));
    holder.release(held);
    await ticked();
    assert.equal(told, 1);
    assert.equal(waiter.waiting, false);
    assert.equal(budget.heldBytes, 100 * KiB, 'the waiter holds its frame now');
    assert.equal(waiter.takeKept().toString(), 'abcd');
    waiter.dispose();
    assert.equal(budget.heldBytes, 0, 'a closed connection gives back the frame it was assembling');
  });

  it('a connection closed while waiting, or between its grant and the news of it, holds nothing', async () => {
    const budget = new RequestByteBudget(128 * KiB);
    const holder = new FrameAdmission<object>(budget);
    assert.equal(holder.admit(128 * KiB), true);
    const waiting = new FrameAdmission<object>(budget);
    assert.equal(waiting.admit(64 * KiB), false);
    waiting.dispose();
    assert.equal(budget.waiting, 0);
    const granted = new FrameAdmission<object>(budget);
    let told = false;
    granted.onGranted = () => (told = true);
    assert.equal(granted.admit(64 * KiB), false);
    holder.dispose();
    assert.equal(budget.heldBytes, 64 * KiB, 'taken for the waiter at once');
    granted.dispose();
    await ticked();
    assert.equal(told, false);
    assert.equal(budget.heldBytes, 0);
  });

  it('a frame larger than the whole budget waits for all of it instead of forever', async () => {
    const budget = new RequestByteBudget(128 * KiB);
    const small = new FrameAdmission<object>(budget);
    assert.equal(small.admit(64 * KiB), true);
    const big = new FrameAdmission<object>(budget);
    let told = false;
    big.onGranted = () => (told = true);
    assert.equal(big.admit(1024 * KiB), false);
    small.dispose();
    await ticked();
    assert.equal(told, true);
    assert.equal(budget.heldBytes, 128 * KiB);
  });
});
