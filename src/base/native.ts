// The checksums on Quartet's hot paths (and a few file and socket calls: writeback hints, block
// reservation, sendfile; and recycled buffers for large reply frames), from the native addon
// (native/quartet_native.cc, built by `npm install`) when it loaded, else from @node-rs/crc32 and
// @node-rs/xxhash (and without it, the file and socket calls are skipped and recycled buffers are
// ordinary ones). Both compute the
// same values (test/native/checksums.test.ts checks every length class against the npm
// packages); the addon is faster where it counts:
//
// - crc32c: folding with VPCLMULQDQ where the CPU has it with AVX-512 F/VL/BW (~4.7 µs per 256
//   KiB), else 3-way interleaved SSE4.2 (~9.5 µs), against ~42 µs (log envelopes, Kafka RecordBatch
//   CRCs);
// - xxh3Frames: every Iggy frame checksum of a batch in one call, ~0.03 ms per 1,000 x 1 KB
//   against ~0.8 ms for one call (and one BigInt) per frame.
//
// QUARTET_NATIVE=0 in the environment skips the addon (to compare, or to rule it out).

import { crc32c as nodeRsCrc32c } from '@node-rs/crc32';
import { xxh3 as nodeRsXxh3 } from '@node-rs/xxhash';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';

/** The functions the addon exports (see Init in native/quartet_native.cc). */
interface NativeAddon {
  /** path: 0 portable C, 1 at most SSE4.2, 2 the fastest the CPU has. */
  crc32c(bytes: Uint8Array, initial: number, path: 0 | 1 | 2): number;
  xxh3(bytes: Uint8Array, portable: boolean): bigint;
  xxh3Frames(bytes: Uint8Array, bounds: Uint32Array, count: number, write: boolean, portable: boolean): number;
  startWritebackAsync(fd: number, offset: number, length: number, done: (errno: number) => void): void;
  preallocateAsync(fd: number, offset: number, length: number, done: (errno: number) => void): void;
  socketSenderOpen(fd: number): NativeSocketSender;
  socketSenderSendFile(sender: NativeSocketSender, fileFd: number, position: number, length: number, done: (result: number) => void): void;
  socketSenderWait(sender: NativeSocketSender, done: (status: number) => void): void;
  socketSenderClose(sender: NativeSocketSender): void;
  recycledBuffer(length: number): Buffer;
  recycledBufferStats(): RecycledBufferStats;
  sse42: boolean;
  avx2: boolean;
  vpclmul: boolean;
}

export interface ChecksumImplementation {
  /** CRC32C of `bytes`, continuing from `initial` (0 to start), as @node-rs/crc32 computes it. */
  crc32c(bytes: Uint8Array, initial?: number): number;
  /** XXH3-64 with seed 0. */
  xxh3(bytes: Uint8Array): bigint;
  /**
   * Frame i spans bytes[bounds[i], bounds[i + 1]) and starts with the XXH3-64 (u64 LE) of the
   * rest of the frame. write: stores every frame's hash and returns -1; otherwise returns the
   * index of the first frame whose stored hash is wrong, or -1. Throws RangeError when a bound is
   * outside `bytes` or a frame is shorter than 8 bytes.
   */
  xxh3Frames(bytes: Uint8Array, bounds: Uint32Array, count: number, write: boolean): number;
}

export interface NativeStatus {
  loaded: boolean;
  /** Absolute path of the addon file looked for. */
  path: string;
  /** Why it did not load (missing file, load error, QUARTET_NATIVE=0). */
  reason?: string;
  sse42: boolean;
  avx2: boolean;
  /** CRC32C folds with VPCLMULQDQ (AVX-512). */
  vpclmul: boolean;
}

const addonPath = fileURLToPath(new URL('../../build/Release/quartet_native.node', import.meta.url));

const addonFunctions = [
  'crc32c',
  'xxh3',
  'xxh3Frames',
  'startWritebackAsync',
  'preallocateAsync',
  'socketSenderOpen',
  'socketSenderSendFile',
  'socketSenderWait',
  'socketSenderClose',
  'recycledBuffer',
  'recycledBufferStats',
] as const;

/** The addon's handle on a duplicate of a socket's fd (see SocketSender in the addon). */
declare const nativeSocketSender: unique symbol;
type NativeSocketSender = { readonly [nativeSocketSender]: true };

