import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppendWaiters } from '../../src/core/append-waiters.js';
import { Broker } from '../../src/core/broker.js';
import { ManualClock } from '../../src/base/clock.js';
import { ReadService, type ReadChunk } from '../../src/core/reads.js';
import { ManualScheduler } from '../../src/core/scheduler.js';
import type { TxnIdentity } from '../../src/core/transactions.js';
import { BatchFlags, BatchFormat, createFormatRegistry, decodeNeutralBatch, encodeNeutralBatch, type AppendRequest, type BatchFormatCodec, type NeutralRecord, type StoredBatch } from '../../src/log/index.js';
import { tempDir, testScryptCost } from './helpers.js';
import { closeSync, mkdtempSync, openSync, readdirSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isQuartetError } from '../../src/base/errors.js';
import { BufferLease } from '../../src/base/buffer-pool.js';
import { decodeEnvelopeHeader, envelopeBytes, envelopeHeaderBytes } from '../../src/log/envelope.js';
import { builtinFormats } from '../../src/server/listeners.js';
import { nodeFileSystem, type LogFileSystem } from '../../src/log/fs.js';
import { wholeBatchAs } from '../../src/core/transcode.js';
import { appendRequestFromBatch } from '../../src/protocols/kafka/codec/kafka-format.js';
import { buildRecordBatch } from '../../src/protocols/kafka/codec/record-batch.js';

// A format of the test's own ("lines": a JSON list of [offset, value]), so that transcoding is
// exercised through the neutral record with no protocol codec. It can cut its batches (slice).
const lines = BatchFormat.felix;
let slices = 0;
let decodes = 0;

function linesPayload(records: Array<{ offset: number; value: string }>): Buffer {
  return Buffer.from(JSON.stringify(records.map((r) => [r.offset, r.value])));
}

function linesRecords(payload: Buffer): NeutralRecord[] {
  return (JSON.parse(payload.toString()) as Array<[number, string]>).map(([offset, value]) => ({ offset, timestamp: 0, key: null, value: Buffer.from(value), headers: [] }));
}

const linesCodec: BatchFormatCodec = {
  format: lines,
  // Offsets are stored relative to the batch, as the log assigns them at append.
  decode(batch) {
    decodes++;
    return linesRecords(batch.payload).map((r) => ({ ...r, offset: batch.baseOffset + r.offset }));
  },
  messageCount: (batch) => (JSON.parse(batch.payload.toString()) as unknown[]).length,
  slice(batch, from, toExclusive, countMax) {
    slices++;
    const kept = linesRecords(batch.payload).map((r) => ({ ...r, offset: batch.baseOffset + r.offset })).filter((r) => r.offset >= from && r.offset < toExclusive).slice(0, countMax);
    if (kept.length === 0) return null;
    return { chunks: [linesPayload(kept.map((r) => ({ offset: r.offset - batch.baseOffset, value: r.value!.toString() })))], count: kept.length, lastOffset: kept.at(-1)!.offset };
  },
  encode(records, baseOffset, template): AppendRequest {
    return { ...template, format: lines, recordCount: records.length, payload: linesPayload(records.map((r) => ({ offset: r.offset - baseOffset, value: r.value!.toString() }))) };
  },
};

function linesBatch(values: string[]): AppendRequest {
  const payload = linesPayload(values.map((value, offset) => ({ offset, value })));
  return { format: lines, recordCount: values.length, firstTimestamp: 1000, maxTimestamp: 1000, producerId: -1, producerEpoch: -1, baseSequence: -1, flags: 0, payload };
}

function neutral(values: string[], timestamp = 1000): AppendRequest {
  return encodeNeutralBatch(
    values.map((value) => ({ value })),
    { timestamp },
  );
}

async function open(t: { after(fn: () => Promise<void> | void): void }): Promise<{ broker: Broker; reads: ReadService; clock: ManualClock }> {
  const clock = new ManualClock();
  const broker = await Broker.open({ dataDir: tempDir(t), memory: true, clock, scheduler: new ManualScheduler(clock), rootUser: { username: 'root', password: 'pw' }, maintenanceIntervalMs: 0, scryptCost: testScryptCost });
  t.after(() => broker.close());
  return { broker, reads: new ReadService(broker, createFormatRegistry().register(linesCodec)), clock };
}

