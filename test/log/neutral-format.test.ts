import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isQuartetError } from '../../src/base/errors.js';
import { decodeNeutralPayload, encodeNeutralPayload, neutralCodec } from '../../src/log/neutral-format.js';
import { BatchFormat, type NeutralRecord, type StoredBatch } from '../../src/log/types.js';

const bytes = fc.option(fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b)), { nil: null });

describe('neutral format', () => {
  it('round-trips records (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 40 }),
        fc.array(
          fc.record({
            gap: fc.integer({ min: 1, max: 5 }),
            timestamp: fc.integer({ min: -(2 ** 45), max: 2 ** 45 }),
            key: bytes,
            value: bytes,
            headers: fc.array(fc.record({ key: fc.string({ maxLength: 10 }), value: bytes }), { maxLength: 3 }),
          }),
          { maxLength: 20 },
        ),
        (base, specs) => {
          let offset = base - 1;
          const records: NeutralRecord[] = specs.map((s) => ({ offset: (offset += s.gap), timestamp: s.timestamp, key: s.key, value: s.value, headers: s.headers.map((h) => ({ ...h })) }));
          assert.deepEqual(decodeNeutralPayload(encodeNeutralPayload(records, base), base), records);
        },
      ),
    );
  });

  it('throws corrupt_batch on truncated or trailing bytes', () => {
    const payload = encodeNeutralPayload([{ offset: 0, timestamp: 1, key: Buffer.from('k'), value: Buffer.from('v'), headers: [] }], 0);
    for (const bad of [payload.subarray(0, payload.length - 1), Buffer.concat([payload, Buffer.from([0])])]) {
      assert.throws(() => decodeNeutralPayload(bad, 0), (e: unknown) => isQuartetError(e) && e.code === 'corrupt_batch');
    }
  });

  it('keeps the template offset span when re-encoding a compacted batch', () => {
    const template: StoredBatch = {
      format: BatchFormat.neutral, flags: 0, baseOffset: 10, lastOffset: 14, recordCount: 5,
      firstTimestamp: 1, maxTimestamp: 9, producerId: 7, producerEpoch: 1, baseSequence: 3, payload: Buffer.alloc(0),
    };
    const request = neutralCodec.encode([{ offset: 12, timestamp: 5, key: null, value: Buffer.from('x'), headers: [] }], 10, template);
    assert.equal(request.recordCount, 5);
    assert.equal(request.producerId, 7);
    assert.deepEqual(neutralCodec.decode({ ...template, payload: request.payload }).map((r) => r.offset), [12]);
    // From the head alone: one record in a batch spanning five offsets.
    assert.equal(neutralCodec.messageCount?.({ ...template, payload: request.payload.subarray(0, 5) }), 1);
    assert.equal(neutralCodec.messageCount?.({ ...template, payload: request.payload.subarray(0, 4) }), null);
  });
});