function loadAddon(): { addon: NativeAddon | null; reason?: string } {
  if (process.env['QUARTET_NATIVE'] === '0') return { addon: null, reason: 'QUARTET_NATIVE=0' };
  if (!existsSync(addonPath)) return { addon: null, reason: 'not built (npm install builds it with node-gyp)' };
  try {
    const addon = createRequire(import.meta.url)(addonPath) as Partial<NativeAddon>;
    const missing: string[] = addonFunctions.filter((name) => typeof addon[name] !== 'function');
    // A build from an older checkout: use none of it rather than half of it. (Before `vpclmul`,
    // crc32c took a boolean where it now takes a path number.)
    if (typeof addon.vpclmul !== 'boolean') missing.push('vpclmul');
    if (missing.length > 0) return { addon: null, reason: `stale build without ${missing.join(', ')} (run npm install)` };
    return { addon: addon as NativeAddon };
  } catch (err) {
    return { addon: null, reason: `load failed: ${(err as Error).message}` };
  }
}

const loaded = loadAddon();
const addon = loaded.addon;

export const nativeStatus: NativeStatus = {
  loaded: addon !== null,
  path: addonPath,
  ...(loaded.reason !== undefined ? { reason: loaded.reason } : {}),
  sse42: addon?.sse42 ?? false,
  avx2: addon?.avx2 ?? false,
  vpclmul: addon?.vpclmul ?? false,
};

function checkFrameBounds(bytes: Uint8Array, bounds: Uint32Array, count: number): void {
  if (count + 1 > bounds.length) throw new RangeError('xxh3Frames: bounds holds fewer than count + 1 entries');
  for (let i = 0; i < count; i++) {
    if (bounds[i]! + 8 > bounds[i + 1]! || bounds[i + 1]! > bytes.length) {
      throw new RangeError('xxh3Frames: a frame is shorter than 8 bytes or outside bytes');
    }
  }
}

/** The @node-rs implementation (what runs when the addon is absent). */
export const fallbackChecksums: ChecksumImplementation = {
  crc32c: (bytes, initial = 0) => nodeRsCrc32c(bytes as Buffer, initial),
  xxh3: (bytes) => nodeRsXxh3.xxh64(bytes as Buffer),
  xxh3Frames(bytes, bounds, count, write) {
    checkFrameBounds(bytes, bounds, count);
    const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < count; i++) {
      const start = bounds[i]!;
      const hash = nodeRsXxh3.xxh64(view.subarray(start + 8, bounds[i + 1]!));
      if (write) view.writeBigUInt64LE(hash, start);
      else if (view.readBigUInt64LE(start) !== hash) return i;
    }
    return -1;
  },
};

/**
 * The addon's implementation. `path` caps the CPU features it uses: 'portable' forces its plain-C
 * paths, 'sse42' keeps CRC32C off the AVX-512 folding (tests cover each).
 */
export function addonChecksums(path: 'best' | 'sse42' | 'portable' = 'best'): ChecksumImplementation | null {
  if (addon === null) return null;
  const a = addon;
  const portable = path === 'portable';
  const crcPath = path === 'portable' ? 0 : path === 'sse42' ? 1 : 2;
  return {
    crc32c: (bytes, initial = 0) => a.crc32c(bytes, initial, crcPath),
    xxh3: (bytes) => a.xxh3(bytes, portable),
    xxh3Frames: (bytes, bounds, count, write) => a.xxh3Frames(bytes, bounds, count, write, portable),
  };
}

const active: ChecksumImplementation = addonChecksums() ?? fallbackChecksums;

export const crc32c: ChecksumImplementation['crc32c'] = active.crc32c;
export const xxh3: ChecksumImplementation['xxh3'] = active.xxh3;
export const xxh3Frames: ChecksumImplementation['xxh3Frames'] = active.xxh3Frames;

/**
 * Starts writeback of a file range's dirty pages on the thread pool, without waiting for the disk
 * (Linux sync_file_range with SYNC_FILE_RANGE_WRITE). `done` gets 0 or an errno; the caller keeps
 * `fd` open until then. Returns false, and never calls `done`, without the addon. Makes nothing
 * durable: the log uses it only to keep the dirty data behind its periodic fsync small.
 */
export function startWriteback(fd: number, offset: number, length: number, done: (errno: number) => void): boolean {
  if (addon === null) return false;
  addon.startWritebackAsync(fd, offset, length, done);
  return true;
}

