// Per-topic configuration, under Kafka's names so that the Kafka front-end can pass CreateTopics
// and AlterConfigs entries through unchanged; the other front-ends translate their own options
// (Iggy message_expiry, max_topic_size, segment_size, enforce_fsync...) onto the same keys.
//
// A topic stores only the values set explicitly on it. The effective value of a key is the
// topic's own value, else the broker-level default (BrokerOptions.topicDefaults), else the
// built-in default below. That keeps "is this the default?" answerable (Kafka DescribeConfigs)
// and lets a broker default change apply to every topic that did not override it.
//
// Documented for users in docs/topic-config.md.

import { defaultLogConfig, type CleanupPolicy, type FsyncPolicy, type LogConfig, type SegmentRoll } from '../log/types.js';

/** How long a tombstone survives compaction by default (Kafka's delete.retention.ms): the log's. */
export { deleteRetentionMsDefault } from '../log/common.js';
import { QuartetError } from '../base/errors.js';

export interface TopicConfigValues {
  /** Delete sealed segments whose newest record is older than this (ms); -1 keeps forever. */
  'retention.ms': number;
  /** Delete the oldest sealed segments while the partition is larger than this (bytes); -1 = no limit. */
  'retention.bytes': number;
  /** Roll the active segment at this size (bytes). */
  'segment.bytes': number;
  /** Roll the active segment when its first batch is this old (ms). */
  'segment.ms': number;
  'cleanup.policy': CleanupPolicy;
  /** Largest batch accepted (bytes). */
  'max.message.bytes': number;
  /** fsync interval under the 'interval' policy (ms). */
  'flush.ms': number;
  /** interval: fsync every flush.ms; always: fsync before acknowledging each append. */
  'quartet.fsync.policy': FsyncPolicy;
  /** Reserve each new segment's disk blocks when it is created ('true' | 'false', as Kafka's preallocate). */
  preallocate: 'true' | 'false';
  /** before: a batch that would overflow the active segment starts a new one (Kafka); after: the segment rolls once it holds segment.bytes (Iggy). */
  'quartet.segment.roll': SegmentRoll;
  /** The codec Kafka batches are stored in: producer keeps each batch's own; another recompresses a batch that differs. */
  'compression.type': CompressionTypeName;
  /** CreateTime: record times are the producer's; LogAppendTime: a batch's time is its append time. */
  'message.timestamp.type': TimestampTypeName;
  /** Deprecated by Kafka 3.6 (KIP-937) for the two below, which fall back to it while they are unset (ms, decimal). */
  'message.timestamp.difference.max.ms': string;
  /** A CreateTime record at most this much older than the broker clock is accepted (ms, decimal). */
  'message.timestamp.before.max.ms': string;
  /** A CreateTime record at most this much newer than the broker clock is accepted (ms, decimal). */
  'message.timestamp.after.max.ms': string;
}

export const compressionTypeNames = ['producer', 'uncompressed', 'gzip', 'snappy', 'lz4', 'zstd'] as const;
export type CompressionTypeName = (typeof compressionTypeNames)[number];
export type TimestampTypeName = 'CreateTime' | 'LogAppendTime';

/** Kafka's Long.MAX_VALUE, the "no limit" of the timestamp keys, as Kafka describes it. */
export const timestampLimitNone = '9223372036854775807';

export type TopicConfigKey = keyof TopicConfigValues;

/** The values set explicitly on a topic; what the catalog stores. */
export type TopicConfig = Partial<TopicConfigValues>;

// Named limits (units in the names).
export const segmentBytesMin = 1024;
/** Kafka's segment.bytes is an int32. */
export const segmentBytesMax = 2 ** 31 - 1;
/** The log envelope's payload limit (src/log/envelope.ts envelopePayloadBytesMax). */
export const maxMessageBytesMax = 128 * 1024 * 1024;
/** Node timers cannot wait longer than 2^31-1 ms. */
export const flushMsMax = 2 ** 31 - 1;

