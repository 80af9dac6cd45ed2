// The filesystem seam's write-back hint: it never rejects, whatever the fd, with or without the
// native addon (a hint must not fail an append).
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FaultyFileSystem, nodeFileSystem } from '../../src/log/fs.js';

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
