import assert from 'node:assert/strict';
import { cpSync, readdirSync, readFileSync, readSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ManualClock } from '../../src/base/clock.js';
import { DirectWriteGate } from '../../src/log/direct-write.js';
import { readRecoveryPoint } from '../../src/log/checkpoint.js';
import { openFileLog, type FileLogOptions } from '../../src/log/file-log.js';
import { BufferLease } from '../../src/base/buffer-pool.js';
import { FaultyFileSystem, fsError, nodeFileSystem, type LogFileSystem, type OpenMode } from '../../src/log/fs.js';
import { reserveAfterBytes, reserveAheadBytes, writebackAlignBytes, writebackBytes, writebackDelayMs, writebackStreakDelayMs } from '../../src/log/segment.js';
import { TaskSlots } from '../../src/log/task-slots.js';
import { nativeStatus } from '../../src/base/native.js';
import { decodeNeutralBatch, encodeNeutralBatch } from '../../src/log/neutral-format.js';
import { fileSliceHeadBytes, type LogConfig, type PartitionLog, type ReadOptions } from '../../src/log/types.js';
import { verifyPartitionDir } from '../../src/log/verify.js';
import { runLogContract } from './contract.js';
import { HeldFileSystem } from '../core/helpers.js';
import { batch, rejectsWith, tempDir, testConfig } from './helpers.js';

const root = tempDir('quartet-file-log-');
after(() => root.remove());
let counter = 0;
const freshDir = (): string => join(root.path, `p${counter++}`);

runLogContract('FileLog (interval)', async (config, clock, formats) => {
  const dir = freshDir();
  const options = { clock, ...(formats ? { formats } : {}) };
  return { log: await openFileLog(dir, config, options), reopen: () => openFileLog(dir, config, options) };
}, { persistent: true });

runLogContract('FileLog (interval, thread-pool writes only)', async (config, clock, formats) => {
  const dir = freshDir();
  const options = { clock, directWrites: null, ...(formats ? { formats } : {}) };
  return { log: await openFileLog(dir, config, options), reopen: () => openFileLog(dir, config, options) };
}, { persistent: true });

runLogContract('FileLog (always)', async (config, clock, formats) => {
  const dir = freshDir();
  const always: LogConfig = { ...config, fsyncPolicy: 'always' };
  const options = { clock, ...(formats ? { formats } : {}) };
  return { log: await openFileLog(dir, always, options), reopen: () => openFileLog(dir, always, options) };
}, { persistent: true });

async function contents(log: PartitionLog): Promise<string[]> {
  const out: string[] = [];
  let offset = log.stats().logStartOffset;
  for (;;) {
    const got = await log.read(offset, { maxBytes: 1 << 20 });
    if (got.length === 0) return out;
    for (const b of got) out.push(...decodeNeutralBatch(b).map((r) => `${r.offset}:${r.value!.toString()}`));
    offset = got.at(-1)!.lastOffset + 1;
  }
}

/**
 * A FaultyFileSystem whose reads and unlinks can be held at a gate (a read or unlink that starts
 * while the gate is set waits for it), and whose opens can be made to fail.
 */
class GatedFs extends FaultyFileSystem {
  readGate: Promise<void> | null = null;
  readsAtGate = 0;
  unlinkGate: Promise<void> | null = null;
  unlinksAtGate = 0;
  failOpen: ((path: string) => boolean) | null = null;

  override async read(fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
    if (this.readGate) {
      this.readsAtGate++;
      await this.readGate;
    }
    return super.read(fd, buffer, offset, length, position);
  }

  override async unlink(path: string): Promise<void> {
    if (this.unlinkGate) {
      this.unlinksAtGate++;
      await this.unlinkGate;
    }
    return super.unlink(path);
  }

