// Fetch (key 1), v0-12. apache/kafka FetchRequest.json / FetchResponse.json.
//
// FetchRequest => ReplicaId MaxWaitMs MinBytes MaxBytes(v3+) IsolationLevel(v4+) SessionId(v7+)
//   SessionEpoch(v7+) Topics[Topic Partitions[Partition CurrentLeaderEpoch(v9+) FetchOffset
//   LastFetchedEpoch(v12+) LogStartOffset(v5+) PartitionMaxBytes]] ForgottenTopicsData(v7+)
//   RackId(v11+)
// FetchResponse => ThrottleTimeMs(v1+) ErrorCode(v7+) SessionId(v7+) Responses[Topic
//   Partitions[PartitionIndex ErrorCode HighWatermark LastStableOffset(v4+) LogStartOffset(v5+)
//   AbortedTransactions(v4+)[ProducerId FirstOffset] PreferredReadReplica(v11+) Records]]
//
// - v0-3 would need message format 0/1 (Kafka down-converts; 4.0 dropped them, KIP-896): they are
//   advertised (min 0, kafka-broker-notes.md §3.1) and answered UNSUPPORTED_VERSION per partition.
// - Long poll: when fewer than min_bytes are found, wait up to max_wait_ms (capped by
//   settings.fetchWaitMsMax) for an append to any requested partition, then read again.
// - Sizes (KIP-74): partitions are filled in request order within max_bytes and each
//   partition_max_bytes; the first partition that returns data returns at least one whole batch
//   even if it is larger than both limits; later partitions never push the response over max_bytes.
// - read_committed (isolation_level 1): records up to the last stable offset, and an
//   aborted_transactions list (empty, not null, when there are none). The LSO and the aborted list
//   come from `frontend.transactions` when set, else LSO = high watermark.
// - Incremental fetch sessions (KIP-227) are not kept: every answer has session_id 0, which tells
//   the client to send full fetches; a non-zero session id is FETCH_SESSION_ID_NOT_FOUND.
// - Records are the stored RecordBatch bytes (one zero-copy view when a partition returns one
//   batch; the batch views go out as separate chunks behind one length prefix, never joined).
//   Batches of other formats are transcoded to RecordBatch v2 through the format registry.
// - Authorization (../access.ts): the partitions of a topic the SASL user may not read (Iggy
//   poll_messages) answer TOPIC_AUTHORIZATION_FAILED (29), with no records.

import assert from 'node:assert/strict';
import type { Topic } from '../../../core/catalog.js';
import { defaultFormatRegistry } from '../../../log/formats.js';
import { leaseReleasedAfter, type BufferLease } from '../../../base/buffer-pool.js';
import { BatchFormat, type FileSlice, type PartitionLog, type ReadOptions, type StoredBatch } from '../../../log/types.js';
import { fileSliceBytesMin } from '../../file-replies.js';
import { kafkaAccessOf, type KafkaAccess } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import { kafkaBatchFormatCodec } from '../codec/kafka-format.js';
import type { FetchRequest, FetchResponseInput } from '../codec/messages/fetch.js';
import { kafkaCodeOf } from '../errors.js';
import { lookupPartition, settledWithin } from '../topics.js';
import { transactionHooksOf } from '../transactions.js';
import { defineHandler, type KafkaFrontend, type KafkaRequestContext } from './types.js';

type PartitionOut = NonNullable<NonNullable<FetchResponseInput['responses']>[number]['partitions']>[number];

export const readCommitted = 1;

const emptyRecords = Buffer.alloc(0);

/**
 * A partition answered with an error carries empty records, as Kafka's (MemoryRecords.EMPTY), not
 * null: librdkafka refuses the whole response over a null records field ("invalid MessageSetSize
 * -1") and fetches it again in a loop, never seeing the error (an OFFSET_OUT_OF_RANGE it would
 * reset on).
 */
function partitionError(partitionIndex: number, errorCode: number, readCommittedIsolation: boolean): PartitionOut {
  return {
    partitionIndex,
    errorCode,
    highWatermark: -1,
    lastStableOffset: -1,
    logStartOffset: -1,
    abortedTransactions: readCommittedIsolation ? [] : null,
    preferredReadReplica: -1,
    records: emptyRecords,
  };
}

