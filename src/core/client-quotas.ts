// Client quotas, for every protocol with named clients: a byte rate for producing, one for
// consuming, and a share of request-handling time, set per user and/or client id, or as defaults
// for them, and enforced by the front-end that answers the requests (Kafka: docs/kafka-admin.md
// "Client quotas"). The model is Kafka's (KIP-13, KIP-55, KIP-124, KIP-219):
//
//  - An entity names a user, a client id, or both; each part is a name or the default (null).
//    A request's quota for a key is the value of the first entity that sets it, in Kafka's order:
//    user+client, user+default client, user, default user+client, default user+default client,
//    default user, client, default client (ClientQuotaManager's precedence).
//  - Usage is measured per quota bucket (the parts the matching entity names, with the caller's
//    own user and client id), over a window of `quotaSamples` samples of `quotaSampleMs` that is
//    never counted as shorter than samples-1 (Kafka's Rate): an early burst is averaged over it.
//  - Over quota, the throttle time is (rate - quota) / quota × window, as Kafka's
//    ClientQuotaManager.throttleTime, capped at the window.
//
// Quotas live in the metadata store (one row per entity). With none set, `active` is false and the
// front-ends skip every measurement: the hot path costs one property read.

import { QuartetError } from '../base/errors.js';
import type { Clock } from '../base/clock.js';
import type { MetadataStore } from './metadata-store.js';

export const quotaKeys = ['producer_byte_rate', 'consumer_byte_rate', 'request_percentage'] as const;
export type QuotaKey = (typeof quotaKeys)[number];

/** Kafka's quota.window.num and quota.window.size.seconds defaults. */
export const quotaSamples = 11;
export const quotaSampleMs = 1000;
/** Usage buckets kept at once; the least recently used go first (each holds at most quotaSamples numbers). */
export const quotaBucketsMax = 10_000;

/** A part absent = not part of the entity; null = the default for that part. */
export interface QuotaEntity {
  user?: string | null;
  clientId?: string | null;
}

export type QuotaValues = Partial<Record<QuotaKey, number>>;

export function isQuotaKey(key: string): key is QuotaKey {
  return (quotaKeys as readonly string[]).includes(key);
}

/** The canonical key of an entity (what the store keys rows by). */
export function quotaEntityKey(e: QuotaEntity): string {
  return JSON.stringify([e.user === undefined ? 0 : e.user === null ? 1 : e.user, e.clientId === undefined ? 0 : e.clientId === null ? 1 : e.clientId]);
}

function entityOfKey(key: string): QuotaEntity {
  const [u, c] = JSON.parse(key) as [string | number, string | number];
  const part = (v: string | number): string | null | undefined => (v === 0 ? undefined : v === 1 ? null : (v as string));
  const e: QuotaEntity = {};
  const user = part(u);
  const clientId = part(c);
  if (user !== undefined) e.user = user;
  if (clientId !== undefined) e.clientId = clientId;
  return e;
}

/** Why a value cannot be a quota, or null. */
export function quotaValueProblem(key: QuotaKey, value: number): string | null {
  if (!Number.isFinite(value) || value <= 0) return `Quota ${key} must be a positive number, not ${value}`;
  if (key !== 'request_percentage' && !Number.isSafeInteger(value)) return `Quota ${key} must be an integer number of bytes per second, not ${value}`;
  return null;
}

/** Usage of one bucket: per-sample sums, oldest first. */
class RateWindow {
  private readonly samples: Array<{ start: number; value: number }> = [];

  record(amount: number, now: number): void {
    const start = now - (now % quotaSampleMs);
    const last = this.samples[this.samples.length - 1];
    if (last !== undefined && last.start === start) last.value += amount;
    else this.samples.push({ start, value: amount });
    const oldest = now - quotaSamples * quotaSampleMs;
    while (this.samples.length > 0 && this.samples[0]!.start <= oldest) this.samples.shift();
  }

