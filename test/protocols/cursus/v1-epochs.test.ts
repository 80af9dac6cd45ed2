import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { renderJson, v1BatchToCbv2, v1EpochExactMax, v1Mapping, v2EpochOf } from '../../../src/protocols/cursus/v1/index.js';

const int64Min = -(2n ** 63n);
const int64Max = 2n ** 63n - 1n;
/** A Go SDK producer epoch: time.Now().UnixNano() on 2026-01-01. */
const goEpoch = 1_767_225_600_123_456_789n;

describe('v1 producer epochs on Wire v2', () => {
  it('keeps epochs up to 2^52 and compresses larger ones below 2^53, sign kept', () => {
    for (const e of [0n, 1n, 7n, -1n, v1EpochExactMax, -v1EpochExactMax]) assert.equal(v2EpochOf(e), Number(e));
    assert.equal(v2EpochOf(v1EpochExactMax + 2048n), 2 ** 52 + 1);
    assert.equal(v2EpochOf(goEpoch), 2 ** 52 + Number((goEpoch - v1EpochExactMax) >> 11n));
    for (const e of [goEpoch, int64Max, int64Min, -goEpoch]) assert.ok(Number.isSafeInteger(v2EpochOf(e)), String(e));
    assert.equal(v2EpochOf(-goEpoch), -v2EpochOf(goEpoch));
  });

  it('is monotonic, so a newer producer still fences an older one', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: int64Min + 1n, max: int64Max }), fc.bigInt({ min: int64Min + 1n, max: int64Max }), (a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        assert.ok(v2EpochOf(lo) <= v2EpochOf(hi));
      }),
    );
    // Producers started 1 ms apart (nanosecond epochs) get different epochs.
    assert.ok(v2EpochOf(goEpoch + 1_000_000n) > v2EpochOf(goEpoch));
  });

  it('converts a batch of a nanosecond-epoch producer, and answers it with its own epoch', () => {
    const record = { offset: 0n, seqNum: 1n, producerId: Buffer.from('p1'), key: Buffer.alloc(0), epoch: goEpoch, payload: Buffer.from('hi'), eventType: Buffer.alloc(0), schemaVersion: 0, aggregateVersion: 0n, metadata: Buffer.alloc(0) };
    const out = v1BatchToCbv2({ topic: Buffer.from('t'), partition: 0, acks: Buffer.from('1'), idempotent: true, batchStart: 1n, batchEnd: 1n, records: [record] });
    assert.ok(out.ok);
    assert.equal(out.value.value.records[0]!.producerEpoch, v2EpochOf(goEpoch));
    const v2 = { status: 'OK', last_offset: 3, producer_id: 'p1', producer_epoch: v2EpochOf(goEpoch), seq_start: 1, seq_end: 1 };
    assert.equal(renderJson(v1Mapping('PUBLISH'), v2, goEpoch), `{"status":"OK","last_offset":3,"producer_epoch":${goEpoch},"producer_id":"p1","seq_start":1,"seq_end":1}`);
    // An epoch the reply does not carry is not substituted.
    assert.equal(renderJson(v1Mapping('PUBLISH'), { ...v2, producer_epoch: 5 }, goEpoch), '{"status":"OK","last_offset":3,"producer_epoch":5,"producer_id":"p1","seq_start":1,"seq_end":1}');
  });
});
