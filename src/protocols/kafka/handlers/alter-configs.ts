// AlterConfigs (key 33), v0-2: the legacy API, which replaces a topic's whole set of dynamic
// configs (a key left out goes back to its default), as ZkAdminManager.alterConfigs /
// ConfigurationControlManager.legacyAlterConfigs do. Older clients (confluent-kafka < 2.2,
// kafka-python 2.0, KafkaJS) only have this one.
//
// Each key is checked exactly as IncrementalAlterConfigs checks a SET (./incremental-alter-configs.ts
// and ../topic-configs.ts: unknown key or refused value → INVALID_CONFIG, fixed and ignored keys
// are no-ops), and the shared resource loop gives the same answers for duplicates, authorization
// (ALTER_CONFIGS on the topic or the cluster), unknown topics and broker resources (read-only).
// A null value → INVALID_REQUEST "Null value not supported for : k". validate_only changes nothing.

import type { Topic } from '../../../core/catalog.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import type { RequestOf } from '../codec/messages/index.js';
import { OpType, answerAlterConfigs, refusedConfigResources, topicChanges, type ConfigOutcome } from './incremental-alter-configs.js';
import { defineHandler } from './types.js';

type LegacyResource = RequestOf<typeof ApiKey.AlterConfigs>['resources'][number];

/** The whole new explicit config of the topic (replacing every value it has), or the refusal. */
export function legacyTopicChanges(topic: Topic, brokerDefaults: Readonly<Record<string, unknown>>, resource: LegacyResource): Record<string, string | null> | ConfigOutcome {
  const nulls = resource.configs.filter((c) => c.value === null).map((c) => c.name);
  if (nulls.length > 0) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Null value not supported for : ${nulls.join(',')}` };
  return topicChanges(topic, brokerDefaults, resource.configs.map((c) => ({ name: c.name, configOperation: OpType.SET, value: c.value })));
}

export const alterConfigsHandler = defineHandler({
  apiKey: ApiKey.AlterConfigs,
  minVersion: 0,
  maxVersion: 2,
  handle(request, context) {
    return answerAlterConfigs(context, request, (topic, resource) => legacyTopicChanges(topic, context.frontend.broker.topicDefaults, resource), { replace: true });
  },
  errorResponse(request, errorCode) {
    return refusedConfigResources(request.resources, errorCode);
  },
});