const day_ms = 24 * 3600 * 1000;

export const builtinTopicDefaults: Readonly<TopicConfigValues> = Object.freeze({
  'retention.ms': 7 * day_ms,
  'retention.bytes': -1,
  'segment.bytes': 1024 * 1024 * 1024,
  'segment.ms': 7 * day_ms,
  'cleanup.policy': 'delete',
  'max.message.bytes': defaultLogConfig.maxBatchBytes,
  'flush.ms': defaultLogConfig.fsyncIntervalMs,
  'quartet.fsync.policy': 'interval',
  preallocate: 'false',
  'quartet.segment.roll': 'before',
  'compression.type': 'producer',
  'message.timestamp.type': 'CreateTime',
  'message.timestamp.difference.max.ms': timestampLimitNone,
  'message.timestamp.before.max.ms': timestampLimitNone,
  'message.timestamp.after.max.ms': timestampLimitNone,
});

interface KeySpec {
  doc: string;
  /** Parses and range-checks a raw value; returns the value or a reason it is invalid. */
  parse(raw: unknown): { value: number | string } | { reason: string };
}

function integerKey(doc: string, min: number, max: number, extra?: (n: number) => string | null): KeySpec {
  return {
    doc,
    parse(raw) {
      const n = parseInteger(raw);
      if (n === null) return { reason: `must be an integer, got ${describe(raw)}` };
      if (n < min || n > max) return { reason: `must be between ${min} and ${max}, got ${n}` };
      const problem = extra?.(n) ?? null;
      return problem ? { reason: problem } : { value: n };
    },
  };
}

/** A non-negative int64 in decimal (Kafka's LONG with atLeast(0)), kept as its normalized text. */
function timestampLimitKey(doc: string): KeySpec {
  return {
    doc,
    parse(raw) {
      const text = typeof raw === 'number' && Number.isSafeInteger(raw) ? String(raw) : typeof raw === 'string' ? raw.trim() : null;
      if (text === null || !/^\d+$/.test(text)) return { reason: `must be a non-negative integer, got ${describe(raw)}` };
      const n = BigInt(text);
      if (n > BigInt(timestampLimitNone)) return { reason: `must be at most ${timestampLimitNone}, got ${text}` };
      return { value: n.toString() };
    },
  };
}

const cleanupPolicies: Record<string, CleanupPolicy> = {
  delete: 'delete',
  compact: 'compact',
  'compact,delete': 'compact,delete',
  'delete,compact': 'compact,delete',
};

