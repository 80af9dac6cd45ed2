// SendMessages / PollMessages / FlushUnsavedBuffer and consumer offsets end to end: batch
// validation (nothing appended on a bad batch), the three partitionings, the five polling
// strategies, slicing inside a stored batch, auto-commit and Next, and the not-found statuses.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { xxh32 } from '@node-rs/xxhash';
import { CommandCode, ConsumerKind, EvictionReason, IggyErrorCode, PollingKind, iggyFormatCodec, parsePolledBatches, polledBuffers, type ParsedBatch } from '../../../../src/protocols/iggy/codec/index.js';
import { nativeStatus } from '../../../../src/base/native.js';
import { fileReplyStats } from '../../../../src/protocols/file-replies.js';
import { bufferPoolStats } from '../../../../src/base/buffer-pool.js';
import { ManualClock } from '../../../../src/base/clock.js';
import { BatchFlags, encodeNeutralBatch, type PartitionLog, type ReadOptions } from '../../../../src/log/index.js';
import { batchOf, eventually, sendRequest, sid, startIggy, type IggyTestClient } from '../harness.js';

// Loopback peers get file slices only when asked (file-replies.ts canSendFiles): these tests ask.
process.env['QUARTET_SENDFILE'] = '1';

const consumer = { kind: ConsumerKind.consumer, id: sid(1) };

async function poll(c: IggyTestClient, strategy: { kind: number; value: bigint }, count: number, o: { partitionId?: number | null; autoCommit?: boolean; topic?: string } = {}) {
  const r = await c.ok(CommandCode.pollMessages, {
    consumer,
    streamId: sid('default'),
    topicId: sid(o.topic ?? 'm'),
    partitionId: o.partitionId === undefined ? 0 : o.partitionId,
    strategy: strategy as never,
    count,
    autoCommit: o.autoCommit ?? false,
  });
  const batches = r.batches.length === 0 ? [] : (parsePolledBatches(Buffer.concat(polledBuffers(r))) as ParsedBatch[]);
  assert.ok(Array.isArray(batches), 'polled batches verify');
  const payloads = batches.flatMap((b) => b.frames.map((f) => f.payload.toString()));
  const offsets = batches.flatMap((b) => b.frames.map((f) => Number(b.header.baseOffset) + f.offsetDelta));
  /** Each message's server time: its batch's base_timestamp (µs). */
  const times = batches.flatMap((b) => b.frames.map(() => b.header.baseTimestamp));
  assert.equal(r.messagesCount, payloads.length);
  return { reply: r, payloads, offsets, times };
}

/**
 * Counts what a partition's polls read from its segment files (every read goes through
 * Segment.readRange) and the payloads read whole after a sliced read (a batch to transcode or decode).
 */
function countReads(log: PartitionLog): { bytes: number; reads: number } {
  const counted = { bytes: 0, reads: 0 };
  for (const segment of (log as unknown as { segments: Array<{ readRange(position: number, length: number, lease?: unknown): Promise<Buffer> }> }).segments) {
    const readRange = segment.readRange.bind(segment);
    segment.readRange = (position, length, lease) => {
      counted.bytes += length;
      counted.reads++;
      return readRange(position, length, lease);
    };
  }
  const wholePayload = log.wholePayload.bind(log);
  log.wholePayload = async (batch, lease) => {
    const whole = await wholePayload(batch, lease);
    if (batch.file !== undefined) counted.bytes += whole.payload.length;
    return whole;
  };
  return counted;
}

/**
 * Makes DeleteRecords(before) land on `log` as a read below `before` that `which` picks begins
 * (once); the returned flag tells whether it did.
 */
function deleteRecordsDuringRead(log: PartitionLog, before: number, which: (options: ReadOptions) => boolean = () => true): { done: boolean } {
  const deleted = { done: false };
  const read = log.read.bind(log);
  log.read = async (offset, options) => {
    if (offset < before && which(options) && !deleted.done) {
      deleted.done = true;
      await log.deleteRecordsBefore(before);
    }
    return read(offset, options);
  };
  return deleted;
}

/** A topic `m` of one partition with a Kafka transaction open on it, an appender of `n` records of `bytes` each in it, and its abort. */
async function topicWithTransaction(t: Parameters<typeof startIggy>[0], pollBytesMax: number) {
  const h = await startIggy(t, { settings: { pollBytesMax } });
  const c = await h.root();
  await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'm', options: [] });
  const tx = h.broker.transactions;
  const { producerId, epoch } = await tx.initProducerId({ scope: 'kafka', transactionalId: 'large', transactionTimeoutMs: 60_000 });
  const id = { scope: 'kafka', transactionalId: 'large', producerId, producerEpoch: epoch };
  await tx.addPartitions(id, [{ topic: { topic: 'm' }, partition: 0 }]);
  let sequence = 0;
  const appendInTransaction = async (n: number, bytes: number) => {
    for (let i = 0; i < n; i++) {
      await h.broker.append({ topic: 'm' }, 0, encodeNeutralBatch([{ value: Buffer.alloc(bytes, 97) }], { timestamp: Date.now(), producerId, producerEpoch: epoch, baseSequence: sequence++, flags: BatchFlags.transactional }), { transaction: id });
    }
  };
  return { h, c, abort: () => tx.endTxn(id, false), appendInTransaction };
}

