import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BatchFormat } from '../../src/base/batch.js';
import { ManualClock } from '../../src/base/clock.js';
import { isQuartetError, type CoreErrorCode } from '../../src/base/errors.js';
import { createLogger, silentLogger } from '../../src/base/logger.js';
import type { MetadataStore } from '../../src/core/metadata-store.js';
import {
  lastSequenceOf,
  partitionKey,
  ProducerStateManager,
  felixProducerWindowBatches,
  producerEpochMax,
  producerWindowBatches,
  sequenceMax,
  type ProducerBatch,
} from '../../src/core/producer-state.js';
import { defaultLogConfig, encodeNeutralBatch, MemoryLog, openFileLog, type PartitionLog } from '../../src/log/index.js';
import { memoryStore, tempDir } from './helpers.js';

function code(expected: CoreErrorCode) {
  return (err: unknown) => isQuartetError(err) && err.code === expected;
}

const P0 = partitionKey(1, 0);
const P1 = partitionKey(1, 1);

async function open(store: MetadataStore = memoryStore(), clock = new ManualClock(), options: { entriesMax?: number; idleExpiryMs?: number } = {}) {
  return ProducerStateManager.open(store, { clock, logger: silentLogger, ...options });
}

/** Appends through the manager the way the Broker does, at consecutive offsets of a fake log. */
function appender(manager: ProducerStateManager, key: string) {
  let next = 0;
  return (batch: ProducerBatch) => {
    const verdict = manager.check(key, batch);
    if (verdict.kind === 'duplicate') return verdict;
    const offsets = { baseOffset: next, lastOffset: next + batch.recordCount - 1, appendTime: 1000 + next };
    next += batch.recordCount;
    manager.recordAppend(key, batch, offsets);
    return { kind: 'append' as const, ...offsets };
  };
}

test('sequences: in order appends, duplicates within the window, gaps refused', async () => {
  const manager = await open();
  const { producerId, epoch } = await manager.initProducer();
  assert.deepEqual([producerId, epoch], [0, 0]);
  const append = appender(manager, P0);
  const b = (baseSequence: number, recordCount = 2): ProducerBatch => ({ producerId, producerEpoch: epoch, baseSequence, recordCount });
  assert.deepEqual(append(b(0)), { kind: 'append', baseOffset: 0, lastOffset: 1, appendTime: 1000 });
  assert.deepEqual(append(b(2)), { kind: 'append', baseOffset: 2, lastOffset: 3, appendTime: 1002 });
  // A retry of either batch gets the original offsets back.
  assert.deepEqual(manager.check(P0, b(0)), { kind: 'duplicate', baseOffset: 0, lastOffset: 1, appendTime: 1000 });
  assert.deepEqual(manager.check(P0, b(2)), { kind: 'duplicate', baseOffset: 2, lastOffset: 3, appendTime: 1002 });
  // Same first sequence but a different size is not the same batch.
  assert.throws(() => manager.check(P0, b(2, 1)), code('out_of_order_sequence'));
  assert.throws(() => manager.check(P0, b(5)), code('out_of_order_sequence'));
  assert.throws(() => manager.check(P0, b(3)), code('out_of_order_sequence'));
  assert.equal(manager.check(P0, b(4)).kind, 'append');
  // Other partitions are independent; the producer has no state there yet, so any sequence goes.
  assert.equal(manager.check(P1, b(17)).kind, 'append');
});

test(`the window keeps the last ${producerWindowBatches} batches`, async () => {
  const manager = await open();
  const { producerId } = await manager.initProducer();
  const append = appender(manager, P0);
  for (let s = 0; s <= producerWindowBatches; s++) append({ producerId, producerEpoch: 0, baseSequence: s, recordCount: 1 });
  assert.throws(() => manager.check(P0, { producerId, producerEpoch: 0, baseSequence: 0, recordCount: 1 }), code('out_of_order_sequence'));
  assert.equal(manager.check(P0, { producerId, producerEpoch: 0, baseSequence: 1, recordCount: 1 }).kind, 'duplicate');
});