export const topicConfigSpecs: Readonly<Record<TopicConfigKey, KeySpec>> = {
  'retention.ms': integerKey('Age (ms) after which sealed segments are deleted; -1 keeps forever', -1, Number.MAX_SAFE_INTEGER),
  'retention.bytes': integerKey('Partition size (bytes) above which the oldest sealed segments are deleted; -1 = no limit', -1, Number.MAX_SAFE_INTEGER),
  'segment.bytes': integerKey('Segment size (bytes) at which the active segment rolls', segmentBytesMin, segmentBytesMax),
  'segment.ms': integerKey('Age (ms) at which the active segment rolls', 1, Number.MAX_SAFE_INTEGER),
  'cleanup.policy': {
    doc: 'delete (retention), compact (keep the last record per key) or compact,delete',
    parse(raw) {
      if (typeof raw !== 'string') return { reason: `must be a string, got ${describe(raw)}` };
      const normalized = raw.split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== '').join(',');
      const policy = cleanupPolicies[normalized];
      return policy ? { value: policy } : { reason: `must be delete, compact or compact,delete, got ${JSON.stringify(raw)}` };
    },
  },
  'max.message.bytes': integerKey('Largest batch (bytes) the topic accepts', 1, maxMessageBytesMax),
  'flush.ms': integerKey('fsync interval (ms) under quartet.fsync.policy=interval', 1, flushMsMax),
  'quartet.fsync.policy': {
    doc: 'interval (fsync every flush.ms) or always (fsync before acknowledging)',
    parse(raw) {
      if (raw === 'interval' || raw === 'always') return { value: raw };
      return { reason: `must be interval or always, got ${describe(raw)}` };
    },
  },
  preallocate: {
    doc: 'Reserve the disk blocks of each new segment (segment.bytes) when it is created',
    parse(raw) {
      const text = typeof raw === 'boolean' ? String(raw) : typeof raw === 'string' ? raw.trim().toLowerCase() : null;
      if (text === 'true' || text === 'false') return { value: text };
      return { reason: `must be true or false, got ${describe(raw)}` };
    },
  },
  'quartet.segment.roll': {
    doc: 'before: a batch that would take the active segment past segment.bytes starts a new one (Kafka); after: the active segment rolls once it holds segment.bytes or more (Iggy)',
    parse(raw) {
      if (raw === 'before' || raw === 'after') return { value: raw };
      return { reason: `must be before or after, got ${describe(raw)}` };
    },
  },
  'compression.type': {
    doc: 'producer (batches kept as compressed by the producer), uncompressed, gzip, snappy, lz4 or zstd (Kafka batches in another codec are recompressed on append)',
    parse(raw) {
      const text = typeof raw === 'string' ? raw.trim().toLowerCase() : null;
      const name = compressionTypeNames.find((n) => n === text);
      return name !== undefined ? { value: name } : { reason: `must be one of ${compressionTypeNames.join(', ')}, got ${describe(raw)}` };
    },
  },
  'message.timestamp.type': {
    doc: 'CreateTime (record times are the producer\'s) or LogAppendTime (a batch\'s time is when it is appended)',
    parse(raw) {
      if (raw === 'CreateTime' || raw === 'LogAppendTime') return { value: raw };
      return { reason: `must be CreateTime or LogAppendTime, got ${describe(raw)}` };
    },
  },
  'message.timestamp.difference.max.ms': timestampLimitKey('Deprecated: the before and after limits when they are unset (ms)'),
  'message.timestamp.before.max.ms': timestampLimitKey('How far a CreateTime record may lie behind the broker clock (ms)'),
  'message.timestamp.after.max.ms': timestampLimitKey('How far a CreateTime record may lie ahead of the broker clock (ms)'),
};

/** The timestamp window of CreateTime records (Kafka LogConfig): each limit falls back to difference.max.ms while it is unset (at its default). */
export function timestampLimitsMs(c: Pick<TopicConfigValues, 'message.timestamp.difference.max.ms' | 'message.timestamp.before.max.ms' | 'message.timestamp.after.max.ms'>): { beforeMs: number; afterMs: number } {
  const pick = (own: string): number => Number(own === timestampLimitNone ? c['message.timestamp.difference.max.ms'] : own);
  return { beforeMs: pick(c['message.timestamp.before.max.ms']), afterMs: pick(c['message.timestamp.after.max.ms']) };
}

export const topicConfigKeys = Object.keys(topicConfigSpecs) as TopicConfigKey[];

export function isTopicConfigKey(key: string): key is TopicConfigKey {
  return Object.hasOwn(topicConfigSpecs, key);
}

/**
 * Why `raw` is not a valid value for `key`, or null if it is. Never throws: front-ends that
 * report per-key errors (Kafka CreateTopics, Iggy options) call this directly.
 */
export function topicConfigProblem(key: string, raw: unknown): string | null {
  if (!isTopicConfigKey(key)) return `unknown topic config key '${key}'`;
  const parsed = topicConfigSpecs[key].parse(raw);
  return 'reason' in parsed ? `${key} ${parsed.reason}` : null;
}

/**
 * Validates and normalizes a set of explicitly given values (strings as Kafka sends them, or
 * numbers). Throws QuartetError('invalid_config') naming the first bad key and why.
 */
