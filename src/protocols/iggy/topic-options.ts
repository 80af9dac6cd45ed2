// The Iggy topic option catalog (server notes §8, core/server/src/responses.rs
// topic_option_descriptors): validation, the explicit/derived split, and how each option is
// honoured through the core topic config.
//
// | Iggy option                        | core topic config                                       |
// |------------------------------------|---------------------------------------------------------|
// | segment_size (bytes)               | segment.bytes                                           |
// | enforce_fsync (bool)               | quartet.fsync.policy = always | interval                |
// | message_expiry (µs; MAX = never)   | retention.ms = ceil(µs / 1000), or -1 for never         |
// | max_topic_size (bytes; MAX = none) | retention.bytes = floor(size / partitions) (per-partition limit), or -1 |
// | messages_required_to_save          | stored and reported; Quartet writes every batch to the  |
// | size_of_messages_required_to_save  |   log before acknowledging, which meets any threshold   |
// | preallocate_segments (bool)        | preallocate (validated: segment_size × partitions ≤     |
// |                                    |   64 GiB): new segments reserve segment_size on disk    |
// | compression_algorithm (none|gzip)  | stored and reported (Iggy itself compresses nothing)    |
// | (none: Iggy limits a batch only by its frame, 64 MiB by default) | max.message.bytes = the log's  |
// |                                    |   largest batch, so the listener's frame limit governs  |
// | (none: Iggy seals a segment once it holds segment_size) | quartet.segment.roll = after    |
//
// Every mapped key is written explicitly into the core config on create, but for retention: a
// message_expiry or max_topic_size the client left to the server (absent, or 0, the wire's
// ServerDefault) writes no retention.ms / retention.bytes, so the broker-wide default applies, as
// it does to a topic any other protocol creates (docs/topic-config.md, "Retention"). The
// Iggy view (explicit entries as sent, derived entries = defaults resolved at admission) is kept
// in a small Iggy-owned table (topic-options-table.ts): the group store under scope
// `iggy.topic-options`, key = the topic's internal id. Topics created by another protocol have no
// entry: their options are all derived from the core config.

import type { Topic } from '../../core/catalog.js';
import type { TopicConfig } from '../../core/topic-config.js';
import { builtinTopicDefaults, maxMessageBytesMax } from '../../core/topic-config.js';
import {
  HeaderKind,
  IggyErrorCode,
  decodeHeaderValue,
  encodeHeaderValue,
  option,
  u64Max,
  type HeaderValue,
  type OptionEntry,
} from './codec/index.js';
import type { OptionDescriptor } from './codec/commands/system.js';
import { IggyFailure } from './errors.js';

/** The protocol tag of Iggy's options in the core topic options store (topic-options-table.ts). */
export const topicOptionsProtocol = 'iggy';
export const mib = 1024 * 1024;
export const gib = 1024 * mib;
/** MAX_PREALLOCATED_TOPIC_BYTES. */
export const preallocatedTopicBytesMax = 64n * BigInt(gib);
export const updatableTopicOptionKeys: ReadonlySet<string> = new Set(['compression_algorithm', 'message_expiry', 'max_topic_size']);

export interface IggyTopicOptions {
  compression_algorithm: 'none' | 'gzip';
  message_expiry: bigint;
  max_topic_size: bigint;
  segment_size: bigint;
  enforce_fsync: boolean;
  messages_required_to_save: number;
  size_of_messages_required_to_save: bigint;
  preallocate_segments: boolean;
}
export type TopicOptionKey = keyof IggyTopicOptions;

export const topicOptionDefaults: Readonly<IggyTopicOptions> = Object.freeze({
  compression_algorithm: 'none',
  message_expiry: u64Max,
  max_topic_size: u64Max,
  segment_size: BigInt(gib),
  enforce_fsync: false,
  messages_required_to_save: 1024,
  size_of_messages_required_to_save: BigInt(mib),
  preallocate_segments: false,
});

/** Catalog order (the order DescribeOptions serves and derived entries are written in). */
export const topicOptionKeys: readonly TopicOptionKey[] = [
  'compression_algorithm',
  'message_expiry',
  'max_topic_size',
  'segment_size',
  'enforce_fsync',
  'messages_required_to_save',
  'size_of_messages_required_to_save',
  'preallocate_segments',
];