  override async open(path: string, mode: OpenMode): Promise<number> {
    if (this.failOpen?.(path)) {
      this.failOpen = null;
      throw fsError('EMFILE', `injected open failure for ${path}`);
    }
    return super.open(path, mode);
  }
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Waits (5 s at most, then fails) for `condition` to hold. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not reached within 5 s: ${condition.toString()}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Settles a promise into a value or the error, so a test can start it now and look later. */
function settled<T>(promise: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

describe('FileLog files and recovery', () => {
  it('names segments by 20-digit base offset with both indexes', async () => {
    const dir = freshDir();
    const log = await openFileLog(dir, testConfig({ segmentBytes: 1024 }));
    for (let i = 0; i < 20; i++) await log.append(batch(`b${i}`, 5));
    await log.close();
    const names = readdirSync(dir).sort();
    assert.ok(names.includes('00000000000000000000.log'));
    assert.ok(names.includes('00000000000000000000.index'));
    assert.ok(names.includes('00000000000000000000.timeindex'));
    assert.ok(names.filter((n) => n.endsWith('.log')).length > 1);
    assert.deepEqual((await verifyPartitionDir(dir)).problems, []);
  });

  it('rebuilds missing and corrupt indexes at open', async () => {
    const dir = freshDir();
    const config = testConfig({ segmentBytes: 2048, indexIntervalBytes: 128 });
    const log = await openFileLog(dir, config);
    for (let i = 0; i < 40; i++) await log.append(batch(`b${i}`, 2, 1_000 + i));
    const expected = await contents(log);
    await log.close();
    const indexes = readdirSync(dir).filter((n) => n.endsWith('.index'));
    writeFileSync(join(dir, indexes[0]!), Buffer.from([1, 2, 3]));
    writeFileSync(join(dir, indexes[1]!), Buffer.alloc(0));
    for (const n of readdirSync(dir).filter((n) => n.endsWith('.timeindex')).slice(0, 1)) writeFileSync(join(dir, n), Buffer.alloc(24, 0xff));
    const reopened = await openFileLog(dir, config);
    assert.deepEqual(await contents(reopened), expected);
    assert.equal(await reopened.offsetForTimestamp(1_030), 60);
    await reopened.close();
    assert.deepEqual((await verifyPartitionDir(dir)).problems, []);
  });

  it('removes leftover compaction and temp files at open', async () => {
    const dir = freshDir();
    const log = await openFileLog(dir, testConfig());
    await log.append(batch('a'));
    await log.close();
    writeFileSync(join(dir, '00000000000000000000.log.cleaned'), 'junk');
    writeFileSync(join(dir, 'log-start-offset.checkpoint.tmp'), 'junk');
    const reopened = await openFileLog(dir, testConfig());
    assert.deepEqual(readdirSync(dir).filter((n) => n.endsWith('.cleaned') || n.endsWith('.tmp')), []);
    assert.deepEqual(await contents(reopened), ['0:a-0']);
    await reopened.close();
  });

  it('persists truncateAll across a reopen', async () => {
    const dir = freshDir();
    const log = await openFileLog(dir, testConfig({ segmentBytes: 1024 }));
    for (let i = 0; i < 30; i++) await log.append(batch(`b${i}`));
    await log.truncateAll();
    await log.close();
    const reopened = await openFileLog(dir, testConfig({ segmentBytes: 1024 }));
    assert.equal(reopened.stats().logStartOffset, 30);
    assert.equal(reopened.stats().nextOffset, 30);
    assert.equal((await reopened.append(batch('x'))).baseOffset, 30);
    await reopened.close();
  });

  it('persists compaction across a reopen', async () => {
    const dir = freshDir();
    const config = testConfig({ segmentBytes: 1024, cleanupPolicy: 'compact' });
    const log = await openFileLog(dir, config);
    const { encodeNeutralBatch } = await import('../../src/log/neutral-format.js');
    for (let i = 0; i < 40; i++) await log.append(encodeNeutralBatch([{ key: `k${i % 4}`, value: `v${i}` }]));
    await log.compact(Date.now());
    const expected = await contents(log);
    await log.close();
    assert.deepEqual((await verifyPartitionDir(dir)).problems, []);
    const reopened = await openFileLog(dir, config);
    assert.deepEqual(await contents(reopened), expected);
    assert.equal(reopened.stats().nextOffset, 40);
    await reopened.close();
  });

  it('shares one fsync among appends waiting together under always (group commit)', async () => {
    const fs = new FaultyFileSystem();
    const log = await openFileLog(freshDir(), testConfig({ fsyncPolicy: 'always', segmentBytes: 1 << 20 }), { fs });
    const before = fs.fsyncCalls;
    const results = await Promise.all(Array.from({ length: 64 }, (_, i) => log.append(batch(`c${i}`))));
    assert.deepEqual(
      results.map((r) => r.baseOffset),
      Array.from({ length: 64 }, (_, i) => i),
    );
    const fsyncs = fs.fsyncCalls - before;
    assert.ok(fsyncs <= 2, `64 concurrent appends took ${fsyncs} fsyncs`);
    assert.ok(fs.writevCalls <= 4, `64 concurrent appends took ${fs.writevCalls} writevs`);
    await log.close();
  });

  it('holds the high watermark until the fsync under always', async () => {
    const fs = new FaultyFileSystem();
    const log = await openFileLog(freshDir(), testConfig({ fsyncPolicy: 'always' }), { fs });
    const pending = log.append(batch('a'));
    assert.equal(log.stats().nextOffset, 1);
    assert.equal(log.stats().highWatermark, 0);
    assert.deepEqual(await log.read(0, { maxBytes: 100 }), []);
    await pending;
    assert.equal(log.stats().highWatermark, 1);
    await log.close();
  });

  it('fsyncs on the interval timer under interval', async () => {
    const fs = new FaultyFileSystem();
    const log = await openFileLog(freshDir(), testConfig({ fsyncPolicy: 'interval', fsyncIntervalMs: 5 }), { fs });
    const before = fs.fsyncCalls;
    await log.append(batch('a'));
    assert.equal(fs.fsyncCalls, before);
    const deadline = Date.now() + 5_000;
    while (fs.fsyncCalls === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    assert.ok(fs.fsyncCalls > before, 'the timer fsynced');
    await log.close();
  });

  for (const fsyncPolicy of ['interval', 'always'] as const) {
    it(`${fsyncPolicy === 'interval' ? 'starts' : 'does not start'} writeback of unsynced writes once ${writebackBytes / 2 ** 20} MiB and ${writebackDelayMs} ms old under ${fsyncPolicy}`, async () => {
      const ranges: Array<[number, number]> = [];
      const fs = new FaultyFileSystem({ ...nodeFileSystem, startWriteback: async (_fd, position, length) => void ranges.push([position, length]) });
      const clock = new ManualClock();
      const config = testConfig({ fsyncPolicy, fsyncIntervalMs: 3_600_000, segmentBytes: 64 * 2 ** 20, maxBatchBytes: 2 * 2 ** 20 });
      const log = await openFileLog(freshDir(), config, { fs, clock });
      const big = encodeNeutralBatch([{ key: null, value: 'x'.repeat(2 ** 20) }], { timestamp: 1 });
      // A burst shorter than the delay: no hint however much it writes.
      for (let i = 0; i < 12; i++) await log.append(big);
      assert.deepEqual(ranges, [], 'a short burst starts no writeback');
      clock.advance(writebackDelayMs);
      await log.append(big);
      // Younger than the delay again, then old enough but under 8 MiB: no hint either.
      for (let i = 0; i < 3; i++) await log.append(big);
      clock.advance(writebackDelayMs);
      await log.append(big);
      if (fsyncPolicy === 'always') {
        assert.deepEqual(ranges, [], 'every round is fsynced: nothing to start');
      } else {
        assert.equal(ranges.length, 1, 'one hint: the 13 MiB that were old enough');
        assert.deepEqual(ranges[0]![0], 0);
        assert.ok(ranges[0]![1] >= 13 * 2 ** 20 && ranges[0]![1] < 14 * 2 ** 20);
        assert.equal(fs.writebackCalls, 1);
        for (let i = 0; i < 8; i++) await log.append(big);
        clock.advance(writebackDelayMs);
        await log.append(big);
        assert.equal(ranges.length, 2);
        assert.equal(ranges[1]![0], ranges[0]![1], 'the next range starts where the last ended');
      }
      await log.close();
    });
  }

  it(`once hinted, a streak of writes is hinted again after ${writebackStreakDelayMs} ms; a pause over ${writebackDelayMs} ms ends it; hints stop at a ${writebackAlignBytes / 1024} KiB boundary`, async () => {
    const ranges: Array<[number, number]> = [];
    const fs = new FaultyFileSystem({ ...nodeFileSystem, startWriteback: async (_fd, position, length) => void ranges.push([position, length]) });
    const clock = new ManualClock();
    const log = await openFileLog(freshDir(), testConfig({ fsyncPolicy: 'interval', fsyncIntervalMs: 3_600_000, segmentBytes: 64 * 2 ** 20, maxBatchBytes: 2 * 2 ** 20 }), { fs, clock });
    const big = encodeNeutralBatch([{ key: null, value: 'x'.repeat(2 ** 20) }], { timestamp: 1 });
    const end = () => log.stats().sizeBytes;
    for (let i = 0; i < 9; i++) await log.append(big);
    clock.advance(writebackDelayMs);
    await log.append(big);
    assert.equal(ranges.length, 1, 'the first hint waits the full delay');
    const firstEnd = ranges[0]![0] + ranges[0]![1];
    assert.equal(firstEnd % writebackAlignBytes, 0, 'the hint ends on a boundary');
    assert.ok(firstEnd <= end() && firstEnd > end() - writebackAlignBytes, 'at the last boundary below the end of the data');
    assert.notEqual(end() % writebackAlignBytes, 0, 'the data ends inside a page the hint left out');
    // The streak goes on: the next hint waits only the short delay, and starts where the last ended.
    for (let i = 0; i < 9; i++) await log.append(big);
    assert.equal(ranges.length, 1);
    clock.advance(writebackStreakDelayMs);
    await log.append(big);
    assert.equal(ranges.length, 2);
    assert.equal(ranges[1]![0], firstEnd);
    // A pause ends the streak: the first hint after it waits the full delay again.
    clock.advance(writebackDelayMs + 1);
    for (let i = 0; i < 9; i++) await log.append(big);
    clock.advance(writebackStreakDelayMs);
    await log.append(big);
    assert.equal(ranges.length, 2, 'no hint after the short delay once the streak has ended');
    clock.advance(writebackDelayMs - writebackStreakDelayMs);
    await log.append(big);
    assert.equal(ranges.length, 3);
    await log.close();
  });

  it('an fsync covers what it synced: no write-back hint re-covers it', async () => {
    const ranges: Array<[number, number]> = [];
    const fs = new FaultyFileSystem({ ...nodeFileSystem, startWriteback: async (_fd, position, length) => void ranges.push([position, length]) });
    const clock = new ManualClock();
    const log = await openFileLog(freshDir(), testConfig({ fsyncPolicy: 'interval', fsyncIntervalMs: 3_600_000, segmentBytes: 64 * 2 ** 20, maxBatchBytes: 2 * 2 ** 20 }), { fs, clock });
    const big = encodeNeutralBatch([{ key: null, value: 'x'.repeat(2 ** 20) }], { timestamp: 1 });
    for (let i = 0; i < 7; i++) await log.append(big);
    await log.flush();
    clock.advance(writebackDelayMs);
    for (let i = 0; i < 2; i++) await log.append(big);
    assert.deepEqual(ranges, [], 'only 2 MiB written since the fsync');
    for (let i = 0; i < 6; i++) await log.append(big);
    clock.advance(writebackDelayMs);
    await log.append(big);
    assert.equal(ranges.length, 1);
    assert.ok(ranges[0]![0] >= 7 * 2 ** 20, 'the hint starts where the fsync ended');
    await log.close();
  });

  it('under interval, appends go on while the timer fsync runs', async () => {
    const fs = new HeldFileSystem();
    const held = fs.holdNextSync();
    const log = await openFileLog(freshDir(), testConfig({ fsyncPolicy: 'interval', fsyncIntervalMs: 5 }), { fs });
    await log.append(batch('a'));
    await reachedWithin(held.reached, 5_000);
    const outcome = await Promise.race([
      log.append(batch('b')).then(() => 'appended'),
      new Promise((resolve) => setTimeout(resolve, 5_000, 'waited for the fsync')),
    ]);
    assert.equal(outcome, 'appended');
    assert.equal(log.stats().highWatermark, 2);
    held.open();
    await log.close();
  });

  for (const outcome of ['succeeds', 'fails'] as const) {
    it(`under interval, flush() waits for a timer fsync in flight and ${outcome === 'succeeds' ? 'resolves after it' : 'rejects when it fails'}`, async () => {
      const fs = new HeldFileSystem();
      const held = fs.holdNextSync();
      const log = await openFileLog(freshDir(), testConfig({ fsyncPolicy: 'interval', fsyncIntervalMs: 5 }), { fs });
      await log.append(batch('a'));
      await reachedWithin(held.reached, 5_000);
      let settled = false;
      const flushed = log.flush().finally(() => (settled = true));
      // The flush must not report durability while the fsync that covers 'a' is still out.
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
      assert.equal(settled, false, 'flush settled before the timer fsync finished');
      if (outcome === 'succeeds') {
        held.open();
        await flushed;
      } else {
        held.fail();
        await rejectsWith(flushed, 'storage_error');
        await rejectsWith(log.append(batch('b')), 'storage_error');
      }
      await log.close().catch(() => undefined);
    });
  }

  it('under interval, the timer starts no fsync while a flush fsync runs', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const fs = new HeldFileSystem();
    const log = await openFileLog(freshDir(), testConfig({ fsyncPolicy: 'interval', fsyncIntervalMs: 5 }), { fs });
    await log.append(batch('a'));
    const held = fs.holdNextSync();
    const flushed = log.flush();
    await reachedWithin(held.reached, 5_000);
    const calls = fs.fsyncCalls;
    t.mock.timers.tick(50);
    assert.equal(fs.fsyncCalls, calls, 'no timer fsync beside the flush fsync');
    held.open();
    await flushed;
    await log.append(batch('b'));
    t.mock.timers.tick(5);
    await new Promise((r) => setImmediate(r));
    assert.equal(fs.fsyncCalls, calls + 2, "the flush's fsync, then the timer's once the flush is done");
    await log.close();
  });

  it('under interval, timer fsyncs of many logs share the slots: the rest wait, then run', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    // fdatasync calls are held until released, and counted while in flight.
    const held: Array<() => void> = [];
    let holding = true;
    let inFlight = 0;
    let maxInFlight = 0;
    const fs = new FaultyFileSystem({
      ...nodeFileSystem,
      fdatasync: async (fd) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        if (holding) await new Promise<void>((resolve) => held.push(resolve));
        inFlight--;
        return nodeFileSystem.fdatasync(fd);
      },
    });
    const slots = new TaskSlots(2);
    const logs = await Promise.all([0, 1, 2].map(() => openFileLog(freshDir(), testConfig({ fsyncPolicy: 'interval', fsyncIntervalMs: 5 }), { fs, backgroundSyncs: slots })));
    for (const log of logs) await log.append(batch('a'));
    t.mock.timers.tick(5);
    await until(() => inFlight + slots.queued === 3);
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    assert.equal(inFlight, 2, 'two timer fsyncs run');
    assert.equal(slots.queued, 1, 'the third waits for a slot');
    held.shift()!();
    await until(() => slots.queued === 0);
    await until(() => inFlight === 2);
    assert.equal(held.length, 2, 'the third started once the first finished');
    while (held.length > 0) held.shift()!();
    await until(() => slots.active === 0);
    assert.equal(inFlight, 0);
    assert.equal(maxInFlight, 2);
    holding = false;
    await Promise.all(logs.map((log) => log.close()));
  });

  it('under interval, a flush drops its own timer fsync queued behind other logs\' instead of waiting for them', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    // The first fdatasync (log A's timer fsync) is held; later ones pass.
    const held = firstSyncHeld();
    const fs = held.fs;
    const slots = new TaskSlots(1);
    const config = testConfig({ fsyncPolicy: 'interval', fsyncIntervalMs: 5 });
    const a = await openFileLog(freshDir(), config, { fs, backgroundSyncs: slots });
    const b = await openFileLog(freshDir(), config, { fs, backgroundSyncs: slots });
    await a.append(batch('a'));
    await b.append(batch('b'));
    t.mock.timers.tick(5);
    await until(() => held.release !== null && slots.queued === 1);
    // B's timer fsync waits behind A's held one; B's flush does not (5 s deadline, then A goes on).
    const outcome = await flushOrStuck(b, 5_000);
    const queuedAfter = slots.queued;
    const activeAfter = slots.active;
    const syncsAfter = held.calls;
    held.release!();
    assert.equal(outcome, 'flushed');
    assert.equal(syncsAfter, 2, "A's held timer fsync, then B's flush fsync (which covers B's dropped timer fsync)");
    assert.equal(queuedAfter, 0, "B's queued timer fsync was dropped");
    assert.equal(activeAfter, 1, "A's still runs");
    await until(() => slots.active === 0);
    await Promise.all([a.close(), b.close()]);
  });

  it('under interval, a failed timer fsync turns the log read-only; reads still work', async () => {
    const fs = new HeldFileSystem();
    const held = fs.holdNextSync();
    const log = await openFileLog(freshDir(), testConfig({ fsyncPolicy: 'interval', fsyncIntervalMs: 5 }), { fs });
    await log.append(batch('a'));
    await reachedWithin(held.reached, 5_000);
    held.fail();
    const deadline = Date.now() + 5_000;
    let refused: unknown = null;
    while (refused === null && Date.now() < deadline) {
      await log.append(batch('after')).then(
        () => new Promise((r) => setTimeout(r, 5)),
        (error: unknown) => (refused = error),
      );
    }
    await rejectsWith(Promise.reject(refused), 'storage_error');
    assert.equal((await log.read(0, { maxBytes: 1000 }))[0]!.baseOffset, 0);
    await log.close().catch(() => undefined);
  });
});

