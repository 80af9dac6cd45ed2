import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  batchRecords,
  checkProducedRecords,
  buildControlBatch,
  buildRecordBatch,
  computeBatchCrc,
  ControlRecordType,
  inspectProducedRecords,
  normalizeProducedBatch,
  decodeControlRecord,
  patchBaseOffset,
  patchPartitionLeaderEpoch,
  readBatchHeader,
  splitBatches,
  stampLogAppendTime,
  validateProduceBatch,
  validateRecordBatch,
} from '../../../../src/protocols/kafka/codec/record-batch.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

// A batch written by kafka-python 2.0.2 (DefaultRecordBatchBuilder, magic 2): records
// {k1 -> hello, header h1=v1, ts 1700000000000} and {null -> world, ts +5}; CRC-32C c47f26f7.
const kafkaPythonBatch = hex(`
  0000000000000000 00000051 00000000 02 c47f26f7 0000 00000001
  0000018bcfe56800 0000018bcfe56805 ffffffffffffffff ffff ffffffff 00000002
  26 00 00 00 04 6b31 0a 68656c6c6f 02 04 6831 04 7631
  16 00 0a 02 01 0a 776f726c64 00`);

/** Bitwise CRC-32C (Castagnoli, reflected 0x82F63B78): an independent check of the library. */
function crc32cBitwise(buf: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of buf) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

const fixture = JSON.parse(
  readFileSync(new URL('./fixtures/kafka-python-batches.json', import.meta.url), 'utf8'),
) as { batches: Record<string, string> };

