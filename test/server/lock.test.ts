import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { acquireDataDirLock, DataDirLockedError, LOCK_FILE_NAME, pidIsAlive } from '../../src/server/lock.js';

const root = mkdtempSync(join(tmpdir(), 'quartet-lock-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshDir = (): string => join(root, `d${n++}`);

function writeLock(dir: string, owner: Record<string, unknown>): void {
  writeFileSync(join(dir, LOCK_FILE_NAME), JSON.stringify({ hostname: hostname(), startedAt: '2024-01-01T00:00:00.000Z', nonce: 'n0', purpose: 'serve', ...owner }));
}

/** A child process that lives until killed. */
function sleeper(): ChildProcess {
  return spawn(process.execPath, ['-e', 'setInterval(() => {}, 60_000)'], { stdio: 'ignore' });
}

/** The PID of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  assert.ok(child.pid && !pidIsAlive(child.pid));
  return child.pid;
}

test('acquire creates the directory and the lock file; release removes it', () => {
  const dir = freshDir();
  const lock = acquireDataDirLock(dir, { purpose: 'test' });
  const content = JSON.parse(readFileSync(join(dir, LOCK_FILE_NAME), 'utf8')) as Record<string, unknown>;
  assert.equal(content.pid, process.pid);
  assert.equal(content.purpose, 'test');
  assert.equal(lock.tookOverStale, null);
  lock.release();
  assert.equal(existsSync(join(dir, LOCK_FILE_NAME)), false);
  lock.release(); // idempotent
  acquireDataDirLock(dir).release();
});

test('a second acquire in the same process is refused', () => {
  const dir = freshDir();
  const lock = acquireDataDirLock(dir);
  assert.throws(() => acquireDataDirLock(dir), DataDirLockedError);
  lock.release();
});

test('a lock held by a live process is refused with the directory, PID and lock file in the message', async () => {
  const dir = freshDir();
  const child = sleeper();
  try {
    await new Promise((resolve) => child.once('spawn', resolve));
    acquireDataDirLock(dir).release();
    writeLock(dir, { pid: child.pid });
    assert.throws(
      () => acquireDataDirLock(dir),
      (err: unknown) => {
        assert.ok(err instanceof DataDirLockedError);
        assert.match(err.message, new RegExp(`data directory ${dir} is locked by process ${child.pid}`));
        assert.ok(err.message.includes(join(dir, LOCK_FILE_NAME)));
        return true;
      },
    );
  } finally {
    child.kill('SIGKILL');
  }
});

test('a lock whose process is dead (kill -9) is stale and taken over', async () => {
  const dir = freshDir();
  const child = sleeper();
  await new Promise((resolve) => child.once('spawn', resolve));
  acquireDataDirLock(dir).release();
  writeLock(dir, { pid: child.pid });
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  const lock = acquireDataDirLock(dir);
  assert.equal(lock.tookOverStale?.pid, child.pid);
  assert.equal((JSON.parse(readFileSync(lock.path, 'utf8')) as { pid: number }).pid, process.pid);
  assert.deepEqual(readdirSync(dir), [LOCK_FILE_NAME], 'no aside files left behind');
  lock.release();
});

test('a lock left by an earlier process with our own PID (container restart) is stale', () => {
  const dir = freshDir();
  acquireDataDirLock(dir).release();
  writeLock(dir, { pid: process.pid });
  const lock = acquireDataDirLock(dir);
  assert.equal(lock.tookOverStale?.pid, process.pid);
  lock.release();
});

test('a reused PID (same PID, other start time) is stale', async () => {
  const dir = freshDir();
  const child = sleeper();
  try {
    await new Promise((resolve) => child.once('spawn', resolve));
    acquireDataDirLock(dir).release();
    writeLock(dir, { pid: child.pid, procStart: '1' });
    const lock = acquireDataDirLock(dir);
    assert.equal(lock.tookOverStale?.pid, child.pid);
    lock.release();
  } finally {
    child.kill('SIGKILL');
  }
});

test('a lock from another host is never judged stale', async () => {
  const dir = freshDir();
  acquireDataDirLock(dir).release();
  writeLock(dir, { pid: await deadPid(), hostname: 'elsewhere.invalid' });
  assert.throws(() => acquireDataDirLock(dir), /locked by process \d+ on elsewhere\.invalid/);
});

test('an unreadable lock file: refused while fresh, taken over once old', () => {
  const dir = freshDir();
  acquireDataDirLock(dir).release();
  writeFileSync(join(dir, LOCK_FILE_NAME), '{"pid": 12');
  assert.throws(() => acquireDataDirLock(dir), /being written by another process/);
  const old = new Date(Date.now() - 60_000); // past the grace period
  utimesSync(join(dir, LOCK_FILE_NAME), old, old);
  const lock = acquireDataDirLock(dir);
  assert.equal(lock.tookOverStale, null);
  lock.release();
});

test('release leaves a lock that is no longer ours alone', () => {
  const dir = freshDir();
  const lock = acquireDataDirLock(dir);
  writeLock(dir, { pid: 1, nonce: 'someone-else' });
  lock.release();
  assert.equal(existsSync(join(dir, LOCK_FILE_NAME)), true);
});
