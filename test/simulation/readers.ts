// How the simulated consumers read a partition: a Kafka Fetch decoded as a client decodes it
// (read_committed drops aborted transactions' batches with the response's aborted list, as
// librdkafka does) and an Iggy PollMessages, each returning (offset, record id) pairs.

import { ErrorCode } from '../../src/protocols/kafka/codec/errors.js';
import { batchRecords, readBatchHeader, splitBatches } from '../../src/protocols/kafka/codec/record-batch.js';
import { fetchHandler } from '../../src/protocols/kafka/handlers/fetch.js';
import { ConsumerKind, PollingKind, numericId, parsePolledBatches, stringId } from '../../src/protocols/iggy/codec/index.js';
import { idOf } from './model.js';
import { CommandCode, type SimNode } from './node.js';

const fetchBytesMax = 1 << 20;
/** The Iggy consumer the reads poll as (never one whose offsets are checked). */
const pollConsumerId = 8;

export interface RecordRead {
  offset: number;
  id: string;
}

export interface FetchRead {
  errorCode: number;
  records: RecordRead[];
  batches: Array<{ base: number; last: number; control: boolean }>;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
}

/** A read returned bytes that do not decode: an invariant broken even under a fault. */
export class BadRead extends Error {
  override name = 'BadRead';
}

export async function fetchRecords(node: SimNode, topic: string, partition: number, offset: number, isolationLevel: number): Promise<FetchRead> {
  const r = await node.kafkaCall(fetchHandler, 12, {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 1,
    maxBytes: fetchBytesMax,
    isolationLevel,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition, fetchOffset: offset, partitionMaxBytes: fetchBytesMax, currentLeaderEpoch: -1, logStartOffset: -1, lastFetchedEpoch: -1 }] }],
    forgottenTopicsData: [],
    rackId: '',
  });
  const p = r.responses[0]!.partitions[0]!;
  const out: FetchRead = { errorCode: p.errorCode, records: [], batches: [], highWatermark: p.highWatermark, lastStableOffset: p.lastStableOffset, logStartOffset: p.logStartOffset };
  if (p.errorCode !== ErrorCode.NONE || p.records === null) return out;
  const split = splitBatches(p.records);
  if (split.reason !== null) throw new BadRead(`fetch of ${topic}/${partition} returned a bad batch: ${split.reason}`);
  const aborted = [...(p.abortedTransactions ?? [])].sort((a, b) => a.firstOffset - b.firstOffset);
  const active = new Set<number>();
  for (const batch of split.batches) {
    const h = readBatchHeader(batch);
    const last = h.baseOffset + h.lastOffsetDelta;
    out.batches.push({ base: h.baseOffset, last, control: h.isControl });
    if (last < offset) continue;
    while (aborted.length > 0 && aborted[0]!.firstOffset <= last) active.add(aborted.shift()!.producerId);
    const recs = batchRecords(batch, h);
    if (!recs.ok) throw new BadRead(`fetch of ${topic}/${partition} returned undecodable records: ${recs.reason}`);
    if (h.isControl) {
      // Control record key: version int16, type int16 (0 abort, 1 commit).
      if (isolationLevel === 1 && recs.value[0]?.key?.readInt16BE(2) === 0) active.delete(h.producerId);
      continue;
    }
    if (isolationLevel === 1 && h.isTransactional && active.has(h.producerId)) continue;
    for (const rec of recs.value) {
      const at = h.baseOffset + rec.offsetDelta;
      if (at >= offset) out.records.push({ offset: at, id: idOf(rec.value) });
    }
  }
  return out;
}

/** An Iggy poll by offset (read_committed, as every Iggy poll); throws on an error status. */
export async function pollRecords(node: SimNode, topic: string, partition: number, offset: number, count: number): Promise<RecordRead[]> {
  const r = await node.iggyCall(CommandCode.pollMessages, {
    consumer: { kind: ConsumerKind.consumer, id: numericId(pollConsumerId) },
    streamId: stringId('default'),
    topicId: stringId(topic),
    partitionId: partition,
    strategy: { kind: PollingKind.offset, value: BigInt(offset) },
    count,
    autoCommit: false,
  });
  if (!r.ok) throw new Error(`iggy poll of ${topic}/${partition} failed with ${r.code}`);
  const buffers = r.value.batches.filter((b): b is Buffer => Buffer.isBuffer(b));
  if (buffers.length === 0) return [];
  const parsed = parsePolledBatches(Buffer.concat(buffers));
  if (!Array.isArray(parsed)) throw new BadRead(`iggy poll of ${topic}/${partition} returned a bad batch: ${parsed.reason}`);
  return parsed.flatMap((b) => b.frames.map((f) => ({ offset: Number(b.header.baseOffset) + f.offsetDelta, id: idOf(f.payload) })));
}
