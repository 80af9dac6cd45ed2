// The cache and counter service (docs/caches.md): named caches of keyed values with optional
// TTLs, signed 64-bit counters beside them, and watches of a key or a key prefix, for any
// front-end (Felix's cache_* and counter_* requests). A cache is named by (scope, cache): the
// scope is a catalog namespace, and the cache's state is a compacted topic in it (records.ts:
// `__cache.<cache>` for values, `__counter.<cache>` for counters, partitions = shards), so caches
// survive restarts and every protocol can read them. The in-memory index of each shard is
// rebuilt from the log on first use (cache-log.ts).
//
// - TTL: the absolute expiry goes in the record. An expired entry reads as absent at once; the
//   service then appends a tombstone for it (on the read that found it, and by a periodic sweep),
//   so that watchers see it go and compaction removes its value.
// - Counters: each add appends the new absolute value, checked to stay in the i64 range.
// - Limits: key and value sizes, the bytes a cache's index holds, caches per scope, shards,
//   watches and each watch's queue; past one, the call fails with a QuartetError and nothing is
//   written.

import type { Broker } from '../broker.js';
import type { NamespaceRef, Topic } from '../catalog.js';
import { defaultNamespaceName, nameProblem } from '../catalog.js';
import type { Clock } from '../../base/clock.js';
import { QuartetError } from '../../base/errors.js';
import { silentLogger, type Logger } from '../../base/logger.js';
import type { Counter, Gauge } from '../metrics.js';
import { SerialQueue } from '../serial.js';
import { CacheLog, entryBytes, isExpired, type CacheEntry } from './cache-log.js';
import { cacheOfTopic, cacheTopicName, counterValueBytes, isI64, parseCounterValue, shardOfKey, type CacheKind } from './records.js';
import { CacheWatch, type CacheChange, type CacheWatchFilter } from './watch.js';

export interface CacheLimits {
  /** UTF-8 bytes of a key (Felix names and keys are u16-length strings). */
  keyBytesMax: number;
  valueBytesMax: number;
  /** Bytes one cache's index may hold (keys + values + cacheEntryOverheadBytes per entry, all shards); counters count apart. */
  cacheBytesMax: number;
  /** Caches (distinct names, values or counters) in one scope. */
  cachesPerScopeMax: number;
  shardsMax: number;
  /** A put's TTL at most (ms). */
  ttlMsMax: number;
  /** Watches open at once over the whole service. */
  watchesMax: number;
  /** Live changes a watch holds for its consumer; one more ends it with lagged. */
  watchQueueEventsMax: number;
  /** Tombstones one append of the expiry sweep carries. */
  sweepRecordsPerAppendMax: number;
}

export const cacheLimitsDefault: Readonly<CacheLimits> = Object.freeze({
  keyBytesMax: 65_535,
  valueBytesMax: 1024 * 1024,
  cacheBytesMax: 64 * 1024 * 1024,
  cachesPerScopeMax: 1_000,
  shardsMax: 256,
  ttlMsMax: 10 * 365 * 24 * 3600 * 1000,
  watchesMax: 10_000,
  watchQueueEventsMax: 1_024,
  sweepRecordsPerAppendMax: 1_000,
});

export const cacheSweepIntervalMsDefault = 60_000;

export interface CacheServiceOptions {
  broker: Broker;
  /** Expiry times; default: the broker's clock. */
  clock?: Clock;
  logger?: Logger;
  limits?: Partial<CacheLimits>;
  /** A put, add or watch on a cache that does not exist creates it (default true); otherwise createCache must. */
  autoCreate?: boolean;
  /** Shards of a cache created without a count; default 1. */
  shardsDefault?: number;
  /**
   * Topic config of every cache topic created (durability: quartet.fsync.policy, flush.ms;
   * segment.bytes...), over which cleanup.policy=compact is always set.
   */
  topicConfig?: Readonly<Record<string, unknown>>;
  /** How often expired entries get their tombstones (ms); default 60000; 0: only on reads and sweepExpired(). */
  sweepIntervalMs?: number;
}

/** A cache as the catalog holds it. */
export interface CacheInfo {
  scope: string;
  cache: string;
  shards: number;
  /** The topics (in the scope's namespace) holding its values and its counters; null while not created. */
  valuesTopic: string | null;
  countersTopic: string | null;
}

export interface CacheEntryView {
  value: Buffer;
  offset: number;
  shard: number;
  /** Absolute expiry, Unix ms; 0 = never. */
  expiresAtMillis: number;
}

