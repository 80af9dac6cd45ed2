import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { TimeIndex } from '../../src/log/time-index.js';

describe('TimeIndex', () => {
  it('gives a scan start that never skips the first batch with maxTimestamp >= target (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ count: fc.integer({ min: 1, max: 5 }), ts: fc.integer({ min: 0, max: 1000 }), indexed: fc.boolean() }), { minLength: 1, maxLength: 200 }),
        fc.array(fc.integer({ min: -5, max: 1005 }), { minLength: 1, maxLength: 20 }),
        (batches, targets) => {
          const base = 1000;
          const index = new TimeIndex(base);
          const model: Array<{ baseOffset: number; lastOffset: number; maxTimestamp: number }> = [];
          let offset = base;
          let max = -Infinity;
          let maxAt = -1;
          for (const b of batches) {
            const lastOffset = offset + b.count - 1;
            model.push({ baseOffset: offset, lastOffset, maxTimestamp: b.ts });
            if (b.ts > max) {
              max = b.ts;
              maxAt = lastOffset;
            }
            if (b.indexed) index.maybeAppend(max, maxAt);
            offset = lastOffset + 1;
          }
          for (const target of targets) {
            const first = model.find((b) => b.maxTimestamp >= target);
            const start = index.scanStart(target);
            if (first) assert.ok(start <= first.baseOffset, `scan start ${start} skips batch ${first.baseOffset}`);
            // Every batch before the scan start is too old.
            assert.ok(model.filter((b) => b.lastOffset < start).every((b) => b.maxTimestamp < target));
          }
          const decoded = TimeIndex.decode(base, index.encode());
          assert.ok(typeof decoded !== 'string');
          assert.equal(decoded.entryCount, index.entryCount);
          for (const target of targets) assert.equal(decoded.scanStart(target), index.scanStart(target));
        },
      ),
    );
  });

  it('appends only when the timestamp grows and asserts increasing offsets', () => {
    const index = new TimeIndex(0);
    assert.ok(index.maybeAppend(100, 5));
    assert.equal(index.maybeAppend(100, 9), null);
    assert.equal(index.maybeAppend(50, 9), null);
    assert.throws(() => index.maybeAppend(200, 5));
    assert.ok(index.maybeAppend(-(2 ** 45) + 2 ** 46, 10));
    index.truncateToOffset(10);
    assert.equal(index.entryCount, 1);
    assert.equal(TimeIndex.decode(0, Buffer.alloc(13)), 'partial entry');
  });
});
