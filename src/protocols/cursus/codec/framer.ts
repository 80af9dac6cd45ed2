// Incremental framer for Wire v2 byte streams (docs/protocols/cursus-wire-v2.md §2):
//
//   frame := header (32 bytes; encoded_length u32 @20) | encoded payload (encoded_length bytes)
//
// `push(chunk)` returns the frames the chunk completes. The 32-byte header is gathered first and
// checked whole (decodeFrameHeader: magic, version, kind, flags, lengths against the limits)
// before any payload byte is buffered. A frame inside one chunk is handed out as `subarray` views
// of it (a copy with `reusedChunks`); only a frame that straddles chunks is copied, into one
// buffer of exactly its size, leased from the pool when `frameLease` says so (the owner hands it
// back with `release(frame)`). The first bad header yields `{ ok: false }` and the framer stops:
// the connection is closed without a reply (§2.7). CRC and decompression are `openFrame`'s.
//
// With a `budget` (shared by a listener's connections), a frame that costs `budgetedBytesMin`
// bytes or more takes its cost from the budget when its header is read and gives it back when
// the frame is released (or dropped unfinished). Its cost is its size, plus its decoded_length
// when compressed (the payload is inflated while the request is handled). A frame the budget cannot take is not buffered: its payload
// is skipped as it arrives and the frame is handed out `refused` (empty payload), to be answered
// with an error; the stream stays framed. So peers that declare large frames and send them slowly
// hold at most the budget, however many connections they open.

import { FrameLeases, type FrameLeaseFunction } from '../../../base/frame-leases.js';
import { Compression } from './compression.js';
import { decodeFrameHeader, frameHeaderBytes, type FrameHeader, type HeaderLimits } from './frame.js';

export interface Frame {
  header: FrameHeader;
  /** The 32 header bytes (a view). */
  headerBytes: Buffer;
  /** The encoded payload (a view; empty when encoded_length is 0, or when refused). */
  payload: Buffer;
  /** Set when the budget could not take the frame: its payload was skipped, not buffered. */
  refused?: true;
}

/** Bytes held by the frames being assembled or handled, across the connections sharing it. */
export interface FrameBudget {
  /** Takes `bytes` if they fit; false (taking nothing) if not. */
  take(bytes: number): boolean;
  give(bytes: number): void;
}

/** The bytes a frame holds while it is assembled and handled: its own, and its inflated payload. */
export function frameCost(header: FrameHeader): number {
  return frameHeaderBytes + header.encodedLength + (header.compression !== Compression.none ? header.decodedLength : 0);
}

/** Frames that cost at least this many bytes are budgeted by default. */
export const budgetedFrameBytesMin = 64 * 1024;

export type FramerResult = { ok: true; frame: Frame } | { ok: false; reason: string };

export interface FramerOptions extends HeaderLimits {
  /** A lease to assemble a straddling frame of `size` bytes in (its header complete), or null. */
  frameLease?: FrameLeaseFunction;
  /** The caller reuses each chunk's memory after `push` returns: frames are copied out. */
  reusedChunks?: boolean;
  /** Where frames of `budgetedBytesMin` bytes or more take their size from (module comment). */
  budget?: FrameBudget;
  budgetedBytesMin?: number;
}

export class CursusFramer {
  /** The payload limits; may be changed between pushes (lower until negotiation, say). */
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
  private readonly budget: FrameBudget | null;
  private readonly budgetedBytesMin: number;
  /** Payload bytes of a refused frame still to be skipped. */
  private skipping = 0;

  constructor(options: FramerOptions = {}) {
    this.limits = { encodedBytesMax: options.encodedBytesMax, decodedBytesMax: options.decodedBytesMax };
    this.leases = new FrameLeases(options.frameLease);
    this.reusedChunks = options.reusedChunks === true;
    this.budget = options.budget ?? null;
    this.budgetedBytesMin = options.budgetedBytesMin ?? budgetedFrameBytesMin;
  }

  /** Hands a frame back (once): its bytes return to the budget, a pooled buffer to the pool. */
  release(frame: Frame): void {
    if (frame.refused !== true && this.isBudgeted(frame.header)) this.budget!.give(frameCost(frame.header));
    this.leases.release(frame.headerBytes);
  }

  /** Drops a frame still being assembled (the connection is gone). */
  dispose(): void {
    if (this.partial !== null && this.isBudgeted(this.partialHeader!)) this.budget!.give(frameCost(this.partialHeader!));
    this.skipping = 0;
    this.leases.dropAssembling();
    this.partial = null;
    this.partialHeader = null;
    this.filled = 0;
  }

  /** Bytes held for an incomplete frame. */
  get bufferedBytes(): number {
    return this.partial !== null ? this.filled : this.stashed;
  }

  /** True after a bad header: the connection is to be closed. */
  get broken(): boolean {
    return this.failed;
  }

  push(chunk: Buffer): FramerResult[] {
    const out: FramerResult[] = [];
    let off = 0;
    while (off < chunk.length && !this.failed) {
      if (this.skipping > 0) {
        const n = Math.min(this.skipping, chunk.length - off);
        this.skipping -= n;
        off += n;
        continue;
      }
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
        if (!this.admit(h.value)) {
          out.push(this.refuse(h.value, this.stash));
          continue;
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
      const size = frameHeaderBytes + h.value.encodedLength;
      if (!this.admit(h.value)) {
        out.push(this.refuse(h.value, chunk.subarray(off, off + frameHeaderBytes)));
        off += frameHeaderBytes;
        continue;
      }
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

  private isBudgeted(header: FrameHeader): boolean {
    return this.budget !== null && frameCost(header) >= this.budgetedBytesMin;
  }

  /** Whether a frame may be buffered: small, or its size taken from the budget. */
  private admit(header: FrameHeader): boolean {
    return !this.isBudgeted(header) || this.budget!.take(frameCost(header));
  }

  /** A frame the budget could not take: handed out without payload, which is skipped as it comes. */
  private refuse(header: FrameHeader, headerBytes: Buffer): FramerResult {
    this.skipping = header.encodedLength;
    return { ok: true, frame: { header, headerBytes: Buffer.from(headerBytes), payload: Buffer.alloc(0), refused: true } };
  }

  /** Starts assembling a frame whose 32 header bytes are `headerBytes`. */
  private startPartial(header: FrameHeader, headerBytes: Buffer): void {
    const size = frameHeaderBytes + header.encodedLength;
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
