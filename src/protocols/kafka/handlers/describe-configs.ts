// DescribeConfigs (key 32), v0-4. Grammar: codec/messages/describe-configs.ts.
//
// Resource type 2 (topic): every honoured key with its effective value and source, plus the fixed
// keys read-only (../topic-configs.ts). Sources follow ConfigHelper.createTopicConfigEntry: the
// first synonym wins, in the order topic value (DYNAMIC_TOPIC_CONFIG 1), operator's broker-level
// default (STATIC_BROKER_CONFIG 4, under the broker key's name, e.g. log.retention.ms), built-in
// default (DEFAULT_CONFIG 5). An invalid name → INVALID_TOPIC_EXCEPTION; an unknown topic →
// UNKNOWN_TOPIC_OR_PARTITION.
//
// Resource type 4 (broker): the resource name "" (cluster-wide dynamic defaults, of which Quartet
// has none) gives an empty list; this broker's id gives a fixed set of read-only broker configs;
// any other name → INVALID_REQUEST (as ConfigHelper.describeConfigs). Other resource types →
// INVALID_REQUEST.
//
// configuration_keys null means every key; otherwise only the named keys that exist (unknown
// names are left out, not errors). Synonyms only when include_synonyms (v1+), documentation only
// when include_documentation (v3+). v0's is_default is "source is DEFAULT_CONFIG".
//
// Authorization (../access.ts): a topic the SASL user may not read (Iggy read_topic) →
// TOPIC_AUTHORIZATION_FAILED (29); the broker without read_servers → CLUSTER_AUTHORIZATION_FAILED (31).

import { builtinTopicDefaults, topicConfigKeys } from '../../../core/topic-config.js';
import { kafkaAccessOf, type KafkaAccess } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import type { RequestOf, ResponseInputOf } from '../codec/messages/index.js';
import { ConfigResourceType, ConfigSource, ConfigType, describeTopicConfigs, describedTopicKeys, kafkaTopicKey, type DescribedConfig } from '../topic-configs.js';
import { findKafkaTopic, kafkaTopicNameProblem } from '../topics.js';
import { defineHandler, type KafkaFrontend } from './types.js';

type Resource = RequestOf<typeof ApiKey.DescribeConfigs>['resources'][number];
type ResourceResult = NonNullable<ResponseInputOf<typeof ApiKey.DescribeConfigs>['results']>[number];
type ConfigResult = NonNullable<ResourceResult['configs']>[number];

function broker(name: string, value: string, source: DescribedConfig['source'], type: DescribedConfig['type'], doc: string): DescribedConfig {
  return { name, value, readOnly: true, source, type, doc, synonyms: [{ name, value, source }] };
}

/**
 * The broker configs a client may want to read (Streams and admin tools look at the replication
 * and partition defaults), all read-only: Quartet's settings come from its own configuration
 * file, not from AlterConfigs. Settings the operator configured are STATIC_BROKER_CONFIG.
 */
export function describeBrokerConfigs(frontend: KafkaFrontend): DescribedConfig[] {
  const { settings } = frontend;
  const { STATIC_BROKER_CONFIG: STATIC, DEFAULT_CONFIG: DEFAULT } = ConfigSource;
  const configs: DescribedConfig[] = [
    broker('node.id', String(frontend.nodeId), STATIC, ConfigType.INT, 'This broker\'s id'),
    broker('broker.id', String(frontend.nodeId), STATIC, ConfigType.INT, 'This broker\'s id'),
    broker('num.partitions', String(settings.defaultPartitions), STATIC, ConfigType.INT, 'Partitions of auto-created topics and of CreateTopics with num_partitions -1'),
    broker('auto.create.topics.enable', String(settings.autoCreateTopics), STATIC, ConfigType.BOOLEAN, 'Create topics named in Metadata requests'),
    broker('socket.request.max.bytes', String(settings.requestBytesMax), STATIC, ConfigType.INT, 'Largest request accepted (bytes)'),
    broker('sasl.enabled.mechanisms', settings.saslMechanisms.join(','), STATIC, ConfigType.LIST, 'SASL mechanisms offered by SaslHandshake'),
    broker('default.replication.factor', '1', DEFAULT, ConfigType.INT, 'Quartet keeps one replica of each partition'),
    broker('offsets.topic.replication.factor', '1', DEFAULT, ConfigType.SHORT, 'Committed offsets live in the metadata store, one copy'),
    broker('transaction.state.log.replication.factor', '1', DEFAULT, ConfigType.SHORT, 'Transaction state lives in the metadata store, one copy'),
    broker('transaction.state.log.min.isr', '1', DEFAULT, ConfigType.INT, 'One replica'),
    broker('delete.topic.enable', 'true', DEFAULT, ConfigType.BOOLEAN, 'DeleteTopics is always allowed'),
  ];
  const defaults = frontend.broker.topicDefaults;
  for (const key of topicConfigKeys) {
    const spec = kafkaTopicKey(key)!;
    const operatorSet = defaults[key] !== undefined;
    const value = String(defaults[key] ?? builtinTopicDefaults[key]);
    configs.push(broker(spec.brokerSynonym ?? key, value, operatorSet ? STATIC : DEFAULT, spec.type, `Default of the topic config ${key}: ${spec.doc}`));
  }
  for (const key of describedTopicKeys) {
    if (key.kind === 'fixed' && key.brokerSynonym !== null && !configs.some((c) => c.name === key.brokerSynonym)) {
      configs.push(broker(key.brokerSynonym, key.fixedValue!, DEFAULT, key.type, key.doc));
    }
  }
  return configs;
}