/**
 * Ten equal batches (170 bytes with the envelope) under 'interval' in segments of four, flushed
 * (the recovery point at the active segment, offset 8), and a copy of the directory taken before
 * the log closes: an unclean stop with every seal done.
 */
async function tenBatchesCopied(tag: string): Promise<{ config: LogConfig; value: (i: number) => string; copy: string }> {
  const dir = freshDir();
  const config = testConfig({ fsyncPolicy: 'interval', fsyncIntervalMs: 3_600_000, segmentBytes: 700 });
  const log = await openFileLog(dir, config);
  const value = (i: number) => `${tag}${String(i).padStart(2, '0')}`.repeat(25);
  for (let i = 0; i < 10; i++) await log.append(batch(value(i)));
  await log.flush();
  const copy = freshDir();
  cpSync(dir, copy, { recursive: true });
  await log.close();
  return { config, value, copy };
}

/** Opens `dir` again (as after a restart), runs `check` on the log, and closes it whatever happens. */
async function withReopened(dir: string, config: LogConfig, check: (log: PartitionLog) => Promise<void>, options?: FileLogOptions): Promise<void> {
  const log = await openFileLog(dir, config, options);
  try {
    await check(log);
  } finally {
    await log.close();
  }
}

/** A filesystem whose first fdatasync waits for `release()`; later ones pass. */
function firstSyncHeld(): { fs: FaultyFileSystem; release: (() => void) | null; calls: number } {
  const held: { fs: FaultyFileSystem; release: (() => void) | null; calls: number } = {
    release: null,
    calls: 0,
    fs: new FaultyFileSystem({
      ...nodeFileSystem,
      fdatasync: async (fd) => {
        if (held.calls++ === 0) await new Promise<void>((resolve) => (held.release = resolve));
        return nodeFileSystem.fdatasync(fd);
      },
    }),
  };
  return held;
}

/** Flips one byte of a file (bad media, or a page that never reached the disk). */
function damage(path: string, position: number): void {
  const bytes = readFileSync(path);
  bytes[position] = bytes[position]! ^ 0xff;
  writeFileSync(path, bytes);
}

/**
 * An interval-policy log of four equal batches (170 bytes with the envelope) to a segment, values
 * `${prefix}NN` repeated: eight batches and a flush (the first seal synced: recovery point 4), a
 * ninth that rolls while the second segment's seal fsync is held, batches up to `batches` more,
 * then the directory copied as a power cut would leave it (no clean-shutdown marker, recovery
 * point 4, the second segment not synced). The log itself is then closed.
 */
async function crashedWithSealUnsynced(prefix: string, batches: number): Promise<{ crashed: string; config: LogConfig; value: (i: number) => string }> {
  const dir = freshDir();
  const fs = new HeldFileSystem();
  const config = testConfig({ fsyncPolicy: 'interval', fsyncIntervalMs: 3_600_000, segmentBytes: 700 });
  const log = await openFileLog(dir, config, { fs });
  const value = (i: number) => `${prefix}${String(i).padStart(2, '0')}`.repeat(25);
  for (let i = 0; i < 8; i++) await log.append(batch(value(i)));
  await log.flush();
  assert.equal(await readRecoveryPoint(nodeFileSystem, dir), 4);
  const sealSync = fs.holdNextSync();
  await log.append(batch(value(8))); // rolls; the second segment's sync is held
  await reachedWithin(sealSync.reached, 5_000);
  for (let i = 9; i < batches; i++) await log.append(batch(value(i)));
  const crashed = freshDir();
  cpSync(dir, crashed, { recursive: true });
  sealSync.open();
  await log.close();
  return { crashed, config, value };
}

/** 'flushed' when `log.flush()` resolves within `ms` (real time), else 'stuck behind A'. */
async function flushOrStuck(log: PartitionLog, ms: number): Promise<string> {
  let deadline: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    log.flush().then(() => 'flushed'),
    new Promise<string>((resolve) => (deadline = globalThis.setTimeout(() => resolve('stuck behind A'), ms))),
  ]);
  clearTimeout(deadline);
  return outcome;
}

