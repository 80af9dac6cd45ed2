// Message commands: PollMessages (100, NonReplicated), SendMessages (101, op 160, not
// result-framed), FlushUnsavedBuffer (102, NonReplicated; always answered with status 5).
// Sources: specs "Messages", server notes §7, core/binary_protocol/src/requests/messages/*,
// responses/messages/*.
//
//   PollMessages request := [consumer Consumer][stream_id Identifier][topic_id Identifier]
//                           [partition_flag u8][partition_id u32][strategy kind u8][value u64]
//                           [count u32][auto_commit u8]
//   PollMessages reply   := [partition_id u32][current_offset u64][messages_count u32]
//                           [batch records, as stored (possibly server-sliced), to end]
//   SendMessages request := [metadata_length u32][stream_id Identifier][topic_id Identifier]
//                           [partitioning Partitioning][messages_count u32][batch to end]
//                           metadata_length = bytes from stream_id through messages_count
//   SendMessages reply   := [confirmations_count u32]
//                           [{stream_id u32, topic_id u32, partition_id u32, base_offset u64} × n]
//                           (20 bytes per entry; the server sends one entry or count 0)
//   FlushUnsavedBuffer   := [stream_id Identifier][topic_id Identifier][partition_id u32][fsync u8]

import type { FileSlice } from '../../../../base/batch.js';
import { Reader, Writer } from '../primitives.js';
import { checkCount, readConsumer, readIdentifier, readOptionalPartition, readPartitioning, readPollingStrategy, writeConsumer, writeIdentifier, writeOptionalPartition, writePartitioning, writePollingStrategy, type Consumer, type Identifier, type Partitioning, type PollingStrategy } from '../values.js';
import {
  batchHeaderBytes,
  parseBatch,
  validateBatch,
  type BatchRejection,
  type ParsedBatch,
  type ValidatedBatch,
} from '../message-batch.js';

export interface PollMessagesRequest {
  consumer: Consumer;
  streamId: Identifier;
  topicId: Identifier;
  partitionId: number | null;
  strategy: PollingStrategy;
  count: number;
  autoCommit: boolean;
}

export function readPollMessagesRequest(r: Reader): PollMessagesRequest {
  const consumer = readConsumer(r);
  const streamId = readIdentifier(r, 'stream_id');
  const topicId = readIdentifier(r, 'topic_id');
  const partitionId = readOptionalPartition(r);
  const strategy = readPollingStrategy(r);
  const count = r.u32('count');
  const autoCommit = r.bool('auto_commit');
  return { consumer, streamId, topicId, partitionId, strategy, count, autoCommit };
}

export function writePollMessagesRequest(w: Writer, v: PollMessagesRequest): void {
  writeConsumer(w, v.consumer);
  writeIdentifier(w, v.streamId);
  writeIdentifier(w, v.topicId);
  writeOptionalPartition(w, v.partitionId);
  writePollingStrategy(w, v.strategy);
  w.u32(v.count).bool(v.autoCommit);
}

export const pollReplyHeadBytes = 16;

/**
 * The partition id of the empty poll a server answers a consumer group's poll with when the
 * poll fails the group's fence (no such group, not a member, a partition it does not own): the
 * client syncs its assignment again (u32::MAX, the reference's RESYNC_REQUIRED_PARTITION_SENTINEL).
 */
export const resyncPartitionId = 0xffff_ffff;

export interface PollMessagesReply {
  partitionId: number;
  /** The partition's newest offset at poll time. */
  currentOffset: bigint;
  messagesCount: number;
  /**
   * Stored batch records (or slices), each `[256-byte header][frames]`, sent as they are: in
   * memory, or (broker side) as ranges of a segment file sent with sendfile. Decoded replies hold
   * buffers only.
   */
  batches: Array<Buffer | FileSlice>;
}

/** The batches of a decoded reply (or of one built in memory): buffers only. */
export function polledBuffers(reply: PollMessagesReply): Buffer[] {
  const out: Buffer[] = [];
  for (const b of reply.batches) {
    if (!Buffer.isBuffer(b)) throw new TypeError('a poll reply holding file slices has no bytes here');
    out.push(b);
  }
  return out;
}

/** Decodes the head and keeps the batch records as one view (see parsePolledBatches). */
export function readPollMessagesReply(r: Reader): PollMessagesReply {
  const partitionId = r.u32('partition_id');
  const currentOffset = r.u64('current_offset');
  const messagesCount = r.u32('messages_count');
  const rest = r.rest();
  return { partitionId, currentOffset, messagesCount, batches: rest.length > 0 ? [rest] : [] };
}

/** Writes the 16-byte head, then references the batch buffers (no copy). */
export function writePollMessagesReply(w: Writer, v: PollMessagesReply): void {
  w.u32(v.partitionId).u64(v.currentOffset).u32(v.messagesCount);
  for (const b of v.batches) {
    if (Buffer.isBuffer(b)) w.bytes(b);
    else w.file(b);
  }
}

/**
 * Walks the batch records of a poll reply body region by batch_length. `verify: 'full'` checks
 * every frame and batch checksum (what an SDK does); returns the batches or the first rejection.
 */
export function parsePolledBatches(records: Buffer, verify: 'full' | 'layout' = 'full'): ParsedBatch[] | BatchRejection {
  const out: ParsedBatch[] = [];
  let pos = 0;
  while (pos < records.length) {
    const parsed = parseBatch(records.subarray(pos), { verify });
    if ('code' in parsed) return { code: parsed.code, reason: `record ${out.length}: ${parsed.reason}` };
    out.push(parsed);
    pos += parsed.bytes.length;
  }
  return out;
}

