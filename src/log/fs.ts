// The filesystem seam: everything the log does to disk goes through LogFileSystem, so tests can
// make it fail (failed and short writes, failed fsyncs, a crash at a byte count) without a real
// faulty disk. Callbacks from node:fs inside, promises at the edge: no FileHandle objects on the
// hot path.

import * as fs from 'node:fs';
import { dirname } from 'node:path';
import { preallocate, startWriteback } from '../base/native.js';

export type OpenMode =
  /** Read only. */
  | 'r'
  /** Read and write an existing file. */
  | 'r+'
  /** Create or truncate, read and write. */
  | 'w+';

export interface LogFileSystem {
  open(path: string, mode: OpenMode): Promise<number>;
  /** Writes all of `buffers` at `position`; resolves with the bytes written (all, or it rejects). */
  writev(fd: number, buffers: readonly Buffer[], position: number): Promise<number>;
  /**
   * The same write, done synchronously on the calling thread (see DirectWriteGate); returns the
   * bytes written (all, or it throws).
   */
  writevSync(fd: number, buffers: readonly Buffer[], position: number): number;
  /** Reads up to `length` bytes at `position` into `buffer` at `offset`; resolves with bytes read. */
  read(fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number>;
  fsync(fd: number): Promise<void>;
  fdatasync(fd: number): Promise<void>;
  /**
   * Starts writeback of the dirty pages in [position, position + length) and resolves once the
   * kernel has taken the request, not when the disk has the data (sync_file_range
   * SYNC_FILE_RANGE_WRITE on the thread pool, through the native addon; resolves at once without
   * it). A hint that makes nothing durable: never rejects. Keep `fd` open until it resolves.
   */
  startWriteback(fd: number, position: number, length: number): Promise<void>;
  /**
   * Reserves disk blocks for [position, position + length) of the file without changing its size
   * (fallocate FALLOC_FL_KEEP_SIZE through the native addon). Resolves true once reserved, false
   * when it cannot be (no addon, a filesystem without fallocate, or any error such as ENOSPC):
   * preallocation is an optimisation, never a reason to fail. Keep `fd` open until it resolves.
   */
  preallocate(fd: number, position: number, length: number): Promise<boolean>;
  ftruncate(fd: number, length: number): Promise<void>;
  fstat(fd: number): Promise<{ size: number }>;
  close(fd: number): Promise<void>;
  readdir(dir: string): Promise<string[]>;
  /** mkdir -p. */
  mkdir(dir: string): Promise<void>;
  unlink(path: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  /** rm -r -f. */
  rm(path: string): Promise<void>;
  exists(path: string): Promise<boolean>;
  /** Makes directory entries (creates, renames, unlinks) in `dir` durable. */
  fsyncDir(dir: string): Promise<void>;
}

function settle<T>(resolve: (value: T) => void, reject: (error: Error) => void) {
  return (error: NodeJS.ErrnoException | null, value: T): void => {
    if (error) reject(error);
    else resolve(value);
  };
}

function done(resolve: () => void, reject: (error: Error) => void) {
  return (error: NodeJS.ErrnoException | null): void => {
    if (error) reject(error);
    else resolve();
  };
}

/** Writes the rest of a partially written chunk list (the kernel may stop short, e.g. on a signal). */
function writevAll(fd: number, buffers: readonly Buffer[], position: number, total: number, written: number, callback: (error: Error | null, n: number) => void): void {
  fs.writev(fd, buffers as Buffer[], position, (error, n) => {
    if (error) return callback(error, written);
    written += n;
    if (written >= total || n === 0) {
      if (written < total) return callback(new Error(`writev wrote ${written} of ${total} bytes`), written);
      return callback(null, written);
    }
    writevAll(fd, dropPrefix(buffers, n), position + n, total, written, callback);
  });
}

/** writevAll, synchronously. */
function writevAllSync(fd: number, buffers: readonly Buffer[], position: number): number {
  const total = totalLength(buffers);
  let written = 0;
  let rest = buffers as Buffer[];
  while (written < total) {
    const n = fs.writevSync(fd, rest, position + written);
    if (n === 0) throw new Error(`writev wrote ${written} of ${total} bytes`);
    written += n;
    if (written < total) rest = dropPrefix(buffers, written);
  }
  return written;
}

/** The chunk list without its first `bytes` bytes (views, no copies). */
export function dropPrefix(buffers: readonly Buffer[], bytes: number): Buffer[] {
  const out: Buffer[] = [];
  let skip = bytes;
  for (const b of buffers) {
    if (skip >= b.length) {
      skip -= b.length;
      continue;
    }
    out.push(skip > 0 ? b.subarray(skip) : b);
    skip = 0;
  }
  return out;
}

/** The first `bytes` bytes of a chunk list (views, no copies). */
export function takePrefix(buffers: readonly Buffer[], bytes: number): Buffer[] {
  const out: Buffer[] = [];
  let left = bytes;
  for (const b of buffers) {
    if (left <= 0) break;
    out.push(left >= b.length ? b : b.subarray(0, left));
    left -= b.length;
  }
  return out;
}

export function totalLength(buffers: readonly Buffer[]): number {
  let n = 0;
  for (const b of buffers) n += b.length;
  return n;
}

/**
 * Runs one of the addon's thread-pool file operations: resolves with its errno (0 for success),
 * or null when it could not start (no addon, bad arguments). Never rejects: both are hints.
 */
function nativeFileOp(
  op: (fd: number, position: number, length: number, done: (errno: number) => void) => boolean,
  fd: number,
  position: number,
  length: number,
): Promise<number | null> {
  return new Promise((resolve) => {
    try {
      if (!op(fd, position, length, resolve)) resolve(null);
    } catch {
      resolve(null);
    }
  });
}

export const nodeFileSystem: LogFileSystem = {
  open: (path, mode) => new Promise((resolve, reject) => fs.open(path, mode, 0o644, settle(resolve, reject))),
  writev: (fd, buffers, position) =>
    new Promise((resolve, reject) => writevAll(fd, buffers, position, totalLength(buffers), 0, settle(resolve, reject))),
  writevSync: writevAllSync,
  read: (fd, buffer, offset, length, position) =>
    new Promise((resolve, reject) => fs.read(fd, buffer, offset, length, position, settle(resolve, reject))),
  fsync: (fd) => new Promise((resolve, reject) => fs.fsync(fd, done(resolve, reject))),
  fdatasync: (fd) => new Promise((resolve, reject) => fs.fdatasync(fd, done(resolve, reject))),
  startWriteback: async (fd, position, length) => void (await nativeFileOp(startWriteback, fd, position, length)),
  preallocate: async (fd, position, length) => (await nativeFileOp(preallocate, fd, position, length)) === 0,
  ftruncate: (fd, length) => new Promise((resolve, reject) => fs.ftruncate(fd, length, done(resolve, reject))),
  fstat: (fd) => new Promise((resolve, reject) => fs.fstat(fd, (error, stats) => (error ? reject(error) : resolve({ size: stats.size })))),
  close: (fd) => new Promise((resolve, reject) => fs.close(fd, done(resolve, reject))),
  readdir: (dir) => new Promise((resolve, reject) => fs.readdir(dir, settle(resolve, reject))),
  mkdir: (dir) => new Promise((resolve, reject) => fs.mkdir(dir, { recursive: true }, (error) => (error ? reject(error) : resolve()))),
  unlink: (path) => new Promise((resolve, reject) => fs.unlink(path, done(resolve, reject))),
  rename: (from, to) => new Promise((resolve, reject) => fs.rename(from, to, done(resolve, reject))),
  rm: (path) => new Promise((resolve, reject) => fs.rm(path, { recursive: true, force: true }, done(resolve, reject))),
  exists: (path) => new Promise((resolve) => fs.access(path, (error) => resolve(!error))),
  fsyncDir: (dir) =>
    new Promise((resolve, reject) =>
      fs.open(dir, 'r', (error, fd) => {
        if (error) return reject(error);
        fs.fsync(fd, (syncError) => fs.close(fd, () => (syncError ? reject(syncError) : resolve())));
      }),
    ),
};

/** An errno-style error for injected faults. */
export function fsError(code: string, message = code): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`${code}: ${message}`);
  error.code = code;
  return error;
}

