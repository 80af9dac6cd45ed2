// DeleteRecords (key 21), v0-2. apache/kafka DeleteRecordsRequest.json / DeleteRecordsResponse.json.
//
// DeleteRecordsRequest => Topics[Name Partitions[PartitionIndex Offset]] TimeoutMs
// DeleteRecordsResponse => ThrottleTimeMs Topics[Name Partitions[PartitionIndex LowWatermark ErrorCode]]
//
// Advances the partition's log start offset (PartitionLog.deleteRecordsBefore; whole segments
// below it are removed) and answers the new low watermark. Offset -1 means the high watermark
// (Kafka's DeleteRecordsRequest.HIGH_WATERMARK). An offset below 0 otherwise, or above the high
// watermark, is OFFSET_OUT_OF_RANGE (1), as in Kafka's UnifiedLog.maybeIncrementLogStartOffset.
// A topic the SASL user may not delete from (../access.ts, Iggy manage_topic, as Iggy's
// DeleteSegments) → TOPIC_AUTHORIZATION_FAILED (29) on each partition.

import { kafkaAccessOf } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import type { DeleteRecordsRequest, DeleteRecordsResponseInput } from '../codec/messages/delete-records.js';
import { kafkaCodeOf } from '../errors.js';
import { lookupPartitionSettled } from '../topics.js';
import { defineHandler } from './types.js';

type PartitionOut = NonNullable<NonNullable<DeleteRecordsResponseInput['topics']>[number]['partitions']>[number];

export const HIGH_WATERMARK = -1;

function partitionError(partitionIndex: number, errorCode: number): PartitionOut {
  return { partitionIndex, lowWatermark: -1, errorCode };
}

function errorResponse(request: DeleteRecordsRequest, errorCode: number): DeleteRecordsResponseInput {
  return { throttleTimeMs: 0, topics: request.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => partitionError(p.partitionIndex, errorCode)) })) };
}

export const deleteRecordsHandler = defineHandler({
  apiKey: ApiKey.DeleteRecords,
  minVersion: 0,
  maxVersion: 2,
  errorResponse: (request, errorCode) => errorResponse(request, errorCode),
  async handle(request, context) {
    const { frontend } = context;
    const access = kafkaAccessOf(frontend, context.session);
    const topics = await Promise.all(
      request.topics.map(async (t) => ({
        name: t.name,
        partitions: await Promise.all(
          t.partitions.map(async (p): Promise<PartitionOut> => {
            if (!access.topicNamed(t.name, 'delete')) return partitionError(p.partitionIndex, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
            const found = await lookupPartitionSettled(frontend.broker, t.name, p.partitionIndex, frontend.settings.purgeWaitMsMax);
            // KAFKA_STORAGE_ERROR when an Iggy purge held the partition too long; any other miss is unknown.
            if (!found.ok) return partitionError(p.partitionIndex, found.errorCode === ErrorCode.KAFKA_STORAGE_ERROR ? found.errorCode : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
            const highWatermark = found.log.stats().highWatermark;
            const offset = p.offset === HIGH_WATERMARK ? highWatermark : p.offset;
            if (offset < 0 || offset > highWatermark) return partitionError(p.partitionIndex, ErrorCode.OFFSET_OUT_OF_RANGE);
            try {
              const lowWatermark = await found.log.deleteRecordsBefore(offset);
              frontend.logger.info('deleted records', { topic: t.name, partition: p.partitionIndex, lowWatermark });
              return { partitionIndex: p.partitionIndex, lowWatermark, errorCode: ErrorCode.NONE };
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
