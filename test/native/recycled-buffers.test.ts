// recycledBuffer (src/native): Buffers whose memory goes back to the addon's free list once V8 has
// collected them, and is handed out again by a later call. These check that memory is reused only
// after the Buffer (and every view of it) is gone, never while a view is still reachable, and that
// a reused Buffer exposes exactly the length asked for.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { nativeStatus, recycledBuffer, recycledBufferBytesMin, recycledBufferStats, type RecycledBufferStats } from '../../src/native/index.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const notBuilt = 'native addon not built: run `npm install` (node-gyp, g++ and make)';
const length = 300_000;

function stats(): RecycledBufferStats {
  const s = recycledBufferStats();
  assert.ok(s !== null, 'the addon is loaded');
  return s;
}

/**
 * Makes a recycled buffer, fills it with `fill`, keeps only views of it in `keep` (if given), and
 * drops it; then collects garbage until the free list has grown (the addon's finalizer runs on a
 * later turn of the event loop), for 5 s at most. Returns whether it grew.
 */
async function dropOne(fill: number, keep?: Buffer[]): Promise<boolean> {
  const before = stats();
  (() => {
    const b = recycledBuffer(length);
    b.fill(fill);
    keep?.push(b.subarray(100, 200));
  })();
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    gc();
    await sleep(5);
    const now = stats();
    if (now.freeBlocks > before.freeBlocks || now.freeBytes > before.freeBytes) return true;
  }
  return false;
}

describe('recycledBuffer', { skip: nativeStatus.loaded ? false : notBuilt }, () => {
  it('reuses the memory of a collected buffer, with exactly the length asked for', async () => {
    assert.equal(await dropOne(0x11), true, 'the collected buffer went back to the free list');
    const before = stats();
    const again = recycledBuffer(length - 1000);
    const after = stats();
    assert.equal(after.reused, before.reused + 1, 'the next buffer of a similar size reuses it');
    assert.equal(after.fresh, before.fresh);
    assert.equal(again.length, length - 1000);
    assert.equal(again.buffer.byteLength, length - 1000, 'no more than the length is reachable');
    again.fill(0x22);
    assert.equal(again[again.length - 1], 0x22);
  });

  it('never hands out memory a view still refers to', async () => {
    const kept: Buffer[] = [];
    (() => {
      const b = recycledBuffer(length);
      b.fill(0xab);
      kept.push(b.subarray(1000, 2000));
    })();
    // Buffers of the same size come and go (and are reused) while the view is held.
    let recycled = 0;
    for (let i = 0; i < 8; i++) {
      if (await dropOne(i)) recycled++;
      const reuse = recycledBuffer(length);
      reuse.fill(0xcd);
    }
    assert.ok(recycled > 0, 'other buffers were recycled meanwhile');
    assert.ok(kept[0]!.every((byte) => byte === 0xab), 'the held view still reads what was written');
  });

  it('leaves buffers below the minimum to Node (no free-list traffic)', () => {
    const before = stats();
    const small = recycledBuffer(recycledBufferBytesMin - 1);
    assert.equal(small.length, recycledBufferBytesMin - 1);
    assert.deepEqual(stats(), before);
  });

  it('keeps at most 64 MiB of free memory', async () => {
    // 40 buffers of 2 MiB dropped at once: the free list keeps what fits and frees the rest.
    (() => {
      const many = Array.from({ length: 40 }, () => recycledBuffer(2 * 2 ** 20));
      for (const b of many) b[0] = 1;
    })();
    const deadline = Date.now() + 5000;
    let s = stats();
    while (Date.now() < deadline) {
      gc();
      await sleep(5);
      s = stats();
      if (s.freeBlocks >= 20) break;
    }
    assert.ok(s.freeBlocks >= 20, `the dropped buffers were recycled (${s.freeBlocks} free blocks)`);
    assert.ok(s.freeBlocks <= 32 && s.freeBytes <= 64 * 2 ** 20, `bounded: ${s.freeBlocks} blocks, ${s.freeBytes} bytes`);
  });
});