/**
 * Wraps a LogFileSystem and injects faults on demand. Each `failNext*`/`shortNextWrite` arms one
 * fault for the next matching call. `crashAfterBytes(n)` lets n more bytes reach the files
 * (cutting the write that crosses the limit) and then fails every later call, like a process
 * that died mid-write: reopen the directory with a healthy filesystem to check recovery.
 */
export class FaultyFileSystem implements LogFileSystem {
  private writeFault: Error | null = null;
  private shortWriteBytes: number | null = null;
  private fsyncFault: Error | null = null;
  private truncateFault: Error | null = null;
  private bytesUntilCrash: number | null = null;
  crashed = false;
  /** Counters tests use to prove group commit and batching. */
  writevCalls = 0;
  writevSyncCalls = 0;
  fsyncCalls = 0;
  writebackCalls = 0;
  preallocateCalls = 0;
  /** Bytes asked for by reads (the buffer lengths handed to read), and the read calls. */
  readBytes = 0;
  readCalls = 0;

  constructor(private readonly inner: LogFileSystem = nodeFileSystem) {}

  failNextWrite(error: Error = fsError('EIO', 'injected write failure')): void {
    this.writeFault = error;
  }

  /** The next write stores only its first `bytes` bytes, then fails with ENOSPC. */
  shortNextWrite(bytes: number): void {
    this.shortWriteBytes = bytes;
  }