const descriptions: Record<TopicOptionKey, string> = {
  compression_algorithm: 'Compression algorithm for the topic: none or gzip (stored; nothing is compressed)',
  message_expiry: 'Message expiry in microseconds (or a duration such as "7 days"); u64::MAX = never',
  max_topic_size: 'Maximum topic size in bytes (or "1 GiB"); u64::MAX = unlimited; at least segment_size',
  segment_size: 'Segment size in bytes: a multiple of 512 between 1 MiB and 1 GiB',
  enforce_fsync: 'Fsync every append before acknowledging it',
  messages_required_to_save: 'Messages buffered before a save (1..=16777216); Quartet saves every batch',
  size_of_messages_required_to_save: 'Bytes buffered before a save (at most 1 GiB); Quartet saves every batch',
  preallocate_segments: 'Preallocate segment files (segment_size × partitions ≤ 64 GiB)',
};

function valueOf(key: TopicOptionKey, v: IggyTopicOptions[TopicOptionKey]): HeaderValue {
  switch (key) {
    case 'compression_algorithm':
      return { kind: 'string', value: v as string };
    case 'enforce_fsync':
    case 'preallocate_segments':
      return { kind: 'bool', value: v as boolean };
    case 'messages_required_to_save':
      return { kind: 'uint32', value: v as number };
    default:
      return { kind: 'uint64', value: v as bigint };
  }
}

export function optionEntry(key: TopicOptionKey, v: IggyTopicOptions[TopicOptionKey]): OptionEntry {
  return option(key, valueOf(key, v));
}

/** DescribeOptions scope 1 (topic). */
export function topicOptionDescriptors(): OptionDescriptor[] {
  return topicOptionKeys.map((key) => {
    const v = valueOf(key, topicOptionDefaults[key]);
    return { key, kind: v.kind === 'string' ? HeaderKind.string : HeaderKind[v.kind as 'bool'], defaultValue: encodeHeaderValue(v), description: descriptions[key] };
  });
}

/** Duration units in ns, as humantime (the reference server's parser) names them; matched lower-cased, except `M` (month). */
const durationUnitsNs: Record<string, bigint> = {
  ns: 1n, nsec: 1n, nanos: 1n,
  us: 1_000n, 'µs': 1_000n, usec: 1_000n, micros: 1_000n, microsecond: 1_000n, microseconds: 1_000n,
  ms: 1_000_000n, msec: 1_000_000n, millis: 1_000_000n, millisecond: 1_000_000n, milliseconds: 1_000_000n,
  s: 1_000_000_000n, sec: 1_000_000_000n, secs: 1_000_000_000n, second: 1_000_000_000n, seconds: 1_000_000_000n,
  m: 60_000_000_000n, min: 60_000_000_000n, mins: 60_000_000_000n, minute: 60_000_000_000n, minutes: 60_000_000_000n,
  h: 3_600_000_000_000n, hr: 3_600_000_000_000n, hrs: 3_600_000_000_000n, hour: 3_600_000_000_000n, hours: 3_600_000_000_000n,
  d: 86_400_000_000_000n, day: 86_400_000_000_000n, days: 86_400_000_000_000n,
  w: 604_800_000_000_000n, week: 604_800_000_000_000n, weeks: 604_800_000_000_000n,
  // humantime's month (30.44 days) and year (365.25 days).
  month: 2_630_016_000_000_000n, months: 2_630_016_000_000_000n,
  y: 31_557_600_000_000_000n, year: 31_557_600_000_000_000n, years: 31_557_600_000_000_000n,
};
const sizeUnits: Record<string, bigint> = {
  b: 1n, kb: 1000n, kib: 1024n, mb: 1000n ** 2n, mib: 1024n ** 2n, gb: 1000n ** 3n, gib: 1024n ** 3n, tb: 1000n ** 4n, tib: 1024n ** 4n,
};

/**
 * "7 days", "1h 30m", "500ms", "1M" (a month: humantime's units, case-insensitive but for `M` and
 * `m`), "unlimited"/"never"/"none" (= u64::MAX), or digits (µs). Rounded down to whole µs.
 */
export function parseHumanDuration(text: string): bigint | null {
  const s = text.trim();
  const lower = s.toLowerCase();
  if (lower === 'never' || lower === 'none' || lower === 'unlimited' || lower === 'server_default') return u64Max;
  if (/^\d+$/.test(s)) return BigInt(s);
  if (!/^(\d+\s*[a-zA-Zµ]+\s*)+$/.test(s)) return null;
  let totalNs = 0n;
  for (const part of s.matchAll(/(\d+)\s*([a-zA-Zµ]+)/g)) {
    const unit = durationUnitsNs[part[2] === 'M' ? 'month' : part[2]!.toLowerCase()];
    if (unit === undefined) return null;
    totalNs += BigInt(part[1]!) * unit;
  }
  return totalNs / 1000n;
}