/** The values in chunks of the lines format. */
function linesValues(chunks: readonly ReadChunk[] | null): string[] {
  return (chunks ?? []).flatMap((c) => linesRecords(c as Buffer).map((r) => r.value!.toString()));
}

/** The values in chunks of the neutral format. */
function neutralValues(chunks: readonly ReadChunk[] | null): string[] {
  return (chunks ?? []).flatMap((c) => decodeNeutralBatch({ payload: c as Buffer, baseOffset: 0 } as StoredBatch).map((r) => r.value!.toString()));
}

async function begin(broker: Broker, transactionalId: string): Promise<TxnIdentity> {
  const { producerId, epoch } = await broker.transactions.initProducerId({ scope: 'kafka', transactionalId, transactionTimeoutMs: 60_000 });
  return { scope: 'kafka', transactionalId, producerId, producerEpoch: epoch };
}

function txnBatch(id: TxnIdentity, baseSequence: number, values: string[]): AppendRequest {
  return encodeNeutralBatch(
    values.map((value) => ({ value })),
    { timestamp: 1000, producerId: id.producerId, producerEpoch: id.producerEpoch, baseSequence, flags: BatchFlags.transactional },
  );
}

test('readBatches: stored bytes as they are in their own format, transcoded in another', async (t) => {
  const { broker, reads } = await open(t);
  const topic = await broker.createTopic('default', 'mixed', { partitions: 1 });
  await broker.append(topic, 0, neutral(['a', 'b']));
  await broker.append(topic, 0, linesBatch(['c']));
  const reader = reads.open(topic, 0);
  const stored = await broker.read(topic, 0, 0, { maxBytes: 1 << 20 });

  const decoded = decodes;
  const asNeutral = await reader.readBatches({ offset: 0, isolation: 'read_uncommitted', format: BatchFormat.neutral, bytesMax: 1 << 20, firstBatchWhole: true });
  assert.equal(asNeutral.chunks?.length, 2);
  assert.ok((asNeutral.chunks![0] as Buffer).equals(stored[0]!.payload), 'the neutral batch is served as stored');
  assert.deepEqual(neutralValues(asNeutral.chunks), ['a', 'b', 'c']);
  assert.equal(asNeutral.bytes, asNeutral.chunks!.reduce((n, c) => n + c.length, 0));
  assert.deepEqual([asNeutral.position.logStartOffset, asNeutral.position.highWatermark, asNeutral.position.nextOffset], [0, 3, 3]);
  assert.equal(asNeutral.abortedTransactions, null, 'read_uncommitted reports no aborted list');
  assert.equal(decodes, decoded + 1, 'the lines batch is transcoded');

  const asLines = await reader.readBatches({ offset: 0, isolation: 'read_uncommitted', format: lines, bytesMax: 1 << 20, firstBatchWhole: true });
  assert.ok((asLines.chunks![1] as Buffer).equals(stored[1]!.payload), 'the lines batch is served as stored');
  assert.equal(decodes, decoded + 1, 'without decoding it');
  assert.deepEqual(linesValues(asLines.chunks), ['a', 'b', 'c']);
});