/**
 * Reserves disk blocks for [offset, offset + length) of a file on the thread pool without changing
 * its size (Linux fallocate with FALLOC_FL_KEEP_SIZE). `done` gets 0 or an errno (EOPNOTSUPP where
 * the filesystem cannot); the caller keeps `fd` open until then. Returns false, and never calls
 * `done`, without the addon.
 */
export function preallocate(fd: number, offset: number, length: number, done: (errno: number) => void): boolean {
  if (addon === null) return false;
  addon.preallocateAsync(fd, offset, length, done);
  return true;
}

/**
 * Writes file ranges to one TCP socket with sendfile(2) (Linux), through a duplicate of the
 * socket's fd: page cache to socket, with no copy through JavaScript buffers. The holder writes
 * nothing else to the socket between `open` and `close` except when it knows Node's own write
 * queue is empty (src/protocols/file-replies.ts arranges that).
 */
export interface SocketSender {
  /**
   * Sends on the thread pool (uncached pages are read from the disk there, not on the event loop);
   * resolves to the bytes sent (fewer than `length` once the socket's buffer is full), or -errno
   * (-ENODATA: the file ended first; -EBADF: closed). One send at a time; keep `fileFd` open until
   * it settles.
   */
  sendFile(fileFd: number, position: number, length: number): Promise<number>;
  /** Calls `done(0)` once the socket is writable again, or `done(negative uv error)`; never after `close`. */
  waitWritable(done: (status: number) => void): void;
  /** Stops a wait and closes the duplicate fd. Idempotent. */
  close(): void;
}

/** Whether `openSocketSender` can work here: the addon, on Linux (sendfile to a socket). */
export const socketSendFileAvailable = addon !== null && process.platform === 'linux';

/** A sender for the socket whose fd is `fd`; null without the addon or off Linux. Throws if dup fails. */
export function openSocketSender(fd: number): SocketSender | null {
  if (addon === null || !socketSendFileAvailable) return null;
  const a = addon;
  const handle = a.socketSenderOpen(fd);
  return {
    sendFile: (fileFd, position, length) =>
      new Promise((resolve) => a.socketSenderSendFile(handle, fileFd, position, length, (result) => resolve(typeof result === 'number' ? result : -(constants.errno.EIO ?? 5)))),
    waitWritable: (done) => a.socketSenderWait(handle, done),
    close: () => a.socketSenderClose(handle),
  };
}

/** The addon's free list of recycled buffer memory (tests, diagnostics). */
export interface RecycledBufferStats {
  /** Buffers made from fresh memory since the process started. */
  fresh: number;
  /** Buffers made from recycled memory since the process started. */
  reused: number;
  /** Blocks waiting on the free list, and their bytes. */
  freeBlocks: number;
  freeBytes: number;
  /** Buffers collected (their memory back to the list, or freed) since the process started. */
  finalized: number;
  /** Blocks freed because the list was full (oldest first) or the block larger than all of it. */
  evicted: number;
}

/** Below this length recycledBuffer is Buffer.allocUnsafe (Node's own pool serves small ones). */
export const recycledBufferBytesMin = 64 * 1024;
/** Above this length too (the addon's limit). */
const recycledBufferBytesMax = 2 ** 31 - 1;
/** Set once the addon could not make one (a build with the V8 sandbox allows no external buffers). */
let recycledBuffersFailed = false;

/**
 * A Buffer of `length` bytes (contents undefined, as with Buffer.allocUnsafe) for a large frame read
 * from a socket. With the addon, its memory goes back to a small process-wide free list once V8 has
 * collected the Buffer and every view of it, and a later recycledBuffer reuses it: malloc may hand
 * such blocks back to the kernel, and each new one is then faulted in and zeroed page by page on
 * first touch (up to ~0.2 ms per 1 MB). Without the addon, or if it cannot make one,
 * Buffer.allocUnsafe. Such a Buffer's ArrayBuffer cannot be moved to a worker: listed in
 * postMessage's transfer list, it is copied instead (Node 20), and the sender keeps it.
 */
export function recycledBuffer(length: number): Buffer {
  if (addon === null || recycledBuffersFailed || !Number.isInteger(length) || length < recycledBufferBytesMin || length > recycledBufferBytesMax) {
    return Buffer.allocUnsafe(length);
  }
  try {
    return addon.recycledBuffer(length);
  } catch {
    recycledBuffersFailed = true;
    return Buffer.allocUnsafe(length);
  }
}

/** The free list's counters; null without the addon. */
export function recycledBufferStats(): RecycledBufferStats | null {
  return addon?.recycledBufferStats() ?? null;
}