test(`a Felix batch counts one sequence whatever its records, and the window keeps its last ${felixProducerWindowBatches}`, async () => {
  const manager = await open();
  const { producerId } = await manager.initProducer();
  const append = appender(manager, P0);
  const b = (baseSequence: number, recordCount: number): ProducerBatch => ({ producerId, producerEpoch: 0, baseSequence, recordCount, format: BatchFormat.felix });
  assert.deepEqual(append(b(0, 3)), { kind: 'append', baseOffset: 0, lastOffset: 2, appendTime: 1000 });
  assert.equal(manager.check(P0, b(1, 2)).kind, 'append', 'the next batch takes the next sequence');
  assert.throws(() => manager.check(P0, b(3, 1)), code('out_of_order_sequence'));
  assert.deepEqual(manager.check(P0, b(0, 3)), { kind: 'duplicate', baseOffset: 0, lastOffset: 2, appendTime: 1000 });
  for (let s = 1; s <= felixProducerWindowBatches; s++) append(b(s, 2));
  assert.equal(manager.window(P0, producerId)!.batches.length, felixProducerWindowBatches);
  assert.equal(manager.check(P0, b(1, 2)).kind, 'duplicate', 'the oldest batch kept');
  assert.throws(() => manager.check(P0, b(0, 3)), code('out_of_order_sequence'));
});

test('window: the epoch and the batches a producer has on a partition, for protocols with their own sequence rules', async () => {
  const manager = await open();
  const { producerId } = await manager.initProducer();
  assert.equal(manager.window(P0, producerId), null, 'none before the first batch');
  const append = appender(manager, P0);
  for (let s = 0; s <= producerWindowBatches; s++) append({ producerId, producerEpoch: 3, baseSequence: s * 2, recordCount: 2 });
  const window = manager.window(P0, producerId)!;
  assert.equal(window.epoch, 3);
  assert.equal(window.batches.length, producerWindowBatches, 'only the batches the window keeps');
  assert.deepEqual(window.batches.at(-1), { firstSeq: producerWindowBatches * 2, lastSeq: producerWindowBatches * 2 + 1, baseOffset: producerWindowBatches * 2, lastOffset: producerWindowBatches * 2 + 1 });
  assert.equal(manager.window(P1, producerId), null, 'per partition');
});

test('epochs: re-init bumps the epoch, fences the old one, and must restart at sequence 0', async () => {
  const manager = await open();
  const first = await manager.initProducer();
  const append = appender(manager, P0);
  append({ producerId: first.producerId, producerEpoch: 0, baseSequence: 0, recordCount: 3 });
  const second = await manager.initProducer(first);
  assert.deepEqual(second, { producerId: first.producerId, epoch: 1 });
  // The zombie is fenced here and on partitions where the new epoch has not written yet.
  assert.throws(() => manager.check(P0, { producerId: first.producerId, producerEpoch: 0, baseSequence: 3, recordCount: 1 }), code('producer_fenced'));
  assert.throws(() => manager.check(P1, { producerId: first.producerId, producerEpoch: 0, baseSequence: 0, recordCount: 1 }), code('producer_fenced'));
  assert.throws(() => manager.check(P0, { producerId: first.producerId, producerEpoch: 1, baseSequence: 3, recordCount: 1 }), code('out_of_order_sequence'));
  append({ producerId: first.producerId, producerEpoch: 1, baseSequence: 0, recordCount: 1 });
  await assert.rejects(manager.initProducer(first), code('producer_fenced'));
  // Past int16 max the producer gets a new id.
  const fresh = await manager.initProducer({ producerId: first.producerId, epoch: producerEpochMax });
  assert.deepEqual(fresh, { producerId: first.producerId + 1, epoch: 0 });
});

test('unknown producers and malformed batches', async () => {
  const manager = await open();
  assert.throws(() => manager.check(P0, { producerId: 7, producerEpoch: 0, baseSequence: 0, recordCount: 1 }), code('unknown_producer'));
  await assert.rejects(manager.initProducer({ producerId: 7, epoch: 0 }), code('unknown_producer'));
  const { producerId } = await manager.initProducer();
  assert.throws(() => manager.check(P0, { producerId, producerEpoch: -1, baseSequence: 0, recordCount: 1 }), code('invalid_producer_epoch'));
  assert.throws(() => manager.check(P0, { producerId, producerEpoch: 0, baseSequence: -1, recordCount: 1 }), code('out_of_order_sequence'));
  assert.throws(() => manager.check(P0, { producerId, producerEpoch: 0, baseSequence: 0, recordCount: 0 }), code('invalid_request'));
});

