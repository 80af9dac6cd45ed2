import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { OffsetIndex, offsetIndexEntryBytes } from '../../src/log/offset-index.js';

describe('OffsetIndex', () => {
  it('looks up the last entry at or before an offset, and the first at or after one (property, against a brute-force model)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 40 }),
        fc.array(fc.record({ offsetGap: fc.integer({ min: 1, max: 50 }), bytes: fc.integer({ min: 1, max: 5000 }) }), { maxLength: 300 }),
        fc.array(fc.integer({ min: -10, max: 20_000 }), { minLength: 1, maxLength: 30 }),
        (base, steps, probes) => {
          const index = new OffsetIndex(base);
          const model: Array<{ offset: number; position: number }> = [];
          let offset = base;
          let position = 0;
          for (const step of steps) {
            offset += step.offsetGap;
            position += step.bytes;
            index.append(offset, position);
            model.push({ offset, position });
          }
          for (const probe of probes) {
            const target = base + probe;
            const expected = model.filter((e) => e.offset <= target).at(-1) ?? { offset: base, position: 0 };
            assert.deepEqual(index.lookup(target), expected);
            assert.equal(index.positionAtOrAfter(target), model.find((e) => e.offset >= target)?.position ?? null);
          }
          const decoded = OffsetIndex.decode(base, index.encode(), position + 1);
          assert.ok(typeof decoded !== 'string');
          assert.equal(decoded.entryCount, model.length);
          for (const probe of probes) assert.deepEqual(decoded.lookup(base + probe), index.lookup(base + probe));
        },
      ),
    );
  });

  it('asserts monotonic entries', () => {
    const index = new OffsetIndex(100);
    index.append(105, 1000);
    assert.throws(() => index.append(105, 2000));
    assert.throws(() => index.append(106, 1000));
    assert.throws(() => index.append(99, 3000));
  });

  it('truncates to a position and rejects malformed files', () => {
    const index = new OffsetIndex(0);
    for (let i = 1; i <= 10; i++) index.append(i * 10, i * 100);
    index.truncateToPosition(550);
    assert.equal(index.entryCount, 5);
    assert.deepEqual(index.last(), { offset: 50, position: 500 });
    const bytes = index.encode();
    assert.equal(bytes.length, 5 * offsetIndexEntryBytes);
    assert.equal(OffsetIndex.decode(0, bytes.subarray(0, 12), 10_000), 'partial entry');
    assert.equal(OffsetIndex.decode(0, bytes, 400), 'entry beyond the log');
    const swapped = Buffer.concat([bytes.subarray(8, 16), bytes.subarray(0, 8)]);
    assert.equal(OffsetIndex.decode(0, swapped, 10_000), 'offsets not increasing');
  });
});