export interface PutOptions {
  /** Time to live (ms, integer 1..ttlMsMax); absent: the entry never expires. */
  ttlMs?: number;
}

export interface PutResult {
  shard: number;
  offset: number;
  expiresAtMillis: number;
}

export interface WatchRequest {
  /** Exactly one of key and prefix (an empty prefix is every key of the shard). */
  key?: string;
  prefix?: string;
  /** The shard a prefix watch reads (default 0); a key watch reads its key's shard. */
  shard?: number;
  /** The first change not yet seen (the last handled + 1); absent: live changes only. Not with retained. */
  fromOffset?: number;
  /** First the matching entries as they are now, then live changes. */
  retained?: boolean;
  /** This watch's queue bound instead of the service's (at most it). */
  queueEventsMax?: number;
}

export class CacheService {
  readonly limits: Readonly<CacheLimits>;
  private readonly broker: Broker;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly autoCreate: boolean;
  private readonly shardsDefault: number;
  /** Open caches by their topic's internal id. */
  private readonly caches = new Map<number, CacheLog>();
  /** Topic creations, one at a time (the caches-per-scope check and the creation are one step). */
  private readonly creations = new SerialQueue();
  private readonly watches = new Set<CacheWatch>();
  private readonly sweepTimer: NodeJS.Timeout | null = null;
  private readonly metrics: { expired: Counter; lagged: Counter; watches: Gauge };
  private closed = false;

  constructor(private readonly options: CacheServiceOptions) {
    this.broker = options.broker;
    this.clock = options.clock ?? { now: () => options.broker.now() };
    this.logger = options.logger ?? silentLogger;
    this.limits = Object.freeze({ ...cacheLimitsDefault, ...options.limits });
    this.autoCreate = options.autoCreate ?? true;
    this.shardsDefault = options.shardsDefault ?? 1;
    this.checkShards(this.shardsDefault);
    const m = this.broker.metrics;
    this.metrics = {
      expired: m.counter('quartet_cache_expired_total', 'Cache entries found expired and removed by a tombstone'),
      lagged: m.counter('quartet_cache_watch_lagged_total', 'Cache watches ended because their consumer fell behind'),
      watches: m.gauge('quartet_cache_watches', 'Cache watches open'),
    };
    const period = options.sweepIntervalMs ?? cacheSweepIntervalMsDefault;
    if (period > 0) {
      this.sweepTimer = setInterval(() => {
        this.sweepExpired().catch((error: unknown) => this.logger.warn('cache expiry sweep failed', { error }));
      }, period);
      this.sweepTimer.unref();
    }
  }

  // --- caches ---------------------------------------------------------------------------------

  /** Creates the cache's values topic with `shards` partitions (default shardsDefault); topic_exists when it exists. */
  async createCache(scope: NamespaceRef, cache: string, options: { shards?: number } = {}): Promise<CacheInfo> {
    this.assertOpen();
    const shards = options.shards ?? this.shardsDefault;
    this.checkShards(shards);
    const ns = this.namespace(scope, cache);
    if (this.topicOf(ns, 'cache', cache) !== null) throw new QuartetError('topic_exists', `cache ${ns.name}/${cache} exists`);
    await this.createTopic(ns, 'cache', cache, shards);
    return this.describeCache(scope, cache)!;
  }

  /** The cache, or null when neither its values nor its counters exist. */
  describeCache(scope: NamespaceRef, cache: string): CacheInfo | null {
    const ns = this.namespace(scope, cache);
    const values = this.topicOf(ns, 'cache', cache);
    const counters = this.topicOf(ns, 'counter', cache);
    if (values === null && counters === null) return null;
    return { scope: ns.name, cache, shards: (values ?? counters)!.partitions, valuesTopic: values?.name ?? null, countersTopic: counters?.name ?? null };
  }

  /** The caches of a scope (by name, ascending). */
  listCaches(scope: NamespaceRef): string[] {
    return cacheNames(this.broker.catalog.listTopics(scope));
  }

  /** The shard a key of the cache lives in (the same hash for values and counters). */
  shardOf(scope: NamespaceRef, cache: string, key: string): number {
    const info = this.describeCache(scope, cache);
    return shardOfKey(key, info?.shards ?? this.shardsDefault);
  }

  // --- values ---------------------------------------------------------------------------------

