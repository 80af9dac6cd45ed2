// Messages: SendMessages (101), PollMessages (100), FlushUnsavedBuffer (102).
//
// Send: the batch is validated as a whole (validateSendMessagesBatch: every frame checksum, the
// batch checksum, reserved fields, sizes, offset deltas); a bad one is refused with a status and
// nothing is appended; a send that names no existing partition is status 20 (sendTarget).
// Partitioning: balanced = round-robin per topic; partition id = as given;
// messages key = XXH32(key, seed 0) % partitions_count (the reference server's
// calculate_partition_id_by_messages_key_hash with 0-based partition ids). The batch is stored
// as stamped (appendRequestFromBatch), a batch over 4 MiB as parts of at most 1 MiB
// (storedParts), and the reply confirms the base offset.
//
// Poll: the five strategies (offset, timestamp, first, last, next = stored consumer offset + 1);
// stored Iggy batches are returned as they are (decided from the header when the whole batch is in
// range), or sliced (sliceStoredBatch) when the range starts or ends inside one; batches of other
// formats (Kafka, neutral) are transcoded batch by batch into Iggy batches through the format
// registry; control batches (transaction markers) are skipped. auto_commit stores the last
// returned offset. A timestamp poll goes by server time, as the reference server's: the messages
// of every batch whose base_timestamp (the time the broker appended it; for a transcoded batch
// its newest record time) is at or after the time (serverTimeMicros).

import assert from 'node:assert/strict';
import { xxh32 } from '@node-rs/xxhash';
import type { Topic } from '../../../core/catalog.js';
import { isQuartetError } from '../../../base/errors.js';
import { hiddenFromCommitted } from '../../../core/txn-index.js';
import { BufferLease, leaseReleasedAfter } from '../../../base/buffer-pool.js';
import { checkBatchBytes } from '../../../log/common.js';
import { defaultFormatRegistry } from '../../../log/formats.js';
import { BatchFlags, BatchFormat, fileSliceHeadBytes, type AppendResult, type FileSlice, type PartitionLog, type StoredBatch } from '../../../log/types.js';
import { fileSliceBytesMin } from '../../file-replies.js';
import {
  CommandCode,
  IggyErrorCode,
  PollingKind,
  appendRequestFromBatch,
  iggyFormatCodec,
  batchHeaderBytes,
  batchMessageCountOffset,
  frameHeaderBytes,
  isBatchRejection,
  sliceStoredBatch,
  splitValidatedBatch,
  validateSendMessagesBatch,
  type BatchPart,
  type BatchRejectionCode,
  type Identifier,
  type Partitioning,
  type ValidatedBatch,
  resyncPartitionId,
} from '../codec/index.js';
import { findConsumer, storeOffset, storedOffset, type ResolvedConsumer } from '../consumers.js';
import { IggyFailure } from '../errors.js';
import { findTopic, requirePartition, requireTopic } from '../mapping.js';
import { requireTopicPermission } from '../permissions.js';
import type { IggyHandlerTable, IggyRequestContext } from './types.js';

/** A timestamp poll reads at most this many times pollBytesMax while it looks for `count` messages. */
const timestampScanFactor = 8;
/** Byte budget of the read that looks past a stretch of offsets compaction emptied. */
const gapReadBytes = 64 * 1024;
/** An offset poll's read window covers at most this many offsets per wanted message. */
const stretchMax = 1 << 20;

const rejectionStatus: Record<BatchRejectionCode, number> = {
  truncated: IggyErrorCode.invalidFormat,
  bad_length: IggyErrorCode.invalidFormat,
  reserved_field: IggyErrorCode.invalidReservedField,
  bad_count: IggyErrorCode.invalidFormat,
  message_checksum: IggyErrorCode.invalidMessageChecksum,
  batch_checksum: IggyErrorCode.invalidBatchChecksum,
  offset_delta: IggyErrorCode.invalidFormat,
  payload_too_big: IggyErrorCode.tooBigMessagePayload,
  user_headers_too_big: IggyErrorCode.tooBigUserHeaders,
  // The reference's IggyMessagesBatch validation: an empty batch is InvalidMessagesCount.
  no_messages: IggyErrorCode.invalidMessagesCount,
};