  failNextFsync(error: Error = fsError('EIO', 'injected fsync failure')): void {
    this.fsyncFault = error;
  }

  failNextTruncate(error: Error = fsError('EIO', 'injected truncate failure')): void {
    this.truncateFault = error;
  }

  crashAfterBytes(bytes: number): void {
    this.bytesUntilCrash = bytes;
  }

  private alive(): void {
    if (this.crashed) throw fsError('EIO', 'simulated crash: the filesystem is gone');
  }

  /**
   * Applies the armed write fault to a write of `total` bytes: how many bytes reach the file
   * (`all`, or a prefix followed by `error`), or an error before anything is written.
   */
  private planWrite(total: number): { bytes: number | 'all'; error: Error | null } {
    this.alive();
    if (this.writeFault) {
      const error = this.writeFault;
      this.writeFault = null;
      return { bytes: 0, error };
    }
    if (this.shortWriteBytes !== null) {
      const bytes = Math.min(this.shortWriteBytes, total);
      this.shortWriteBytes = null;
      return { bytes, error: fsError('ENOSPC', `injected short write: ${bytes} of ${total} bytes`) };
    }
    if (this.bytesUntilCrash !== null && total >= this.bytesUntilCrash) {
      const bytes = this.bytesUntilCrash;
      this.bytesUntilCrash = 0;
      this.crashed = true;
      return { bytes, error: fsError('EIO', `simulated crash after ${bytes} of ${total} bytes`) };
    }
    if (this.bytesUntilCrash !== null) this.bytesUntilCrash -= total;
    return { bytes: 'all', error: null };
  }

  async writev(fd: number, buffers: readonly Buffer[], position: number): Promise<number> {
    this.alive();
    this.writevCalls++;
    const { bytes, error } = this.planWrite(totalLength(buffers));
    if (bytes === 'all') return this.inner.writev(fd, buffers, position);
    if (bytes > 0) await this.inner.writev(fd, takePrefix(buffers, bytes), position);
    throw error!;
  }