test('sequence numbers wrap from int32 max to 0', async () => {
  assert.equal(lastSequenceOf(sequenceMax, 1), sequenceMax);
  assert.equal(lastSequenceOf(sequenceMax - 1, 3), 0);
  assert.equal(lastSequenceOf(sequenceMax, 5), 3);
  const manager = await open();
  const { producerId } = await manager.initProducer();
  const append = appender(manager, P0);
  // No state on the partition: Kafka accepts any first sequence.
  append({ producerId, producerEpoch: 0, baseSequence: sequenceMax - 1, recordCount: 2 });
  assert.equal(manager.check(P0, { producerId, producerEpoch: 0, baseSequence: 0, recordCount: 1 }).kind, 'append');
  append({ producerId, producerEpoch: 0, baseSequence: 0, recordCount: 4 });
  assert.equal(manager.check(P0, { producerId, producerEpoch: 0, baseSequence: 4, recordCount: 1 }).kind, 'append');
});

test('a failed write is forgotten so the retry is not taken for a duplicate', async () => {
  const manager = await open();
  const { producerId } = await manager.initProducer();
  const batch = { producerId, producerEpoch: 0, baseSequence: 0, recordCount: 1 };
  manager.recordAppend(P0, batch, { baseOffset: 0, lastOffset: 0, appendTime: 1 });
  manager.forgetAppend(P0, producerId, 0);
  assert.equal(manager.check(P0, batch).kind, 'append');
});

test('a batch still being written is a duplicate that carries its write: retries wait for it', async () => {
  const manager = await open();
  const { producerId } = await manager.initProducer();
  const batch = { producerId, producerEpoch: 0, baseSequence: 0, recordCount: 1 };
  const written = Promise.resolve();
  manager.recordAppend(P0, batch, { baseOffset: 0, lastOffset: 0, appendTime: 1 }, written);
  const pending = manager.check(P0, batch);
  assert.equal(pending.kind === 'duplicate' && pending.written, written, 'a retry now must wait for the original');
  manager.appendWritten(P0, producerId, 0);
  assert.deepEqual(manager.check(P0, batch), { kind: 'duplicate', baseOffset: 0, lastOffset: 0, appendTime: 1 });
});

test('a snapshot leaves out window batches at or above the offset it covers (the high watermark)', async () => {
  const store = memoryStore();
  const clock = new ManualClock(5_000);
  const manager = await open(store, clock);
  const { producerId } = await manager.initProducer();
  const { producerId: other } = await manager.initProducer();
  const b = (id: number, s: number): ProducerBatch => ({ producerId: id, producerEpoch: 0, baseSequence: s, recordCount: 1 });
  manager.recordAppend(P0, b(producerId, 0), { baseOffset: 0, lastOffset: 0, appendTime: 1 });
  manager.recordAppend(P0, b(producerId, 1), { baseOffset: 1, lastOffset: 1, appendTime: 1 }); // not written yet
  manager.recordAppend(P0, b(other, 0), { baseOffset: 2, lastOffset: 2, appendTime: 1 }); // not written yet
  await manager.snapshot([{ key: P0, nextOffset: 1 }]);
  const [row] = (await store.listProducerSnapshots()).filter((s) => s.partitionKey === P0);
  assert.deepEqual(row!.entries, [[producerId, 0, 1, [[0, 0, 0, 0, 1]]]]);
  // Those writes fail; other batches take offsets 1 and 2. After a reopen the retries are appended.
  const log = new MemoryLog(defaultLogConfig, { clock });
  await log.append(encodeNeutralBatch([{ value: 'v0' }], { timestamp: 5_000, producerId, producerEpoch: 0, baseSequence: 0 }));
  for (let i = 1; i < 3; i++) await log.append(encodeNeutralBatch([{ value: `v${i}` }], { timestamp: 5_000 }));
  const reopened = await open(store, clock);
  await reopened.recover(P0, log);
  assert.equal(reopened.check(P0, b(producerId, 0)).kind, 'duplicate');
  assert.equal(reopened.check(P0, b(producerId, 1)).kind, 'append');
  assert.equal(reopened.check(P0, b(other, 0)).kind, 'append');
});

