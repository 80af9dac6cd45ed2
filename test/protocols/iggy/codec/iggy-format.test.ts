import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { BatchFormat, type NeutralRecord, type StoredBatch } from '../../../../src/log/types.js';
import {
  appendRequestFromBatch,
  decodeIggyRecords,
  encodeBatch,
  encodeUserHeaders,
  iggyFormatCodec,
  isBatchRejection,
  parseBatch,
  userHeader,
  validateBatch,
} from '../../../../src/protocols/iggy/codec/index.js';
import { vector } from './vectors.js';

function stored(payload: Buffer, baseOffset: number, recordCount: number): StoredBatch {
  return {
    format: BatchFormat.iggy,
    flags: 0,
    baseOffset,
    lastOffset: baseOffset + recordCount - 1,
    recordCount,
    firstTimestamp: 0,
    maxTimestamp: 0,
    producerId: -1,
    producerEpoch: -1,
    baseSequence: -1,
    payload,
  };
}

describe('iggy batch format codec', () => {
  it('decodes the stored poll vector to neutral records', () => {
    const batch = stored(vector('poll_messages_reply_body').subarray(16), 100, 2);
    assert.deepEqual(iggyFormatCodec.decode(batch), [
      { offset: 100, timestamp: 1, key: null, value: Buffer.from('first-payload'), headers: [] },
      { offset: 101, timestamp: 1, key: null, value: Buffer.from('second-payload'), headers: [] },
    ]);
    assert.deepEqual(
      decodeIggyRecords(batch).map((r) => [r.offset, r.id, r.originTimestamp, r.timestamp]),
      [
        [100, 7n, 1000n, 5000n],
        [101, 8n, 1050n, 5000n],
      ],
    );
  });

  it('builds the AppendRequest and stamps exactly the stored layout', () => {
    const body = Buffer.from(vector('send_messages_batch'));
    const validated = validateBatch(body, { exact: true });
    assert.ok(!isBatchRejection(validated));
    const req = appendRequestFromBatch(validated, { partitionId: 3 });
    assert.deepEqual(
      [req.format, req.recordCount, req.firstTimestamp, req.maxTimestamp, req.producerId, req.flags],
      [BatchFormat.iggy, 2, 1, 1, -1, 0],
    );
    iggyFormatCodec.stamp!(req, { baseOffset: 100, appendTime: 5, appendMicros: 5_000 });
    assert.deepEqual(req.payload, vector('poll_messages_reply_body').subarray(16));
  });

  it('maps the "key" header and typed headers, and round-trips neutral records', () => {
    const headers = encodeUserHeaders([
      userHeader('key', { kind: 'string', value: 'k1' }),
      userHeader('n', { kind: 'uint64', value: 42n }),
      userHeader('ok', { kind: 'bool', value: false }),
      userHeader('f', { kind: 'float64', value: 0.5 }),
    ]);
    const payload = Buffer.concat(encodeBatch([{ id: 1n, originTimestamp: 2_000_000n, payload: Buffer.from('v'), userHeaders: headers }], { partitionId: 0n, baseOffset: 10n, baseTimestamp: 3n }));
    assert.deepEqual(iggyFormatCodec.decode(stored(payload, 10, 1)), [
      {
        offset: 10,
        timestamp: 2000,
        key: Buffer.from('k1'),
        value: Buffer.from('v'),
        headers: [
          { key: 'n', value: Buffer.from('42') },
          { key: 'ok', value: Buffer.from('false') },
          { key: 'f', value: Buffer.from('0.5') },
        ],
      },
    ]);

    const recordArb = fc.record({
      key: fc.option(fc.uint8Array({ minLength: 1, maxLength: 30 }).map((a) => Buffer.from(a)), { nil: null }),
      value: fc.uint8Array({ maxLength: 30 }).map((a) => Buffer.from(a)),
      timestamp: fc.integer({ min: 1_700_000_000_000, max: 1_700_000_100_000 }),
      headers: fc.array(
        fc.record({ key: fc.string({ minLength: 1, maxLength: 10 }).filter((k) => k !== 'key'), value: fc.string({ minLength: 1, maxLength: 20 }).map((s) => Buffer.from(s)) }),
        { maxLength: 3 },
      ),
    });
    fc.assert(
      fc.property(fc.array(recordArb, { minLength: 1, maxLength: 6 }), fc.integer({ min: 0, max: 1000 }), (rs, base) => {
        const records: NeutralRecord[] = rs.map((r, i) => ({
          offset: base + i * 2,
          timestamp: r.timestamp,
          key: r.key,
          value: r.value,
          headers: r.headers.map((h) => ({ key: h.key, value: h.value })),
        }));
        const template = stored(Buffer.alloc(0), base, 1);
        template.format = BatchFormat.neutral;
        const req = iggyFormatCodec.encode(records, base, template);
        assert.equal(req.recordCount, records.at(-1)!.offset - base + 1);
        const check = parseBatch(req.payload, { verify: 'full', exact: true });
        assert.ok(!isBatchRejection(check));
        assert.deepEqual(iggyFormatCodec.decode(stored(req.payload, base, req.recordCount)), records);
      }),
      { numRuns: 100 },
    );
  });

  it('keeps ids and typed headers of template frames (compaction)', () => {
    const headers = encodeUserHeaders([userHeader('n', { kind: 'int32', value: -1 })]);
    const original = Buffer.concat(
      encodeBatch(
        [
          { id: 77n, originTimestamp: 5_000n, payload: Buffer.from('a'), userHeaders: headers },
          { id: 88n, originTimestamp: 6_000n, payload: Buffer.from('b') },
        ],
        { partitionId: 2n, baseOffset: 40n, baseTimestamp: 7_000_000n },
      ),
    );
    const template = stored(original, 40, 2);
    const kept = iggyFormatCodec.decode(template).slice(0, 1);
    const req = iggyFormatCodec.encode(kept, 40, template);
    const recs = decodeIggyRecords(stored(req.payload, 40, 2));
    assert.deepEqual(recs.map((r) => [r.offset, r.id, r.originTimestamp, r.timestamp]), [[40, 77n, 5_000n, 7_000_000n]]);
    // The rewritten batch stays in the log under its append time (base_timestamp), not producer time.
    assert.deepEqual([req.firstTimestamp, req.maxTimestamp], [7_000, 7_000]);
    assert.deepEqual(recs[0]!.userHeaders, headers);
    assert.equal(req.payload.readBigUInt64LE(0), 2n);
    iggyFormatCodec.stamp!(req, { baseOffset: 41, appendTime: 0, appendMicros: 0 });
    const moved = parseBatch(req.payload, { verify: 'full', exact: true });
    assert.ok(!isBatchRejection(moved) && moved.header.baseOffset === 41n);
  });

  it('throws corrupt_batch on a damaged stored batch', () => {
    const bad = Buffer.from(vector('send_messages_batch'));
    bad.writeUInt32LE(9, 48);
    assert.throws(() => iggyFormatCodec.decode(stored(bad, 0, 2)), (e: Error & { code?: string }) => e.code === 'corrupt_batch');
  });
});
