// Produce and Fetch handlers: round trips with every compression codec, batch validation,
// idempotent producers, acks, long-poll, sizes, read_committed, out-of-range offsets, and reading
// batches written in another format.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { buildRecordBatch, computeBatchCrc, readBatchHeader } from '../../../../src/protocols/kafka/codec/record-batch.js';
import { compress } from '../../../../src/protocols/kafka/codec/compression.js';
import { fetchHandler, transcodeWholeRecordsMax } from '../../../../src/protocols/kafka/handlers/fetch.js';
import { produceHandler } from '../../../../src/protocols/kafka/handlers/produce.js';
import { encodeNeutralBatch } from '../../../../src/log/neutral-format.js';
import { batchOf, dataHarness, recordsOf, type DataHarness } from './data-harness.js';
import { deleteRecordsHandler } from '../../../../src/protocols/kafka/handlers/delete-records.js';
import { listOffsetsHandler } from '../../../../src/protocols/kafka/handlers/list-offsets.js';
import { holdPurgeStart } from '../../../core/helpers.js';
import { encodeIggyBatch } from '../../../../src/protocols/iggy/codec/iggy-format.js';
import { BatchFormat, type StoredBatch } from '../../../../src/log/types.js';

function produce(h: DataHarness, topic: string, partition: number, records: Buffer | null, version = 9, acks = -1) {
  return h.call(produceHandler, version, { transactionalId: null, acks, timeoutMs: 1000, topicData: [{ name: topic, partitionData: [{ index: partition, records }] }] });
}

async function produceOk(h: DataHarness, topic: string, partition: number, records: Buffer, version = 9) {
  const r = await produce(h, topic, partition, records, version);
  const p = r!.responses[0]!.partitionResponses[0]!;
  assert.equal(p.errorCode, ErrorCode.NONE, `produce error ${p.errorCode} ${p.errorMessage}`);
  return p;
}

function fetch(h: DataHarness, topic: string, partition: number, fetchOffset: number, options: { version?: number; maxWaitMs?: number; minBytes?: number; maxBytes?: number; partitionMaxBytes?: number; isolationLevel?: number } = {}) {
  return h.ask(fetchHandler, options.version ?? 12, {
    replicaId: -1,
    maxWaitMs: options.maxWaitMs ?? 0,
    minBytes: options.minBytes ?? 1,
    maxBytes: options.maxBytes ?? 1 << 20,
    isolationLevel: options.isolationLevel ?? 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition, fetchOffset, partitionMaxBytes: options.partitionMaxBytes ?? 1 << 20, currentLeaderEpoch: -1, logStartOffset: -1, lastFetchedEpoch: -1 }] }],
    forgottenTopicsData: [],
    rackId: '',
  });
}