/**
 * The topic a SendMessages goes to. A stream, topic or partition that does not resolve (a topic
 * with no partitions included) is status 20 (ResourceNotFound), before the permission check, as
 * the reference server's partition-request dispatch answers every send it cannot route; polls and
 * a plain consumer's offset calls name the level that missed instead (1009/2010/3007).
 */
function sendTarget(ctx: IggyRequestContext, stream: Identifier, topicId: Identifier, p: Partitioning): Topic {
  const topic = findTopic(ctx.frontend.broker.catalog, stream, topicId);
  if (topic === null) throw new IggyFailure(IggyErrorCode.resourceNotFound, 'status', 'stream or topic not found');
  if (topic.partitions === 0) throw new IggyFailure(IggyErrorCode.resourceNotFound, 'status', 'topic has no partitions');
  if (p.kind === 'partitionId' && !(p.partitionId < topic.partitions)) throw new IggyFailure(IggyErrorCode.resourceNotFound, 'status', `partition ${p.partitionId} not found`);
  return topic;
}

/** A SendMessages batch larger than this is stored as parts (storedParts); smaller ones whole. */
export const storedBatchSplitBytes = 4 * 1024 * 1024;
/** The largest part of a split batch (one larger message is a part of its own). */
export const storedPartBytesMax = 1024 * 1024;

/**
 * How a validated SendMessages batch is stored: whole, or above storedBatchSplitBytes as
 * consecutive batches of at most storedPartBytesMax (splitValidatedBatch), so that a poll or
 * fetch that starts inside it reads about a megabyte, not the whole batch (up to the frame's 64
 * MiB). The topic's batch limit (max.message.bytes) applies to the batch as sent, as when it is
 * stored whole. The split copies the batch once on the event loop (a 60 MB batch took 208–303 ms
 * to send whole and 232–244 ms split: docs/benchmarks.md, thirteenth session) and holds both
 * copies until the request buffer goes back to its pool.
 */
function storedParts(ctx: IggyRequestContext, topic: Topic, batch: ValidatedBatch): BatchPart[] {
  if (batch.bytes.length <= storedBatchSplitBytes) return [{ ...batch, firstOffsetDelta: 0 }];
  checkBatchBytes(batch.bytes.length, ctx.frontend.broker.logConfigFor(topic));
  return splitValidatedBatch(batch, storedPartBytesMax);
}

/** The partition of a send to `topic` (which has partitions, and the given one: sendTarget). */
function pickPartition(ctx: IggyRequestContext, topic: Topic, p: Partitioning): number {
  switch (p.kind) {
    case 'balanced':
      return ctx.frontend.nextBalancedPartition(topic);
    case 'partitionId':
      return p.partitionId;
    case 'messagesKey':
      return xxh32(p.key, 0) % topic.partitions;
  }
}

interface PolledPiece {
  chunks: Array<Buffer | FileSlice>;
  count: number;
  lastOffset: number;
}

/** The messages of one stored batch in [from, toExclusive) (at most countMax), as Iggy bytes. */
function pieceOf(batch: StoredBatch, from: number, toExclusive: number, countMax: number): PolledPiece | null {
  if (servedAsStored(batch, from, toExclusive, countMax)) {
    // Every frame is in range: the stored bytes as they are (or their file range), from the header alone.
    return { chunks: [batch.file ?? batch.payload], count: batch.recordCount, lastOffset: batch.lastOffset };
  }
  // Anything else is sliced or transcoded from the whole payload (the caller reads it first).
  assert.ok(batch.file === undefined, 'a file-sliced batch must be read whole before it is sliced');
  if (batch.format === BatchFormat.iggy) {
    return sliceStoredBatch(batch.payload, from, toExclusive, countMax);
  }
  if ((batch.flags & BatchFlags.control) !== 0) return null;
  const codec = defaultFormatRegistry.get(batch.format);
  if (codec === undefined) return null;
  const records = codec
    .decode(batch)
    .filter((r) => r.offset >= from && r.offset < toExclusive)
    .slice(0, countMax);
  if (records.length === 0) return null;
  const encoded = iggyFormatCodec.encode(records, records[0]!.offset, batch);
  // The transcoded batch spans its records only (not the template's whole range).
  return { chunks: [encoded.payload], count: records.length, lastOffset: records[records.length - 1]!.offset };
}

