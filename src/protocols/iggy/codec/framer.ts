// Incremental framer for Iggy 0.11 binary transports (TCP, and any other byte stream).
//
//   frame := header (256 bytes, size u32 @48 = total frame length) | body (size - 256 bytes)
//
// `push(chunk)` returns the whole frames the chunk completes. A frame that lies inside one chunk is
// handed out as `subarray` views of that chunk (zero copy; a copy with `reusedChunks`); only a
// frame that straddles chunks is copied, into one buffer of exactly its declared size. The 256-byte
// header is gathered first and its declared size checked against `frameBytesMax` before any body
// buffer is allocated. Errors are values: the first bad frame yields `{ ok: false }` (with the
// header when all 256 bytes arrived, so the caller can answer with an Eviction) and the framer
// stops.
//
// Direct reads: a reader that can choose where each socket read lands (Node's `onread` with a
// buffer function) asks `directTarget` for the rest of a frame being assembled and reads into it,
// then reports the bytes with `pushDirect`: the body of a large frame is never copied.
//
// Pooled frames: with `frameLease`, a straddling frame it leases for (the connection does for
// large SendMessages requests, from src/base/buffer-pool.ts) is assembled in a pooled buffer; the
// owner hands it back with `release(frame)` once the request is handled. Other straddling frames
// go into `frameAllocator`'s buffers (fresh ones by default).
//
// Request budget: with `budget` (the broker's request bytes), a straddling frame of 64 KiB or more
// takes its size from the budget once its header is read and gives it back on `release(frame)` (or
// `dispose()`). When the budget cannot take it, the framer keeps the rest of the input and `waiting`
// is true: the owner stops reading and calls `resume()` once the budget's `onGranted` fires.

import { FrameLeases, type FrameLeaseFunction } from '../../../base/frame-leases.js';
import { FrameAdmission, type RequestByteBudget } from '../../../base/request-bytes.js';
import { checkFrameSize, frameBytesMaxDefault, headerBytes } from './header.js';

export interface Frame {
  /** The 256 header bytes (a view). */
  header: Buffer;
  /** The body (a view; empty when size = 256). */
  body: Buffer;
}

export type FramerResult =
  | { ok: true; frame: Frame }
  /** `header`: a copy of the 256 header bytes, for an Eviction reply. */
  | { ok: false; reason: string; header: Buffer };

export interface FramerOptions {
  /** Largest frame accepted, header included. Default 64 MiB (the reference server's default). */
  frameBytesMax?: number;
  /**
   * A lease to assemble a frame of `size` bytes (whose 256-byte `header` is complete) that
   * straddles chunks in, or null for a fresh buffer. The owner hands such a frame back with
   * `release(frame)` once nothing references it.
   */
  frameLease?: FrameLeaseFunction;
  /**
   * Where a straddling frame that is not leased is assembled (default Buffer.allocUnsafe). The
   * SDK passes recycledBuffer (src/base/native.ts): its poll replies are read in place into memory that
   * is reused once collected.
   */
  frameAllocator?: (size: number) => Buffer;
  /**
   * The caller reuses each chunk's memory after `push` returns (a socket reading into one buffer):
   * frames that lie inside a chunk are then copied out instead of handed out as views.
   */
  reusedChunks?: boolean;
  /** Where large straddling frames take their bytes from (module comment). */
  budget?: RequestByteBudget;
  /** Called once a frame that waited for the budget may go on: call `resume()`. */
  onGranted?: () => void;
}

export class IggyFramer {
  /** May be changed between pushes (IggyConnection lowers it until login). */
  frameBytesMax: number;
  /** Gathers a header that straddles chunks. */
  private readonly stash = Buffer.allocUnsafe(headerBytes);
  private stashed = 0;
  /** A frame being assembled across chunks (exactly its declared size). */
  private partial: Buffer | null = null;
  private filled = 0;
  /** Pooled frames, keyed by their header view. */
  private readonly leases: FrameLeases<Buffer>;
  private readonly admission: FrameAdmission<Buffer>;
  /** The header of the frame waiting for the budget (a copy), or null. */
  private waitingHeader: Buffer | null = null;
  private readonly reusedChunks: boolean;
  private failed = false;

  constructor(options: FramerOptions = {}) {
    this.reusedChunks = options.reusedChunks === true;
    this.frameBytesMax = options.frameBytesMax ?? frameBytesMaxDefault;
    if (!(this.frameBytesMax >= headerBytes)) throw new RangeError('frameBytesMax must be at least 256');
    this.leases = new FrameLeases(options.frameLease, options.frameAllocator);
    this.admission = new FrameAdmission(options.budget ?? null);
    this.admission.onGranted = options.onGranted ?? null;
  }

  /** Hands a frame back: its budgeted bytes return, a pooled frame's buffer to the pool. */
  release(frame: Frame): void {
    this.admission.release(frame.header);
    this.leases.release(frame.header);
  }

  /** Drops a frame still being assembled or waiting for the budget (the connection is gone). */
  dispose(): void {
    this.admission.dispose();
    this.leases.dropAssembling();
    this.partial = null;
    this.filled = 0;
    this.waitingHeader = null;
  }

  /** Whether straddling frames take their bytes from the budget (may be changed between pushes). */
  set budgeted(budgeted: boolean) {
    this.admission.enabled = budgeted;
  }

  /** A frame waits for the request budget: read nothing more until `resume()`. */
  get waiting(): boolean {
    return this.admission.waiting;
  }

