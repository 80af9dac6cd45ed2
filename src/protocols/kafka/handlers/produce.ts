// Produce (key 0), v0-9. apache/kafka ProduceRequest.json / ProduceResponse.json.
//
// ProduceRequest => TransactionalId(v3+) Acks TimeoutMs
//   TopicData[Name PartitionData[Index Records]]
// ProduceResponse => Responses[Name PartitionResponses[Index ErrorCode BaseOffset
//   LogAppendTimeMs(v2+) LogStartOffset(v5+) RecordErrors(v8+) ErrorMessage(v8+)]] ThrottleTimeMs(v1+)
//
// - v0-2 (message formats 0/1) are advertised (librdkafka 2.0.2 enables compression only when
//   Produce overlaps [0,0], kafka-broker-notes.md §3.1) but answered UNSUPPORTED_VERSION on every
//   partition, as Kafka 4.0 does (KAFKA-18659).
// - Each partition carries exactly one RecordBatch v2. It is validated (header, sizes, CRC-32C)
//   and appended as sent, but for what Kafka's LogValidator rewrites too: partitionLeaderEpoch and
//   baseOffset (outside the CRC); on a CreateTime topic maxTimestamp, recomputed from the records;
//   on a LogAppendTime topic the timestamp type and maxTimestamp (the append time, also answered
//   as log_append_time); and the records, recompressed when the topic's compression.type is a
//   codec other than the batch's. The CRC is then
//   recomputed. A magic other than 2, more than one batch, an empty batch, a control batch, or a
//   producer id with a negative base sequence is INVALID_RECORD (87); a CRC or size mismatch is
//   CORRUPT_MESSAGE (2); a batch above max.message.bytes is MESSAGE_TOO_LARGE (10).
// - Its records are walked, not kept (inspectProducedRecords; decompressed first, at most
//   64 MiB). The whole preparation runs on the worker pool (codec/produce-task.ts) when the
//   records of a compressed batch may decode to 16 x workers.offloadBytesMin bytes or more, as
//   its frames' headers tell before decoding, or when workers.offloadBytesMin bytes of
//   uncompressed records are to be recompressed, so that a small batch that inflates far does
//   not hold up other connections; produce-turns.ts keeps later appends to the partition behind it.
//   A body that does not decompress, records that do not parse or do not number
//   recordCount, or offset deltas other than 0, 1, 2, ... refuse the batch whole
//   (INVALID_RECORD). Records refused one by one, as LogValidator does (KIP-467): a null key in a
//   compacted topic (INVALID_RECORD), a CreateTime timestamp outside [now - before.max.ms,
//   now + after.max.ms] or a LogAppendTime bit set by the producer (INVALID_TIMESTAMP); v8+ lists
//   them in record_errors with Kafka's error_message, so that clients fail only those records.
//   Nothing of a refused batch is appended.
// - Appends start synchronously, in request order, before the first await (or, behind a
//   preparation running on a worker, in the same order once it ends): pipelined produce
//   requests of one producer reach the log in order.
// - Idempotent producers go through the core's producer checks (Broker.append): a retried batch
//   answers with its original offsets; a gap is OUT_OF_ORDER_SEQUENCE_NUMBER (45); an old epoch
//   is INVALID_PRODUCER_EPOCH (47), which is what Kafka's broker answers on Produce since KIP-588
//   (and what older clients knew as the fencing error).
// - Transactional batches are appended under the request's transactional id: the core refuses one
//   whose producer is not the id's, is fenced, or whose partition was not added to the
//   transaction (INVALID_PRODUCER_ID_MAPPING, INVALID_PRODUCER_EPOCH, INVALID_TXN_STATE), and
//   tracks the open transaction from the append.
// - Authorization (../access.ts): a partition of a topic the SASL user may not write to (Iggy
//   send_messages) answers TOPIC_AUTHORIZATION_FAILED (29) and nothing is appended there.
// - acks: 0 (no response at all; a partition error closes the connection once the appends
//   settle, as Kafka does, and the requests after it start only then), 1 and -1 (all: the same on one node; under fsync policy 'always' the
//   log resolves the append only after its fsync). Anything else is INVALID_REQUIRED_ACKS (21).

