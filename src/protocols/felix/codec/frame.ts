// The Felix wire v1 frame (docs/protocols/felix-wire-v1.md §2): a 12-byte big-endian header and
// the payload.
//
//    0 magic u32 'FLX1' | 4 version u16 = 1 | 6 flags u16 | 8 length u32 (payload bytes)
//
// The flags select the payload's layout (§3): 0 is a JSON message, the others are binary frames
// with modifiers. `decodeFrameHeader` checks what ends a stream (magic, version, a length over the
// limit, which is 64 KiB before authentication); `frameShape` checks the flags, whose failure the
// broker answers with an error and survives, the frame's bytes having been consumed.

export const frameMagic = 0x464c5831;
export const wireVersion = 1;
export const frameHeaderBytes = 12;

/** Largest payload before the stream authenticated (notes §1: preauth_max_frame_bytes). */
export const preAuthPayloadBytesMax = 65_536;
/** Largest payload after authentication, by default (notes §1: the broker's max_frame_bytes). */
export const payloadBytesMaxDefault = 16_777_216;

/** Frame flag bits (spec "Frame Envelope"; notes §2). A bit changes the payload's layout. */
export const Flag = {
  binaryPublishBatch: 0x0001,
  binaryEventBatch: 0x0002,
  binaryEventBatchShared: 0x0004,
  binaryPublishAcked: 0x0008,
  binaryPublishAck: 0x0010,
  eventBatchOffsets: 0x0020,
  binaryPublishKeyed: 0x0040,
  binaryPublishAckOwner: 0x0080,
} as const;

/** Every flag bit of the v0.5.0 wire; a frame with any other bit is rejected, never masked. */
export const knownFlags = 0x00ff;
/** What a peer that advertised nothing supports (frozen: notes §2). */
export const originalV1Flags = Flag.binaryPublishBatch | Flag.binaryEventBatch | Flag.binaryEventBatchShared;

export type Decoded<T> = { ok: true; value: T } | { ok: false; reason: string };

export interface FrameHeader {
  flags: number;
  /** Payload bytes. */
  length: number;
}

export interface HeaderLimits {
  /** Largest payload accepted (preAuthPayloadBytesMax until the stream authenticates). */
  payloadBytesMax: number;
}

/** Reads and checks the 12 header bytes at `off`: magic, version, length against the limit. */
export function decodeFrameHeader(buf: Buffer, off: number, limits: HeaderLimits): Decoded<FrameHeader> {
  if (buf.length - off < frameHeaderBytes) return { ok: false, reason: `incomplete frame: ${buf.length - off} of ${frameHeaderBytes} header bytes` };
  const magic = buf.readUInt32BE(off);
  if (magic !== frameMagic) return { ok: false, reason: `invalid magic number 0x${magic.toString(16).padStart(8, '0')} (want FLX1)` };
  const version = buf.readUInt16BE(off + 4);
  if (version !== wireVersion) return { ok: false, reason: `unsupported version ${version}` };
  const length = buf.readUInt32BE(off + 8);
  if (length > limits.payloadBytesMax) return { ok: false, reason: `frame too large: ${length} bytes exceeds ${limits.payloadBytesMax}` };
  return { ok: true, value: { flags: buf.readUInt16BE(off + 6), length } };
}

/** The 12 header bytes for a payload of `length` bytes. */
export function encodeFrameHeader(flags: number, length: number): Buffer {
  const b = Buffer.allocUnsafe(frameHeaderBytes);
  writeFrameHeader(b, 0, flags, length);
  return b;
}

/** Writes a header into `b` at `off` (encoders that put the header and a prefix in one buffer). */
export function writeFrameHeader(b: Buffer, off: number, flags: number, length: number): void {
  if (length > 0xffff_ffff) throw new RangeError(`frame payload of ${length} bytes exceeds u32`);
  b.writeUInt32BE(frameMagic, off);
  b.writeUInt16BE(wireVersion, off + 4);
  b.writeUInt16BE(flags, off + 6);
  b.writeUInt32BE(length, off + 8);
}

