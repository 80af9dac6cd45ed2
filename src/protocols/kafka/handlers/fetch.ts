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
//   Batches of other formats are transcoded to RecordBatch v2 (the read service, core/reads.ts,
//   reads every partition: this handler sets the budgets and builds the reply).
// - Memory (core/memory-budget.ts): max_bytes is cut to what is left of the broker's memory
//   budget (at least one batch is still returned), and the response's buffers count against the
//   budget until it is written: consumers that do not read hold at most the budget together.
// - Authorization (../access.ts): the partitions of a topic the SASL user may not read (Iggy
//   poll_messages) answer TOPIC_AUTHORIZATION_FAILED (29), with no records.

import type { PartitionReader } from '../../../core/reads.js';
import { bufferedBytes } from '../../../core/memory-budget.js';
import { leaseReleasedAfter, type BufferLease } from '../../../base/buffer-pool.js';
import { BatchFormat } from '../../../base/batch.js';
import { fileSliceBytesMin } from '../../file-replies.js';
import { kafkaAccessOf, type KafkaAccess } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import type { FetchRequest, FetchResponseInput } from '../codec/messages/fetch.js';
import { kafkaCodeOf } from '../errors.js';
import { leaderEpochError, lookupPartition, settledWithin } from '../topics.js';
import { transactionHooksOf } from '../transactions.js';
import { throttleRequest } from '../quotas.js';
import { defineHandler, type KafkaFrontend, type KafkaRequestContext } from './types.js';

export { transcodeWholeRecordsMax } from '../../../core/reads.js';

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

function withoutRecords(responses: ReadResult['responses']): ReadResult['responses'] {
  return responses.map((t) => ({ ...t, partitions: (t.partitions ?? []).map((p) => ({ ...p, records: emptyRecords })) }));
}

interface Target {
  topicIndex: number;
  partitionIndex: number;
  partition: number;
  fetchOffset: number;
  partitionMaxBytes: number;
  reader: PartitionReader | null;
  errorCode: number;
}

interface ReadResult {
  responses: NonNullable<FetchResponseInput['responses']>;
  bytes: number;
  /** The records' bytes held in buffers (file slices hold none): what the memory budget counts. */
  heldBytes: number;
  /** Some partition has an error: answer at once (Kafka does not long-poll then). */
  failed: boolean;
}

/**
 * Reads every partition in request order (KIP-74): each within its partition_max_bytes and what
 * max_bytes leaves; the first partition that returns data returns at least one whole batch. With
 * `fileSlices`, large Kafka batches come back as file ranges (sent with sendfile).
 */
async function readAll(frontend: KafkaFrontend, request: FetchRequest, targets: Target[], maxBytes: number, lease: BufferLease | undefined, fileSlices: boolean): Promise<ReadResult> {
  const rc = request.isolationLevel === readCommitted;
  // Transactions seam: the coordinator's LSO and aborted list unless the frontend carries its own hooks.
  const txns = transactionHooksOf(frontend);
  const responses = request.topics.map((t) => ({ topic: t.topic, partitions: new Array<PartitionOut>(t.partitions.length) }));
  let bytes = 0;
  let heldBytes = 0;
  let failed = false;
  for (const target of targets) {
    const out = responses[target.topicIndex]!.partitions;
    if (target.reader === null) {
      out[target.partitionIndex] = partitionError(target.partition, target.errorCode, rc);
      failed = true;
      continue;
    }
    if (target.reader.isClosed()) {
      // Closed and not replaced (a purge that could not open the new log; the broker closing):
      // retriable, and no long poll on it (a closed log wakes every wait at once).
      out[target.partitionIndex] = partitionError(target.partition, ErrorCode.KAFKA_STORAGE_ERROR, rc);
      failed = true;
      continue;
    }
    const read = await target.reader.readBatches({
      offset: target.fetchOffset,
      isolation: rc ? 'read_committed' : 'read_uncommitted',
      format: BatchFormat.kafka,
      bytesMax: Math.min(target.partitionMaxBytes, maxBytes - bytes),
      firstBatchWhole: bytes === 0,
      ...(lease ? { lease } : {}),
      ...(fileSlices ? { fileSlicesMin: fileSliceBytesMin } : {}),
      transactions: txns,
    });
    const { position } = read;
    const base = { partitionIndex: target.partition, highWatermark: position.highWatermark, lastStableOffset: position.lastStableOffset, logStartOffset: position.logStartOffset, preferredReadReplica: -1 };
    if (read.outOfRange) {
      out[target.partitionIndex] = { ...base, errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, abortedTransactions: rc ? [] : null, records: emptyRecords };
      failed = true;
      continue;
    }
    if (read.failure !== null) failed = true;
    bytes += read.bytes;
    heldBytes += bufferedBytes(read.chunks ?? []);
    const errorCode = read.failure === null ? ErrorCode.NONE : kafkaCodeOf(read.failure.error);
    const aborted = read.abortedTransactions === null ? null : read.abortedTransactions.map((a) => ({ producerId: a.producerId, firstOffset: a.firstOffset }));
    // The views go out as separate chunks behind one length prefix: no copy (codec bytesChunks).
    out[target.partitionIndex] = { ...base, errorCode, abortedTransactions: aborted, records: read.chunks ?? emptyRecords };
  }
  return { responses, bytes, heldBytes, failed };
}