/** Awaits `reached`, keeping the event loop alive (the log's fsync timer is unref'd) up to a deadline. */
async function reachedWithin(reached: Promise<void>, ms: number): Promise<void> {
  let done = false;
  void reached.then(() => (done = true));
  const deadline = Date.now() + ms;
  while (!done && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
  assert.ok(done, `not reached within ${ms} ms`);
}

describe('FileLog fault injection', () => {
  const failures: Array<[string, (fs: FaultyFileSystem) => void, LogConfig['fsyncPolicy']]> = [
    ['a failed write', (fs) => fs.failNextWrite(), 'interval'],
    ['a short write', (fs) => fs.shortNextWrite(70), 'interval'],
    ['a failed fsync under always', (fs) => fs.failNextFsync(), 'always'],
  ];
  for (const [name, arm, fsyncPolicy] of failures) {
    it(`rejects ${name} and everything queued behind it, then carries on`, async () => {
      const dir = freshDir();
      const fs = new FaultyFileSystem();
      const config = testConfig({ fsyncPolicy, segmentBytes: 1024 });
      const log = await openFileLog(dir, config, { fs });
      for (let i = 0; i < 12; i++) await log.append(batch(`ok${i}`, 2));
      arm(fs);
      const doomed = [log.append(batch('bad0', 2)), log.append(batch('bad1')), log.append(batch('bad2', 3))];
      for (const p of doomed) await rejectsWith(p, 'storage_error');
      assert.equal(log.stats().nextOffset, 24);
      assert.equal(log.stats().highWatermark, 24);
      const after = await log.append(batch('after', 2));
      assert.equal(after.baseOffset, 24);
      const expected = [...Array.from({ length: 12 }, (_, i) => [`${2 * i}:ok${i}-0`, `${2 * i + 1}:ok${i}-1`]).flat(), '24:after-0', '25:after-1'];
      assert.deepEqual(await contents(log), expected);
      await log.close();
      assert.deepEqual((await verifyPartitionDir(dir)).problems, []);
      const reopened = await openFileLog(dir, config);
      assert.deepEqual(await contents(reopened), expected);
      await reopened.close();
    });
  }

  it('goes read-only when the rollback truncate also fails', async () => {
    const dir = freshDir();
    const fs = new FaultyFileSystem();
    const log = await openFileLog(dir, testConfig(), { fs });
    await log.append(batch('kept'));
    fs.failNextWrite();
    fs.failNextTruncate();
    await rejectsWith(log.append(batch('bad')), 'storage_error');
    await rejectsWith(log.append(batch('later')), 'storage_error');
    await rejectsWith(log.flush(), 'storage_error');
    assert.deepEqual(await contents(log), ['0:kept-0']);
    await log.close();
    const reopened = await openFileLog(dir, testConfig());
    assert.deepEqual(await contents(reopened), ['0:kept-0']);
    await reopened.close();
  });

  it('a deleteRecordsBefore whose checkpoint write failed leaves the start, and a retry writes it', async () => {
    const dir = freshDir();
    const fs = new FaultyFileSystem();
    const config = testConfig();
    const log = await openFileLog(dir, config, { fs });
    for (let i = 0; i < 10; i++) await log.append(batch(`v${i}`));
    fs.failNextWrite(); // the checkpoint temp file
    await rejectsWith(log.deleteRecordsBefore(5), 'storage_error');
    assert.equal(log.stats().logStartOffset, 0, 'the start moves only once the checkpoint is durable');
    assert.equal((await contents(log))[0], '0:v0-0');
    // The client retries (Kafka DeleteRecords is retried on a storage error): the retry must
    // write the checkpoint, not find the start already moved and report success.
    assert.equal(await log.deleteRecordsBefore(5), 5);
    await log.close();
    const reopened = await openFileLog(dir, config);
    assert.equal(reopened.stats().logStartOffset, 5, 'records deleted by an acknowledged DeleteRecords came back');
    await rejectsWith(reopened.read(4, { maxBytes: 100 }), 'offset_out_of_range');
    await reopened.close();
  });

  it('a truncateAll whose checkpoint write failed leaves the start, and a retry writes it', async () => {
    const dir = freshDir();
    const fs = new FaultyFileSystem();
    const config = testConfig({ segmentBytes: 1024 });
    const log = await openFileLog(dir, config, { fs });
    for (let i = 0; i < 20; i++) await log.append(batch(`v${i}`));
    // The rolls' background seals (and their recovery point writes) are done before the fault is armed.
    await log.flush();
    const segments = log.stats().segmentCount;
    fs.failNextWrite();
    await rejectsWith(log.truncateAll(), 'storage_error');
    assert.equal(log.stats().logStartOffset, 0);
    assert.equal(log.stats().segmentCount, segments, 'nothing deleted');
    assert.equal((await contents(log)).length, 20);
    await log.truncateAll();
    assert.equal(log.stats().logStartOffset, 20);
    await log.close();
    const reopened = await openFileLog(dir, config);
    assert.equal(reopened.stats().logStartOffset, 20);
    assert.deepEqual(await contents(reopened), []);
    await reopened.close();
  });

  it('goes read-only when an fsync in a write round fails over acknowledged unsynced appends (interval)', async () => {
    const dir = freshDir();
    const fs = new FaultyFileSystem();
    const config = testConfig({ fsyncPolicy: 'interval', fsyncIntervalMs: 3_600_000 });
    const log = await openFileLog(dir, config, { fs });
    await log.append(batch('acked')); // acknowledged, in the page cache only (dirty)
    fs.failNextFsync();
    const b = log.append(batch('b'));
    const f = log.flush(); // queued with b: b's write round syncs, and that fsync fails
    await rejectsWith(b, 'storage_error');
    await rejectsWith(f, 'storage_error');
    // The failed fsync covered 'acked' too and the kernel may have dropped its pages: a later
    // flush must not report it durable, and no append may be acknowledged after it.
    await rejectsWith(log.flush(), 'storage_error');
    await rejectsWith(log.append(batch('later')), 'storage_error');
    assert.deepEqual(await contents(log), ['0:acked-0'], 'reads keep working');
    await log.close().catch(() => undefined);
  });

  it('carries on when a round\'s fsync fails with nothing unsynced before the round (interval)', async () => {
    const fs = new FaultyFileSystem();
    const log = await openFileLog(freshDir(), testConfig({ fsyncPolicy: 'interval', fsyncIntervalMs: 3_600_000 }), { fs });
    await log.append(batch('a'));
    await log.flush(); // nothing dirty from here on
    fs.failNextFsync();
    const b = log.append(batch('b'));
    const f = log.flush();
    await rejectsWith(b, 'storage_error');
    await rejectsWith(f, 'storage_error');
    // Only the rejected round's bytes were at stake, and they were cut off again.
    assert.equal((await log.append(batch('c'))).baseOffset, 1);
    await log.flush();
    assert.deepEqual(await contents(log), ['0:a-0', '1:c-0']);
    await log.close();
  });

  it('goes read-only when sealing a segment fails (interval): the roll does not wait for it, the next append finds out', async () => {
    const dir = freshDir();
    const fs = new FaultyFileSystem();
    const config = testConfig({ fsyncPolicy: 'interval', fsyncIntervalMs: 3_600_000, segmentBytes: 300 });
    const log = await openFileLog(dir, config, { fs });
    await log.append(batch('a'.repeat(100)));
    await log.append(batch('x'.repeat(150))); // the first roll (it also writes the recovery point)
    await log.flush();
    fs.failNextFsync();
    // The roll seals the second segment in the background: 'b' goes into a new segment at once.
    assert.equal((await log.append(batch('b'.repeat(150)))).baseOffset, 2);
    assert.equal(log.stats().segmentCount, 3);
    // The seal's fsync fails: the sealed segment's acknowledged data went through a failed fsync,
    // and a retried one would "succeed", so the log stops taking writes.
    await rejectsWith(log.flush(), 'storage_error');
    await rejectsWith(log.append(batch('c'.repeat(150))), 'storage_error');
    assert.equal(await readRecoveryPoint(nodeFileSystem, dir), 1, 'the point did not move past the segment whose seal failed');
    assert.deepEqual(await contents(log), [`0:${'a'.repeat(100)}-0`, `1:${'x'.repeat(150)}-0`, `2:${'b'.repeat(150)}-0`], 'reads still work');
    await log.close().catch(() => undefined);
  });

  it('under interval, a roll does not wait for the sealed segment\'s fsync; a flush does, and then the recovery point moves past it', async () => {
    const dir = freshDir();
    const fs = new HeldFileSystem();
    const config = testConfig({ fsyncPolicy: 'interval', fsyncIntervalMs: 3_600_000, segmentBytes: 1000 });
    const log = await openFileLog(dir, config, { fs });
    await log.append(batch('a'.repeat(700)));
    const sealSync = fs.holdNextSync();
    // 'b' rolls the log: the first segment's sync is held, and 'b' is acknowledged all the same.
    assert.equal((await log.append(batch('b'.repeat(700)))).baseOffset, 1);
    await reachedWithin(sealSync.reached, 5_000);
    assert.equal(await readRecoveryPoint(nodeFileSystem, dir), 0, 'the sealed segment is not trusted yet');
    assert.equal((await log.append(batch('c'))).baseOffset, 2, 'appends go on while the seal syncs');
    let flushed = false;
    const flush = log.flush().then(() => (flushed = true));
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
    assert.equal(flushed, false, 'a flush waits for the sealed segment too');
    sealSync.open();
    await flush;
    assert.equal(await readRecoveryPoint(nodeFileSystem, dir), 1, 'every segment below the active one is synced');
    await log.close();
    assert.deepEqual((await verifyPartitionDir(dir)).problems, []);
  });

  it('after an unclean stop, a segment sealed but not yet synced is re-validated whole; a cut one takes the later segments with it', async () => {
    // A byte of the second segment's second batch lost (a page the kernel never wrote).
    const { crashed, config, value } = await crashedWithSealUnsynced('v', 10);
    const sealedPath = join(crashed, '00000000000000000004.log');
    const sealedBytes = readFileSync(sealedPath);
    const second = sealedBytes.length / 4 + 20; // inside the second of four equal batches
    sealedBytes[second] = sealedBytes[second]! ^ 0xff;
    writeFileSync(sealedPath, sealedBytes);
    await withReopened(crashed, config, async (reopened) => {
      const expected = [0, 1, 2, 3, 4].map((i) => `${i}:${value(i)}-0`);
      assert.deepEqual(await contents(reopened), expected, 'a prefix: the batches before the damage, nothing after it');
      assert.equal(reopened.stats().segmentCount, 2, 'the segment after the cut one went');
      assert.equal((await reopened.append(batch('next'))).baseOffset, 5);
    });
    assert.deepEqual((await verifyPartitionDir(crashed)).problems, []);
  });

  it('after an unclean stop, segments below the recovery point are trusted as synced (only their tails are re-validated)', async () => {
    const dir = freshDir();
    const config = testConfig({ fsyncPolicy: 'interval', fsyncIntervalMs: 3_600_000, segmentBytes: 600 });
    const log = await openFileLog(dir, config);
    for (let i = 0; i < 4; i++) await log.append(batch(`a${i}`.repeat(20)));
    await log.append(batch('b'.repeat(300))); // rolls
    await log.flush(); // the seal is synced: the recovery point moves to the new segment
    await log.append(batch('c'));
    const crashed = freshDir();
    cpSync(dir, crashed, { recursive: true });
    await log.close();
    assert.equal(await readRecoveryPoint(nodeFileSystem, crashed), 4);
    // Bad media, not a lost write: recovery does not read a trusted segment whole, so it keeps it
    // (`quartet log verify` is what finds such damage).
    const sealedPath = join(crashed, '00000000000000000000.log');
    const sealedBytes = readFileSync(sealedPath);
    const second = sealedBytes.length / 4 + 20;
    sealedBytes[second] = sealedBytes[second]! ^ 0xff;
    writeFileSync(sealedPath, sealedBytes);
    await withReopened(crashed, config, async (reopened) => {
      assert.equal(reopened.stats().segmentCount, 2);
      assert.equal(reopened.stats().nextOffset, 6);
    });
    assert.ok((await verifyPartitionDir(crashed)).problems.length > 0, 'verify still reports the damage');
  });

  it('under interval, the recovery point does not move past a sealed segment whose timer fsync failed beside its seal', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const dir = freshDir();
    const fs = new HeldFileSystem();
    const log = await openFileLog(dir, testConfig({ fsyncPolicy: 'interval', fsyncIntervalMs: 5, segmentBytes: 1000 }), { fs });
    await log.append(batch('a'.repeat(700)));
    const timerSync = fs.holdNextSync();
    t.mock.timers.tick(5);
    await reachedWithin(timerSync.reached, 5_000);
    // The roll seals the first segment while its timer fsync is held; the seal's own fsyncs pass.
    await log.append(batch('b'.repeat(700)));
    timerSync.fail(); // the writeback error reaches the timer's fsync, not the seal's
    await rejectsWith(log.flush(), 'storage_error');
    assert.equal(await readRecoveryPoint(nodeFileSystem, dir), 0, 'the first segment is still to be re-validated after a crash');
    await log.close().catch(() => undefined);
  });

  it('under always, a roll moves the recovery point to the new segment', async () => {
    const dir = freshDir();
    const log = await openFileLog(dir, testConfig({ fsyncPolicy: 'always', segmentBytes: 1000 }));
    assert.equal(await readRecoveryPoint(nodeFileSystem, dir), 0, 'written at open');
    await log.append(batch('a'.repeat(700)));
    await log.append(batch('b'.repeat(700)));
    assert.equal(log.stats().segmentCount, 2);
    assert.equal(await readRecoveryPoint(nodeFileSystem, dir), 1);
    await log.close();
  });

  it('after an unclean stop, recovery syncs a sealed segment whose seal was cut short, then trusts it from the recovery point it writes', async () => {
    const dir = freshDir();
    const held = new HeldFileSystem();
    const config = testConfig({ fsyncPolicy: 'interval', fsyncIntervalMs: 3_600_000, segmentBytes: 1000 });
    const log = await openFileLog(dir, config, { fs: held });
    await log.append(batch('a'.repeat(700)));
    const sealSync = held.holdNextSync();
    await log.append(batch('b'.repeat(700))); // rolls; the seal's sync is held
    await reachedWithin(sealSync.reached, 5_000);
    const crashed = freshDir(); // as a process crash leaves it: page cache intact, seal not done
    cpSync(dir, crashed, { recursive: true });
    sealSync.open();
    await log.close();
    assert.equal(await readRecoveryPoint(nodeFileSystem, crashed), 0);
    const fs = new FaultyFileSystem();
    await withReopened(crashed, config, async (reopened) => {
      assert.ok(fs.fsyncCalls >= 4, `the sealed segment's three files and the point were synced (${fs.fsyncCalls} syncs)`);
      assert.equal(await readRecoveryPoint(nodeFileSystem, crashed), 1);
      assert.deepEqual(await contents(reopened), [`0:${'a'.repeat(700)}-0`, `1:${'b'.repeat(700)}-0`]);
    }, { fs });
  });

  it('with a damaged recovery point, the last two segments are re-validated and a cut one takes the active one with it', async () => {
    const { config, value, copy: crashed } = await tenBatchesCopied('d');
    writeFileSync(join(crashed, 'recovery-point.checkpoint'), Buffer.alloc(16, 0x5a));
    damage(join(crashed, '00000000000000000004.log'), 170 + 20);
    await withReopened(crashed, config, async (reopened) => {
      assert.deepEqual(await contents(reopened), [0, 1, 2, 3, 4].map((i) => `${i}:${value(i)}-0`));
      assert.equal(reopened.stats().segmentCount, 2);
      assert.equal(await readRecoveryPoint(nodeFileSystem, crashed), 4, 'rewritten at the active segment');
    });
  });

  it('a directory from before recovery points keeps trusting its sealed segments (compacted ones end short of the next), and gets a recovery point at open', async () => {
    const { config, value, copy: legacy } = await tenBatchesCopied('w');
    // As an older version left it after an unclean stop: no recovery point, and the second
    // segment ending short of the third's base, as compaction leaves a segment whose last batches
    // it removed. Its sealed segments were synced when sealed, so none of this is a loss.
    rmSync(join(legacy, 'recovery-point.checkpoint'));
    truncateSync(join(legacy, '00000000000000000004.log'), 2 * 170);
    rmSync(join(legacy, '00000000000000000004.index'));
    rmSync(join(legacy, '00000000000000000004.timeindex'));
    await withReopened(legacy, config, async (reopened) => {
      assert.equal(reopened.stats().segmentCount, 3, 'no segment removed');
      assert.deepEqual(await contents(reopened), [0, 1, 2, 3, 4, 5, 8, 9].map((i) => `${i}:${value(i)}-0`));
      assert.equal(await readRecoveryPoint(nodeFileSystem, legacy), 8, 'the open wrote one, at the active segment');
    });
  });

  it('after an unclean stop, damage found in a trusted segment cuts that segment alone (what follows was synced)', async () => {
    const { config, value, copy: crashed } = await tenBatchesCopied('t');
    // Bad media in the first segment's last batch, inside the tail recovery re-validates.
    damage(join(crashed, '00000000000000000000.log'), 3 * 170 + 20);
    await withReopened(crashed, config, async (reopened) => {
      assert.deepEqual(
        await contents(reopened),
        [0, 1, 2, 4, 5, 6, 7, 8, 9].map((i) => `${i}:${value(i)}-0`),
      );
      assert.equal(reopened.stats().segmentCount, 3);
    });
  });

  it('after an unclean stop, a segment not yet synced that ends short of the next one (a loss at a batch boundary) takes the later segments with it', async () => {
    const { crashed, config, value } = await crashedWithSealUnsynced('g', 9);
    // The second segment kept only its first two batches: no torn envelope to find.
    truncateSync(join(crashed, '00000000000000000004.log'), 2 * 170);
    await withReopened(crashed, config, async (reopened) => {
      assert.deepEqual(await contents(reopened), [0, 1, 2, 3, 4, 5].map((i) => `${i}:${value(i)}-0`));
      assert.equal(reopened.stats().nextOffset, 6, 'offsets go on from the end of what survived');
    });
    assert.deepEqual((await verifyPartitionDir(crashed)).problems, []);
  });

  it('a flush takes its log\'s seal out of the fsync queue and runs it, instead of waiting behind other logs', async () => {
    // The first fdatasync (log A's timer fsync) is held; later ones pass.
    const held = firstSyncHeld();
    const fs = held.fs;
    const slots = new TaskSlots(1);
    const a = await openFileLog(freshDir(), testConfig({ fsyncPolicy: 'interval', fsyncIntervalMs: 5 }), { fs, backgroundSyncs: slots });
    const b = await openFileLog(freshDir(), testConfig({ fsyncPolicy: 'interval', fsyncIntervalMs: 3_600_000, segmentBytes: 1000 }), { fs, backgroundSyncs: slots });
    await a.append(batch('a'));
    await until(() => held.release !== null); // A's timer fsync holds the only slot
    await b.append(batch('x'.repeat(700)));
    await b.append(batch('y'.repeat(700))); // rolls: B's seal waits for the slot
    assert.equal(slots.queued, 1);
    const outcome = await flushOrStuck(b, 5_000);
    const queuedAfter = slots.queued;
    held.release!();
    assert.equal(outcome, 'flushed');
    assert.equal(queuedAfter, 0, 'the seal left the queue');
    assert.equal(await readRecoveryPoint(nodeFileSystem, b.dir), 1);
    await until(() => slots.active === 0);
    await Promise.all([a.close(), b.close()]);
  });

  it('a roll that fails after creating the new .log leaves no segment that hides acknowledged data', async () => {
    const dir = freshDir();
    const fs = new GatedFs();
    const config = testConfig({ segmentBytes: 1024 });
    const log = await openFileLog(dir, config, { fs });
    await log.append(batch('x'.repeat(700)));
    // The next append overflows the segment: the roll creates <1>.log, then opening <1>.index fails.
    fs.failOpen = (p) => p.endsWith('00000000000000000001.index');
    await rejectsWith(log.append(batch('y'.repeat(700))), 'storage_error');
    assert.deepEqual(readdirSync(dir).filter((n) => n.startsWith('00000000000000000001')), [], 'the failed create removed its files');
    // A small batch still fits in the old segment: it goes there and is acknowledged.
    assert.equal((await log.append(batch('small'))).baseOffset, 1);
    const before = await contents(log);
    await log.close();
    await withReopened(dir, config, async (reopened) => {
      assert.deepEqual(await contents(reopened), before, 'acknowledged data hidden after reopen');
      assert.equal(reopened.stats().nextOffset, 2, 'offset 1 would be assigned twice');
    });
    assert.deepEqual((await verifyPartitionDir(dir)).problems, []);
  });

  it('recovers a write cut by a crash to the last whole batch', async () => {
    const dir = freshDir();
    const fs = new FaultyFileSystem();
    const config = testConfig({ fsyncPolicy: 'always' });
    const log = await openFileLog(dir, config, { fs });
    for (let i = 0; i < 5; i++) await log.append(batch(`ok${i}`));
    fs.crashAfterBytes(100);
    await rejectsWith(log.append(batch('torn', 4)), 'storage_error');
    const size = statSync(join(dir, '00000000000000000000.log')).size;
    const reopened = await openFileLog(dir, config);
    assert.deepEqual(await contents(reopened), ['0:ok0-0', '1:ok1-0', '2:ok2-0', '3:ok3-0', '4:ok4-0']);
    assert.ok(statSync(join(dir, '00000000000000000000.log')).size <= size);
    assert.equal((await reopened.append(batch('next'))).baseOffset, 5);
    await reopened.close();
    assert.deepEqual((await verifyPartitionDir(dir)).problems, []);
  });
});

