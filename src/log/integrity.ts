// Integrity of stored batches after they were written: a byte flipped on disk (a failing sector, a
// bad controller, a stray write) must never reach a client. Two checks find it:
//
// - Reads (file-log-reads.ts) check the envelope header's checksum of every batch they parse, and
//   the payload checksum of every batch they return as bytes; a file slice (sent with sendfile,
//   never touched by the broker) carries its checksum for whoever reads its bytes later.
// - The scrubber (scrubLog, run by the core at a set rate) walks every segment and checks every
//   batch, so that corruption in bytes only ever sent with sendfile is found as well.
//
// A corrupt batch is recorded per segment and position (CorruptBatches), logged and reported once
// (FileLogOptions.onCorruptBatch: the core counts it and reports it on /ready), and never served
// again: a read stops before it, or, when it is the first batch wanted, fails with corrupt_batch.
// Before a mismatch is recorded the envelope is read again (confirmCorrupt), so that a read racing
// a rollback of the segment's tail is not taken for corruption.

import { QuartetError } from '../base/errors.js';
import type { Logger } from '../base/logger.js';
import {
  checkEnvelopeInPlace,
  decodeEnvelopeHeader,
  envelopeBaseOffsetAt,
  envelopeBytes,
  envelopeBytesAt,
  envelopeHeaderBytes,
  envelopeHeadValid,
  envelopePayloadValid,
  envelopeRecordCountAt,
  type EnvelopeHeader,
} from './envelope.js';
import { pinnedAll, type LogState } from './file-log-state.js';
import { readFully, scanChunkBytes } from './scan.js';
import type { Segment } from './segment.js';
import type { CorruptBatch, CorruptBatchListener, ScrubPosition, ScrubProgress } from './types.js';

export type { CorruptBatch, CorruptBatchListener, ScrubPosition, ScrubProgress } from './types.js';

/** The corrupt batches one log has found, by segment and position: never served. */
export class CorruptBatches {
  private readonly bySegment = new Map<Segment, Map<number, CorruptBatch>>();

  constructor(
    private readonly logger: Logger,
    private readonly listener: CorruptBatchListener | null,
  ) {}

  isKnown(segment: Segment, position: number): boolean {
    return this.bySegment.size > 0 && this.bySegment.get(segment)?.has(position) === true;
  }

  get(segment: Segment, position: number): CorruptBatch | null {
    return this.bySegment.get(segment)?.get(position) ?? null;
  }

  /**
   * Records a corrupt batch; the first time, logs it and tells the listener. Returns the record.
   * Its offsets are the header's when the header's checksum holds; otherwise the header is not
   * believed, and every offset up to the next indexed batch (the segment's end, without one) is
   * counted as lost with it: reads cannot walk past a bad header.
   */
  note(segment: Segment, position: number, corrupt: ConfirmedCorrupt, foundBy: CorruptBatch['foundBy']): CorruptBatch {
    let known = this.bySegment.get(segment);
    const seen = known?.get(position);
    if (seen !== undefined) return seen;
    const header = corrupt.lengthSound ? corrupt.header : null;
    const batch: CorruptBatch = {
      file: segment.paths.log,
      position,
      baseOffset: header?.baseOffset ?? null,
      lastOffset: header !== null ? header.baseOffset + header.recordCount - 1 : (segment.offsetIndex.entryAfterPosition(position)?.offset ?? segment.nextOffset) - 1,
      problem: corrupt.problem,
      foundBy,
    };
    if (known === undefined) this.bySegment.set(segment, (known = new Map()));
    known.set(position, batch);
    this.logger.error('corrupt batch found on disk; it is not served', { ...batch });
    this.listener?.(batch);
    return batch;
  }

  /**
   * The known corrupt batches still in `segments` (the log's current ones) that may hold offsets
   * at or past `logStartOffset`; records of segments since deleted or replaced are dropped.
   */
  readable(segments: readonly Segment[], logStartOffset: number): CorruptBatch[] {
    if (this.bySegment.size === 0) return [];
    const current = new Set(segments);
    const out: CorruptBatch[] = [];
    for (const [segment, batches] of this.bySegment) {
      if (!current.has(segment)) {
        this.bySegment.delete(segment);
        continue;
      }
      for (const batch of batches.values()) if (batch.lastOffset >= logStartOffset) out.push(batch);
    }
    return out;
  }
}