describe('iggy messages', () => {
  it('sends, confirms base offsets and polls with every strategy, slicing stored batches', async (t) => {
    const clock = new ManualClock(1_700_000_000_000);
    const h = await startIggy(t, { clock });
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'm', options: [] });
    const first = await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), ['a', 'b', 'c']));
    assert.deepEqual(first.confirmations, [{ streamId: h.broker.catalog.requireNamespace('default').id, topicId: 0, partitionId: 0, baseOffset: 0n }]);
    clock.advance(5);
    const second = await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), ['d', 'e']));
    assert.equal(second.confirmations[0]!.baseOffset, 3n);

    const all = await poll(c, { kind: PollingKind.offset, value: 0n }, 100);
    assert.deepEqual(all.payloads, ['a', 'b', 'c', 'd', 'e']);
    assert.equal(all.reply.currentOffset, 4n);
    const sliced = await poll(c, { kind: PollingKind.offset, value: 1n }, 3);
    assert.deepEqual(sliced.payloads, ['b', 'c', 'd']);
    assert.deepEqual(sliced.offsets, [1, 2, 3]);
    assert.deepEqual((await poll(c, { kind: PollingKind.first, value: 0n }, 2)).payloads, ['a', 'b']);
    assert.deepEqual((await poll(c, { kind: PollingKind.last, value: 0n }, 2)).payloads, ['d', 'e']);
    // Timestamp polls go by server time, the base_timestamp stamped at append (µs): a..c at T0,
    // d, e at T0 + 5 ms (their producer times, T0 + 0..2 µs in 2023, play no part).
    const t0 = 1_700_000_000_000_000n;
    assert.deepEqual(all.times, [t0, t0, t0, t0 + 5000n, t0 + 5000n]);
    assert.deepEqual((await poll(c, { kind: PollingKind.timestamp, value: t0 }, 10)).offsets, [0, 1, 2, 3, 4]);
    assert.deepEqual((await poll(c, { kind: PollingKind.timestamp, value: t0 }, 2)).offsets, [0, 1]);
    assert.deepEqual((await poll(c, { kind: PollingKind.timestamp, value: t0 + 1n }, 10)).offsets, [3, 4]);
    // A message's own server time finds it (and what came after it).
    assert.deepEqual((await poll(c, { kind: PollingKind.timestamp, value: all.times[3]! }, 1)).payloads, ['d']);
    assert.equal((await poll(c, { kind: PollingKind.timestamp, value: t0 + 5001n }, 10)).payloads.length, 0);
    const beyond = await poll(c, { kind: PollingKind.offset, value: 99n }, 10);
    assert.equal(beyond.reply.messagesCount, 0);
    assert.equal(beyond.reply.batches.length, 0);

    // Next: from the stored offset + 1, with auto-commit moving it
    assert.deepEqual((await poll(c, { kind: PollingKind.next, value: 0n }, 2, { autoCommit: true })).payloads, ['a', 'b']);
    assert.deepEqual((await poll(c, { kind: PollingKind.next, value: 0n }, 2, { autoCommit: true })).payloads, ['c', 'd']);
    const stored = await c.ok(CommandCode.getConsumerOffset, { consumer, streamId: sid('default'), topicId: sid('m'), partitionId: 0 });
    assert.deepEqual(stored, { partitionId: 0, currentOffset: 4n, storedOffset: 3n });
  });

  it('stamps server times in µs: batches appended within one millisecond are told apart by timestamp polls', async (t) => {
    const clock = new ManualClock(1_700_000_000_000);
    const h = await startIggy(t, { clock });
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'm', options: [] });
    clock.advanceMicros(120);
    await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), ['a', 'b']));
    clock.advanceMicros(450);
    await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), ['c']));
    const t0 = 1_700_000_000_000_000n;
    const all = await poll(c, { kind: PollingKind.offset, value: 0n }, 10);
    assert.deepEqual(all.times, [t0 + 120n, t0 + 120n, t0 + 570n]);
    assert.deepEqual((await poll(c, { kind: PollingKind.timestamp, value: t0 + 570n }, 10)).payloads, ['c']);
    assert.deepEqual((await poll(c, { kind: PollingKind.timestamp, value: t0 + 121n }, 10)).payloads, ['c']);
    assert.deepEqual((await poll(c, { kind: PollingKind.timestamp, value: t0 }, 10)).payloads, ['a', 'b', 'c']);
    assert.equal((await poll(c, { kind: PollingKind.timestamp, value: t0 + 571n }, 10)).payloads.length, 0);
  });

  it('a timestamp poll returns `count` messages stamped at or after the time, reading past batches stamped earlier', async (t) => {
    const clock = new ManualClock(1_700_000_000_000);
    const h = await startIggy(t, { clock });
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'm', options: [] });
    const send = (payloads: string[]) => c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), payloads));
    const t0 = 1_700_000_000_000_000n;
    clock.set(1_700_000_010_000);
    await send(['a1', 'a2']);
    // The clock stepped back: these batches are stamped before the time asked for.
    clock.set(1_700_000_000_000);
    await send(['old1']);
    await send(['old2', 'old3']);
    clock.set(1_700_000_020_000);
    await send(['c1']);
    assert.deepEqual((await poll(c, { kind: PollingKind.timestamp, value: t0 + 5_000_000n }, 10)).payloads, ['a1', 'a2', 'c1']);
    assert.deepEqual((await poll(c, { kind: PollingKind.timestamp, value: t0 + 5_000_000n }, 3)).offsets, [0, 1, 5]);
    assert.deepEqual((await poll(c, { kind: PollingKind.timestamp, value: t0 + 15_000_000n }, 10)).payloads, ['c1']);
    assert.equal((await poll(c, { kind: PollingKind.timestamp, value: t0 + 30_000_000n }, 10)).payloads.length, 0);
  });

  it('a timestamp poll stops reading past batches stamped earlier after 8 x pollBytesMax', async (t) => {
    const clock = new ManualClock(1_700_000_000_000);
    const h = await startIggy(t, { clock, settings: { pollBytesMax: 4096 } });
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'm', options: [] });
    const send = (payloads: string[]) => c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), payloads));
    await send(['first']);
    // 40 KiB of batches stamped before the time (the clock stepped back), then one after it.
    clock.set(1_699_999_999_000);
    for (let i = 0; i < 40; i++) await send(['x'.repeat(1000)]);
    clock.set(1_700_000_000_001);
    await send(['beyond']);
    const r = await poll(c, { kind: PollingKind.timestamp, value: 1_700_000_000_000_000n }, 10);
    assert.deepEqual(r.payloads, ['first'], 'the scan stopped before the last batch');
    // From an offset past the older ones, the newer message is there.
    assert.deepEqual((await poll(c, { kind: PollingKind.offset, value: 41n }, 10)).payloads, ['beyond']);
  });

  it('a timestamp poll hands back at once the read buffers it keeps nothing from', async (t) => {
    const clock = new ManualClock(1_700_000_000_000);
    const h = await startIggy(t, { clock, settings: { pollBytesMax: 300 * 1024 } });
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'm', options: [] });
    const send = (payloads: string[]) => c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), payloads));
    await send(['first']);
    // Batches stamped earlier after it (the clock stepped back), 100 KB each: several reads of pooled buffers.
    clock.set(1_699_999_999_000);
    for (let i = 0; i < 12; i++) await send(Array.from({ length: 10 }, () => 'o'.repeat(10_000)));
    const topic = h.broker.catalog.requireTopic({ topic: 'm' });
    const handler = h.frontend.handlers[CommandCode.pollMessages]!;
    const hooks: Array<() => void> = [];
    // The reply is never "written" here: only reads the poll kept nothing from may go back.
    const ctx = { frontend: h.frontend, session: { connectionId: -1 }, user: h.broker.users.get(0)!, header: {}, afterReplyWritten: (fn: () => void) => void hooks.push(fn), fileSlices: false };
    const freeBefore = bufferPoolStats().freeBuffers;
    const reply = (await handler(ctx as never, { consumer, streamId: sid(topic.namespaceId), topicId: sid(topic.id), partitionId: 0, strategy: { kind: PollingKind.timestamp, value: 1_700_000_000_000_000n }, count: 10, autoCommit: false } as never)) as { messagesCount: number };
    assert.equal(reply.messagesCount, 1);
    assert.ok(hooks.length >= 3, `several reads (${hooks.length})`);
    assert.ok(bufferPoolStats().freeBuffers > freeBefore, 'buffers of reads with nothing kept are back in the pool before the reply is written');
    for (const hook of hooks) hook();
  });

  it('polls what Kafka transactions committed: aborted records are left out, and a poll stops before an open transaction', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'm', options: [] });
    const tx = h.broker.transactions;
    const plainBatch = (values: string[]) => encodeNeutralBatch(values.map((value) => ({ value })), { timestamp: Date.now() });
    const txnBatch = (id: { producerId: number; producerEpoch: number }, sequence: number, values: string[]) =>
      encodeNeutralBatch(values.map((value) => ({ value })), { timestamp: Date.now(), producerId: id.producerId, producerEpoch: id.producerEpoch, baseSequence: sequence, flags: BatchFlags.transactional });
    const begin = async (transactionalId: string) => {
      const { producerId, epoch } = await tx.initProducerId({ scope: 'kafka', transactionalId, transactionTimeoutMs: 60_000 });
      const id = { scope: 'kafka', transactionalId, producerId, producerEpoch: epoch };
      await tx.addPartitions(id, [{ topic: { topic: 'm' }, partition: 0 }]);
      return id;
    };
    await h.broker.append({ topic: 'm' }, 0, plainBatch(['p0']));
    const aborted = await begin('aborts');
    await h.broker.append({ topic: 'm' }, 0, txnBatch(aborted, 0, ['a1', 'a2']), { transaction: aborted });
    await tx.endTxn(aborted, false);
    const committed = await begin('commits');
    await h.broker.append({ topic: 'm' }, 0, txnBatch(committed, 0, ['c1']), { transaction: committed });
    await tx.endTxn(committed, true);
    await h.broker.append({ topic: 'm' }, 0, plainBatch(['p1']));
    const open = await begin('open');
    await h.broker.append({ topic: 'm' }, 0, txnBatch(open, 0, ['o1']), { transaction: open });
    await h.broker.append({ topic: 'm' }, 0, plainBatch(['p2']));

    // Offsets: p0 0, a1-a2 1-2, abort marker 3, c1 4, commit marker 5, p1 6, o1 7, p2 8.
    const first = await poll(c, { kind: PollingKind.first, value: 0n }, 100);
    assert.deepEqual(first.payloads, ['p0', 'c1', 'p1'], 'the aborted records are left out; the open transaction stops the poll');
    assert.deepEqual(first.offsets, [0, 4, 6]);
    // The offsets passed over (aborted records, markers) do not count: one message from offset 1 is c1.
    assert.deepEqual((await poll(c, { kind: PollingKind.offset, value: 1n }, 1)).payloads, ['c1']);
    // `next` moves on past them: a consumer polling one message at a time is never stuck on them.
    const one = async () => (await poll(c, { kind: PollingKind.next, value: 0n }, 1, { autoCommit: true })).payloads;
    assert.deepEqual([await one(), await one(), await one(), await one()], [['p0'], ['c1'], ['p1'], []]);
    // `last`: the newest `count` messages below the open transaction, however many offsets the
    // markers and aborted records between them take.
    assert.deepEqual((await poll(c, { kind: PollingKind.last, value: 0n }, 2)).payloads, ['c1', 'p1']);
    assert.deepEqual((await poll(c, { kind: PollingKind.last, value: 0n }, 3)).offsets, [0, 4, 6]);
    assert.deepEqual((await poll(c, { kind: PollingKind.last, value: 0n }, 100)).offsets, [0, 4, 6], 'all there are');
    await tx.endTxn(open, true);
    assert.deepEqual((await poll(c, { kind: PollingKind.offset, value: 7n }, 100)).payloads, ['o1', 'p2']);
  });

  it('a consumer behind an aborted transaction larger than a poll may scan passes over it, and auto-commit moves past it', async (t) => {
    const { h, c, abort, appendInTransaction } = await topicWithTransaction(t, 4096); // a timestamp poll scans at most 8 x 4 KiB
    await appendInTransaction(20, 4000);
    await abort(); // offsets 0-19 aborted, 20 the abort marker
    // Nothing visible yet: an auto-committing poll returns nothing and still moves past them.
    assert.deepEqual((await poll(c, { kind: PollingKind.next, value: 0n }, 1, { autoCommit: true })).payloads, []);
    const offsetRef = { consumer, streamId: sid('default'), topicId: sid('m'), partitionId: 0 };
    assert.equal((await c.ok(CommandCode.getConsumerOffset, offsetRef))?.storedOffset, 20n);
    await h.broker.append({ topic: 'm' }, 0, encodeNeutralBatch([{ value: 'visible' }], { timestamp: Date.now() }));
    assert.deepEqual((await poll(c, { kind: PollingKind.offset, value: 0n }, 1)).payloads, ['visible'], 'one message from offset 0');
    assert.deepEqual((await poll(c, { kind: PollingKind.next, value: 0n }, 1, { autoCommit: true })).payloads, ['visible']);
    assert.equal((await c.ok(CommandCode.getConsumerOffset, offsetRef))?.storedOffset, 21n);
  });

  it('a `last` poll scans back over at most 8 x pollBytesMax of hidden records, and then returns the newest it found, fewer', async (t) => {
    // The scan passes over at most 16 KiB: 15 aborted records of 1,000 B.
    const { h, c, abort, appendInTransaction } = await topicWithTransaction(t, 2048);
    const plain = (value: string) => h.broker.append({ topic: 'm' }, 0, encodeNeutralBatch([{ value }], { timestamp: Date.now() }));
    const aborted = (n: number) => appendInTransaction(n, 1000);
    // v0-v3 at 0-3, aborted 4, v5, aborted 6-7, v8, aborted 9-23, v24, the abort marker 25, v26.
    for (const v of ['v0', 'v1', 'v2', 'v3']) await plain(v);
    await aborted(1);
    await plain('v5');
    await aborted(2);
    await plain('v8');
    await aborted(15);
    await plain('v24');
    await abort();
    await plain('v26');
    assert.deepEqual((await poll(c, { kind: PollingKind.last, value: 0n }, 2)).offsets, [24, 26]);
    // The third newest, v8, lies past the budget: the scan's last window is read only in part
    // (from v3 to some of the aborted records before v8), so the poll returns the two newest,
    // not v3, v5 and v8 (counting from what the partial read saw would lose the newest).
    assert.deepEqual((await poll(c, { kind: PollingKind.last, value: 0n }, 3)).offsets, [24, 26]);
    // Offset polls are not bounded so: they pass over any amount of aborted records.
    assert.deepEqual((await poll(c, { kind: PollingKind.offset, value: 6n }, 3)).offsets, [8, 24, 26]);
  });

  it('a `last` poll whose scan back meets a log start moved meanwhile (DeleteRecords) answers from the new start', async (t) => {
    const { h, c, abort, appendInTransaction } = await topicWithTransaction(t, 128 * 1024 * 1024);
    const plain = (value: string) => h.broker.append({ topic: 'm' }, 0, encodeNeutralBatch([{ value }], { timestamp: Date.now() }));
    // v0-v3 at 0-3, aborted records at 4-29, the abort marker 30, v31.
    for (let i = 0; i <= 3; i++) await plain(`v${i}`);
    await appendInTransaction(26, 10);
    await abort();
    await plain('v31');
    // DeleteRecords lands as the scan is about to read below the offset given.
    const log = h.broker.partition({ topic: 'm' }, 0);
    let deleted = deleteRecordsDuringRead(log, 2);
    assert.deepEqual((await poll(c, { kind: PollingKind.last, value: 0n }, 3)).offsets, [2, 3, 31]);
    assert.equal(deleted.done, true, 'the scan read below offset 2');
    // One that wants more than is left after the deletion: all there is.
    deleted = deleteRecordsDuringRead(log, 3);
    assert.deepEqual((await poll(c, { kind: PollingKind.last, value: 0n }, 10)).offsets, [3, 31]);
    assert.equal(deleted.done, true, 'the scan read below offset 3');
  });

  it('a poll whose read meets a log start moved meanwhile (DeleteRecords) reads on from the new start', async (t) => {
    const { h, c, abort, appendInTransaction } = await topicWithTransaction(t, 128 * 1024 * 1024);
    const plain = (value: string) => h.broker.append({ topic: 'm' }, 0, encodeNeutralBatch([{ value }], { timestamp: Date.now() }));
    // v0-v5 at 0-5, aborted records at 6-29, the abort marker 30, v31.
    for (let i = 0; i <= 5; i++) await plain(`v${i}`);
    await appendInTransaction(24, 10);
    await abort();
    await plain('v31');
    const log = h.broker.partition({ topic: 'm' }, 0);
    // DeleteRecords lands as the poll's own read (not the scan's, of at most 64 KiB) begins below the offset given.
    const deleteDuringRead = (before: number) => deleteRecordsDuringRead(log, before, (options) => options.maxBytes > 64 * 1024);
    // `last`: the scan found v3 as where the newest four start; the read from there meets a start of 4.
    let deleted = deleteDuringRead(4);
    assert.deepEqual((await poll(c, { kind: PollingKind.last, value: 0n }, 4)).offsets, [4, 5, 31]);
    assert.equal(deleted.done, true);
    // An offset poll from 4 meets a start of 5.
    deleted = deleteDuringRead(5);
    assert.deepEqual((await poll(c, { kind: PollingKind.offset, value: 4n }, 2)).offsets, [5, 31]);
    assert.equal(deleted.done, true);
  });

  it('a `last` poll under the byte cap returns consecutive messages from where the newest `count` start, or, where the newest `count` offsets alone reach the cap, from them', async (t) => {
    // Two stored messages of 1,500 B fit in a reply of 4 KiB.
    const { h, c, abort, appendInTransaction } = await topicWithTransaction(t, 4096);
    const plain = (value: string | Buffer) => h.broker.append({ topic: 'm' }, 0, encodeNeutralBatch([{ value }], { timestamp: Date.now() }));
    // 1.5 kB messages at 0-9, aborted records at 10-14, the abort marker 15, `new` at 16.
    for (let i = 0; i < 10; i++) await plain(Buffer.alloc(1500, 97));
    await appendInTransaction(5, 1);
    await abort();
    await plain('new');
    // The newest five start at 6: 6, 7 and 8 fit (the first read's `new` would leave a hole at 9).
    const counted = countReads(h.broker.partition({ topic: 'm' }, 0));
    assert.deepEqual((await poll(c, { kind: PollingKind.last, value: 0n }, 5)).offsets, [6, 7, 8]);
    // The read cut by the cap reads on from where it stopped: 6 reads of the segment files (9
    // when it read 6-8 again from the start).
    assert.ok(counted.reads <= 6, `the capped \`last\` poll took ${counted.reads} reads`);
    assert.deepEqual((await poll(c, { kind: PollingKind.last, value: 0n }, 2)).offsets, [9, 16]);
    // The newest nine start at 2: 2 and 3 fit, and 4, which the cap falls inside, comes whole.
    assert.deepEqual((await poll(c, { kind: PollingKind.last, value: 0n }, 9)).offsets, [2, 3, 4]);
    // Where reading the newest `count` offsets alone reaches the cap, there is no scan back: with
    // 1.5 kB messages at 17-19, the newest six offsets (14-19) hold `new` and 17-19, which reach
    // it, so the reply starts at `new`, not at 8, where the newest six messages start.
    for (let i = 0; i < 3; i++) await plain(Buffer.alloc(1500, 98));
    assert.deepEqual((await poll(c, { kind: PollingKind.last, value: 0n }, 6)).offsets, [16, 17, 18, 19]);
  });

  it('a `last` scan counts a large batch whose every offset holds a record from its head, and reads it once, for the reply', async (t) => {
    const { h, c, abort, appendInTransaction } = await topicWithTransaction(t, 128 * 1024 * 1024);
    // A 2 MB record at 0, aborted records at 1-3, the abort marker 4, `last` at 5.
    await h.broker.append({ topic: 'm' }, 0, encodeNeutralBatch([{ value: Buffer.alloc(2_000_000, 98) }], { timestamp: Date.now() }));
    await appendInTransaction(3, 10);
    await abort();
    await h.broker.append({ topic: 'm' }, 0, encodeNeutralBatch([{ value: 'last' }], { timestamp: Date.now() }));
    const counted = countReads(h.broker.partition({ topic: 'm' }, 0));
    const r = await poll(c, { kind: PollingKind.last, value: 0n }, 2);
    assert.deepEqual(r.offsets, [0, 5]);
    assert.equal(r.payloads[0]!.length, 2_000_000);
    // The scan read the record's head only (neutralCodec.messageCount), the reply the whole of it.
    assert.ok(counted.bytes < 2_200_000, `the poll read ${counted.bytes} bytes`);
  });

  it('a `last` scan counts a large Iggy batch from its header, and reads it once, for the slice it returns', async (t) => {
    const { h, c, abort, appendInTransaction } = await topicWithTransaction(t, 128 * 1024 * 1024);
    // 1,000 messages of 1,000 B sent through Iggy at 0-999, aborted records at 1000-1002, the abort marker 1003, `last` at 1004.
    await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), [...Array(1000)].map((_, i) => `${i}`.padStart(1000, '.'))));
    await appendInTransaction(3, 10);
    await abort();
    await h.broker.append({ topic: 'm' }, 0, encodeNeutralBatch([{ value: 'last' }], { timestamp: Date.now() }));
    const counted = countReads(h.broker.partition({ topic: 'm' }, 0));
    const r = await poll(c, { kind: PollingKind.last, value: 0n }, 3);
    assert.deepEqual(r.offsets, [998, 999, 1004]);
    assert.deepEqual(r.payloads.slice(0, 2).map((p) => p.replace(/^\.+/, '')), ['998', '999']);
    // The scan read the batch's header only (isWholeDenseIggyBatch), the slice it returns the whole batch.
    assert.ok(counted.bytes < 1_500_000, `the poll read ${counted.bytes} bytes`);
  });

  it('polls over offsets compaction emptied: `count` messages from the start, and `next` consumers move past them', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    await h.broker.createTopic('default', 'm', { partitions: 1, config: { 'cleanup.policy': 'compact', 'segment.bytes': 1024 } });
    const keyed = (records: Array<[string, string]>) => encodeNeutralBatch(records.map(([key, value]) => ({ key, value })), { timestamp: Date.now() });
    // 0-19: key `a` again and again; 20-24: one batch of k1..k5; 25-27: k1, k3, k5 again; 28-47: unique keys.
    for (let i = 0; i < 20; i++) await h.broker.append({ topic: 'm' }, 0, keyed([['a', `a${i}`]]));
    await h.broker.append({ topic: 'm' }, 0, keyed([1, 2, 3, 4, 5].map((k) => [`k${k}`, `k${k}-old`])));
    await h.broker.append({ topic: 'm' }, 0, keyed([1, 3, 5].map((k) => [`k${k}`, `k${k}-new`])));
    for (let i = 0; i < 20; i++) await h.broker.append({ topic: 'm' }, 0, keyed([[`u${i}`, `u${i}`]]));
    await h.broker.runMaintenance();
    const survivors = (await poll(c, { kind: PollingKind.offset, value: 0n }, 1000)).offsets;
    assert.deepEqual(survivors.slice(0, 6), [19, 21, 23, 25, 26, 27], 'compaction left gaps, and a batch with two of its five records');
    assert.equal(survivors.length, 6 + 20);

    // `count` messages from the start, whatever offsets lie between them.
    assert.deepEqual((await poll(c, { kind: PollingKind.offset, value: 0n }, 1)).payloads, ['a19']);
    assert.deepEqual((await poll(c, { kind: PollingKind.first, value: 0n }, 3)).payloads, ['a19', 'k2-old', 'k4-old']);
    assert.deepEqual((await poll(c, { kind: PollingKind.offset, value: 20n }, 2)).offsets, [21, 23]);
    assert.deepEqual((await poll(c, { kind: PollingKind.offset, value: 22n }, 2)).offsets, [23, 25]);
    // One at a time with auto-commit: every survivor once, in order; the stored offset moves on.
    const seen: number[] = [];
    for (let i = 0; i < survivors.length + 2; i++) seen.push(...(await poll(c, { kind: PollingKind.next, value: 0n }, 1, { autoCommit: true })).offsets);
    assert.deepEqual(seen, survivors);
    const offsetRef = { consumer, streamId: sid('default'), topicId: sid('m'), partitionId: 0 };
    assert.equal((await c.ok(CommandCode.getConsumerOffset, offsetRef))?.storedOffset, BigInt(survivors.at(-1)!));
    // `last`: the newest `count` that remain, however many offsets lie between them.
    for (const n of [1, 3, 20, 21, 22, 25, 26, 1000]) {
      assert.deepEqual((await poll(c, { kind: PollingKind.last, value: 0n }, n)).offsets, survivors.slice(-Math.min(n, survivors.length)), `last ${n}`);
    }
    // A consumer stored inside a gap, or before the emptied tail of a batch, polls on from there.
    await c.ok(CommandCode.storeConsumerOffset, { ...offsetRef, offset: 5n, ack: 0 });
    assert.deepEqual((await poll(c, { kind: PollingKind.next, value: 0n }, 2, { autoCommit: true })).offsets, [19, 21]);
    assert.deepEqual((await poll(c, { kind: PollingKind.next, value: 0n }, 1, { autoCommit: true })).offsets, [23]);
    assert.deepEqual((await poll(c, { kind: PollingKind.next, value: 0n }, 1, { autoCommit: true })).offsets, [25], 'past the batch\'s emptied last offset');
  });

  it('a poll over a compacted log reads little: a small read past an emptied stretch, and few reads where survivors are sparse', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    await h.broker.createTopic('default', 'm', { partitions: 1, config: { 'cleanup.policy': 'compact', 'segment.bytes': 4 * 1024 * 1024, 'max.message.bytes': 8 * 1024 * 1024 } });
    const append = (records: Array<{ key: string; value: string | Buffer }>) => h.broker.append({ topic: 'm' }, 0, encodeNeutralBatch(records, { timestamp: Date.now() }));
    for (let i = 0; i < 100; i++) await append([{ key: 'hot', value: `h${i}` }]); // 0-99: 99 remains
    const value = Buffer.alloc(10_000, 120);
    for (let i = 0; i < 300; i++) await append([{ key: `u${i}`, value }]); // 100-399: 3 MB that remain, in the same segment
    // 400-10399: 200 batches of 50 records of one key each: one record of every 50 offsets remains.
    for (let i = 0; i < 200; i++) await append([...Array(50)].map(() => ({ key: `s${i}`, value: 's' })));
    await append([{ key: 'roll', value: Buffer.alloc(4 * 1024 * 1024) }]); // seals the rest
    await h.broker.runMaintenance();

    const counted = countReads(h.broker.partition({ topic: 'm' }, 0));
    const measured = async (strategy: { kind: number; value: bigint }, count: number) => {
      counted.bytes = 0;
      counted.reads = 0;
      const { offsets } = await poll(c, strategy, count);
      return { offsets, bytesRead: counted.bytes, reads: counted.reads };
    };
    const fromGap = await measured({ kind: PollingKind.offset, value: 0n }, 1);
    assert.deepEqual(fromGap.offsets, [99]);
    assert.ok(fromGap.bytesRead < 256 * 1024, `one message from the start of an emptied stretch read ${fromGap.bytesRead} bytes`);
    const sparse = await measured({ kind: PollingKind.offset, value: 400n }, 100);
    assert.deepEqual(sparse.offsets, [...Array(100)].map((_, i) => 449 + 50 * i), 'the last record of every batch of 50');
    assert.ok(sparse.reads <= 20, `100 sparse messages took ${sparse.reads} reads`);
    // `last` scans back over the sparse batches in few reads, and finds the newest 100 (the
    // roll record at 10400 and the last record of each of the last 99 batches of 50).
    const newest = await measured({ kind: PollingKind.last, value: 0n }, 100);
    assert.deepEqual(newest.offsets, [...[...Array(99)].map((_, i) => 449 + 50 * (101 + i)), 10400]);
    assert.ok(newest.reads <= 40, `the newest 100 sparse messages took ${newest.reads} reads`);
    // The 4 MiB record is read once: the scan back starts below the first read's window.
    assert.ok(newest.bytesRead < 5 * 1024 * 1024, `the newest 100 sparse messages read ${newest.bytesRead} bytes`);
  });

  it('rejects bad batches with the reference statuses and appends nothing', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'm', options: [] });
    const good = sendRequest(sid('default'), sid('m'), ['hello', 'world']);
    const checksum = Buffer.from(good.batch);
    checksum[256 + 48] ^= 0xff; // first payload byte
    assert.deepEqual(await c.call(CommandCode.sendMessages, { ...good, batch: checksum }), { status: IggyErrorCode.invalidMessageChecksum });
    const reserved = Buffer.from(good.batch);
    reserved[100] = 1;
    assert.deepEqual(await c.call(CommandCode.sendMessages, { ...good, batch: reserved }), { status: IggyErrorCode.invalidReservedField });
    const batchSum = Buffer.from(good.batch);
    batchSum[40] ^= 1;
    assert.deepEqual(await c.call(CommandCode.sendMessages, { ...good, batch: batchSum }), { status: IggyErrorCode.invalidBatchChecksum });
    const miscounted = sendRequest(sid('default'), sid('m'), ['x', 'y']);
    assert.deepEqual(await c.call(CommandCode.sendMessages, { ...miscounted, messagesCount: 3 }), { status: IggyErrorCode.invalidFormat });
    // No message at all: InvalidMessagesCount (4009), as the reference's batch validation.
    assert.deepEqual(await c.call(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), [])), { status: IggyErrorCode.invalidMessagesCount });
    // A send that does not resolve is ResourceNotFound (20) at every level, as the reference's dispatch answers it.
    assert.deepEqual(await c.call(CommandCode.sendMessages, sendRequest(sid('nope'), sid('m'), ['x'])), { status: IggyErrorCode.resourceNotFound });
    assert.deepEqual(await c.call(CommandCode.sendMessages, sendRequest(sid('default'), sid(77), ['x'])), { status: IggyErrorCode.resourceNotFound });
    assert.deepEqual(await c.call(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), ['x'], { kind: 'partitionId', partitionId: 5 })), { status: IggyErrorCode.resourceNotFound });
    assert.equal(h.broker.partition({ topic: 'm' }, 0).stats().nextOffset, 0);
    assert.ok('value' in (await c.call(CommandCode.sendMessages, good)));
    // Empty payloads are messages like any other (the reference server's admission takes them).
    assert.ok('value' in (await c.call(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), ['', 'z', '']))));
    assert.deepEqual((await poll(c, { kind: PollingKind.offset, value: 0n }, 10)).payloads, ['hello', 'world', '', 'z', '']);
  });

  it('takes a batch of more messages than a poll returns (no count limit but the frame size, as the reference), polled back in slices', async (t) => {
    const h = await startIggy(t, { settings: { pollMessagesMax: 1000 } });
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'm', options: [] });
    const payloads = Array.from({ length: 2500 }, (_, i) => String(i));
    assert.equal((await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), payloads))).confirmations[0]!.baseOffset, 0n);
    const first = await poll(c, { kind: PollingKind.offset, value: 0n }, 5000);
    assert.deepEqual([first.payloads.length, first.payloads[0], first.payloads.at(-1)], [1000, '0', '999'], 'a poll returns at most pollMessagesMax');
    const last = await poll(c, { kind: PollingKind.offset, value: 2000n }, 5000);
    assert.deepEqual([last.payloads.length, last.payloads[0], last.payloads.at(-1)], [500, '2000', '2499']);
  });

  it('partitions balanced (round-robin) and by messages key (XXH32 % partitions)', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 3, name: 'p', options: [] });
    const seen: number[] = [];
    for (let i = 0; i < 6; i++) seen.push((await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('p'), ['x'], { kind: 'balanced' }))).confirmations[0]!.partitionId);
    assert.deepEqual(seen, [0, 1, 2, 0, 1, 2]);
    for (const key of ['user-1', 'user-2', 'order-42']) {
      const r = await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('p'), ['x'], { kind: 'messagesKey', key: Buffer.from(key) }));
      assert.equal(r.confirmations[0]!.partitionId, xxh32(Buffer.from(key), 0) % 3, key);
    }
  });

  it('answers polls and offset calls on missing stream/topic/partition with 1009/2010/3007, flush with 5', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'm', options: [] });
    const base = { consumer, streamId: sid('default'), topicId: sid('m'), partitionId: 0 as number | null, strategy: { kind: PollingKind.first, value: 0n } as never, count: 1, autoCommit: false };
    assert.deepEqual(await c.call(CommandCode.pollMessages, { ...base, streamId: sid(4000) }), { status: IggyErrorCode.streamIdNotFound });
    assert.deepEqual(await c.call(CommandCode.pollMessages, { ...base, topicId: sid(4000) }), { status: IggyErrorCode.topicIdNotFound });
    assert.deepEqual(await c.call(CommandCode.pollMessages, { ...base, partitionId: 3 }), { status: IggyErrorCode.partitionNotFound });
    const empty = await c.ok(CommandCode.pollMessages, base);
    assert.deepEqual(empty, { partitionId: 0, currentOffset: 0n, messagesCount: 0, batches: [] });
    assert.deepEqual(await c.call(CommandCode.getConsumerOffset, { consumer, streamId: sid(4000), topicId: sid('m'), partitionId: 0 }), { status: IggyErrorCode.streamIdNotFound });
    assert.deepEqual(await c.call(CommandCode.flushUnsavedBuffer, { streamId: sid('default'), topicId: sid('m'), partitionId: 0, fsync: true }), { status: IggyErrorCode.featureUnavailable });
  });

  it('stores, gets and deletes consumer offsets (ack byte), per consumer', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 2, name: 'm', options: [] });
    await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), ['a', 'b', 'c'], { kind: 'partitionId', partitionId: 1 }));
    const ref = { consumer, streamId: sid('default'), topicId: sid('m'), partitionId: 1 };
    assert.equal(await c.ok(CommandCode.getConsumerOffset, ref), null);
    await c.ok(CommandCode.storeConsumerOffset, { ...ref, offset: 1n, ack: 1 });
    await c.ok(CommandCode.storeConsumerOffset, { ...ref, consumer: { kind: ConsumerKind.consumer, id: sid('named') }, offset: 2n, ack: 0 });
    assert.deepEqual(await c.ok(CommandCode.getConsumerOffset, ref), { partitionId: 1, currentOffset: 2n, storedOffset: 1n });
    const next = await c.ok(CommandCode.pollMessages, { ...ref, strategy: { kind: PollingKind.next, value: 0n }, count: 10, autoCommit: false });
    assert.equal(next.messagesCount, 1);
    await c.ok(CommandCode.deleteConsumerOffset, { ...ref, ack: 1 });
    assert.equal(await c.ok(CommandCode.getConsumerOffset, ref), null);
    assert.deepEqual(await c.call(CommandCode.deleteConsumerOffset, { ...ref, ack: 1 }), { status: IggyErrorCode.consumerOffsetNotFound });
    assert.equal((await c.ok(CommandCode.getConsumerOffset, { ...ref, consumer: { kind: ConsumerKind.consumer, id: sid('named') } }))?.storedOffset, 2n);
  });

  it('refuses to store an offset on an empty partition or past its last message (status 4100), for consumers and groups', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 2, name: 'm', options: [] });
    const ref = { consumer, streamId: sid('default'), topicId: sid('m'), partitionId: 0 };
    assert.deepEqual(await c.call(CommandCode.storeConsumerOffset, { ...ref, offset: 0n, ack: 1 }), { status: IggyErrorCode.invalidOffset });
    await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), ['a', 'b', 'c']));
    assert.deepEqual(await c.call(CommandCode.storeConsumerOffset, { ...ref, offset: 3n, ack: 1 }), { status: IggyErrorCode.invalidOffset });
    assert.equal(await c.ok(CommandCode.getConsumerOffset, ref), null, 'nothing stored');
    await c.ok(CommandCode.storeConsumerOffset, { ...ref, offset: 2n, ack: 1 });
    assert.equal((await c.ok(CommandCode.getConsumerOffset, ref))?.storedOffset, 2n);
    await c.ok(CommandCode.createConsumerGroup, { streamId: sid('default'), topicId: sid('m'), name: 'g' });
    await c.ok(CommandCode.joinConsumerGroup, { streamId: sid('default'), topicId: sid('m'), groupId: sid('g') });
    const group = { ...ref, consumer: { kind: ConsumerKind.consumerGroup, id: sid('g') } };
    assert.deepEqual(await c.call(CommandCode.storeConsumerOffset, { ...group, partitionId: 1, offset: 0n, ack: 1 }), { status: IggyErrorCode.invalidOffset });
    assert.deepEqual(await c.call(CommandCode.storeConsumerOffset, { ...group, offset: 99n, ack: 1 }), { status: IggyErrorCode.invalidOffset });
    await c.ok(CommandCode.storeConsumerOffset, { ...group, offset: 0n, ack: 1 });
  });

  it('ends a poll whose log a purge replaced with what it read, and does not auto-commit it', async (t) => {
    // A small byte budget: one batch per read, so the poll reads again after the purge.
    const h = await startIggy(t, { settings: { pollBytesMax: 400 } });
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'm', options: [] });
    for (const p of ['a', 'b', 'c']) await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), [p]));
    // Hold the poll's read until a purge has run to its end.
    const log = h.broker.partition(h.broker.catalog.requireTopic({ topic: 'm' }), 0);
    const read = log.read.bind(log);
    let entered!: () => void;
    const inRead = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let reads = 0;
    log.read = async (...args: Parameters<typeof read>) => {
      const first = reads++ === 0;
      const batches = await read(...args);
      if (first) {
        entered();
        await released;
      }
      return batches;
    };
    const polled = poll(c, { kind: PollingKind.next, value: 0n }, 10, { autoCommit: true });
    await inRead;
    await h.broker.purgeTopic({ topic: 'm' });
    release();
    assert.deepEqual((await polled).payloads, ['a'], 'what it read before the purge, and no more');
    assert.equal(reads, 2, 'it tried the old log again and stopped');
    assert.equal(await c.ok(CommandCode.getConsumerOffset, { consumer, streamId: sid('default'), topicId: sid('m'), partitionId: 0 }), null, 'no offset of the old log');
    await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), ['new']));
    assert.deepEqual((await poll(c, { kind: PollingKind.next, value: 0n }, 10)).payloads, ['new']);
  });

  it('takes batches far above Kafka\'s 1 MiB default into Iggy topics, and polls them back whole', async (t) => {
    const h = await startIggy(t, { settings: { pollBytesMax: 8 * 1024 * 1024 } });
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'm', options: [] });
    const many = Array.from({ length: 1200 }, (_, i) => Buffer.alloc(2000, i % 251));
    const big = Buffer.alloc(10_000_000, 0x6b);
    await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), many));
    await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), [big]));
    const first = await c.ok(CommandCode.pollMessages, { consumer, streamId: sid('default'), topicId: sid('m'), partitionId: 0, strategy: { kind: PollingKind.offset, value: 0n }, count: 1200, autoCommit: false });
    assert.equal(first.messagesCount, 1200);
    // A batch larger than a poll's byte budget (8 MiB) still comes back, whole.
    const second = await poll(c, { kind: PollingKind.offset, value: 1200n }, 10);
    assert.deepEqual(second.offsets, [1200]);
    assert.equal(second.payloads[0]!.length, big.length);
    // A topic another protocol made keeps its own max.message.bytes (1 MiB by default): 4022.
    await h.broker.createTopic('default', 'k', { partitions: 1 });
    assert.deepEqual(await c.call(CommandCode.sendMessages, sendRequest(sid('default'), sid('k'), many)), { status: IggyErrorCode.tooBigMessagePayload });
  });

  it('refuses a message over the reference\'s bounds (user headers over 100,000 B: 4017, a payload over 64,000,000 B: 4022) and appends nothing', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'm', options: [] });
    const withHeaders = (bytes: number, payloads: (string | Buffer)[]) => ({ ...sendRequest(sid('default'), sid('m'), payloads), batch: batchOf(payloads, undefined, Buffer.alloc(bytes, 1)) });
    assert.ok('value' in (await c.call(CommandCode.sendMessages, withHeaders(100_000, ['at the bound']))));
    assert.deepEqual(await c.call(CommandCode.sendMessages, withHeaders(100_001, ['ok', 'over'])), { status: IggyErrorCode.tooBigUserHeaders });
    assert.ok('value' in (await c.call(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), [Buffer.alloc(64_000_000, 2)]))), 'a payload at the bound');
    assert.deepEqual(await c.call(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), ['small', Buffer.alloc(64_000_001, 3)])), { status: IggyErrorCode.tooBigMessagePayload });
    assert.equal(h.broker.partition({ topic: 'm' }, 0).stats().nextOffset, 2, 'only the two sends within the bounds');
  });

  it('returns as many messages as the count asks for, 20 MB of them by default (as the reference server, which caps a poll by its count)', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'm', options: [] });
    const payload = (i: number) => Buffer.alloc(20_000, i % 251);
    for (let b = 0; b < 5; b++) await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), Array.from({ length: 200 }, (_, i) => payload(200 * b + i))));
    const all = await poll(c, { kind: PollingKind.offset, value: 0n }, 1000);
    assert.deepEqual(all.offsets, Array.from({ length: 1000 }, (_, i) => i));
    assert.ok(all.payloads.every((p, i) => p === payload(i).toString()));
  });

  it('stores a batch over 4 MiB as consecutive parts of at most 1 MiB, read back whole or from inside by polls and by the other protocols', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'm', options: [] });
    // 3,000 frames of 48 + 2,000 B: 6.1 MB, cut into parts of 511 frames (256 + 511 x 2,048 B <= 1 MiB).
    const payloads = Array.from({ length: 3000 }, (_, i) => `${i}:`.padEnd(2000, String.fromCharCode(97 + (i % 26))));
    assert.equal((await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), payloads))).confirmations[0]!.baseOffset, 0n);
    assert.equal((await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), ['after']))).confirmations[0]!.baseOffset, 3000n);
    const stored = await h.broker.partition({ topic: 'm' }, 0).read(0, { maxBytes: 64 * 1024 * 1024 });
    assert.deepEqual(
      stored.map((b) => [b.baseOffset, b.recordCount]),
      [[0, 511], [511, 511], [1022, 511], [1533, 511], [2044, 511], [2555, 445], [3000, 1]],
    );
    for (const b of stored) assert.ok(b.payload.length <= 1024 * 1024, 'each stored part is at most 1 MiB');
    // The other protocols read each part as a batch of its own, with the same offsets and values.
    const decoded = stored.flatMap((b) => iggyFormatCodec.decode(b));
    assert.deepEqual(decoded.map((r) => r.offset), Array.from({ length: 3001 }, (_, i) => i));
    assert.deepEqual(decoded.map((r) => r.value!.toString()), [...payloads, 'after']);

    const all = await poll(c, { kind: PollingKind.offset, value: 0n }, 5000);
    assert.deepEqual(all.payloads, [...payloads, 'after']);
    assert.deepEqual(all.offsets, Array.from({ length: 3001 }, (_, i) => i));
    if (nativeStatus.loaded) {
      // Every part is served as stored, from its file (sendfile), the later ones too (their first
      // frame's base_offset + offset_delta is their first offset).
      const slicesBefore = fileReplyStats.slices;
      assert.equal((await poll(c, { kind: PollingKind.offset, value: 0n }, 5000)).payloads.length, 3001);
      await eventually(() => fileReplyStats.slices === slicesBefore + 6, 'the six parts to go out from their files');
    }
    // From inside a part, and across the boundary of two.
    const inside = await poll(c, { kind: PollingKind.offset, value: 1500n }, 10);
    assert.deepEqual([inside.offsets, inside.payloads], [Array.from({ length: 10 }, (_, i) => 1500 + i), payloads.slice(1500, 1510)]);
    const across = await poll(c, { kind: PollingKind.offset, value: 1020n }, 5);
    assert.deepEqual([across.offsets, across.payloads], [[1020, 1021, 1022, 1023, 1024], payloads.slice(1020, 1025)]);
    // The message ids are the producer's (1..3,000 in batchOf).
    const reply = await c.ok(CommandCode.pollMessages, { consumer, streamId: sid('default'), topicId: sid('m'), partitionId: 0, strategy: { kind: PollingKind.offset, value: 2553n }, count: 4, autoCommit: false });
    const frames = (parsePolledBatches(Buffer.concat(polledBuffers(reply))) as ParsedBatch[]).flatMap((b) => b.frames);
    assert.deepEqual(frames.map((f) => f.id), [2554n, 2555n, 2556n, 2557n]);

    // The topic's batch limit applies to the batch as sent: a Kafka-made topic (max.message.bytes 1 MiB) refuses it whole.
    await h.broker.createTopic('default', 'k', { partitions: 1 });
    assert.deepEqual(await c.call(CommandCode.sendMessages, sendRequest(sid('default'), sid('k'), payloads)), { status: IggyErrorCode.tooBigMessagePayload });
    assert.equal(h.broker.partition({ topic: 'k' }, 0).stats().nextOffset, 0, 'nothing appended');
  });

  it('a consumer named by name is the consumer whose id is XXH32 of the name, as in the reference server', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'm', options: [] });
    await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), ['a', 'b', 'c'], { kind: 'partitionId', partitionId: 0 }));
    const named = { kind: ConsumerKind.consumer, id: sid('app') };
    const byId = { kind: ConsumerKind.consumer, id: sid(xxh32(Buffer.from('app'), 0)) };
    const ref = { streamId: sid('default'), topicId: sid('m'), partitionId: 0 };
    await c.ok(CommandCode.storeConsumerOffset, { ...ref, consumer: named, offset: 1n, ack: 1 });
    assert.equal((await c.ok(CommandCode.getConsumerOffset, { ...ref, consumer: byId }))?.storedOffset, 1n);
    // Polling Next by id resumes where the name left off, and auto-commit moves the name's offset.
    const next = await poll(c, { kind: PollingKind.next, value: 0n }, 10, { autoCommit: true });
    assert.deepEqual(next.payloads, ['a', 'b', 'c'], 'consumer 1 (the poll helper) has its own offset');
    const resumed = await c.ok(CommandCode.pollMessages, { ...ref, consumer: byId, strategy: { kind: PollingKind.next, value: 0n }, count: 10, autoCommit: true });
    assert.equal(resumed.messagesCount, 1, 'only offset 2 is left after the stored 1');
    assert.equal((await c.ok(CommandCode.getConsumerOffset, { ...ref, consumer: named }))?.storedOffset, 2n);
    await c.ok(CommandCode.deleteConsumerOffset, { ...ref, consumer: byId, ack: 1 });
    assert.equal(await c.ok(CommandCode.getConsumerOffset, { ...ref, consumer: named }), null);
  });

  it('keeps user headers and message ids intact through send and poll', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'm', options: [] });
    const headers = Buffer.from([2, 3, 0, 0, 0, 0x6b, 0x65, 0x79, 1, 2, 0, 0, 0, 0x68, 0x69]);
    await c.ok(CommandCode.sendMessages, { streamId: sid('default'), topicId: sid('m'), partitioning: { kind: 'partitionId', partitionId: 0 }, messagesCount: 1, batch: batchOf(['v'], 1n, headers) });
    const r = await poll(c, { kind: PollingKind.first, value: 0n }, 1);
    assert.equal(r.payloads[0], 'v');
    const polled = parsePolledBatches(Buffer.concat(polledBuffers(r.reply))) as ParsedBatch[];
    assert.deepEqual(polled[0]!.frames[0]!.userHeaders, headers);
    assert.equal(polled[0]!.frames[0]!.id, 1n);
  });

  it('serves whole stored batches as stored and slices at every window edge', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'm', options: [] });
    const sizes = [1, 3, 2, 4];
    const stored: Buffer[] = [];
    let n = 0;
    for (const size of sizes) {
      const payloads = Array.from({ length: size }, () => `m${n++}`);
      await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), payloads));
      stored.push(Buffer.from(polledBuffers((await poll(c, { kind: PollingKind.offset, value: BigInt(n - size) }, size)).reply)[0]!));
    }
    // Whole batches: exactly the stored bytes.
    const all = await poll(c, { kind: PollingKind.offset, value: 0n }, n);
    assert.deepEqual(Buffer.concat(polledBuffers(all.reply)), Buffer.concat(stored));
    for (let from = 0; from <= n; from++) {
      for (let count = 1; count <= n + 1; count++) {
        const r = await poll(c, { kind: PollingKind.offset, value: BigInt(from) }, count);
        const expected = Array.from({ length: Math.max(0, Math.min(n, from + count) - from) }, (_, i) => from + i);
        assert.deepEqual(r.offsets, expected, `from ${from} count ${count}`);
        assert.deepEqual(r.payloads, expected.map((o) => `m${o}`));
      }
    }
  });
});