function errorResponse(request: FetchRequest, errorCode: number): FetchResponseInput {
  const rc = request.isolationLevel === readCommitted;
  return {
    throttleTimeMs: 0,
    errorCode: ErrorCode.NONE,
    sessionId: 0,
    responses: request.topics.map((t) => ({ topic: t.topic, partitions: t.partitions.map((p) => partitionError(p.partition, errorCode, rc)) })),
  };
}

/** A batch of another format with more records than this is transcoded in part (transcodedRecords). */
export const transcodeWholeRecordsMax = 4096;

/**
 * One Kafka RecordBatch v2 per stored batch: verbatim for Kafka batches (their file range when the
 * read returned one), transcoded otherwise (which needs the whole payload, never a file slice).
 * A batch of more than transcodeWholeRecordsMax records (an Iggy batch may hold a million) is
 * transcoded from `fromOffset` on, as many records as about `budgetBytes` of it hold (at least
 * one): the consumer's next fetch continues inside it. Decoding all of it for each fetch would
 * cost seconds of the event loop and hundreds of MB.
 */
export function kafkaBytesOf(batch: StoredBatch, fromOffset = batch.baseOffset, budgetBytes = Infinity): Buffer | FileSlice | null {
  if (batch.format === BatchFormat.kafka) return batch.file ?? batch.payload;
  assert.ok(batch.file === undefined, 'a batch to transcode must be read whole');
  const codec = defaultFormatRegistry.get(batch.format);
  if (codec === undefined) return null;
  if (codec.decodeRange === undefined || batch.recordCount <= transcodeWholeRecordsMax) {
    const records = codec.decode(batch);
    return records.length === 0 ? null : kafkaBatchFormatCodec.encode(records, batch.baseOffset, batch).payload;
  }
  const bytesPerRecord = Math.max(1, batch.payload.length / batch.recordCount);
  const countMax = Math.min(transcodeWholeRecordsMax, Math.max(1, Math.ceil(budgetBytes / bytesPerRecord)));
  const records = codec.decodeRange(batch, Math.max(fromOffset, batch.baseOffset), countMax);
  return records.length === 0 ? null : kafkaBatchFormatCodec.encode(records, records[0]!.offset, batch).payload;
}

interface Target {
  topicIndex: number;
  partitionIndex: number;
  partition: number;
  fetchOffset: number;
  partitionMaxBytes: number;
  topic: Topic | null;
  log: PartitionLog | null;
  errorCode: number;
}

interface ReadResult {
  responses: NonNullable<FetchResponseInput['responses']>;
  bytes: number;
  /** Some partition has an error: answer at once (Kafka does not long-poll then). */
  failed: boolean;
}

/**
 * Reads for one partition. With `fileSlicesMin`, large Kafka batches come back as file ranges (sent
 * with sendfile); large batches of other formats are read from their slice, to be transcoded.
 */
async function readBatches(log: PartitionLog, offset: number, options: ReadOptions): Promise<StoredBatch[]> {
  const batches = await log.read(offset, options);
  for (let i = 0; i < batches.length; i++) {
    const b = batches[i]!;
    if (b.file !== undefined && b.format !== BatchFormat.kafka) batches[i] = await log.wholePayload(b, options.lease);
  }
  return batches;
}