describe('RecordBatch v2', () => {
  it('validates a batch from another implementation, with its known CRC', () => {
    assert.equal(crc32cBitwise(Buffer.from('123456789')), 0xe3069283); // the CRC-32C check value
    assert.equal(crc32cBitwise(kafkaPythonBatch.subarray(21)), 0xc47f26f7);
    const v = validateProduceBatch(kafkaPythonBatch);
    assert.ok(v.ok, v.ok ? '' : v.reason);
    assert.deepEqual(v.header, {
      baseOffset: 0,
      batchLength: 81,
      partitionLeaderEpoch: 0,
      magic: 2,
      crc: 0xc47f26f7,
      attributes: 0,
      compression: 0,
      timestampType: 0,
      isTransactional: false,
      isControl: false,
      lastOffsetDelta: 1,
      baseTimestamp: 1700000000000,
      maxTimestamp: 1700000000005,
      producerId: -1,
      producerEpoch: -1,
      baseSequence: -1,
      recordCount: 2,
    });
    const recs = batchRecords(kafkaPythonBatch);
    assert.ok(recs.ok);
    assert.deepEqual(recs.value, [
      { attributes: 0, timestampDelta: 0, offsetDelta: 0, key: Buffer.from('k1'), value: Buffer.from('hello'), headers: [{ key: 'h1', value: Buffer.from('v1') }] },
      { attributes: 0, timestampDelta: 5, offsetDelta: 1, key: null, value: Buffer.from('world'), headers: [] },
    ]);
  });

  it('builds byte-identical batches to kafka-python for the same records', () => {
    const built = buildRecordBatch(
      [
        { timestamp: 1700000000000, key: Buffer.from('k1'), value: Buffer.from('hello'), headers: [{ key: 'h1', value: Buffer.from('v1') }] },
        { timestamp: 1700000000005, key: null, value: Buffer.from('world') },
      ],
      { partitionLeaderEpoch: 0 },
    );
    assert.deepEqual(built, kafkaPythonBatch);
  });

  for (const codec of ['none', 'gzip', 'snappy', 'lz4']) {
    it(`decodes kafka-python's ${codec} batch`, () => {
      const batch = Buffer.from(fixture.batches[codec]!, 'hex');
      const v = validateProduceBatch(batch);
      assert.ok(v.ok, v.ok ? '' : v.reason);
      assert.equal(v.header.compression, ['none', 'gzip', 'snappy', 'lz4'].indexOf(codec));
      const recs = batchRecords(batch, v.header);
      assert.ok(recs.ok, recs.ok ? '' : recs.reason);
      assert.equal(recs.value.length, 3);
      assert.equal(recs.value[1]!.key, null);
      assert.deepEqual(recs.value[2]!.key, Buffer.from('key-2'));
      assert.deepEqual(recs.value[0]!.value, Buffer.from('value-0 '.repeat(40)));
      assert.deepEqual(recs.value[0]!.headers, [{ key: 'h', value: Buffer.from('x') }]);
      assert.equal(recs.value[2]!.timestampDelta, 2);
    });
  }

  it('patches baseOffset and partitionLeaderEpoch without breaking the CRC', () => {
    const b = Buffer.from(kafkaPythonBatch);
    patchBaseOffset(b, 2 ** 40 + 7);
    patchPartitionLeaderEpoch(b, 9);
    const v = validateRecordBatch(b);
    assert.ok(v.ok);
    assert.equal(v.header.baseOffset, 2 ** 40 + 7);
    assert.equal(v.header.partitionLeaderEpoch, 9);
    assert.equal(v.header.crc, 0xc47f26f7);
  });

  it('stamps LogAppendTime and recomputes the CRC', () => {
    const b = Buffer.from(kafkaPythonBatch);
    stampLogAppendTime(b, 1800000000000);
    const v = validateRecordBatch(b);
    assert.ok(v.ok);
    assert.equal(v.header.timestampType, 1);
    assert.equal(v.header.maxTimestamp, 1800000000000);
  });

  it('rejects corrupt batches with a reason', () => {
    const flip = Buffer.from(kafkaPythonBatch);
    flip[70] = flip[70]! ^ 1;
    assert.match((validateRecordBatch(flip) as { reason: string }).reason, /CRC/);
    assert.match((validateRecordBatch(kafkaPythonBatch.subarray(0, 60)) as { reason: string }).reason, /short|match/);
    const v1 = Buffer.from(kafkaPythonBatch);
    v1[16] = 1;
    assert.match((validateRecordBatch(v1) as { reason: string }).reason, /v1/);
    const v0 = Buffer.from(kafkaPythonBatch);
    v0[16] = 0;
    assert.match((validateRecordBatch(v0) as { reason: string }).reason, /v0/);
    const two = Buffer.concat([kafkaPythonBatch, kafkaPythonBatch]);
    assert.match((validateProduceBatch(two) as { reason: string }).reason, /exactly one/);
    const control = buildControlBatch({ producerId: 1, producerEpoch: 0, commit: true, coordinatorEpoch: 0, timestamp: 1 });
    assert.match((validateProduceBatch(control) as { reason: string }).reason, /control/);
  });

  it('splits a records section into batches and reports a partial tail', () => {
    const a = buildRecordBatch([{ timestamp: 1, key: null, value: Buffer.from('a') }], { baseOffset: 0 });
    const b = buildRecordBatch([{ timestamp: 2, key: null, value: Buffer.from('b') }], { baseOffset: 1 });
    const section = Buffer.concat([a, b, b.subarray(0, 20)]);
    const s = splitBatches(section);
    assert.deepEqual(s.batches, [a, b]);
    assert.equal(s.partialBytes, 20);
    assert.equal(s.reason, null);
  });

  it('round-trips records through build and decode for every codec (property)', () => {
    const recordArb = fc.record({
      timestamp: fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
      key: fc.option(fc.uint8Array({ maxLength: 20 }).map((b) => Buffer.from(b)), { nil: null }),
      value: fc.option(fc.uint8Array({ maxLength: 60 }).map((b) => Buffer.from(b)), { nil: null }),
      headers: fc.array(
        fc.record({ key: fc.string({ maxLength: 8 }), value: fc.option(fc.uint8Array({ maxLength: 8 }).map((b) => Buffer.from(b)), { nil: null }) }),
        { maxLength: 3 },
      ),
    });
    fc.assert(
      fc.property(fc.array(recordArb, { minLength: 1, maxLength: 6 }), fc.integer({ min: 0, max: 4 }), (records, compression) => {
        const batch = buildRecordBatch(records, { compression, baseOffset: 100 });
        const v = validateProduceBatch(batch);
        assert.ok(v.ok, v.ok ? '' : v.reason);
        assert.equal(computeBatchCrc(batch), v.header.crc);
        const recs = batchRecords(batch, v.header);
        assert.ok(recs.ok, recs.ok ? '' : recs.reason);
        // The produce path's walk passes what the builder made; with keys required, only if every record has one.
        assert.equal(checkProducedRecords(batch, v.header, false), null);
        assert.equal(checkProducedRecords(batch, v.header, true) === null, records.every((r) => r.key !== null));
        assert.deepEqual(
          recs.value.map((r) => ({ timestamp: v.header.baseTimestamp + r.timestampDelta, key: r.key, value: r.value, headers: r.headers })),
          records.map((r) => ({ ...r, headers: r.headers.map((h) => ({ ...h })) })),
        );
      }),
      { numRuns: 100 },
    );
  });

  it('encodes and decodes control records (transaction markers)', () => {
    const batch = buildControlBatch({ baseOffset: 5, producerId: 42, producerEpoch: 3, commit: false, coordinatorEpoch: 7, timestamp: 1000 });
    const h = readBatchHeader(batch);
    assert.equal(h.isControl, true);
    assert.equal(h.isTransactional, true);
    assert.equal(h.producerId, 42);
    const recs = batchRecords(batch, h);
    assert.ok(recs.ok);
    // key: version 0, type 0 (ABORT); value: version 0, coordinator epoch 7
    assert.deepEqual(recs.value[0]!.key, hex('0000 0000'));
    assert.deepEqual(recs.value[0]!.value, hex('0000 00000007'));
    assert.deepEqual(decodeControlRecord(recs.value[0]!.key, recs.value[0]!.value), {
      ok: true,
      value: { type: ControlRecordType.abort, coordinatorEpoch: 7 },
    });
  });

  it('the produce walk refuses a timestamp delta longer than 64 bits, as the decoder does', () => {
    const batch = buildRecordBatch([{ timestamp: 1000, key: Buffer.from('k'), value: Buffer.from('v') }]);
    // One record: attributes, a 10-byte varlong whose last byte is 0x7f, offset delta 0, key 'k', value 'v', no headers.
    const body = Buffer.from([0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x00, 0x02, 0x6b, 0x02, 0x76, 0x00]);
    const hostile = Buffer.concat([batch.subarray(0, 61), Buffer.from([body.length * 2]), body]);
    hostile.writeInt32BE(hostile.length - 12, 8);
    hostile.writeUInt32BE(computeBatchCrc(hostile), 17);
    const header = readBatchHeader(hostile);
    assert.equal(batchRecords(hostile, header).ok, false);
    assert.match(checkProducedRecords(hostile, header, false) ?? 'accepted', /timestamp delta/);
    // With a last byte of 0x01 (64 bits exactly) both read it.
    body[10] = 0x01;
    const fine = Buffer.concat([batch.subarray(0, 61), Buffer.from([body.length * 2]), body]);
    fine.writeInt32BE(fine.length - 12, 8);
    fine.writeUInt32BE(computeBatchCrc(fine), 17);
    assert.equal(batchRecords(fine, readBatchHeader(fine)).ok, true);
    assert.equal(checkProducedRecords(fine, readBatchHeader(fine), false), null);
  });

  it('rejects hostile record sections without throwing', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), fc.integer({ min: -2, max: 100 }), (raw, count) => {
        const body = Buffer.from(raw);
        const batch = buildRecordBatch([{ timestamp: 0, key: null, value: null }]);
        const hostile = Buffer.concat([batch.subarray(0, 61), body]);
        hostile.writeInt32BE(hostile.length - 12, 8);
        hostile.writeInt32BE(count, 57);
        hostile.writeUInt32BE(computeBatchCrc(hostile), 17);
        const v = validateRecordBatch(hostile);
        if (!v.ok) return;
        assert.doesNotThrow(() => batchRecords(hostile, v.header));
        // What the produce path's walk lets through, the decoder reads: `count` records numbered 0, 1, 2, ...
        if (checkProducedRecords(hostile, v.header, false) === null) {
          const recs = batchRecords(hostile, v.header);
          assert.ok(recs.ok, recs.ok ? '' : recs.reason);
          assert.deepEqual(recs.value.map((r) => r.offsetDelta), Array.from({ length: count }, (_, i) => i));
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('inspectProducedRecords and normalizeProducedBatch', () => {
  const at = 1_700_000_000_000;
  const recs = (stamps: number[], keys = stamps.map(() => true)) => stamps.map((timestamp, i) => ({ timestamp, key: keys[i] ? Buffer.from(`k${i}`) : null, value: Buffer.from(`v${i}`) }));

  it('finds the largest record timestamp, whatever the header claims, including deltas below the base', () => {
    for (const compression of [0, 1, 2, 3, 4]) {
      const batch = buildRecordBatch(recs([at, at - 70_000, at + 123_456_789, at + 5]), { compression, maxTimestamp: 1 });
      const r = inspectProducedRecords(batch, readBatchHeader(batch), { keysRequired: false });
      assert.ok(r.ok);
      assert.equal(r.maxTimestamp, at + 123_456_789);
      assert.deepEqual(r.recordErrors, []);
    }
    // The kafka-python golden batch: its header is right.
    const golden = inspectProducedRecords(kafkaPythonBatch, readBatchHeader(kafkaPythonBatch), { keysRequired: false });
    assert.ok(golden.ok);
    assert.equal(golden.maxTimestamp, 1_700_000_000_005);
  });

  it('refuses records one by one: null keys when required, times outside the window, a producer-set LogAppendTime bit', () => {
    const batch = buildRecordBatch(recs([at - 10_001, at, at + 2_001], [true, false, true]));
    const r = inspectProducedRecords(batch, readBatchHeader(batch), { keysRequired: true, now: at, timestampBeforeMaxMs: 10_000, timestampAfterMaxMs: 2_000, partitionName: 't-0' });
    assert.ok(r.ok);
    assert.deepEqual(r.recordErrors.map((e) => [e.batchIndex, e.timestamp]), [[0, true], [1, false], [2, true]]);
    assert.match(r.recordErrors[1]!.message, /without key in topic partition t-0\.$/);
    // A LogAppendTime topic does not check the window; a batch claiming LogAppendTime is refused there.
    const lat = inspectProducedRecords(batch, readBatchHeader(batch), { keysRequired: false, logAppendTime: true, now: at, timestampBeforeMaxMs: 0, timestampAfterMaxMs: 0 });
    assert.ok(lat.ok);
    assert.deepEqual(lat.recordErrors, []);
    const claimed = buildRecordBatch(recs([at, at]), { timestampType: 1, maxTimestamp: at });
    const c = inspectProducedRecords(claimed, readBatchHeader(claimed), { keysRequired: false, logAppendTime: true });
    assert.ok(c.ok);
    assert.deepEqual(c.recordErrors.map((e) => e.batchIndex), [0, 1]);
  });

  it('patches maxTimestamp in place with a new CRC, rebuilds for another codec, and leaves a right batch untouched', () => {
    const batch = buildRecordBatch(recs([at, at + 9]), { maxTimestamp: at, producerId: 4, producerEpoch: 1, baseSequence: 7, transactional: true });
    const r = inspectProducedRecords(batch, readBatchHeader(batch), { keysRequired: false });
    assert.ok(r.ok);
    const patched = normalizeProducedBatch(batch, r.section, r.maxTimestamp, null);
    assert.equal(patched, batch, 'in place');
    assert.equal(readBatchHeader(patched).maxTimestamp, at + 9);
    assert.ok(validateRecordBatch(patched).ok);
    const before = Buffer.from(patched);
    assert.equal(normalizeProducedBatch(patched, r.section, at + 9, null), patched);
    assert.deepEqual(patched, before, 'nothing to change: not a byte written');
    for (const codec of [1, 2, 3, 4]) {
      const rebuilt = normalizeProducedBatch(patched, r.section, at + 9, codec);
      const v = validateRecordBatch(rebuilt);
      assert.ok(v.ok);
      assert.equal(v.header.compression, codec);
      assert.deepEqual([v.header.producerId, v.header.producerEpoch, v.header.baseSequence, v.header.isTransactional, v.header.recordCount], [4, 1, 7, true, 2]);
      const back = batchRecords(rebuilt);
      assert.ok(back.ok);
      assert.deepEqual(back.value.map((x) => x.value!.toString()), ['v0', 'v1']);
    }
  });
});
