// Kafka topic config names and what Quartet does with each (documented in docs/kafka-admin.md).
//
// The core (src/core/topic-config.ts) already keys topic configuration by Kafka's names, so the
// keys it honours pass through unchanged. Every other key Kafka defines falls in one of two
// groups, decided per key by one question: would dropping it change what a client relies on?
//
//   honoured  the core's keys (retention.ms, retention.bytes, segment.bytes, segment.ms,
//             cleanup.policy, max.message.bytes, flush.ms, quartet.fsync.policy, preallocate,
//             quartet.segment.roll, compression.type, message.timestamp.type and the timestamp
//             limits): validated by the core, stored on the topic, described with their source.
//   fixed     Quartet behaves one way only (one replica, no tiered storage): the key is accepted
//             when its value states that behaviour and refused (INVALID_CONFIG) otherwise, so
//             that e.g. min.insync.replicas=2 never silently means something else. Described
//             read-only with that value.
//   ignored   tuning knobs with no observable effect on a single-node Quartet (index spacing,
//             replication throttles, cleaner tuning...): the value is type-checked
//             as Kafka would, then dropped. Not described.
//
// Any other key is refused as unknown (INVALID_CONFIG), as Kafka refuses keys it does not define.
//
// Kafka references: LogConfig / TopicConfig (names, types, defaults), ServerTopicConfigSynonyms
// (the broker-level synonym of each topic key), DescribeConfigsResponse.ConfigSource/ConfigType.

import { deleteRetentionMsDefault } from '../../core/topic-config.js';
import { builtinTopicDefaults, topicConfigProblem, topicConfigSpecs, type TopicConfig, type TopicConfigKey } from '../../core/topic-config.js';

/** DescribeConfigsResponse.ConfigSource ids. */
export const ConfigSource = {
  UNKNOWN: 0,
  DYNAMIC_TOPIC_CONFIG: 1,
  DYNAMIC_BROKER_CONFIG: 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
  DYNAMIC_BROKER_LOGGER_CONFIG: 6,
} as const;
export type ConfigSourceId = (typeof ConfigSource)[keyof typeof ConfigSource];

/** DescribeConfigsResponse.ConfigType ids (v3+ config_type). */
export const ConfigType = {
  UNKNOWN: 0,
  BOOLEAN: 1,
  STRING: 2,
  INT: 3,
  SHORT: 4,
  LONG: 5,
  DOUBLE: 6,
  LIST: 7,
  CLASS: 8,
  PASSWORD: 9,
} as const;
export type ConfigTypeId = (typeof ConfigType)[keyof typeof ConfigType];

/** ConfigResource.Type ids. */
export const ConfigResourceType = {
  UNKNOWN: 0,
  TOPIC: 2,
  BROKER: 4,
  BROKER_LOGGER: 8,
} as const;

const longMax = '9223372036854775807';

export type KafkaTopicKeyKind = 'honoured' | 'fixed' | 'ignored';

export interface KafkaTopicKey {
  readonly name: string;
  readonly kind: KafkaTopicKeyKind;
  readonly type: ConfigTypeId;
  /** The broker-level key that sets the default (ServerTopicConfigSynonyms); null when none. */
  readonly brokerSynonym: string | null;
  /** For fixed keys: the one value Quartet accepts and describes. */
  readonly fixedValue?: string;
  readonly doc: string;
}

const honouredKeys: Readonly<Record<TopicConfigKey, { type: ConfigTypeId; brokerSynonym: string }>> = {
  'retention.ms': { type: ConfigType.LONG, brokerSynonym: 'log.retention.ms' },
  'retention.bytes': { type: ConfigType.LONG, brokerSynonym: 'log.retention.bytes' },
  'segment.bytes': { type: ConfigType.INT, brokerSynonym: 'log.segment.bytes' },
  'segment.ms': { type: ConfigType.LONG, brokerSynonym: 'log.roll.ms' },
  'cleanup.policy': { type: ConfigType.LIST, brokerSynonym: 'log.cleanup.policy' },
  'max.message.bytes': { type: ConfigType.INT, brokerSynonym: 'message.max.bytes' },
  'flush.ms': { type: ConfigType.LONG, brokerSynonym: 'log.flush.interval.ms' },
  'quartet.fsync.policy': { type: ConfigType.STRING, brokerSynonym: 'quartet.fsync.policy' },
  preallocate: { type: ConfigType.BOOLEAN, brokerSynonym: 'log.preallocate' },
  'quartet.segment.roll': { type: ConfigType.STRING, brokerSynonym: 'quartet.segment.roll' },
  'compression.type': { type: ConfigType.STRING, brokerSynonym: 'compression.type' },
  'message.timestamp.type': { type: ConfigType.STRING, brokerSynonym: 'log.message.timestamp.type' },
  'message.timestamp.difference.max.ms': { type: ConfigType.LONG, brokerSynonym: 'log.message.timestamp.difference.max.ms' },
  'message.timestamp.before.max.ms': { type: ConfigType.LONG, brokerSynonym: 'log.message.timestamp.before.max.ms' },
  'message.timestamp.after.max.ms': { type: ConfigType.LONG, brokerSynonym: 'log.message.timestamp.after.max.ms' },
};