  /** Stores `value` under `key`; returns where it was written and when it expires (0 = never). */
  async put(scope: NamespaceRef, cache: string, key: string, value: Buffer, options: PutOptions = {}): Promise<PutResult> {
    this.checkKey(key);
    if (value.length > this.limits.valueBytesMax) throw new QuartetError('record_too_large', `a cache value holds at most ${this.limits.valueBytesMax} bytes, got ${value.length}`);
    const ttlMs = options.ttlMs;
    if (ttlMs !== undefined && !(Number.isSafeInteger(ttlMs) && ttlMs >= 1 && ttlMs <= this.limits.ttlMsMax)) {
      throw new QuartetError('invalid_request', `a cache TTL is an integer from 1 to ${this.limits.ttlMsMax} ms, got ${ttlMs}`);
    }
    const log = await this.open(scope, cache, 'cache', 'write');
    return log.submit({
      key,
      plan: (old, bytes) => {
        this.checkGrowth(log, bytes, entryBytes(key, value) - (old === undefined ? 0 : entryBytes(key, old.value)));
        const expiresAtMillis = ttlMs === undefined ? 0 : this.clock.now() + ttlMs;
        return { write: { key, value, expiresAtMillis }, answer: (offset, shard) => ({ shard, offset, expiresAtMillis }) };
      },
    });
  }

  /** The value under `key`; null when absent or expired. */
  async get(scope: NamespaceRef, cache: string, key: string): Promise<Buffer | null> {
    return (await this.getEntry(scope, cache, key))?.value ?? null;
  }

  /** The entry under `key` with its offset and expiry; null when absent or expired. */
  async getEntry(scope: NamespaceRef, cache: string, key: string): Promise<CacheEntryView | null> {
    this.checkKey(key);
    return this.atKey(await this.open(scope, cache, 'cache', 'read'), key, async (shard, entry, log) => {
      if (entry === undefined) return null;
      if (isExpired(entry, this.clock.now())) {
        this.expireLater(log, [{ shard, key, offset: entry.offset }]);
        return null;
      }
      return { value: entry.value, offset: entry.offset, shard, expiresAtMillis: entry.expiresAtMillis };
    });
  }

  /** Removes `key`; returns the value removed, or null (nothing written) when there was none. */
  async delete(scope: NamespaceRef, cache: string, key: string): Promise<Buffer | null> {
    this.checkKey(key);
    const log = await this.open(scope, cache, 'cache', 'read');
    if (log === null) return null;
    return log.submit<Buffer | null>({
      key,
      plan: (entry) => {
        if (entry === undefined) return { write: null, answer: () => null };
        const expired = isExpired(entry, this.clock.now());
        return {
          write: { key, value: null, expired },
          answer: () => {
            if (expired) this.metrics.expired.inc();
            return expired ? null : entry.value;
          },
        };
      },
    });
  }

  /**
   * Appends a tombstone for every expired entry of the caches in use (their indexes are in
   * memory); returns how many. Runs every sweepIntervalMs, and on demand.
   */
  async sweepExpired(): Promise<number> {
    let n = 0;
    for (const log of [...this.caches.values()]) {
      if (log.kind !== 'cache' || this.closed) continue;
      const expired = log.expiredEntries(this.clock.now());
      if (expired.length > 0) n += await log.serial.run(() => this.expire(log, expired)).catch((error: unknown) => this.sweepFailed(log, error));
    }
    return n;
  }

  // --- counters -------------------------------------------------------------------------------

  /** Adds `delta` (negative subtracts) to the counter and returns its new value; a counter never written is 0. */
  async counterAdd(scope: NamespaceRef, cache: string, key: string, delta: bigint): Promise<bigint> {
    this.checkKey(key);
    if (!isI64(delta)) throw new QuartetError('invalid_request', `a counter delta is a signed 64-bit integer, got ${delta}`);
    const log = await this.open(scope, cache, 'counter', 'write');
    return log.submit({
      key,
      plan: (entry, bytes) => {
        const current = counterOf(log, key, entry?.value);
        const next = (current ?? 0n) + delta;
        if (!isI64(next)) throw new QuartetError('invalid_request', `counter ${log.scope}/${cache}/${key} would overflow the signed 64-bit range: ${current ?? 0n} + ${delta}`);
        const value = counterValueBytes(next);
        this.checkGrowth(log, bytes, entryBytes(key, value) - (entry === undefined ? 0 : entryBytes(key, entry.value)));
        return { write: { key, value }, answer: () => next };
      },
    });
  }