function toResult(config: DescribedConfig, includeSynonyms: boolean, includeDocumentation: boolean): ConfigResult {
  return {
    name: config.name,
    value: config.value,
    readOnly: config.readOnly,
    isDefault: config.source === ConfigSource.DEFAULT_CONFIG,
    configSource: config.source,
    isSensitive: false,
    synonyms: includeSynonyms ? config.synonyms : [],
    configType: config.type,
    documentation: includeDocumentation ? config.doc : null,
  };
}

type Described = { configs: DescribedConfig[] } | { errorCode: number; errorMessage: string };

function describeResource(frontend: KafkaFrontend, access: KafkaAccess, resource: Resource): Described {
  const name = resource.resourceName;
  switch (resource.resourceType) {
    case ConfigResourceType.TOPIC: {
      if (!access.topicNamed(name, 'describeConfigs')) return { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: 'Authorization failed.' };
      const problem = kafkaTopicNameProblem(name);
      if (problem !== null) return { errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, errorMessage: `Topic name "${name}" is illegal: ${problem}` };
      const topic = findKafkaTopic(frontend.broker, name);
      if (topic === null) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `The topic '${name}' does not exist.` };
      return { configs: describeTopicConfigs(topic.config, frontend.broker.topicDefaults) };
    }
    case ConfigResourceType.BROKER: {
      if (!access.cluster('describeConfigs')) return { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Authorization failed.' };
      if (name === '') return { configs: [] };
      if (!/^-?\d+$/.test(name)) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Broker id must be an integer, but it is: ${name}` };
      if (Number(name) !== frontend.nodeId) {
        return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unexpected broker id, expected ${frontend.nodeId} or empty string, but received ${name}` };
      }
      return { configs: describeBrokerConfigs(frontend) };
    }
    default:
      return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unsupported resource type: ${resource.resourceType}` };
  }
}

export const describeConfigsHandler = defineHandler({
  apiKey: ApiKey.DescribeConfigs,
  minVersion: 0,
  maxVersion: 4,
  handle(request, { frontend, session }) {
    const access = kafkaAccessOf(frontend, session);
    const results = request.resources.map((resource): ResourceResult => {
      const base = { resourceType: resource.resourceType, resourceName: resource.resourceName };
      const described = describeResource(frontend, access, resource);
      if ('errorCode' in described) return { ...base, errorCode: described.errorCode, errorMessage: described.errorMessage, configs: [] };
      const wanted = resource.configurationKeys === null ? null : new Set(resource.configurationKeys);
      const configs = described.configs
        .filter((c) => wanted === null || wanted.has(c.name))
        .map((c) => toResult(c, request.includeSynonyms, request.includeDocumentation));
      return { ...base, errorCode: 0, errorMessage: null, configs };
    });
    return { throttleTimeMs: 0, results };
  },
  errorResponse(request, errorCode) {
    return {
      throttleTimeMs: 0,
      results: request.resources.map((r) => ({ errorCode, errorMessage: null, resourceType: r.resourceType, resourceName: r.resourceName, configs: [] })),
    };
  },
});