describe('FileLog segment preallocation and reservation ahead', () => {
  it('reserves each new segment\'s blocks under preallocate, gives back the unused part at the roll, and recovers as usual', { skip: nativeStatus.loaded ? false : 'the native addon is not built (npm install builds it)' }, async () => {
    const fs = new FaultyFileSystem();
    const dir = freshDir();
    const segmentBytes = 4 * 2 ** 20;
    const config = testConfig({ segmentBytes, maxBatchBytes: 2 ** 20, preallocate: true });
    const log = await openFileLog(dir, config, { fs });
    const logFiles = () => readdirSync(dir).filter((f) => f.endsWith('.log')).sort().map((f) => statSync(join(dir, f)));
    assert.equal(fs.preallocateCalls, 1);
    assert.equal(logFiles()[0]!.size, 0, 'the size stays at the data end');
    assert.ok(logFiles()[0]!.blocks * 512 >= segmentBytes, 'the first segment reserved segment.bytes');

    // ~5 MiB of 512 KiB batches: one roll.
    const value = 'p'.repeat(512 * 1024);
    for (let i = 0; i < 10; i++) await log.append(encodeNeutralBatch([{ key: null, value: `${i}${value}` }], { timestamp: 1 }));
    await log.flush(); // the sealed segment gives its blocks back in its background seal
    const [sealed, active] = logFiles();
    assert.ok(active !== undefined, 'the log rolled');
    assert.equal(fs.preallocateCalls, 2, 'the new segment reserved its blocks too');
    assert.ok(active.blocks * 512 >= segmentBytes);
    assert.ok(sealed!.blocks * 512 < sealed!.size + 64 * 1024, `the sealed segment keeps ${sealed!.blocks * 512} bytes for ${sealed!.size} of data`);
    await log.close();

    const reopened = await openFileLog(dir, config);
    assert.equal(reopened.stats().nextOffset, 10, 'recovery reads exactly the data: the reserved tail is not part of the file');
    assert.deepEqual((await reopened.read(9, { maxBytes: 2 ** 20 })).map((b) => decodeNeutralBatch(b)[0]!.value!.subarray(0, 1).toString()), ['9']);
    await reopened.close();
    assert.deepEqual((await verifyPartitionDir(dir)).problems, []);
  });

  it(`without preallocate, reserves ${reserveAheadBytes / 2 ** 20} MiB ahead once a segment holds ${reserveAfterBytes / 2 ** 20} MiB, and frees it at the roll`, { skip: nativeStatus.loaded ? false : 'the native addon is not built (npm install builds it)' }, async () => {
    const fs = new FaultyFileSystem();
    const dir = freshDir();
    const log = await openFileLog(dir, testConfig({ segmentBytes: 24 * 2 ** 20, maxBatchBytes: 2 ** 20 + 1024 }), { fs });
    const activeLog = () => statSync(join(dir, readdirSync(dir).filter((f) => f.endsWith('.log')).sort().at(-1)!));
    const value = 'r'.repeat(2 ** 20 - 100);
    const mib = (i: number) => encodeNeutralBatch([{ key: null, value: `${i}${value}` }], { timestamp: 1 });
    for (let i = 0; i < 7; i++) await log.append(mib(i));
    assert.equal(fs.preallocateCalls, 0, 'a small segment reserves nothing');
    for (let i = 7; i < 10; i++) await log.append(mib(i));
    await until(() => activeLog().blocks * 512 >= activeLog().size + reserveAheadBytes / 2);
    assert.ok(fs.preallocateCalls >= 1);
    assert.ok(activeLog().size < 11 * 2 ** 20, 'the size stays at the data end');
    // Past 24 MiB the segment rolls; the sealed one gives back what it did not use.
    for (let i = 10; i < 26; i++) await log.append(mib(i));
    await log.flush(); // the sealed segment gives its blocks back in its background seal
    const sealed = statSync(join(dir, readdirSync(dir).filter((f) => f.endsWith('.log')).sort()[0]!));
    assert.ok(log.stats().segmentCount >= 2);
    assert.ok(sealed.blocks * 512 < sealed.size + 64 * 1024, `the sealed segment keeps ${sealed.blocks * 512} bytes for ${sealed.size} of data`);
    await log.close();
  });

  it('a seal waits for a reservation in flight before it cuts the file back, so the cut frees it', async () => {
    // Reservations are held until released; the order of reservation ends and truncations is kept.
    const events: string[] = [];
    let release: (() => void) | null = null;
    const fs = new FaultyFileSystem({
      ...nodeFileSystem,
      preallocate: async (fd, position, length) => {
        events.push('reserve');
        await new Promise<void>((resolve) => (release = resolve));
        events.push('reserved');
        return nodeFileSystem.preallocate(fd, position, length);
      },
      ftruncate: async (fd, length) => {
        events.push('truncate');
        return nodeFileSystem.ftruncate(fd, length);
      },
    });
    const log = await openFileLog(freshDir(), testConfig({ segmentBytes: 12 * 2 ** 20, maxBatchBytes: 2 ** 20 + 1024 }), { fs });
    const value = 's'.repeat(2 ** 20 - 100);
    const mib = (i: number) => encodeNeutralBatch([{ key: null, value: `${i}${value}` }], { timestamp: 1 });
    for (let i = 0; i < 9; i++) await log.append(mib(i));
    await until(() => release !== null);
    // These roll the segment while its reservation is held.
    const rolled = Promise.all([9, 10, 11, 12].map((i) => log.append(mib(i))));
    await until(() => log.stats().nextOffset >= 12);
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    assert.deepEqual(events, ['reserve'], 'the seal has not cut the file while the reservation is held');
    release!();
    await rolled;
    await log.flush(); // the seal's cut runs in its background part
    assert.deepEqual(events.slice(0, 3), ['reserve', 'reserved', 'truncate']);
    await log.close();
  });

  it('reserves nothing for a small segment', async () => {
    const fs = new FaultyFileSystem();
    const log = await openFileLog(freshDir(), testConfig(), { fs });
    await log.append(batch('a'));
    assert.equal(fs.preallocateCalls, 0);
    await log.close();
  });
});

