// CONSUME and LIST_OFFSETS (spec §4 "Consuming", "Offset Management"; docs/protocols/
// cursus-wire-v2.md §10.3, §10.5), and the CBV2 reply batch CONSUME and STREAM send.
//
// CONSUME is a stateless read of one partition through the core read service: from the request's
// offset, or the group's committed offset when that is further (a committed offset overrides a
// lower offset=, as Cursus v1 does; with offset=-1, the committed offset, else autoOffsetReset:
// earliest = the log start, latest = the end of what the isolation reads), at most `batch` records
// (default 8192) under `isolation` (read_committed by default: up to the last stable offset,
// aborted records passed over; read_uncommitted: the raw log, markers of CBV2 transactions
// included). An empty read waits up to wait_ms for an append (the core's append waiters). An
// offset below the log start or past the high watermark is OFFSET_OUT_OF_RANGE requested=
// earliest= latest=. The reply is one CBV2 batch, possibly of zero records (replyBatch).

import { BatchFormat } from '../../base/batch.js';
import { QuartetError } from '../../base/errors.js';
import type { Isolation, PartitionPosition, PartitionReader, ReadChunk, RecordsRead } from '../../core/reads.js';
import { optionalInt, optionalText, requiredInt, requiredText } from './args.js';
import { batchRecordsMax, encodeBatchHeader, isBatchPayload, readBatchLayout, retopicBatch } from './codec/index.js';
import { dataFailure, type CursusDataPath } from './data-path.js';
import { CursusFailure, type CursusContext, type CursusReply, type CursusRequest } from './handler.js';

export const consumeBatchDefault = 8192;
export const defaultGroup = 'default-group';

/** The group of a CONSUME or STREAM: `group`, else Cursus's default-group. */
export function groupOf(req: CursusRequest): string {
  const group = optionalText(req, 'group');
  return group === undefined || group === '' ? defaultGroup : group;
}

/** `isolation`: read_committed (the default) or read_uncommitted. */
export function isolationOf(req: CursusRequest): Isolation {
  const v = optionalText(req, 'isolation') ?? 'read_committed';
  if (v !== 'read_committed' && v !== 'read_uncommitted') throw CursusFailure.of('invalid_isolation', [['command', req.command]], 'isolation must be read_committed or read_uncommitted');
  return v;
}

/** `batch`: records per reply, 1 to 100,000, default 8192. */
export function batchOf(req: CursusRequest): number {
  return optionalInt(req, 'batch', 1, batchRecordsMax) ?? consumeBatchDefault;
}

/** Where a read_committed reader may read to (the last stable offset), or a read_uncommitted one (the high watermark). */
export function readEnd(position: PartitionPosition, isolation: Isolation): number {
  return isolation === 'read_committed' ? position.lastStableOffset : position.highWatermark;
}

export function offsetOutOfRange(requested: number, position: PartitionPosition, isolation: Isolation): CursusFailure {
  return CursusFailure.of('OFFSET_OUT_OF_RANGE', [
    ['requested', String(requested)],
    ['earliest', String(position.logStartOffset)],
    ['latest', String(readEnd(position, isolation))],
  ]);
}

/** Whether `offset` lies in the partition's retained records (the high watermark included: the next one). */
export function inRange(offset: number, position: PartitionPosition): boolean {
  return offset >= position.logStartOffset && offset <= position.highWatermark;
}

/** At most `recordsMax` records from `from` in the CBV2 format (transcoded from other formats as needed). */
export function readFrom(data: CursusDataPath, reader: PartitionReader, from: number, isolation: Isolation, recordsMax: number): Promise<RecordsRead> {
  const end = readEnd(reader.position(), isolation);
  return reader.readRecords({ from, end, recordsMax, bytesMax: data.settings.consumeBytesMax, format: BatchFormat.cursus, isolation, markers: isolation === 'read_uncommitted' });
}

/** Where the read after `read` (which began at `from`) begins: past what it returned and what it passed over. */
export function nextAfter(from: number, read: RecordsRead): number {
  const to = Math.max(read.lastOffset, read.passedTo);
  return to >= from ? to + 1 : from;
}

/**
 * One CBV2 batch as the broker sends it (docs §9: flags 0, acks "1", batch_start = batch_end = 0)
 * of what a read returned: each piece of it (a stored CBV2 batch, a cut of one under a new header,
 * or a batch transcoded from another format) gives its records and loses its header. Stored
 * records of this topic and partition go out as views of the log (docs §9.1); records under
 * another topic (a transcoded batch has none; a topic renamed since) are written again with it.
 */
