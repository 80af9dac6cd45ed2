// 0xBA7C batches to CBV2 and back (docs/protocols/cursus-v1.md "Batches"). v1 has no presence
// bitmap, so a v1 record's optional parts become CBV2 fields by one rule: a text is present when
// not empty, a number when not 0, and seq_num on every record of an idempotent batch. A CBV2
// record read for a v1 client loses what v1 cannot carry (timestamp, event_id, transaction and
// control fields); a control record (a transaction marker) goes out with the payload v1 gives its
// markers, `__cursus_txn_control_marker__`, which the v1 SDKs skip.

import { decodeBatch, encodeBatch, topicBytesMax, type Acks, type CursusBatch, type CursusRecord } from '../codec/batch.js';
import { formatV1Error } from './errors.js';
import type { V1Batch, V1Record } from './batch.js';
import { encodeV1Batch } from './batch.js';
import { v2EpochOf } from './epochs.js';

/** The payload v1 writes in a transaction marker's record. */
export const v1ControlMarkerPayload = Buffer.from('__cursus_txn_control_marker__', 'utf8');

const safeMax = BigInt(Number.MAX_SAFE_INTEGER);

/** A conversion that failed, with the v1 error line the client gets. */
export type Converted<T> = { ok: true; value: T } | { ok: false; line: string };

const decodeFailed = (reason: string): { ok: false; line: string } => ({ ok: false, line: formatV1Error('batch_decode_failed', [['reason', reason]]) });

function toSafe(v: bigint, what: string): number | string {
  return v > safeMax || v < -safeMax ? `${what} ${v} is beyond what Wire v2 carries (2^53 - 1)` : Number(v);
}

/**
 * A v1 batch as the CBV2 request a v2 PUBLISH handler takes, with its encoded bytes. The acks are
 * read as v1 reads them (case-insensitive, empty means "1"); what CBV2 cannot hold (a topic over
 * 249 bytes, a partition below -1, a number beyond 2^53 - 1) is refused as undecodable, except
 * producer epochs, which are mapped (epochs.ts).
 */
export function v1BatchToCbv2(b: V1Batch): Converted<{ value: CursusBatch; bytes: Buffer }> {
  const acksText = b.acks.toString('utf8');
  const acks = acksText === '' ? '1' : acksText.toLowerCase();
  if (!['0', '1', '-1', 'all'].includes(acks)) return { ok: false, line: formatV1Error('invalid_acks', [['value', acksText]]) };
  if (b.topic.length > topicBytesMax) return decodeFailed(`topic of ${b.topic.length} bytes (Wire v2 topics have at most ${topicBytesMax})`);
  if (b.partition < -1) return decodeFailed(`partition ${b.partition}`);
  const topic = b.topic.toString('utf8');
  const batchStart = toSafe(b.batchStart, 'batch start');
  const batchEnd = toSafe(b.batchEnd, 'batch end');
  if (typeof batchStart === 'string') return decodeFailed(batchStart);
  if (typeof batchEnd === 'string') return decodeFailed(batchEnd);
  const records: CursusRecord[] = [];
  for (let i = 0; i < b.records.length; i++) {
    const r = b.records[i]!;
    const seqNum = toSafe(r.seqNum, `message[${i}] seqNum`);
    const epoch = v2EpochOf(r.epoch);
    const aggregateVersion = toSafe(r.aggregateVersion, `message[${i}] aggregate version`);
    if (typeof seqNum === 'string') return decodeFailed(seqNum);
    if (typeof aggregateVersion === 'string') return decodeFailed(aggregateVersion);
    const rec: CursusRecord = { topic, partition: b.partition, offset: 0, payload: r.payload };
    if (r.producerId.length > 0) rec.producerId = r.producerId.toString('utf8');
    if (epoch !== 0) rec.producerEpoch = epoch;
    if (b.idempotent || seqNum !== 0) rec.seqNum = seqNum;
    if (r.key.length > 0) rec.key = r.key;
    if (r.eventType.length > 0) rec.eventType = r.eventType.toString('utf8');
    if (r.schemaVersion !== 0) rec.schemaVersion = r.schemaVersion;
    if (aggregateVersion !== 0) rec.aggregateVersion = aggregateVersion;
    if (r.metadata.length > 0) rec.metadata = r.metadata.toString('utf8');
    records.push(rec);
  }
  const value: CursusBatch = { idempotent: b.idempotent, topic, partition: b.partition, acks: acks as Acks, batchStart, batchEnd, recordCount: records.length, records };
  return { ok: true, value: { value, bytes: Buffer.concat(encodeBatch(value)) } };
}

