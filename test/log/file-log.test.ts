import assert from 'node:assert/strict';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openFileLog } from '../../src/log/file-log.js';
import { FaultyFileSystem } from '../../src/log/fs.js';
import { decodeNeutralBatch } from '../../src/log/neutral-format.js';
import type { LogConfig, PartitionLog } from '../../src/log/types.js';
import { verifyPartitionDir } from '../../src/log/verify.js';
import { runLogContract } from './contract.js';
import { batch, rejectsWith, tempDir, testConfig } from './helpers.js';

const root = tempDir('quartet-file-log-');
after(() => root.remove());
let counter = 0;
const freshDir = (): string => join(root.path, `p${counter++}`);

runLogContract('FileLog (interval)', async (config, clock) => {
  const dir = freshDir();
  return { log: await openFileLog(dir, config, { clock }), reopen: () => openFileLog(dir, config, { clock }) };
}, { persistent: true });

runLogContract('FileLog (always)', async (config, clock) => {
  const dir = freshDir();
  const always: LogConfig = { ...config, fsyncPolicy: 'always' };
  return { log: await openFileLog(dir, always, { clock }), reopen: () => openFileLog(dir, always, { clock }) };
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
});

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

