// recycledBuffer (src/base/native.ts): Buffers whose memory goes back to the addon's free list once V8 has
// collected them, and is handed out again by a later call. These check that memory is reused only
// after the Buffer (and every view of it) is gone, never while a view is still reachable; that a
// reused Buffer exposes exactly the length asked for; that no block more than twice the size asked
// for is handed out; and that the list stays within its bounds (the oldest blocks evicted). The
// free list is process-wide, so every check is relative to the counters before it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { nativeStatus, recycledBuffer, recycledBufferBytesMin, recycledBufferStats, type RecycledBufferStats } from '../../src/base/native.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const notBuilt = 'native addon not built: run `npm install` (node-gyp, g++ and make)';
const MiB = 2 ** 20;

function stats(): RecycledBufferStats {
  const s = recycledBufferStats();
  assert.ok(s !== null, 'the addon is loaded');
  return s;
}

/**
 * Makes `count` recycled buffers of `length` bytes, writes `fill` into them and drops them; then
 * collects garbage until the addon's finalizer has run for all of them (on a later turn of the
 * event loop), for 5 s at most.
 */
async function drop(length: number, fill: number, count = 1): Promise<void> {
  const before = stats().finalized;
  (() => {
    for (let i = 0; i < count; i++) recycledBuffer(length).fill(fill);
  })();
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline && stats().finalized < before + count) {
    gc();
    await sleep(5);
  }
  assert.ok(stats().finalized >= before + count, `the ${count} dropped buffer(s) were collected within 5 s`);
}

describe('recycledBuffer', { skip: nativeStatus.loaded ? false : notBuilt }, () => {
  it('reuses the memory of a collected buffer, with exactly the length asked for', async () => {
    const length = 300_000;
    await drop(length, 0x11);
    const before = stats();
    const again = recycledBuffer(length - 1000);
    const after = stats();
    assert.equal(after.reused, before.reused + 1, 'the next buffer of a similar size reuses it');
    assert.equal(after.fresh, before.fresh);
    assert.equal(after.freeBlocks, before.freeBlocks - 1);
    assert.equal(again.length, length - 1000);
    assert.equal(again.buffer.byteLength, length - 1000, 'no more than the length is reachable');
    again.fill(0x22);
    assert.equal(again[again.length - 1], 0x22);
  });

  it('never hands out memory a view still refers to', async () => {
    const length = 400_000;
    const kept: Buffer[] = [];
    (() => {
      const b = recycledBuffer(length);
      b.fill(0xab);
      kept.push(b.subarray(1000, 2000));
    })();
    // Buffers of the same size come and go, and are reused, while the view is held.
    const reused = stats().reused;
    for (let i = 0; i < 8; i++) {
      await drop(length, i);
      recycledBuffer(length).fill(0xcd);
    }
    assert.ok(stats().reused >= reused + 8, 'the others were recycled meanwhile');
    assert.ok(kept[0]!.every((byte) => byte === 0xab), 'the held view still reads what was written');
  });

  it('does not hand out a free block more than twice the size asked for', async () => {
    await drop(12 * MiB, 1);
    const before = stats();
    recycledBuffer(5 * MiB);
    assert.equal(stats().fresh, before.fresh + 1, '12 MiB is more than twice 5 MiB: fresh memory');
    recycledBuffer(7 * MiB);
    assert.equal(stats().reused, before.reused + 1, '12 MiB is at most twice 7 MiB: reused');
  });

  it('leaves buffers below the minimum, and lengths the addon cannot take, to Node', () => {
    const before = stats();
    const small = recycledBuffer(recycledBufferBytesMin - 1);
    assert.equal(small.length, recycledBufferBytesMin - 1);
    const odd = recycledBufferBytesMin + 0.5;
    assert.equal(recycledBuffer(odd).length, Buffer.allocUnsafe(odd).length, 'a fractional length: as Buffer.allocUnsafe');
    assert.deepEqual(stats(), before);
  });

  it('keeps at most 32 blocks and 64 MiB, evicting the oldest', async () => {
    // 40 buffers of 2 MiB dropped at once: the list ends full of them and the rest were freed.
    const before = stats();
    await drop(2 * MiB, 1, 40);
    const after = stats();
    assert.ok(after.freeBlocks <= 32 && after.freeBytes <= 64 * MiB, `bounded: ${after.freeBlocks} blocks, ${after.freeBytes} bytes`);
    assert.ok(after.evicted - before.evicted >= 8, `at least 8 blocks evicted (${after.evicted - before.evicted})`);
    // The newest are kept: 2 MiB buffers now come from the list.
    const reused = after.reused;
    recycledBuffer(2 * MiB);
    assert.equal(stats().reused, reused + 1);
  });
});