import type { Topic } from '../../../core/catalog.js';
import { kafkaAccessOf, type KafkaAccess } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import { appendRequestFromBatch } from '../codec/kafka-format.js';
import type { ProduceRequest, ProduceResponseInput } from '../codec/messages/produce.js';
import { asBuffer, ownedCopy, transferableOf } from '../../../base/worker-pool.js';
import { effectiveTopicConfig, timestampLimitsMs, type CompressionTypeName } from '../../../core/topic-config.js';
import { CompressionCodec, decompressedBytesMaxDefault } from '../codec/compression.js';
import { prepareProducedBatch, preparationBytes, type PreparedBatch, type ProduceRules } from '../codec/produce-task.js';
import { batchHeaderBytes, patchPartitionLeaderEpoch, readBatchHeader, validateProduceBatch, type ProducedRecordError, type RecordBatchHeader } from '../codec/record-batch.js';
import { produceTurns } from '../produce-turns.js';
import { kafkaCodeOf } from '../errors.js';
import { lookupPartition } from '../topics.js';
import { kafkaTransactionScope } from '../transactions.js';
import { throttleRequest } from '../quotas.js';
import { defineHandler, type KafkaFrontend, type KafkaRequestContext } from './types.js';

type PartitionOut = NonNullable<NonNullable<ProduceResponseInput['responses']>[number]['partitionResponses']>[number];

function partitionError(index: number, errorCode: number, errorMessage: string | null = null): PartitionOut {
  return { index, errorCode, baseOffset: -1, logAppendTimeMs: -1, logStartOffset: -1, recordErrors: [], errorMessage };
}

function errorResponse(request: ProduceRequest, errorCode: number): ProduceResponseInput {
  return {
    responses: request.topicData.map((t) => ({ name: t.name, partitionResponses: t.partitionData.map((p) => partitionError(p.index, errorCode)) })),
    throttleTimeMs: 0,
  };
}

/** Kafka's split of batch validation failures: structure errors vs corruption. */
function invalidBatchCode(records: Buffer, reason: string): number {
  if (records.length >= 17 && records.readInt8(16) !== 2) return ErrorCode.INVALID_RECORD;
  if (/exactly one|empty record batch|control batch|lastOffsetDelta|invalid sequence number/.test(reason)) return ErrorCode.INVALID_RECORD;
  return ErrorCode.CORRUPT_MESSAGE;
}

const codecByName: Readonly<Record<CompressionTypeName, number | null>> = { producer: null, uncompressed: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 };

function produceRules(frontend: KafkaFrontend, topic: Topic, index: number, cleanupPolicy: string): ProduceRules {
  const config = effectiveTopicConfig(topic.config, frontend.broker.topicDefaults);
  const limits = timestampLimitsMs(config);
  return {
    keysRequired: cleanupPolicy !== 'delete',
    logAppendTime: config['message.timestamp.type'] === 'LogAppendTime',
    now: frontend.broker.now(),
    timestampBeforeMaxMs: limits.beforeMs,
    timestampAfterMaxMs: limits.afterMs,
    partitionName: `${topic.name}-${index}`,
    codec: codecByName[config['compression.type']],
  };
}

/** Records refused one by one (KIP-467): INVALID_TIMESTAMP if any was for its time, else INVALID_RECORD, with Kafka's message. */
function recordErrorsOut(index: number, errors: readonly ProducedRecordError[]): PartitionOut {
  const recordErrors = errors.map((e) => ({ batchIndex: e.batchIndex, batchIndexErrorMessage: e.message }));
  if (errors.some((e) => e.timestamp)) {
    return { ...partitionError(index, ErrorCode.INVALID_TIMESTAMP, 'One or more records have been rejected due to invalid timestamp'), recordErrors };
  }
  const shown = errors.slice(0, 3).map((e) => `RecordError(batchIndex=${e.batchIndex}, message='${e.message}')`).join(', ');
  const message = `One or more records have been rejected due to ${errors.length} record errors in total, and only showing the first three errors at most: [${shown}]`;
  return { ...partitionError(index, ErrorCode.INVALID_RECORD, message), recordErrors };
}

