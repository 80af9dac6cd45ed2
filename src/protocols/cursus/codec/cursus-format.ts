// BatchFormat.cursus: the log's view of stored CBV2 batches (docs/protocols/cursus-wire-v2.md
// §9.1). A stored batch is the published CBV2 batch with its partition and record offsets stamped
// in place (stampBatch), so records are self-contained and a read cuts runs of them out of the
// stored bytes under a new header (slice) without decoding them.
//
// Appending: cursusAppendRequest builds the log's AppendRequest for a CBV2 batch (the payload is
// the batch bytes themselves) and the codec's stamp writes the partition and the offsets the log
// assigns into them (stampBatch), so the core append path numbers CBV2 records as it does Kafka's.
//
// Mapping to a NeutralRecord: offset = the record's; timestamp = the record's, or the batch's
// first timestamp (its append time) when it has none; key = the key field or null; value = the
// payload; headers = none (CBV2 has no headers). Control records (transaction markers) map to
// nothing. Encoding keeps every CBV2 field of a record that matches a record of a CBV2 template
// by offset and payload (compaction), and writes the template's topic; a template of another
// format gives an empty topic, which the reader's handler replaces (retopicBatch) with the topic
// it serves.

import { QuartetError } from '../../../base/errors.js';
import { BatchFlags, BatchFormat, type AppendRequest, type AppendStamp, type BatchFormatCodec, type BatchSlice, type NeutralRecord, type StoredBatch } from '../../../base/batch.js';
import {
  decodeBatch,
  encodeBatch,
  encodeBatchHeader,
  readBatchLayout,
  recordOffsetAt,
  recordSpans,
  stampBatch,
  writeRecordOffsetAt,
  type BatchLayout,
  type CursusRecord,
} from './batch.js';
import type { Decoded } from './frame.js';

function parseStored(stored: StoredBatch): ReturnType<typeof decodeBatch> & { ok: true } {
  const b = decodeBatch(stored.payload);
  if (!b.ok) throw new QuartetError('corrupt_batch', `cursus batch at offset ${stored.baseOffset}: ${b.reason}`);
  return b;
}

function isControlRecord(r: CursusRecord): boolean {
  return r.controlBatchType !== undefined || r.transactionMarker !== undefined;
}

function decode(stored: StoredBatch): NeutralRecord[] {
  const b = parseStored(stored);
  const out: NeutralRecord[] = [];
  for (const r of b.value.records) {
    if (isControlRecord(r)) continue;
    out.push({ offset: r.offset, timestamp: r.timestamp ?? stored.firstTimestamp, key: r.key ?? null, value: r.payload, headers: [] });
  }
  return out;
}

function encode(records: NeutralRecord[], baseOffset: number, template: StoredBatch): AppendRequest {
  if (records.length === 0) throw new Error('cursus encode needs at least one record');
  let topic = '';
  let partition = 0;
  const originals = new Map<number, CursusRecord>();
  if (template.format === BatchFormat.cursus) {
    const t = parseStored(template);
    topic = t.value.topic;
    partition = t.value.partition;
    for (const r of t.value.records) originals.set(r.offset, r);
  }
  const out: CursusRecord[] = records.map((n) => {
    const o = originals.get(n.offset);
    if (o !== undefined && n.value !== null && o.payload.equals(n.value)) return o;
    const rec: CursusRecord = { topic, partition, offset: n.offset, payload: n.value ?? Buffer.alloc(0), timestamp: n.timestamp };
    if (n.key !== null) rec.key = n.key;
    return rec;
  });
  let first = Infinity;
  let max = -Infinity;
  for (const r of out) {
    const t = r.timestamp ?? template.firstTimestamp;
    first = Math.min(first, t);
    max = Math.max(max, t);
  }
  const payload = Buffer.concat(encodeBatch({ idempotent: false, topic, partition, acks: '1', batchStart: 0, batchEnd: 0, records: out }));
  return {
    format: BatchFormat.cursus,
    recordCount: out[out.length - 1]!.offset - baseOffset + 1,
    firstTimestamp: out[0]!.timestamp ?? first,
    maxTimestamp: max,
    producerId: template.format === BatchFormat.cursus ? template.producerId : -1,
    producerEpoch: template.format === BatchFormat.cursus ? template.producerEpoch : -1,
    baseSequence: template.format === BatchFormat.cursus ? template.baseSequence : -1,
    flags: template.format === BatchFormat.cursus ? template.flags & BatchFlags.transactional : 0,
    payload,
  };
}

/** record_count, read from the head alone. */
function messageCount(stored: StoredBatch): number | null {
  const layout = readBatchLayout(stored.payload);
  return layout.ok ? layout.value.header.recordCount : null;
}

/**
 * The stored records in [from, toExclusive) (at most countMax) under a new header of a batch the
 * broker sends (flags 0, acks "1", batch_start = batch_end = 0); the records are views, one per
 * run of adjacent kept records.
 */