  writevSync(fd: number, buffers: readonly Buffer[], position: number): number {
    this.alive();
    this.writevSyncCalls++;
    const { bytes, error } = this.planWrite(totalLength(buffers));
    if (bytes === 'all') return this.inner.writevSync(fd, buffers, position);
    if (bytes > 0) this.inner.writevSync(fd, takePrefix(buffers, bytes), position);
    throw error!;
  }

  /** Counts a sync and throws the armed fsync fault, if any (fsync and fdatasync share both). */
  private beginSync(): void {
    this.alive();
    this.fsyncCalls++;
    if (this.fsyncFault) {
      const error = this.fsyncFault;
      this.fsyncFault = null;
      throw error;
    }
  }

  async fsync(fd: number): Promise<void> {
    this.beginSync();
    return this.inner.fsync(fd);
  }

  async fdatasync(fd: number): Promise<void> {
    this.beginSync();
    return this.inner.fdatasync(fd);
  }

  async startWriteback(fd: number, position: number, length: number): Promise<void> {
    if (this.crashed) return;
    this.writebackCalls++;
    return this.inner.startWriteback(fd, position, length);
  }

  async preallocate(fd: number, position: number, length: number): Promise<boolean> {
    if (this.crashed) return false;
    this.preallocateCalls++;
    return this.inner.preallocate(fd, position, length);
  }

  async ftruncate(fd: number, length: number): Promise<void> {
    this.alive();
    if (this.truncateFault) {
      const error = this.truncateFault;
      this.truncateFault = null;
      throw error;
    }
    return this.inner.ftruncate(fd, length);
  }

  async open(path: string, mode: OpenMode): Promise<number> {
    this.alive();
    return this.inner.open(path, mode);
  }
  async read(fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
    this.alive();
    this.readBytes += length;
    this.readCalls++;
    return this.inner.read(fd, buffer, offset, length, position);
  }
  async fstat(fd: number): Promise<{ size: number }> {
    this.alive();
    return this.inner.fstat(fd);
  }
  /** Closing always works, even after a crash: it releases the descriptor in this process. */
  close(fd: number): Promise<void> {
    return this.inner.close(fd);
  }
  async readdir(dir: string): Promise<string[]> {
    this.alive();
    return this.inner.readdir(dir);
  }
  async mkdir(dir: string): Promise<void> {
    this.alive();
    return this.inner.mkdir(dir);
  }
  async unlink(path: string): Promise<void> {
    this.alive();
    return this.inner.unlink(path);
  }
  async rename(from: string, to: string): Promise<void> {
    this.alive();
    return this.inner.rename(from, to);
  }
  async rm(path: string): Promise<void> {
    this.alive();
    return this.inner.rm(path);
  }
  async exists(path: string): Promise<boolean> {
    this.alive();
    return this.inner.exists(path);
  }
  async fsyncDir(dir: string): Promise<void> {
    this.alive();
    return this.inner.fsyncDir(dir);
  }
}

/** Writes `data` to `path` atomically: temp file, fsync, rename, fsync the directory. */
export async function writeFileAtomic(fsys: LogFileSystem, path: string, data: Buffer): Promise<void> {
  const temp = `${path}.tmp`;
  const fd = await fsys.open(temp, 'w+');
  try {
    await fsys.writev(fd, [data], 0);
    await fsys.fsync(fd);
  } finally {
    await fsys.close(fd);
  }
  await fsys.rename(temp, path);
  await fsys.fsyncDir(dirname(path));
}

/** The whole content of a small file (checkpoints), or null if it does not exist. */
export async function readSmallFile(fsys: LogFileSystem, path: string): Promise<Buffer | null> {
  if (!(await fsys.exists(path))) return null;
  const fd = await fsys.open(path, 'r');
  try {
    const { size } = await fsys.fstat(fd);
    const buf = Buffer.allocUnsafe(size);
    const n = await fsys.read(fd, buf, 0, size, 0);
    return buf.subarray(0, n);
  } finally {
    await fsys.close(fd);
  }
}
