// The PartitionLog contract: one suite that both the memory log and the file log must pass
// (test/log/memory-log.test.ts, test/log/file-log.test.ts), like nats-server's store tests.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock, type Clock } from '../../src/base/clock.js';
import { decodeNeutralBatch, encodeNeutralBatch } from '../../src/log/neutral-format.js';
import { createFormatRegistry, type FormatRegistry } from '../../src/log/formats.js';
import { BatchFormat, type AppendStamp, type BatchFormatCodec, type LogConfig, type PartitionLog, type StoredBatch } from '../../src/log/types.js';
import { batch, rejectsWith, testConfig } from './helpers.js';

export interface LogUnderTest {
  log: PartitionLog;
  /** Closes nothing: the caller closes `log` first, then reopens the same storage. */
  reopen?: () => Promise<PartitionLog>;
}

/** `formats`: the registry the log is built with (the neutral codec alone when absent). */
export type MakeLog = (config: LogConfig, clock: Clock, formats?: FormatRegistry) => Promise<LogUnderTest>;

function values(batches: StoredBatch[]): string[] {
  return batches.flatMap((b) => decodeNeutralBatch(b).map((r) => r.value?.toString() ?? 'null'));
}

async function readAll(log: PartitionLog, from: number): Promise<StoredBatch[]> {
  const out: StoredBatch[] = [];
  let offset = from;
  for (;;) {
    const got = await log.read(offset, { maxBytes: 1024 * 1024 });
    if (got.length === 0) return out;
    out.push(...got);
    offset = got.at(-1)!.lastOffset + 1;
  }
}

async function withLog(makeLog: MakeLog, config: LogConfig, test: (t: LogUnderTest, clock: ManualClock) => Promise<void>, formats?: FormatRegistry): Promise<void> {
  const clock = new ManualClock();
  const t = await makeLog(config, clock, formats);
  try {
    await test(t, clock);
  } finally {
    await t.log.destroy();
  }
}

