// Incremental framer for one Felix QUIC stream (docs/protocols/felix-wire-v1.md §2):
//
//   frame := header (12 bytes; length u32 @8) | payload (length bytes)
//
// `push(chunk)` returns the frames the chunk completes. The header is gathered first and checked
// whole (decodeFrameHeader: magic, version, length against `limits`, 64 KiB before the stream
// authenticates) before any payload byte is buffered. A frame inside one chunk is handed out as
// `subarray` views of it (a copy with `reusedChunks`); only a frame that straddles chunks is
// copied, into one buffer of exactly its size, leased from the pool when `frameLease` says so.
// The first bad header yields `{ ok: false }` and the framer stops: the stream is ended (notes §1).
// Flags are not checked here: a frame with unknown flags is still a whole frame, which the broker
// answers with an error and the stream survives (frameShape).

import { FrameLeases, type FrameLeaseFunction } from '../../../base/frame-leases.js';
import { decodeFrameHeader, frameHeaderBytes, preAuthPayloadBytesMax, type FrameHeader, type HeaderLimits } from './frame.js';

export interface Frame {
  header: FrameHeader;
  /** The 12 header bytes (a view). */
  headerBytes: Buffer;
  /** The payload (a view; empty when length is 0). */
  payload: Buffer;
}

export type FramerResult = { ok: true; frame: Frame } | { ok: false; reason: string };

export interface FramerOptions {
  /** Largest payload (default preAuthPayloadBytesMax: raise it once the stream authenticated). */
  payloadBytesMax?: number;
  /** A lease to assemble a straddling frame of `size` bytes in (its header complete), or null. */
  frameLease?: FrameLeaseFunction;
  /** The caller reuses each chunk's memory after `push` returns: frames are copied out. */
  reusedChunks?: boolean;
}

export class FelixFramer {
  /** The payload limit; may be changed between pushes (raised after auth). */
  limits: HeaderLimits;
  private readonly stash = Buffer.allocUnsafe(frameHeaderBytes);
  private stashed = 0;
  /** A frame being assembled across chunks (exactly its size) and its decoded header. */
  private partial: Buffer | null = null;
  private partialHeader: FrameHeader | null = null;
  private filled = 0;
  private readonly leases: FrameLeases<Buffer>;
  private readonly reusedChunks: boolean;
  private failed = false;

  constructor(options: FramerOptions = {}) {
    this.limits = { payloadBytesMax: options.payloadBytesMax ?? preAuthPayloadBytesMax };
    this.leases = new FrameLeases(options.frameLease);
    this.reusedChunks = options.reusedChunks === true;
  }

  /** Hands a frame back: a pooled frame's buffer returns to the pool; any other is ignored. */
  release(frame: Frame): void {
    this.leases.release(frame.headerBytes);
  }

  /** Drops a frame still being assembled (the stream is gone). */
  dispose(): void {
    this.leases.dropAssembling();
    this.partial = null;
    this.partialHeader = null;
    this.filled = 0;
  }

  /** Bytes held for an incomplete frame. */
  get bufferedBytes(): number {
    return this.partial !== null ? this.filled : this.stashed;
  }

  /** True after a bad header: the stream is to be ended. */
  get broken(): boolean {
    return this.failed;
  }

  /** True when no partial frame is held (a FIN here is a clean end of the stream). */
  get atFrameBoundary(): boolean {
    return this.partial === null && this.stashed === 0;
  }

  push(chunk: Buffer): FramerResult[] {
    const out: FramerResult[] = [];
    let off = 0;
    while (off < chunk.length && !this.failed) {
      if (this.partial !== null) {
        const n = Math.min(this.partial.length - this.filled, chunk.length - off);
        chunk.copy(this.partial, this.filled, off, off + n);
        this.filled += n;
        off += n;
        if (this.filled === this.partial.length) out.push({ ok: true, frame: this.completePartial() });
        continue;
      }
      if (this.stashed > 0 || chunk.length - off < frameHeaderBytes) {
        const n = Math.min(frameHeaderBytes - this.stashed, chunk.length - off);
        chunk.copy(this.stash, this.stashed, off, off + n);
        this.stashed += n;
        off += n;
        if (this.stashed < frameHeaderBytes) break;
        this.stashed = 0;
        const h = decodeFrameHeader(this.stash, 0, this.limits);
        if (!h.ok) {
          out.push(this.fail(h.reason));
          break;
        }
        this.startPartial(h.value, this.stash);
        if (this.filled === this.partial!.length) out.push({ ok: true, frame: this.completePartial() });
        continue;
      }
      const h = decodeFrameHeader(chunk, off, this.limits);
      if (!h.ok) {
        out.push(this.fail(h.reason));
        break;
      }
      const size = frameHeaderBytes + h.value.length;
      if (chunk.length - off >= size) {
        const bytes = this.reusedChunks ? Buffer.from(chunk.subarray(off, off + size)) : chunk.subarray(off, off + size);
        out.push({ ok: true, frame: { header: h.value, headerBytes: bytes.subarray(0, frameHeaderBytes), payload: bytes.subarray(frameHeaderBytes) } });
        off += size;
        continue;
      }
      this.startPartial(h.value, chunk.subarray(off, off + frameHeaderBytes));
      off += frameHeaderBytes;
    }
    return out;
  }

  /** Starts assembling a frame whose 12 header bytes are `headerBytes`. */
  private startPartial(header: FrameHeader, headerBytes: Buffer): void {
    const size = frameHeaderBytes + header.length;
    this.partial = this.leases.assemble(size, headerBytes);
    headerBytes.copy(this.partial, 0, 0, frameHeaderBytes);
    this.partialHeader = header;
    this.filled = frameHeaderBytes;
  }

  private completePartial(): Frame {
    const bytes = this.partial!;
    const header = this.partialHeader!;
    this.partial = null;
    this.partialHeader = null;
    this.filled = 0;
    const headerBytes = bytes.subarray(0, frameHeaderBytes);
    this.leases.completed(headerBytes);
    return { header, headerBytes, payload: bytes.subarray(frameHeaderBytes) };
  }

  private fail(reason: string): FramerResult {
    this.failed = true;
    this.dispose();
    this.stashed = 0;
    return { ok: false, reason };
  }
}