test('entries are bounded (LRU) and expire when idle', async () => {
  const clock = new ManualClock(0);
  const manager = await open(memoryStore(), clock, { entriesMax: 2, idleExpiryMs: 1000 });
  const { producerId } = await manager.initProducer();
  const batch = (s: number) => ({ producerId, producerEpoch: 0, baseSequence: s, recordCount: 1 });
  manager.recordAppend('1:0', batch(0), { baseOffset: 0, lastOffset: 0, appendTime: 0 });
  manager.recordAppend('1:1', batch(0), { baseOffset: 0, lastOffset: 0, appendTime: 10 });
  manager.recordAppend('1:0', batch(1), { baseOffset: 1, lastOffset: 1, appendTime: 20 }); // 1:0 is now the most recent
  manager.recordAppend('1:2', batch(0), { baseOffset: 0, lastOffset: 0, appendTime: 30 }); // evicts 1:1
  assert.equal(manager.size, 2);
  assert.equal(manager.check('1:0', batch(0)).kind, 'duplicate', '1:0 was touched last, so it survived');
  assert.equal(manager.check('1:1', batch(9)).kind, 'append', 'state of 1:1 was evicted: any sequence goes');
  assert.throws(() => manager.check('1:2', batch(9)), code('out_of_order_sequence'));
  assert.equal(manager.expireIdle(1020), 1);
  assert.equal(manager.size, 1);
  assert.equal(manager.expireIdle(1030), 1);
  assert.equal(manager.size, 0);
});

/** A MemoryLog with idempotent batches appended through the manager, as the Broker does. */
async function appendToLog(manager: ProducerStateManager, log: MemoryLog, key: string, batch: ProducerBatch): Promise<void> {
  assert.equal(manager.check(key, batch).kind, 'append');
  const request = encodeNeutralBatch(
    Array.from({ length: batch.recordCount }, (_, i) => ({ value: `v${batch.baseSequence + i}` })),
    { timestamp: 5_000, producerId: batch.producerId, producerEpoch: batch.producerEpoch, baseSequence: batch.baseSequence },
  );
  const result = await log.append(request);
  manager.recordAppend(key, batch, result);
}

test('durability: snapshot, then replay of the log tail after a reopen', async () => {
  const store = memoryStore();
  const clock = new ManualClock(5_000);
  const log = new MemoryLog(defaultLogConfig, { clock });
  let manager = await open(store, clock);
  const { producerId } = await manager.initProducer();
  const b = (s: number, producerEpoch = 0): ProducerBatch => ({ producerId, producerEpoch, baseSequence: s, recordCount: 2 });
  await appendToLog(manager, log, P0, b(0));
  await appendToLog(manager, log, P0, b(2));
  await manager.snapshot([{ key: P0, nextOffset: log.stats().nextOffset }]);
  await appendToLog(manager, log, P0, b(4)); // after the snapshot: only in the log

  manager = await open(store, clock);
  assert.equal(await manager.recover(P0, log), 1, 'only the batch after the snapshot is replayed');
  assert.deepEqual(manager.check(P0, b(2)), { kind: 'duplicate', baseOffset: 2, lastOffset: 3, appendTime: 5000 });
  assert.deepEqual(manager.check(P0, b(4)), { kind: 'duplicate', baseOffset: 4, lastOffset: 5, appendTime: 5000 });
  assert.equal(manager.check(P0, b(6)).kind, 'append');
  assert.throws(() => manager.check(P0, b(8)), code('out_of_order_sequence'));
  // The id counter survived: the next producer gets a new id.
  assert.equal((await manager.initProducer()).producerId, producerId + 1);
});