  /** The counter's value; null when it was never written (not the same as 0). */
  async counterGet(scope: NamespaceRef, cache: string, key: string): Promise<bigint | null> {
    this.checkKey(key);
    const read = this.atKey(await this.open(scope, cache, 'counter', 'read'), key, async (_shard, entry, log) => counterOf(log, key, entry?.value));
    return (await read) ?? null;
  }

  // --- watches --------------------------------------------------------------------------------

  /**
   * Watches one key, or the keys under a prefix in one shard, of a cache's values (counters are
   * not watched). Resolves once the watch is registered: resumeOffset, resnapshot and
   * retainedCount are known then. Refused: both or neither of key and prefix, fromOffset with
   * retained (invalid_request), fromOffset past the shard's end (offset_out_of_range), a shard
   * the cache does not have (unknown_partition), too many watches (resource_exhausted).
   */
  async watch(scope: NamespaceRef, cache: string, request: WatchRequest): Promise<CacheWatch> {
    const filter = watchFilter(request);
    if ('key' in filter) this.checkKey(filter.key);
    else if (Buffer.byteLength(filter.prefix, 'utf8') > this.limits.keyBytesMax) throw new QuartetError('invalid_request', `a key prefix holds at most ${this.limits.keyBytesMax} bytes`);
    const from = request.fromOffset;
    if (from !== undefined && !(Number.isSafeInteger(from) && from >= 0)) throw new QuartetError('invalid_request', `fromOffset must be a non-negative integer, got ${from}`);
    if (from !== undefined && request.retained === true) throw new QuartetError('invalid_request', 'a watch resumes from an offset or starts with the retained values, not both');
    const queueEventsMax = Math.min(request.queueEventsMax ?? this.limits.watchQueueEventsMax, this.limits.watchQueueEventsMax);
    if (!(queueEventsMax >= 1)) throw new QuartetError('invalid_request', 'a watch queue holds at least one change');
    const log = await this.open(scope, cache, 'cache', 'write');
    const shard = 'key' in filter ? shardOfKey(filter.key, log.shardCount()) : (request.shard ?? 0);
    // The check for compacted history reads the log outside the cache's queue (writes go on); the
    // stretch written meanwhile is checked by the replay itself.
    let resnapshot = false;
    if (from !== undefined) {
      const checkedTo = await endOf(log, shard);
      if (from > checkedTo) throw new QuartetError('offset_out_of_range', `cache ${log.scope}/${cache} shard ${shard} ends at offset ${checkedTo}; fromOffset ${from} is past it`);
      resnapshot = await this.historyCollapsed(log, shard, from, checkedTo);
    }
    return log.serial.run(async () => {
      const entries = await log.index(shard);
      // Checked and added with no await between: watches of other caches register meanwhile.
      this.assertOpen();
      if (this.watches.size >= this.limits.watchesMax) throw new QuartetError('resource_exhausted', `${this.limits.watchesMax} cache watches are open; no more`);
      const resumeOffset = log.appliedTo(shard);
      const now = this.clock.now();
      const snapshot: CacheChange[] = [];
      if (request.retained === true || resnapshot) {
        for (const [key, e] of entries) {
          if (!isExpired(e, now) && matches(filter, key)) snapshot.push({ key, value: e.value, offset: e.offset, expiresAtMillis: e.expiresAtMillis });
        }
        snapshot.sort((a, b) => a.offset - b.offset);
      }
      const watch = new CacheWatch({
        shard,
        filter,
        resumeOffset,
        resnapshot,
        retained: request.retained === true,
        snapshot,
        replayFrom: from !== undefined && !resnapshot ? from : null,
        readReplay: (at, end) => log.readRange(shard, at, end),
        queueEventsMax,
        onEnd: (w, end) => {
          log.removeWatcher(shard, w);
          if (this.watches.delete(w)) this.metrics.watches.set({}, this.watches.size);
          if (end.kind === 'lagged') this.metrics.lagged.inc();
        },
      });
      log.addWatcher(shard, watch);
      this.watches.add(watch);
      this.metrics.watches.set({}, this.watches.size);
      return watch;
    });
  }

  /**
   * The offset after a shard's last change (where a live watch starts; a fromOffset above it is
   * refused): what a refusal names as available. null when the cache has no values topic.
   */
  async shardEnd(scope: NamespaceRef, cache: string, shard: number): Promise<number | null> {
    const log = await this.open(scope, cache, 'cache', 'read');
    return log === null ? null : endOf(log, shard);
  }

  /** Watches open now. */
  get watchCount(): number {
    return this.watches.size;
  }

