// The Kafka framer and the broker's request budget (src/base/request-bytes.ts): a large frame
// that straddles chunks waits when the budget cannot take it, keeps every byte pushed meanwhile,
// and once resumed hands out the same frames, byte for byte, as a framer without a budget.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RequestByteBudget } from '../../../../src/base/request-bytes.js';
import { Framer } from '../../../../src/protocols/kafka/codec/framer.js';

const KiB = 1024;

function sized(body: Buffer): Buffer {
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length);
  return Buffer.concat([size, body]);
}

/** Frames of distinct bytes: small, large, large, small. */
const bodies = [Buffer.alloc(100, 1), Buffer.alloc(100 * KiB, 2), Buffer.alloc(90 * KiB, 3), Buffer.alloc(10, 4)];
const stream = Buffer.concat(bodies.map(sized));

const ticked = (): Promise<void> => new Promise((resolve) => process.nextTick(resolve));

describe('Kafka Framer with a request budget', () => {
  for (const step of [1, 7, 4096, 65_536, 150 * KiB]) {
    it(`waits for the budget and loses nothing (chunks of ${step} bytes)`, async () => {
      const budget = new RequestByteBudget(128 * KiB);
      let granted = 0;
      const framer = new Framer({ frameBytesMax: 1 << 20, budget, onGranted: () => granted++ });
      const frames: Buffer[] = [];
      const handedOut: Buffer[] = [];
      const take = (out: Buffer[]): void => {
        handedOut.push(...out);
        frames.push(...out.map((f) => Buffer.from(f)));
      };
      let waited = false;
      for (let off = 0; off < stream.length; off += step) {
        const r = framer.push(Buffer.from(stream.subarray(off, off + step)));
        assert.equal(r.ok, true);
        take(r.frames);
        if (!framer.waiting) continue;
        // The second large frame waits while the first holds the budget; its release lets it go on.
        waited = true;
        assert.equal(frames.length, 2, 'the small frame and the first large one are out');
        assert.equal(budget.heldBytes, 100 * KiB);
        framer.release(handedOut[1]!);
        await ticked();
        assert.equal(granted, 1);
        assert.equal(framer.waiting, false);
        const resumed = framer.resume();
        assert.equal(resumed.ok, true);
        take(resumed.frames);
      }
      assert.equal(waited, step < 150 * KiB, 'a large frame straddling chunks waits; one inside a chunk is never assembled');
      assert.deepEqual(frames, bodies);
    });
  }

  it('takes nothing while not budgeted (a peer not yet authenticated)', () => {
    const budget = new RequestByteBudget(128 * KiB);
    const framer = new Framer({ frameBytesMax: 1 << 20, budget });
    framer.budgeted = false;
    const frame = sized(Buffer.alloc(100 * KiB));
    framer.push(frame.subarray(0, 1000));
    assert.equal(budget.heldBytes, 0);
    framer.budgeted = true;
    const next = new Framer({ frameBytesMax: 1 << 20, budget });
    next.push(frame.subarray(0, 1000));
    assert.equal(budget.heldBytes, 100 * KiB);
    next.dispose();
    assert.equal(budget.heldBytes, 0);
  });
});
