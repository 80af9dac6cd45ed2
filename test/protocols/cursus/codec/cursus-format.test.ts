// Appending CBV2 batches through the core: cursusAppendRequest and the codec's stamp, on a broker
// built with the server's format registry (builtinFormats), so the log assigns the offsets.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BatchFormat, type AppendStamp } from '../../../../src/base/batch.js';
import { ManualClock } from '../../../../src/base/clock.js';
import { Broker } from '../../../../src/core/broker.js';
import { cursusAppendRequest, cursusBatchFormatCodec, decodeBatch, encodeBatch, retopicBatch, type CursusRecord } from '../../../../src/protocols/cursus/codec/index.js';
import { appendRequestFromBatch } from '../../../../src/protocols/kafka/codec/kafka-format.js';
import { buildRecordBatch } from '../../../../src/protocols/kafka/codec/record-batch.js';
import { builtinFormats } from '../../../../src/server/listeners.js';
import { tempDir, testScryptCost } from '../../../core/helpers.js';

function batchBytes(payloads: string[], partition = -1, offsets: number[] = payloads.map(() => 0)): Buffer {
  const records: CursusRecord[] = payloads.map((p, i) => ({ topic: 'orders', partition, offset: offsets[i]!, payload: Buffer.from(p) }));
  return Buffer.concat(encodeBatch({ idempotent: false, topic: 'orders', partition, acks: '1', batchStart: 0, batchEnd: 0, records }));
}

describe('cursusAppendRequest and the cursus stamp', () => {
  it('a published batch takes its partition and the offsets the log assigns, in place', async (t) => {
    const clock = new ManualClock();
    const broker = await Broker.open({ dataDir: tempDir(t), memory: true, clock, formats: builtinFormats(), maintenanceIntervalMs: 0, scryptCost: testScryptCost, rootUser: { username: 'root', password: 'pw' } });
    t.after(() => broker.close());
    const topic = await broker.createTopic('default', 'orders', { partitions: 2 });
    const first = cursusAppendRequest(batchBytes(['a', 'b']), { partition: 1, now: clock.now() });
    assert.ok(first.ok);
    assert.equal(first.value.recordCount, 2);
    assert.deepEqual(await broker.append(topic, 1, first.value).then((r) => [r.baseOffset, r.lastOffset]), [0, 1]);
    clock.advance(5);
    const second = cursusAppendRequest(batchBytes(['c']), { partition: 1, now: clock.now() });
    assert.ok(second.ok);
    await broker.append(topic, 1, second.value);

    const stored = await broker.read(topic, 1, 0, { maxBytes: 1 << 20 });
    assert.deepEqual(stored.map((b) => [b.format, b.baseOffset, b.lastOffset]), [[BatchFormat.cursus, 0, 1], [BatchFormat.cursus, 2, 2]]);
    const decoded = stored.map((b) => decodeBatch(b.payload));
    for (const d of decoded) assert.ok(d.ok);
    const records = decoded.flatMap((d) => (d.ok ? d.value.records : []));
    assert.deepEqual(records.map((r) => [r.partition, r.offset, r.payload.toString()]), [[1, 0, 'a'], [1, 1, 'b'], [1, 2, 'c']]);
    assert.equal(decoded[0]!.ok && decoded[0]!.value.partition, 1, 'the header names the partition too');
    // The batch's time is its append time; a record without a timestamp is read with it.
    assert.equal(stored[1]!.firstTimestamp, clock.now());
    assert.deepEqual(cursusBatchFormatCodec.decode(stored[1]!).map((r) => r.timestamp), [clock.now()]);
  });

  it('refuses what is not a CBV2 batch of at least one record', () => {
    assert.equal(cursusAppendRequest(Buffer.from('nope'), { partition: 0, now: 0 }).ok, false);
    assert.equal(cursusAppendRequest(batchBytes([]), { partition: 0, now: 0 }).ok, false);
    const truncated = batchBytes(['x']);
    assert.equal(cursusAppendRequest(truncated.subarray(0, truncated.length - 1), { partition: 0, now: 0 }).ok, false);
  });

  it('a batch written whole keeps the gaps between its offsets, moved to the assigned one', () => {
    const payload = batchBytes(['a', 'b'], 3, [10, 12]);
    const stamp: AppendStamp = { baseOffset: 40, appendTime: 0, appendMicros: 0 };
    cursusBatchFormatCodec.stamp!({ format: BatchFormat.cursus, recordCount: 3, firstTimestamp: 0, maxTimestamp: 0, producerId: -1, producerEpoch: -1, baseSequence: -1, flags: 0, payload }, stamp);
    const b = decodeBatch(payload);
    assert.ok(b.ok);
    assert.deepEqual(b.value.records.map((r) => [r.partition, r.offset]), [[3, 40], [3, 42]]);
  });

  it('records of another format are transcoded into CBV2 on a worker thread too (the codec is registered with its module)', async (t) => {
    const broker = await Broker.open({
      dataDir: tempDir(t),
      memory: true,
      formats: builtinFormats(),
      workers: { threads: 1, offloadBytesMin: 1 },
      maintenanceIntervalMs: 0,
      scryptCost: testScryptCost,
      rootUser: { username: 'root', password: 'pw' },
    });
    t.after(() => broker.close());
    const topic = await broker.createTopic('default', 'orders', { partitions: 1 });
    const kafka = appendRequestFromBatch(buildRecordBatch([{ timestamp: 7, key: Buffer.from('k'), value: Buffer.from('from-kafka') }, { timestamp: 8, key: null, value: Buffer.from('second') }]));
    assert.ok(kafka.ok);
    await broker.append(topic, 0, kafka.request);
    assert.ok(broker.transcoder.offloads(BatchFormat.cursus, (await broker.read(topic, 0, 0, { maxBytes: 1 << 20 }))[0]!), 'this batch goes to the worker');
    const read = await broker.reads.open(topic, 0).readRecords({ from: 0, end: 2, recordsMax: 10, bytesMax: 1 << 20, format: BatchFormat.cursus, isolation: 'read_committed' });
    assert.equal(read.chunks.length, 1);
    const b = decodeBatch(Buffer.concat(retopicBatch(read.chunks[0] as Buffer, 'orders', 0)));
    assert.ok(b.ok);
    assert.deepEqual(b.value.records.map((r) => [r.offset, r.payload.toString(), r.key?.toString(), r.timestamp]), [[0, 'from-kafka', 'k', 7], [1, 'second', undefined, 8]]);
  });
});
