// Metadata (key 3), v0-12. apache/kafka MetadataRequest.json / MetadataResponse.json.
//
// MetadataRequest => Topics(null = all, v1+; empty = all in v0)[TopicId(v10+) Name]
//   AllowAutoTopicCreation(v4+) IncludeClusterAuthorizedOperations(v8-10)
//   IncludeTopicAuthorizedOperations(v8+)
// MetadataResponse => ThrottleTimeMs(v3+) Brokers[NodeId Host Port Rack(v1+)] ClusterId(v2+)
//   ControllerId(v1+) Topics[ErrorCode Name TopicId(v10+) IsInternal(v1+) Partitions[ErrorCode
//   PartitionIndex LeaderId LeaderEpoch(v7+) ReplicaNodes IsrNodes OfflineReplicas(v5+)]
//   TopicAuthorizedOperations(v8+)] ClusterAuthorizedOperations(v8-10)
//
// One node: it is the only broker and the controller; each partition's leader, epoch, replicas
// and in-sync replicas come from the core's replication state (src/core/replication.ts).
// Unknown topics are created when auto-creation is on and the request allows it (v4+ field;
// always allowed below v4, as Kafka does), with the default partition count; kcat and most
// librdkafka-based tools rely on that. A freshly created topic is described at once (Kafka
// answers LEADER_NOT_AVAILABLE until the leader is elected; there is nothing to wait for here).
//
// Topics of every namespace are listed under their Kafka name (../topics.ts, docs/mapping.md):
// Iggy stream `s` / topic `t` is `s.t`. A requested name is resolved before auto-creation, so
// asking for `s.t` never creates a default-namespace topic `s.t` next to the stream's topic;
// auto-creation, like CreateTopics, only ever creates in the default namespace.
//
// Authorization (../access.ts), as Kafka's KafkaApis: the topic list leaves out the topics the
// SASL user may not describe; a named topic it may not describe, or may not create when it would
// be auto-created, answers TOPIC_AUTHORIZATION_FAILED (29) whether it exists or not.

import { isQuartetError } from '../../../base/errors.js';
import type { Topic } from '../../../core/catalog.js';
import { defaultNamespaceName } from '../../../core/catalog.js';
import { kafkaAccessOf, type KafkaAccess } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import type { MetadataResponseInput } from '../codec/messages/metadata.js';
import { zeroUuid } from '../codec/reader.js';
import { kafkaCodeOf } from '../errors.js';
import { findKafkaTopic, findKafkaTopicById, kafkaNameOf, kafkaTopicNameProblem, listKafkaTopics } from '../topics.js';
import { defineHandler, type KafkaFrontend } from './types.js';

type TopicOut = NonNullable<MetadataResponseInput['topics']>[number];

/** Kafka's "authorized operations not requested" sentinel. */
const authorizedOperationsOmitted = -2147483648;

function describeTopic(frontend: KafkaFrontend, topic: Topic): TopicOut {
  const partitions = new Array(topic.partitions);
  for (let p = 0; p < topic.partitions; p++) {
    const r = frontend.broker.leadership(topic, p);
    partitions[p] = { errorCode: ErrorCode.NONE, partitionIndex: p, leaderId: r.leaderId, leaderEpoch: r.leaderEpoch, replicaNodes: [...r.replicas], isrNodes: [...r.inSyncReplicas], offlineReplicas: [] };
  }
  return { errorCode: ErrorCode.NONE, name: kafkaNameOf(topic), topicId: topic.uuid, isInternal: false, partitions, topicAuthorizedOperations: authorizedOperationsOmitted };
}

function topicError(name: string | null, errorCode: number, topicId: Buffer = zeroUuid): TopicOut {
  return { errorCode, name, topicId, isInternal: false, partitions: [], topicAuthorizedOperations: authorizedOperationsOmitted };
}

async function describeOrCreate(frontend: KafkaFrontend, access: KafkaAccess, name: string, autoCreate: boolean): Promise<TopicOut> {
  if (!access.topicNamed(name, 'describe')) return topicError(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
  if (kafkaTopicNameProblem(name) !== null) return topicError(name, ErrorCode.INVALID_TOPIC_EXCEPTION);
  const existing = findKafkaTopic(frontend.broker, name);
  if (existing) return describeTopic(frontend, existing);
  if (!autoCreate) return topicError(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  if (!access.topicNamed(name, 'create')) return topicError(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
  try {
    const created = await frontend.broker.createTopic(defaultNamespaceName, name, { partitions: frontend.settings.defaultPartitions });
    frontend.logger.debug('auto-created topic', { topic: name, partitions: created.partitions });
    return describeTopic(frontend, created);
  } catch (err) {
    // Another request created it first.
    const raced = findKafkaTopic(frontend.broker, name);
    if (raced) return describeTopic(frontend, raced);
    if (!isQuartetError(err)) throw err;
    return topicError(name, kafkaCodeOf(err));
  }
}

export const metadataHandler = defineHandler({
  apiKey: ApiKey.Metadata,
  minVersion: 0,
  maxVersion: 12,
  async handle(request, context) {
    const { frontend, version } = context;
    const requested = request.topics;
    const all = requested === null || (version === 0 && requested.length === 0);
    const access = kafkaAccessOf(frontend, context.session);
    let topics: TopicOut[];
    if (all) {
      topics = listKafkaTopics(frontend.broker)
        .filter((t) => access.topic(t, 'describe'))
        .map((t) => describeTopic(frontend, t));
    } else {
      const autoCreate = frontend.settings.autoCreateTopics && (version < 4 || request.allowAutoTopicCreation);
      topics = await Promise.all(
        requested.map((t) => {
          if (t.name === null || t.name === undefined) {
            // v10+: by topic id.
            const byId = findKafkaTopicById(frontend.broker, t.topicId);
            if (byId !== null && !access.topic(byId, 'describe')) return Promise.resolve(topicError(null, ErrorCode.TOPIC_AUTHORIZATION_FAILED, t.topicId));
            return Promise.resolve(byId ? describeTopic(frontend, byId) : topicError(version >= 12 ? null : '', ErrorCode.UNKNOWN_TOPIC_ID, t.topicId));
          }
          return describeOrCreate(frontend, access, t.name, autoCreate);
        }),
      );
    }
    const { host, port } = frontend.advertised();
    return {
      throttleTimeMs: 0,
      brokers: [{ nodeId: frontend.nodeId, host, port, rack: null }],
      clusterId: frontend.clusterId ?? null,
      controllerId: frontend.nodeId,
      topics,
      clusterAuthorizedOperations: authorizedOperationsOmitted,
    };
  },
});