describe('Produce', () => {
  for (const [name, compression] of [['none', 0], ['gzip', 1], ['snappy', 2], ['lz4', 3], ['zstd', 4]] as const) {
    it(`round-trips a ${name} batch through Fetch, stored compressed as sent`, async (t) => {
      const h = await dataHarness(t, { topics: { orders: 2 } });
      const records = Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: `v${i}`.repeat(i + 1), headers: { h: `x${i}` } }));
      const first = await produceOk(h, 'orders', 1, batchOf(records.slice(0, 10), { compression }));
      const second = await produceOk(h, 'orders', 1, batchOf(records.slice(10), { compression }), 7);
      assert.deepEqual([first.baseOffset, second.baseOffset, second.logStartOffset], [0, 10, 0]);
      assert.equal(first.logAppendTimeMs, -1);
      const stored = await h.broker.read({ topic: 'orders' }, 1, 0, { maxBytes: 1 << 20 });
      assert.deepEqual(stored.map((b) => [readBatchHeader(b.payload).compression, readBatchHeader(b.payload).baseOffset, readBatchHeader(b.payload).partitionLeaderEpoch]), [
        [compression, 0, 0],
        [compression, 10, 0],
      ]);
      for (const version of [4, 11, 12]) {
        const f = await fetch(h, 'orders', 1, 0, { version });
        const p = f.responses[0]!.partitions[0]!;
        assert.equal(p.errorCode, ErrorCode.NONE);
        assert.equal(p.highWatermark, 20);
        assert.deepEqual(
          recordsOf(p.records).map((r) => [r.offset, r.key, r.value, r.headers.h]),
          records.map((r, i) => [i, r.key, r.value, r.headers.h]),
        );
      }
    });
  }

  it('answers v0-2 with UNSUPPORTED_VERSION on every partition', async (t) => {
    const h = await dataHarness(t, { topics: { orders: 1 } });
    for (const version of [0, 1, 2]) {
      const r = await produce(h, 'orders', 0, batchOf([{ key: 'a', value: 'b' }]), version);
      assert.equal(r!.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.UNSUPPORTED_VERSION);
    }
    assert.equal(h.broker.partition({ topic: 'orders' }, 0).stats().nextOffset, 0);
  });

  it('sends no response for acks=0 and still appends', async (t) => {
    const h = await dataHarness(t, { topics: { orders: 1 } });
    assert.equal(await produce(h, 'orders', 0, batchOf([{ key: 'a', value: 'b' }]), 9, 0), null);
    const log = h.broker.partition({ topic: 'orders' }, 0);
    const deadline = Date.now() + 5000;
    while (log.stats().highWatermark < 1 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    assert.equal(log.stats().highWatermark, 1);
  });

  it('refuses bad acks, unknown topics and partitions, and malformed batches per partition', async (t) => {
    const h = await dataHarness(t, { topics: { orders: 1 } });
    const good = batchOf([{ key: 'a', value: 'b' }]);
    assert.equal((await produce(h, 'orders', 0, good, 9, 2))!.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.INVALID_REQUIRED_ACKS);
    assert.equal((await produce(h, 'nope', 0, good))!.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal((await produce(h, 'orders', 5, good))!.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const badCrc = Buffer.from(batchOf([{ key: 'a', value: 'b' }]));
    badCrc[badCrc.length - 1]! ^= 0xff;
    assert.equal((await produce(h, 'orders', 0, badCrc))!.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.CORRUPT_MESSAGE);
    const magic1 = Buffer.from(good);
    magic1.writeInt8(1, 16);
    assert.equal((await produce(h, 'orders', 0, magic1))!.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.INVALID_RECORD);
    const two = Buffer.concat([good, good]);
    assert.equal((await produce(h, 'orders', 0, two))!.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.INVALID_RECORD);
    assert.equal(h.broker.partition({ topic: 'orders' }, 0).stats().nextOffset, 0, 'nothing appended');
  });

  it('refuses, with INVALID_RECORD and nothing appended, batches whose records do not decode, miscount, misnumber, or lack keys in a compacted topic', async (t) => {
    const h = await dataHarness(t, { topics: { orders: 1 } });
    await h.broker.createTopic('default', 'latest', { partitions: 1, config: { 'cleanup.policy': 'compact' } });
    // Each keeps a valid CRC (and batch length): only its records are wrong.
    const sealed = (b: Buffer): Buffer => {
      b.writeInt32BE(b.length - 12, 8);
      b.writeUInt32BE(computeBatchCrc(b), 17);
      return b;
    };
    const withBody = (template: Buffer, body: Buffer): Buffer => sealed(Buffer.concat([template.subarray(0, 61), body]));
    const two = batchOf([{ key: 'a', value: 'b' }, { key: 'c', value: 'd' }]);
    const gzip = batchOf([{ key: 'a', value: 'b' }], { compression: 1 });
    const zstd = batchOf([{ key: 'a', value: 'b' }], { compression: 4 });
    const garbage = Buffer.from(two);
    garbage.fill(0xff, 61);
    const miscounted = Buffer.from(batchOf([{ key: 'a', value: 'b' }]));
    miscounted.writeInt32BE(2, 23); // lastOffsetDelta
    miscounted.writeInt32BE(3, 57); // recordCount: the body holds one
    const unsequenced = Buffer.from(two);
    unsequenced.writeInt32BE(7, 43); // producerId
    unsequenced.writeInt32BE(-1, 53); // baseSequence
    const cases: [string, string, Buffer][] = [
      ['orders', 'garbage record bytes', sealed(garbage)],
      ['orders', 'a gzip body that is not gzip', withBody(gzip, Buffer.from('this is not a gzip stream'))],
      ['orders', 'a zstd body of 65 MiB once decompressed', withBody(zstd, compress(4, Buffer.alloc(65 * 1024 * 1024)))],
      ['orders', 'three records declared, one present', sealed(miscounted)],
      ['orders', 'offset deltas 0, 5', buildRecordBatch([0, 5].map((offsetDelta) => ({ offsetDelta, timestamp: 1_700_000_000_000, key: Buffer.from('k'), value: Buffer.from('v') })), { lastOffsetDelta: 1 })],
      ['orders', 'a producer id without a base sequence', sealed(unsequenced)],
      ['latest', 'a null key in a compacted topic', batchOf([{ key: 'k', value: 'v' }, { key: null, value: 'v' }])],
    ];
    for (const [topic, what, records] of cases) {
      const p = (await produce(h, topic, 0, records))!.responses[0]!.partitionResponses[0]!;
      assert.equal(p.errorCode, ErrorCode.INVALID_RECORD, `${what}: ${p.errorCode} ${p.errorMessage}`);
    }
    assert.equal(h.broker.partition({ topic: 'orders' }, 0).stats().nextOffset, 0, 'nothing appended');
    assert.equal(h.broker.partition({ topic: 'latest' }, 0).stats().nextOffset, 0, 'nothing appended');
    // Well-formed batches still go in, compressed or not; keyed records in the compacted topic too.
    assert.equal((await produceOk(h, 'orders', 0, two)).baseOffset, 0);
    assert.equal((await produceOk(h, 'orders', 0, gzip)).baseOffset, 2);
    assert.equal((await produceOk(h, 'orders', 0, zstd)).baseOffset, 3);
    assert.equal((await produceOk(h, 'latest', 0, batchOf([{ key: 'k', value: 'v' }]))).baseOffset, 0);
  });

  it('refuses a batch above max.message.bytes with MESSAGE_TOO_LARGE', async (t) => {
    const h = await dataHarness(t);
    await h.broker.createTopic('default', 'small', { partitions: 1, config: { 'max.message.bytes': 200 } });
    const r = await produce(h, 'small', 0, batchOf([{ key: 'k', value: 'x'.repeat(500) }]));
    assert.equal(r!.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.MESSAGE_TOO_LARGE);
  });

  it('dedupes an idempotent retry with the original offset, refuses gaps and old epochs', async (t) => {
    const h = await dataHarness(t, { topics: { orders: 1 } });
    const { producerId, epoch } = await h.broker.producers.initProducer();
    const batch = (seq: number, n: number, producerEpoch = epoch) =>
      batchOf(Array.from({ length: n }, (_, i) => ({ key: null, value: `s${seq + i}` })), { producerId, producerEpoch, baseSequence: seq });
    assert.equal((await produceOk(h, 'orders', 0, batch(0, 3))).baseOffset, 0);
    assert.equal((await produceOk(h, 'orders', 0, batch(3, 2))).baseOffset, 3);
    // A retry of the first batch: success with its original offset, nothing appended.
    assert.equal((await produceOk(h, 'orders', 0, batch(0, 3))).baseOffset, 0);
    assert.equal(h.broker.partition({ topic: 'orders' }, 0).stats().nextOffset, 5);
    // A gap.
    assert.equal((await produce(h, 'orders', 0, batch(9, 1)))!.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    // A newer epoch fences the old one.
    const bumped = await h.broker.producers.initProducer({ producerId, epoch });
    assert.equal((await produceOk(h, 'orders', 0, batch(0, 1, bumped.epoch))).baseOffset, 5);
    assert.equal((await produce(h, 'orders', 0, batch(5, 1, epoch)))!.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.INVALID_PRODUCER_EPOCH);
  });

  it('appends a transactional batch under its transactional id, only to a partition its transaction added (the core checks it)', async (t) => {
    const h = await dataHarness(t, { topics: { orders: 1 } });
    const tx = h.broker.transactions;
    const { producerId, epoch } = await tx.initProducerId({ scope: 'kafka', transactionalId: 'tx', transactionTimeoutMs: 60_000 });
    const txBatch = (seq: number, producerEpoch = epoch) => batchOf([{ key: null, value: 'a' }, { key: null, value: 'b' }], { producerId, producerEpoch, baseSequence: seq, transactional: true });
    const send = async (records: Buffer, transactionalId: string | null = 'tx') =>
      (await h.ask(produceHandler, 9, { transactionalId, acks: -1, timeoutMs: 1000, topicData: [{ name: 'orders', partitionData: [{ index: 0, records }] }] })).responses[0]!.partitionResponses[0]!;
    assert.equal((await send(txBatch(0))).errorCode, ErrorCode.INVALID_TXN_STATE, 'the partition was not added');
    await tx.addPartitions({ scope: 'kafka', transactionalId: 'tx', producerId, producerEpoch: epoch }, [{ topic: { topic: 'orders' }, partition: 0 }]);
    assert.equal((await send(txBatch(0), null)).errorCode, ErrorCode.INVALID_TXN_STATE, 'no transactional id');
    assert.equal((await send(txBatch(0), 'other')).errorCode, ErrorCode.INVALID_PRODUCER_ID_MAPPING, 'another transactional id');
    assert.equal((await send(txBatch(0, epoch + 1))).errorCode, ErrorCode.INVALID_PRODUCER_EPOCH, 'a newer epoch than the transaction has');
    const ok = await send(txBatch(0));
    assert.deepEqual([ok.errorCode, ok.baseOffset], [ErrorCode.NONE, 0]);
    assert.deepEqual(tx.openTransactions({ topic: 'orders' }, 0), [{ producerId, firstOffset: 0 }], 'the core tracks the open transaction');
    assert.equal(h.broker.partition({ topic: 'orders' }, 0).stats().nextOffset, 2, 'nothing refused was appended');
  });
});

describe('Fetch', () => {
  it('answers OFFSET_OUT_OF_RANGE above the log end and below the log start', async (t) => {
    const h = await dataHarness(t, { topics: { orders: 1 } });
    await produceOk(h, 'orders', 0, batchOf([{ key: 'a', value: '1' }, { key: 'b', value: '2' }]));
    const above = (await fetch(h, 'orders', 0, 3)).responses[0]!.partitions[0]!;
    assert.deepEqual([above.errorCode, above.highWatermark, above.logStartOffset], [ErrorCode.OFFSET_OUT_OF_RANGE, 2, 0]);
    const atEnd = (await fetch(h, 'orders', 0, 2)).responses[0]!.partitions[0]!;
    assert.deepEqual([atEnd.errorCode, atEnd.records?.length ?? 0], [ErrorCode.NONE, 0]);
    await h.broker.partition({ topic: 'orders' }, 0).deleteRecordsBefore(1);
    const below = (await fetch(h, 'orders', 0, 0)).responses[0]!.partitions[0]!;
    assert.deepEqual([below.errorCode, below.logStartOffset], [ErrorCode.OFFSET_OUT_OF_RANGE, 1]);
  });

  it('answers unknown topics and partitions per partition, v0-3 with UNSUPPORTED_VERSION, and a session id with FETCH_SESSION_ID_NOT_FOUND', async (t) => {
    const h = await dataHarness(t, { topics: { orders: 1 } });
    assert.equal((await fetch(h, 'nope', 0, 0)).responses[0]!.partitions[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal((await fetch(h, 'orders', 3, 0)).responses[0]!.partitions[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal((await fetch(h, 'orders', 0, 0, { version: 3 })).responses[0]!.partitions[0]!.errorCode, ErrorCode.UNSUPPORTED_VERSION);
    const withSession = await h.ask(fetchHandler, 12, { replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 1000, isolationLevel: 0, sessionId: 77, sessionEpoch: 3, topics: [], forgottenTopicsData: [], rackId: '' });
    assert.deepEqual([withSession.errorCode, withSession.sessionId], [ErrorCode.FETCH_SESSION_ID_NOT_FOUND, 0]);
  });

  it('gives read_committed an empty aborted list and the last stable offset; read_uncommitted a null list', async (t) => {
    const h = await dataHarness(t, { topics: { orders: 1 } });
    await produceOk(h, 'orders', 0, batchOf([{ key: 'a', value: '1' }]));
    const rc = (await fetch(h, 'orders', 0, 0, { isolationLevel: 1 })).responses[0]!.partitions[0]!;
    assert.deepEqual([rc.abortedTransactions, rc.lastStableOffset, rc.preferredReadReplica], [[], 1, -1]);
    const ru = (await fetch(h, 'orders', 0, 0, { isolationLevel: 0, version: 11 })).responses[0]!.partitions[0]!;
    assert.equal(ru.abortedTransactions, null);
  });

  it('long-polls until a produce wakes it (min_bytes), and answers empty at max_wait_ms', async (t) => {
    const h = await dataHarness(t, { topics: { orders: 1 } });
    const started = Date.now();
    const empty = await fetch(h, 'orders', 0, 0, { maxWaitMs: 50 });
    assert.ok(Date.now() - started >= 45, 'waited for max_wait_ms');
    assert.equal(empty.responses[0]!.partitions[0]!.records?.length ?? 0, 0);

    const pending = fetch(h, 'orders', 0, 0, { maxWaitMs: 20_000 });
    // Produce once the fetch is parked on the waiter.
    const deadline = Date.now() + 5000;
    while (h.frontend.fetchWaiters.size === 0 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    assert.equal(h.frontend.fetchWaiters.size, 1);
    await produceOk(h, 'orders', 0, batchOf([{ key: 'a', value: 'woke' }]));
    const woken = await pending;
    assert.ok(Date.now() - started < 10_000);
    assert.deepEqual(recordsOf(woken.responses[0]!.partitions[0]!.records).map((r) => r.value), ['woke']);
    assert.equal(h.frontend.fetchWaiters.size, 0);
  });

  it('follows an Iggy purge: requests during it wait and see the new log, and a long poll parked on a purged log wakes to it', async (t) => {
    const h = await dataHarness(t, { topics: { orders: 1 } });
    await produceOk(h, 'orders', 0, batchOf([{ key: 'a', value: '1' }, { key: 'b', value: '2' }]));
    const started = Date.now();
    const parked = fetch(h, 'orders', 0, 2, { maxWaitMs: 20_000 });
    const deadline = Date.now() + 5000;
    while (h.frontend.fetchWaiters.size === 0 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    assert.equal(h.frontend.fetchWaiters.size, 1, 'the fetch at the log end is parked');
    const { inPurge, release } = holdPurgeStart(h.broker);
    const purged = h.broker.purgeTopic({ topic: 'orders' });
    await inPurge;
    const during = fetch(h, 'orders', 0, 0);
    const latest = h.ask(listOffsetsHandler, 7, { replicaId: -1, isolationLevel: 0, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, timestamp: -1, currentLeaderEpoch: -1, maxNumOffsets: 1 }] }] });
    // Offset 2 exists in the old log only: the new, empty one refuses it.
    const deleted = h.ask(deleteRecordsHandler, 2, { topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, offset: 2 }] }], timeoutMs: 1000 });
    release();
    await purged;
    assert.equal((await deleted).topics[0]!.partitions[0]!.errorCode, ErrorCode.OFFSET_OUT_OF_RANGE, 'DeleteRecords waited for the new log');
    const seen = (await during).responses[0]!.partitions[0]!;
    assert.deepEqual([seen.errorCode, seen.highWatermark, recordsOf(seen.records).length], [ErrorCode.NONE, 0, 0], 'the new, empty log');
    const end = (await latest).topics[0]!.partitions[0]!;
    assert.deepEqual([end.errorCode, end.offset], [ErrorCode.NONE, 0]);
    const woken = (await parked).responses[0]!.partitions[0]!;
    assert.deepEqual([woken.errorCode, woken.highWatermark], [ErrorCode.OFFSET_OUT_OF_RANGE, 0], 'offset 2 is past the new end');
    assert.ok(Date.now() - started < 10_000, 'woken by the purge, not by max_wait_ms');
    await produceOk(h, 'orders', 0, batchOf([{ key: 'c', value: 'new' }]));
    assert.deepEqual(recordsOf((await fetch(h, 'orders', 0, 0)).responses[0]!.partitions[0]!.records).map((r) => r.value), ['new']);
  });

  it('answers KAFKA_STORAGE_ERROR when an Iggy purge takes longer than purgeWaitMsMax', async (t) => {
    const waitMs = 400;
    const h = await dataHarness(t, { topics: { orders: 8 }, settings: { purgeWaitMsMax: waitMs } });
    await produceOk(h, 'orders', 0, batchOf([{ key: 'a', value: '1' }]));
    const { inPurge, release } = holdPurgeStart(h.broker);
    const purged = h.broker.purgeTopic({ topic: 'orders' });
    await inPurge;
    // Bounded here too: without the limit the requests would wait for the held purge forever.
    const within = <T>(p: Promise<T>) => Promise.race([p, new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), 5_000))]);
    try {
      const fetched = await within(fetch(h, 'orders', 0, 0));
      assert.notEqual(fetched, 'still waiting');
      if (fetched !== 'still waiting') assert.equal(fetched.responses[0]!.partitions[0]!.errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
      const latest = await within(h.ask(listOffsetsHandler, 7, { replicaId: -1, isolationLevel: 0, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, timestamp: -1, currentLeaderEpoch: -1, maxNumOffsets: 1 }] }] }));
      assert.notEqual(latest, 'still waiting');
      if (latest !== 'still waiting') assert.equal(latest.topics[0]!.partitions[0]!.errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
      const deleted = await within(h.ask(deleteRecordsHandler, 2, { topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, offset: 1 }] }], timeoutMs: 1000 }));
      assert.notEqual(deleted, 'still waiting');
      if (deleted !== 'still waiting') assert.equal(deleted.topics[0]!.partitions[0]!.errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
      // Eight partitions of the purged topic in one fetch: one bound for the request (400 ms), not
      // one each (3.2 s); the check leaves 1.6 s for a slow machine.
      const started = Date.now();
      const all = await within(
        h.ask(fetchHandler, 12, { replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1, topics: [{ topic: 'orders', partitions: [0, 1, 2, 3, 4, 5, 6, 7].map((partition) => ({ partition, fetchOffset: 0, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, logStartOffset: -1, lastFetchedEpoch: -1 })) }], forgottenTopicsData: [], rackId: '' }),
      );
      assert.notEqual(all, 'still waiting');
      if (all !== 'still waiting') assert.deepEqual(all.responses[0]!.partitions.map((p) => p.errorCode), Array(8).fill(ErrorCode.KAFKA_STORAGE_ERROR));
      assert.ok(Date.now() - started < 5 * waitMs, `answered in ${Date.now() - started} ms, under eight waits of ${waitMs} ms`);
    } finally {
      release();
      await purged;
    }
    assert.equal((await fetch(h, 'orders', 0, 0)).responses[0]!.partitions[0]!.errorCode, ErrorCode.NONE, 'served again once the purge is done');
  });

  it('answers KAFKA_STORAGE_ERROR at once for a closed log, whether the fetch arrives after the close or was waiting on it', async (t) => {
    const h = await dataHarness(t, { topics: { orders: 1 } });
    await produceOk(h, 'orders', 0, batchOf([{ key: 'a', value: '1' }]));
    const started = Date.now();
    const parked = fetch(h, 'orders', 0, 1, { maxWaitMs: 20_000 });
    const deadline = Date.now() + 5000;
    while (h.frontend.fetchWaiters.size === 0 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    assert.equal(h.frontend.fetchWaiters.size, 1);
    const log = h.broker.partition({ topic: 'orders' }, 0);
    await log.close();
    log.close = () => Promise.resolve(); // the broker closes it again at the end of the test
    assert.equal((await parked).responses[0]!.partitions[0]!.errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
    assert.equal((await fetch(h, 'orders', 0, 1, { maxWaitMs: 20_000 })).responses[0]!.partitions[0]!.errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
    assert.ok(Date.now() - started < 5_000, 'neither waited out max_wait_ms');
  });

  it('returns at least one whole batch above the size limits (KIP-74) and keeps later partitions within max_bytes', async (t) => {
    const h = await dataHarness(t, { topics: { orders: 2 } });
    await produceOk(h, 'orders', 0, batchOf([{ key: 'big', value: 'x'.repeat(3000) }]));
    await produceOk(h, 'orders', 0, batchOf([{ key: 'next', value: 'y' }]));
    await produceOk(h, 'orders', 1, batchOf([{ key: 'other', value: 'z'.repeat(500) }]));
    const r = await h.ask(fetchHandler, 12, {
      replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 1000, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: 'orders', partitions: [0, 1].map((partition) => ({ partition, fetchOffset: 0, partitionMaxBytes: 100, currentLeaderEpoch: -1, logStartOffset: -1, lastFetchedEpoch: -1 })) }],
      forgottenTopicsData: [], rackId: '',
    });
    const [p0, p1] = r.responses[0]!.partitions;
    assert.deepEqual(recordsOf(p0!.records).map((x) => x.key), ['big'], 'one whole batch, the next one left out');
    assert.equal(p1!.records?.length ?? 0, 0, 'the response is already over max_bytes');
  });

  it('transcodes batches written in another format to RecordBatch v2', async (t) => {
    const h = await dataHarness(t, { topics: { mixed: 1 } });
    await produceOk(h, 'mixed', 0, batchOf([{ key: 'kafka', value: 'first' }]));
    await h.broker.append({ topic: 'mixed' }, 0, encodeNeutralBatch([
      { timestamp: 1_700_000_000_500, key: Buffer.from('neutral'), value: Buffer.from('second'), headers: [{ key: 'from', value: Buffer.from('neutral') }] },
      { timestamp: 1_700_000_000_501, key: null, value: Buffer.from('third') },
    ]));
    const r = await fetch(h, 'mixed', 0, 0);
    assert.deepEqual(
      recordsOf(r.responses[0]!.partitions[0]!.records).map((x) => [x.offset, x.key, x.value, x.headers.from ?? null]),
      [
        [0, 'kafka', 'first', null],
        [1, 'neutral', 'second', 'neutral'],
        [2, null, 'third', null],
      ],
    );
  });

  it('transcodes a very large Iggy batch a part at a time, from the fetch offset, within the partition budget', async (t) => {
    const h = await dataHarness(t);
    // As an Iggy-created topic: batches up to 128 MiB (docs/iggy.md).
    await h.broker.createTopic('default', 'big', { partitions: 1, config: { 'max.message.bytes': 128 * 1024 * 1024 } });
    const n = 20_000;
    const records = Array.from({ length: n }, (_, i) => ({ offset: i, timestamp: 1_700_000_000_000, key: null, value: Buffer.from(`m${i}`.padEnd(100, '.')), headers: [] }));
    const template: StoredBatch = { format: BatchFormat.neutral, flags: 0, baseOffset: 0, lastOffset: -1, recordCount: 0, firstTimestamp: 1_700_000_000_000, maxTimestamp: 1_700_000_000_000, producerId: -1, producerEpoch: -1, baseSequence: -1, payload: Buffer.alloc(0) };
    await h.broker.append({ topic: 'big' }, 0, encodeIggyBatch(records, 0, template));
    const at = async (offset: number) => recordsOf((await fetch(h, 'big', 0, offset, { partitionMaxBytes: 64 * 1024, maxBytes: 64 * 1024 })).responses[0]!.partitions[0]!.records);
    const first = await at(0);
    assert.ok(first.length >= 1 && first.length <= transcodeWholeRecordsMax, `${first.length} records, not all ${n}`);
    assert.deepEqual([first[0]!.offset, first[0]!.value?.slice(0, 2)], [0, 'm0']);
    const inside = await at(15_000);
    assert.deepEqual([inside[0]!.offset, inside[0]!.value?.slice(0, 6)], [15_000, 'm15000'], 'starts at the fetch offset, inside the stored batch');
    // A consumer fetching on from each answer's end reads every record once, in order.
    let next = 0;
    let fetches = 0;
    while (next < n && fetches++ < 1000) {
      const got = await at(next);
      assert.equal(got[0]!.offset, next);
      next = got.at(-1)!.offset + 1;
    }
    assert.equal(next, n);
  });
});