  /** Units per second over the window (never counted shorter than samples-1 samples), and that window. */
  rate(now: number): { rate: number; windowMs: number } {
    const total = this.samples.reduce((n, s) => n + s.value, 0);
    const windowMs = Math.max(now - (this.samples[0]?.start ?? now), (quotaSamples - 1) * quotaSampleMs);
    return { rate: (total * 1000) / windowMs, windowMs };
  }
}

export class ClientQuotas {
  private readonly values = new Map<string, QuotaValues>();
  private readonly buckets = new Map<string, RateWindow>();

  private constructor(
    private readonly store: MetadataStore,
    private readonly clock: Clock,
  ) {}

  static async open(store: MetadataStore, clock: Clock): Promise<ClientQuotas> {
    const quotas = new ClientQuotas(store, clock);
    for (const r of await store.listClientQuotas()) quotas.values.set(r.entity, r.quotas as QuotaValues);
    return quotas;
  }

  /** Whether any quota is set: when false, callers measure nothing. */
  get active(): boolean {
    return this.values.size > 0;
  }

  /** Every entity with its values. */
  list(): Array<{ entity: QuotaEntity; values: QuotaValues }> {
    return [...this.values].map(([key, values]) => ({ entity: entityOfKey(key), values: { ...values } }));
  }

  /**
   * Sets (a number) or removes (null) the entity's values; an entity left with none is removed.
   * Throws invalid_request for a refused value (callers check with quotaValueProblem first).
   */
  async alter(entity: QuotaEntity, changes: ReadonlyArray<{ key: QuotaKey; value: number | null }>): Promise<void> {
    const key = quotaEntityKey(entity);
    const next: QuotaValues = { ...(this.values.get(key) ?? {}) };
    for (const c of changes) {
      if (c.value === null) delete next[c.key];
      else {
        const problem = quotaValueProblem(c.key, c.value);
        if (problem !== null) throw new QuartetError('invalid_request', problem);
        next[c.key] = c.value;
      }
    }
    if (Object.keys(next).length === 0) {
      await this.store.deleteClientQuota(key);
      this.values.delete(key);
    } else {
      await this.store.putClientQuota({ entity: key, quotas: next, updatedAt: this.clock.now() });
      this.values.set(key, next);
    }
  }

  /** The quota that applies to this caller for the key, and the bucket its usage counts in; null when none. */
  resolve(key: QuotaKey, user: string, clientId: string): { quota: number; bucket: string } | null {
    const candidates: QuotaEntity[] = [
      { user, clientId }, { user, clientId: null }, { user },
      { user: null, clientId }, { user: null, clientId: null }, { user: null },
      { clientId }, { clientId: null },
    ];
    for (const e of candidates) {
      const quota = this.values.get(quotaEntityKey(e))?.[key];
      if (quota === undefined) continue;
      const bucket = JSON.stringify([key, e.user === undefined ? null : user, e.clientId === undefined ? null : clientId]);
      return { quota, bucket };
    }
    return null;
  }

  /**
   * Records `amount` of the key's unit (bytes, or request-handling ms) for the caller, and returns
   * how long it must now be throttled (ms; 0 within its quota or without one).
   */
  record(key: QuotaKey, user: string, clientId: string, amount: number): number {
    const applies = this.resolve(key, user, clientId);
    if (applies === null) return 0;
    const now = this.clock.now();
    let window = this.buckets.get(applies.bucket);
    if (window === undefined) {
      if (this.buckets.size >= quotaBucketsMax) this.buckets.delete(this.buckets.keys().next().value!);
      window = new RateWindow();
    } else this.buckets.delete(applies.bucket);
    this.buckets.set(applies.bucket, window);
    window.record(amount, now);
    // request_percentage is a share of one second of handling time: n % = 10·n ms per second.
    const quota = key === 'request_percentage' ? applies.quota * 10 : applies.quota;
    const { rate, windowMs } = window.rate(now);
    if (rate <= quota) return 0;
    return Math.min(quotaSamples * quotaSampleMs, Math.round(((rate - quota) / quota) * windowMs));
  }
}