  /** Goes on once the budget took the waiting frame's bytes: frames of the input kept meanwhile. */
  resume(): FramerResult[] {
    const header = this.waitingHeader;
    if (header === null || this.admission.waiting || this.failed) return [];
    this.waitingHeader = null;
    this.startPartial(header.readUInt32LE(48), header);
    const out: FramerResult[] = [];
    this.completePartial(out);
    return out.concat(this.push(this.admission.takeKept()));
  }

  /** Bytes held for incomplete frames (for backpressure accounting). */
  get bufferedBytes(): number {
    return this.partial !== null ? this.filled : this.stashed;
  }

  /** True after an error: the connection should be answered (or dropped) and closed. */
  get broken(): boolean {
    return this.failed;
  }

  /**
   * Where the socket may read next straight into the frame being assembled: the unfilled rest of
   * it, when that is at least `minBytes`; otherwise null (read into a chunk and push it). Reading
   * exactly the rest keeps the next frame's bytes out of it. Pair with `pushDirect`.
   */
  directTarget(minBytes: number): Buffer | null {
    if (this.partial === null || this.failed || this.partial.length - this.filled < minBytes) return null;
    return this.partial.subarray(this.filled);
  }

  /**
   * Counts `bytes` read into the buffer `target` came from (the last `directTarget`); returns the
   * frame they complete, if any. A target of a frame since dropped (dispose, failure) is ignored.
   */
  pushDirect(target: Buffer, bytes: number): FramerResult[] {
    const partial = this.partial;
    if (partial === null || target.buffer !== partial.buffer || target.byteOffset !== partial.byteOffset + this.filled) return [];
    if (!(bytes >= 0 && bytes <= partial.length - this.filled)) throw new RangeError(`pushDirect: ${bytes} bytes do not fit the frame's ${partial.length - this.filled}`);
    this.filled += bytes;
    const out: FramerResult[] = [];
    this.completePartial(out);
    return out;
  }

  /** Hands out the frame being assembled once its last byte is in. */
  private completePartial(out: FramerResult[]): void {
    if (this.partial === null || this.filled !== this.partial.length) return;
    const bytes = this.partial;
    this.partial = null;
    this.filled = 0;
    const frame = { header: bytes.subarray(0, headerBytes), body: bytes.subarray(headerBytes) };
    this.leases.completed(frame.header);
    this.admission.completed(frame.header);
    out.push({ ok: true, frame });
  }

  push(chunk: Buffer): FramerResult[] {
    if (this.admission.waiting) {
      this.admission.keep(chunk);
      return [];
    }
    const out: FramerResult[] = [];
    let off = 0;
    while (off < chunk.length && !this.failed) {
      if (this.partial !== null) {
        const n = Math.min(this.partial.length - this.filled, chunk.length - off);
        chunk.copy(this.partial, this.filled, off, off + n);
        this.filled += n;
        off += n;
        this.completePartial(out);
        continue;
      }
      if (this.stashed > 0) {
        const n = Math.min(headerBytes - this.stashed, chunk.length - off);
        chunk.copy(this.stash, this.stashed, off, off + n);
        this.stashed += n;
        off += n;
        if (this.stashed < headerBytes) break;
        this.stashed = 0;
        const size = this.stash.readUInt32LE(48);
        const problem = checkFrameSize(size, this.frameBytesMax);
        if (problem !== null) {
          out.push(this.fail(problem, this.stash));
          break;
        }
        if (size === headerBytes) {
          const header = Buffer.from(this.stash);
          out.push({ ok: true, frame: { header, body: header.subarray(headerBytes) } });
          continue;
        }
        if (!this.admission.admit(size)) {
          this.waitFor(this.stash, chunk.subarray(off));
          break;
        }
        this.startPartial(size, this.stash);
        continue;
      }
      const available = chunk.length - off;
      if (available < headerBytes) {
        chunk.copy(this.stash, 0, off);
        this.stashed = available;
        break;
      }
      const size = chunk.readUInt32LE(off + 48);
      const problem = checkFrameSize(size, this.frameBytesMax);
      if (problem !== null) {
        out.push(this.fail(problem, chunk.subarray(off, off + headerBytes)));
        break;
      }
      if (available >= size) {
        const bytes = this.reusedChunks ? Buffer.from(chunk.subarray(off, off + size)) : chunk.subarray(off, off + size);
        out.push({ ok: true, frame: { header: bytes.subarray(0, headerBytes), body: bytes.subarray(headerBytes) } });
        off += size;
        continue;
      }
      if (!this.admission.admit(size)) {
        this.waitFor(chunk.subarray(off, off + headerBytes), chunk.subarray(off + headerBytes));
        break;
      }
      this.partial = this.leases.assemble(size, chunk.subarray(off, off + headerBytes));
      chunk.copy(this.partial, 0, off);
      this.filled = available;
      break;
    }
    return out;
  }

  /** Starts assembling a frame of `size` bytes whose 256 header bytes are `header`. */
  private startPartial(size: number, header: Buffer): void {
    this.partial = this.leases.assemble(size, header);
    header.copy(this.partial, 0, 0, headerBytes);
    this.filled = headerBytes;
  }

  /** The frame whose header is `header` waits for the budget; `rest` (what follows it) is kept. */
  private waitFor(header: Buffer, rest: Buffer): void {
    this.waitingHeader = Buffer.from(header);
    this.admission.keep(rest);
  }

  private fail(reason: string, header: Buffer): FramerResult {
    this.failed = true;
    this.leases.dropAssembling();
    this.admission.dropAssembling();
    this.partial = null;
    this.stashed = 0;
    return { ok: false, reason, header: Buffer.from(header) };
  }
}
