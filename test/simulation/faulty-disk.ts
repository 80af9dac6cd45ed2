// The simulated disk: a FaultyFileSystem that can also fail any operation (open, read, fsync,
// truncate, rename, unlink, readdir...) or crash the process between two of them. The simulation
// arms at most one fault at a time from its PRNG; the fault fires at the n-th file operation (or
// the n-th write) after it is armed, so a seed always hits the same operation.

import { FaultyFileSystem, fsError, totalLength, type OpenMode } from '../../src/log/fs.js';

export type FaultKind =
  /** The n-th write fails with EIO, nothing written. */
  | 'eio-write'
  /** The n-th write stores a prefix, then fails with ENOSPC (a torn write on a full disk). */
  | 'torn-write'
  /** The n-th fsync fails with EIO. */
  | 'eio-fsync'
  /** The n-th file operation of any kind fails with EIO. */
  | 'eio-any'
  /** The n-th file operation of any kind fails with ENOSPC. */
  | 'enospc-any'
  /** The process dies at the n-th file operation: it and every later one fail. */
  | 'crash-op'
  /** The process dies after `bytes` more bytes reach the files (the write crossing it is cut). */
  | 'crash-bytes';

export interface Fault {
  kind: FaultKind;
  /**
   * The directory (a partition's) whose operations count and fail. Partitions open, recover and
   * write their transaction markers concurrently, so counting across all of them would depend on
   * the order real I/O completes in; inside one partition the log runs its file operations in a
   * fixed order, so the n-th of them is the same operation in every run of a seed.
   */
  scope: string;
  /** Operations (or writes) to let through before the fault fires. */
  after: number;
  /** Bytes for a torn write or crash-bytes. */
  bytes: number;
}

type Op = 'open' | 'read' | 'write' | 'fsync' | 'truncate' | 'fstat' | 'readdir' | 'mkdir' | 'unlink' | 'rename' | 'rm' | 'exists';

export class SimDisk extends FaultyFileSystem {
  private armed: Fault | null = null;
  /** Faults that fired, by kind (the simulation's report). */
  readonly fired = new Map<FaultKind, number>();

  /** The path of each open descriptor (to scope faults by directory). */
  private readonly paths = new Map<number, string>();
  /** Bytes still allowed before an armed crash-bytes fault kills the disk, or null. */
  private crashBytesLeft: number | null = null;
  private crashScope = '';

  arm(fault: Fault): void {
    if (fault.kind === 'crash-bytes') {
      this.crashBytesLeft = fault.bytes;
      this.crashScope = fault.scope;
    } else {
      this.armed = { ...fault };
    }
  }

  /** Drops a fault that has not fired. */
  disarm(): void {
    this.armed = null;
    this.crashBytesLeft = null;
  }

  private stillAlive(): void {
    if (this.crashed) throw fsError('EIO', 'simulated crash: the filesystem is gone');
  }

  /** Kills the disk now: every later operation fails (close still releases descriptors). */
  crash(): void {
    this.crashed = true;
  }

  private count(kind: FaultKind): void {
    this.fired.set(kind, (this.fired.get(kind) ?? 0) + 1);
  }

  /** Fires the armed fault if this operation is the one it waits for. */
  private trip(op: Op, path: string | number): void {
    const f = this.armed;
    if (f === null || this.crashed) return;
    if (!(typeof path === 'number' ? this.paths.get(path) ?? '' : path).startsWith(f.scope)) return;
    const writeFault = f.kind === 'eio-write' || f.kind === 'torn-write';
    if (writeFault && op !== 'write') return;
    if (f.kind === 'eio-fsync' && op !== 'fsync') return;
    if (f.after > 0) {
      f.after--;
      return;
    }
    this.armed = null;
    this.count(f.kind);
    switch (f.kind) {
      case 'eio-write':
        this.failNextWrite();
        return;
      case 'torn-write':
        this.shortNextWrite(f.bytes);
        return;
      case 'eio-fsync':
        throw fsError('EIO', 'injected fsync failure');
      case 'eio-any':
        throw fsError('EIO', `injected failure of ${op}`);
      case 'enospc-any':
        throw fsError('ENOSPC', `injected full disk at ${op}`);
      case 'crash-op':
        this.crashed = true;
        throw fsError('EIO', `simulated crash at ${op}`);
      case 'crash-bytes':
        return;
    }
  }

  override async open(path: string, mode: OpenMode): Promise<number> {
    this.trip('open', path);
    const fd = await super.open(path, mode);
    this.paths.set(fd, path);
    return fd;
  }
  override async read(fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
    this.trip('read', fd);
    return super.read(fd, buffer, offset, length, position);
  }
  /** Arms the cut of a write that crosses an armed crash-bytes limit; true when this write dies. */
  private crashesWithin(fd: number, buffers: readonly Buffer[]): boolean {
    if (this.crashBytesLeft === null || this.crashed) return false;
    if (!(this.paths.get(fd) ?? '').startsWith(this.crashScope)) return false;
    const total = totalLength(buffers);
    if (total < this.crashBytesLeft) {
      this.crashBytesLeft -= total;
      return false;
    }
    this.count('crash-bytes');
    this.shortNextWrite(this.crashBytesLeft);
    this.crashBytesLeft = null;
    return true;
  }

  override async writev(fd: number, buffers: readonly Buffer[], position: number): Promise<number> {
    this.trip('write', fd);
    if (!this.crashesWithin(fd, buffers)) return super.writev(fd, buffers, position);
    try {
      return await super.writev(fd, buffers, position);
    } finally {
      this.crashed = true;
    }
  }
  override writevSync(fd: number, buffers: readonly Buffer[], position: number): number {
    this.trip('write', fd);
    if (!this.crashesWithin(fd, buffers)) return super.writevSync(fd, buffers, position);
    try {
      return super.writevSync(fd, buffers, position);
    } finally {
      this.crashed = true;
    }
  }
  // Syncs are checked and counted but reach no disk: the simulation models a process crash, which
  // the page cache survives, so a real fsync would only make the runs slower.
  override async fsync(fd: number): Promise<void> {
    this.trip('fsync', fd);
    this.stillAlive();
  }
  override async fdatasync(fd: number): Promise<void> {
    this.trip('fsync', fd);
    this.stillAlive();
  }
  override async ftruncate(fd: number, length: number): Promise<void> {
    this.trip('truncate', fd);
    return super.ftruncate(fd, length);
  }
  override close(fd: number): Promise<void> {
    this.paths.delete(fd);
    return super.close(fd);
  }
  override async fstat(fd: number): Promise<{ size: number }> {
    this.trip('fstat', fd);
    return super.fstat(fd);
  }
  override async readdir(dir: string): Promise<string[]> {
    this.trip('readdir', dir);
    return super.readdir(dir);
  }
  override async mkdir(dir: string): Promise<void> {
    this.trip('mkdir', dir);
    return super.mkdir(dir);
  }
  override async unlink(path: string): Promise<void> {
    this.trip('unlink', path);
    return super.unlink(path);
  }
  override async rename(from: string, to: string): Promise<void> {
    this.trip('rename', from);
    return super.rename(from, to);
  }
  override async rm(path: string): Promise<void> {
    this.trip('rm', path);
    return super.rm(path);
  }
  override async exists(path: string): Promise<boolean> {
    this.trip('exists', path);
    return super.exists(path);
  }
  override async fsyncDir(dir: string): Promise<void> {
    this.trip('fsync', dir);
    this.stillAlive();
  }
}