function fixed(name: string, type: ConfigTypeId, brokerSynonym: string | null, fixedValue: string, doc: string): KafkaTopicKey {
  return { name, kind: 'fixed', type, brokerSynonym, fixedValue, doc };
}

function ignored(name: string, type: ConfigTypeId, doc: string): KafkaTopicKey {
  return { name, kind: 'ignored', type, brokerSynonym: null, doc };
}

const otherKeys: readonly KafkaTopicKey[] = [
  fixed('min.insync.replicas', ConfigType.INT, 'min.insync.replicas', '1', 'Quartet keeps one replica of each partition'),
  fixed('delete.retention.ms', ConfigType.LONG, 'log.cleaner.delete.retention.ms', String(deleteRetentionMsDefault), 'How long a tombstone survives compaction (ms)'),
  fixed('min.compaction.lag.ms', ConfigType.LONG, 'log.cleaner.min.compaction.lag.ms', '0', 'Sealed segments are compacted without a minimum lag'),
  fixed('flush.messages', ConfigType.LONG, 'log.flush.interval.messages', longMax, 'No flush by message count; use quartet.fsync.policy=always to fsync every append'),
  fixed('remote.storage.enable', ConfigType.BOOLEAN, null, 'false', 'Quartet has no tiered storage'),
  ignored('compression.gzip.level', ConfigType.INT, 'Recompression uses each codec\'s default level'),
  ignored('compression.lz4.level', ConfigType.INT, 'Recompression uses each codec\'s default level'),
  ignored('compression.zstd.level', ConfigType.INT, 'Recompression uses each codec\'s default level'),
  ignored('index.interval.bytes', ConfigType.INT, 'Offset index spacing is Quartet\'s own'),
  ignored('segment.index.bytes', ConfigType.INT, 'Index files are sized by Quartet'),
  ignored('segment.jitter.ms', ConfigType.LONG, 'Segments roll without jitter'),
  ignored('file.delete.delay.ms', ConfigType.LONG, 'Deleted segments are removed at once'),
  ignored('min.cleanable.dirty.ratio', ConfigType.DOUBLE, 'Compaction runs on every maintenance pass'),
  ignored('max.compaction.lag.ms', ConfigType.LONG, 'Compaction runs on every maintenance pass'),
  ignored('unclean.leader.election.enable', ConfigType.BOOLEAN, 'One replica: there is no leader election'),
  ignored('leader.replication.throttled.replicas', ConfigType.LIST, 'No replication'),
  ignored('follower.replication.throttled.replicas', ConfigType.LIST, 'No replication'),
  ignored('message.downconversion.enable', ConfigType.BOOLEAN, 'Quartet serves RecordBatch v2 only'),
  ignored('message.format.version', ConfigType.STRING, 'Deprecated in Kafka; Quartet stores RecordBatch v2'),
  ignored('local.retention.ms', ConfigType.LONG, 'Only meaningful with tiered storage'),
  ignored('local.retention.bytes', ConfigType.LONG, 'Only meaningful with tiered storage'),
];

const keysByName: ReadonlyMap<string, KafkaTopicKey> = new Map<string, KafkaTopicKey>([
  ...(Object.keys(honouredKeys) as TopicConfigKey[]).map((name): [string, KafkaTopicKey] => [
    name,
    { name, kind: 'honoured', type: honouredKeys[name].type, brokerSynonym: honouredKeys[name].brokerSynonym, doc: topicConfigSpecs[name].doc },
  ]),
  ...otherKeys.map((k): [string, KafkaTopicKey] => [k.name, k]),
]);

/** What Quartet does with a Kafka topic config key; null for a key Kafka does not define either. */
export function kafkaTopicKey(name: string): KafkaTopicKey | null {
  return keysByName.get(name) ?? null;
}

/** Keys DescribeConfigs lists for a topic, in this order: honoured first, then fixed. */
export const describedTopicKeys: readonly KafkaTopicKey[] = [...keysByName.values()].filter((k) => k.kind !== 'ignored');

/** Why `raw` is not a valid value of a Kafka config of `type`, or null (Kafka's ConfigDef parsing). */
function typeProblem(type: ConfigTypeId, raw: string): string | null {
  const value = raw.trim();
  switch (type) {
    case ConfigType.BOOLEAN:
      return /^(true|false)$/i.test(value) ? null : `Expected value to be either true or false, got ${JSON.stringify(raw)}`;
    case ConfigType.INT:
    case ConfigType.SHORT:
    case ConfigType.LONG:
      return /^-?\d+$/.test(value) ? null : `Expected an integer, got ${JSON.stringify(raw)}`;
    case ConfigType.DOUBLE:
      return value !== '' && Number.isFinite(Number(value)) ? null : `Expected a number, got ${JSON.stringify(raw)}`;
    default:
      return null;
  }
}

