// The data-directory lock: one broker (or offline CLI command) per data directory.
//
// Node has no flock, so the lock is a file created with O_EXCL ('wx') holding the owner's PID,
// start time and a random nonce. A lock whose owner is gone is stale and is taken over: that is
// what `kill -9` leaves behind. "Gone" means: the PID does not exist; or it is this very process
// but not through this module (a container restarts the broker as the same PID 1); or, on Linux,
// the PID now belongs to a process that started at another time (PID reuse, read from
// /proc/<pid>/stat). A lock written on another host is never judged stale (shared filesystems).

import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync, linkSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';

export const LOCK_FILE_NAME = 'quartet.lock';
/** An unreadable lock file younger than this may be mid-write by its creator: not stale yet. */
export const LOCK_WRITE_GRACE_MS = 5_000;
/** Take-over attempts when several processes race for a stale lock. */
const LOCK_ATTEMPTS_MAX = 3;
/** A lock file is a few hundred bytes; anything bigger is not ours. */
const LOCK_FILE_BYTES_MAX = 4096;

export interface LockOwner {
  pid: number;
  hostname: string;
  /** ISO time at which the owner took the lock. */
  startedAt: string;
  /** Linux process start time (clock ticks since boot) from /proc/<pid>/stat, when known. */
  procStart: string | null;
  nonce: string;
  /** What holds it: `serve`, `user create`, ... */
  purpose: string;
}

export class DataDirLockedError extends Error {
  readonly code = 'data_dir_locked';
  constructor(
    readonly dataDir: string,
    readonly lockPath: string,
    readonly owner: LockOwner | null,
  ) {
    super(
      owner
        ? `data directory ${dataDir} is locked by process ${owner.pid} on ${owner.hostname} (${owner.purpose}, since ${owner.startedAt}); lock file ${lockPath}. Stop that process first.`
        : `data directory ${dataDir} is locked (lock file ${lockPath} is being written by another process)`,
    );
    this.name = 'DataDirLockedError';
  }
}

export interface DataDirLock {
  readonly dataDir: string;
  readonly path: string;
  readonly owner: LockOwner;
  /** True when a stale lock (dead owner) was taken over. */
  readonly tookOverStale: LockOwner | null;
  /** Removes the lock file if it is still ours. Idempotent. */
  release(): void;
}

/** Lock files held by this process, so that a second acquire in-process is refused, not "stale". */
const heldHere = new Set<string>();

export interface LockOptions {
  purpose?: string;
  /** Whether a PID is running; injectable for tests. */
  isAlive?: (pid: number) => boolean;
}

/** Takes the lock on `dataDir` (created if missing). Throws DataDirLockedError when it is held. */
export function acquireDataDirLock(dataDir: string, options: LockOptions = {}): DataDirLock {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, LOCK_FILE_NAME);
  const isAlive = options.isAlive ?? pidIsAlive;
  const owner: LockOwner = {
    pid: process.pid,
    hostname: hostname(),
    startedAt: new Date().toISOString(),
    procStart: procStartOf(process.pid),
    nonce: randomBytes(12).toString('hex'),
    purpose: options.purpose ?? 'serve',
  };
  let tookOverStale: LockOwner | null = null;
  for (let attempt = 0; attempt < LOCK_ATTEMPTS_MAX; attempt++) {
    if (tryCreate(path, owner)) {
      heldHere.add(path);
      return makeLock(dir, path, owner, tookOverStale);
    }
    const observed = readLockFile(path);
    if (observed === 'missing') continue;
    if (observed === 'unreadable') {
      if (ageMs(path) < LOCK_WRITE_GRACE_MS) throw new DataDirLockedError(dir, path, null);
    } else if (!isStale(observed.owner, path, isAlive)) {
      throw new DataDirLockedError(dir, path, observed.owner);
    }
    if (!removeIfUnchanged(path, observed === 'unreadable' ? null : observed.text)) continue;
    tookOverStale = observed === 'unreadable' ? null : observed.owner;
  }
  const last = readLockFile(path);
  throw new DataDirLockedError(dir, path, typeof last === 'string' ? null : last.owner);
}

function makeLock(dataDir: string, path: string, owner: LockOwner, tookOverStale: LockOwner | null): DataDirLock {
  let released = false;
  return {
    dataDir,
    path,
    owner,
    tookOverStale,
    release() {
      if (released) return;
      released = true;
      heldHere.delete(path);
      const current = readLockFile(path);
      if (typeof current !== 'string' && current.owner.nonce === owner.nonce) unlinkQuietly(path);
    },
  };
}

function tryCreate(path: string, owner: LockOwner): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o644);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    writeSync(fd, JSON.stringify(owner) + '\n');
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return true;
}

type Observed = { owner: LockOwner; text: string } | 'missing' | 'unreadable';

function readLockFile(path: string): Observed {
  let text: string;
  try {
    const bytes = readFileSync(path);
    if (bytes.length > LOCK_FILE_BYTES_MAX) return 'unreadable';
    text = bytes.toString('utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw err;
  }
  const owner = parseOwner(text);
  return owner ? { owner, text } : 'unreadable';
}

function parseOwner(text: string): LockOwner | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  if (!Number.isSafeInteger(v.pid) || (v.pid as number) <= 0 || typeof v.nonce !== 'string') return null;
  return {
    pid: v.pid as number,
    hostname: typeof v.hostname === 'string' ? v.hostname : 'unknown',
    startedAt: typeof v.startedAt === 'string' ? v.startedAt : 'unknown',
    procStart: typeof v.procStart === 'string' ? v.procStart : null,
    nonce: v.nonce,
    purpose: typeof v.purpose === 'string' ? v.purpose : 'unknown',
  };
}

function isStale(owner: LockOwner, path: string, isAlive: (pid: number) => boolean): boolean {
  if (owner.hostname !== hostname()) return false;
  if (owner.pid === process.pid) return !heldHere.has(path);
  if (!isAlive(owner.pid)) return true;
  const procStart = procStartOf(owner.pid);
  return owner.procStart !== null && procStart !== null && procStart !== owner.procStart;
}

/**
 * Removes a stale lock file, making sure it is the one we judged stale: it is renamed aside
 * (atomic; only one racer wins) and compared. If another process had replaced it meanwhile, it is
 * put back. Returns false when the caller should look again.
 */
function removeIfUnchanged(path: string, expectedText: string | null): boolean {
  const aside = `${path}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    renameSync(path, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  const moved = readLockFile(aside);
  const same = expectedText === null ? moved === 'unreadable' : typeof moved !== 'string' && moved.text === expectedText;
  if (!same) {
    try {
      linkSync(aside, path);
    } catch {
      // Someone holds a newer lock already; the next attempt reads it.
    }
  }
  unlinkQuietly(aside);
  return true;
}

function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return Infinity;
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

/** Whether a process with this PID exists (EPERM: it exists but belongs to someone else). */
export function pidIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot); null off Linux. */
function procStartOf(pid: number): string | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) is in parentheses and may hold spaces: split after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19] ?? null;
}