/** What a frame's flags say its payload is (docs §3). */
export type FrameShape =
  | { kind: 'json' }
  | { kind: 'publish_batch'; acked: boolean; keyed: boolean }
  | { kind: 'event_batch'; shared: boolean; offsets: boolean }
  | { kind: 'publish_ack'; owner: boolean };

function hex4(flags: number): string {
  return `0x${flags.toString(16).padStart(4, '0')}`;
}

/**
 * Classifies a frame by its flags: exactly one base bit (or none, for JSON) and only the modifiers
 * of that base. Unknown bits and modifiers without their base are refused with the reason.
 */
export function frameShape(flags: number): Decoded<FrameShape> {
  if ((flags & ~knownFlags) !== 0) return { ok: false, reason: `unknown flag bits ${hex4(flags & ~knownFlags & 0xffff)} in ${hex4(flags)}` };
  if (flags === 0) return { ok: true, value: { kind: 'json' } };
  const modifiersOf = (base: number, modifiers: number): Decoded<true> =>
    (flags & ~(base | modifiers)) === 0 ? { ok: true, value: true } : { ok: false, reason: `flags ${hex4(flags)}: ${hex4(flags & ~(base | modifiers))} cannot go with ${hex4(base)}` };
  if ((flags & Flag.binaryPublishBatch) !== 0) {
    const ok = modifiersOf(Flag.binaryPublishBatch, Flag.binaryPublishAcked | Flag.binaryPublishKeyed);
    return ok.ok ? { ok: true, value: { kind: 'publish_batch', acked: (flags & Flag.binaryPublishAcked) !== 0, keyed: (flags & Flag.binaryPublishKeyed) !== 0 } } : ok;
  }
  if ((flags & (Flag.binaryEventBatch | Flag.binaryEventBatchShared)) !== 0) {
    const shared = (flags & Flag.binaryEventBatchShared) !== 0;
    const ok = modifiersOf(shared ? Flag.binaryEventBatchShared : Flag.binaryEventBatch, Flag.eventBatchOffsets);
    return ok.ok ? { ok: true, value: { kind: 'event_batch', shared, offsets: (flags & Flag.eventBatchOffsets) !== 0 } } : ok;
  }
  if ((flags & Flag.binaryPublishAck) !== 0) {
    const ok = modifiersOf(Flag.binaryPublishAck, Flag.binaryPublishAckOwner);
    return ok.ok ? { ok: true, value: { kind: 'publish_ack', owner: (flags & Flag.binaryPublishAckOwner) !== 0 } } : ok;
  }
  return { ok: false, reason: `flags ${hex4(flags)}: a modifier without its base bit` };
}

/** The flags of a shape (the inverse of frameShape). */
export function flagsOf(shape: FrameShape): number {
  switch (shape.kind) {
    case 'json':
      return 0;
    case 'publish_batch':
      return Flag.binaryPublishBatch | (shape.acked ? Flag.binaryPublishAcked : 0) | (shape.keyed ? Flag.binaryPublishKeyed : 0);
    case 'event_batch':
      return (shape.shared ? Flag.binaryEventBatchShared : Flag.binaryEventBatch) | (shape.offsets ? Flag.eventBatchOffsets : 0);
    case 'publish_ack':
      return Flag.binaryPublishAck | (shape.owner ? Flag.binaryPublishAckOwner : 0);
  }
}

/** Whether every bit of `flags` is among those a peer advertised. */
export function peerSupports(peerFlags: number, flags: number): boolean {
  return (peerFlags & flags) === flags;
}

/** Total bytes of a chunk list. */
export function chunksLength(chunks: readonly Buffer[]): number {
  let n = 0;
  for (const c of chunks) n += c.length;
  return n;
}