/** The error a read answers with when the first batch it would serve is corrupt. */
export function corruptBatchError(batch: CorruptBatch): QuartetError {
  const offsets = batch.baseOffset === null ? `its header too; offsets up to ${batch.lastOffset} cannot be read` : `offsets ${batch.baseOffset}..${batch.lastOffset}`;
  return new QuartetError('corrupt_batch', `the stored batch at ${batch.file}:${batch.position} (${offsets}) is corrupt (${batch.problem}) and is not served`);
}

/**
 * Reads the envelope at `position` of `segment` again and checks it whole: the problem when it is
 * corrupt, null when it is sound or no longer there (the segment was retired, or a rollback cut
 * the tail under the first read: then nothing corrupt was ever readable).
 */
export async function confirmCorrupt(state: LogState, segment: Segment, position: number): Promise<ConfirmedCorrupt | null> {
  if (state.closed || !state.segments.includes(segment)) return null;
  const size = segment.size;
  if (position + envelopeHeaderBytes > size) return null;
  const head = await readAt(state, segment, position, Math.min(size - position, envelopeHeaderBytes + 0xffff));
  if (head.length < envelopeHeaderBytes) return null;
  const header = decodeEnvelopeHeader(head, 0);
  if (typeof header === 'string') return { header: null, problem: header, lengthSound: false };
  const headValid = envelopeHeadValid(head, 0, header);
  if (headValid === false) return { header, problem: 'header checksum mismatch', lengthSound: false };
  // The header is sound: a length past the end is a tail cut under the first read.
  if (headValid === null || position + envelopeBytes(header) > segment.size) return null;
  const whole = await readAt(state, segment, position, envelopeBytes(header));
  if (whole.length < envelopeBytes(header)) return null;
  return envelopePayloadValid(whole.subarray(envelopeHeaderBytes), header) ? null : { header, problem: 'payload checksum mismatch', lengthSound: true };
}

export interface ConfirmedCorrupt {
  /** As decoded; null when it does not decode. */
  header: EnvelopeHeader | null;
  problem: string;
  /** The header checksum holds (only the payload is bad): the envelope's length can be trusted. */
  lengthSound: boolean;
}

async function readAt(state: LogState, segment: Segment, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(length);
  return buf.subarray(0, await readFully(state.fsys, segment.logFd, buf, position));
}

/**
 * Checks the checksums of about `bytesMax` bytes of envelopes from `from` on (the log's start when
 * null), segment after segment, recording what is corrupt. Past a corrupt header (which hides
 * where the next batch starts) the scrub goes on at the next batch the offset index knows. A scrub
 * goes on by offset, from the indexed batch at or before it: a position could fall inside a batch
 * once compaction replaced the segment or a failed write cut its tail and others were written.
 */
export async function scrubLog(state: LogState, from: ScrubPosition | null, bytesMax: number): Promise<ScrubProgress> {
  if (state.closed) return { next: null, bytes: 0 };
  // Nothing below the log start is served.
  const fromOffset = Math.max(from?.offset ?? 0, state.logStartOffset);
  let first = 0;
  while (first + 1 < state.segments.length && state.segments[first + 1]!.baseOffset <= fromOffset) first++;
  const segments = state.segments.slice(first);
  let bytes = 0;
  // Pinned together before the first await, like a read: retention may retire one meanwhile.
  return pinnedAll(segments, async () => {
    for (const segment of segments) {
      if (state.closed) return { next: null, bytes };
      const offset = Math.max(fromOffset, segment.baseOffset);
      if (bytes >= bytesMax) return { next: { offset }, bytes };
      const done = await scrubSegment(state, segment, segment.offsetIndex.lookup(offset).position, bytesMax - bytes);
      bytes += done.bytes;
      if (done.nextOffset !== null) return { next: { offset: done.nextOffset }, bytes };
    }
    return { next: null, bytes };
  });
}

