// Produce as Kafka's LogValidator judges and rewrites a batch: per-record errors (KIP-467
// record_errors and error_message), the timestamp window (message.timestamp.before/after/
// difference.max.ms), maxTimestamp recomputed from the records, LogAppendTime topics, and
// recompression to the topic's compression.type, inline and on a worker thread.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { ManualClock } from '../../../../src/base/clock.js';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { batchRecords, computeBatchCrc, readBatchHeader, validateRecordBatch } from '../../../../src/protocols/kafka/codec/record-batch.js';
import { produceHandler } from '../../../../src/protocols/kafka/handlers/produce.js';
import { produceTurns } from '../../../../src/protocols/kafka/produce-turns.js';
import type { StoredBatch } from '../../../../src/log/types.js';
import { batchOf, dataHarness, type DataHarness, type SimpleRecord } from './data-harness.js';

const now = 1_700_000_000_000;

function produce(h: DataHarness, topic: string, records: Buffer, version = 9) {
  return h.ask(produceHandler, version, { transactionalId: null, acks: -1, timeoutMs: 1000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] });
}

async function partitionOut(h: DataHarness, topic: string, records: Buffer, version = 9) {
  return (await produce(h, topic, records, version)).responses[0]!.partitionResponses[0]!;
}

async function stored(h: DataHarness, topic: string): Promise<StoredBatch[]> {
  return h.broker.read({ topic }, 0, 0, { maxBytes: 64 << 20 });
}

function values(batch: Buffer): (string | null)[] {
  const r = batchRecords(batch);
  assert.ok(r.ok, r.ok ? '' : r.reason);
  return r.value.map((x) => (x.value === null ? null : x.value.toString()));
}

/** `batch` (uncompressed) with its records section replaced by `body`, compressed with `codec`. */
function withBody(batch: Buffer, codec: number, body: Buffer): Buffer {
  const out = Buffer.concat([batch.subarray(0, 61), body]);
  out.writeInt32BE(out.length - 12, 8);
  out.writeInt16BE((out.readInt16BE(21) & ~7) | codec, 21);
  out.writeUInt32BE(computeBatchCrc(out), 17);
  return out;
}

/** Counts the tasks the broker's worker pool takes. */
function countOffloads(h: DataHarness): { count: number } {
  const transcoder = h.broker.transcoder;
  const offload = transcoder.offloadTask.bind(transcoder);
  const counter = { count: 0 };
  transcoder.offloadTask = <T>(...args: Parameters<typeof offload>): Promise<T> | null => {
    const run = offload<T>(...args);
    if (run !== null) counter.count++;
    return run;
  };
  return counter;
}

const keyed = (n: number, at = now): SimpleRecord[] => Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: `v${i}`, timestamp: at + i }));

describe('Produce record errors (KIP-467)', () => {
  it('names each bad record of a compacted topic in record_errors, with Kafka\'s error_message, and appends nothing', async (t) => {
    const h = await dataHarness(t, { clock: new ManualClock(now) });
    await h.broker.createTopic('default', 'latest', { partitions: 1, config: { 'cleanup.policy': 'compact' } });
    const records = keyed(5);
    records[1] = { key: null, value: 'x' };
    records[3] = { key: null, value: 'y' };
    const p = await partitionOut(h, 'latest', batchOf(records));
    assert.equal(p.errorCode, ErrorCode.INVALID_RECORD);
    const message = 'Compacted topic cannot accept message without key in topic partition latest-0.';
    assert.deepEqual(p.recordErrors, [
      { batchIndex: 1, batchIndexErrorMessage: message },
      { batchIndex: 3, batchIndexErrorMessage: message },
    ]);
    assert.equal(
      p.errorMessage,
      `One or more records have been rejected due to 2 record errors in total, and only showing the first three errors at most: [RecordError(batchIndex=1, message='${message}'), RecordError(batchIndex=3, message='${message}')]`,
    );
    assert.equal(h.broker.partition({ topic: 'latest' }, 0).stats().nextOffset, 0, 'nothing appended');
    // v7 has neither field: the same error code, without them.
    const v7 = await partitionOut(h, 'latest', batchOf(records), 7);
    assert.equal(v7.errorCode, ErrorCode.INVALID_RECORD);
    assert.deepEqual(v7.recordErrors, []);
    assert.equal(v7.errorMessage, null);
  });

  it('keeps whole-batch problems out of record_errors', async (t) => {
    const h = await dataHarness(t, { topics: { orders: 1 } });
    const garbage = batchOf(keyed(2));
    garbage.fill(0xff, 61);
    garbage.writeUInt32BE(computeBatchCrc(garbage), 17);
    const p = await partitionOut(h, 'orders', garbage);
    assert.equal(p.errorCode, ErrorCode.INVALID_RECORD);
    assert.deepEqual(p.recordErrors, []);
    assert.match(p.errorMessage ?? '', /record 0/);
  });
});