describe('PollMessages from the segment files (sendfile)', { skip: nativeStatus.loaded ? false : 'native addon not built: run `npm install`' }, () => {
  it('sends whole large batches as stored, and an eviction waits until the reply is out', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'big', options: [] });
    // 8 batches of 1,000 x 1,000 B: an ~8 MB reply, more than a socket holds while the client does not read.
    const payloads = (b: number) => Array.from({ length: 1000 }, (_, i) => `${b}:${i}:`.padEnd(1000, String.fromCharCode(97 + ((b + i) % 26))));
    for (let b = 0; b < 8; b++) await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('big'), payloads(b)));
    // A first poll meets the large batches; from then on the log reads only their heads.
    await poll(c, { kind: PollingKind.offset, value: 0n }, 1000, { topic: 'big' });
    const slicesBefore = fileReplyStats.slices;
    c.socket.pause();
    c.write(c.frame(CommandCode.pollMessages, { consumer: { kind: ConsumerKind.consumer, id: sid(1) }, streamId: sid('default'), topicId: sid('big'), partitionId: 0, strategy: { kind: PollingKind.offset, value: 0n }, count: 8000, autoCommit: false }));
    // The broker is now in the middle of the reply, waiting for the client to read.
    await eventually(() => fileReplyStats.slices > slicesBefore, 'the first batch to go out');
    assert.ok(fileReplyStats.slices < slicesBefore + 8, 'the reply cannot be out while the client does not read');
    for (const session of h.frontend.sessions.values()) session.evict(EvictionReason.staleClient);
    c.socket.resume();
    const reply = await c.next();
    assert.equal(reply.kind, 'reply', 'the whole reply first, not an eviction inside it');
    if (reply.kind !== 'reply') return;
    const batches = parsePolledBatches(reply.body.subarray(16)) as ParsedBatch[];
    assert.ok(Array.isArray(batches), 'every frame and batch checksum verifies');
    assert.deepEqual(
      batches.flatMap((b) => b.frames.map((f) => f.payload.toString())),
      Array.from({ length: 8 }, (_, b) => payloads(b)).flat(),
    );
    // Counted once the broker sees each send complete, which may follow the client's read.
    await eventually(() => fileReplyStats.slices === slicesBefore + 8, 'each stored batch to go out from its file');
    const eviction = await c.next();
    assert.equal(eviction.kind, 'eviction');
    if (eviction.kind === 'eviction' && typeof eviction.eviction !== 'string') assert.equal(eviction.eviction.reason, EvictionReason.staleClient);
    await c.whenClosed();
  });

  it('a timestamp poll sends the large batches stamped at or after the time from their files, and skips the earlier ones', async (t) => {
    const clock = new ManualClock(1_700_000_000_000);
    const h = await startIggy(t, { clock });
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'big', options: [] });
    const payloads = (b: number) => Array.from({ length: 1000 }, (_, i) => `${b}:${i}:`.padEnd(1000, 'y'));
    for (let b = 0; b < 4; b++) {
      await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('big'), payloads(b)));
      clock.advance(1000);
    }
    await poll(c, { kind: PollingKind.offset, value: 0n }, 1000, { topic: 'big' });
    const slicesBefore = fileReplyStats.slices;
    const r = await poll(c, { kind: PollingKind.timestamp, value: 1_700_000_002_000_000n }, 2000, { topic: 'big' });
    assert.deepEqual(r.payloads, [...payloads(2), ...payloads(3)]);
    assert.deepEqual([r.offsets[0], r.offsets.at(-1)], [2000, 3999]);
    await eventually(() => fileReplyStats.slices === slicesBefore + 2, 'both batches to go out from their files');
  });

  it('an evicted peer that never reads the reply in flight is cut off after 5 s', { timeout: 20_000 }, async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'big', options: [] });
    const payloads = Array.from({ length: 1000 }, (_, i) => `${i}:`.padEnd(1000, 'x'));
    for (let b = 0; b < 8; b++) await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('big'), payloads));
    await poll(c, { kind: PollingKind.offset, value: 0n }, 1000, { topic: 'big' });
    const slicesBefore = fileReplyStats.slices;
    c.socket.pause();
    c.write(c.frame(CommandCode.pollMessages, { consumer: { kind: ConsumerKind.consumer, id: sid(1) }, streamId: sid('default'), topicId: sid('big'), partitionId: 0, strategy: { kind: PollingKind.offset, value: 0n }, count: 8000, autoCommit: false }));
    await eventually(() => fileReplyStats.slices > slicesBefore, 'the first batch to go out');
    assert.equal(h.frontend.sessions.size, 1);
    const evictedAt = Date.now();
    for (const session of h.frontend.sessions.values()) session.evict(EvictionReason.staleClient);
    // The client never reads: the broker gives up on the reply and the eviction and closes.
    await eventually(() => h.frontend.sessions.size === 0, 'the connection to be destroyed', 10_000);
    assert.ok(Date.now() - evictedAt >= 4_900, 'not before the 5 s a peer has to read its eviction');
  });
});