test('readBatches: the byte budget, the first batch whole, and offsets out of range', async (t) => {
  const { broker, reads } = await open(t);
  const topic = await broker.createTopic('default', 'sized', { partitions: 1 });
  await broker.append(topic, 0, neutral(['x'.repeat(100)]));
  await broker.append(topic, 0, neutral(['y'.repeat(100)]));
  const reader = reads.open(topic, 0);
  const one = (await broker.read(topic, 0, 0, { maxBytes: 1 })).map((b) => b.payload.length)[0]!;
  const read = (bytesMax: number, firstBatchWhole: boolean) => reader.readBatches({ offset: 0, isolation: 'read_uncommitted', format: BatchFormat.neutral, bytesMax, firstBatchWhole });

  assert.deepEqual(neutralValues((await read(one * 2, false)).chunks).length, 2);
  assert.deepEqual(neutralValues((await read(one * 2 - 1, false)).chunks), ['x'.repeat(100)], 'the second batch would pass the budget');
  assert.equal((await read(one - 1, false)).chunks, null, 'nothing fits');
  assert.deepEqual(neutralValues((await read(one - 1, true)).chunks), ['x'.repeat(100)], 'the first batch goes in whole');
  assert.equal((await read(0, false)).chunks, null);

  const above = await reader.readBatches({ offset: 3, isolation: 'read_uncommitted', format: BatchFormat.neutral, bytesMax: 1 << 20, firstBatchWhole: true });
  assert.deepEqual([above.outOfRange, above.chunks], [true, null]);
  const atEnd = await reader.readBatches({ offset: 2, isolation: 'read_uncommitted', format: BatchFormat.neutral, bytesMax: 1 << 20, firstBatchWhole: true });
  assert.deepEqual([atEnd.outOfRange, atEnd.chunks], [false, null]);
  await broker.partition(topic, 0).deleteRecordsBefore(1);
  const below = await reader.readBatches({ offset: 0, isolation: 'read_uncommitted', format: BatchFormat.neutral, bytesMax: 1 << 20, firstBatchWhole: true });
  assert.deepEqual([below.outOfRange, below.position.logStartOffset], [true, 1]);
});

test('read_committed: reads end at the last stable offset; aborted records are reported, or passed over', async (t) => {
  const { broker, reads } = await open(t);
  const topic = await broker.createTopic('default', 'txn', { partitions: 1 });
  await broker.append(topic, 0, neutral(['before']));
  const id = await begin(broker, 'tx');
  await broker.transactions.addPartitions(id, [{ topic, partition: 0 }]);
  await broker.append(topic, 0, txnBatch(id, 0, ['aborted-1', 'aborted-2']), { transaction: id });
  await broker.append(topic, 0, neutral(['during']));
  const reader = reads.open(topic, 0);

  const open_ = await reader.readBatches({ offset: 0, isolation: 'read_committed', format: BatchFormat.neutral, bytesMax: 1 << 20, firstBatchWhole: true });
  assert.deepEqual([open_.position.lastStableOffset, open_.position.highWatermark], [1, 4]);
  assert.deepEqual(neutralValues(open_.chunks), ['before'], 'nothing at or past the open transaction');
  const uncommitted = await reader.readBatches({ offset: 0, isolation: 'read_uncommitted', format: BatchFormat.neutral, bytesMax: 1 << 20, firstBatchWhole: true });
  assert.deepEqual(neutralValues(uncommitted.chunks), ['before', 'aborted-1', 'aborted-2', 'during']);

  await broker.transactions.endTxn(id, false);
  await broker.append(topic, 0, neutral(['after']));
  // Whole batches: the aborted transaction is reported for the client to filter.
  const reported = await reader.readBatches({ offset: 0, isolation: 'read_committed', format: BatchFormat.neutral, bytesMax: 1 << 20, firstBatchWhole: true });
  assert.deepEqual(reported.abortedTransactions?.map((a) => [a.producerId, a.firstOffset]), [[id.producerId, 1]]);
  assert.equal(reported.position.lastStableOffset, 6);

  // Exact records: markers and aborted records are passed over.
  const committed = await reader.readRecords({ from: 0, end: 6, recordsMax: 100, bytesMax: 1 << 20, format: lines, isolation: 'read_committed' });
  assert.deepEqual(linesValues(committed.chunks), ['before', 'during', 'after']);
  assert.deepEqual([committed.records, committed.lastOffset, committed.next, committed.reachedEnd], [3, 5, 6, true]);
  // From inside the aborted transaction: all passed over up to the marker, and the consumer may commit past it.
  const skipped = await reader.readRecords({ from: 1, end: 6, recordsMax: 1, bytesMax: 1 << 20, format: lines, isolation: 'read_committed' });
  assert.deepEqual(linesValues(skipped.chunks), ['during']);
  assert.equal(skipped.passedTo, 2);
  const all = await reader.readRecords({ from: 0, end: 6, recordsMax: 100, bytesMax: 1 << 20, format: lines, isolation: 'read_uncommitted' });
  assert.deepEqual(linesValues(all.chunks), ['before', 'aborted-1', 'aborted-2', 'during', 'after'], 'read_uncommitted sees aborted records, never markers');
  assert.equal(await reader.newestStart({ below: 6, count: 2, isolation: 'read_committed', scanBytesMax: 1 << 20 }), 3, 'the two newest committed records start at "during"');
  assert.equal(await reader.newestStart({ below: 6, count: 3, isolation: 'read_uncommitted', scanBytesMax: 1 << 20 }), 2, 'read_uncommitted counts the aborted records (never the marker)');
});

