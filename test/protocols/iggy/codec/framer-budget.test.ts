// The Iggy framer and the broker's request budget (src/base/request-bytes.ts): a large frame
// that straddles chunks waits when the budget cannot take it (its header kept whether it arrived
// whole or in pieces), keeps every byte pushed meanwhile, and once resumed hands out the same
// frames, byte for byte, as a framer without a budget.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RequestByteBudget } from '../../../../src/base/request-bytes.js';
import { IggyFramer, type Frame } from '../../../../src/protocols/iggy/codec/index.js';

const KiB = 1024;

/** A frame of `size` bytes (header included), filled with `fill` after its size field. */
function frameOf(size: number, fill: number): Buffer {
  const frame = Buffer.alloc(size, fill);
  frame.writeUInt32LE(size, 48);
  return frame;
}

const frames = [frameOf(300, 1), frameOf(100 * KiB, 2), frameOf(90 * KiB, 3), frameOf(256, 4)];
const stream = Buffer.concat(frames);
const ticked = (): Promise<void> => new Promise((resolve) => process.nextTick(resolve));

describe('IggyFramer with a request budget', () => {
  for (const step of [1, 100, 4096, 65_536, 150 * KiB]) {
    it(`waits for the budget and loses nothing (chunks of ${step} bytes)`, async () => {
      const budget = new RequestByteBudget(128 * KiB);
      let granted = 0;
      const framer = new IggyFramer({ frameBytesMax: 1 << 20, budget, onGranted: () => granted++ });
      const got: Buffer[] = [];
      const handedOut: Frame[] = [];
      const take = (results: ReturnType<IggyFramer['push']>): void => {
        for (const r of results) {
          assert.equal(r.ok, true);
          if (!r.ok) return;
          handedOut.push(r.frame);
          got.push(Buffer.concat([r.frame.header, r.frame.body]));
        }
      };
      let waited = false;
      for (let off = 0; off < stream.length; off += step) {
        take(framer.push(Buffer.from(stream.subarray(off, off + step))));
        if (!framer.waiting) continue;
        waited = true;
        assert.equal(got.length, 2, 'the small frame and the first large one are out');
        assert.equal(budget.heldBytes, 100 * KiB);
        assert.equal(framer.directTarget(1), null, 'nothing is read in place while waiting');
        framer.release(handedOut[1]!);
        await ticked();
        assert.equal(granted, 1);
        take(framer.resume());
      }
      assert.equal(waited, step < 150 * KiB, 'a large frame straddling chunks waits; one inside a chunk is never assembled');
      assert.deepEqual(got, frames);
      framer.release(handedOut[2]!);
      assert.equal(budget.heldBytes, 0);
    });
  }
});