  /** Ends every watch and refuses further calls (shutting_down). The topics stay. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.sweepTimer !== null) clearInterval(this.sweepTimer);
    for (const log of this.caches.values()) log.drop('closed');
    this.caches.clear();
  }

  /** @internal The broker tells of a deleted topic (Broker.topicDeleted): a cache's ends its watches. */
  topicDeleted(topic: Topic): void {
    const log = this.caches.get(topic.internalId);
    if (log === undefined) return;
    this.caches.delete(topic.internalId);
    log.drop('cache_gone');
  }

  // --- internals ------------------------------------------------------------------------------

  /** A read: runs `work` on the cache's queue with the key's shard and current entry; null for a cache (kind) that has no topic. */
  private atKey<T>(log: CacheLog | null, key: string, work: (shard: number, entry: CacheEntry | undefined, log: CacheLog) => Promise<T>): Promise<T | null> {
    if (log === null) return Promise.resolve(null);
    return log.serial.run(async () => {
      const shard = shardOfKey(key, log.shardCount());
      return work(shard, (await log.index(shard)).get(key), log);
    });
  }

  /**
   * The cache's log of `kind`. A write creates its topic when auto-creation is on or the cache
   * exists (its values or its counters); a read of a topic not there answers null. Without
   * auto-creation, a cache that does not exist at all is unknown_topic ("cache not found").
   */
  private async open(scope: NamespaceRef, cache: string, kind: CacheKind, use: 'read'): Promise<CacheLog | null>;
  private async open(scope: NamespaceRef, cache: string, kind: CacheKind, use: 'write'): Promise<CacheLog>;
  private async open(scope: NamespaceRef, cache: string, kind: CacheKind, use: 'read' | 'write'): Promise<CacheLog | null> {
    this.assertOpen();
    const ns = this.namespace(scope, cache);
    let topic = this.topicOf(ns, kind, cache);
    if (topic === null) {
      const existing = this.describeCache(ns.ref, cache);
      if (!this.autoCreate && existing === null) throw new QuartetError('unknown_topic', `cache not found: ${ns.name}/${cache}`);
      if (use === 'read') return null;
      topic = await this.createTopic(ns, kind, cache, existing?.shards ?? this.shardsDefault);
    }
    let log = this.caches.get(topic.internalId);
    if (log === undefined) {
      log = new CacheLog(kind, cache, topic, this.broker, this.logger, this.clock);
      this.caches.set(topic.internalId, log);
    }
    return log;
  }

  private createTopic(ns: Scope, kind: CacheKind, cache: string, shards: number): Promise<Topic> {
    return this.creations.run(async () => {
      const existing = this.topicOf(ns, kind, cache);
      if (existing !== null) return existing;
      const names = cacheNames(this.broker.catalog.listTopics(ns.ref));
      if (!names.includes(cache) && names.length >= this.limits.cachesPerScopeMax) {
        throw new QuartetError('resource_exhausted', `scope ${ns.name} holds ${names.length} caches; ${this.limits.cachesPerScopeMax} at most`);
      }
      const config = { ...this.options.topicConfig, 'cleanup.policy': 'compact' };
      return this.broker.createTopic(ns.ref, cacheTopicName(kind, cache), { partitions: shards, config });
    });
  }

  private topicOf(ns: Scope, kind: CacheKind, cache: string): Topic | null {
    return this.broker.catalog.getTopic({ namespace: ns.ref, topic: cacheTopicName(kind, cache) });
  }

  /** The scope's namespace; 'default' before its first topic exists is named but has no id yet. */
  private namespace(scope: NamespaceRef, cache: string): Scope {
    const problem = nameProblem(cacheTopicName('counter', cache));
    if (typeof cache !== 'string' || cache.length === 0 || problem !== null) throw new QuartetError('invalid_name', `invalid cache name ${JSON.stringify(cache)}: ${problem ?? 'the name is empty'}`);
    if (scope === defaultNamespaceName && this.broker.catalog.getNamespace(scope) === null) return { name: scope, ref: scope };
    const ns = this.broker.catalog.requireNamespace(scope);
    return { name: ns.name, ref: ns.id };
  }

  private async historyCollapsed(log: CacheLog, shard: number, from: number, to: number): Promise<boolean> {
    let at = from;
    while (at < to) {
      const chunk = await log.readRange(shard, at, to);
      if (chunk.gapAt !== null) return true;
      if (chunk.next <= at) return true;
      at = chunk.next;
    }
    return false;
  }

