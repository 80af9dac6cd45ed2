// IncrementalAlterConfigs (key 44), v0-1. Grammar: codec/messages/incremental-alter-configs.ts.
//
// Operations (AlterConfigOp.OpType): SET 0, DELETE 1 (back to the default), APPEND 2 and
// SUBTRACT 3 (list-typed keys only: add the items not yet present / remove the given items, on the
// topic's value or, when it has none, the effective default), as ZkAdminManager /
// ConfigurationControlManager apply them. Per resource, all or nothing:
//   the same resource twice in one request  → INVALID_REQUEST "Each resource must appear at most once."
//   a key twice in one resource            → INVALID_REQUEST "Error due to duplicate config keys : k"
//   a null value for SET/APPEND/SUBTRACT   → INVALID_REQUEST "Null value not supported for : SET:k"
//   an unknown operation                   → INVALID_REQUEST
//   APPEND/SUBTRACT on a non-list key      → INVALID_REQUEST "Config value append is not allowed ..."
//   an unknown key or a refused value      → INVALID_CONFIG (40) with the reason (../topic-configs.ts)
//   an unknown topic                       → UNKNOWN_TOPIC_OR_PARTITION
//   the SASL user may not alter the topic (../access.ts, Iggy manage_topic)
//                                          → TOPIC_AUTHORIZATION_FAILED (29), before the checks above
//   the broker without manage_servers      → CLUSTER_AUTHORIZATION_FAILED (31)
// Fixed and ignored keys (../topic-configs.ts) are accepted as no-ops when valid. validate_only
// checks everything and changes nothing. Broker resources are read-only in Quartet (its settings
// come from its configuration file): INVALID_CONFIG for this broker, INVALID_REQUEST for another id.

import { builtinTopicDefaults, mergeTopicConfig, type TopicConfigKey } from '../../../core/topic-config.js';
import type { Topic } from '../../../core/catalog.js';
import { kafkaAccessOf } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import type { RequestOf, ResponseInputOf } from '../codec/messages/index.js';
import { kafkaCodeOf } from '../errors.js';
import { ConfigResourceType, ConfigType, checkTopicConfigValue, isConfigRefusal, kafkaTopicKey } from '../topic-configs.js';
import { findKafkaTopic, kafkaNameOf } from '../topics.js';
import { defineHandler, type KafkaFrontend, type KafkaRequestContext } from './types.js';

type AlterResource = RequestOf<typeof ApiKey.IncrementalAlterConfigs>['resources'][number];
type AlterOp = AlterResource['configs'][number];
type ResourceResult = NonNullable<ResponseInputOf<typeof ApiKey.IncrementalAlterConfigs>['responses']>[number];

export const OpType = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const;
const opNames = ['SET', 'DELETE', 'APPEND', 'SUBTRACT'] as const;

export type ConfigOutcome = { errorCode: number; errorMessage: string | null };
type Outcome = ConfigOutcome;
const ok: Outcome = { errorCode: 0, errorMessage: null };

function listItems(value: string): string[] {
  return value.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

/** The core changes (null = back to the default) the ops make to a topic, or why they are refused. */
export function topicChanges(topic: Topic, brokerDefaults: Readonly<Record<string, unknown>>, ops: readonly AlterOp[]): Record<string, string | null> | Outcome {
  const counts = new Map<string, number>();
  for (const op of ops) counts.set(op.name, (counts.get(op.name) ?? 0) + 1);
  const duplicates = [...counts].filter(([, n]) => n > 1).map(([k]) => k);
  if (duplicates.length > 0) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Error due to duplicate config keys : ${duplicates.join(',')}` };
  const unknownOp = ops.find((op) => op.configOperation < 0 || op.configOperation >= opNames.length);
  if (unknownOp) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unknown alter config operation type ${unknownOp.configOperation} for ${unknownOp.name}` };
  const nulls = ops.filter((op) => op.value === null && op.configOperation !== OpType.DELETE);
  if (nulls.length > 0) {
    return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Null value not supported for : ${nulls.map((op) => `${opNames[op.configOperation]}:${op.name}`).join(',')}` };
  }

  const changes: Record<string, string | null> = {};
  for (const op of ops) {
    const key = kafkaTopicKey(op.name);
    if (key === null) return { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: `Unknown topic config name: ${op.name}` };
    let value = op.value;
    if (op.configOperation === OpType.DELETE) {
      if (key.kind === 'honoured') changes[op.name] = null;
      continue;
    }
    if (op.configOperation === OpType.APPEND || op.configOperation === OpType.SUBTRACT) {
      const verb = op.configOperation === OpType.APPEND ? 'append' : 'subtract';
      if (key.type !== ConfigType.LIST) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Config value ${verb} is not allowed for config key: ${op.name}` };
      const name = op.name as TopicConfigKey;
      const current = key.kind === 'honoured' ? String(topic.config[name] ?? brokerDefaults[name] ?? builtinTopicDefaults[name]) : '';
      const items = listItems(current);
      const given = listItems(value!);
      const next = verb === 'append' ? [...items, ...given.filter((g) => !items.includes(g))] : items.filter((i) => !given.includes(i));
      value = next.join(',');
    }
    const checked = checkTopicConfigValue(op.name, value);
    if (isConfigRefusal(checked)) return { errorCode: checked.code, errorMessage: checked.message };
    if (checked.store !== null) changes[op.name] = checked.store;
  }
  return changes;
}

/**
 * Applies to the named topic the changes `changesOf` computes (or its refusal); `replace` makes
 * them the topic's whole explicit configuration (legacy AlterConfigs). validate_only stops after
 * every check.
 */
