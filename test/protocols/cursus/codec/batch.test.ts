import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BatchFormat, type StoredBatch } from '../../../../src/base/batch.js';
import {
  cursusBatchFormatCodec,
  decodeBatch,
  encodeBatch,
  readBatchLayout,
  recordSpans,
  retopicBatch,
  stampBatch,
  type CursusRecord,
} from '../../../../src/protocols/cursus/codec/index.js';

function published(n: number): Buffer {
  const records: CursusRecord[] = Array.from({ length: n }, (_, i) => ({ topic: 'orders', partition: -1, offset: 0, payload: Buffer.from(`v${i}`), key: Buffer.from(`k${i % 2}`), timestamp: 1000 + i }));
  return Buffer.concat(encodeBatch({ idempotent: false, topic: 'orders', partition: -1, acks: '1', batchStart: 0, batchEnd: 0, records }));
}

function stored(payload: Buffer, baseOffset: number, count: number): StoredBatch {
  return { format: BatchFormat.cursus, flags: 0, baseOffset, lastOffset: baseOffset + count - 1, recordCount: count, firstTimestamp: 1000, maxTimestamp: 1000 + count - 1, producerId: -1, producerEpoch: -1, baseSequence: -1, payload };
}

function stampedBatch(n: number, baseOffset: number, partition = 2): Buffer {
  const p = published(n);
  const layout = readBatchLayout(p);
  assert.ok(layout.ok);
  const spans = recordSpans(p, layout.value);
  assert.ok(spans.ok);
  stampBatch(p, layout.value, spans.value, partition, baseOffset);
  return p;
}

describe('CBV2', () => {
  it('stamps the partition and consecutive offsets in place', () => {
    const p = stampedBatch(3, 100);
    const b = decodeBatch(p);
    assert.ok(b.ok, b.ok ? '' : b.reason);
    assert.equal(b.value.partition, 2);
    assert.deepEqual(b.value.records.map((r) => [r.partition, r.offset]), [[2, 100], [2, 101], [2, 102]]);
  });

  it('rejects every truncation of a batch', () => {
    const p = published(2);
    for (let n = 0; n < p.length; n++) assert.equal(decodeBatch(p.subarray(0, n)).ok, false, `${n} bytes`);
  });

  it('rejects u64 values beyond 2^53 - 1', () => {
    const rec: CursusRecord = { topic: 't', partition: 0, offset: 0, payload: Buffer.alloc(0) };
    const p = Buffer.concat(encodeBatch({ idempotent: false, topic: 't', partition: 0, acks: '1', batchStart: 0, batchEnd: 0, records: [rec] }));
    const layout = readBatchLayout(p);
    assert.ok(layout.ok);
    p.writeBigUInt64BE(2n ** 53n, layout.value.recordsAt + 4 + 2 + 8 + 4 + 1 + 4);
    const b = decodeBatch(p);
    assert.equal(b.ok, false);
    if (!b.ok) assert.match(b.reason, /offset 9007199254740992 is beyond/);
  });
});

describe('cursusBatchFormatCodec', () => {
  const codec = cursusBatchFormatCodec;

  it('decodes stored records to neutral ones and counts them from the head', () => {
    const s = stored(stampedBatch(3, 10), 10, 3);
    assert.deepEqual(codec.decode(s).map((r) => [r.offset, r.timestamp, r.key?.toString(), r.value?.toString()]), [
      [10, 1000, 'k0', 'v0'],
      [11, 1001, 'k1', 'v1'],
      [12, 1002, 'k0', 'v2'],
    ]);
    assert.equal(codec.messageCount!(s), 3);
  });

  it('rewrites a compacted batch keeping its records and offsets', () => {
    const s = stored(stampedBatch(3, 10), 10, 3);
    const kept = codec.decode(s).filter((r) => r.offset !== 10);
    const req = codec.encode(kept, 10, s);
    assert.equal(req.recordCount, 3);
    const again = stored(req.payload, 10, req.recordCount);
    assert.equal(codec.messageCount!(again), 2);
    assert.deepEqual(codec.decode(again).map((r) => r.offset), [11, 12]);
    const b = decodeBatch(req.payload);
    assert.ok(b.ok);
    assert.deepEqual([b.value.topic, b.value.partition], ['orders', 2]);
  });

  it('slices records out of a stored batch under a new header, as views', () => {
    const payload = stampedBatch(5, 20);
    const s = stored(payload, 20, 5);
    const cut = codec.slice!(s, 21, 24, 10)!;
    assert.deepEqual([cut.count, cut.lastOffset], [3, 23]);
    assert.equal(cut.chunks[1]!.buffer, payload.buffer);
    const b = decodeBatch(Buffer.concat(cut.chunks));
    assert.ok(b.ok, b.ok ? '' : b.reason);
    assert.deepEqual(b.value.records.map((r) => r.offset), [21, 22, 23]);
    assert.deepEqual([b.value.acks, b.value.idempotent], ['1', false]);
    assert.equal(codec.slice!(s, 21, 24, 2)!.count, 2);
    assert.equal(codec.slice!(s, 30, 40, 2), null);
  });

  it('encodes records of another format without a topic, for the reader to fill in', () => {
    const template: StoredBatch = { ...stored(Buffer.alloc(0), 5, 1), format: BatchFormat.kafka };
    const req = codec.encode([{ offset: 5, timestamp: 7, key: null, value: Buffer.from('x'), headers: [] }], 5, template);
    const chunks = retopicBatch(req.payload, 'orders', 0);
    const b = decodeBatch(Buffer.concat(chunks));
    assert.ok(b.ok, b.ok ? '' : b.reason);
    assert.deepEqual(b.value.records.map((r) => [r.topic, r.offset, r.timestamp]), [['orders', 5, 7]]);
  });
});
