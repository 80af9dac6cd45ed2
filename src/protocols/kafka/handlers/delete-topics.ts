// DeleteTopics (key 20), v0-6. Grammar: codec/messages/delete-topics.ts.
//
// v0-5 name topics in `topic_names`; v6 in `topics`, each by name or by topic id (not both).
// As ControllerApis.deleteTopics: a name or id given twice → INVALID_REQUEST "Duplicate topic
// name." / "Duplicate topic id."; neither name nor id → INVALID_REQUEST; both → INVALID_REQUEST;
// an unknown name → UNKNOWN_TOPIC_OR_PARTITION (3); an unknown id → UNKNOWN_TOPIC_ID (100); a
// topic the SASL user may not delete (../access.ts, Iggy manage_topic) → TOPIC_AUTHORIZATION_FAILED
// (29), checked before existence for a name.
// Results come in request order (Kafka shuffles them; nothing depends on the order). Deletion is
// complete when the core call returns (logs, committed offsets and producer state go with it), so
// timeout_ms is not needed.

import type { Topic } from '../../../core/catalog.js';
import { kafkaAccessOf, type KafkaAccess } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import type { RequestOf, ResponseInputOf } from '../codec/messages/index.js';
import { zeroUuid } from '../codec/reader.js';
import { kafkaCodeOf } from '../errors.js';
import { findKafkaTopic, findKafkaTopicById, kafkaNameOf } from '../topics.js';
import { defineHandler, type KafkaFrontend } from './types.js';

type DeleteTopicsRequest = RequestOf<typeof ApiKey.DeleteTopics>;
type TopicResult = NonNullable<ResponseInputOf<typeof ApiKey.DeleteTopics>['responses']>[number];

/** One topic as the request names it: by name (every version) or by id (v6). */
type Target = { name: string | null; id: Buffer };

function targetsOf(request: DeleteTopicsRequest, version: number): Target[] {
  return version >= 6 ? request.topics.map((t) => ({ name: t.name, id: t.topicId })) : request.topicNames.map((name) => ({ name, id: zeroUuid }));
}

/** How duplicates are recognised: by name or by id; null for a target naming neither or both. */
function keyOf(target: Target): string | null {
  const byId = !target.id.equals(zeroUuid);
  if ((target.name !== null) === byId) return null;
  return byId ? `id:${target.id.toString('hex')}` : `name:${target.name}`;
}

async function deleteOne(frontend: KafkaFrontend, access: KafkaAccess, target: Target): Promise<TopicResult> {
  const byId = !target.id.equals(zeroUuid);
  if (target.name === null && !byId) return { name: null, topicId: zeroUuid, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Neither topic name nor id were specified.' };
  if (target.name !== null && byId) return { name: target.name, topicId: target.id, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'You may not specify both topic name and topic id.' };
  let topic: Topic | null;
  if (byId) {
    topic = findKafkaTopicById(frontend.broker, target.id);
    if (topic === null) return { name: null, topicId: target.id, errorCode: ErrorCode.UNKNOWN_TOPIC_ID, errorMessage: 'This server does not host this topic ID.' };
    if (!access.topic(topic, 'delete')) return { name: null, topicId: target.id, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: 'Authorization failed.' };
  } else {
    if (!access.topicNamed(target.name!, 'delete')) return { name: target.name, topicId: zeroUuid, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: 'Authorization failed.' };
    topic = findKafkaTopic(frontend.broker, target.name!);
    if (topic === null) return { name: target.name, topicId: zeroUuid, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'This server does not host this topic-partition.' };
  }
  const name = kafkaNameOf(topic);
  try {
    await frontend.broker.deleteTopic(topic);
    return { name, topicId: topic.uuid, errorCode: 0, errorMessage: null };
  } catch (err) {
    return { name, topicId: topic.uuid, errorCode: kafkaCodeOf(err), errorMessage: err instanceof Error ? err.message : String(err) };
  }
}

export const deleteTopicsHandler = defineHandler({
  apiKey: ApiKey.DeleteTopics,
  minVersion: 0,
  maxVersion: 6,
  async handle(request, { frontend, session, version }) {
    const access = kafkaAccessOf(frontend, session);
    const targets = targetsOf(request, version);
    const occurrences = new Map<string, number>();
    for (const key of targets.map(keyOf)) if (key !== null) occurrences.set(key, (occurrences.get(key) ?? 0) + 1);
    const answered = new Set<string>();
    const responses: TopicResult[] = [];
    for (const target of targets) {
      const key = keyOf(target);
      if (key !== null) {
        if (answered.has(key)) continue;
        answered.add(key);
        if (occurrences.get(key)! > 1) {
          const message = target.name !== null ? 'Duplicate topic name.' : 'Duplicate topic id.';
          responses.push({ name: target.name, topicId: target.id, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: message });
          continue;
        }
      }
      responses.push(await deleteOne(frontend, access, target));
    }
    return { throttleTimeMs: 0, responses };
  },
  errorResponse(request, errorCode, { version }) {
    return { throttleTimeMs: 0, responses: targetsOf(request, version).map((t) => ({ name: t.name, topicId: t.id, errorCode, errorMessage: null })) };
  },
});