describe('FileLog read sizes', () => {
  it('reads no further than the first indexed batch at maxOffset, not a window of maxBytes', async () => {
    const fs = new FaultyFileSystem();
    const dir = freshDir();
    const log = await openFileLog(dir, testConfig({ segmentBytes: 64 * 2 ** 20, indexIntervalBytes: 4096, maxBatchBytes: 2 ** 20 }), { fs });
    // 40 batches of 10 records of ~1 KiB: each ~10 KiB, so every batch gets an index entry.
    const value = 'v'.repeat(1000);
    for (let i = 0; i < 40; i++) await log.append(encodeNeutralBatch(Array.from({ length: 10 }, () => ({ key: null, value })), { timestamp: 1 }));
    const batchBytes = statSync(join(dir, readdirSync(dir).find((f) => f.endsWith('.log'))!)).size / 40;

    fs.readBytes = 0;
    const got = await log.read(100, { maxBytes: 8 * 2 ** 20, maxOffset: 130 });
    assert.deepEqual(got.map((b) => b.baseOffset), [100, 110, 120]);
    assert.ok(fs.readBytes <= 3 * batchBytes + 1, `read ${fs.readBytes} bytes for 3 batches of ${batchBytes}`);

    // A maxOffset inside a batch still returns that whole batch.
    fs.readBytes = 0;
    const partial = await log.read(100, { maxBytes: 8 * 2 ** 20, maxOffset: 125 });
    assert.deepEqual(partial.map((b) => b.baseOffset), [100, 110, 120]);
    assert.ok(fs.readBytes <= 3 * batchBytes + 1, `read ${fs.readBytes} bytes for 3 batches of ${batchBytes}`);

    // Without maxOffset the read runs to the high watermark within maxBytes.
    fs.readBytes = 0;
    assert.equal((await log.read(100, { maxBytes: 8 * 2 ** 20 })).length, 30);
    assert.ok(fs.readBytes >= 30 * batchBytes - 1);
    await log.close();
  });

  it('a read bounded by maxOffset inside a sealed segment reads nothing of the next segment', async () => {
    const fs = new FaultyFileSystem();
    const dir = freshDir();
    // ~10 KiB batches, 64 KiB segments: several segments of ~6 batches each.
    const log = await openFileLog(dir, testConfig({ segmentBytes: 64 * 1024, indexIntervalBytes: 4096, maxBatchBytes: 2 ** 20 }), { fs });
    const value = 'v'.repeat(1000);
    for (let i = 0; i < 30; i++) await log.append(encodeNeutralBatch(Array.from({ length: 10 }, () => ({ key: null, value })), { timestamp: 1 }));
    assert.ok(log.stats().segmentCount >= 3);
    const batchBytes = statSync(join(dir, readdirSync(dir).filter((f) => f.endsWith('.log')).sort()[0]!)).size / 6;
    // The first segment's last batch starts at 50: ask for offsets 50..59 only.
    fs.readBytes = 0;
    const got = await log.read(50, { maxBytes: 8 * 2 ** 20, maxOffset: 60 });
    assert.deepEqual(got.map((b) => b.baseOffset), [50]);
    assert.ok(fs.readBytes <= batchBytes + 1, `read ${fs.readBytes} bytes for one batch of ${batchBytes}`);
    await log.close();
  });
});

describe('FileLog readers vs retention and compaction', () => {
  async function sealedSegments(config: LogConfig, fs: GatedFs, clock: ManualClock) {
    const log = await openFileLog(freshDir(), config, { fs, clock });
    for (let i = 0; i < 30; i++) await log.append(batch(`v${i}`, 1, clock.now()));
    assert.ok(log.stats().segmentCount >= 4);
    return log;
  }

  /** Starts `op` and holds it at its first pread, with every segment still in place. */
  async function heldAtRead<T>(fs: GatedFs, op: () => Promise<T>) {
    const g = gate();
    fs.readGate = g.promise;
    const result = settled(op());
    await until(() => fs.readsAtGate > 0);
    fs.readGate = null; // later reads (compaction's) pass
    return { result, release: g.open };
  }

  it('a read spanning segments completes while retention deletes the ones it has yet to reach', async () => {
    const fs = new GatedFs();
    const clock = new ManualClock();
    const log = await sealedSegments(testConfig({ segmentBytes: 512, retentionMs: 1000 }), fs, clock);
    const expected = await contents(log);
    const { result, release } = await heldAtRead(fs, () => log.read(0, { maxBytes: 1 << 20 }));
    clock.advance(10_000);
    const removed = await log.applyRetention(clock.now());
    assert.ok(removed.segmentsDeleted >= 3);
    release();
    const got = await result;
    // Pinned at the start, the read sees the segments as they were (their files unlinked since).
    assert.ok(got.ok, `read failed: ${got.ok ? '' : String(got.error)}`);
    assert.deepEqual(got.value.flatMap((b) => decodeNeutralBatch(b).map((r) => `${r.offset}:${r.value!.toString()}`)), expected);
    await rejectsWith(log.read(0, { maxBytes: 100 }), 'offset_out_of_range');
    await log.close();
  });

  it('a read spanning segments completes while compaction replaces the ones it has yet to reach', async () => {
    const fs = new GatedFs();
    const clock = new ManualClock();
    const config = testConfig({ segmentBytes: 512, cleanupPolicy: 'compact' });
    const log = await openFileLog(freshDir(), config, { fs, clock });
    for (let i = 0; i < 30; i++) await log.append(encodeNeutralBatch([{ key: `k${i % 3}`, value: `v${i}` }], { timestamp: clock.now() }));
    assert.ok(log.stats().segmentCount >= 4);
    const { result, release } = await heldAtRead(fs, () => log.read(0, { maxBytes: 1 << 20 }));
    assert.ok((await log.compact(clock.now())).recordsRemoved > 0);
    release();
    const got = await result;
    assert.ok(got.ok, `read failed: ${got.ok ? '' : String(got.error)}`);
    assert.equal(got.value.at(-1)!.lastOffset, 29);
    await log.close();
  });

  it('offsetForTimestamp and maxTimestampOffset complete while compaction replaces segments', async () => {
    const high = 1_000_000;
    for (const op of ['offsetForTimestamp', 'maxTimestampOffset'] as const) {
      const fs = new GatedFs();
      const clock = new ManualClock();
      const log = await openFileLog(freshDir(), testConfig({ segmentBytes: 512, cleanupPolicy: 'compact' }), { fs, clock });
      const keyed = (key: string, timestamp: number) => encodeNeutralBatch([{ key, value: key }], { timestamp });
      // Segment 0: a batch at a high timestamp (then put below the log start), then low ones, so
      // both calls pread segment 0 and offsetForTimestamp goes on to segment 1. Later segments:
      // high timestamps and two keys over and over, so compaction rewrites them.
      await log.append(keyed('first', high));
      for (let i = 0; log.stats().segmentCount === 1; i++) await log.append(keyed(`low${i}`, 1_000));
      for (let i = 0; i < 20; i++) await log.append(keyed(`k${i % 2}`, high + i));
      await log.deleteRecordsBefore(1);
      assert.ok(log.stats().segmentCount >= 4);
      const { result, release } = await heldAtRead<unknown>(fs, () => (op === 'offsetForTimestamp' ? log.offsetForTimestamp(high) : log.maxTimestampOffset()));
      assert.ok((await log.compact(clock.now())).recordsRemoved > 0);
      release();
      const got = await result;
      assert.ok(got.ok, `${op} failed: ${got.ok ? '' : String(got.error)}`);
      assert.ok(got.value !== null, `${op} found nothing`);
      await log.close();
    }
  });

  it('retention moves the log start before it unlinks: a read of a removed offset is out of range', async () => {
    const fs = new GatedFs();
    const clock = new ManualClock();
    const log = await sealedSegments(testConfig({ segmentBytes: 512, retentionMs: 1000 }), fs, clock);
    const g = gate();
    fs.unlinkGate = g.promise;
    clock.advance(10_000);
    const retention = log.applyRetention(clock.now());
    await until(() => fs.unlinksAtGate > 0); // the first segment is going
    // Not the batches after the removed segment, silently: the offset is gone.
    await rejectsWith(log.read(0, { maxBytes: 100 }), 'offset_out_of_range');
    assert.ok(log.stats().logStartOffset > 0);
    fs.unlinkGate = null;
    g.open();
    await retention;
    await log.close();
  });
});