function utf8(s: string | undefined): Buffer {
  return s === undefined || s === '' ? Buffer.alloc(0) : Buffer.from(s, 'utf8');
}

function isControl(r: CursusRecord): boolean {
  return r.controlBatchType !== undefined || r.transactionMarker !== undefined;
}

/** Where a converted CONSUME batch leaves the reader: the offset after its last record, or null when empty. */
export interface V1BatchOut {
  chunks: Buffer[];
  nextOffset: number | null;
}

/** The records of a CBV2 batch from a v2 handler as v1 records, and the offset after the last one (null when empty). */
export function cbv2ToV1Records(chunks: readonly Buffer[]): Converted<{ records: V1Record[]; nextOffset: number | null }> {
  const p = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  const decoded = decodeBatch(p, { emptyTopic: true });
  if (!decoded.ok) return { ok: false, line: formatV1Error('command_failed', [['reason', `failed to encode batch: ${decoded.reason}`]]) };
  const records: V1Record[] = decoded.value.records.map((r) => ({
    offset: BigInt(r.offset),
    seqNum: BigInt(r.seqNum ?? 0),
    producerId: utf8(r.producerId),
    key: r.key ?? Buffer.alloc(0),
    epoch: BigInt(r.producerEpoch ?? 0),
    payload: isControl(r) ? v1ControlMarkerPayload : r.payload,
    eventType: utf8(r.eventType),
    schemaVersion: r.schemaVersion ?? 0,
    aggregateVersion: BigInt(r.aggregateVersion ?? 0),
    metadata: utf8(r.metadata),
  }));
  const last = decoded.value.records[decoded.value.records.length - 1];
  return { ok: true, value: { records, nextOffset: last === undefined ? null : last.offset + 1 } };
}

/**
 * v1 records as the 0xBA7C batch v1 sends: the topic the client asked for (a pattern, for a
 * wildcard CONSUME), its partition, acks "1", not idempotent. A record v1 cannot carry (a key or
 * producer id over 65,535 bytes) fails the reply as v1 fails to encode it.
 */
export function v1ReplyBatch(records: readonly V1Record[], topic: Buffer, partition: number): Converted<Buffer[]> {
  for (const r of records) {
    for (const [what, b] of [['producerID', r.producerId], ['key', r.key], ['eventType', r.eventType], ['metadata', r.metadata]] as const) {
      if (b.length > 0xffff) return { ok: false, line: formatV1Error('command_failed', [['reason', `failed to encode batch: ${what} too long: ${b.length} bytes`]]) };
    }
  }
  return { ok: true, value: encodeV1Batch({ topic, partition, acks: Buffer.from('1'), idempotent: false }, records) };
}

/** A CBV2 batch from a v2 handler (CONSUME, STREAM, READ_STREAM) as the 0xBA7C batch v1 sends (v1ReplyBatch). */
export function cbv2ToV1Batch(chunks: readonly Buffer[], topic: Buffer, partition: number): Converted<V1BatchOut> {
  const read = cbv2ToV1Records(chunks);
  if (!read.ok) return read;
  const batch = v1ReplyBatch(read.value.records, topic, partition);
  return batch.ok ? { ok: true, value: { chunks: batch.value, nextOffset: read.value.nextOffset } } : batch;
}