  /** Tombstones for entries a read found expired, appended after the read answers. */
  private expireLater(log: CacheLog, expired: Array<{ shard: number; key: string; offset: number }>): void {
    void log.serial.run(() => this.expire(log, expired)).catch((error: unknown) => this.sweepFailed(log, error));
  }

  /** Serial. Appends a tombstone for each entry still expired and unchanged since it was found. */
  private async expire(log: CacheLog, found: Array<{ shard: number; key: string; offset: number }>): Promise<number> {
    if (this.closed) return 0;
    const now = this.clock.now();
    let n = 0;
    const shards = [...new Set(found.map((f) => f.shard))];
    for (const shard of shards) {
      const entries = await log.index(shard);
      const due = found.filter((f) => f.shard === shard && entries.get(f.key)?.offset === f.offset && isExpired(entries.get(f.key)!, now));
      for (let i = 0; i < due.length; i += this.limits.sweepRecordsPerAppendMax) {
        const part = due.slice(i, i + this.limits.sweepRecordsPerAppendMax);
        await log.write(shard, part.map((f) => ({ key: f.key, value: null, expired: true })), now);
        n += part.length;
      }
    }
    this.metrics.expired.inc({}, n);
    return n;
  }

  private sweepFailed(log: CacheLog, error: unknown): number {
    if (!this.closed) this.logger.warn('could not append the tombstones of expired cache entries', { scope: log.scope, cache: log.name, error });
    return 0;
  }

  /** Refuses a write that grows the cache's index past cacheBytesMax (one that does not grow it always goes). */
  private checkGrowth(log: CacheLog, bytes: number, grows: number): void {
    if (grows > 0 && bytes + grows > this.limits.cacheBytesMax) {
      const what = log.kind === 'cache' ? `cache ${log.scope}/${log.name} holds` : `the counters of ${log.scope}/${log.name} hold`;
      throw new QuartetError('resource_exhausted', `${what} ${bytes} bytes; ${this.limits.cacheBytesMax} at most`);
    }
  }

  private checkKey(key: string): void {
    if (typeof key !== 'string') throw new QuartetError('invalid_request', 'a cache key is a string');
    // A lone surrogate has no UTF-8 form: stored, it would come back as another key.
    if (Buffer.from(key, 'utf8').toString('utf8') !== key) throw new QuartetError('invalid_request', 'a cache key is not valid Unicode text');
    const bytes = Buffer.byteLength(key, 'utf8');
    if (bytes > this.limits.keyBytesMax) throw new QuartetError('invalid_request', `a cache key holds at most ${this.limits.keyBytesMax} bytes, got ${bytes}`);
  }

  private checkShards(shards: number): void {
    if (!Number.isInteger(shards) || shards < 1 || shards > this.limits.shardsMax) throw new QuartetError('invalid_partitions', `a cache has 1 to ${this.limits.shardsMax} shards, got ${shards}`);
  }

  private assertOpen(): void {
    if (this.closed) throw new QuartetError('shutting_down', 'the cache service is closed');
  }
}

/** A namespace by name and by the reference the catalog takes. */
interface Scope {
  name: string;
  ref: NamespaceRef;
}

/** The shard's end, once its index has caught up with the log. */
function endOf(log: CacheLog, shard: number): Promise<number> {
  return log.serial.run(async () => {
    await log.index(shard);
    return log.appliedTo(shard);
  });
}

function watchFilter(request: WatchRequest): CacheWatchFilter {
  const hasKey = request.key !== undefined;
  const hasPrefix = request.prefix !== undefined;
  if (hasKey === hasPrefix) throw new QuartetError('invalid_request', 'a cache watch names exactly one of key and prefix');
  return hasKey ? { key: request.key! } : { prefix: request.prefix! };
}

function matches(filter: CacheWatchFilter, key: string): boolean {
  return 'key' in filter ? key === filter.key : key.startsWith(filter.prefix);
}

/** A stored counter value; a record another writer left that is no i64 is refused, not read as 0. */
function counterOf(log: CacheLog, key: string, value: Buffer | undefined): bigint | null {
  if (value === undefined) return null;
  const n = parseCounterValue(value);
  if (n === null) throw new QuartetError('invalid_request', `counter ${log.scope}/${log.name}/${key} holds a value that is not a signed 64-bit decimal`);
  return n;
}

/** The distinct cache names among a namespace's topics, ascending. */
function cacheNames(topics: readonly Topic[]): string[] {
  const names = new Set<string>();
  for (const t of topics) {
    const c = cacheOfTopic(t.name);
    if (c !== null) names.add(c.cache);
  }
  return [...names].sort();
}