/** "1 GiB", "1.5 GiB", "512 MB", "1024", "unlimited" (decimals rounded down to whole bytes). */
export function parseHumanSize(text: string): bigint | null {
  const s = text.trim().toLowerCase();
  if (s === 'unlimited' || s === 'none' || s === 'never') return u64Max;
  const m = /^(\d+)(?:\.(\d+))?\s*([a-z]*)$/.exec(s);
  if (!m) return null;
  const unit = m[3] === '' ? 1n : sizeUnits[m[3]!];
  if (unit === undefined) return null;
  const fraction = m[2] ?? '';
  return (BigInt(m[1]! + fraction) * unit) / 10n ** BigInt(fraction.length);
}

function bad(key: string, why: string): IggyFailure {
  return new IggyFailure(IggyErrorCode.invalidOptionValue, 'result', `${key}: ${why}`);
}

function asUnsigned(key: string, v: HeaderValue, human: ((s: string) => bigint | null) | null): bigint {
  switch (v.kind) {
    case 'uint8':
    case 'uint16':
    case 'uint32':
    case 'int8':
    case 'int16':
    case 'int32':
      if (v.value < 0) throw bad(key, 'must not be negative');
      return BigInt(v.value);
    case 'uint64':
    case 'int64':
    case 'uint128':
    case 'int128':
      if (v.value < 0n || v.value > u64Max) throw bad(key, 'out of the u64 range');
      return v.value;
    case 'string': {
      const parsed = human ? human(v.value) : /^\s*\d+\s*$/.test(v.value) ? BigInt(v.value.trim()) : null;
      if (parsed === null || parsed > u64Max) throw bad(key, `cannot parse ${JSON.stringify(v.value)}`);
      return parsed;
    }
    default:
      throw bad(key, `kind ${v.kind} is not a number`);
  }
}

function asBool(key: string, v: HeaderValue): boolean {
  if (v.kind === 'bool') return v.value;
  if (v.kind === 'string' && (v.value === 'true' || v.value === 'false')) return v.value === 'true';
  throw bad(key, `kind ${v.kind} is not a bool`);
}

/**
 * Parses one entry into its canonical value, or null for the server-default sentinel (0 for the
 * zeroMeansDefault keys); throws 4041 (unknown key) or 4042 (bad value).
 */
export function parseTopicOption(entry: OptionEntry): { key: TopicOptionKey; value: IggyTopicOptions[TopicOptionKey] | null } {
  const key = entry.key as TopicOptionKey;
  if (!topicOptionKeys.includes(key)) throw new IggyFailure(IggyErrorCode.unsupportedOptionKey, 'result', `unknown topic option '${entry.key}'`);
  const v = decodeHeaderValue(entry.kind, entry.value);
  if (typeof v === 'string') throw bad(key, v);
  if (isServerDefault(key, v)) return { key, value: null };
  switch (key) {
    case 'compression_algorithm': {
      // By name, or by code (spec "Compression": 1 none, 2 gzip), in any unsigned integer kind.
      if (v.kind === 'string') {
        const c = v.value.toLowerCase();
        if (c !== 'none' && c !== 'gzip') throw bad(key, 'must be none or gzip');
        return { key, value: c };
      }
      if (v.kind === 'uint8' || v.kind === 'uint16' || v.kind === 'uint32') {
        if (v.value === 1) return { key, value: 'none' };
        if (v.value === 2) return { key, value: 'gzip' };
      }
      throw bad(key, 'must be none or gzip (or code 1 or 2)');
    }
    case 'message_expiry':
      return { key, value: asUnsigned(key, v, parseHumanDuration) };
    case 'max_topic_size':
      return { key, value: asUnsigned(key, v, parseHumanSize) };
    case 'segment_size': {
      const n = asUnsigned(key, v, parseHumanSize);
      if (n % 512n !== 0n || n < BigInt(mib) || n > BigInt(gib)) throw bad(key, 'must be a multiple of 512 between 1 MiB and 1 GiB');
      return { key, value: n };
    }
    case 'enforce_fsync':
    case 'preallocate_segments':
      return { key, value: asBool(key, v) };
    case 'messages_required_to_save': {
      const n = asUnsigned(key, v, null);
      if (n < 1n || n > 16_777_216n) throw bad(key, 'must be 1..=16777216');
      return { key, value: Number(n) };
    }
    case 'size_of_messages_required_to_save': {
      const n = asUnsigned(key, v, parseHumanSize);
      if (n < 1n || n > BigInt(gib)) throw bad(key, 'must be 1..=1 GiB');
      return { key, value: n };
    }
  }
}

