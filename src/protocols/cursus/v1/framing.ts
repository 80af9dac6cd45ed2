// Cursus v1 framing (docs/protocols/cursus-v1.md; real Cursus: util/buffer.go, readMessage in
// pkg/server/main.go):
//
//   frame := body_length u32 BE (excludes itself) | body (body_length bytes)
//
// The same in both directions. A zero-length frame is legal: from the broker it is the STREAM
// keepalive; from a client it is an empty body (answered `decode_failed`). A declared length over
// the limit (16 MiB, util.MaxMessageSize) closes the connection without a reply, as v1 does; it
// is checked from the 4 length bytes, before any body byte is buffered.
//
// V1Framer.push(chunk) returns the bodies the chunk completes: views of the chunk when a frame
// lies inside it, one copy of exactly the body's size when a frame straddles chunks.

/** Largest body a v1 frame may declare (real Cursus util.MaxMessageSize: 16 MiB). */
export const v1FrameBytesMax = 16 * 1024 * 1024;

export const v1LengthBytes = 4;

export type V1FramerResult = { ok: true; body: Buffer } | { ok: false; reason: string };

export interface V1FramerOptions {
  /** Largest body accepted (default v1FrameBytesMax). */
  frameBytesMax?: number;
  /** The caller reuses each chunk's memory after `push` returns: bodies are copied out. */
  reusedChunks?: boolean;
}

export class V1Framer {
  /** Largest body accepted; a connection may raise it (after authentication) between pushes. */
  frameBytesMax: number;
  private readonly reusedChunks: boolean;
  private readonly lengthBytes = Buffer.alloc(v1LengthBytes);
  private lengthFilled = 0;
  /** A body being assembled across chunks (exactly its size). */
  private partial: Buffer | null = null;
  private filled = 0;
  private failed = false;

  constructor(options: V1FramerOptions = {}) {
    this.frameBytesMax = options.frameBytesMax ?? v1FrameBytesMax;
    this.reusedChunks = options.reusedChunks === true;
  }

  /** True after an oversized length: the connection is to be closed. */
  get broken(): boolean {
    return this.failed;
  }

  /** Bytes held for an incomplete frame. */
  get bufferedBytes(): number {
    return this.partial !== null ? v1LengthBytes + this.filled : this.lengthFilled;
  }

  push(chunk: Buffer): V1FramerResult[] {
    const out: V1FramerResult[] = [];
    let off = 0;
    while (off < chunk.length && !this.failed) {
      if (this.partial !== null) {
        const n = Math.min(this.partial.length - this.filled, chunk.length - off);
        chunk.copy(this.partial, this.filled, off, off + n);
        this.filled += n;
        off += n;
        if (this.filled === this.partial.length) out.push({ ok: true, body: this.takePartial() });
        continue;
      }
      let length: number;
      if (this.lengthFilled > 0 || chunk.length - off < v1LengthBytes) {
        const n = Math.min(v1LengthBytes - this.lengthFilled, chunk.length - off);
        chunk.copy(this.lengthBytes, this.lengthFilled, off, off + n);
        this.lengthFilled += n;
        off += n;
        if (this.lengthFilled < v1LengthBytes) break;
        this.lengthFilled = 0;
        length = this.lengthBytes.readUInt32BE(0);
      } else {
        length = chunk.readUInt32BE(off);
        off += v1LengthBytes;
      }
      if (length > this.frameBytesMax) {
        this.failed = true;
        out.push({ ok: false, reason: `frame body of ${length} bytes exceeds ${this.frameBytesMax}` });
        break;
      }
      if (chunk.length - off >= length) {
        const body = chunk.subarray(off, off + length);
        out.push({ ok: true, body: this.reusedChunks ? Buffer.from(body) : body });
        off += length;
        continue;
      }
      this.partial = Buffer.allocUnsafe(length);
      this.filled = 0;
    }
    return out;
  }

  /** Drops a frame being assembled (the connection is gone). */
  dispose(): void {
    this.partial = null;
    this.filled = 0;
    this.lengthFilled = 0;
  }

  private takePartial(): Buffer {
    const body = this.partial!;
    this.partial = null;
    this.filled = 0;
    return body;
  }
}

/** One v1 frame as chunks for writev: the 4 length bytes, then the body's chunks. */
export function encodeV1Frame(body: readonly Buffer[] | Buffer): Buffer[] {
  const chunks = Buffer.isBuffer(body) ? [body] : body;
  let n = 0;
  for (const c of chunks) n += c.length;
  const length = Buffer.allocUnsafe(v1LengthBytes);
  length.writeUInt32BE(n, 0);
  return [length, ...chunks.filter((c) => c.length > 0)];
}

/** A v1 frame whose body is a text line (OK, ERROR, STREAM_CONTROL or JSON). */
export function encodeV1Text(text: string): Buffer[] {
  return encodeV1Frame(Buffer.from(text, 'utf8'));
}

/** The STREAM keepalive: a frame with an empty body. */
export const v1Keepalive: Buffer = Buffer.alloc(v1LengthBytes);

/**
 * How a connection on the Cursus port tells v1 from Wire v2 from its first bytes: a v2
 * connection opens with the frame magic `CRS2` (0x43 ...), a v1 connection with a u32 body length
 * no larger than the limit, so its first byte is 0x00 (or 0x01 for a body of exactly 16 MiB).
 * The two cannot collide: a v1 length starting with 0x43 would be over 1 GiB.
 *
 * true: a v1 connection; false: not one (Wire v2, or bytes neither protocol accepts); null: the
 * first byte allows v1 and fewer than 4 bytes have arrived.
 */
export function isV1Start(firstBytes: Buffer, frameBytesMax = v1FrameBytesMax): boolean | null {
  if (firstBytes.length === 0) return null;
  if (firstBytes[0]! > frameBytesMax / 2 ** 24) return false;
  if (firstBytes.length < v1LengthBytes) return null;
  return firstBytes.readUInt32BE(0) <= frameBytesMax;
}
