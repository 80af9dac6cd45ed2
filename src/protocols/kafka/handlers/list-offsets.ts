// ListOffsets (key 2), v0-7. apache/kafka ListOffsetsRequest.json / ListOffsetsResponse.json.
//
// ListOffsetsRequest => ReplicaId IsolationLevel(v2+) Topics[Name Partitions[PartitionIndex
//   CurrentLeaderEpoch(v4+) Timestamp MaxNumOffsets(v0)]]
// ListOffsetsResponse => ThrottleTimeMs(v2+) Topics[Name Partitions[PartitionIndex ErrorCode
//   OldStyleOffsets(v0) Timestamp(v1+) Offset(v1+) LeaderEpoch(v4+)]]
//
// Timestamp: -1 latest (the high watermark; the last stable offset under read_committed),
// -2 earliest (the log start offset), -3 the record with the largest timestamp (v7, KIP-734),
// otherwise the first record whose timestamp is >= the given one (offset -1 when none). v0
// answers in the old form: an offsets array of at most MaxNumOffsets entries.
// A timestamp lookup finds the batch through the log's time index, then decodes that one batch to
// return the exact record offset and timestamp, as Kafka does (a cold path: the read service's
// recordAtTimestamp, which decodes a batch whose records inflate far on a worker thread).
// Authorization (../access.ts): a topic the SASL user may not describe answers
// TOPIC_AUTHORIZATION_FAILED (29) on each partition.

import type { PartitionReader } from '../../../core/reads.js';
import { kafkaAccessOf } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import type { ListOffsetsRequest, ListOffsetsResponseInput } from '../codec/messages/list-offsets.js';
import { kafkaCodeOf } from '../errors.js';
import { leaderEpochError, lookupPartitionSettled } from '../topics.js';
import { transactionHooksOf } from '../transactions.js';
import { defineHandler, type KafkaFrontend } from './types.js';

type PartitionOut = NonNullable<NonNullable<ListOffsetsResponseInput['topics']>[number]['partitions']>[number];

export const LATEST_TIMESTAMP = -1;
export const EARLIEST_TIMESTAMP = -2;
export const MAX_TIMESTAMP = -3;

function partitionError(partitionIndex: number, errorCode: number): PartitionOut {
  return { partitionIndex, errorCode, oldStyleOffsets: [], timestamp: -1, offset: -1, leaderEpoch: -1 };
}

function errorResponse(request: ListOffsetsRequest, errorCode: number): ListOffsetsResponseInput {
  return { throttleTimeMs: 0, topics: request.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => partitionError(p.partitionIndex, errorCode)) })) };
}

async function lookup(frontend: KafkaFrontend, reader: PartitionReader, timestamp: number, readCommittedIsolation: boolean): Promise<{ offset: number; timestamp: number }> {
  if (timestamp === LATEST_TIMESTAMP) {
    // Transactions seam: read_committed LATEST is the coordinator's last stable offset.
    const position = reader.position(transactionHooksOf(frontend));
    return { offset: readCommittedIsolation ? position.lastStableOffset : position.highWatermark, timestamp: -1 };
  }
  if (timestamp === EARLIEST_TIMESTAMP) return { offset: reader.logStartOffset(), timestamp: -1 };
  if (timestamp === MAX_TIMESTAMP) return (await reader.maxTimestampOffset()) ?? { offset: -1, timestamp: -1 };
  if (timestamp < 0) return { offset: -1, timestamp: -1 };
  return (await reader.recordAtTimestamp(timestamp)) ?? { offset: -1, timestamp: -1 };
}

export const listOffsetsHandler = defineHandler({
  apiKey: ApiKey.ListOffsets,
  minVersion: 0,
  maxVersion: 7,
  errorResponse: (request, errorCode) => errorResponse(request, errorCode),
  async handle(request, context) {
    const { frontend, version } = context;
    const rc = version >= 2 && request.isolationLevel === 1;
    const access = kafkaAccessOf(frontend, context.session);
    const topics = await Promise.all(
      request.topics.map(async (t) => ({
        name: t.name,
        partitions: await Promise.all(
          t.partitions.map(async (p): Promise<PartitionOut> => {
            if (!access.topicNamed(t.name, 'describe')) return partitionError(p.partitionIndex, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
            const found = await lookupPartitionSettled(frontend.broker, t.name, p.partitionIndex, frontend.settings.purgeWaitMsMax);
            if (!found.ok) return partitionError(p.partitionIndex, found.errorCode === ErrorCode.INVALID_TOPIC_EXCEPTION ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : found.errorCode);
            const leaderEpoch = frontend.broker.leadership(found.topic, p.partitionIndex).leaderEpoch;
            const epochError = version >= 4 ? leaderEpochError(p.currentLeaderEpoch, leaderEpoch) : ErrorCode.NONE;
            if (epochError !== ErrorCode.NONE) return partitionError(p.partitionIndex, epochError);
            if (version === 0 && p.timestamp === MAX_TIMESTAMP) return partitionError(p.partitionIndex, ErrorCode.UNSUPPORTED_VERSION);
            try {
              const r = await lookup(frontend, frontend.broker.reads.open(found.topic, p.partitionIndex), p.timestamp, rc);
              const oldStyleOffsets = version === 0 && r.offset >= 0 && p.maxNumOffsets > 0 ? [r.offset] : [];
              return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.NONE, oldStyleOffsets, timestamp: r.timestamp, offset: r.offset, leaderEpoch: r.offset >= 0 ? leaderEpoch : -1 };
            } catch (err) {
              return partitionError(p.partitionIndex, kafkaCodeOf(err));
            }
          }),
        ),
      })),
    );
    return { throttleTimeMs: 0, topics };
  },
});