// A file-sliced batch's head must hold the Iggy batch header and the first frame header (isWholeDenseIggyBatch reads both).
assert.ok(fileSliceHeadBytes >= batchHeaderBytes + frameHeaderBytes, 'file slices carry the Iggy batch header and the first frame header');

/** Whether the poll sends `batch` as it is stored: an Iggy batch wholly in range, of at most countMax messages. */
function servedAsStored(batch: StoredBatch, from: number, toExclusive: number, countMax: number): boolean {
  return batch.format === BatchFormat.iggy && batch.baseOffset >= from && batch.lastOffset < toExclusive && batch.recordCount <= countMax && isWholeDenseIggyBatch(batch);
}

/**
 * The server time (µs) a poll serves a stored batch's messages with: an Iggy batch's
 * base_timestamp (stamped at append), or for a batch of another format the base_timestamp its
 * transcoding gets (its newest record time, encodeIggyBatch). Timestamp polls compare it.
 */
function serverTimeMicros(batch: StoredBatch): bigint {
  // A file-sliced batch carries its whole 256-byte header in payload.
  if (batch.format === BatchFormat.iggy && batch.payload.length >= batchHeaderBytes) return batch.payload.readBigUInt64LE(16);
  return BigInt(Math.max(0, Math.floor(batch.maxTimestamp))) * 1000n;
}

/**
 * A stored Iggy batch whose header agrees with the log's record of it and holds one frame per
 * offset: message_count = the batch's offset span, and its first frame (base_offset +
 * offset_delta) at the log's first offset. Every Iggy batch writer stores ascending deltas
 * (SendMessages: offset_delta = index, checked at admission, and a part of a larger batch keeps
 * its frames, so its deltas run on from the whole batch's: storedParts; encodeIggyBatch:
 * ascending), so the frames are first..last. The log checks the bytes; batches with gaps
 * (compaction rewrites) take the frame walk.
 */
function isWholeDenseIggyBatch(batch: StoredBatch): boolean {
  // A file-sliced batch carries its first fileSliceHeadBytes (the batch header and the first frame header) in payload.
  const b = batch.payload;
  const length = batch.file?.length ?? b.length;
  const headBytes = batchHeaderBytes + frameHeaderBytes;
  if (length < headBytes || b.length < headBytes) return false;
  const base = b.readUInt32LE(12) * 0x1_0000_0000 + b.readUInt32LE(8);
  return (
    b.readUInt32LE(32) === length &&
    b.readUInt32LE(36) === 0 &&
    b.readUInt32LE(batchMessageCountOffset) === batch.recordCount &&
    base + b.readUInt32LE(batchHeaderBytes + 24) === batch.baseOffset
  );
}

/** The fence's answer: an empty poll for partition u32::MAX, which the SDKs take as "sync again". */
function resyncReply() {
  return { partitionId: resyncPartitionId, currentOffset: 0n, messagesCount: 0, batches: [] as Buffer[] };
}

/**
 * The reference server's fence on a consumer group's poll: a caller that is not a member, or a
 * partition the member does not own (a missing one included), is answered with an empty poll whose
 * partition is u32::MAX (resyncPartitionId), the SDKs' cue to sync the assignment again (and join
 * again). A plain consumer (no group) passes.
 */
function failsGroupFence(consumer: ResolvedConsumer, partitionId: number | null): boolean {
  if (consumer.group === null) return false;
  return consumer.member === null || (partitionId !== null && !consumer.member.pollable.includes(partitionId));
}

/** Whether `log` is still the partition's (no purge replaced it, nor a deletion removed it). */
function isCurrentLog(frontend: IggyRequestContext['frontend'], topic: Topic, partition: number, log: PartitionLog): boolean {
  return frontend.broker.purgeInProgress(topic) === undefined && frontend.broker.isCurrentLog(topic, partition, log);
}

/**
 * Which of `stored` (read from `from` on) a read_committed reader must not see: markers and the
 * records of aborted transactions, looked up only for a read with transactional records.
 */
function hiddenIn(frontend: IggyRequestContext['frontend'], topic: Topic, partition: number, stored: StoredBatch[], from: number): (batch: StoredBatch) => boolean {
  const transactional = stored.some((b) => (b.flags & (BatchFlags.transactional | BatchFlags.control)) === BatchFlags.transactional);
  return hiddenFromCommitted(transactional ? frontend.broker.transactions.abortedTransactions(topic, partition, from, stored[stored.length - 1]!.lastOffset + 1) : []);
}

