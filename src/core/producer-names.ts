// Producers a protocol names by strings (Cursus's producerId) mapped onto the core's numeric
// producers (producer-state.ts), so that such a protocol's idempotent appends go through the one
// producer-state machinery: windows, retries answered with the original offsets, epochs and
// fencing, snapshots and replay at open. Per (scope, name): the core producer id, its epoch, and
// the protocol's own epoch that maps to it (any safe integer: Cursus SDKs take the time in ns).
//
// A name's first use allocates a core producer; a higher protocol epoch bumps the core epoch
// (ProducerStateManager.proposeInit: the same id, or a new one past the int16 epochs), which
// fences the older session; a lower one is stale. The mapping is written to the metadata store
// before it is handed out, so an append acknowledged under it maps the same way after a restart.
// A row goes once unused for idleExpiryMs (the producer state's own expiry); its use time is
// written at most once per useRefreshMs, so a busy producer costs no store write per append.

import type { Clock } from '../base/clock.js';
import { QuartetError } from '../base/errors.js';
import type { MetadataStore, ProducerNameRecord } from './metadata-store.js';
import type { ProducerStateManager } from './producer-state.js';
import { SerialQueue } from './serial.js';

// Named limits.
export const producerNameBytesMax = 1024;
export const producerNamesCachedMaxDefault = 10_000;
/** A name's use time is written again at most this often. */
export const producerNameUseRefreshMs = 3_600_000;

/** The core producer a name maps to at the epoch asked, or the newer epoch that fences it. */
export type NamedProducer = { kind: 'current'; producerId: number; producerEpoch: number } | { kind: 'stale'; currentEpoch: number };

export interface ProducerNamesOptions {
  /** Names kept in memory (least recently used go first); default producerNamesCachedMaxDefault. */
  cachedMax?: number;
  /** Unused this long, a name is forgotten (ms). */
  idleExpiryMs: number;
}

export class ProducerNames {
  /** Insertion order = least recently used first. */
  private readonly cache = new Map<string, ProducerNameRecord>();
  /** Allocations, epoch bumps and use-time writes, one at a time. */
  private readonly mutations = new SerialQueue();
  private readonly cachedMax: number;
  private readonly idleExpiryMs: number;

  constructor(
    private readonly store: MetadataStore,
    private readonly producers: ProducerStateManager,
    private readonly clock: Clock,
    options: ProducerNamesOptions,
  ) {
    this.cachedMax = options.cachedMax ?? producerNamesCachedMaxDefault;
    this.idleExpiryMs = options.idleExpiryMs;
  }

  /**
   * The core producer of `name` (in the protocol's `scope`) for the protocol's `epoch`: the one
   * it already maps to, a new one, or the next core epoch of it when `epoch` is higher than the
   * last one seen; `stale` when it is lower.
   */
  resolve(scope: string, name: string, epoch: number): Promise<NamedProducer> {
    if (name.length === 0 || Buffer.byteLength(name) > producerNameBytesMax) return Promise.reject(new QuartetError('invalid_request', `producer name of ${Buffer.byteLength(name)} bytes (1 to ${producerNameBytesMax})`));
    if (!Number.isSafeInteger(epoch)) return Promise.reject(new QuartetError('invalid_request', `producer epoch ${epoch} is not a safe integer`));
    const key = cacheKey(scope, name);
    const cached = this.cache.get(key);
    if (cached !== undefined) {
      if (epoch < cached.epoch) return Promise.resolve({ kind: 'stale', currentEpoch: cached.epoch });
      if (epoch === cached.epoch && this.clock.now() - cached.usedAt < producerNameUseRefreshMs) {
        this.remember(key, cached);
        return Promise.resolve(current(cached));
      }
    }
    return this.mutations.run(() => this.resolveNow(scope, name, epoch));
  }

  /** Forgets the names unused for idleExpiryMs. Returns how many went from the store. */
  async expireIdle(now: number = this.clock.now()): Promise<number> {
    const usedBefore = now - this.idleExpiryMs;
    return this.mutations.run(async () => {
      for (const [key, record] of this.cache) if (record.usedAt < usedBefore) this.cache.delete(key);
      return this.store.deleteProducerNamesUsedBefore(usedBefore);
    });
  }

  private async resolveNow(scope: string, name: string, epoch: number): Promise<NamedProducer> {
    const key = cacheKey(scope, name);
    const now = this.clock.now();
    const known = this.cache.get(key) ?? (await this.store.getProducerName(scope, name));
    if (known !== null && epoch < known.epoch) {
      this.remember(key, known);
      return { kind: 'stale', currentEpoch: known.epoch };
    }
    let record: ProducerNameRecord;
    let bumped = false;
    if (known === null) {
      const fresh = await this.producers.initProducer();
      record = { scope, name, producerId: fresh.producerId, producerEpoch: fresh.epoch, epoch, usedAt: now };
    } else if (epoch > known.epoch) {
      // Applied to the producer state only once the row is durable: a failed write fences nobody.
      const next = await this.producers.proposeInit({ producerId: known.producerId, epoch: known.producerEpoch });
      record = { ...known, producerId: next.producerId, producerEpoch: next.epoch, epoch, usedAt: now };
      bumped = true;
    } else if (now - known.usedAt >= producerNameUseRefreshMs) {
      record = { ...known, usedAt: now };
    } else {
      this.remember(key, known);
      return current(known);
    }
    await this.store.putProducerName(record);
    if (bumped) this.producers.raiseEpoch(record.producerId, record.producerEpoch);
    this.remember(key, record);
    return current(record);
  }

  private remember(key: string, record: ProducerNameRecord): void {
    this.cache.delete(key);
    this.cache.set(key, record);
    while (this.cache.size > this.cachedMax) this.cache.delete(this.cache.keys().next().value!);
  }
}

function cacheKey(scope: string, name: string): string {
  return `${scope}\u0000${name}`;
}

function current(record: ProducerNameRecord): NamedProducer {
  return { kind: 'current', producerId: record.producerId, producerEpoch: record.producerEpoch };
}