export interface StoredTopicOptions {
  /** Keys the client sent, canonical. */
  explicit: TopicOptionKey[];
  values: IggyTopicOptions;
}

/**
 * Keys whose value 0 is the wire's "server default" sentinel (the reference's IggyExpiry,
 * MaxTopicSize and IggyByteSize ServerDefault): parsed as if the key were absent, so a Rust client
 * sending ServerDefault gets the default, not "expire at once" or a refusal.
 */
const zeroMeansDefault: ReadonlySet<TopicOptionKey> = new Set(['message_expiry', 'max_topic_size', 'segment_size']);

/** The sentinel: 0, as a number or a numeric string. */
function isServerDefault(key: TopicOptionKey, v: HeaderValue): boolean {
  if (!zeroMeansDefault.has(key)) return false;
  if (v.kind === 'string') return v.value.trim() === '0';
  return v.value === 0 || v.value === 0n;
}

/** Validates a create request's options: the resolved values and the keys that were explicit. */
export function admitTopicOptions(entries: readonly OptionEntry[], partitions: number): StoredTopicOptions {
  const values: IggyTopicOptions = { ...topicOptionDefaults };
  const explicit: TopicOptionKey[] = [];
  for (const e of entries) {
    const { key, value } = parseTopicOption(e);
    if (value === null) continue;
    (values as unknown as Record<string, unknown>)[key] = value;
    explicit.push(key);
  }
  checkCombination(values, partitions);
  return { explicit, values };
}

/**
 * Runs an option admission at once, for its static bound: a `max_topic_size` below the segment
 * size is status 1019 before anything else is looked at, as the reference server denies it before
 * consensus. Its other refusals (4041, 4042: committed results there) are kept for the caller to
 * raise after it has checked the stream or topic and the permission: `admitted()` returns the
 * options or throws the refusal.
 */
export function admitStaticBoundsFirst<T>(admit: () => T): () => T {
  let value: T;
  try {
    value = admit();
  } catch (err) {
    if (err instanceof IggyFailure && err.code === IggyErrorCode.invalidTopicSize) throw err;
    return () => {
      throw err;
    };
  }
  return () => value;
}

/** The options after an update patch, and the keys the patch set. */
export interface PatchedTopicOptions extends StoredTopicOptions {
  set: TopicOptionKey[];
}

/** Applies an update patch (only the updatable keys) to the topic's options as they read now. */
export function patchTopicOptions(current: StoredTopicOptions, entries: readonly OptionEntry[]): PatchedTopicOptions {
  const values: IggyTopicOptions = { ...current.values };
  const explicit = new Set(current.explicit);
  const set = new Set<TopicOptionKey>();
  for (const e of entries) {
    const { key, value } = parseTopicOption(e);
    if (!updatableTopicOptionKeys.has(key)) throw new IggyFailure(IggyErrorCode.unsupportedOptionKey, 'result', `${key} cannot be updated`);
    // The server-default sentinel in a patch leaves the value as it is.
    if (value === null) continue;
    (values as unknown as Record<string, unknown>)[key] = value;
    explicit.add(key);
    set.add(key);
    // Only what the patch sets is checked: a segment size another protocol set above the cap
    // (Kafka allows it) does not stop a rename or a compression change.
    if (key === 'max_topic_size') checkTopicSize(values);
  }
  return { explicit: topicOptionKeys.filter((k) => explicit.has(k)), values, set: topicOptionKeys.filter((k) => set.has(k)) };
}

/**
 * What Iggy stores after an update: its own stored options (or, for a topic made by another
 * protocol, the options read from the core config) with only the keys the patch set replaced. The
 * keys another protocol changed keep reading from the core config (optionsOverCoreConfig), and do
 * not become Iggy's own.
 */