describe('Produce timestamps', () => {
  it('refuses CreateTime records outside message.timestamp.before/after.max.ms with INVALID_TIMESTAMP and the records named', async (t) => {
    const h = await dataHarness(t, { clock: new ManualClock(now) });
    await h.broker.createTopic('default', 'window', { partitions: 1, config: { 'message.timestamp.before.max.ms': '60000', 'message.timestamp.after.max.ms': '1000' } });
    const records = keyed(4);
    records[0]!.timestamp = now - 60_001; // too old
    records[2]!.timestamp = now + 1_001; // too new
    const p = await partitionOut(h, 'window', batchOf(records));
    assert.equal(p.errorCode, ErrorCode.INVALID_TIMESTAMP);
    assert.deepEqual(p.recordErrors.map((e) => e.batchIndex), [0, 2]);
    assert.equal(p.recordErrors[0]!.batchIndexErrorMessage, `Timestamp ${now - 60_001} of message with offset 0 is out of range. The timestamp should be within [${now - 60_000}, ${now + 1_000}]`);
    assert.equal(p.errorMessage, 'One or more records have been rejected due to invalid timestamp');
    assert.equal(h.broker.partition({ topic: 'window' }, 0).stats().nextOffset, 0, 'nothing appended');
    // At the edges of the window, and records without a timestamp (-1), are accepted.
    records[0]!.timestamp = now - 60_000;
    records[2]!.timestamp = now + 1_000;
    records[3]!.timestamp = -1;
    records[3]!.timestamp = undefined;
    assert.equal((await partitionOut(h, 'window', batchOf(records))).errorCode, ErrorCode.NONE);
  });

  it('falls back to the deprecated message.timestamp.difference.max.ms while before/after are unset', async (t) => {
    const h = await dataHarness(t, { clock: new ManualClock(now) });
    await h.broker.createTopic('default', 'diff', { partitions: 1, config: { 'message.timestamp.difference.max.ms': '5000' } });
    await h.broker.createTopic('default', 'both', { partitions: 1, config: { 'message.timestamp.difference.max.ms': '5000', 'message.timestamp.after.max.ms': '100000' } });
    const ahead = batchOf([{ key: 'k', value: 'v', timestamp: now + 50_000 }]);
    assert.equal((await partitionOut(h, 'diff', ahead)).errorCode, ErrorCode.INVALID_TIMESTAMP);
    assert.equal((await partitionOut(h, 'both', ahead)).errorCode, ErrorCode.NONE, 'after.max.ms set: it wins');
    assert.equal((await partitionOut(h, 'both', batchOf([{ key: 'k', value: 'v', timestamp: now - 50_000 }]))).errorCode, ErrorCode.INVALID_TIMESTAMP, 'before falls back');
  });

  it('stores maxTimestamp recomputed from the records, with a valid CRC', async (t) => {
    const h = await dataHarness(t, { topics: { orders: 1 } });
    const records = keyed(3);
    records[1]!.timestamp = now + 500;
    for (const [compression, lie] of [[0, 5], [1, now + 10_000]] as const) {
      const p = await partitionOut(h, 'orders', batchOf(records, { maxTimestamp: lie, compression }));
      assert.equal(p.errorCode, ErrorCode.NONE);
      assert.equal(p.logAppendTimeMs, -1);
    }
    for (const batch of await stored(h, 'orders')) {
      const header = readBatchHeader(batch.payload);
      assert.equal(header.maxTimestamp, now + 500);
      assert.equal(batch.maxTimestamp, now + 500, 'the log index has it too');
      assert.ok(validateRecordBatch(batch.payload).ok, 'CRC recomputed');
    }
  });

  it('stamps a LogAppendTime topic\'s batches with the append time, answers it as log_append_time, and ignores the window', async (t) => {
    const clock = new ManualClock(now + 3_600_000);
    const h = await dataHarness(t, { clock });
    await h.broker.createTopic('default', 'lat', { partitions: 1, config: { 'message.timestamp.type': 'LogAppendTime', 'message.timestamp.before.max.ms': '1' } });
    const p = await partitionOut(h, 'lat', batchOf(keyed(2), { compression: 3 }));
    assert.equal(p.errorCode, ErrorCode.NONE);
    assert.equal(p.logAppendTimeMs, now + 3_600_000);
    const [batch] = await stored(h, 'lat');
    const header = readBatchHeader(batch!.payload);
    assert.equal(header.timestampType, 1);
    assert.equal(header.maxTimestamp, now + 3_600_000);
    assert.ok(validateRecordBatch(batch!.payload).ok);
    // A producer may not set the LogAppendTime bit itself on such a topic (Kafka's validateTimestamp).
    const claimed = await partitionOut(h, 'lat', batchOf(keyed(1), { timestampType: 1 }));
    assert.equal(claimed.errorCode, ErrorCode.INVALID_TIMESTAMP);
    assert.deepEqual(claimed.recordErrors.map((e) => e.batchIndex), [0]);
  });
});