test('readRecords with decode: the records with their offsets, cut to the range and budget, markers and aborted records passed over', async (t) => {
  const { broker, reads } = await open(t);
  const topic = await broker.createTopic('default', 'decoded', { partitions: 1 });
  await broker.append(topic, 0, neutral(['a', 'b']));
  const id = await begin(broker, 'tx-decoded');
  await broker.transactions.addPartitions(id, [{ topic, partition: 0 }]);
  await broker.append(topic, 0, txnBatch(id, 0, ['aborted']), { transaction: id });
  await broker.transactions.endTxn(id, false); // the marker at offset 3
  await broker.append(topic, 0, linesBatch(['c', 'd', 'e']));
  const reader = reads.open(topic, 0);
  const request = { end: 7, bytesMax: 1 << 20, format: lines, decode: true } as const;

  const all = await reader.readRecords({ ...request, from: 1, recordsMax: 100, isolation: 'read_committed' });
  assert.deepEqual(all.decoded?.map((r) => [r.offset, r.value!.toString()]), [[1, 'b'], [4, 'c'], [5, 'd'], [6, 'e']]);
  assert.deepEqual([all.chunks.length, all.records, all.lastOffset, all.next], [0, 4, 6, 7]);
  const cut = await reader.readRecords({ ...request, from: 0, recordsMax: 4, isolation: 'read_uncommitted' });
  assert.deepEqual(cut.decoded?.map((r) => r.offset), [0, 1, 2, 4], 'read_uncommitted sees the aborted record, never the marker');
  assert.equal(cut.lastOffset, 4, 'a read stopped by its record budget continues after its last record');
});

test('readRecords with markers: a raw read_uncommitted reader gets the markers of its own format, not those of another', async (t) => {
  const { broker, reads } = await open(t);
  const topic = await broker.createTopic('default', 'raw', { partitions: 1 });
  const id = await begin(broker, 'tx-raw');
  await broker.transactions.addPartitions(id, [{ topic, partition: 0 }]);
  await broker.append(topic, 0, txnBatch(id, 0, ['t']), { transaction: id });
  await broker.transactions.endTxn(id, true); // a neutral-format marker at offset 1
  await broker.append(topic, 0, { ...linesBatch(['marker-of-lines']), flags: BatchFlags.control });
  await broker.append(topic, 0, linesBatch(['after']));
  const reader = reads.open(topic, 0);
  const raw = await reader.readRecords({ from: 0, end: 4, recordsMax: 10, bytesMax: 1 << 20, format: lines, isolation: 'read_uncommitted', markers: true });
  assert.deepEqual(linesValues(raw.chunks), ['t', 'marker-of-lines', 'after']);
  assert.deepEqual([raw.records, raw.next], [3, 4]);
  const plain = await reader.readRecords({ from: 0, end: 4, recordsMax: 10, bytesMax: 1 << 20, format: lines, isolation: 'read_uncommitted' });
  assert.deepEqual(linesValues(plain.chunks), ['t', 'after'], 'without it, no marker');
  const committed = await reader.readRecords({ from: 0, end: 4, recordsMax: 10, bytesMax: 1 << 20, format: lines, isolation: 'read_committed', markers: true });
  assert.deepEqual(linesValues(committed.chunks), ['t', 'after'], 'read_committed never shows markers');
});