export function parseTopicConfig(input: Readonly<Record<string, unknown>>): TopicConfig {
  const out: Record<string, number | string> = {};
  for (const [key, raw] of Object.entries(input)) {
    if (!isTopicConfigKey(key)) throw new QuartetError('invalid_config', `unknown topic config key '${key}'`);
    const parsed = topicConfigSpecs[key].parse(raw);
    if ('reason' in parsed) throw new QuartetError('invalid_config', `${key} ${parsed.reason}`);
    out[key] = parsed.value;
  }
  return out as TopicConfig;
}

/**
 * Applies changes to a topic's explicit values: a null value removes the key (back to the
 * default). With replace=true the result holds only the given keys (Kafka AlterConfigs).
 */
export function mergeTopicConfig(current: TopicConfig, changes: Readonly<Record<string, unknown>>, replace = false): TopicConfig {
  const removals = Object.entries(changes).filter(([, v]) => v === null).map(([k]) => k);
  for (const key of removals) {
    if (!isTopicConfigKey(key)) throw new QuartetError('invalid_config', `unknown topic config key '${key}'`);
  }
  const sets = parseTopicConfig(Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== null)));
  const next: TopicConfig = replace ? {} : { ...current };
  for (const key of removals) delete next[key as TopicConfigKey];
  return { ...next, ...sets };
}

/** The full effective configuration of a topic. */
export function effectiveTopicConfig(explicit: TopicConfig, brokerDefaults: TopicConfig = {}): TopicConfigValues {
  return { ...builtinTopicDefaults, ...brokerDefaults, ...explicit };
}

export type TopicConfigSource = 'topic' | 'broker' | 'default';

export interface TopicConfigEntry {
  key: TopicConfigKey;
  value: number | string;
  source: TopicConfigSource;
  doc: string;
}

/** Every key with its effective value and where it came from (Kafka DescribeConfigs, Iggy options). */
export function describeTopicConfig(explicit: TopicConfig, brokerDefaults: TopicConfig = {}): TopicConfigEntry[] {
  return topicConfigKeys.map((key) => {
    const source: TopicConfigSource = key in explicit ? 'topic' : key in brokerDefaults ? 'broker' : 'default';
    const value = (explicit[key] ?? brokerDefaults[key] ?? builtinTopicDefaults[key]) as number | string;
    return { key, value, source, doc: topicConfigSpecs[key].doc };
  });
}

/** The partition log's configuration for a topic. */
export function toLogConfig(explicit: TopicConfig, brokerDefaults: TopicConfig = {}): LogConfig {
  const c = effectiveTopicConfig(explicit, brokerDefaults);
  return {
    segmentBytes: c['segment.bytes'],
    segmentMs: c['segment.ms'],
    retentionMs: c['retention.ms'],
    retentionBytes: c['retention.bytes'],
    cleanupPolicy: c['cleanup.policy'],
    fsyncPolicy: c['quartet.fsync.policy'],
    fsyncIntervalMs: c['flush.ms'],
    maxBatchBytes: c['max.message.bytes'],
    indexIntervalBytes: defaultLogConfig.indexIntervalBytes,
    preallocate: c.preallocate === 'true',
    segmentRoll: c['quartet.segment.roll'],
  };
}

function parseInteger(raw: unknown): number | null {
  if (typeof raw === 'number') return Number.isSafeInteger(raw) ? raw : null;
  if (typeof raw === 'bigint') return raw >= BigInt(Number.MIN_SAFE_INTEGER) && raw <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(raw) : null;
  if (typeof raw !== 'string' || !/^\s*-?\d+\s*$/.test(raw)) return null;
  const n = Number(raw.trim());
  return Number.isSafeInteger(n) ? n : null;
}

function describe(raw: unknown): string {
  if (typeof raw === 'string') return JSON.stringify(raw);
  if (raw === null || raw === undefined) return String(raw);
  if (typeof raw === 'number' || typeof raw === 'boolean' || typeof raw === 'bigint') return String(raw);
  return typeof raw;
}
