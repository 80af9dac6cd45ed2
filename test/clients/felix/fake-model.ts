// The in-memory state behind the scripted Felix peer (fake-peer.ts): streams of shards of
// records, idempotent producers, caches with TTL and a change log, counters, and queue groups
// with attempts and dead letters. Test-only and small: one node, no visibility timeouts, no
// retention; only what the SDK's tests need to see answered as the notes say.

import { randomBytes } from 'node:crypto';
import { cacheScopeNotFound, streamNotFound, type PublishRefusalReason } from '../../../src/protocols/felix/codec/index.js';

export interface Shard {
  records: Buffer[];
  /** Called after every append with the first new offset and the payloads. */
  listeners: Set<(base: bigint, payloads: Buffer[]) => void>;
}

export interface CacheEntry {
  value: Buffer;
  /** Absolute ms, 0 = never. */
  expiresAt: bigint;
}

export interface CacheChangeRecord {
  key: string;
  value: Buffer | null;
  offset: bigint;
  expiresAt: bigint;
}

export interface Cache {
  entries: Map<string, CacheEntry>;
  log: CacheChangeRecord[];
  /** History below this offset was compacted away (a resume from before it gets a snapshot). */
  compactedBefore: bigint;
  counters: Map<string, bigint>;
  listeners: Set<(change: CacheChangeRecord) => void>;
}

export interface GroupState {
  cursor: number;
  attempts: Map<number, number>;
  redeliver: number[];
  claimed: Set<number>;
  dead: number[];
}

/** Deliveries before a nacked record becomes a dead letter. */
export const groupAttemptsMax = 3;

const scopeKey = (...parts: string[]): string => parts.join('\u0000');

/** FNV-1a 32 of the key: which shard a keyed batch goes to. */
function shardOfKey(key: Buffer, shards: number): number {
  let h = 0x811c9dc5;
  for (const b of key) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h % shards;
}

export class FakeModel {
  private readonly streams = new Map<string, Shard[]>();
  private readonly caches = new Map<string, Cache>();
  private readonly groups = new Map<string, GroupState>();
  private readonly producers = new Map<bigint, Map<string, { next: bigint }>>();
  /** Now in Unix ms, for TTLs. */
  now: () => bigint = () => BigInt(Date.now());

  createStream(tenant: string, namespace: string, stream: string, shards = 1): void {
    if (!this.streams.has(scopeKey(tenant, namespace, stream))) this.streams.set(scopeKey(tenant, namespace, stream), Array.from({ length: shards }, () => ({ records: [], listeners: new Set() })));
  }

  createCache(tenant: string, namespace: string, cache: string): void {
    const k = scopeKey(tenant, namespace, cache);
    if (!this.caches.has(k)) this.caches.set(k, { entries: new Map(), log: [], compactedBefore: 0n, counters: new Map(), listeners: new Set() });
  }

  shards(tenant: string, namespace: string, stream: string): Shard[] | string {
    return this.streams.get(scopeKey(tenant, namespace, stream)) ?? streamNotFound(tenant, namespace, stream);
  }

  cache(tenant: string, namespace: string, cache: string): Cache | string {
    return this.caches.get(scopeKey(tenant, namespace, cache)) ?? cacheScopeNotFound(tenant, namespace, cache);
  }

  /** Appends a batch; returns its shard and base offset, or the error text. */
  append(tenant: string, namespace: string, stream: string, key: Buffer | null | undefined, payloads: readonly Buffer[]): { shard: number; base: bigint } | string {
    const shards = this.shards(tenant, namespace, stream);
    if (typeof shards === 'string') return shards;
    const shard = key === null || key === undefined ? 0 : shardOfKey(key, shards.length);
    const s = shards[shard]!;
    const base = BigInt(s.records.length);
    const copies = payloads.map((p) => Buffer.from(p));
    s.records.push(...copies);
    for (const l of s.listeners) l(base, copies);
    return { shard, base };
  }