describe('Produce compression.type', () => {
  it('recompresses batches of another codec to the topic\'s, keeps those already in it, and keeps the producer\'s under producer', async (t) => {
    const h = await dataHarness(t, { topics: { asis: 1 } });
    await h.broker.createTopic('default', 'z', { partitions: 1, config: { 'compression.type': 'zstd' } });
    await h.broker.createTopic('default', 'plain', { partitions: 1, config: { 'compression.type': 'uncompressed' } });
    const { producerId, epoch } = await h.broker.producers.initProducer();
    for (const compression of [0, 1, 2, 3, 4]) {
      for (const topic of ['asis', 'z', 'plain']) assert.equal((await partitionOut(h, topic, batchOf(keyed(3), { compression, producerId, producerEpoch: epoch, baseSequence: compression * 3 }))).errorCode, ErrorCode.NONE);
    }
    const codecs = async (topic: string) => (await stored(h, topic)).map((b) => readBatchHeader(b.payload).compression);
    assert.deepEqual(await codecs('asis'), [0, 1, 2, 3, 4]);
    assert.deepEqual(await codecs('z'), [4, 4, 4, 4, 4]);
    assert.deepEqual(await codecs('plain'), [0, 0, 0, 0, 0]);
    for (const batch of [...(await stored(h, 'z')), ...(await stored(h, 'plain'))]) {
      assert.ok(validateRecordBatch(batch.payload).ok, 'CRC and length of the rebuilt batch');
      assert.deepEqual(values(batch.payload), ['v0', 'v1', 'v2']);
      const header = readBatchHeader(batch.payload);
      assert.equal(header.producerId, producerId, 'producer fields kept');
      assert.equal(header.baseSequence, (batch.baseOffset / 3) * 3);
    }
  });

  it('recompresses large batches on a worker thread and keeps pipelined appends of a partition in order', async (t) => {
    const h = await dataHarness(t, { workers: { threads: 1, offloadBytesMin: 1024, queueMax: 16 } });
    await h.broker.createTopic('default', 'gz', { partitions: 1, config: { 'compression.type': 'gzip' } });
    const { producerId, epoch } = await h.broker.producers.initProducer();
    const big = (i: number) => batchOf([{ key: `k${i}`, value: `${i}:`.padEnd(4096, 'x') }], { producerId, producerEpoch: epoch, baseSequence: i });
    const small = (i: number) => batchOf([{ key: `k${i}`, value: `${i}:` }], { producerId, producerEpoch: epoch, baseSequence: i });
    const transcoder = h.broker.transcoder;
    const offload = transcoder.offloadTask.bind(transcoder);
    let offloaded = 0;
    transcoder.offloadTask = <T>(...args: Parameters<typeof offload>): Promise<T> | null => {
      const run = offload<T>(...args);
      if (run !== null) offloaded++;
      return run;
    };
    // Started together, as pipelined requests are: large (on the worker) and small (inline) alternate.
    const outs = await Promise.all(Array.from({ length: 8 }, (_, i) => partitionOut(h, 'gz', i % 2 === 0 ? big(i) : small(i))));
    assert.deepEqual(outs.map((p) => [p.errorCode, p.baseOffset]), Array.from({ length: 8 }, (_, i) => [ErrorCode.NONE, i]));
    const batches = await stored(h, 'gz');
    assert.deepEqual(batches.map((b) => readBatchHeader(b.payload).compression), Array(8).fill(1));
    assert.deepEqual(batches.map((b) => values(b.payload)[0]!.split(':')[0]), ['0', '1', '2', '3', '4', '5', '6', '7']);
    assert.equal(offloaded, 4, 'the four large batches went to the worker');
    assert.equal(produceTurns(h.broker).pending, 0, 'no partition left waiting');
  });
  it('recompresses on this thread when the worker fails', async (t) => {
    const h = await dataHarness(t, { workers: { threads: 1, offloadBytesMin: 1024, queueMax: 16 } });
    await h.broker.createTopic('default', 'lz', { partitions: 1, config: { 'compression.type': 'lz4' } });
    let asked = 0;
    h.broker.transcoder.offloadTask = <T>(): Promise<T> | null => (asked++, Promise.reject(new Error('the worker thread exited')));
    const p = await partitionOut(h, 'lz', batchOf([{ key: 'k', value: 'x'.repeat(4096) }, { key: 'k2', value: 'y' }]));
    assert.equal(p.errorCode, ErrorCode.NONE);
    assert.equal(asked, 1);
    const [batch] = await stored(h, 'lz');
    assert.equal(readBatchHeader(batch!.payload).compression, 3);
    assert.deepEqual(values(batch!.payload), ['x'.repeat(4096), 'y']);
  });

  it('decodes a small batch that inflates far on a worker thread, record errors included', async (t) => {
    // Compressed batches go to the worker from 16 x 64 KiB = 1 MiB of records.
    const h = await dataHarness(t, { workers: { threads: 1, offloadBytesMin: 64 * 1024, queueMax: 16 } });
    await h.broker.createTopic('default', 'plain', { partitions: 1 });
    await h.broker.createTopic('default', 'latest', { partitions: 1, config: { 'cleanup.policy': 'compact' } });
    const offloads = countOffloads(h);
    // 4 MiB of zeros: a zstd batch of a few hundred bytes.
    const bomb = (key: string | null) => batchOf([{ key, value: Buffer.alloc(4 << 20).toString('latin1') }, { key: 'k', value: 'small' }], { compression: 4 });
    assert.ok(bomb('k').length < 4096, `the batch is small (${bomb('k').length} bytes)`);
    const ok = await partitionOut(h, 'plain', bomb('k'));
    assert.equal(ok.errorCode, ErrorCode.NONE);
    assert.equal(offloads.count, 1, 'decoded on the worker');
    const [batch] = await stored(h, 'plain');
    assert.equal(readBatchHeader(batch!.payload).compression, 4, 'stored as produced');
    assert.equal(values(batch!.payload)[1], 'small');
    const refused = await partitionOut(h, 'latest', bomb(null));
    assert.equal(offloads.count, 2);
    assert.equal(refused.errorCode, ErrorCode.INVALID_RECORD);
    assert.deepEqual(refused.recordErrors, [{ batchIndex: 0, batchIndexErrorMessage: 'Compacted topic cannot accept message without key in topic partition latest-0.' }]);
    // Small compressed batches stay on this thread: a zstd block may hold 128 KiB, under the bar.
    for (const compression of [1, 2, 3, 4]) assert.equal((await partitionOut(h, 'plain', batchOf(keyed(3), { compression }))).errorCode, ErrorCode.NONE);
    assert.equal(offloads.count, 2);
  });

  it('hands a gzip batch whose trailer understates its size to a worker once it decodes past the inline limit', async (t) => {
    const h = await dataHarness(t, { workers: { threads: 1, offloadBytesMin: 64 * 1024, queueMax: 16 } });
    await h.broker.createTopic('default', 'plain', { partitions: 1 });
    const offloads = countOffloads(h);
    const plain = batchOf([{ key: 'k', value: 'z'.repeat(3 << 20) }, { key: 'k2', value: 'tail' }]);
    const section = plain.subarray(61);
    // Two gzip members, as Kafka's GZIPInputStream reads them: the trailer seen last is the small second member's.
    const twoMembers = Buffer.concat([gzipSync(section.subarray(0, section.length - 16)), gzipSync(section.subarray(section.length - 16))]);
    assert.ok(twoMembers.readUInt32LE(twoMembers.length - 4) === 16);
    const p = await partitionOut(h, 'plain', withBody(plain, 1, twoMembers));
    assert.equal(p.errorCode, ErrorCode.NONE);
    assert.equal(offloads.count, 1, 'finished on the worker');
    const [batch] = await stored(h, 'plain');
    assert.deepEqual(values(batch!.payload), ['z'.repeat(3 << 20), 'tail']);
  });
});
