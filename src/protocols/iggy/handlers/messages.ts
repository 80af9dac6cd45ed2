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
// Poll: the five strategies (offset, timestamp, first, last, next = stored consumer offset + 1),
// read through the core read service (PartitionReader.readRecords, read_committed): stored Iggy
// batches are returned as they are (decided from the header when the whole batch is in range), or
// sliced (sliceStoredBatch) when the range starts or ends inside one; batches of other formats
// (Kafka, neutral) are transcoded batch by batch into Iggy batches; control batches (transaction
// markers) and aborted transactions' records are passed over. auto_commit stores the last
// returned offset. A timestamp poll goes by server time, as the reference server's: the messages
// of every batch whose base_timestamp (the time the broker appended it; for a transcoded batch
// its newest record time) is at or after the time (serverTimeMicros). The byte cap is
// pollBytesMax cut to what is left of the broker's memory budget (core/memory-budget.ts), and the
// reply's buffers count against the budget until the reply is written.

import assert from 'node:assert/strict';
import { xxh32 } from '@node-rs/xxhash';
import type { Topic } from '../../../core/catalog.js';
import type { PartitionReader, RecordsRead } from '../../../core/reads.js';
import { bufferedBytes } from '../../../core/memory-budget.js';
import type { AppendResult } from '../../../core/broker.js';
import { BatchFormat, type StoredBatch } from '../../../base/batch.js';
import { isQuartetError } from '../../../base/errors.js';
import { fileSliceBytesMin } from '../../file-replies.js';
import {
  CommandCode,
  IggyErrorCode,
  PollingKind,
  appendRequestFromBatch,
  batchHeaderBytes,
  isBatchRejection,
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
 * to send whole and 232–244 ms split, measured with the Iggy benchmark) and holds both
 * copies until the request buffer goes back to its pool.
 */