/**
 * Where the newest `missing` messages below `hi` start, for a `last` poll whose newest `count`
 * offsets held fewer messages than `count` (transaction markers, aborted records, records
 * Kafka-style compaction removed): the offset of the oldest of them, or, when the log holds
 * fewer, its start. It scans back from `hi` in windows, each going back twice as far per missing
 * message as the one before (as the offset poll reads forward). A batch whose every offset holds
 * a record is counted from its head (isWholeDenseIggyBatch, BatchFormatCodec.messageCount): a
 * large one comes back as a file slice and is read no further; the others are decoded. The scan
 * passes over at most timestampScanFactor x pollBytesMax of stored batches, as a timestamp poll
 * (reads of up to 64 KiB); past that, or when a purge replaces the log, it answers where it got
 * to: the poll then returns the newest messages it found, fewer than `count`.
 */
async function lastStart(frontend: IggyRequestContext['frontend'], topic: Topic, partition: number, log: PartitionLog, hi: number, missing: number): Promise<number> {
  const scanBytesMax = timestampScanFactor * frontend.settings.pollBytesMax;
  let scanned = 0;
  let stretch = 1;
  while (scanned < scanBytesMax) {
    // Retention or DeleteRecords may move the log's start while the scan runs.
    const logStart = log.stats().logStartOffset;
    if (hi <= logStart) break;
    const lo = Math.max(logStart, hi - missing * stretch);
    // The messages in [lo, hi), as ascending runs of offsets [from, to].
    const runs: Array<[number, number]> = [];
    const lease = new BufferLease();
    let next = lo;
    try {
      while (next < hi && scanned < scanBytesMax) {
        const stored = await log.read(next, { maxBytes: Math.max(1, Math.min(gapReadBytes, scanBytesMax - scanned)), maxOffset: hi, lease, fileSlicesMin: fileSliceBytesMin });
        if (stored.length === 0) {
          next = hi;
          break;
        }
        const hidden = hiddenIn(frontend, topic, partition, stored, next);
        for (const b of stored) {
          if (b.lastOffset < next) continue;
          next = b.lastOffset + 1;
          scanned += b.file?.length ?? b.payload.length;
          if (hidden(b)) continue;
          const codec = defaultFormatRegistry.get(b.format);
          // A batch of another format without a codec is not served either (pieceOf).
          if (codec === undefined) continue;
          if (b.format === BatchFormat.iggy ? isWholeDenseIggyBatch(b) : codec.messageCount?.(b) === b.recordCount) {
            const from = Math.max(b.baseOffset, lo);
            const to = Math.min(b.lastOffset, hi - 1);
            if (from <= to) runs.push([from, to]);
            continue;
          }
          const whole = await log.wholePayload(b, lease);
          for (const r of codec.decode(whole)) if (r.offset >= lo && r.offset < hi) runs.push([r.offset, r.offset]);
        }
      }
    } catch (err) {
      if (!isCurrentLog(frontend, topic, partition, log)) return hi;
      // The log's start moved past the read: the window again, from the new start.
      if (isQuartetError(err) && err.code === 'offset_out_of_range' && log.stats().logStartOffset > next) continue;
      throw err;
    } finally {
      lease.release();
    }
    // The scan ran out of budget before hi: what it saw is not the newest, start where it got to.
    if (next < hi) break;
    // The newest `missing` of them, if there are that many: the poll starts at the oldest of those.
    for (let k = runs.length - 1; k >= 0; k--) {
      const [from, to] = runs[k]!;
      const n = to - from + 1;
      if (n >= missing) return to - missing + 1;
      missing -= n;
    }
    hi = lo;
    stretch = Math.min(stretch * 2, stretchMax);
  }
  return hi;
}

