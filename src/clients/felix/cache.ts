// A cache scope (tenant / namespace / cache) over the cache pool: values with an optional TTL,
// deletes that return what they removed (CACHE_DELETE), counters (COUNTERS) and watches
// (CACHE_WATCH, cache-watch.ts). Every request carries a request_id, so it is answered on its
// stream, which stays open for the next (notes §6); cache keys are strings, values bytes.

import type { CallOptions, FelixClient } from './client.js';
import { FelixCacheWatch, type WatchOptions } from './cache-watch.js';
import { toBuffer, type PayloadInput } from './publisher.js';

export interface PutOptions extends CallOptions {
  /** Time to live; absent: the entry does not expire. */
  ttlMs?: number | bigint;
}

export class FelixCache {
  constructor(
    private readonly client: FelixClient,
    readonly name: string,
    readonly namespace: string,
  ) {}

  private scope(key: string): { tenantId: string; namespace: string; cache: string; key: string } {
    return { tenantId: this.client.options.tenantId, namespace: this.namespace, cache: this.name, key };
  }

  /** cache_put: stores `value` under `key`, for `ttlMs` when given. */
  async put(key: string, value: PayloadInput, options: PutOptions = {}): Promise<void> {
    const ttlMs = options.ttlMs !== undefined ? BigInt(options.ttlMs) : null;
    if (ttlMs !== null && ttlMs < 0n) throw new RangeError(`ttlMs ${ttlMs} is negative`);
    await this.client.call('cache', (requestId) => ({ type: 'cache_put', ...this.scope(key), value: toBuffer(value), requestId, ttlMs }), ['cache_ok'], options);
  }

  /** cache_get: the value, or null when the key is absent or expired. */
  async get(key: string, options?: CallOptions): Promise<Buffer | null> {
    const v = await this.client.call('cache', (requestId) => ({ type: 'cache_get', ...this.scope(key), requestId }), ['cache_value'], options);
    return v.value;
  }

  /** cache_delete: removes the key; returns the value it had (null: there was none). */
  async delete(key: string, options?: CallOptions): Promise<Buffer | null> {
    const v = await this.client.call('cache', (requestId) => ({ type: 'cache_delete', ...this.scope(key), requestId }), ['cache_value'], options);
    return v.value;
  }

  /** counter_add: adds `delta` (negative subtracts) and returns the sum including it. */
  async addCounter(key: string, delta: bigint | number, options?: CallOptions): Promise<bigint> {
    const v = await this.client.call('cache', (requestId) => ({ type: 'counter_add', ...this.scope(key), delta: BigInt(delta), requestId }), ['counter_value'], options);
    return v.value ?? 0n;
  }

  /** counter_get: the counter's value, or null when it was never written. */
  async getCounter(key: string, options?: CallOptions): Promise<bigint | null> {
    const v = await this.client.call('cache', (requestId) => ({ type: 'counter_get', ...this.scope(key), requestId }), ['counter_value'], options);
    return v.value ?? null;
  }

  /** cache_watch: changes of one key or of a key prefix; resolves once the broker started it. */
  async watch(options: WatchOptions): Promise<FelixCacheWatch> {
    const w = this.client.track(new FelixCacheWatch(this.client, this.name, this.namespace, options));
    try {
      await w.start();
    } catch (err) {
      await w.close();
      throw err;
    }
    return w;
  }
}