export function replyBatch(topic: string, partition: number, chunks: readonly ReadChunk[]): Buffer[] {
  const records: Buffer[] = [];
  let count = 0;
  let piece: Buffer[] = [];
  const flush = (): void => {
    const head = piece[0];
    if (head === undefined) return;
    const layout = readBatchLayout(head, { emptyTopic: true });
    if (!layout.ok) throw new QuartetError('corrupt_batch', `cursus batch read from the log: ${layout.reason}`);
    const h = layout.value.header;
    count += h.recordCount;
    if (h.topic === topic && h.partition === partition) {
      if (layout.value.recordsAt < head.length) records.push(head.subarray(layout.value.recordsAt));
      for (let i = 1; i < piece.length; i++) records.push(piece[i]!);
    } else {
      records.push(...retopicBatch(piece.length === 1 ? head : Buffer.concat(piece), topic, partition).slice(1));
    }
    piece = [];
  };
  for (const chunk of chunks) {
    // Reads without file slices return buffers only.
    if (!Buffer.isBuffer(chunk)) throw new Error('a Cursus read returned a file slice');
    // A piece begins with a batch header; the records after it begin with their u32 length, which
    // is never the magic (a record is far below 0x43425632 bytes).
    if (isBatchPayload(chunk)) flush();
    piece.push(chunk);
  }
  flush();
  return [encodeBatchHeader({ idempotent: false, topic, partition, acks: '1', batchStart: 0, batchEnd: 0, recordCount: count }), ...records];
}

/** CONSUME topic* partition* offset* member* [group] [autoOffsetReset] [isolation] [batch] [wait_ms]. */
export async function consume(ctx: CursusContext, req: CursusRequest): Promise<CursusReply> {
  const data = ctx.services.data;
  const name = requiredText(req, 'topic');
  const partition = requiredInt(req, 'partition', 0);
  const offset = requiredInt(req, 'offset', -1);
  // Required by the spec, not used: CONSUME does not check membership (spec: "stateless partition-leader read").
  requiredText(req, 'member');
  const group = groupOf(req);
  const reset = optionalText(req, 'autoOffsetReset') ?? 'earliest';
  if (reset !== 'earliest' && reset !== 'latest') throw CursusFailure.of('invalid_autoOffsetReset', [['command', req.command]], 'autoOffsetReset must be earliest or latest');
  const isolation = isolationOf(req);
  const recordsMax = batchOf(req);
  const waitMs = Math.min(optionalInt(req, 'wait_ms', 0) ?? 0, data.settings.consumeWaitMsMax);
  const { view, topic } = data.topic(name);
  await data.authorize(ctx, view, 'read');
  data.checkPartition(topic, partition);
  try {
    const committed = await data.committedOffset(group, name, partition);
    const reader = await data.broker.reads.openSettled(topic, partition);
    const position = reader.position();
    // Spec §6 "Offset Resolution Priority": the committed offset, the explicit one, autoOffsetReset.
    const resetTo = reset === 'latest' ? readEnd(position, isolation) : position.logStartOffset;
    const start = offset < 0 ? (committed ?? resetTo) : Math.max(offset, committed ?? offset);
    if (!inRange(start, position)) throw offsetOutOfRange(start, position, isolation);
    let read = await readFrom(data, reader, start, isolation, recordsMax);
    const deadline = Date.now() + waitMs;
    while (read.records === 0 && reader.isCurrent()) {
      const left = deadline - Date.now();
      if (left <= 0 || !(await data.waiters.waitForAppend([reader], left))) break;
      read = await readFrom(data, reader, start, isolation, recordsMax);
    }
    return { kind: 'batch', chunks: replyBatch(name, partition, read.chunks) };
  } catch (err) {
    throw dataFailure(err, name, partition);
  }
}

/** `P<n>:earliest=<N>:latest=<N>:leo=<N>:hwm=<N>` (spec "LIST_OFFSETS"). */
function offsetsEntry(partition: number, p: PartitionPosition): string {
  return `P${partition}:earliest=${p.logStartOffset}:latest=${p.lastStableOffset}:leo=${p.nextOffset}:hwm=${p.highWatermark}`;
}

/**
 * LIST_OFFSETS topic* [partition]: earliest = the log start, latest = where a read_committed
 * reader's records end (the last stable offset: the value for autoOffsetReset=latest), leo = the
 * next offset to be assigned, hwm = the high watermark.
 */
export async function listOffsets(ctx: CursusContext, req: CursusRequest): Promise<CursusReply> {
  const data = ctx.services.data;
  const name = requiredText(req, 'topic');
  const only = optionalInt(req, 'partition', 0);
  const { view, topic } = data.topic(name);
  await data.authorize(ctx, view, 'read');
  if (only !== undefined) data.checkPartition(topic, only);
  const partitions = only === undefined ? Array.from({ length: topic.partitions }, (_, p) => p) : [only];
  const entries: string[] = [];
  for (const p of partitions) {
    try {
      const reader = await data.broker.reads.openSettled(topic, p);
      entries.push(offsetsEntry(p, reader.position()));
    } catch (err) {
      throw dataFailure(err, name, p);
    }
  }
  return {
    kind: 'text',
    fields: [
      ['topic', name],
      ['partitions', String(topic.partitions)],
      ['offsets', entries.join(',')],
    ],
  };
}