describe('FileLog direct (synchronous) writes', () => {
  /** A filesystem whose synchronous writes advance a fake clock by `syncWriteMs`. */
  class TimedFs extends FaultyFileSystem {
    syncWriteMs = 0;
    constructor(private readonly time: { now: number }) {
      super();
    }
    override writevSync(fd: number, buffers: readonly Buffer[], position: number): number {
      this.time.now += this.syncWriteMs;
      return super.writevSync(fd, buffers, position);
    }
  }

  it('writes synchronously under interval and through the thread pool under always', async () => {
    const fs = new FaultyFileSystem();
    const gate = new DirectWriteGate();
    const interval = await openFileLog(freshDir(), testConfig(), { fs, directWrites: gate });
    fs.writevCalls = 0; // count the appends' writes, not the recovery point written at open
    for (let i = 0; i < 5; i++) await interval.append(batch(`i${i}`));
    assert.equal(fs.writevSyncCalls, 5);
    assert.equal(fs.writevCalls, 0);
    assert.deepEqual(await contents(interval), ['0:i0-0', '1:i1-0', '2:i2-0', '3:i3-0', '4:i4-0']);
    await interval.close();

    const always = await openFileLog(freshDir(), testConfig({ fsyncPolicy: 'always' }), { fs, directWrites: gate });
    const syncBefore = fs.writevSyncCalls;
    const asyncBefore = fs.writevCalls;
    await always.append(batch('a'));
    assert.equal(fs.writevSyncCalls, syncBefore);
    assert.ok(fs.writevCalls > asyncBefore);
    await always.close();
  });

  it('writes through the thread pool while the timer fsync of the same segment runs (a write into a page under writeback waits)', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const fs = new HeldFileSystem();
    const log = await openFileLog(freshDir(), testConfig({ fsyncPolicy: 'interval', fsyncIntervalMs: 5 }), { fs, directWrites: new DirectWriteGate() });
    fs.writevCalls = 0; // count the appends' writes, not the recovery point written at open
    await log.append(batch('before'));
    assert.deepEqual([fs.writevSyncCalls, fs.writevCalls], [1, 0]);
    const timerSync = fs.holdNextSync();
    t.mock.timers.tick(5);
    await reachedWithin(timerSync.reached, 5_000);
    await log.append(batch('during'));
    assert.deepEqual([fs.writevSyncCalls, fs.writevCalls], [1, 1], 'the write beside the fsync went to the thread pool');
    timerSync.open();
    await log.flush(); // waits for the timer fsync first
    await log.append(batch('after'));
    assert.deepEqual([fs.writevSyncCalls, fs.writevCalls], [2, 1], 'direct again once it is done');
    assert.deepEqual(await contents(log), ['0:before-0', '1:during-0', '2:after-0']);
    await log.close();
  });

  it('a round that waited for the next turn goes to the thread pool if the timer fsync of its segment started meanwhile', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const time = { now: 1_000 };
    let waited!: () => void;
    const roundWaits = new Promise<void>((resolve) => (waited = resolve));
    const gate = new (class extends DirectWriteGate {
      override nextTurn(): Promise<void> {
        waited();
        return super.nextTurn();
      }
    })({ turnBudgetMs: 10, now: () => time.now });
    const fs = new HeldFileSystem();
    // Its own fsync slot: the timer fsync must start at once, not queue behind another test's.
    const log = await openFileLog(freshDir(), testConfig({ fsyncPolicy: 'interval', fsyncIntervalMs: 5 }), { fs, directWrites: gate, backgroundSyncs: new TaskSlots(1) });
    fs.writevCalls = 0; // count the appends' writes, not the recovery point written at open
    await log.append(batch('before')); // direct; leaves the log dirty for the timer
    assert.deepEqual([fs.writevSyncCalls, fs.writevCalls], [1, 0]);
    gate.write(() => (time.now += 12)); // another log spends this turn's budget
    const timerSync = fs.holdNextSync();
    const during = log.append(batch('during'));
    await roundWaits; // the round waits for the next turn, its write not yet decided
    t.mock.timers.tick(5); // the timer fsync of the same segment starts (and is held)
    await reachedWithin(timerSync.reached, 5_000);
    await during;
    assert.deepEqual([fs.writevSyncCalls, fs.writevCalls], [1, 1], 'the write beside the fsync went to the thread pool');
    timerSync.open();
    await log.flush();
    assert.deepEqual(await contents(log), ['0:before-0', '1:during-0']);
    await log.close();
  });

  it('never writes synchronously with directWrites: null', async () => {
    const fs = new FaultyFileSystem();
    const log = await openFileLog(freshDir(), testConfig(), { fs, directWrites: null });
    fs.writevCalls = 0; // count the appends' writes, not the recovery point written at open
    for (let i = 0; i < 3; i++) await log.append(batch(`n${i}`));
    assert.equal(fs.writevSyncCalls, 0);
    assert.equal(fs.writevCalls, 3);
    await log.close();
  });

  it('falls back to thread-pool writes for the cooldown after one slow synchronous write', async () => {
    const time = { now: 1_000 };
    const fs = new TimedFs(time);
    const gate = new DirectWriteGate({ slowWriteMs: 20, cooldownMs: 10_000, turnBudgetMs: Infinity, now: () => time.now });
    const log = await openFileLog(freshDir(), testConfig(), { fs, directWrites: gate });
    fs.syncWriteMs = 5;
    await log.append(batch('fast'));
    assert.equal(gate.slowWrites, 0);
    fs.syncWriteMs = 50; // the kernel throttles this write
    await log.append(batch('slow'));
    assert.equal(gate.slowWrites, 1);
    assert.equal(gate.open(), false);
    const syncCalls = fs.writevSyncCalls;
    await log.append(batch('pooled'));
    assert.equal(fs.writevSyncCalls, syncCalls, 'no synchronous write during the cooldown');
    time.now += 10_001;
    fs.syncWriteMs = 1;
    await log.append(batch('direct again'));
    assert.equal(fs.writevSyncCalls, syncCalls + 1);
    assert.deepEqual(await contents(log), ['0:fast-0', '1:slow-0', '2:pooled-0', '3:direct again-0']);
    await log.close();
  });

  it('a single slow write costs a short cooldown; slow writes that keep coming quadruple it up to the ceiling, and one long after starts short again', () => {
    const time = { now: 1_000 };
    const gate = new DirectWriteGate({ slowWriteMs: 20, turnBudgetMs: Infinity, now: () => time.now });
    const slow = (): void => void gate.write(() => (time.now += 50));
    /** The time from now until direct writes are allowed again, to the nearest ms. */
    const offFor = (): number => {
      const start = time.now;
      let ms = 0;
      while (!gate.open()) time.now = start + ++ms;
      time.now = start;
      return ms;
    };
    gate.write(() => (time.now += 19));
    assert.equal(gate.slowWrites, 0, 'a write under the threshold is not slow');
    assert.ok(gate.open());
    slow();
    assert.equal(gate.slowWrites, 1);
    assert.equal(offFor(), 250, 'the first cooldown is 250 ms');
    // Throttling goes on: each write tried after the cooldown is slow again.
    const cooldowns: number[] = [];
    for (let i = 0; i < 5; i++) {
      time.now += offFor();
      assert.ok(gate.open());
      slow();
      cooldowns.push(offFor());
    }
    assert.deepEqual(cooldowns, [1_000, 4_000, 10_000, 10_000, 10_000]);
    assert.equal(gate.currentCooldownMs, 10_000);
    // A minute without a slow write: the next one is treated as a one-off again.
    time.now += offFor() + 60_001;
    slow();
    assert.equal(offFor(), 250);
    // Fast writes in between do not reset the escalation: only time does.
    time.now += offFor();
    gate.write(() => (time.now += 1));
    time.now += 1_000;
    slow();
    assert.equal(offFor(), 1_000);
  });

  it('cooldown options: 0 never turns direct writes off; an infinite forgetMs still starts short; forgetMs is at least the longest cooldown', () => {
    const time = { now: 1_000 };
    const slowOn = (gate: DirectWriteGate): void => void gate.write(() => (time.now += 50));
    const off = new DirectWriteGate({ cooldownMs: 0, turnBudgetMs: Infinity, now: () => time.now });
    slowOn(off);
    slowOn(off);
    assert.equal(off.slowWrites, 2);
    assert.ok(off.open(), 'a cooldown of 0 keeps direct writes on');
    const forever = new DirectWriteGate({ forgetMs: Infinity, turnBudgetMs: Infinity, now: () => time.now });
    slowOn(forever);
    assert.equal(forever.currentCooldownMs, 250, 'the first slow write is no repeat, however long the memory');
    slowOn(forever);
    assert.equal(forever.currentCooldownMs, 1_000);
    // forgetMs 1 s with cooldowns up to 64 s: a slow write right after a 16 s cooldown still escalates.
    const long = new DirectWriteGate({ cooldownMs: 250, maxCooldownMs: 64_000, forgetMs: 1_000, turnBudgetMs: Infinity, now: () => time.now });
    for (const expected of [250, 1_000, 4_000, 16_000, 64_000]) {
      slowOn(long);
      assert.equal(long.currentCooldownMs, expected);
      time.now += expected;
    }
  });

  it('waits for the next turn of the event loop once a turn has spent its synchronous budget, then writes synchronously', async () => {
    const time = { now: 1_000 };
    const fs = new TimedFs(time);
    fs.syncWriteMs = 4;
    const gate = new DirectWriteGate({ slowWriteMs: 20, turnBudgetMs: 10, now: () => time.now });
    const logs = await Promise.all([0, 1, 2, 3, 4].map(() => openFileLog(freshDir(), testConfig(), { fs, directWrites: gate })));
    fs.writevCalls = 0; // count the appends' writes, not the recovery points written at open
    // Five partitions with a round queued in the same turn: 4 ms each, so the budget of 10 ms lets
    // three write synchronously; the other two wait for the next turn (an immediate queued behind
    // this one runs first), and write synchronously there.
    let immediateRan = false;
    const written: Array<[number, boolean]> = [];
    setImmediate(() => (immediateRan = true));
    await Promise.all(logs.map((log, i) => log.append(batch(`p${i}`)).then(() => written.push([i, immediateRan]))));
    assert.equal(fs.writevSyncCalls, 5);
    assert.equal(fs.writevCalls, 0, 'nothing went to the thread pool');
    assert.deepEqual(written, [[0, false], [1, false], [2, false], [3, true], [4, true]]);
    assert.equal(gate.slowWrites, 0, 'no single write was slow');
    for (const [i, log] of logs.entries()) assert.deepEqual(await contents(log), [`0:p${i}-0`]);
    for (const log of logs) await log.close();
  });

  it('a round waiting for the next turn goes to the thread pool if a slow write starts a cooldown meanwhile', async () => {
    const time = { now: 1_000 };
    const fs = new TimedFs(time);
    fs.syncWriteMs = 4;
    const gate = new DirectWriteGate({ slowWriteMs: 20, cooldownMs: 10_000, turnBudgetMs: 10, now: () => time.now });
    const logs = await Promise.all([0, 1, 2, 3, 4].map(() => openFileLog(freshDir(), testConfig(), { fs, directWrites: gate })));
    fs.writevCalls = 0; // count the appends' writes, not the recovery points written at open
    // Three partitions spend the turn's budget; the fourth and fifth wait for the next turn. There
    // the fourth's write is slow and turns direct writes off: the fifth goes to the thread pool.
    const appends = logs.map((log, i) => log.append(batch(`p${i}`)));
    await Promise.all(appends.slice(0, 3));
    assert.equal(fs.writevSyncCalls, 3);
    fs.syncWriteMs = 30;
    await Promise.all(appends);
    assert.equal(gate.slowWrites, 1);
    assert.equal(fs.writevSyncCalls, 4, 'the fourth wrote synchronously');
    assert.equal(fs.writevCalls, 1, 'the fifth went to the thread pool');
    for (const [i, log] of logs.entries()) assert.deepEqual(await contents(log), [`0:p${i}-0`]);
    for (const log of logs) await log.close();
  });

  it('rounds waiting for the budget resume right after it resets, ahead of callbacks queued before them', async () => {
    const time = { now: 1_000 };
    const gate = new DirectWriteGate({ turnBudgetMs: 10, now: () => time.now });
    gate.write(() => (time.now += 12)); // spends the turn's budget and queues its reset
    const order: string[] = [];
    // A callback queued before the rounds wait (in the broker: the next socket read, say).
    const newcomer = new Promise<void>((resolve) => setImmediate(resolve)).then(() => order.push('newcomer'));
    const waits = [1, 2].map((i) => gate.nextTurn().then(() => order.push(`round ${i}`)));
    await Promise.all([newcomer, ...waits]);
    assert.deepEqual(order, ['round 1', 'round 2', 'newcomer']);
    assert.ok(gate.open(), 'the budget is fresh');
  });

  it('refuses a turn budget of 0 (a round would wait for budget forever)', () => {
    assert.throws(() => new DirectWriteGate({ turnBudgetMs: 0 }), RangeError);
  });

  it('one appender whose appends chain in microtasks lets the event loop turn once per turn budget', async () => {
    const time = { now: 1_000 };
    const fs = new TimedFs(time);
    fs.syncWriteMs = 4;
    const gate = new DirectWriteGate({ slowWriteMs: 20, turnBudgetMs: 10, now: () => time.now });
    const log = await openFileLog(freshDir(), testConfig(), { fs, directWrites: gate });
    fs.writevCalls = 0; // count the appends' writes, not the recovery point written at open
    // Counts turns of the event loop: an immediate queued from an immediate runs in the next turn.
    let turns = 0;
    let ticking = true;
    const tick = (): void => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const turnOfEachAppend: number[] = [];
    for (let i = 0; i < 9; i++) {
      await log.append(batch(`a${i}`));
      turnOfEachAppend.push(turns);
    }
    ticking = false;
    // 4 ms a write and 10 ms a turn: three writes, then the next turn.
    assert.deepEqual(turnOfEachAppend, [0, 0, 0, 1, 1, 1, 2, 2, 2]);
    assert.equal(fs.writevSyncCalls, 9);
    assert.equal(fs.writevCalls, 0, 'nothing went to the thread pool');
    await log.close();
  });

  it('fails a synchronous write like an asynchronous one: the append rejects and the log stays readable', async () => {
    const fs = new FaultyFileSystem();
    const log = await openFileLog(freshDir(), testConfig(), { fs, directWrites: new DirectWriteGate() });
    await log.append(batch('kept'));
    fs.shortNextWrite(10);
    await rejectsWith(log.append(batch('torn')), 'storage_error');
    assert.equal(fs.writevSyncCalls, 2);
    await log.append(batch('after'));
    assert.deepEqual(await contents(log), ['0:kept-0', '1:after-0']);
    await log.close();
  });
});