/** Points the target at its partition's current log, or at the error to answer (access first). */
function resolveTarget(frontend: KafkaFrontend, access: KafkaAccess, topicName: string, target: Target): void {
  if (!access.topicNamed(topicName, 'read')) {
    Object.assign(target, { reader: null, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED });
    return;
  }
  const found = lookupPartition(frontend.broker, topicName, target.partition);
  target.reader = found.ok ? frontend.broker.reads.open(found.topic, target.partition) : null;
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
  let moved = false;
  // Looked up in this turn of the event loop, and no purge waited for since: the logs are current.
  let fresh = lookedUpNow;
  // One bound for the whole request, however many of its partitions the purge holds.
  const deadline = Date.now() + (frontend.settings.purgeWaitMsMax);
  for (const target of targets) {
    if (target.reader === null) continue;
    const purging = target.reader.purgeInProgress();
    if (purging === undefined && fresh) continue;
    if (purging !== undefined) {
      fresh = false;
      if (!(await settledWithin(purging, Math.max(0, deadline - Date.now())))) {
        Object.assign(target, { reader: null, errorCode: ErrorCode.KAFKA_STORAGE_ERROR });
        moved = true;
        continue;
      }
    }
    if (target.reader.isCurrentLog()) continue;
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
    const startedMs = frontend.broker.clientQuotas.active ? frontend.clock.now() : 0;
    let waitedMs = 0;
    if (version < 4) return errorResponse(request, ErrorCode.UNSUPPORTED_VERSION);
    if (request.sessionId !== 0) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND, sessionId: 0, responses: [] };
    }
    const access = kafkaAccessOf(frontend, context.session);
    const targets: Target[] = [];
    request.topics.forEach((t, topicIndex) => {
      t.partitions.forEach((p, partitionIndex) => {
        const target: Target = { topicIndex, partitionIndex, partition: p.partition, fetchOffset: p.fetchOffset, partitionMaxBytes: p.partitionMaxBytes, reader: null, errorCode: ErrorCode.NONE };
        resolveTarget(frontend, access, t.topic, target);
        if (target.reader !== null) {
          const epochError = leaderEpochError(p.currentLeaderEpoch, frontend.broker.leadership(target.reader.topic, p.partition).leaderEpoch);
          if (epochError !== ErrorCode.NONE) Object.assign(target, { reader: null, errorCode: epochError });
        }
        targets.push(target);
      });
    });
    await followPurges(frontend, access, request, targets, true);
    const responseBytesMax = frontend.settings.fetchResponseBytesMax ?? Number.MAX_SAFE_INTEGER;
    const maxBytes = Math.max(1, Math.min(request.maxBytes, responseBytesMax));
    const minBytes = Math.max(0, request.minBytes);
    const waitMs = Math.max(0, Math.min(request.maxWaitMs, frontend.settings.fetchWaitMsMax));
    const deadline = Date.now() + waitMs;
    const readersOf = (): PartitionReader[] => targets.flatMap((t) => (t.reader ? [t.reader] : []));
    let readers = readersOf();
    // Reads go into pooled buffers, handed back once the response (whose records are views of
    // them) has been written to the socket; without that hook they are fresh buffers left to GC.
    const lease = leaseReleasedAfter(context.afterResponseWritten);
    const fileSlices = context.fileSlices === true;
    // The broker's memory budget: each read is cut to what is left of it (at least one batch),
    // and the response's buffers count against it until the response is written.
    const reservation = frontend.broker.memoryBudget.reserve(0);
    if (context.afterResponseWritten !== undefined) context.afterResponseWritten(() => reservation.release());
    const read = async (): Promise<ReadResult> => {
      const limit = Math.max(1, reservation.grow(maxBytes));
      const read = await readAll(frontend, request, targets, limit, lease, fileSlices);
      reservation.settle(read.heldBytes);
      return read;
    };
    try {
      let result = await read();
      while (result.bytes < minBytes && !result.failed && frontend.fetchWaiters && !context.session.signal?.aborted) {
        const left = deadline - Date.now();
        if (left <= 0) break;
        const waitStartMs = frontend.clock.now();
        const woken = await frontend.fetchWaiters.waitForAppend(readers, left, context.session.signal);
        // Waiting for data is not handling time (request_percentage counts the work, as Kafka's does).
        waitedMs += frontend.clock.now() - waitStartMs;
        const purged = await followPurges(frontend, access, request, targets);
        if (purged) readers = readersOf();
        else if (!woken) break;
        result = await read();
      }
      if (frontend.broker.clientQuotas.active) {
        const throttleTimeMs = throttleRequest(context, 'consumer_byte_rate', result.bytes, startedMs + waitedMs);
        // Over quota: answered without records (Kafka's getThrottledResponse); the position stays.
        if (throttleTimeMs > 0) return { throttleTimeMs, errorCode: ErrorCode.NONE, sessionId: 0, responses: withoutRecords(result.responses) };
      }
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, sessionId: 0, responses: result.responses };
    } finally {
      // No hook: the buffers are fresh ones left to GC, not held by a write.
      if (context.afterResponseWritten === undefined) reservation.release();
    }
  },
});