function sameValue(key: KafkaTopicKey, raw: string): boolean {
  const expected = key.fixedValue!;
  const value = raw.trim();
  switch (key.type) {
    case ConfigType.BOOLEAN:
      return value.toLowerCase() === expected;
    case ConfigType.INT:
    case ConfigType.LONG:
      return /^-?\d+$/.test(value) && BigInt(value) === BigInt(expected);
    default:
      return value === expected;
  }
}

/** A config entry refused: the Kafka error code to answer with and why. */
export interface ConfigRefusal {
  code: 40 | 42;
  message: string;
}

const INVALID_CONFIG = 40;
const INVALID_REQUEST = 42;

/**
 * Checks one `name = value` a client wants to set. Returns the value for the core (honoured keys,
 * after the core's own validation), null when the key is fixed or ignored and the value is
 * acceptable (nothing to store), or a refusal.
 */
export function checkTopicConfigValue(name: string, value: string | null): { store: string | null } | ConfigRefusal {
  if (value === null) return { code: INVALID_REQUEST, message: `Null value not supported for topic config ${name}` };
  const key = kafkaTopicKey(name);
  if (key === null) return { code: INVALID_CONFIG, message: `Unknown topic config name: ${name}` };
  switch (key.kind) {
    case 'honoured': {
      const problem = topicConfigProblem(name, value);
      if (problem === null) return { store: value };
      // The core says "<key> <reason>"; Kafka says "Invalid value <v> for configuration <key>: <reason>".
      const reason = problem.startsWith(`${name} `) ? problem.slice(name.length + 1) : problem;
      return { code: INVALID_CONFIG, message: `Invalid value ${value} for configuration ${name}: ${reason}` };
    }
    case 'fixed':
      if (sameValue(key, value)) return { store: null };
      return { code: INVALID_CONFIG, message: `Invalid value ${value} for configuration ${name}: Quartet supports only ${key.fixedValue} (${key.doc})` };
    case 'ignored': {
      const problem = typeProblem(key.type, value);
      return problem === null ? { store: null } : { code: INVALID_CONFIG, message: `Invalid value ${value} for configuration ${name}: ${problem}` };
    }
  }
}

export function isConfigRefusal(value: object): value is ConfigRefusal {
  return 'code' in value;
}

/** One config as DescribeConfigs (and CreateTopics v5+) report it. */
export interface DescribedConfig {
  name: string;
  value: string;
  readOnly: boolean;
  source: ConfigSourceId;
  type: ConfigTypeId;
  doc: string;
  /** Most specific first, as Kafka orders them: topic, broker, built-in default. */
  synonyms: Array<{ name: string; value: string; source: ConfigSourceId }>;
}

function text(value: number | string): string {
  return typeof value === 'number' ? String(value) : value;
}

/**
 * Every described key of a topic with its effective value and where it comes from: the topic's
 * own value (DYNAMIC_TOPIC_CONFIG), the operator's broker-level default (STATIC_BROKER_CONFIG,
 * under the broker key's name) or the built-in default (DEFAULT_CONFIG). Fixed keys are
 * read-only defaults.
 */
export function describeTopicConfigs(explicit: Readonly<TopicConfig>, brokerDefaults: Readonly<TopicConfig>): DescribedConfig[] {
  return describedTopicKeys.map((key) => {
    if (key.kind === 'fixed') {
      const value = key.fixedValue!;
      const synonyms = [{ name: key.brokerSynonym ?? key.name, value, source: ConfigSource.DEFAULT_CONFIG }];
      return { name: key.name, value, readOnly: true, source: ConfigSource.DEFAULT_CONFIG, type: key.type, doc: key.doc, synonyms };
    }
    const name = key.name as TopicConfigKey;
    const brokerName = key.brokerSynonym ?? name;
    const synonyms: DescribedConfig['synonyms'] = [];
    if (explicit[name] !== undefined) synonyms.push({ name, value: text(explicit[name]), source: ConfigSource.DYNAMIC_TOPIC_CONFIG });
    if (brokerDefaults[name] !== undefined) synonyms.push({ name: brokerName, value: text(brokerDefaults[name]), source: ConfigSource.STATIC_BROKER_CONFIG });
    synonyms.push({ name: brokerName, value: text(builtinTopicDefaults[name]), source: ConfigSource.DEFAULT_CONFIG });
    const chosen = synonyms[0]!;
    return { name, value: chosen.value, readOnly: false, source: chosen.source, type: key.type, doc: key.doc, synonyms };
  });
}