describe('FileLog reads with file slices (ReadOptions.fileSlicesMin)', () => {
  /** Counts closes per fd, to see when a slice's segment file is let go. */
  class ClosesFs extends FaultyFileSystem {
    readonly closed: number[] = [];
    override async close(fd: number): Promise<void> {
      this.closed.push(fd);
      return super.close(fd);
    }
  }

  const sliceMin = 64 * 1024;
  /** Batches alternating small (~2 KiB) and large (~100 KiB), over several 512 KiB segments. */
  async function mixedLog(fs: LogFileSystem) {
    const log = await openFileLog(freshDir(), testConfig({ segmentBytes: 512 * 1024, indexIntervalBytes: 4096, maxBatchBytes: 2 ** 20 }), { fs });
    for (let i = 0; i < 30; i++) {
      const count = i % 3 === 0 ? 100 : 2;
      await log.append(encodeNeutralBatch(Array.from({ length: count }, () => ({ key: null, value: randomBytes(500).toString('hex') })), { timestamp: 1 }));
    }
    assert.ok(log.stats().segmentCount >= 3, 'the batches span several segments');
    return log;
  }

  const fileBytes = (slice: { fd: number; position: number; length: number }): Buffer => {
    const out = Buffer.alloc(slice.length);
    assert.equal(readSync(slice.fd, out, 0, slice.length, slice.position), slice.length);
    return out;
  };

  it('returns the batches a plain read does; large ones not read as file slices of exactly their bytes', async () => {
    const log = await mixedLog(new FaultyFileSystem());
    const next = log.stats().nextOffset;
    let slices = 0;
    // Twice over: the first pass starts each read with the usual window, the second with a small one.
    for (let pass = 0; pass < 2; pass++) {
      for (const [from, maxBytes, maxOffset] of [[0, 8 * 2 ** 20, undefined], [0, 150_000, undefined], [50, 8 * 2 ** 20, 300], [101, 1, undefined], [next - 1, 8 * 2 ** 20, undefined]] as const) {
        const options = { maxBytes, ...(maxOffset !== undefined ? { maxOffset } : {}) };
        const plain = await log.read(from, options);
        const lease = new BufferLease();
        const sliced = await log.read(from, { ...options, lease, fileSlicesMin: sliceMin });
        assert.deepEqual(sliced.map((b) => b.baseOffset), plain.map((b) => b.baseOffset), `the same batches from ${from}`);
        for (let i = 0; i < plain.length; i++) {
          const want = plain[i]!;
          const got = sliced[i]!;
          if (got.file !== undefined) {
            slices++;
            assert.ok(want.payload.length >= sliceMin, 'only large payloads are sliced');
            assert.equal(got.file.length, want.payload.length);
            assert.deepEqual(fileBytes(got.file), want.payload);
            assert.deepEqual(got.payload, want.payload.subarray(0, fileSliceHeadBytes), 'payload holds the head');
            assert.deepEqual((await log.wholePayload(got, lease)).payload, want.payload, 'wholePayload reads it back');
          } else {
            assert.deepEqual(got.payload, want.payload);
            assert.equal(await log.wholePayload(got), got, 'an unsliced batch is already whole');
          }
          assert.equal(got.recordCount, want.recordCount);
          assert.equal(got.format, want.format);
        }
        lease.release();
      }
    }
    assert.ok(slices >= 10, `large batches came back as slices (${slices})`);
    await log.close();
  });

  it('once large batches are met, reads only the header and head of each', async () => {
    const fs = new FaultyFileSystem();
    const log = await mixedLog(fs);
    await log.read(0, { maxBytes: 8 * 2 ** 20, maxOffset: 100, lease: new BufferLease(), fileSlicesMin: sliceMin });
    fs.readBytes = 0;
    // Offset 0 is a ~100 KiB batch: one small window, not the batch.
    const got = await log.read(0, { maxBytes: 8 * 2 ** 20, maxOffset: 100, lease: new BufferLease(), fileSlicesMin: sliceMin });
    assert.deepEqual(got.map((b) => b.baseOffset), [0]);
    assert.ok(got[0]!.file);
    assert.ok(fs.readBytes <= 8 * 1024, `read ${fs.readBytes} bytes to slice one batch of ${got[0]!.file.length}`);
    await log.close();
  });

  it('reads small batches with one pread, as a plain read does', async () => {
    const fs = new FaultyFileSystem();
    const log = await openFileLog(freshDir(), testConfig({ segmentBytes: 8 * 2 ** 20, indexIntervalBytes: 4096, maxBatchBytes: 2 ** 20 }), { fs });
    for (let i = 0; i < 200; i++) await log.append(encodeNeutralBatch(Array.from({ length: 2 }, () => ({ key: null, value: 'v'.repeat(500) })), { timestamp: 1 }));
    const calls = async (options: ReadOptions): Promise<number> => {
      fs.readCalls = 0;
      for (let from = 0; from < 400; from += 40) await log.read(from, { ...options, maxOffset: from + 40 });
      return fs.readCalls;
    };
    const plain = await calls({ maxBytes: 8 * 2 ** 20 });
    const sliced = { maxBytes: 8 * 2 ** 20, lease: new BufferLease(), fileSlicesMin: sliceMin };
    assert.equal(await calls(sliced), plain);
    // Once a large batch is met the next read starts small; reads that meet none, and stop on
    // maxBytes or maxOffset, bring the usual window back.
    await log.append(encodeNeutralBatch(Array.from({ length: 100 }, () => ({ key: null, value: randomBytes(500).toString('hex') })), { timestamp: 1 }));
    await log.read(400, sliced);
    assert.equal(await calls(sliced), plain + 1, 'one small window, then the usual one again');
    assert.equal(await calls(sliced), plain);
    await log.read(400, sliced);
    // Stopped by maxBytes inside its first (small) window, having met no large batch...
    await log.read(0, { ...sliced, maxBytes: 2000 });
    // ...so this one, ~8 KB of small batches, takes one usual window, not two small ones.
    fs.readCalls = 0;
    await log.read(40, { ...sliced, maxBytes: 8000 });
    assert.equal(fs.readCalls, 1, 'a read stopped by maxBytes resets the window too');
    await log.close();
  });

  it('ends a read at a batch its window cuts short when the byte budget cannot take it', async () => {
    // Batches of ~0.9 MiB read with a budget of 1 MiB (librdkafka's default fetch): the window
    // holds the wanted batch and the head of the next, which the budget cannot take. One pread.
    const fs = new FaultyFileSystem();
    const log = await openFileLog(freshDir(), testConfig({ segmentBytes: 64 * 2 ** 20, indexIntervalBytes: 4096, maxBatchBytes: 2 ** 21 }), { fs });
    const value = 'v'.repeat(1000);
    for (let i = 0; i < 6; i++) await log.append(encodeNeutralBatch(Array.from({ length: 900 }, () => ({ key: null, value })), { timestamp: 1 }));
    for (const from of [0, 900, 1800, 2700]) {
      fs.readCalls = 0;
      fs.readBytes = 0;
      const got = await log.read(from, { maxBytes: 2 ** 20, lease: new BufferLease() });
      assert.deepEqual(got.map((b) => b.baseOffset), [from]);
      assert.equal(fs.readCalls, 1, `one pread for the read from ${from}`);
      assert.ok(fs.readBytes <= 2 ** 20 + 8192, `read ${fs.readBytes} bytes`);
    }
    // A budget that takes two batches still reads on into the next window for the second.
    fs.readCalls = 0;
    const two = await log.read(0, { maxBytes: 2 * 2 ** 20 });
    assert.deepEqual(two.map((b) => b.baseOffset), [0, 900]);
    await log.close();
  });

  it('keeps a sliced segment open until the lease is released, even once it is deleted', async () => {
    const fs = new ClosesFs();
    const log = await mixedLog(fs);
    const warm = new BufferLease();
    await log.read(0, { maxBytes: 1, lease: warm, fileSlicesMin: sliceMin });
    warm.release();
    const lease = new BufferLease();
    const [first] = await log.read(0, { maxBytes: 1, lease, fileSlicesMin: sliceMin });
    assert.ok(first?.file);
    const fd = first.file.fd;
    const expected = (await log.read(0, { maxBytes: 1 }))[0]!.payload;
    // Retention removes the first segment (and more) under the slice.
    await log.deleteRecordsBefore(log.stats().nextOffset - 1);
    assert.ok(!fs.closed.includes(fd), 'the slice pins its segment file');
    assert.deepEqual(fileBytes(first.file), expected, 'the unlinked file still reads');
    assert.deepEqual((await log.wholePayload(first)).payload, expected);
    lease.release();
    await until(() => fs.closed.includes(fd));
    await log.close();
  });

  it('a read without a lease ignores fileSlicesMin', async () => {
    const log = await mixedLog(new FaultyFileSystem());
    await log.read(0, { maxBytes: 1, lease: new BufferLease(), fileSlicesMin: sliceMin });
    const got = await log.read(0, { maxBytes: 1, fileSlicesMin: sliceMin });
    assert.equal(got[0]!.file, undefined, 'no lease: nothing could keep the file open');
    assert.ok(got[0]!.payload.length >= sliceMin);
    await log.close();
  });
});

describe('FileLog retention and failures', () => {
  /** A filesystem whose unlinks fail until `heal()`: a segment retention drops stays on disk. */
  class StickyUnlinks extends FaultyFileSystem {
    failing = true;
    override async unlink(path: string): Promise<void> {
      if (this.failing) throw fsError('EIO', `injected unlink failure of ${path}`);
      return super.unlink(path);
    }
  }

  it('a segment retention dropped but could not delete stays dropped after a restart (the log start is checkpointed first)', async () => {
    const dir = freshDir();
    const config = testConfig({ segmentBytes: 1024, retentionMs: 10_000 });
    const fs = new StickyUnlinks();
    const log = await openFileLog(dir, config, { fs });
    for (let i = 0; i < 40; i++) await log.append(batch(`b${i}`, 1, i < 20 ? 1_000 : 50_000));
    await assert.rejects(log.applyRetention(20_000));
    const start = log.stats().logStartOffset;
    assert.ok(start > 0, 'retention moved the log start');
    await log.close();
    fs.failing = false;
    await withReopened(dir, config, async (reopened) => {
      assert.equal(reopened.stats().logStartOffset, start, 'records retention removed do not come back');
      await rejectsWith(reopened.read(0, { maxBytes: 100 }), 'offset_out_of_range');
    }, { fs });
  });
});