/**
 * A compressed batch is decoded on a worker from this many times the pool's threshold (1 MiB by
 * default): its size is known only as a bound before decoding, and a compressed zstd block counts
 * as 128 KiB, so a lower bar would send almost every zstd batch to a worker; decoding 1 MiB here
 * takes a few milliseconds. A gzip batch is decoded here at most this far: one that goes on (its
 * trailer understated the size) is handed to a worker after all.
 */
const decodeOffloadFactor = 16;

/**
 * `records` prepared for the log (produce-task.ts). Where the decoding or encoding it takes
 * (preparationBytes) reaches the worker pool's bar, on a worker (a promise); else, and when the
 * pool is off, full or its worker fails, here.
 */
function prepare(frontend: KafkaFrontend, records: Buffer, header: RecordBatchHeader, rules: ProduceRules): PreparedBatch | Promise<PreparedBatch> {
  const transcoder = frontend.broker.transcoder;
  const inline = (): PreparedBatch => prepareProducedBatch(records, header, rules);
  const offload = (bytes: number): Promise<PreparedBatch> | null => {
    const copy = ownedCopy(records);
    const run = transcoder.offloadTask<PreparedBatch>(prepareTaskModule, 'prepareTask', [copy, rules], transferableOf(copy), bytes);
    // A worker that fails (it died, the pool closed) leaves the work to this thread: the
    // request's bytes are held until the append settles.
    return run?.then((p) => (p.kind === 'ready' ? { kind: 'ready', batch: asBuffer(p.batch) } : p), inline) ?? null;
  };
  const { threads, offloadBytesMin } = transcoder.settings;
  const bar = header.compression === CompressionCodec.none ? offloadBytesMin : offloadBytesMin * decodeOffloadFactor;
  const bytes = preparationBytes(records, header, rules.codec, batchHeaderBytes);
  if (bytes >= bar) return offload(bytes) ?? inline();
  if (header.compression !== CompressionCodec.gzip || threads === 0) return inline();
  const capped = prepareProducedBatch(records, header, rules, bar);
  return capped.kind === 'invalid' && capped.tooLarge === true ? (offload(decompressedBytesMaxDefault) ?? inline()) : capped;
}

const prepareTaskModule = import.meta.resolve('../codec/produce-task.js');

/** The answer for a batch that is not appended. */
function refusedOut(index: number, prepared: Exclude<PreparedBatch, { kind: 'ready' }>): PartitionOut {
  switch (prepared.kind) {
    case 'invalid':
      return partitionError(index, ErrorCode.INVALID_RECORD, prepared.reason);
    case 'recordErrors':
      return recordErrorsOut(index, prepared.errors);
    case 'corrupt':
      return partitionError(index, ErrorCode.CORRUPT_MESSAGE, prepared.reason);
  }
}