test('durability: without a snapshot, or with one ahead of the log, the whole log is replayed', async () => {
  const clock = new ManualClock(5_000);
  const log = new MemoryLog(defaultLogConfig, { clock });
  const store = memoryStore();
  let manager = await open(store, clock);
  const { producerId } = await manager.initProducer();
  await appendToLog(manager, log, P0, { producerId, producerEpoch: 0, baseSequence: 0, recordCount: 1 });
  await appendToLog(manager, log, P0, { producerId, producerEpoch: 0, baseSequence: 1, recordCount: 1 });
  manager = await open(store, clock);
  assert.equal(await manager.recover(P0, log), 2);
  assert.equal(manager.check(P0, { producerId, producerEpoch: 0, baseSequence: 1, recordCount: 1 }).kind, 'duplicate');

  // A snapshot claiming offsets the log no longer has (an unflushed tail lost in a crash).
  await manager.snapshot([{ key: P0, nextOffset: 10 }]);
  const warnings: string[] = [];
  manager = await ProducerStateManager.open(store, { clock, logger: createLogger('warn', (line) => warnings.push(line)) });
  assert.equal(await manager.recover(P0, log), 2);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /snapshot is ahead of the log/);
});

test('dropPartitions forgets producers and their snapshots', async () => {
  const store = memoryStore();
  const manager = await open(store);
  const { producerId } = await manager.initProducer();
  manager.recordAppend(P0, { producerId, producerEpoch: 0, baseSequence: 0, recordCount: 1 }, { baseOffset: 0, lastOffset: 0, appendTime: 0 });
  await manager.snapshot([{ key: P0, nextOffset: 1 }]);
  await manager.dropPartitions([P0]);
  assert.equal(manager.size, 0);
  assert.deepEqual((await store.listProducerSnapshots()).map((s) => s.partitionKey), ['@epochs']);
});

// Compaction keeps the last batch of each producer (src/log/common.ts compactBatch), so that the
// state replayed from the log after a crash is the state the live process had.
for (const kind of ['memory', 'file'] as const) {
  test(`producer state replayed after compaction matches the live state: no legit batch rejected, no duplicate accepted (${kind} log)`, async (t) => {
    const clock = new ManualClock();
    const store = memoryStore();
    t.after(() => store.close());
    const config = { ...defaultLogConfig, segmentBytes: 400, segmentMs: 0, retentionMs: -1, cleanupPolicy: 'compact' as const, indexIntervalBytes: 128 };
    const log: PartitionLog = kind === 'memory' ? new MemoryLog(config, { clock }) : await openFileLog(`${tempDir(t)}/p0`, config, { clock });
    t.after(() => log.close().catch(() => undefined));
    const live = await open(store, clock);
    const { producerId, epoch } = await live.initProducer();
    const send = async (seq: number, key: string, value: string) => {
      const request = encodeNeutralBatch([{ key, value }], { timestamp: clock.now(), producerId, producerEpoch: epoch, baseSequence: seq });
      assert.equal(live.check(P0, request).kind, 'append');
      live.recordAppend(P0, request, await log.append(request));
    };
    await send(0, 'x', 'first'); // superseded below, and not the producer's last batch: compacted away
    await send(1, 'x', 'second'); // superseded below too, but the producer's last batch: kept
    // Another (non-idempotent) writer overwrites key x; then fill so that all of it is sealed.
    await log.append(encodeNeutralBatch([{ key: 'x', value: 'other' }], { timestamp: clock.now() }));
    for (let i = 0; i < 6; i++) await log.append(encodeNeutralBatch([{ key: `f${i}`, value: 'f'.repeat(60) }], { timestamp: clock.now() }));
    assert.ok(log.stats().segmentCount >= 2);
    const compacted = await log.compact(clock.now());
    assert.equal(compacted.recordsRemoved, 1, 'compaction removed sequence 0 and kept sequence 1');

    // Crash: no producer snapshot was written since. A new process replays the log.
    const replayed = await open(store, clock);
    await replayed.recover(P0, log);
    const next = encodeNeutralBatch([{ key: 'y', value: 'third' }], { timestamp: clock.now(), producerId, producerEpoch: epoch, baseSequence: 2 });
    assert.equal(live.check(P0, next).kind, 'append', 'the live state accepts sequence 2');
    assert.equal(replayed.check(P0, next).kind, 'append', 'so does the replayed state');
    // The retry of sequence 1 (in the log before compaction) must not be appended a second time.
    const retry1 = encodeNeutralBatch([{ key: 'x', value: 'second' }], { timestamp: clock.now(), producerId, producerEpoch: epoch, baseSequence: 1 });
    assert.equal(live.check(P0, retry1).kind, 'duplicate');
    assert.equal(replayed.check(P0, retry1).kind, 'duplicate', 'a retry of sequence 1 would be appended a second time');
  });
}
