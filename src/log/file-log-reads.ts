// The read path of a FileLog (file-log.ts): reads of whole batches up to a byte budget (as views
// of one pread per window, or as file slices for large batches), payloads of file slices read
// whole, and the timestamp lookups. A read pins every segment it may reach, all at once before its
// first await, so retention and compaction never close a file under it.
//
// Integrity (integrity.ts): every envelope header a read parses is checked against its own
// checksum before its length is trusted, and every batch returned as bytes against its payload
// checksum (unless ReadOptions.verify is false); a file slice carries its checksum for whoever
// reads its bytes.
// A corrupt batch is never returned: the read ends before it, or fails with corrupt_batch when
// it would be the first batch returned.

import { QuartetError } from '../base/errors.js';
import type { BufferLease } from '../base/buffer-pool.js';
import { closedError, outOfRange, ReadSelector } from './common.js';
import { decodeEnvelopeHeader, envelopeBytes, envelopeHeaderBytes, envelopeHeadValid, envelopePayloadValid, sliceBytesValid, storedBatchOf, type EnvelopeHeader } from './envelope.js';
import { pinnedAll, type LogState } from './file-log-state.js';
import { confirmCorrupt, corruptBatchError } from './integrity.js';
import type { LogFileSystem } from './fs.js';
import { readFully, scanEnvelopes, type ScannedEnvelope } from './scan.js';
import type { Segment } from './segment.js';
import type { BatchFormat, CorruptBatch, ReadOptions, StoredBatch } from './types.js';
import { fileSliceHeadBytes } from './types.js';

export class ReadPath {
  /** The last read with fileSlicesMin met a large envelope: the next starts with a small window. */
  private slicedReadsMeetLarge = false;

  constructor(private readonly state: LogState) {}

  async read(offset: number, options: ReadOptions): Promise<StoredBatch[]> {
    if (this.state.closed) throw closedError();
    if (offset < this.state.logStartOffset || offset > this.state.nextOffset) throw outOfRange(offset, this.state.logStartOffset, this.state.nextOffset);
    if (offset >= this.state.highWatermark) return [];
    const endOffset = Math.min(this.state.highWatermark, options.maxOffset ?? Infinity);
    const selector = new ReadSelector(offset, endOffset, options.maxBytes);
    const segments = this.state.segments.slice(this.segmentIndexFor(offset, this.state.segments));
    const slices = sliceRule(options);
    // Every segment the read may reach is pinned now, before the first await: retention or
    // compaction may retire one while an earlier one is being read.
    await pinnedAll(segments, async () => {
      for (const segment of segments) {
        // A segment starting at or past the end holds nothing wanted (a read stopped by the
        // index at endOffset does not mark the selector done).
        if (selector.done || segment.baseOffset >= endOffset) break;
        if (segment.nextOffset <= offset) continue;
        await this.readSegment(segment, offset, endOffset, selector, options.maxBytes, options.lease, slices, options.verify !== false);
      }
    });
    return selector.batches;
  }