test('readRecords: the record budget cuts a batch (slice in the same format, transcoding in another); the byte budget stops the read', async (t) => {
  const { broker, reads } = await open(t);
  const topic = await broker.createTopic('default', 'budget', { partitions: 1 });
  await broker.append(topic, 0, linesBatch(['l0', 'l1', 'l2']));
  await broker.append(topic, 0, neutral(['n3', 'n4', 'n5']));
  const reader = reads.open(topic, 0);
  const before = slices;
  const whole = await reader.readRecords({ from: 0, end: 6, recordsMax: 3, bytesMax: 1 << 20, format: lines, isolation: 'read_uncommitted' });
  assert.equal(slices, before, 'a dense batch wholly in range is served as stored');
  assert.deepEqual([linesValues(whole.chunks), whole.lastOffset, whole.next], [['l0', 'l1', 'l2'], 2, 3]);

  const cut = await reader.readRecords({ from: 1, end: 6, recordsMax: 3, bytesMax: 1 << 20, format: lines, isolation: 'read_uncommitted' });
  assert.equal(slices, before + 1, 'the batch starting before the offset is cut');
  assert.deepEqual(linesValues(cut.chunks), ['l1', 'l2', 'n3'], 'then the neutral batch is transcoded, cut at the record budget');
  assert.deepEqual([cut.records, cut.lastOffset], [3, 3]);

  const first = (await broker.read(topic, 0, 0, { maxBytes: 1 }))[0]!.payload.length;
  const capped = await reader.readRecords({ from: 0, end: 6, recordsMax: 100, bytesMax: first, format: lines, isolation: 'read_uncommitted' });
  assert.deepEqual([linesValues(capped.chunks), capped.reachedEnd, capped.next], [['l0', 'l1', 'l2'], false, 3], 'the byte budget ends the read after the first batch');
});

test('the log start moved under a read: the read goes on from the new start', async (t) => {
  const { broker, reads } = await open(t);
  const topic = await broker.createTopic('default', 'moved', { partitions: 1 });
  for (const v of ['a', 'b', 'c', 'd']) await broker.append(topic, 0, neutral([v]));
  const reader = reads.open(topic, 0);
  // A read that began at 0 (its start taken before DeleteRecords moved the log start to 2).
  await broker.partition(topic, 0).deleteRecordsBefore(2);
  const read = await reader.readRecords({ from: 0, end: 4, recordsMax: 10, bytesMax: 1 << 20, format: lines, isolation: 'read_uncommitted' });
  assert.deepEqual(linesValues(read.chunks), ['c', 'd']);
  assert.deepEqual([read.lastOffset, read.reachedEnd], [3, true]);
  assert.equal(await reader.newestStart({ below: 4, count: 10, isolation: 'read_uncommitted', scanBytesMax: 1 << 20 }), 2, 'fewer records than asked: the log start');
});

test('a log replaced under a read (an Iggy purge) ends the read with what it has', async (t) => {
  const { broker, reads } = await open(t);
  const topic = await broker.createTopic('default', 'purged', { partitions: 1 });
  await broker.append(topic, 0, neutral(['old']));
  const reader = reads.open(topic, 0);
  assert.equal(reader.isCurrent(), true);
  await broker.purgeTopic(topic);
  assert.deepEqual([reader.isCurrent(), reader.isCurrentLog(), reader.isClosed()], [false, false, true]);
  const read = await reader.readRecords({ from: 0, end: 1, recordsMax: 10, bytesMax: 1 << 20, format: lines, isolation: 'read_uncommitted' });
  assert.deepEqual([read.records, read.chunks.length], [0, 0]);
  const fresh = await reads.openSettled(topic, 0);
  assert.deepEqual([fresh.isCurrent(), fresh.position().highWatermark], [true, 0]);
});

test('long polls wake on an append, and time out empty', async (t) => {
  const { broker, reads } = await open(t);
  const topic = await broker.createTopic('default', 'waits', { partitions: 1 });
  const reader = reads.open(topic, 0);
  const waiters = new AppendWaiters(1);
  const woken = waiters.waitForAppend([reader], 10_000);
  assert.equal(waiters.size, 1);
  assert.equal(await waiters.waitForAppend([reader], 10_000), false, 'past the bound a read answers at once');
  await broker.append(topic, 0, neutral(['wake']));
  assert.equal(await woken, true);
  assert.equal(waiters.size, 0);
  assert.equal(await waiters.waitForAppend([reader], 5), false);
});

