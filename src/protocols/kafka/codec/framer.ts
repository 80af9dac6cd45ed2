// Incremental splitter for Kafka's size-delimited frames:
//
//   RequestOrResponse => Size (INT32, big-endian, bytes that follow) Message
//
// `push(chunk)` returns the whole frames completed by the chunk. A frame that lies inside one chunk
// is returned as a `subarray` view of that chunk (no copy; a copy with `reusedChunks`); only a
// frame that straddles chunks is assembled into one buffer, allocated once at its declared size.
// The declared size is checked against `frameBytesMax` (and for being negative) BEFORE anything is
// allocated; a bad size returns an error value and the framer stays failed: the connection must be
// closed, as a Kafka broker does (it cannot resynchronise a byte stream).
//
// Pooled frames: with `frameLease`, a straddling frame for which it returns a lease (the connection
// leases for large Produce requests, from src/base/buffer-pool.ts) is assembled in the lease's buffer
// instead of a fresh allocation; the owner hands the frame back with `release(frame)` once nothing
// references it (the request is handled and its appends have settled). Not releasing is safe: the
// buffer is left to GC.
//
// Request budget: with `budget` (the broker's request bytes), a straddling frame of 64 KiB or more
// takes its size from the budget when its size is read and gives it back on `release(frame)` (or
// `dispose()`). When the budget cannot take it, the framer keeps the rest of the input and `waiting`
// is true: the owner stops reading and calls `resume()` once the budget's `onGranted` fires.
//
// No I/O here: the server adapter feeds socket data in and writes nothing back.

import { FrameLeases, type FrameLeaseFunction } from '../../../base/frame-leases.js';
import { FrameAdmission, type RequestByteBudget } from '../../../base/request-bytes.js';

export interface FramerOptions {
  /** Largest accepted frame body (bytes after the 4-byte size). Kafka's socket.request.max.bytes. */
  frameBytesMax: number;
  /**
   * A lease to assemble a frame of `size` bytes that straddles chunks in, or null for a fresh
   * buffer; `head` holds the first bytes of its body that have arrived (possibly none).
   */
  frameLease?: FrameLeaseFunction;
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

export type FramerResult =
  | { ok: true; frames: Buffer[] }
  | { ok: false; reason: string; frames: Buffer[] };

const emptyFrames: Buffer[] = [];

export class Framer {
  /** May be changed between pushes (KafkaConnection lowers it until SASL authentication). */
  frameBytesMax: number;
  /** Partial size prefix carried between chunks (0..3 bytes). */
  private readonly sizeBytes = Buffer.alloc(4);
  private sizeHave = 0;
  /** The frame being assembled across chunks, or null. */
  private partial: Buffer | null = null;
  private partialHave = 0;
  private readonly leases: FrameLeases<Buffer>;
  private readonly admission: FrameAdmission<Buffer>;
  /** The size of the frame waiting for the budget (its size prefix already read). */
  private waitingSize = 0;
  private readonly reusedChunks: boolean;
  private failed: string | null = null;

  constructor(options: FramerOptions) {
    if (!(options.frameBytesMax > 0)) throw new Error('frameBytesMax must be positive');
    this.frameBytesMax = options.frameBytesMax;
    this.leases = new FrameLeases(options.frameLease);
    this.admission = new FrameAdmission(options.budget ?? null);
    this.admission.onGranted = options.onGranted ?? null;
    this.reusedChunks = options.reusedChunks === true;
  }

  /** Hands a frame back: its budgeted bytes return, a pooled frame's buffer to the pool. */
  release(frame: Buffer): void {
    this.admission.release(frame);
    this.leases.release(frame);
  }

  /** Drops a frame still being assembled or waiting for the budget (the connection is gone). */
  dispose(): void {
    this.admission.dispose();
    this.leases.dropAssembling();
    this.partial = null;
    this.partialHave = 0;
    this.waitingSize = 0;
  }

  /** Bytes buffered towards the next frame (size prefix plus partial body). */
  get bufferedBytes(): number {
    return this.sizeHave + this.partialHave;
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
  resume(): FramerResult {
    if (this.waitingSize === 0 || this.admission.waiting) return { ok: true, frames: emptyFrames };
    const kept = this.admission.takeKept();
    this.partial = this.leases.assemble(this.waitingSize, kept);
    this.partialHave = 0;
    this.waitingSize = 0;
    return this.push(kept);
  }

  push(chunk: Buffer): FramerResult {
    if (this.failed !== null) return { ok: false, reason: this.failed, frames: emptyFrames };
    if (this.admission.waiting) {
      this.admission.keep(chunk);
      return { ok: true, frames: emptyFrames };
    }
    let frames: Buffer[] = emptyFrames;
    let off = 0;
    const len = chunk.length;

    while (off < len) {
      // 1. Finish a frame that straddles chunks.
      if (this.partial !== null) {
        const want = this.partial.length - this.partialHave;
        const take = Math.min(want, len - off);
        chunk.copy(this.partial, this.partialHave, off, off + take);
        this.partialHave += take;
        off += take;
        if (this.partialHave === this.partial.length) {
          if (frames === emptyFrames) frames = [];
          frames.push(this.partial);
          this.leases.completed(this.partial);
          this.admission.completed(this.partial);
          this.partial = null;
          this.partialHave = 0;
        }
        continue;
      }

      // 2. Read the size prefix (possibly split across chunks).
      let size: number;
      if (this.sizeHave === 0 && len - off >= 4) {
        size = chunk.readInt32BE(off);
        off += 4;
      } else {
        const take = Math.min(4 - this.sizeHave, len - off);
        chunk.copy(this.sizeBytes, this.sizeHave, off, off + take);
        this.sizeHave += take;
        off += take;
        if (this.sizeHave < 4) break;
        size = this.sizeBytes.readInt32BE(0);
        this.sizeHave = 0;
      }

      // 3. Check the declared size before allocating anything.
      if (size < 0 || size > this.frameBytesMax) {
        this.failed =
          size < 0 ? `negative frame size ${size}` : `frame size ${size} exceeds the limit of ${this.frameBytesMax} bytes`;
        return { ok: false, reason: this.failed, frames };
      }

      // 4. Zero-copy fast path: the whole body is in this chunk (copied if the chunk is reused).
      if (len - off >= size) {
        if (frames === emptyFrames) frames = [];
        const body = chunk.subarray(off, off + size);
        frames.push(this.reusedChunks ? Buffer.from(body) : body);
        off += size;
        continue;
      }

      // 5. Slow path: start assembling across chunks, once the budget has its bytes.
      if (!this.admission.admit(size)) {
        this.waitingSize = size;
        this.admission.keep(chunk.subarray(off));
        break;
      }
      this.partial = this.leases.assemble(size, chunk.subarray(off));
      this.partialHave = 0;
    }
    return { ok: true, frames };
  }
}