function storedParts(ctx: IggyRequestContext, topic: Topic, batch: ValidatedBatch): BatchPart[] {
  if (batch.bytes.length <= storedBatchSplitBytes) return [{ ...batch, firstOffsetDelta: 0 }];
  ctx.frontend.broker.checkBatchBytes(topic, batch.bytes.length);
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

/** What `earlier` and then `later` (read on from where it stopped) read, as one read. */
function joined(earlier: RecordsRead, later: RecordsRead): RecordsRead {
  return {
    chunks: [...earlier.chunks, ...later.chunks],
    records: earlier.records + later.records,
    bytes: earlier.bytes + later.bytes,
    lastOffset: later.lastOffset >= 0 ? later.lastOffset : earlier.lastOffset,
    passedTo: Math.max(earlier.passedTo, later.passedTo),
    next: later.next,
    reachedEnd: later.reachedEnd,
  };
}

/**
 * The partition a poll reads: the one asked for, else for a group member the next of those it
 * may poll, round robin (null: none), else partition 0.
 */
function polledPartition(topic: Topic, consumer: ResolvedConsumer, partitionId: number | null): number | null {
  const member = consumer.member;
  if (member === null) return requirePartition(topic, partitionId ?? 0);
  if (partitionId !== null) return partitionId;
  if (member.pollable.length === 0) return null;
  const partition = member.pollable[member.cursor % member.pollable.length]!;
  member.cursor = (member.cursor + 1) % member.pollable.length;
  return partition;
}

/** The first `want` messages at or after `from` below `end`, in at most `bytesMax` bytes. */
type Collect = (from: number, end: number, want: number, bytesMax: number) => Promise<RecordsRead>;

/**
 * `last`: where the newest `count` offsets hold fewer messages (transaction markers, aborted
 * records, records compaction removed), the newest `count` messages start further back: the ones
 * missing are read from there up to where the first read began, and go before its own. Where the
 * byte cap cuts that read, the reply is instead the run of consecutive messages from where they
 * start, cut at the cap, as an offset poll from there returns (the missing ones alone followed by
 * the first read's would leave a hole between them). A first read the cap cut is the reply as it
 * is. `bytesMax` is the poll's byte cap (pollBytesMax cut to the memory budget); the scan for where
 * they start passes over at most timestampScanFactor x pollBytesMax of stored batches, as a
 * timestamp poll.
 */
async function widenLast(reader: PartitionReader, polled: RecordsRead, poll: { start: number; stable: number; count: number; bytesMax: number; pollBytesMax: number }, collect: Collect): Promise<RecordsRead> {
  const { start, stable, count, bytesMax, pollBytesMax } = poll;
  if (!polled.reachedEnd || polled.records >= count || polled.bytes >= bytesMax) return polled;
  const missing = count - polled.records;
  const earlier = await reader.newestStart({ below: start, count: missing, isolation: 'read_committed', scanBytesMax: timestampScanFactor * pollBytesMax, fileSlicesMin: fileSliceBytesMin });
  if (earlier >= start) return polled;
  const from = Math.max(earlier, reader.logStartOffset());
  const before = await collect(from, start, missing, bytesMax - polled.bytes);
  // A purge meanwhile ends the poll with what the first read has, as an offset poll ends.
  if (!reader.isCurrent()) return polled;
  // Cut by the cap, it reads on from where it stopped, up to the cap, instead of the first read's.
  if (before.records === missing || before.reachedEnd) return joined(before, polled);
  return joined(before, await collect(before.next, stable, count - before.records, bytesMax - before.bytes));
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
    // The reply waits for every part, failed or not (a retry must not race the parts still in
    // flight); awaited one by one, which allocates less than a Promise.allSettled per request.
    const results: AppendResult[] = [];
    let failure: { reason: unknown } | null = null;
    for (const append of appends) {
      try {
        results.push(await append);
      } catch (reason) {
        failure ??= { reason };
      }
    }
    if (failure !== null) {
      const reason = failure.reason;
      // A write that failed (a full disk, an I/O error): the reference's CannotSaveMessagesToSegment.
      if (isQuartetError(reason) && reason.code === 'storage_error') throw new IggyFailure(IggyErrorCode.cannotSaveMessagesToSegment, 'result', reason.message);
      throw reason;
    }
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
    const partition = polledPartition(topic, consumer, req.partitionId);
    if (partition === null) return { partitionId: 0, currentOffset: 0n, messagesCount: 0, batches: [] };
    // A purge replacing the topic's logs closes the old ones: the reader waits for the new.
    const reader = await frontend.broker.reads.openSettled(topic, partition);
    // Polls read what Kafka transactions committed (Iggy clients cannot filter): up to the last
    // stable offset (the high watermark when no transaction is open), without aborted records.
    const position = reader.position();
    const currentOffset = BigInt(Math.max(0, position.highWatermark - 1));
    const stable = position.lastStableOffset;
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
        const found = await reader.offsetForTimestamp(Number(minUs / 1000n));
        if (found === null) return empty;
        start = found;
        break;
      }
      case PollingKind.first:
        start = position.logStartOffset;
        break;
      case PollingKind.last:
        // The newest `count` offsets; where they hold fewer messages, further back (below).
        start = stable - count;
        break;
      case PollingKind.next: {
        const stored = await storedOffset(frontend, consumer, topic, partition);
        start = stored === null ? position.logStartOffset : stored + 1;
        break;
      }
    }
    start = Math.max(start, position.logStartOffset);
    // Reads go into pooled buffers, handed back once the reply (whose batches are views of them)
    // has been written; without the hook they are fresh buffers left to GC.
    const afterWrite = ctx.afterReplyWritten;
    // Large stored batches go out as file ranges (sendfile) when the connection can send them.
    const fileSlicesMin = ctx.fileSlices === true ? fileSliceBytesMin : undefined;
    // A timestamp poll passes over older batches, reading at most timestampScanFactor x pollBytesMax.
    const since = minUs;
    const scan = since === null ? undefined : { keep: (b: StoredBatch) => serverTimeMicros(b) >= since, bytesMax: timestampScanFactor * frontend.settings.pollBytesMax };
    const collect: Collect = (from, end, want, bytesMax) =>
      reader.readRecords({
        from,
        end,
        recordsMax: want,
        bytesMax,
        format: BatchFormat.iggy,
        isolation: 'read_committed',
        ...(afterWrite !== undefined ? { afterWrite } : {}),
        ...(fileSlicesMin !== undefined ? { fileSlicesMin } : {}),
        ...(scan !== undefined ? { scan } : {}),
      });
    // The broker's memory budget: the poll's byte cap is cut to what is left of it (at least one
    // batch is still returned), and the reply's buffers count against it until it is written.
    const reservation = frontend.broker.memoryBudget.reserve(frontend.settings.pollBytesMax);
    let polled: RecordsRead;
    try {
      const bytesMax = Math.max(1, reservation.bytes);
      polled = await collect(start, stable, count, bytesMax);
      if (req.strategy.kind === PollingKind.last && start > position.logStartOffset) {
        polled = await widenLast(reader, polled, { start, stable, count, bytesMax, pollBytesMax: frontend.settings.pollBytesMax }, collect);
      }
      reservation.settle(bufferedBytes(polled.chunks));
    } finally {
      // Held until the reply is written; without the hook the buffers are fresh ones left to GC.
      if (afterWrite !== undefined) afterWrite(() => reservation.release());
      else reservation.release();
    }
    const { chunks: batches, records: messages, lastOffset, passedTo } = polled;
    // What the consumer has consumed: the messages returned, and the offsets an offset poll passed
    // over after them (so auto-commit moves past an aborted transaction or a compacted stretch).
    const consumedTo = Math.max(lastOffset, passedTo);
    // Served from the log the poll began with (a purge replacing it meanwhile makes its offsets void).
    const servedFromCurrentLog = consumedTo >= 0 && reader.isCurrent();
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