/**
 * Scrubs `segment` from `start` to its end (its size when the scrub began), or until `bytesMax`
 * bytes are checked: nextOffset is then the offset to go on from. The envelopes are checked where
 * they lie in one chunk buffer, read into again and again: at the default rate the scrubber walks
 * thousands of batches a second, and a new buffer per chunk and an async-generator step per batch
 * made it the broker's largest source of garbage (and of GC pauses) under a steady produce load.
 */
async function scrubSegment(state: LogState, segment: Segment, start: number, bytesMax: number): Promise<{ bytes: number; nextOffset: number | null }> {
  const walk: ScrubWalk = { position: start, end: segment.size, bytes: 0, bytesMax, minOffset: 0 };
  let chunk = Buffer.allocUnsafe(Math.min(scanChunkBytes, Math.max(envelopeHeaderBytes, walk.end - start)));
  while (walk.position < walk.end) {
    const wanted = Math.min(chunk.length, walk.end - walk.position);
    const read = await readFully(state.fsys, segment.logFd, chunk.subarray(0, wanted), walk.position);
    const chunkStart = walk.position;
    const stop = checkChunk(walk, chunk.subarray(0, read));
    if (stop === null) continue;
    if ('nextOffset' in stop) return { bytes: walk.bytes, nextOffset: stop.nextOffset };
    if ('needBytes' in stop && read === wanted && (walk.position > chunkStart || stop.needBytes > chunk.length)) {
      // The next envelope starts in the chunk and ends past it: read on from it, in a larger buffer if need be.
      if (stop.needBytes > chunk.length) chunk = Buffer.allocUnsafe(stop.needBytes);
      continue;
    }
    // A problem, or a read that fell short of the segment's size: read again and judge.
    const corrupt = await confirmCorrupt(state, segment, walk.position);
    if (corrupt === null) break;
    state.corrupt.note(segment, walk.position, corrupt, 'scrub');
    if (corrupt.lengthSound && corrupt.header !== null) {
      walk.bytes += envelopeBytes(corrupt.header);
      walk.position += envelopeBytes(corrupt.header);
      continue;
    }
    // A bad header hides where the next batch starts: the walk goes on at the next indexed batch.
    const next = segment.offsetIndex.entryAfterPosition(walk.position);
    if (next === null) break;
    walk.bytes += next.position - walk.position;
    walk.position = next.position;
  }
  return { bytes: walk.bytes, nextOffset: null };
}

/** Where a scrub of one segment stands. */
interface ScrubWalk {
  /** File position of the next envelope to check. */
  position: number;
  /** The segment's size when the scrub began. */
  end: number;
  /** Bytes checked so far, and the most to check. */
  bytes: number;
  bytesMax: number;
  /** Offsets must not go below this (the previous batch's end). */
  minOffset: number;
}

/** Why checkChunk stopped before the chunk's end (null: it checked every envelope in it). */
type ChunkStop = { nextOffset: number } | { needBytes: number } | { problem: true };

/**
 * Checks the envelopes of `chunk` (the bytes from `walk.position` on) in place, moving `walk` past
 * each sound one. Stops at a problem (walk.position at it), at an envelope that ends past the
 * chunk (needBytes: its size, or a header's), or once bytesMax bytes are checked (nextOffset).
 */
function checkChunk(walk: ScrubWalk, chunk: Buffer): ChunkStop | null {
  const chunkStart = walk.position;
  while (walk.position < walk.end) {
    const at = walk.position - chunkStart;
    if (chunk.length - at < envelopeHeaderBytes) return { needBytes: envelopeHeaderBytes };
    const checked = checkEnvelopeInPlace(chunk, at);
    if (checked === 'truncated') {
      const size = envelopeBytesAt(chunk, at);
      return walk.position + size > walk.end ? { problem: true } : { needBytes: size };
    }
    if (typeof checked === 'string') return { problem: true };
    const baseOffset = envelopeBaseOffsetAt(chunk, at);
    if (baseOffset < walk.minOffset) return { problem: true };
    walk.minOffset = baseOffset + envelopeRecordCountAt(chunk, at);
    walk.position += checked;
    walk.bytes += checked;
    if (walk.bytes >= walk.bytesMax && walk.position < walk.end) return { nextOffset: walk.minOffset };
  }
  return null;
}