  /** Index of the last segment whose base is <= offset (0 when offset precedes them all). */
  private segmentIndexFor(offset: number, segments: Segment[]): number {
    let lo = 0;
    let hi = segments.length - 1;
    let found = 0;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (segments[mid]!.baseOffset <= offset) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  /**
   * Reads from the indexed position with one pread sized for maxBytes plus the index gap, and
   * offers the whole envelopes in it to the selector; payloads are views of that one buffer. Only
   * when the window ends before the wanted data (a batch bigger than the window, or a long gap)
   * does it read again from where it stopped.
   *
   * With `slices` (reads with `fileSlicesMin` or `otherFormatSlices`): an envelope whose payload
   * is at least its format's minimum (SliceRule) and runs past the bytes read so far is offered
   * as a file slice (its header and first fileSliceHeadBytes read, the rest not), and the segment
   * stays pinned until the lease is released; one wholly inside them is offered as read. After a large envelope the next pread is
   * a small window (the index gap plus one header and head); after small batches, the usual
   * window. The first pread is small when this log's last sliced read met a large envelope.
   *
   * Checks (with `verify`): see the file header. A large envelope is sliced only when the
   * payload bytes its header checksum covers lie within its head (so that the header is checked).
   */
  private async readSegment(
    segment: Segment,
    offset: number,
    endOffset: number,
    selector: ReadSelector,
    maxBytes: number,
    lease: BufferLease | undefined,
    slices: SliceRule | null,
    verify: boolean,
  ): Promise<void> {
    let position = segment.offsetIndex.lookup(Math.max(offset, segment.baseOffset)).position;
    // Nothing at or past the first indexed batch from endOffset on is wanted: with maxOffset (an
    // Iggy poll of N messages, a read_committed fetch) the read stops there instead of filling
    // a window of maxBytes.
    const limit = Math.min(segment.size, segment.offsetIndex.positionAtOrAfter(endOffset) ?? Infinity);
    const sliceMin = (header: EnvelopeHeader): number => (slices === null ? Infinity : header.format === slices.format ? slices.min : slices.otherMin);
    const sliced = (header: EnvelopeHeader): boolean => header.payloadLength >= sliceMin(header) && header.checksumFrom <= fileSliceHeadBytes;
    const wanted = (header: EnvelopeHeader): boolean => header.baseOffset + header.recordCount > offset && header.baseOffset < endOffset;
    /** Why a wanted whole envelope at `at` of `buf` is not served ('known': recorded corrupt already), or null. */
    const unservable = (buf: Buffer, at: number, header: EnvelopeHeader): 'known' | 'corrupt' | null => {
      if (!verify || !wanted(header)) return null;
      if (this.state.corrupt.isKnown(segment, position + at)) return 'known';
      return !envelopePayloadValid(buf.subarray(at + envelopeHeaderBytes, at + envelopeBytes(header)), header) ? 'corrupt' : null;
    };
    const smallWindow = this.state.config.indexIntervalBytes + envelopeHeaderBytes + fileSliceHeadBytes;
    // The wanted batch usually starts within indexIntervalBytes of the indexed position.
    const largeWindow = maxBytes + this.state.config.indexIntervalBytes + envelopeHeaderBytes;
    let window = slices !== null && this.slicedReadsMeetLarge ? smallWindow : largeWindow;
    let pinned = false;
    let sawLarge = false;
    try {
      while (position < limit && !selector.done) {
        const buf = await segment.readRange(position, Math.min(limit - position, window), lease);
        let at = 0;
        // Whether a large envelope was met: the next window is then a small one.
        let metLarge = false;
        while (at < buf.length) {
          const header = decodeEnvelopeHeader(buf, at);
          if (header === 'truncated') break;
          if (typeof header === 'string') return await this.refuse(segment, position + at, selector);
          // Its own checksum vouches for the header, its length above all, before anything is taken from it.
          const headValid = verify ? envelopeHeadValid(buf, at, header) : true;
          if (headValid === false) return await this.refuse(segment, position + at, selector);
          if (headValid === null) break;
          const bytes = envelopeBytes(header);
          if (header.payloadLength >= sliceMin(header)) sawLarge = metLarge = true;
          // (One of another format is sliced even when read: a worker reads and checks it again.)
          if (slices !== null && sliced(header) && (at + bytes > buf.length || (slices.format !== null && header.format !== slices.format))) {
            // Its head must be in this window (else it is read again from here), and all of it in
            // the segment (a rollback may have shrunk it under this read).
            if (at + envelopeHeaderBytes + fileSliceHeadBytes > buf.length) break;
            if (position + at + bytes > segment.size) return;
            if (verify && wanted(header) && this.state.corrupt.isKnown(segment, position + at)) return await this.refuse(segment, position + at, selector, true);
            const batch = storedBatchOf(header, buf, at);
            batch.payload = batch.payload.subarray(0, fileSliceHeadBytes);
            const payloadCrc = { from: header.checksumFrom, value: header.payloadCrc };
            batch.file = { fd: segment.logFd, position: position + at + envelopeHeaderBytes, length: header.payloadLength, payloadCrc };
            if (!pinned) {
              segment.acquire();
              slices.lease.onRelease(() => void segment.release().catch((error: unknown) => this.state.logger.warn('closing a retired segment failed', { error })));
              pinned = true;
            }
            at += bytes;
            if (!selector.offer(batch)) return;
            continue;
          }
          if (at + bytes > buf.length) {
            // It runs past this window. When the read would not take it (the byte budget is
            // spent), the read ends here: reading on would fetch a window only to drop it.
            if (selector.refuses(header.baseOffset, header.baseOffset + header.recordCount - 1, header.payloadLength)) return selector.stop();
            break;
          }
          const refused = unservable(buf, at, header);
          if (refused !== null) return await this.refuse(segment, position + at, selector, refused === 'known');
          if (!selector.offer(storedBatchOf(header, buf, at))) return;
          at += bytes;
        }
        if (at === 0) {
          // One envelope larger than the window (a small one, when slicing): read exactly it. A
          // header cut short (or a large one whose head is cut) means a rollback shrank the
          // segment under this read: nothing more is readable here.
          const header = decodeEnvelopeHeader(buf, 0);
          if (typeof header === 'string' || (slices !== null && sliced(header))) return;
          const whole = await segment.readRange(position, envelopeBytes(header), lease);
          if (whole.length < envelopeBytes(header)) return;
          if (verify && envelopeHeadValid(whole, 0, header) !== true) return await this.refuse(segment, position, selector);
          const refused = unservable(whole, 0, header);
          if (refused !== null) return await this.refuse(segment, position, selector, refused === 'known');
          if (!selector.offer(storedBatchOf(header, whole, 0))) return;
          at = whole.length;
        }
        position += at;
        window = metLarge ? smallWindow : largeWindow;
      }
    } finally {
      // A sliced read that met no large batch brings the usual first window back.
      if (slices !== null) this.slicedReadsMeetLarge = sawLarge;
    }
  }

  /**
   * The envelope at `position` cannot be served (`known`: recorded corrupt already; otherwise a
   * check failed just now and is confirmed first). The read ends before it, or, having nothing
   * yet, fails: corrupt_batch, or storage_error when a second look finds it sound (the segment's
   * tail changed under the read: a retry reads what is there now).
   */
  private async refuse(segment: Segment, position: number, selector: ReadSelector, known = false): Promise<void> {
    let corrupt: CorruptBatch | null = known ? this.state.corrupt.get(segment, position) : null;
    if (corrupt === null) {
      const confirmed = await confirmCorrupt(this.state, segment, position);
      if (confirmed !== null) corrupt = this.state.corrupt.note(segment, position, confirmed, 'read');
    }
    selector.stop();
    if (selector.batches.length > 0) return;
    if (corrupt !== null) throw corruptBatchError(corrupt);
    throw new QuartetError('storage_error', `the batch at ${segment.paths.log}:${position} changed under the read; try again`);
  }

  async wholePayload(batch: StoredBatch, lease?: BufferLease): Promise<StoredBatch> {
    if (batch.file === undefined) return batch;
    // The slice's segment is pinned by the lease of the read that returned it: its fd is open.
    const { file, ...rest } = batch;
    const payload = lease ? lease.buffer(file.length) : Buffer.allocUnsafe(file.length);
    const n = await readFully(this.state.fsys, file.fd, payload, file.position);
    if (n !== file.length) throw new QuartetError('storage_error', `a file slice of ${file.length} bytes read back ${n}`);
    if (!sliceBytesValid(file, payload)) {
      const corrupt = await this.checkBatch(batch);
      throw corrupt !== null ? corruptBatchError(corrupt) : new QuartetError('storage_error', `a file slice of ${file.length} bytes changed under the read; try again`);
    }
    return { ...rest, payload };
  }

  /** See PartitionLog.checkBatch. A slice of a segment retired since is not recorded (nothing of it is served any more). */
  async checkBatch(batch: StoredBatch): Promise<CorruptBatch | null> {
    const file = batch.file;
    if (file === undefined) return null;
    const segment = this.state.segments.find((s) => s.logFd === file.fd);
    if (segment === undefined) return null;
    const position = file.position - envelopeHeaderBytes;
    const known = this.state.corrupt.get(segment, position);
    if (known !== null) return known;
    const confirmed = await confirmCorrupt(this.state, segment, position);
    return confirmed === null ? null : this.state.corrupt.note(segment, position, confirmed, 'read');
  }

  async offsetForTimestamp(timestamp: number): Promise<number | null> {
    if (this.state.closed) throw closedError();
    const segments = this.state.segments;
    // Pinned together before the first await, like a read (see pinnedAll).
    return pinnedAll(segments, async () => {
      for (const segment of segments) {
        if (segment.maxTimestamp === null || segment.maxTimestamp < timestamp || segment.nextOffset <= this.state.logStartOffset) continue;
        const from = Math.max(segment.timeIndex.scanStart(timestamp), this.state.logStartOffset);
        for await (const { header } of segmentEnvelopes(this.state.fsys, segment, from)) {
          if (header.baseOffset >= this.state.highWatermark) return null;
          const lastOffset = header.baseOffset + header.recordCount - 1;
          if (lastOffset >= this.state.logStartOffset && header.maxTimestamp >= timestamp) return Math.max(header.baseOffset, this.state.logStartOffset);
        }
      }
      return null;
    });
  }

  async maxTimestampOffset(): Promise<{ offset: number; timestamp: number } | null> {
    if (this.state.closed) throw closedError();
    const segments = this.state.segments;
    // Pinned together before the first await, like a read (see pinnedAll).
    return pinnedAll(segments, async () => {
      let best: { offset: number; timestamp: number } | null = null;
      for (const segment of segments) {
        if (segment.maxTimestamp === null || segment.nextOffset <= this.state.logStartOffset) continue;
        if (best !== null && segment.maxTimestamp <= best.timestamp) continue;
        const exact = segment.baseOffset >= this.state.logStartOffset && segment.offsetOfMaxTimestamp < this.state.highWatermark;
        const candidate = exact ? { offset: segment.offsetOfMaxTimestamp, timestamp: segment.maxTimestamp } : await this.scanMaxTimestamp(segment);
        if (candidate !== null && (best === null || candidate.timestamp > best.timestamp)) best = candidate;
      }
      return best;
    });
  }

  /** The max timestamp among a (pinned) segment's readable batches at or after the log start. */
  private async scanMaxTimestamp(segment: Segment): Promise<{ offset: number; timestamp: number } | null> {
    let best: { offset: number; timestamp: number } | null = null;
    for await (const { header } of segmentEnvelopes(this.state.fsys, segment, this.state.logStartOffset)) {
      if (header.baseOffset >= this.state.highWatermark) break;
      const lastOffset = header.baseOffset + header.recordCount - 1;
      if (lastOffset < this.state.logStartOffset) continue;
      if (best === null || header.maxTimestamp > best.timestamp) best = { offset: lastOffset, timestamp: header.maxTimestamp };
    }
    return best;
  }
}

/**
 * Which payloads a read returns as file slices (ReadOptions.fileSlicesMin, otherFormatSlices):
 * those of `format` from `min` bytes, the others from `otherMin`; null when none.
 */
interface SliceRule {
  lease: BufferLease;
  format: BatchFormat | null;
  min: number;
  otherMin: number;
}

function sliceRule(options: ReadOptions): SliceRule | null {
  const { lease, fileSlicesMin, otherFormatSlices: other } = options;
  if (lease === undefined || (fileSlicesMin === undefined && other === undefined)) return null;
  const min = fileSlicesMin === undefined ? Infinity : Math.max(fileSlicesMin, fileSliceHeadBytes);
  const otherMin = other === undefined ? min : Math.min(min, Math.max(other.bytesMin, fileSliceHeadBytes));
  return { lease, format: other?.format ?? null, min, otherMin };
}

/** Envelopes of `segment` from the indexed position at or before `fromOffset`, to its end. */
export async function* segmentEnvelopes(fsys: LogFileSystem, segment: Segment, fromOffset: number, verifyChecksum = false): AsyncGenerator<ScannedEnvelope> {
  const start = segment.offsetIndex.lookup(Math.max(fromOffset, segment.baseOffset)).position;
  let failure: string | null = null;
  yield* scanEnvelopes(fsys, segment.logFd, start, segment.size, { verifyChecksum }, (stop) => (failure = `${stop.problem} at ${stop.position}`));
  if (failure !== null) throw new QuartetError('storage_error', `corrupt segment ${segment.paths.log}: ${failure}`);
}