function slice(stored: StoredBatch, from: number, toExclusive: number, countMax: number): BatchSlice | null {
  const p = stored.payload;
  const layout = readBatchLayout(p);
  if (!layout.ok) return null;
  const spans = recordSpans(p, layout.value);
  if (!spans.ok) return null;
  const topicLength = layout.value.topicBytes.length;
  const kept: Buffer[] = [];
  let count = 0;
  let lastOffset = -1;
  let runStart = -1;
  let runEnd = -1;
  for (const [start, end] of spans.value) {
    if (count === countMax) break;
    const offset = recordOffsetAt(p, start, topicLength);
    if (offset < from || offset >= toExclusive) {
      if (runStart >= 0) kept.push(p.subarray(runStart, runEnd));
      runStart = -1;
      continue;
    }
    if (runStart < 0) runStart = start - 4;
    runEnd = end;
    count++;
    lastOffset = offset;
  }
  if (runStart >= 0) kept.push(p.subarray(runStart, runEnd));
  if (count === 0) return null;
  const h = layout.value.header;
  const header = encodeBatchHeader({ idempotent: false, topic: h.topic, partition: h.partition, acks: '1', batchStart: 0, batchEnd: 0, recordCount: count });
  return { chunks: [header, ...kept], count, lastOffset };
}

/**
 * A batch encoded without a topic (from a template of another format) with `topic` and
 * `partition` written into its header and every record: what a reader's handler sends.
 */
export function retopicBatch(payload: Buffer, topic: string, partition: number): Buffer[] {
  const b = decodeBatch(payload, { emptyTopic: true });
  if (!b.ok) throw new QuartetError('corrupt_batch', `cursus batch: ${b.reason}`);
  return encodeBatch({ ...b.value, topic, partition, records: b.value.records.map((r) => ({ ...r, topic, partition })) });
}

/**
 * What stamping a CBV2 batch needs besides its bytes (AppendRequest.stampInput), made by
 * cursusAppendRequest: where the batch's partition fields and records lie, and the partition.
 */
export class CursusStampInput {
  constructor(
    readonly layout: BatchLayout,
    readonly spans: ReadonlyArray<[number, number]>,
    readonly partition: number,
  ) {}
}

/**
 * BatchFormatCodec.stamp. A batch from cursusAppendRequest gets its partition (header and every
 * record) and consecutive offsets from the assigned one. Any other CBV2 batch (written whole, as
 * encode writes them) keeps its partition and the gaps between its records' offsets, moved so that
 * its first record is at the assigned offset.
 */
function stampCursusBatch(request: AppendRequest, assigned: AppendStamp): void {
  const p = request.payload;
  const input = request.stampInput;
  if (input instanceof CursusStampInput) {
    stampBatch(p, input.layout, input.spans, input.partition, assigned.baseOffset);
    return;
  }
  const layout = readBatchLayout(p, { emptyTopic: true });
  const spans = layout.ok ? recordSpans(p, layout.value) : layout;
  if (!layout.ok || !spans.ok) throw new QuartetError('corrupt_batch', `cursus batch to append: ${spans.ok ? '' : spans.reason}`);
  const topicLength = layout.value.topicBytes.length;
  const first = spans.value[0];
  if (first === undefined) return;
  const shift = assigned.baseOffset - recordOffsetAt(p, first[0], topicLength);
  if (shift === 0) return;
  for (const [start] of spans.value) writeRecordOffsetAt(p, start, topicLength, recordOffsetAt(p, start, topicLength) + shift);
}

export interface CursusAppendOptions {
  /** Stamped into the batch header and every record. */
  partition: number;
  /** The broker's clock (ms): the batch's time until the log sets it to the append time. */
  now: number;
  /** The core producer the batch is appended as (idempotent or transactional); none when absent. */
  producer?: { producerId: number; producerEpoch: number; baseSequence: number };
  /** Envelope flags (BatchFlags): transactional, control. */
  flags?: number;
}

/**
 * The log AppendRequest for a CBV2 batch of at least one record (a PUBLISH, or one the broker
 * built): format cursus, one offset per record, the append time as the batch's time (records keep
 * their own timestamps; one without is read with the append time, docs §9.1). The payload is the
 * batch bytes themselves (no copy; the records are not looked at); the codec's stamp writes the
 * partition and the offsets in place.
 */
export function cursusAppendRequest(bytes: Buffer, options: CursusAppendOptions): Decoded<AppendRequest> {
  const layout = readBatchLayout(bytes);
  if (!layout.ok) return layout;
  const spans = recordSpans(bytes, layout.value);
  if (!spans.ok) return spans;
  if (spans.value.length === 0) return { ok: false, reason: 'a batch to append needs at least one record' };
  const producer = options.producer;
  return {
    ok: true,
    value: {
      format: BatchFormat.cursus,
      recordCount: spans.value.length,
      firstTimestamp: options.now,
      maxTimestamp: options.now,
      producerId: producer?.producerId ?? -1,
      producerEpoch: producer?.producerEpoch ?? -1,
      baseSequence: producer?.baseSequence ?? -1,
      flags: options.flags ?? 0,
      logAppendTime: true,
      payload: bytes,
      stampInput: new CursusStampInput(layout.value, spans.value, options.partition),
    },
  };
}

export const cursusBatchFormatCodec: BatchFormatCodec = {
  format: BatchFormat.cursus,
  stamp: stampCursusBatch,
  decode,
  encode,
  messageCount,
  slice,
};