async function readAll(frontend: KafkaFrontend, request: FetchRequest, targets: Target[], maxBytes: number, lease: BufferLease | undefined, fileSlices: boolean): Promise<ReadResult> {
  const rc = request.isolationLevel === readCommitted;
  // Transactions seam: the coordinator's LSO and aborted list unless the frontend carries its own hooks.
  const txns = transactionHooksOf(frontend);
  const responses = request.topics.map((t) => ({ topic: t.topic, partitions: new Array<PartitionOut>(t.partitions.length) }));
  let bytes = 0;
  let failed = false;
  for (const target of targets) {
    const out = responses[target.topicIndex]!.partitions;
    if (target.log === null || target.topic === null) {
      out[target.partitionIndex] = partitionError(target.partition, target.errorCode, rc);
      failed = true;
      continue;
    }
    if (target.log.isClosed()) {
      // Closed and not replaced (a purge that could not open the new log; the broker closing):
      // retriable, and no long poll on it (a closed log wakes every wait at once).
      out[target.partitionIndex] = partitionError(target.partition, ErrorCode.KAFKA_STORAGE_ERROR, rc);
      failed = true;
      continue;
    }
    const stats = target.log.stats();
    const highWatermark = stats.highWatermark;
    const lastStableOffset = txns ? txns.lastStableOffset(target.topic, target.partition) : highWatermark;
    const base = { partitionIndex: target.partition, highWatermark, lastStableOffset, logStartOffset: stats.logStartOffset, preferredReadReplica: -1 };
    if (target.fetchOffset < stats.logStartOffset || target.fetchOffset > stats.nextOffset) {
      out[target.partitionIndex] = { ...base, errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, abortedTransactions: rc ? [] : null, records: emptyRecords };
      failed = true;
      continue;
    }
    const limit = rc ? lastStableOffset : highWatermark;
    const budget = Math.min(target.partitionMaxBytes, maxBytes - bytes);
    let records: Array<Buffer | FileSlice> | null = null;
    let errorCode: number = ErrorCode.NONE;
    if (target.fetchOffset < limit && (budget > 0 || bytes === 0)) {
      try {
        const options: ReadOptions = { maxBytes: Math.max(budget, 1), maxOffset: limit, ...(lease ? { lease } : {}), ...(lease && fileSlices ? { fileSlicesMin: fileSliceBytesMin } : {}) };
        const batches = await readBatches(target.log, target.fetchOffset, options);
        records = joinBatches(batches, bytes === 0 ? Infinity : budget, target.fetchOffset, Math.max(budget, 1));
      } catch (err) {
        errorCode = kafkaCodeOf(err);
        failed = true;
      }
    }
    let size = 0;
    for (const part of records ?? []) size += part.length;
    bytes += size;
    const aborted = rc ? (txns && size > 0 ? txns.abortedTransactions(target.topic, target.partition, target.fetchOffset, target.fetchOffset + Number.MAX_SAFE_INTEGER) : []) : null;
    out[target.partitionIndex] = { ...base, errorCode, abortedTransactions: aborted, records: records ?? emptyRecords };
  }
  return { responses, bytes, failed };
}

/**
 * The batches as one records section, stopping before the batch that would pass `limit` (the first
 * always goes in). A large batch of another format is transcoded from `fetchOffset`, about
 * `budget` bytes of it (kafkaBytesOf).
 */
function joinBatches(batches: StoredBatch[], limit: number, fetchOffset: number, budget: number): Array<Buffer | FileSlice> | null {
  const parts: Array<Buffer | FileSlice> = [];
  let total = 0;
  for (const batch of batches) {
    const bytes = kafkaBytesOf(batch, fetchOffset, budget);
    if (bytes === null) continue;
    if (parts.length > 0 && total + bytes.length > limit) break;
    if (parts.length === 0 && bytes.length > limit) break;
    parts.push(bytes);
    total += bytes.length;
  }
  // The views go out as separate chunks behind one length prefix: no copy (codec bytesChunks).
  return parts.length === 0 ? null : parts;
}

/** Points the target at its partition's current log, or at the error to answer (access first). */
function resolveTarget(frontend: KafkaFrontend, access: KafkaAccess, topicName: string, target: Target): void {
  if (!access.topicNamed(topicName, 'read')) {
    Object.assign(target, { topic: null, log: null, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED });
    return;
  }
  const found = lookupPartition(frontend.broker, topicName, target.partition);
  target.topic = found.ok ? found.topic : null;
  target.log = found.ok ? found.log : null;
  target.errorCode = found.ok ? ErrorCode.NONE : found.errorCode === ErrorCode.INVALID_TOPIC_EXCEPTION ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : found.errorCode;
}

/**
 * Keeps the targets on their partitions' current logs: an Iggy purge (Broker.partitionsReset)
 * closes a topic's logs and opens new ones, empty from offset 0. A purge under way is waited for
 * (as Broker.read does; KAFKA_STORAGE_ERROR if it takes over purgeWaitMsMax), and a target whose
 * log was replaced, now or while the fetch waited, is looked up again; its fetch offset is then
 * checked against the new log like any other. True when some target changed. `lookedUpNow`: the
 * targets were looked up in this turn of the event loop, so only a purge under way can have
 * replaced their logs (no lookups again).
 */