test('timestamps: the first record at or after a time, and the newest', async (t) => {
  const { broker, reads } = await open(t);
  const topic = await broker.createTopic('default', 'times', { partitions: 1 });
  await broker.append(topic, 0, encodeNeutralBatch([{ value: 'a', timestamp: 100 }, { value: 'b', timestamp: 200 }], { timestamp: 100 }));
  await broker.append(topic, 0, neutral(['c'], 300));
  const reader = reads.open(topic, 0);
  assert.deepEqual(await reader.recordAtTimestamp(150), { offset: 1, timestamp: 200 }, 'the exact record inside the batch');
  assert.deepEqual(await reader.recordAtTimestamp(250), { offset: 2, timestamp: 300 });
  assert.equal(await reader.recordAtTimestamp(301), null);
  assert.equal(await reader.offsetForTimestamp(150), 0, 'the batch holding it');
  assert.equal((await reader.maxTimestampOffset())?.timestamp, 300);
});

test('a file-sliced batch whose bytes rotted on disk is never transcoded for a reader: a worker finds it, the log records it, the read fails with corrupt_batch', async (t) => {
  const dataDir = tempDir(t);
  const options = { dataDir, formats: builtinFormats(), workers: { threads: 1, offloadBytesMin: 0, queueMax: 8 }, rootUser: { username: 'root', password: 'pw' }, maintenanceIntervalMs: 0, scryptCost: testScryptCost };
  let broker = await Broker.open(options);
  const topic = await broker.createTopic('default', 'rot', { partitions: 1 });
  for (let b = 0; b < 3; b++) await broker.append(topic, 0, neutral(Array.from({ length: 20 }, (_, i) => `v${b}-${i}`.padEnd(1_000, '.'))));
  const dir = join(dataDir, 'logs', String(topic.internalId), '0');
  await broker.close();
  // Inside a value in the middle of the second batch: its records still decode, only the CRC can tell.
  const file = join(dir, readdirSync(dir).find((n) => n.endsWith('.log'))!);
  const second = (await readEnvelopes(file))[1]!;
  flipByte(file, (await readFile(file)).indexOf('v1-10', second.position) + 100);
  broker = await Broker.open(options);
  const reader = broker.reads.open(broker.catalog.requireTopic({ topic: 'rot' }), 0);
  const lease = new BufferLease();
  try {
    // As Kafka (another format): the first batch is transcoded; the second goes to a worker as a file range.
    const first = await reader.readBatches({ offset: 0, isolation: 'read_uncommitted', format: BatchFormat.kafka, bytesMax: 1, firstBatchWhole: true, lease, fileSlicesMin: 1_024 });
    assert.equal(first.failure, null);
    const bad = await reader.readBatches({ offset: second.baseOffset, isolation: 'read_uncommitted', format: BatchFormat.kafka, bytesMax: 1, firstBatchWhole: true, lease, fileSlicesMin: 1_024 });
    assert.equal(bad.chunks, null);
    assert.ok(isQuartetError(bad.failure?.error) && bad.failure.error.code === 'corrupt_batch', String(bad.failure?.error));
    assert.equal(broker.storage.corruptBatches(), 1);
    assert.match(broker.metrics.render(), /quartet_corrupt_batches_total\{namespace="default",partition="0",topic="rot"\} 1/);
    // A records read of it (an Iggy poll's path) fails the same way, with the records before it served.
    const records = await reader.readRecords({ from: 0, end: 60, recordsMax: 60, bytesMax: 1 << 20, format: BatchFormat.kafka, isolation: 'read_uncommitted', afterWrite: (release) => release(), fileSlicesMin: 1_024 });
    assert.equal(records.records, 20);
    assert.equal(records.next, second.baseOffset);
  } finally {
    lease.release();
    // Before tempDir's own hook removes the directory.
    await broker.close();
  }
});