async function alterTopicConfig(
  frontend: KafkaFrontend,
  name: string,
  changesOf: (topic: Topic) => Record<string, string | null> | ConfigOutcome,
  options: { validateOnly: boolean; replace: boolean },
): Promise<ConfigOutcome> {
  const topic = findKafkaTopic(frontend.broker, name);
  if (topic === null) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `The topic '${name}' does not exist.` };
  const changes = changesOf(topic);
  if ('errorCode' in changes) return changes as ConfigOutcome;
  try {
    // The core's merge is the final word on the result (e.g. cross-key rules it may add).
    mergeTopicConfig(topic.config, changes, options.replace);
    if (options.validateOnly || (Object.keys(changes).length === 0 && !options.replace)) return ok;
    await frontend.broker.updateTopicConfig(topic, changes, options.replace);
    frontend.logger.info('altered topic config', { topic: kafkaNameOf(topic), changes, replace: options.replace });
    return ok;
  } catch (err) {
    return { errorCode: kafkaCodeOf(err), errorMessage: err instanceof Error ? err.message : String(err) };
  }
}

function denied(errorCode: number): Outcome {
  return { errorCode, errorMessage: 'Authorization failed.' };
}

function alterBroker(frontend: KafkaFrontend, resource: ConfigResource): Outcome {
  const name = resource.resourceName;
  if (name !== '' && name !== String(frontend.nodeId)) {
    return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unexpected broker id, expected ${frontend.nodeId} or empty string, but received ${name}` };
  }
  const keys = resource.configs.map((c) => c.name).join(',');
  return {
    errorCode: ErrorCode.INVALID_CONFIG,
    errorMessage: `Cannot update these configs dynamically: ${keys}. Quartet's broker settings come from its configuration file (topic defaults: topicDefaults.*)`,
  };
}

/** What AlterConfigs and IncrementalAlterConfigs resources have in common. */
export interface ConfigResource {
  resourceType: number;
  resourceName: string;
  configs: ReadonlyArray<{ name: string }>;
}

/**
 * The per-resource answers of an alter request (both APIs): each resource once (a resource named
 * twice → INVALID_REQUEST), authorized as Kafka does (topic: ALTER_CONFIGS on it; broker:
 * ALTER_CONFIGS on the cluster), topics altered by `alterTopic`, broker resources refused.
 */
async function alterConfigResources<R extends ConfigResource>(
  context: KafkaRequestContext,
  resources: readonly R[],
  alterTopic: (resource: R) => Promise<ConfigOutcome>,
): Promise<Array<ConfigOutcome & { resourceType: number; resourceName: string }>> {
  const access = kafkaAccessOf(context.frontend, context.session);
  const keyOf = (r: R) => `${r.resourceType}:${r.resourceName}`;
  const occurrences = new Map<string, number>();
  for (const r of resources) occurrences.set(keyOf(r), (occurrences.get(keyOf(r)) ?? 0) + 1);
  const answered = new Set<string>();
  const responses: Array<ConfigOutcome & { resourceType: number; resourceName: string }> = [];
  for (const resource of resources) {
    const key = keyOf(resource);
    if (answered.has(key)) continue;
    answered.add(key);
    let outcome: Outcome;
    if (occurrences.get(key)! > 1) outcome = { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Each resource must appear at most once.' };
    else if (resource.resourceType === ConfigResourceType.TOPIC && !access.topicNamed(resource.resourceName, 'alterConfigs')) outcome = denied(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    else if (resource.resourceType === ConfigResourceType.TOPIC) outcome = await alterTopic(resource);
    else if (resource.resourceType === ConfigResourceType.BROKER && !access.cluster('alterConfigs')) outcome = denied(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    else if (resource.resourceType === ConfigResourceType.BROKER) outcome = alterBroker(context.frontend, resource);
    else outcome = { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unsupported resource type: ${resource.resourceType}` };
    responses.push({ ...outcome, resourceType: resource.resourceType, resourceName: resource.resourceName });
  }
  return responses;
}

/**
 * The answer to an alter request (both APIs): per resource as alterConfigResources gives it, a
 * topic's changes from `changesOf`, applied (replacing its whole explicit set when `replace`)
 * unless the request is validate_only.
 */
export async function answerAlterConfigs<R extends ConfigResource>(
  context: KafkaRequestContext,
  request: { resources: readonly R[]; validateOnly: boolean },
  changesOf: (topic: Topic, resource: R) => Record<string, string | null> | ConfigOutcome,
  options: { replace: boolean },
): Promise<{ throttleTimeMs: number; responses: ResourceResult[] }> {
  const { frontend } = context;
  const responses = await alterConfigResources(context, request.resources, (resource) =>
    alterTopicConfig(frontend, resource.resourceName, (topic) => changesOf(topic, resource), { validateOnly: request.validateOnly, replace: options.replace }),
  );
  return { throttleTimeMs: 0, responses };
}

/** The answer to an alter request refused whole (both APIs): every resource with `errorCode`. */
export function refusedConfigResources(resources: readonly ConfigResource[], errorCode: number) {
  return {
    throttleTimeMs: 0,
    responses: resources.map((r) => ({ errorCode, errorMessage: null, resourceType: r.resourceType, resourceName: r.resourceName })),
  };
}

export const incrementalAlterConfigsHandler = defineHandler({
  apiKey: ApiKey.IncrementalAlterConfigs,
  minVersion: 0,
  maxVersion: 1,
  handle(request, context) {
    return answerAlterConfigs(context, request, (topic, resource) => topicChanges(topic, context.frontend.broker.topicDefaults, resource.configs), { replace: false });
  },
  errorResponse(request, errorCode) {
    return refusedConfigResources(request.resources, errorCode);
  },
});
