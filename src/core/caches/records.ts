// How caches and counters live in the catalog and the log (docs/caches.md): the reserved topic
// names, the key-to-shard hash, and the records the cache service appends and reads back. Every
// record is an ordinary keyed record, so a compacted topic keeps the latest one per key and any
// protocol can read it:
//
//   cache put       key = the cache key (UTF-8), value = the bytes,
//                   header quartet.cache.expires-at = absolute expiry, Unix ms, decimal (absent: never)
//   cache delete    key, value = null (a tombstone)
//   cache expiry    key, value = null, header quartet.cache.expired = "1"
//   counter         key, value = the counter's absolute value, decimal ASCII ("-42")

import { QuartetError } from '../../base/errors.js';
import { encodeNeutralBatch, type NeutralRecordInput } from '../../log/neutral-format.js';
import type { AppendRequest, NeutralRecord } from '../../log/types.js';

/** Topic holding a cache's values: `__cache.<cache>` in the scope's namespace. */
export const cacheTopicPrefix = '__cache.';
/** Topic holding a cache's counters: `__counter.<cache>` in the scope's namespace. */
export const counterTopicPrefix = '__counter.';

export const expiresAtHeader = 'quartet.cache.expires-at';
export const expiredHeader = 'quartet.cache.expired';

export type CacheKind = 'cache' | 'counter';

export function cacheTopicName(kind: CacheKind, cache: string): string {
  return (kind === 'cache' ? cacheTopicPrefix : counterTopicPrefix) + cache;
}

/** The cache a reserved topic name belongs to, or null for any other topic. */
export function cacheOfTopic(name: string): { kind: CacheKind; cache: string } | null {
  if (name.startsWith(cacheTopicPrefix)) return { kind: 'cache', cache: name.slice(cacheTopicPrefix.length) };
  if (name.startsWith(counterTopicPrefix)) return { kind: 'counter', cache: name.slice(counterTopicPrefix.length) };
  return null;
}

/**
 * Kafka's murmur2 (the Java client's Utils.murmur2), so that a Kafka producer's default
 * partitioner sends a keyed record to the shard the cache service reads that key from.
 */
export function murmur2(data: Buffer): number {
  const m = 0x5bd1e995;
  const length = data.length;
  let h = (0x9747b28c ^ length) | 0;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = data.readInt32LE(i);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m) ^ k;
  }
  const rest = length & 3;
  if (rest === 3) h ^= data[whole + 2]! << 16;
  if (rest >= 2) h ^= data[whole + 1]! << 8;
  if (rest >= 1) {
    h ^= data[whole]!;
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h | 0;
}

/** The shard of a key: toPositive(murmur2(key)) % shards, as Kafka's default partitioner. */
export function shardOfKey(key: string, shards: number): number {
  if (!(shards >= 1)) throw new RangeError('a cache has at least one shard');
  return (murmur2(Buffer.from(key, 'utf8')) & 0x7fffffff) % shards;
}

// ---- the signed 64-bit range of counters ------------------------------------------------------

export const i64Min = -(2n ** 63n);
export const i64Max = 2n ** 63n - 1n;

export function isI64(value: bigint): boolean {
  return value >= i64Min && value <= i64Max;
}

/** A stored counter value, or null when the bytes are not a decimal i64 (another writer's record). */
export function parseCounterValue(value: Buffer): bigint | null {
  const text = value.toString('latin1');
  if (!/^-?[0-9]{1,19}$/.test(text)) return null;
  const n = BigInt(text);
  return isI64(n) ? n : null;
}

// ---- records --------------------------------------------------------------------------------

/** One change as the log holds it, decoded. */
export interface CacheRecord {
  offset: number;
  key: string;
  /** null: deleted (or expired). */
  value: Buffer | null;
  /** Absolute expiry, Unix ms; 0 = never. */
  expiresAtMillis: number;
}

/** A record read from the log as a cache change; null for records no cache can hold (no key, or a key that is not UTF-8). */
export function cacheRecordOf(record: NeutralRecord): CacheRecord | null {
  if (record.key === null) return null;
  const key = record.key.toString('utf8');
  if (!Buffer.from(key, 'utf8').equals(record.key)) return null;
  let expiresAtMillis = 0;
  const header = record.headers.find((h) => h.key === expiresAtHeader)?.value;
  if (header !== undefined && header !== null && record.value !== null) {
    const text = header.toString('latin1');
    // An unreadable expiry (another writer's header) reads as "never".
    if (/^[0-9]{1,16}$/.test(text)) expiresAtMillis = Number(text);
  }
  return { offset: record.offset, key, value: record.value, expiresAtMillis };
}

export interface CacheWrite {
  key: string;
  value: Buffer | null;
  expiresAtMillis?: number;
  /** A tombstone for an entry that expired (header quartet.cache.expired). */
  expired?: boolean;
}

/** One neutral batch holding `writes`, stamped `now`. */
export function encodeCacheWrites(writes: readonly CacheWrite[], now: number): AppendRequest {
  if (writes.length === 0) throw new QuartetError('invalid_request', 'a cache write needs at least one record');
  const records: NeutralRecordInput[] = writes.map((w) => {
    const headers: NeutralRecordInput['headers'] = [];
    if (w.expiresAtMillis !== undefined && w.expiresAtMillis > 0) headers.push({ key: expiresAtHeader, value: String(w.expiresAtMillis) });
    if (w.expired === true) headers.push({ key: expiredHeader, value: '1' });
    return { key: Buffer.from(w.key, 'utf8'), value: w.value, headers };
  });
  return encodeNeutralBatch(records, { timestamp: now });
}

export function counterValueBytes(value: bigint): Buffer {
  return Buffer.from(value.toString(), 'latin1');
}