export const messageHandlers: IggyHandlerTable = {
  [CommandCode.sendMessages]: async (ctx, req) => {
    const topic = sendTarget(ctx, req.streamId, req.topicId, req.partitioning);
    requireTopicPermission(ctx.user, topic.namespaceId, topic.id, 'send');
    // No count limit beyond the frame size (and the codec's 1,000,000), as the reference admits batches.
    const parsed = validateSendMessagesBatch(req);
    if (isBatchRejection(parsed)) throw new IggyFailure(rejectionStatus[parsed.code], 'status', parsed.reason);
    const partition = pickPartition(ctx, topic, req.partitioning);
    const parts = storedParts(ctx, topic, parsed);
    // Appended back to back with nothing awaited in between, so the parts take consecutive offsets
    // (the log assigns them inside append(); checked below); all carry the first part's server time.
    const sharedBaseTimestamp: { micros: bigint | null } = { micros: null };
    const appends = parts.map((part) =>
      ctx.frontend.broker.append(topic, partition, appendRequestFromBatch(part, { partitionId: partition, firstOffsetDelta: part.firstOffsetDelta, sharedBaseTimestamp })),
    );
    // The reply waits for every part, failed or not (a retry must not race the parts still in flight).
    const settled = await Promise.allSettled(appends);
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const results = settled.map((r) => (r as PromiseFulfilledResult<AppendResult>).value);
    const baseOffset = results[0]!.baseOffset;
    results.forEach((r, k) => assert.equal(r.baseOffset, baseOffset + parts[k]!.firstOffsetDelta, 'the parts of a batch take consecutive offsets'));
    return { confirmations: [{ streamId: topic.namespaceId, topicId: topic.id, partitionId: partition, baseOffset: BigInt(baseOffset) }] };
  },

  [CommandCode.pollMessages]: async (ctx, req) => {
    const { frontend } = ctx;
    const topic = requireTopic(frontend.broker.catalog, req.streamId, req.topicId);
    requireTopicPermission(ctx.user, topic.namespaceId, topic.id, 'poll');
    // null: a consumer group that does not exist.
    const consumer = findConsumer(frontend, ctx.session, topic, req.consumer);
    if (consumer === null || failsGroupFence(consumer, req.partitionId)) return resyncReply();
    const member = consumer.member;
    let partition: number;
    if (member !== null) {
      if (req.partitionId !== null) {
        partition = req.partitionId;
      } else {
        if (member.pollable.length === 0) return { partitionId: 0, currentOffset: 0n, messagesCount: 0, batches: [] };
        partition = member.pollable[member.cursor % member.pollable.length]!;
        member.cursor = (member.cursor + 1) % member.pollable.length;
      }
    } else {
      partition = requirePartition(topic, req.partitionId ?? 0);
    }
    // A purge replacing the topic's logs closes the old ones: wait for the new.
    const purging = frontend.broker.purgeInProgress(topic);
    if (purging !== undefined) await purging;
    const log = frontend.broker.partition(topic, partition);
    const stats = log.stats();
    const currentOffset = BigInt(Math.max(0, stats.highWatermark - 1));
    // Polls read what Kafka transactions committed (Iggy clients cannot filter): up to the last
    // stable offset (the high watermark when no transaction is open), without aborted records.
    const txns = frontend.broker.transactions;
    const stable = txns.lastStableOffset(topic, partition);
    const empty = { partitionId: partition, currentOffset, messagesCount: 0, batches: [] as Buffer[] };
    const count = Math.min(req.count, frontend.settings.pollMessagesMax);
    if (count === 0) return empty;

    let start: number;
    // A timestamp poll returns only the batches stamped at or after the time, of all it reads.
    let minUs: bigint | null = null;
    switch (req.strategy.kind) {
      case PollingKind.offset:
        start = req.strategy.value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(req.strategy.value);
        break;
      case PollingKind.timestamp: {
        minUs = req.strategy.value;
        const found = await log.offsetForTimestamp(Number(minUs / 1000n));
        if (found === null) return empty;
        start = found;
        break;
      }
      case PollingKind.first:
        start = stats.logStartOffset;
        break;
      case PollingKind.last:
        // The newest `count` offsets; where they hold fewer messages, further back (below).
        start = stable - count;
        break;
      case PollingKind.next: {
        const stored = await storedOffset(frontend, consumer, topic, partition);
        start = stored === null ? stats.logStartOffset : stored + 1;
        break;
      }
    }
    start = Math.max(start, stats.logStartOffset);
    // Reads go into pooled buffers, handed back once the reply (whose batches are views of them)
    // has been written; without the hook they are fresh buffers left to GC.
    const afterWrite = ctx.afterReplyWritten;
    // Large stored batches go out as file ranges (sendfile) when the connection can send them.
    const slices = afterWrite !== undefined && ctx.fileSlices === true ? { fileSlicesMin: fileSliceBytesMin } : {};
    // The first `want` messages at or after `from` below `end`, in at most `bytesMax` bytes.
    const collect = async (from: number, end: number, want: number, bytesMax: number) => {
      const batches: Array<Buffer | FileSlice> = [];
      let messages = 0;
      let bytes = 0;
      let next = from;
      let lastOffset = -1;
      // The last offset an offset poll passed over without returning it (markers, aborted records,
      // offsets compaction emptied).
      let passedTo = -1;
      // What a poll may read besides what it returns: a timestamp poll passes over older batches.
      let scanned = 0;
      const scanBytesMax = timestampScanFactor * frontend.settings.pollBytesMax;
      // An offset poll returns the first `want` messages at or after its start. Each read asks the
      // log for as many offsets as messages are still wanted (the log stops at the first batch past
      // that), so a dense log is read no further than the reply; where offsets hold no message a
      // reader sees (transaction markers, aborted records, records compaction removed) the poll
      // passes over them and reads on, up to the last stable offset, each read covering twice the
      // offsets per wanted message of the one before (a sparse log takes a few reads, not one per
      // message). A timestamp poll skips older batches on the way (a clock that stepped back), so
      // it reads on until it has `want` messages.
      let stretch = 1;
      const readEnd = (): number => (minUs === null ? Math.min(end, next + (want - messages) * stretch) : end);
      while (next < end && bytes < bytesMax && messages < want && scanned < scanBytesMax) {
        // A lease per read: a read the reply takes nothing from (a timestamp poll passing over older
        // messages) goes back to the pool at once instead of after the reply.
        const lease = leaseReleasedAfter(afterWrite);
        const kept = messages;
        // The log the poll began with: a purge that replaces it meanwhile ends the poll with what it has.
        let stored: StoredBatch[];
        try {
          const read = (maxOffset: number, maxBytes: number) => log.read(next, { maxBytes, maxOffset, ...(lease ? { lease } : {}), ...slices });
          const window = readEnd();
          stored = await read(window, bytesMax - bytes);
          // Nothing in the window (compaction emptied it): the first batch beyond it, which the log
          // returns whole whatever the byte budget, so the read stays small however far it lies.
          if (stored.length === 0 && window < end) stored = await read(end, Math.min(gapReadBytes, bytesMax - bytes));
        } catch (err) {
          lease?.release();
          if (!isCurrentLog(frontend, topic, partition, log)) break;
          // DeleteRecords or retention moved the log's start past the read: on from there, as a
          // poll that came a moment later would have begun.
          const logStart = log.stats().logStartOffset;
          if (isQuartetError(err) && err.code === 'offset_out_of_range' && logStart > next) {
            next = logStart;
            continue;
          }
          throw err;
        }
        // Nothing more below the last stable offset.
        if (stored.length === 0) {
          next = end;
          break;
        }
        const hidden = hiddenIn(frontend, topic, partition, stored, next);
        for (let b of stored) {
          if (b.lastOffset < next) continue;
          const size = b.file?.length ?? b.payload.length;
          if (hidden(b)) {
            next = b.lastOffset + 1;
            if (minUs === null) {
              // An offset poll passes over any amount of them, up to the last stable offset (a
              // cap on what it scans would stop a consumer behind a large aborted transaction for
              // good), and its consumer has consumed them.
              passedTo = b.lastOffset;
            } else {
              scanned += size;
            }
            if (scanned >= scanBytesMax) break;
            continue;
          }
          if (minUs !== null) scanned += size;
          if (minUs !== null && serverTimeMicros(b) < minUs) {
            next = b.lastOffset + 1;
            if (scanned >= scanBytesMax) break;
            continue;
          }
          const wanted = want - messages;
          // Sliced or transcoded: that needs its bytes, read from the slice (its segment is pinned).
          if (b.file !== undefined && !servedAsStored(b, next, end, wanted)) b = await log.wholePayload(b, lease);
          const piece = pieceOf(b, next, end, wanted);
          next = b.lastOffset + 1;
          // The batch's offsets past its last message are empty (compaction): passed over, unless
          // the poll stopped inside the batch at `count`.
          if (minUs === null && (piece === null || piece.count < wanted)) passedTo = b.lastOffset;
          if (piece === null || piece.count === 0) continue;
          for (const c of piece.chunks) {
            batches.push(c);
            bytes += c.length;
          }
          messages += piece.count;
          lastOffset = piece.lastOffset;
          if (messages >= want || scanned >= scanBytesMax) break;
        }
        if (messages === kept) lease?.release();
        if (messages < want) stretch = Math.min(stretch * 2, stretchMax);
      }
      // reachedEnd: read up to `end` (not stopped by a byte or scan limit, nor a purge).
      return { batches, messages, bytes, lastOffset, passedTo, next, reachedEnd: next >= end };
    };
    type Collected = Awaited<ReturnType<typeof collect>>;
    // What `earlier` and then `later` (read on from where it stopped) collected, as one read.
    const joined = (earlier: Collected, later: Collected): Collected => ({
      batches: [...earlier.batches, ...later.batches],
      messages: earlier.messages + later.messages,
      bytes: earlier.bytes + later.bytes,
      lastOffset: later.lastOffset >= 0 ? later.lastOffset : earlier.lastOffset,
      passedTo: Math.max(earlier.passedTo, later.passedTo),
      next: later.next,
      reachedEnd: later.reachedEnd,
    });
    let polled = await collect(start, stable, count, frontend.settings.pollBytesMax);
    // `last`: where the newest `count` offsets hold fewer messages (transaction markers, aborted
    // records, records compaction removed), the newest `count` messages start further back: the
    // ones missing are read from there up to where the first read began, and go before its own.
    // Where the byte cap cuts that read, the reply is instead the run of consecutive messages from
    // where they start, cut at the cap, as an offset poll from there returns (the missing ones
    // alone followed by the first read's would leave a hole between them). A first read the cap
    // cut is the reply as it is.
    if (req.strategy.kind === PollingKind.last && polled.reachedEnd && polled.messages < count && polled.bytes < frontend.settings.pollBytesMax && start > stats.logStartOffset) {
      const earlier = await lastStart(frontend, topic, partition, log, start, count - polled.messages);
      if (earlier < start) {
        const from = Math.max(earlier, log.stats().logStartOffset);
        const missing = count - polled.messages;
        const before = await collect(from, start, missing, frontend.settings.pollBytesMax - polled.bytes);
        // A purge meanwhile ends the poll with what the first read has, as an offset poll ends.
        if (isCurrentLog(frontend, topic, partition, log)) {
          // Cut by the cap, it reads on from where it stopped, up to the cap, instead of the first read's.
          polled =
            before.messages === missing || before.reachedEnd
              ? joined(before, polled)
              : joined(before, await collect(before.next, stable, count - before.messages, frontend.settings.pollBytesMax - before.bytes));
        }
      }
    }
    const { batches, messages, lastOffset, passedTo } = polled;
    // What the consumer has consumed: the messages returned, and the offsets an offset poll passed
    // over after them (so auto-commit moves past an aborted transaction or a compacted stretch).
    const consumedTo = Math.max(lastOffset, passedTo);
    // Served from the log the poll began with (a purge replacing it meanwhile makes its offsets void).
    const servedFromCurrentLog = consumedTo >= 0 && isCurrentLog(frontend, topic, partition, log);
    if (consumer.group !== null && member !== null && consumedTo >= 0) {
      // A rebalance while the poll awaited may have moved the partition or begun its hand-off (or
      // the group or the membership is gone): then the poll hands out nothing, as the fence at its
      // start would have, and commits nothing (the read buffers still go back once it is written).
      if (!frontend.groups.polls(consumer.group, member, partition)) return resyncReply();
      // What a group was served and has not committed holds a hand-off of the partition back
      // (groups.ts): the messages returned, not the hidden offsets (nothing to commit for them).
      if (servedFromCurrentLog && lastOffset >= 0) frontend.groups.served(consumer.group, partition, lastOffset);
    }
    // Not for a group deleted meanwhile (its offsets went with it).
    if (req.autoCommit && servedFromCurrentLog && (consumer.group === null || frontend.groups.isCurrent(consumer.group))) {
      await storeOffset(frontend, consumer, topic, partition, consumedTo);
    }
    return { partitionId: partition, currentOffset, messagesCount: messages, batches };
  },

  [CommandCode.flushUnsavedBuffer]: () => {
    // Quartet writes every batch to the log before acknowledging: nothing is ever unsaved.
    throw new IggyFailure(IggyErrorCode.featureUnavailable, 'status', 'flush is not available');
  },
};
