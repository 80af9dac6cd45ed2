import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFormatRegistry, openFileLog, verifyPartitionDir } from '../../../../src/log/index.js';
import { BatchFlags, BatchFormat, defaultLogConfig, type AppendRequest, type NeutralRecord, type StoredBatch } from '../../../../src/log/types.js';
import { appendRequestFromBatch, kafkaBatchFormatCodec } from '../../../../src/protocols/kafka/codec/kafka-format.js';
import {
  buildControlBatch,
  buildRecordBatch,
  readBatchHeader,
  validateRecordBatch,
} from '../../../../src/protocols/kafka/codec/record-batch.js';

/** What the log would hand back after appending `req` at `baseOffset`. */
function store(req: AppendRequest, baseOffset: number, appendTime = 1_750_000_000_000): StoredBatch {
  const payload = Buffer.from(req.payload);
  kafkaBatchFormatCodec.stamp!({ ...req, payload }, { baseOffset, appendTime, appendMicros: appendTime * 1000 });
  return {
    format: req.format,
    flags: req.flags,
    baseOffset,
    lastOffset: baseOffset + req.recordCount - 1,
    recordCount: req.recordCount,
    firstTimestamp: req.firstTimestamp,
    maxTimestamp: req.maxTimestamp,
    producerId: req.producerId,
    producerEpoch: req.producerEpoch,
    baseSequence: req.baseSequence,
    payload,
  };
}

const records = [
  { timestamp: 1_700_000_000_000, key: Buffer.from('a'), value: Buffer.from('1'), headers: [{ key: 'h', value: Buffer.from('x') }] },
  { timestamp: 1_700_000_000_010, key: null, value: Buffer.from('2'), headers: [] },
  { timestamp: 1_700_000_000_005, key: Buffer.from('c'), value: null, headers: [{ key: 'n', value: null }] },
];

describe('kafka batch format', () => {
  it('builds the AppendRequest from a produce batch and stamps baseOffset', () => {
    const batch = buildRecordBatch(records, { producerId: 7, producerEpoch: 1, baseSequence: 10, transactional: true });
    const r = appendRequestFromBatch(batch);
    assert.ok(r.ok);
    assert.equal(r.request.format, BatchFormat.kafka);
    assert.equal(r.request.recordCount, 3);
    assert.equal(r.request.firstTimestamp, 1_700_000_000_000);
    assert.equal(r.request.maxTimestamp, 1_700_000_000_010);
    assert.equal(r.request.producerId, 7);
    assert.equal(r.request.producerEpoch, 1);
    assert.equal(r.request.baseSequence, 10);
    assert.equal(r.request.flags, BatchFlags.transactional);
    assert.equal(r.request.payload, batch, 'no copy');
    const stored = store(r.request, 1234);
    const h = validateRecordBatch(stored.payload);
    assert.ok(h.ok);
    assert.equal(h.header.baseOffset, 1234);
  });

  it('decodes with absolute offsets, timestamps, headers and null keys/values', () => {
    const r = appendRequestFromBatch(buildRecordBatch(records, { compression: 3 }));
    assert.ok(r.ok);
    const stored = store(r.request, 50);
    const out = kafkaBatchFormatCodec.decode(stored);
    assert.deepEqual(
      out,
      records.map((r, i) => ({ offset: 50 + i, timestamp: r.timestamp, key: r.key, value: r.value, headers: r.headers })),
    );
  });

  it('uses maxTimestamp for every record of a LogAppendTime batch', () => {
    const r = appendRequestFromBatch(buildRecordBatch(records), { logAppendTime: true, now: 1_750_000_000_000 });
    assert.ok(r.ok);
    assert.equal(r.request.maxTimestamp, 1_750_000_000_000);
    const stored = store(r.request, 0, 1_750_000_000_123);
    const h = readBatchHeader(stored.payload);
    assert.equal(h.timestampType, 1);
    assert.ok(validateRecordBatch(stored.payload).ok, 'CRC recomputed');
    for (const rec of kafkaBatchFormatCodec.decode(stored)) assert.equal(rec.timestamp, 1_750_000_000_123);
  });

  it('hands the verified batch CRC to the log, which stores it and verifies clean', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kafka-format-'));
    try {
      const log = await openFileLog(dir, defaultLogConfig, { formats: createFormatRegistry().register(kafkaBatchFormatCodec) });
      const createTime = appendRequestFromBatch(buildRecordBatch(records));
      const appendTime = appendRequestFromBatch(buildRecordBatch(records), { logAppendTime: true, now: 1_750_000_000_000 });
      assert.ok(createTime.ok && appendTime.ok);
      assert.deepEqual(createTime.request.payloadCrc32c, { from: 21, value: readBatchHeader(createTime.request.payload).crc });
      await log.append(createTime.request);
      await log.append(appendTime.request);
      // The LogAppendTime stamp recomputed the batch CRC; the value handed to the log followed it.
      assert.equal(appendTime.request.payloadCrc32c?.value, readBatchHeader(appendTime.request.payload).crc);
      await log.close();
      const report = await verifyPartitionDir(dir);
      assert.deepEqual(report.problems, []);
      assert.equal(report.records, 6);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('returns no records for control batches', () => {
    const ctl = buildControlBatch({ producerId: 1, producerEpoch: 0, commit: true, coordinatorEpoch: 0, timestamp: 5 });
    const r = appendRequestFromBatch(ctl);
    assert.ok(r.ok);
    assert.equal(r.request.flags, BatchFlags.transactional | BatchFlags.control);
    assert.deepEqual(kafkaBatchFormatCodec.decode(store(r.request, 9)), []);
  });

  it('encodes neutral records (with offset gaps) back into a valid batch, keeping the template', () => {
    const r = appendRequestFromBatch(buildRecordBatch(records, { compression: 4, producerId: 3, producerEpoch: 2, baseSequence: 0 }));
    assert.ok(r.ok);
    const template = store(r.request, 100);
    const kept: NeutralRecord[] = kafkaBatchFormatCodec.decode(template).filter((x) => x.offset !== 101);
    const req = kafkaBatchFormatCodec.encode(kept, 100, template);
    assert.equal(req.recordCount, 3, 'offsets 100..102 are still occupied');
    assert.equal(req.producerId, 3);
    const h = validateRecordBatch(req.payload);
    assert.ok(h.ok);
    assert.equal(h.header.compression, 4);
    assert.equal(h.header.recordCount, 2);
    assert.equal(h.header.lastOffsetDelta, 2);
    const again = kafkaBatchFormatCodec.decode(store(req, 100));
    assert.deepEqual(again, kept);
    // The head alone tells how many records the batch holds against the offsets it spans.
    assert.equal(kafkaBatchFormatCodec.messageCount?.(template), 3);
    assert.equal(kafkaBatchFormatCodec.messageCount?.({ ...store(req, 100), payload: store(req, 100).payload.subarray(0, 61) }), 2, 'from the 61-byte header (a file slice carries 320 bytes)');
    assert.equal(kafkaBatchFormatCodec.messageCount?.({ ...template, payload: template.payload.subarray(0, 60) }), null);
  });

  it('throws on a corrupt stored batch', () => {
    const r = appendRequestFromBatch(buildRecordBatch(records));
    assert.ok(r.ok);
    const stored = store(r.request, 0);
    stored.payload[stored.payload.length - 1] ^= 0xff;
    assert.throws(() => kafkaBatchFormatCodec.decode(stored), /corrupt/);
  });
});
