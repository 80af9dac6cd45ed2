// The filesystem seam's write-back hint and preallocation: neither ever rejects, whatever the fd,
// with or without the native addon (an optimisation must not fail an append or a roll).
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FaultyFileSystem, nodeFileSystem } from '../../src/log/fs.js';
import { nativeStatus } from '../../src/base/native.js';

describe('LogFileSystem.startWriteback', () => {
  it('resolves for a written file, a closed fd and a negative fd alike', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quartet-fs-'));
    const fd = openSync(join(dir, 'f'), 'w+');
    writeSync(fd, Buffer.alloc(64 * 1024, 1));
    try {
      await nodeFileSystem.startWriteback(fd, 0, 64 * 1024);
    } finally {
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    }
    await nodeFileSystem.startWriteback(fd, 0, 1);
    await nodeFileSystem.startWriteback(-1, 0, 1);
  });

  it('FaultyFileSystem counts hints and drops them after a simulated crash', async () => {
    const calls: number[] = [];
    const fs = new FaultyFileSystem({ ...nodeFileSystem, startWriteback: async (_fd, position) => void calls.push(position) });
    await fs.startWriteback(3, 10, 1);
    assert.deepEqual(calls, [10]);
    assert.equal(fs.writebackCalls, 1);
    fs.crashed = true;
    await fs.startWriteback(3, 20, 1);
    assert.deepEqual(calls, [10]);
  });
});

describe('LogFileSystem.preallocate', () => {
  const notBuilt = 'the native addon is not built (npm install builds it)';

  it('reserves the blocks of a range without changing the size; an ftruncate to the size gives them back', { skip: nativeStatus.loaded ? false : notBuilt }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quartet-fs-'));
    const path = join(dir, 'f');
    const fd = openSync(path, 'w+');
    try {
      writeSync(fd, Buffer.alloc(100, 1));
      assert.equal(await nodeFileSystem.preallocate(fd, 0, 8 * 2 ** 20), true);
      assert.equal(statSync(path).size, 100, 'the size stays at the data end');
      assert.ok(statSync(path).blocks * 512 >= 8 * 2 ** 20, `allocated ${statSync(path).blocks * 512} bytes`);
      await nodeFileSystem.ftruncate(fd, 100);
      assert.ok(statSync(path).blocks * 512 < 2 ** 20, `still allocated ${statSync(path).blocks * 512} bytes`);
    } finally {
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('resolves false, never rejects, for a closed fd', async () => {
    assert.equal(await nodeFileSystem.preallocate(-1, 0, 4096), false);
  });
});