function appendOne(frontend: KafkaFrontend, access: KafkaAccess, transactionalId: string | null, topicName: string, index: number, records: Buffer | null): Promise<PartitionOut> | PartitionOut {
  if (!access.topicNamed(topicName, 'write')) return partitionError(index, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
  const found = lookupPartition(frontend.broker, topicName, index);
  if (!found.ok) return partitionError(index, found.errorCode);
  if (records === null || records.length === 0) return partitionError(index, ErrorCode.INVALID_RECORD, 'no record batch');
  const valid = validateProduceBatch(records);
  if (!valid.ok) return partitionError(index, invalidBatchCode(records, valid.reason), valid.reason);
  const header = valid.header;
  if (header.isTransactional && header.producerId < 0) return partitionError(index, ErrorCode.INVALID_RECORD, 'a transactional batch needs a producer id');
  const topic: Topic = found.topic;
  const rules = produceRules(frontend, topic, index, found.log.config.cleanupPolicy);
  const prepared = prepare(frontend, records, header, rules);
  const append = (p: PreparedBatch): Promise<PartitionOut> | PartitionOut => {
    if (p.kind !== 'ready') return refusedOut(index, p);
    const batch = p.batch;
    const built = appendRequestFromBatch(batch, { logAppendTime: rules.logAppendTime === true, now: rules.now! }, readBatchHeader(batch));
    if (!built.ok) return partitionError(index, ErrorCode.CORRUPT_MESSAGE, built.reason);
    let appended;
    try {
      // The leader epoch the batch is appended under, from the core's replication state (it lies
      // outside the CRC, as baseOffset, which the append stamps).
      patchPartitionLeaderEpoch(built.request.payload, frontend.broker.leadership(topic, index).leaderEpoch);
      appended = frontend.broker.append(topic, index, built.request, header.isTransactional ? { transaction: { scope: kafkaTransactionScope, transactionalId } } : {});
    } catch (err) {
      return partitionError(index, produceCodeOf(err));
    }
    return appended.then(
      (result) => ({ index, errorCode: ErrorCode.NONE, baseOffset: result.baseOffset, logAppendTimeMs: rules.logAppendTime === true ? result.appendTime : -1, logStartOffset: result.logStartOffset, recordErrors: [], errorMessage: null }),
      (err: unknown) => partitionError(index, produceCodeOf(err), err instanceof Error ? err.message : null),
    );
  };
  // An append waiting for a worker holds back the later appends to its partition, so that they
  // reach the log in request order.
  return produceTurns(frontend.broker).run(`${topic.internalId}:${index}`, prepared, append, (err) => partitionError(index, ErrorCode.CORRUPT_MESSAGE, err instanceof Error ? err.message : null));
}

function produceCodeOf(err: unknown): number {
  const code = kafkaCodeOf(err);
  return code === ErrorCode.PRODUCER_FENCED ? ErrorCode.INVALID_PRODUCER_EPOCH : code;
}

/** The record bytes a Produce request carries (what producer_byte_rate counts). */
function recordBytes(request: ProduceRequest): number {
  let bytes = 0;
  for (const t of request.topicData) for (const p of t.partitionData) bytes += p.records?.length ?? 0;
  return bytes;
}

export const produceHandler = defineHandler({
  apiKey: ApiKey.Produce,
  minVersion: 0,
  maxVersion: 9,
  errorResponse: (request, errorCode) => errorResponse(request, errorCode),
  handle(request, context: KafkaRequestContext) {
    const { frontend, version } = context;
    const startedMs = frontend.broker.clientQuotas.active ? frontend.clock.now() : 0;
    const acks = request.acks;
    // An acks=0 request that fails closes the connection, so what follows it must not have run.
    if (acks === 0) context.holdFollowingRequests?.();
    const access = kafkaAccessOf(frontend, context.session);
    if (version < 3) return acks === 0 ? null : errorResponse(request, ErrorCode.UNSUPPORTED_VERSION);
    if (acks !== 0 && acks !== 1 && acks !== -1) return errorResponse(request, ErrorCode.INVALID_REQUIRED_ACKS);
    // Every append starts here, synchronously and in request order.
    const pending = request.topicData.map((t) => ({
      name: t.name,
      partitions: t.partitionData.map((p) => {
        const started = appendOne(frontend, access, request.transactionalId, t.name, p.index, p.records);
        // The log holds views of the request's records until the append settles.
        if (started instanceof Promise) context.holdRequestUntil?.(started);
        return started;
      }),
    }));
    if (acks === 0) {
      // No response; but a failure anywhere closes the connection once the appends settle, as
      // Kafka's KafkaApis does, so that the producer, which hears nothing, refreshes its metadata.
      return Promise.all(pending.flatMap((t) => t.partitions)).then((outs) => {
        if (outs.some((p) => p.errorCode !== ErrorCode.NONE)) context.closeAfterResponse?.();
        return null;
      });
    }
    return responsesOf(pending).then((responses) => ({ responses, throttleTimeMs: frontend.broker.clientQuotas.active ? throttleRequest(context, 'producer_byte_rate', recordBytes(request), startedMs) : 0 }));
  },
});

/**
 * Every partition's answer, in request order, once all have settled (appendOne never rejects).
 * Awaited one by one: the appends are already running, and this allocates less per request
 * than a Promise.all per topic.
 */
async function responsesOf(pending: ReadonlyArray<{ name: string; partitions: ReadonlyArray<Promise<PartitionOut> | PartitionOut> }>): Promise<Array<{ name: string; partitionResponses: PartitionOut[] }>> {
  const responses: Array<{ name: string; partitionResponses: PartitionOut[] }> = [];
  for (const t of pending) {
    const partitionResponses: PartitionOut[] = [];
    for (const p of t.partitions) partitionResponses.push(await p);
    responses.push({ name: t.name, partitionResponses });
  }
  return responses;
}