test('batches of another format that a worker transcodes are read by the worker: the event loop reads their heads only', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'quartet-core-'));
  let readBytes = 0;
  const logFs: LogFileSystem = {
    ...nodeFileSystem,
    read: async (fd, buffer, offset, length, position) => {
      const n = await nodeFileSystem.read(fd, buffer, offset, length, position);
      readBytes += n;
      return n;
    },
  };
  const formats = builtinFormats();
  const broker = await Broker.open({ dataDir, formats, logFs, workers: { threads: 1, offloadBytesMin: 64 * 1024, queueMax: 8 }, rootUser: { username: 'root', password: 'pw' }, maintenanceIntervalMs: 0, scryptCost: testScryptCost });
  t.after(async () => {
    await broker.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const topic = await broker.createTopic('default', 'foreign', { partitions: 1 });
  // Four neutral batches of ~200 KB each, read as Kafka: every one is transcoded.
  for (let b = 0; b < 4; b++) await broker.append(topic, 0, neutral(Array.from({ length: 200 }, (_, i) => `v${b}-${i}`.padEnd(1_000, '.'))));
  const reader = broker.reads.open(topic, 0);
  const fetch = async () => {
    const lease = new BufferLease();
    try {
      const read = await reader.readBatches({ offset: 0, isolation: 'read_uncommitted', format: BatchFormat.kafka, bytesMax: 8 << 20, firstBatchWhole: true, lease });
      return read.chunks!.map((c) => Buffer.from(c as Buffer));
    } finally {
      lease.release();
    }
  };
  await fetch();
  readBytes = 0;
  const chunks = await fetch();
  // The batches' headers and heads (a small window each, once the log has met large batches), not their 800 KB.
  assert.ok(readBytes < 64 * 1024, `the event loop read ${readBytes} bytes`);
  const stored = await broker.partition(topic, 0).read(0, { maxBytes: 8 << 20 });
  assert.deepEqual(chunks, stored.map((b) => wholeBatchAs(formats, BatchFormat.kafka, b)), 'byte for byte as transcoded inline');
});

test('a timestamp lookup in a small batch whose records decode to 16 MiB decodes it on a worker, not on the event loop', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'quartet-core-'));
  // Kafka's codec, counting the decodes of this (the main) thread; the worker loads its own by URL.
  const formats = builtinFormats();
  const kafka = formats.get(BatchFormat.kafka)!;
  let mainDecodes = 0;
  formats.register({ ...kafka, decode: (batch) => (mainDecodes++, kafka.decode(batch)) }, formats.source(BatchFormat.kafka));
  const broker = await Broker.open({ dataDir, formats, workers: { threads: 1, offloadBytesMin: 64 * 1024, queueMax: 8 }, rootUser: { username: 'root', password: 'pw' }, maintenanceIntervalMs: 0, scryptCost: testScryptCost });
  t.after(async () => {
    await broker.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const topic = await broker.createTopic('default', 'inflating', { partitions: 1 });
  const small = buildRecordBatch([{ timestamp: 1_000, key: null, value: Buffer.from('small') }]);
  const value = Buffer.alloc(1 << 20);
  const inflating = buildRecordBatch(Array.from({ length: 16 }, (_, i) => ({ timestamp: 2_000 + i, key: null, value })), { compression: 4 });
  assert.ok(inflating.length < 16 * 1024, `${inflating.length} bytes stored`);
  for (const batch of [small, inflating]) {
    const built = appendRequestFromBatch(batch);
    assert.ok(built.ok);
    await broker.append(topic, 0, built.request);
  }
  const reader = broker.reads.open(topic, 0);
  assert.deepEqual(await reader.recordAtTimestamp(2_005), { offset: 6, timestamp: 2_005 }, 'the exact record, found on the worker');
  assert.equal(mainDecodes, 0, 'the 16 MiB batch was not decoded on the event loop');
  assert.deepEqual(await reader.recordAtTimestamp(500), { offset: 0, timestamp: 1_000 });
  assert.equal(mainDecodes, 1, 'a small batch is decoded where it is');
});

async function readEnvelopes(file: string): Promise<Array<{ position: number; baseOffset: number; payloadLength: number }>> {
  const bytes = await readFile(file);
  const out: Array<{ position: number; baseOffset: number; payloadLength: number }> = [];
  for (let position = 0; position + envelopeHeaderBytes <= bytes.length; ) {
    const h = decodeEnvelopeHeader(bytes, position);
    assert.ok(typeof h !== 'string');
    out.push({ position, baseOffset: h.baseOffset, payloadLength: h.payloadLength });
    position += envelopeBytes(h);
  }
  return out;
}

function flipByte(file: string, position: number): void {
  const fd = openSync(file, 'r+');
  try {
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, position);
    b[0] = b[0]! ^ 0x10;
    writeSync(fd, b, 0, 1, position);
  } finally {
    closeSync(fd);
  }
}