export interface SendMessagesRequest {
  streamId: Identifier;
  topicId: Identifier;
  partitioning: Partitioning;
  messagesCount: number;
  /** The batch bytes (a view of the request body): validate with validateSendMessagesBatch. */
  batch: Buffer;
}

export function readSendMessagesRequest(r: Reader): SendMessagesRequest {
  const metadataLength = r.u32('metadata_length');
  const meta = r.sub(metadataLength, 'send metadata');
  const streamId = readIdentifier(meta, 'stream_id');
  const topicId = readIdentifier(meta, 'topic_id');
  const partitioning = readPartitioning(meta);
  const messagesCount = meta.u32('messages_count');
  r.adopt(meta, 'metadata_length');
  // A messages_count that differs from the batch's message_count is refused with a status by
  // validateSendMessagesBatch, not here: a decode failure would cost the client its session.
  const batch = r.rest();
  return { streamId, topicId, partitioning, messagesCount, batch };
}

export function writeSendMessagesRequest(w: Writer, v: SendMessagesRequest): void {
  const patch = w.u32Later();
  const before = w.length;
  writeIdentifier(w, v.streamId);
  writeIdentifier(w, v.topicId);
  writePartitioning(w, v.partitioning);
  w.u32(v.messagesCount);
  patch(w.length - before);
  w.bytes(v.batch);
}

/** The reference's bounds on one message (iggy_common MAX_PAYLOAD_SIZE, MAX_USER_HEADERS_SIZE). */
export const messagePayloadBytesMax = 64_000_000;
export const messageUserHeadersBytesMax = 100_000;

/**
 * Admission check of a SendMessages batch: exactly one batch filling the rest of the body, every
 * frame and the batch checksum verified, reserved fields zero, message_count >= 1 and equal to
 * the metadata count, and offset_delta = frame index (Quartet needs offsets base..base+n-1; the
 * reference encoders always write the index). One walk without per-frame objects (validateBatch:
 * the same rejections as parseBatch with `verify: 'full'`). Then each message within the
 * reference's bounds: a payload of at most 64,000,000 bytes, user headers of at most 100,000.
 */
export function validateSendMessagesBatch(req: SendMessagesRequest, messagesMax?: number): ValidatedBatch | BatchRejection {
  if (req.batch.length < batchHeaderBytes) return { code: 'truncated', reason: 'no batch after the send metadata' };
  const batch = validateBatch(req.batch, {
    exact: true,
    requireSequentialDeltas: true,
    ...(messagesMax !== undefined ? { messagesMax } : {}),
  });
  if ('code' in batch) return batch;
  if (batch.header.messageCount === 0) return { code: 'no_messages', reason: 'a batch carries at least one message' };
  if (batch.header.messageCount !== req.messagesCount) return { code: 'bad_count', reason: 'metadata messages_count differs from the batch' };
  return oversizedMessage(batch) ?? batch;
}

/** A valid batch with a message over the reference's size bounds, as a rejection (validateBatch keeps the largest lengths). */
function oversizedMessage(batch: ValidatedBatch): BatchRejection | null {
  if (batch.maxPayloadLength > messagePayloadBytesMax) return { code: 'payload_too_big', reason: `a message payload of ${batch.maxPayloadLength} bytes exceeds ${messagePayloadBytesMax}` };
  if (batch.maxUserHeadersLength > messageUserHeadersBytesMax) return { code: 'user_headers_too_big', reason: `message user headers of ${batch.maxUserHeadersLength} bytes exceed ${messageUserHeadersBytesMax}` };
  return null;
}

export interface SendConfirmation {
  streamId: number;
  topicId: number;
  partitionId: number;
  baseOffset: bigint;
}

export interface SendMessagesReply {
  confirmations: SendConfirmation[];
}

export const sendConfirmationBytes = 20;

/**
 * An empty body is no confirmation: the reference answers a de-duplicated send with an empty
 * success, and its SDKs read it so (Quartet always sends the count).
 */
export function readSendMessagesReply(r: Reader): SendMessagesReply {
  if (r.remaining === 0) return { confirmations: [] };
  const count = r.u32('confirmations_count');
  const confirmations: SendConfirmation[] = [];
  if (checkCount(r, count, sendConfirmationBytes, 'confirmations')) {
    for (let i = 0; i < count; i++) {
      confirmations.push({
        streamId: r.u32('stream_id'),
        topicId: r.u32('topic_id'),
        partitionId: r.u32('partition_id'),
        baseOffset: r.u64('base_offset'),
      });
    }
  }
  return { confirmations };
}

export function writeSendMessagesReply(w: Writer, v: SendMessagesReply): void {
  w.u32(v.confirmations.length);
  for (const c of v.confirmations) w.u32(c.streamId).u32(c.topicId).u32(c.partitionId).u64(c.baseOffset);
}

export interface FlushUnsavedBufferRequest {
  streamId: Identifier;
  topicId: Identifier;
  partitionId: number;
  fsync: boolean;
}

export function readFlushUnsavedBufferRequest(r: Reader): FlushUnsavedBufferRequest {
  const streamId = readIdentifier(r, 'stream_id');
  const topicId = readIdentifier(r, 'topic_id');
  const partitionId = r.u32('partition_id');
  const fsync = r.bool('fsync');
  return { streamId, topicId, partitionId, fsync };
}

export function writeFlushUnsavedBufferRequest(w: Writer, v: FlushUnsavedBufferRequest): void {
  writeIdentifier(w, v.streamId);
  writeIdentifier(w, v.topicId);
  w.u32(v.partitionId).bool(v.fsync);
}
