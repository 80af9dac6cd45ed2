// DescribeLogDirs (key 35), v0-4. Grammar: codec/messages/describe-log-dirs.ts.
//
// Quartet keeps every partition in one log directory, `<dataDir>/logs`, so the answer has one
// result: each requested partition (all of them when topics is null) with its size in bytes (the
// log's segments), its offset lag (log end offset minus high watermark: 0 unless an append is
// still waiting for its fsync) and is_future_key false (there are no AlterReplicaLogDirs moves).
// v4 adds the file system's total and usable bytes. Unknown topics and partitions are left out,
// as Kafka's ReplicaManager.describeLogDirs does. Kafka needs DESCRIBE on the cluster: in Quartet
// read_servers (../access.ts); without it the result list is empty and v3+ carries
// CLUSTER_AUTHORIZATION_FAILED at the top level.

import { statfs } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Topic } from '../../../core/catalog.js';
import { kafkaAccessOf } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import type { RequestOf, ResponseInputOf } from '../codec/messages/index.js';
import { findKafkaTopic, kafkaNameOf, listKafkaTopics } from '../topics.js';
import { defineHandler, type KafkaFrontend } from './types.js';

type Request = RequestOf<typeof ApiKey.DescribeLogDirs>;
type TopicResult = NonNullable<NonNullable<ResponseInputOf<typeof ApiKey.DescribeLogDirs>['results']>[number]['topics']>[number];

function partitionsOf(frontend: KafkaFrontend, topic: Topic, indexes: readonly number[] | null): TopicResult {
  const wanted = indexes ?? Array.from({ length: topic.partitions }, (_, i) => i);
  const partitions = [...new Set(wanted)]
    .filter((p) => Number.isInteger(p) && p >= 0 && p < topic.partitions)
    .map((p) => {
      const stats = frontend.broker.partition(topic, p).stats();
      return { partitionIndex: p, partitionSize: stats.sizeBytes, offsetLag: Math.max(0, stats.nextOffset - stats.highWatermark), isFutureKey: false };
    });
  return { name: kafkaNameOf(topic), partitions };
}

function describedTopics(frontend: KafkaFrontend, request: Request): TopicResult[] {
  if (request.topics === null) return listKafkaTopics(frontend.broker).map((t) => partitionsOf(frontend, t, null));
  const results: TopicResult[] = [];
  for (const requested of request.topics) {
    const topic = findKafkaTopic(frontend.broker, requested.topic);
    if (topic === null) continue;
    const result = partitionsOf(frontend, topic, requested.partitions);
    if (result.partitions!.length > 0) results.push(result);
  }
  return results;
}

/** The file system's size and free space for users, or -1 each when it cannot be read. */
async function diskBytes(dir: string): Promise<{ totalBytes: number; usableBytes: number }> {
  try {
    const fs = await statfs(dir);
    return { totalBytes: fs.blocks * fs.bsize, usableBytes: fs.bavail * fs.bsize };
  } catch {
    return { totalBytes: -1, usableBytes: -1 };
  }
}

export const describeLogDirsHandler = defineHandler({
  apiKey: ApiKey.DescribeLogDirs,
  minVersion: 0,
  maxVersion: 4,
  async handle(request, { frontend, session }) {
    if (!kafkaAccessOf(frontend, session).cluster('describe')) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, results: [] };
    }
    const logDir = resolve(join(frontend.broker.dataDir, 'logs'));
    const topics = describedTopics(frontend, request);
    return { throttleTimeMs: 0, errorCode: 0, results: [{ errorCode: 0, logDir, topics, ...(await diskBytes(frontend.broker.dataDir)) }] };
  },
  errorResponse(_request, errorCode) {
    return { throttleTimeMs: 0, errorCode, results: [] };
  },
});