async function followPurges(frontend: KafkaFrontend, access: KafkaAccess, request: FetchRequest, targets: Target[], lookedUpNow = false): Promise<boolean> {
  const broker = frontend.broker;
  let moved = false;
  // Looked up in this turn of the event loop, and no purge waited for since: the logs are current.
  let fresh = lookedUpNow;
  // One bound for the whole request, however many of its partitions the purge holds.
  const deadline = Date.now() + (frontend.settings.purgeWaitMsMax);
  for (const target of targets) {
    if (target.topic === null || target.log === null) continue;
    const purging = broker.purgeInProgress(target.topic);
    if (purging === undefined && fresh) continue;
    if (purging !== undefined) {
      fresh = false;
      if (!(await settledWithin(purging, Math.max(0, deadline - Date.now())))) {
        Object.assign(target, { topic: null, log: null, errorCode: ErrorCode.KAFKA_STORAGE_ERROR });
        moved = true;
        continue;
      }
    }
    if (broker.isCurrentLog(target.topic, target.partition, target.log)) continue;
    // Looked up by name again, access included: the name may now be another topic's.
    resolveTarget(frontend, access, request.topics[target.topicIndex]!.topic, target);
    moved = true;
  }
  return moved;
}

export const fetchHandler = defineHandler({
  apiKey: ApiKey.Fetch,
  minVersion: 0,
  maxVersion: 12,
  errorResponse: (request, errorCode) => errorResponse(request, errorCode),
  async handle(request, context: KafkaRequestContext) {
    const { frontend, version } = context;
    if (version < 4) return errorResponse(request, ErrorCode.UNSUPPORTED_VERSION);
    if (request.sessionId !== 0) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND, sessionId: 0, responses: [] };
    }
    const access = kafkaAccessOf(frontend, context.session);
    const targets: Target[] = [];
    request.topics.forEach((t, topicIndex) => {
      t.partitions.forEach((p, partitionIndex) => {
        const target: Target = { topicIndex, partitionIndex, partition: p.partition, fetchOffset: p.fetchOffset, partitionMaxBytes: p.partitionMaxBytes, topic: null, log: null, errorCode: ErrorCode.NONE };
        resolveTarget(frontend, access, t.topic, target);
        if (target.log !== null && p.currentLeaderEpoch > 0) Object.assign(target, { topic: null, log: null, errorCode: ErrorCode.UNKNOWN_LEADER_EPOCH });
        targets.push(target);
      });
    });
    await followPurges(frontend, access, request, targets, true);
    const responseBytesMax = frontend.settings.fetchResponseBytesMax ?? Number.MAX_SAFE_INTEGER;
    const maxBytes = Math.max(1, Math.min(request.maxBytes, responseBytesMax));
    const minBytes = Math.max(0, request.minBytes);
    const waitMs = Math.max(0, Math.min(request.maxWaitMs, frontend.settings.fetchWaitMsMax));
    const deadline = Date.now() + waitMs;
    const logsOf = (): PartitionLog[] => targets.flatMap((t) => (t.log ? [t.log] : []));
    let logs = logsOf();
    // Reads go into pooled buffers, handed back once the response (whose records are views of
    // them) has been written to the socket; without that hook they are fresh buffers left to GC.
    const lease = leaseReleasedAfter(context.afterResponseWritten);
    const fileSlices = context.fileSlices === true;
    let result = await readAll(frontend, request, targets, maxBytes, lease, fileSlices);
    while (result.bytes < minBytes && !result.failed && frontend.fetchWaiters && !context.session.signal?.aborted) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      const woken = await frontend.fetchWaiters.waitForAppend(logs, left, context.session.signal);
      const purged = await followPurges(frontend, access, request, targets);
      if (purged) logs = logsOf();
      else if (!woken) break;
      result = await readAll(frontend, request, targets, maxBytes, lease, fileSlices);
    }
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, sessionId: 0, responses: result.responses };
  },
});