/** `persistent`: the storage survives close (a file log); the reopen tests run only then. */
export function runLogContract(name: string, makeLog: MakeLog, options: { persistent: boolean }): void {
  describe(`PartitionLog contract: ${name}`, () => {
    it('assigns offsets in call order and resolves in order', () =>
      withLog(makeLog, testConfig(), async ({ log }) => {
        const order: number[] = [];
        const results = await Promise.all(
          [1, 3, 2, 1].map((n, i) =>
            log.append(batch(`b${i}`, n)).then((r) => {
              order.push(r.baseOffset);
              return r;
            }),
          ),
        );
        assert.deepEqual(
          results.map((r) => [r.baseOffset, r.lastOffset]),
          [
            [0, 0],
            [1, 3],
            [4, 5],
            [6, 6],
          ],
        );
        assert.deepEqual(order, [0, 1, 4, 6]);
        const stats = log.stats();
        assert.equal(stats.nextOffset, 7);
        assert.equal(stats.highWatermark, 7);
        assert.equal(stats.logStartOffset, 0);
      }));

    it('reads back what was appended, from any offset inside a batch', () =>
      withLog(makeLog, testConfig(), async ({ log }) => {
        for (let i = 0; i < 20; i++) await log.append(batch(`b${i}`, 3));
        assert.equal(values(await readAll(log, 0)).length, 60);
        const fromMiddle = await log.read(31, { maxBytes: 1 });
        assert.equal(fromMiddle.length, 1);
        assert.equal(fromMiddle[0]!.baseOffset, 30);
        assert.deepEqual(values(fromMiddle), ['b10-0', 'b10-1', 'b10-2']);
        const all = await readAll(log, 0);
        assert.deepEqual(
          all.map((b) => b.baseOffset),
          Array.from({ length: 20 }, (_, i) => i * 3),
        );
      }));

    it('honours maxBytes (at least one batch) and maxOffset', () =>
      withLog(makeLog, testConfig(), async ({ log }) => {
        for (let i = 0; i < 10; i++) await log.append(batch(`b${i}`, 1));
        const size = (await log.read(0, { maxBytes: 1 }))[0]!.payload.length;
        assert.equal((await log.read(0, { maxBytes: 1 })).length, 1);
        assert.equal((await log.read(0, { maxBytes: size * 3 })).length, 3);
        assert.equal((await log.read(0, { maxBytes: size * 3 + 1 })).length, 3);
        const bounded = await log.read(2, { maxBytes: 1 << 20, maxOffset: 5 });
        assert.deepEqual(
          bounded.map((b) => b.baseOffset),
          [2, 3, 4],
        );
        assert.deepEqual(await log.read(5, { maxBytes: 1 << 20, maxOffset: 5 }), []);
      }));

    it('rejects offsets outside the log and returns [] at the high watermark', () =>
      withLog(makeLog, testConfig(), async ({ log }) => {
        await log.append(batch('a', 2));
        assert.deepEqual(await log.read(2, { maxBytes: 100 }), []);
        await rejectsWith(log.read(3, { maxBytes: 100 }), 'offset_out_of_range');
        await rejectsWith(log.read(-1, { maxBytes: 100 }), 'offset_out_of_range');
      }));

    it("has the format's codec stamp a batch with its base offset and append time before writing it", () => {
      // A format whose stamp writes a marker byte and records what it was given.
      const stamped: Array<[string, AppendStamp]> = [];
      const stamping: BatchFormatCodec = {
        format: BatchFormat.felix,
        stamp: (request, assigned) => {
          stamped.push([String(request.stampInput), assigned]);
          request.payload.writeUInt8(0xee, request.payload.length - 1);
        },
        decode: () => [],
        encode: () => {
          throw new Error('not used');
        },
      };
      return withLog(
        makeLog,
        testConfig(),
        async ({ log }, clock) => {
          await log.append(batch('first', 2));
          // The append time in ms and, for protocols that stamp µs, the same moment in µs.
          clock.advanceMicros(1_234);
          const request = { ...batch('x', 1), format: BatchFormat.felix, stampInput: 'input' };
          const assigned = log.assign(request);
          assert.deepEqual(stamped, [['input', { baseOffset: 2, appendTime: clock.now(), appendMicros: clock.nowMicros() }]], 'stamped at assignment');
          assert.equal(clock.nowMicros() % 1000, 234, 'a reading between two milliseconds');
          assert.equal((await assigned.written).appendTime, clock.now());
          const [stored] = await log.read(2, { maxBytes: 100 });
          assert.equal(stored!.payload.at(-1), 0xee);
          // A format without a stamp (the neutral one) is stored as given.
          const plain = batch('y', 1);
          const copy = Buffer.from(plain.payload);
          await log.append(plain);
          assert.deepEqual((await log.read(3, { maxBytes: 100 }))[0]!.payload, copy);
        },
        createFormatRegistry().register(stamping),
      );
    });

    it('assigns offsets synchronously: assign() returns them before the write, which settles in order', () =>
      withLog(makeLog, testConfig({ maxBatchBytes: 100 }), async ({ log }, clock) => {
        clock.advanceMicros(1_500);
        const first = log.assign(batch('a', 2));
        const second = log.assign(batch('b', 3));
        assert.deepEqual([first.baseOffset, first.lastOffset, second.baseOffset, second.lastOffset], [0, 1, 2, 4]);
        assert.equal(first.appendTime, clock.now());
        assert.equal(log.stats().nextOffset, 5, 'assigned at once');
        const results = await Promise.all([first.written, second.written]);
        assert.deepEqual(results.map((r) => [r.baseOffset, r.lastOffset, r.appendTime]), [[0, 1, clock.now()], [2, 4, clock.now()]]);
        // A refused batch throws and takes no offset.
        assert.throws(() => log.assign(encodeNeutralBatch([{ value: Buffer.alloc(200) }])), (err: unknown) => (err as { code?: string }).code === 'record_too_large');
        assert.equal(log.stats().nextOffset, 5);
        assert.deepEqual(values(await readAll(log, 0)), ['a-0', 'a-1', 'b-0', 'b-1', 'b-2']);
        await log.close();
        assert.throws(() => log.assign(batch('c')), /closed/);
        await rejectsWith(log.append(batch('c')), 'storage_error');
      }));

    it('rejects a batch larger than maxBatchBytes with record_too_large', () =>
      withLog(makeLog, testConfig({ maxBatchBytes: 100 }), async ({ log }) => {
        const big = encodeNeutralBatch([{ value: Buffer.alloc(200) }]);
        await rejectsWith(log.append(big), 'record_too_large');
        assert.equal(log.stats().nextOffset, 0);
        await log.append(batch('small'));
        assert.equal(log.stats().nextOffset, 1);
      }));

    it('notifies onAppend listeners with the high watermark, until unsubscribed', () =>
      withLog(makeLog, testConfig(), async ({ log }) => {
        const seen: number[] = [];
        const off = log.onAppend((hw) => seen.push(hw));
        await log.append(batch('a', 2));
        await log.append(batch('b', 1));
        await new Promise<void>((resolve) => setImmediate(resolve));
        off();
        await log.append(batch('c', 1));
        await new Promise<void>((resolve) => setImmediate(resolve));
        assert.deepEqual(seen, [2, 3]);
      }));

    it('notifies onAppend listeners once more when the log closes (and when it is destroyed unclosed)', () =>
      withLog(makeLog, testConfig(), async ({ log }) => {
        const seen: number[] = [];
        log.onAppend((hw) => seen.push(hw));
        await log.append(batch('a', 2));
        await new Promise<void>((resolve) => setImmediate(resolve));
        await log.close();
        assert.deepEqual(seen, [2, 2], 'the append, then the close');
        // Added after the close: called once all the same (a reader must not wait on a closed log).
        const late = await Promise.race([new Promise<number>((resolve) => log.onAppend(resolve)), new Promise<string>((resolve) => setTimeout(() => resolve('never called'), 2_000))]);
        assert.equal(late, 2);
        const other = await makeLog(testConfig(), new ManualClock());
        const woken: number[] = [];
        other.log.onAppend((hw) => woken.push(hw));
        await other.log.destroy();
        assert.deepEqual(woken, [0]);
      }));

    it('finds offsets by timestamp and the max timestamp', () =>
      withLog(makeLog, testConfig(), async ({ log }) => {
        assert.equal(await log.offsetForTimestamp(0), null);
        assert.equal(await log.maxTimestampOffset(), null);
        const timestamps = [100, 300, 200, 500, 400, 600, 600, 50];
        for (const [i, ts] of timestamps.entries()) await log.append(batch(`t${i}`, 2, ts));
        assert.equal(await log.offsetForTimestamp(0), 0);
        assert.equal(await log.offsetForTimestamp(250), 2);
        assert.equal(await log.offsetForTimestamp(450), 6);
        assert.equal(await log.offsetForTimestamp(600), 10);
        assert.equal(await log.offsetForTimestamp(601), null);
        assert.deepEqual(await log.maxTimestampOffset(), { offset: 11, timestamp: 600 });
      }));

    it('stamps a batch that asks for logAppendTime with the append time: envelope, time index and read-back', () =>
      withLog(makeLog, testConfig(), async ({ log }, clock) => {
        clock.set(1_000_000);
        await log.append({ ...batch('producer-time', 1, 5), logAppendTime: true });
        clock.set(2_000_000);
        await log.append({ ...batch('later', 1, 7), logAppendTime: true });
        await log.append(batch('own-time', 1, 3_000_000));
        const read = await log.read(0, { maxBytes: 1 << 20 });
        assert.deepEqual(read.map((b) => [b.firstTimestamp, b.maxTimestamp]), [[1_000_000, 1_000_000], [2_000_000, 2_000_000], [3_000_000, 3_000_000]]);
        assert.equal(await log.offsetForTimestamp(6), 0, 'not by the producer times 5 and 7');
        assert.equal(await log.offsetForTimestamp(1_000_001), 1);
        assert.deepEqual(await log.maxTimestampOffset(), { offset: 2, timestamp: 3_000_000 });
      }));

    it('rolls segments by size and by age', () =>
      withLog(makeLog, testConfig({ segmentBytes: 1024, segmentMs: 60_000 }), async ({ log }, clock) => {
        for (let i = 0; i < 30; i++) await log.append(batch(`b${i}`, 1));
        const bySize = log.stats().segmentCount;
        assert.ok(bySize >= 3, `expected several segments, got ${bySize}`);
        clock.advance(60_000);
        await log.append(batch('aged'));
        assert.equal(log.stats().segmentCount, bySize + 1);
        assert.equal(values(await readAll(log, 0)).length, 31);
      }));

    for (const segmentRoll of ['before', 'after'] as const) {
      it(`rolls by size ${segmentRoll === 'before' ? 'before the batch that would overflow the segment (Kafka)' : 'after the batch that fills the segment (segmentRoll after, Iggy)'}`, () =>
        withLog(makeLog, testConfig({ segmentBytes: 1024, segmentRoll }), async ({ log }) => {
          let held = 0;
          let bytes = 0;
          for (let i = 0; i < 100 && log.stats().segmentCount === 1; i++) {
            held = log.stats().sizeBytes;
            await log.append(batch('x'.repeat(100)));
            bytes = log.stats().sizeBytes - held;
          }
          assert.equal(log.stats().segmentCount, 2);
          // `held`: the size before the append that made a second segment. Before: that batch started
          // it (the first holds `held` <= 1024). After: that batch filled the first (`held` + it >= 1024),
          // which was sealed at once, leaving the new active segment empty: deleting the oldest
          // segment then deletes every batch.
          const { nextOffset } = log.stats();
          if (segmentRoll === 'before') assert.ok(held <= 1024 && held + bytes > 1024, `held ${held}, batch ${bytes}`);
          else assert.ok(held < 1024 && held + bytes >= 1024, `held ${held}, batch ${bytes}`);
          await log.deleteOldestSegments(1);
          assert.equal(log.stats().logStartOffset, segmentRoll === 'after' ? nextOffset : nextOffset - 1);
        }));
    }

    it('applies retention by age to whole sealed segments', () =>
      withLog(makeLog, testConfig({ segmentBytes: 1024, retentionMs: 10_000 }), async ({ log }) => {
        for (let i = 0; i < 40; i++) await log.append(batch(`b${i}`, 1, i < 20 ? 1_000 : 50_000));
        const before = log.stats();
        const result = await log.applyRetention(20_000);
        const after = log.stats();
        assert.ok(result.segmentsDeleted > 0);
        assert.equal(after.segmentCount, before.segmentCount - result.segmentsDeleted);
        assert.ok(after.logStartOffset > 0 && after.logStartOffset <= 20, `logStart ${after.logStartOffset}`);
        await rejectsWith(log.read(0, { maxBytes: 100 }), 'offset_out_of_range');
        const rest = await readAll(log, after.logStartOffset);
        assert.equal(rest.at(-1)!.lastOffset, 39);
        assert.ok(rest.every((b) => b.baseOffset >= after.logStartOffset));
        assert.equal((await log.applyRetention(20_000)).segmentsDeleted, 0);
      }));

    it('applies retention by size, never touching the active segment', () =>
      withLog(makeLog, testConfig({ segmentBytes: 1024, retentionBytes: 2048 }), async ({ log }) => {
        for (let i = 0; i < 60; i++) await log.append(batch(`b${i}`, 1));
        const result = await log.applyRetention(0);
        assert.ok(result.segmentsDeleted > 0);
        assert.ok(log.stats().sizeBytes <= 2048 || log.stats().segmentCount === 1);
        assert.equal(log.stats().nextOffset, 60);
        assert.equal((await readAll(log, log.stats().logStartOffset)).at(-1)!.lastOffset, 59);
      }));

    it('rolls an aged active segment when applying retention', () =>
      withLog(makeLog, testConfig({ segmentMs: 1_000, retentionMs: 0 }), async ({ log }, clock) => {
        await log.append(batch('old', 3, clock.now()));
        clock.advance(5_000);
        const result = await log.applyRetention(clock.now());
        assert.equal(result.segmentsDeleted, 1);
        assert.equal(log.stats().logStartOffset, 3);
        assert.equal(log.stats().nextOffset, 3);
        assert.equal((await log.append(batch('new'))).baseOffset, 3);
      }));

    it('deletes records before an offset', () =>
      withLog(makeLog, testConfig({ segmentBytes: 1024 }), async ({ log }) => {
        for (let i = 0; i < 40; i++) await log.append(batch(`b${i}`, 1));
        assert.equal(await log.deleteRecordsBefore(25), 25);
        assert.equal(log.stats().logStartOffset, 25);
        await rejectsWith(log.read(24, { maxBytes: 100 }), 'offset_out_of_range');
        assert.deepEqual((await log.read(25, { maxBytes: 1 })).map((b) => b.baseOffset), [25]);
        assert.equal(await log.deleteRecordsBefore(10), 25);
        await rejectsWith(log.deleteRecordsBefore(41), 'offset_out_of_range');
        assert.equal(await log.offsetForTimestamp(0), 25);
        assert.equal(await log.deleteRecordsBefore(40), 40);
        assert.deepEqual(await log.read(40, { maxBytes: 100 }), []);
        assert.equal((await log.append(batch('next'))).baseOffset, 40);
      }));

    it('truncates everything while offsets keep increasing', () =>
      withLog(makeLog, testConfig({ segmentBytes: 1024 }), async ({ log }) => {
        for (let i = 0; i < 30; i++) await log.append(batch(`b${i}`, 1));
        await log.truncateAll();
        const stats = log.stats();
        assert.equal(stats.logStartOffset, 30);
        assert.equal(stats.nextOffset, 30);
        assert.equal(stats.sizeBytes, 0);
        assert.deepEqual(await log.read(30, { maxBytes: 100 }), []);
        await rejectsWith(log.read(29, { maxBytes: 100 }), 'offset_out_of_range');
        assert.equal((await log.append(batch('after'))).baseOffset, 30);
        assert.deepEqual(values(await log.read(30, { maxBytes: 100 })), ['after-0']);
      }));

    it('deletes the oldest sealed segments, never the active one; offsets are unchanged', () =>
      withLog(makeLog, testConfig({ segmentBytes: 1024 }), async ({ log }) => {
        for (let i = 0; i < 40; i++) await log.append(batch(`b${i}`, 1));
        const before = log.stats();
        assert.ok(before.segmentCount >= 4, `expected several segments, got ${before.segmentCount}`);
        assert.deepEqual(await log.deleteOldestSegments(0), { segmentsDeleted: 0, bytesDeleted: 0, recordsRemoved: 0 });
        await rejectsWith(log.deleteOldestSegments(-1), 'invalid_request');
        await rejectsWith(log.deleteOldestSegments(1.5), 'invalid_request');

        const one = await log.deleteOldestSegments(1);
        const afterOne = log.stats();
        assert.equal(one.segmentsDeleted, 1);
        assert.ok(one.bytesDeleted > 0);
        assert.equal(afterOne.segmentCount, before.segmentCount - 1);
        assert.equal(afterOne.sizeBytes, before.sizeBytes - one.bytesDeleted);
        assert.ok(afterOne.logStartOffset > 0, 'the start moves to the first kept segment');
        assert.equal(one.recordsRemoved, afterOne.logStartOffset);
        assert.equal(afterOne.nextOffset, 40);
        await rejectsWith(log.read(afterOne.logStartOffset - 1, { maxBytes: 100 }), 'offset_out_of_range');
        assert.deepEqual((await log.read(afterOne.logStartOffset, { maxBytes: 1 })).map((b) => b.baseOffset), [afterOne.logStartOffset]);
        assert.equal(await log.offsetForTimestamp(0), afterOne.logStartOffset);

        const two = await log.deleteOldestSegments(2);
        assert.equal(two.segmentsDeleted, 2);
        assert.equal(log.stats().segmentCount, before.segmentCount - 3);
        assert.ok(log.stats().logStartOffset > afterOne.logStartOffset);

        // More than are sealed: every sealed segment goes, the active one stays with its records.
        const all = await log.deleteOldestSegments(1_000);
        const left = log.stats();
        assert.equal(all.segmentsDeleted, before.segmentCount - 4);
        assert.equal(left.segmentCount, 1);
        assert.ok(left.logStartOffset < 40, 'the active segment keeps its records');
        assert.equal(left.nextOffset, 40);
        const rest = await readAll(log, left.logStartOffset);
        assert.equal(rest[0]!.baseOffset, left.logStartOffset);
        assert.equal(rest.at(-1)!.lastOffset, 39);
        assert.equal((await log.deleteOldestSegments(5)).segmentsDeleted, 0);
        assert.equal((await log.append(batch('next'))).baseOffset, 40);
      }));

    it('deleting every sealed segment before an empty active segment empties the log; offsets keep increasing', () =>
      withLog(makeLog, testConfig({ segmentMs: 1_000 }), async ({ log }, clock) => {
        await log.append(batch('old', 5, clock.now()));
        clock.advance(5_000);
        await log.applyRetention(clock.now()); // rolls the aged active segment; retention is off
        assert.equal(log.stats().segmentCount, 2);
        const result = await log.deleteOldestSegments(3);
        assert.equal(result.segmentsDeleted, 1);
        assert.equal(result.recordsRemoved, 5);
        assert.deepEqual({ ...log.stats(), sizeBytes: 0 }, { logStartOffset: 5, nextOffset: 5, highWatermark: 5, sizeBytes: 0, segmentCount: 1 });
        assert.deepEqual(await log.read(5, { maxBytes: 100 }), []);
        await rejectsWith(log.read(0, { maxBytes: 100 }), 'offset_out_of_range');
        assert.equal((await log.append(batch('new'))).baseOffset, 5);
      }));

    it('keeps, under a barrier, every segment holding an offset at or above it', () =>
      withLog(makeLog, testConfig({ segmentBytes: 1024 }), async ({ log }) => {
        for (let i = 0; i < 40; i++) await log.append(batch(`b${i}`, 1));
        const before = log.stats();
        assert.equal((await log.deleteOldestSegments(100, { before: 1 })).segmentsDeleted, 0);
        const result = await log.deleteOldestSegments(100, { before: 25 });
        const after = log.stats();
        assert.ok(result.segmentsDeleted > 0 && result.segmentsDeleted < before.segmentCount - 1);
        assert.ok(after.logStartOffset > 0 && after.logStartOffset <= 25, `logStart ${after.logStartOffset}`);
        assert.equal(result.recordsRemoved, after.logStartOffset);
        assert.equal((await log.deleteOldestSegments(100, { before: 25 })).segmentsDeleted, 0);
        assert.ok((await log.deleteOldestSegments(100, { before: 40 })).segmentsDeleted > 0);
        assert.equal(log.stats().segmentCount, 1);
      }));

    it('compacts sealed segments to the last record per key', () =>
      withLog(makeLog, testConfig({ segmentBytes: 1024, cleanupPolicy: 'compact' }), async ({ log }, clock) => {
        const now = clock.now();
        for (let i = 0; i < 30; i++) {
          await log.append(encodeNeutralBatch([{ key: `k${i % 3}`, value: `v${i}` }, { key: null, value: `n${i}` }], { timestamp: now }));
        }
        await log.append(encodeNeutralBatch([{ key: 'k0', value: null }], { timestamp: now }));
        for (let i = 0; i < 15; i++) await log.append(batch(`filler${i}`, 1, now));
        const sealedBefore = log.stats().segmentCount - 1;
        assert.ok(sealedBefore >= 2);
        const result = await log.compact(now);
        assert.ok(result.recordsRemoved > 0);
        assert.ok(result.bytesDeleted > 0);
        const records = (await readAll(log, 0)).flatMap((b) => decodeNeutralBatch(b));
        const offsets = records.map((r) => r.offset);
        assert.deepEqual(offsets, [...offsets].sort((a, b) => a - b), 'offsets stay ascending');
        const keyed = records.filter((r) => r.key !== null && r.key.toString().startsWith('k'));
        const lastByKey = new Map(keyed.map((r) => [r.key!.toString(), r]));
        assert.equal(keyed.length, lastByKey.size, 'one record per key remains');
        assert.equal(records.filter((r) => r.key === null && r.value!.toString().startsWith('n')).length, 30, 'null keys are kept');
        assert.equal(lastByKey.get('k0')!.value, null, 'a fresh tombstone stays');
        assert.equal(lastByKey.get('k1')!.value!.toString(), 'v28');
        assert.equal(lastByKey.get('k2')!.value!.toString(), 'v29');
        // Reads across the gaps compaction leaves.
        const from5 = await log.read(5, { maxBytes: 1 });
        assert.equal(from5.length, 1);
        assert.ok(from5[0]!.lastOffset >= 5);
        // Once past the delete retention, the tombstone goes too.
        await log.compact(now + 2 * 24 * 3600 * 1000);
        const later = (await readAll(log, 0)).flatMap((b) => decodeNeutralBatch(b));
        assert.ok(!later.some((r) => r.key?.toString() === 'k0'));
        assert.equal(log.stats().nextOffset, 76);
      }));

    it('keeps the last batch of each producer id verbatim through compaction', () =>
      withLog(makeLog, testConfig({ segmentBytes: 1024, cleanupPolicy: 'compact' }), async ({ log }, clock) => {
        const now = clock.now();
        const idem = (producerId: number, baseSequence: number, records: Array<{ key: string; value: string }>) =>
          encodeNeutralBatch(records, { timestamp: now, producerId, producerEpoch: 0, baseSequence });
        await log.append(idem(7, 0, [{ key: 'x', value: 'p7-0' }])); // superseded, not its producer's last: goes
        const last7 = idem(7, 1, [{ key: 'x', value: 'p7-1' }]); // superseded, but producer 7's last: stays
        const at7 = (await log.append(last7)).baseOffset;
        const last8 = idem(8, 0, [{ key: 'y', value: 'p8-y' }, { key: 'z', value: 'p8-z' }]); // 'y' superseded: not rewritten
        const at8 = (await log.append(last8)).baseOffset;
        await log.append(encodeNeutralBatch([{ key: 'x', value: 'other' }, { key: 'y', value: 'other' }], { timestamp: now }));
        for (let i = 0; i < 15; i++) await log.append(batch(`filler${i}`, 1, now));
        assert.ok(log.stats().segmentCount >= 2);
        const result = await log.compact(now);
        assert.equal(result.recordsRemoved, 1, 'only producer 7\'s first batch goes');
        const stored = await readAll(log, 0);
        const producers = stored.filter((b) => b.producerId >= 0);
        assert.deepEqual(
          producers.map((b) => [b.producerId, b.baseSequence, b.baseOffset, b.recordCount]),
          [
            [7, 1, at7, 1],
            [8, 0, at8, 2],
          ],
        );
        assert.deepEqual(producers[0]!.payload, last7.payload, 'kept verbatim');
        assert.deepEqual(producers[1]!.payload, last8.payload, 'kept verbatim');
        // A later batch of producer 7, once compacted too, frees the one before it.
        await log.append(idem(7, 2, [{ key: 'x', value: 'p7-2' }]));
        for (let i = 0; i < 15; i++) await log.append(batch(`more${i}`, 1, now));
        await log.compact(now);
        const after = (await readAll(log, 0)).filter((b) => b.producerId === 7).map((b) => b.baseSequence);
        assert.deepEqual(after, [2]);
      }));

    it('does not compact under cleanupPolicy delete', () =>
      withLog(makeLog, testConfig({ segmentBytes: 1024 }), async ({ log }) => {
        for (let i = 0; i < 30; i++) await log.append(encodeNeutralBatch([{ key: 'same', value: `v${i}` }]));
        assert.deepEqual(await log.compact(Date.now()), { segmentsDeleted: 0, bytesDeleted: 0, recordsRemoved: 0 });
        assert.equal((await readAll(log, 0)).length, 30);
      }));

    it('rejects every call after close', async () => {
      const clock = new ManualClock();
      const { log } = await makeLog(testConfig(), clock);
      await log.append(batch('a'));
      await log.flush();
      await log.close();
      await rejectsWith(log.append(batch('b')), 'storage_error');
      await rejectsWith(log.read(0, { maxBytes: 10 }), 'storage_error');
      await rejectsWith(log.close(), 'storage_error');
      await log.destroy();
    });

    if (options.persistent) it('keeps the start set by deleteOldestSegments across a reopen', async () => {
      const clock = new ManualClock();
      const made = await makeLog(testConfig({ segmentBytes: 1024 }), clock);
      assert.ok(made.reopen, 'a persistent log must offer reopen');
      for (let i = 0; i < 40; i++) await made.log.append(batch(`b${i}`, 1));
      await made.log.deleteOldestSegments(2);
      const before = made.log.stats();
      assert.ok(before.logStartOffset > 0);
      await made.log.close();
      const log = await made.reopen();
      try {
        assert.deepEqual(log.stats(), before);
        await rejectsWith(log.read(before.logStartOffset - 1, { maxBytes: 10 }), 'offset_out_of_range');
        assert.equal(values(await readAll(log, before.logStartOffset)).length, 40 - before.logStartOffset);
      } finally {
        await log.destroy();
      }
    });

    if (options.persistent) it('keeps data, offsets and the log start across a reopen', async () => {
      const clock = new ManualClock();
      const made = await makeLog(testConfig({ segmentBytes: 1024 }), clock);
      assert.ok(made.reopen, 'a persistent log must offer reopen');
      for (let i = 0; i < 40; i++) await made.log.append(batch(`b${i}`, 2, 1_000 + i));
      await made.log.deleteRecordsBefore(13);
      const before = made.log.stats();
      await made.log.close();
      const log = await made.reopen();
      try {
        assert.deepEqual(log.stats(), before);
        assert.equal(values(await readAll(log, 13)).length, 68);
        await rejectsWith(log.read(12, { maxBytes: 10 }), 'offset_out_of_range');
        assert.equal(await log.offsetForTimestamp(1_020), 40);
        assert.equal((await log.append(batch('more'))).baseOffset, 80);
      } finally {
        await log.destroy();
      }
    });
  });
}