export function storedAfterPatch(stored: StoredTopicOptions, patch: PatchedTopicOptions): StoredTopicOptions {
  const values = { ...stored.values };
  const explicit = new Set(stored.explicit);
  for (const key of patch.set) {
    (values as Record<TopicOptionKey, unknown>)[key] = patch.values[key];
    explicit.add(key);
  }
  return { explicit: topicOptionKeys.filter((k) => explicit.has(k)), values };
}

/** A cap below one segment could never be enforced: InvalidTopicSize, a plain status (the reference server's static bounds, pre-consensus). */
function checkTopicSize(v: IggyTopicOptions): void {
  if (v.max_topic_size !== u64Max && v.max_topic_size !== 0n && v.max_topic_size < v.segment_size) {
    throw new IggyFailure(IggyErrorCode.invalidTopicSize, 'status', `max_topic_size ${v.max_topic_size} is below segment_size ${v.segment_size}`);
  }
}

function checkCombination(v: IggyTopicOptions, partitions: number): void {
  checkTopicSize(v);
  if (v.preallocate_segments && v.segment_size * BigInt(partitions) > preallocatedTopicBytesMax) {
    throw bad('preallocate_segments', 'segment_size × partitions exceeds 64 GiB');
  }
}

/** max_topic_size as a per-partition limit (retention.bytes), or -1 when unlimited. */
function retentionBytesFor(v: IggyTopicOptions, partitions: number): number {
  if (v.max_topic_size === u64Max || v.max_topic_size === 0n) return -1;
  return Math.max(1, Math.floor(Number(v.max_topic_size) / Math.max(1, partitions)));
}

/**
 * The core topic config that honours the options (every mapped key explicit), less the retention
 * keys of a message_expiry or max_topic_size not in `explicit` (when given): the broker default
 * applies to those.
 */
export function coreConfigFor(v: IggyTopicOptions, partitions: number, explicit?: readonly TopicOptionKey[]): Partial<TopicConfig> {
  const config = mappedCoreConfig(v, partitions);
  if (explicit === undefined) return config;
  const { 'retention.ms': retentionMs, 'retention.bytes': retentionBytes, ...rest } = config;
  return {
    ...rest,
    ...(explicit.includes('message_expiry') ? { 'retention.ms': retentionMs } : {}),
    ...(explicit.includes('max_topic_size') ? { 'retention.bytes': retentionBytes } : {}),
  };
}

/** Every core config key the options map to. */
function mappedCoreConfig(v: IggyTopicOptions, partitions: number): TopicConfig {
  const expiryNever = v.message_expiry === u64Max || v.message_expiry === 0n;
  const retentionMs = expiryNever ? -1 : Number((v.message_expiry + 999n) / 1000n);
  return {
    'segment.bytes': Number(v.segment_size),
    'quartet.fsync.policy': v.enforce_fsync ? 'always' : 'interval',
    'retention.ms': Number.isSafeInteger(retentionMs) ? retentionMs : -1,
    'retention.bytes': retentionBytesFor(v, partitions),
    preallocate: v.preallocate_segments ? 'true' : 'false',
    'max.message.bytes': maxMessageBytesMax,
    // The reference server's segment is full once it holds segment_size bytes (Segment::is_full),
    // and the next batch starts a new one.
    'quartet.segment.roll': 'after',
  };
}

/** The Iggy view of a topic created by another protocol: every option derived from the core config. */
export function optionsFromCoreConfig(topic: Topic, brokerDefaults: TopicConfig): StoredTopicOptions {
  const c = { ...builtinTopicDefaults, ...brokerDefaults, ...topic.config };
  const values: IggyTopicOptions = {
    ...topicOptionDefaults,
    message_expiry: c['retention.ms'] < 0 ? u64Max : BigInt(c['retention.ms']) * 1000n,
    max_topic_size: c['retention.bytes'] < 0 ? u64Max : BigInt(c['retention.bytes']) * BigInt(topic.partitions),
    segment_size: BigInt(c['segment.bytes']),
    enforce_fsync: c['quartet.fsync.policy'] === 'always',
    preallocate_segments: c.preallocate === 'true',
  };
  return { explicit: [], values };
}

/** The options honoured through one core config key each (coreConfigFor, optionsFromCoreConfig). */
const optionCoreKeys: readonly (readonly [TopicOptionKey, keyof TopicConfig])[] = [
  ['message_expiry', 'retention.ms'],
  ['max_topic_size', 'retention.bytes'],
  ['segment_size', 'segment.bytes'],
  ['enforce_fsync', 'quartet.fsync.policy'],
  ['preallocate_segments', 'preallocate'],
];