  producerInit(): bigint {
    const id = randomBytes(8).readBigUInt64BE(0);
    this.producers.set(id, new Map());
    return id;
  }

  /** Forgets every producer (as a new leader would). */
  forgetProducers(): void {
    this.producers.clear();
  }

  /** The spec's table for publish_idempotent: append, duplicate, or the refusal. */
  publishIdempotent(p: { tenantId: string; namespace: string; stream: string; key?: Buffer; payloads: Buffer[]; producerId: bigint; sequence: bigint }): 'ok' | PublishRefusalReason | string {
    const shards = this.shards(p.tenantId, p.namespace, p.stream);
    if (typeof shards === 'string') return shards;
    const producer = this.producers.get(p.producerId);
    if (producer === undefined) return { kind: 'unknown_producer' };
    const route = scopeKey(p.tenantId, p.namespace, p.stream, p.key?.toString('hex') ?? '');
    const state = producer.get(route) ?? { next: 0n };
    producer.set(route, state);
    if (p.sequence > state.next) return { kind: 'sequence_gap', expected: state.next };
    if (p.sequence + 64n < state.next) return { kind: 'sequence_expired' };
    if (p.sequence < state.next) return 'ok';
    const r = this.append(p.tenantId, p.namespace, p.stream, p.key, p.payloads);
    if (typeof r === 'string') return r;
    state.next++;
    return 'ok';
  }

  cachePut(cache: Cache, key: string, value: Buffer, ttlMs: bigint | null): void {
    const expiresAt = ttlMs === null ? 0n : this.now() + ttlMs;
    cache.entries.set(key, { value: Buffer.from(value), expiresAt });
    this.change(cache, key, Buffer.from(value), expiresAt);
  }

  cacheGet(cache: Cache, key: string): Buffer | null {
    const e = cache.entries.get(key);
    if (e === undefined) return null;
    if (e.expiresAt !== 0n && e.expiresAt <= this.now()) {
      cache.entries.delete(key);
      return null;
    }
    return e.value;
  }

  cacheDelete(cache: Cache, key: string): Buffer | null {
    const v = this.cacheGet(cache, key);
    if (v === null) return null;
    cache.entries.delete(key);
    this.change(cache, key, null, 0n);
    return v;
  }

  private change(cache: Cache, key: string, value: Buffer | null, expiresAt: bigint): void {
    const c: CacheChangeRecord = { key, value, offset: BigInt(cache.log.length), expiresAt };
    cache.log.push(c);
    for (const l of cache.listeners) l(c);
  }

  group(tenant: string, namespace: string, stream: string, shard: number, group: string): GroupState {
    const k = scopeKey(tenant, namespace, stream, String(shard), group);
    let g = this.groups.get(k);
    if (g === undefined) this.groups.set(k, (g = { cursor: 0, attempts: new Map(), redeliver: [], claimed: new Set(), dead: [] }));
    return g;
  }

  /** Claims up to `max` records: redeliveries first, then new ones. */
  claim(records: Buffer[], g: GroupState, max: number): Array<{ offset: bigint; payload: Buffer; attempts: number }> {
    const out: Array<{ offset: bigint; payload: Buffer; attempts: number }> = [];
    const take = (o: number): void => {
      const attempts = (g.attempts.get(o) ?? 0) + 1;
      g.attempts.set(o, attempts);
      g.claimed.add(o);
      out.push({ offset: BigInt(o), payload: records[o]!, attempts });
    };
    while (out.length < max && g.redeliver.length > 0) take(g.redeliver.shift()!);
    while (out.length < max && g.cursor < records.length) take(g.cursor++);
    return out;
  }

  nack(g: GroupState, offset: number): void {
    if (!g.claimed.delete(offset)) return;
    if ((g.attempts.get(offset) ?? 0) >= groupAttemptsMax) g.dead.push(offset);
    else g.redeliver.push(offset);
  }
}