/**
 * The Iggy view of a topic made through Iggy: each option as Iggy stored it where the core config
 * still holds what it maps to; where it does not (another protocol changed the key: a Kafka
 * IncrementalAlterConfigs or CreatePartitions), the value read back from the core config, explicit
 * when the key is set on the topic and derived when it is back to the broker default. With no
 * partitions max_topic_size is kept (there is no per-partition limit to read it from).
 */
export function optionsOverCoreConfig(stored: StoredTopicOptions, topic: Topic, brokerDefaults: TopicConfig): StoredTopicOptions {
  const mapped = mappedCoreConfig(stored.values, topic.partitions);
  const effective = { ...builtinTopicDefaults, ...brokerDefaults, ...topic.config };
  let derived: IggyTopicOptions | null = null;
  const values = { ...stored.values };
  const explicit = new Set(stored.explicit);
  for (const [key, coreKey] of optionCoreKeys) {
    if (mapped[coreKey] === effective[coreKey] || (key === 'max_topic_size' && topic.partitions === 0)) continue;
    derived ??= optionsFromCoreConfig(topic, brokerDefaults).values;
    (values as Record<TopicOptionKey, unknown>)[key] = derived[key];
    if (topic.config[coreKey] === undefined) explicit.delete(key);
    else explicit.add(key);
  }
  return derived === null ? stored : { explicit: topicOptionKeys.filter((k) => explicit.has(k)), values };
}

/**
 * The core config change that spreads the topic's max_topic_size over `newCount` partitions
 * (retention.bytes is a per-partition limit), or null: not set through Iggy (a value derived from
 * another protocol's retention.bytes stays per partition), unlimited, no partitions left, or the core
 * config no longer holds Iggy's spread (another protocol set retention.bytes, which then stays, as
 * Kafka keeps retention.bytes across CreatePartitions). A topic with no partitions keeps its last
 * spread, which is spread again.
 */
export function maxTopicSizeSpread(stored: StoredTopicOptions, topic: Topic, brokerDefaults: TopicConfig, newCount: number): { 'retention.bytes': number } | null {
  const v = stored.values;
  if (!stored.explicit.includes('max_topic_size') || v.max_topic_size === u64Max || v.max_topic_size === 0n || newCount === 0) return null;
  const effective = { ...builtinTopicDefaults, ...brokerDefaults, ...topic.config };
  if (topic.partitions > 0 && retentionBytesFor(v, topic.partitions) !== effective['retention.bytes']) return null;
  return { 'retention.bytes': retentionBytesFor(v, newCount) };
}

/** Keys in byte order: the reference server keeps a topic's options in a sorted map and serves them so. */
const byKey = (a: TopicOptionKey, b: TopicOptionKey): number => (a < b ? -1 : a > b ? 1 : 0);

export function explicitEntries(s: StoredTopicOptions): OptionEntry[] {
  return [...s.explicit].sort(byKey).map((k) => optionEntry(k, s.values[k]));
}

export function derivedEntries(s: StoredTopicOptions): OptionEntry[] {
  return topicOptionKeys
    .filter((k) => !s.explicit.includes(k))
    .sort(byKey)
    .map((k) => optionEntry(k, s.values[k]));
}

/** JSON form for the topic options store (bigints as decimal strings). */
export function serializeTopicOptions(s: StoredTopicOptions): unknown {
  return { explicit: s.explicit, values: Object.fromEntries(Object.entries(s.values).map(([k, v]) => [k, typeof v === 'bigint' ? `${v}n` : v])) };
}

export function deserializeTopicOptions(raw: unknown): StoredTopicOptions | null {
  if (raw === null || typeof raw !== 'object') return null;
  const r = raw as { explicit?: unknown; values?: Record<string, unknown> };
  if (!Array.isArray(r.explicit) || typeof r.values !== 'object' || r.values === null) return null;
  const values = { ...topicOptionDefaults } as unknown as Record<string, unknown>;
  for (const [k, v] of Object.entries(r.values)) {
    if (!topicOptionKeys.includes(k as TopicOptionKey)) continue;
    values[k] = typeof v === 'string' && /^\d+n$/.test(v) ? BigInt(v.slice(0, -1)) : v;
  }
  return { explicit: r.explicit.filter((k): k is TopicOptionKey => topicOptionKeys.includes(k as TopicOptionKey)), values: values as unknown as IggyTopicOptions };
}
