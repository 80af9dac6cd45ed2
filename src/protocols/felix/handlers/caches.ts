// Caches and counters (notes §6, §8 "Cache and counters"; docs/caches.md) over the core cache
// service (broker.caches): a Felix tenant/namespace is the cache's scope (its catalog namespace,
// docs/mapping.md), the cache name the request's `cache`.
//
// - cache_put / cache_get / cache_delete: with a request_id the answer carries it (cache_ok,
//   cache_value) and the stream stays open; without one the stream gets one answer (`ok`,
//   cache_value) and then ends (notes §6). ttl_ms null: no expiry; ttl_ms 0: the entry expires as
//   it is written, as in the reference broker (which stores it with its expiry already reached),
//   so here the put removes the key's value (a delete: watchers see the key deleted).
// - counter_add / counter_get: counter_value, its value absent for a counter never written.
// - cache_watch: one key, or a prefix of one shard; live, retained, or resumed from_offset. As
//   for subscribe, the broker opens a unidirectional stream and writes event_stream_hello, then
//   answers cache_watch_started on the request stream, which then ends (one-shot), then sends the
//   changes as JSON cache_event frames; a watch that fell behind ends its stream with
//   cache_watch_lagged. A from_offset past the shard's end is subscribe_cursor_error in_future.
//
// A tenant/namespace with no catalog namespace is "cache scope not found: t/ns/cache", as is a
// cache that does not exist when the broker does not create caches on use (caches.autoCreate
// false). With felix.requireAuth, reads need poll_messages and writes send_messages on the
// scope (or the cache's topic).

import type { Writable } from 'node:stream';
import { isQuartetError } from '../../../base/errors.js';
import type { NamespaceRef } from '../../../core/catalog.js';
import type { CacheWatch } from '../../../core/caches/index.js';
import { catalogNamespaceForFelix } from '../../mapping.js';
import { ErrorText, Feature, cacheScopeNotFound, encodeMessage, type FelixMessage, type MessageOf } from '../codec/index.js';
import type { FelixAction } from '../access.js';
import { FelixFailure, felixHandler, type FelixHandler, type FelixStreamContext } from '../handler.js';
import { writeChunks } from '../write-chunks.js';

interface CacheName {
  tenantId: string;
  namespace: string;
  cache: string;
}

/** The request's cache scope, checked for tenant and grants; throws the FelixFailure to answer. */
function scopeOf(ctx: FelixStreamContext, m: CacheName, action: FelixAction): NamespaceRef {
  if (m.tenantId !== ctx.tenantId) throw new FelixFailure(ErrorText.tenantMismatch);
  const ns = catalogNamespaceForFelix(m.tenantId, m.namespace);
  if (ns === null) throw new FelixFailure(cacheScopeNotFound(m.tenantId, m.namespace, m.cache));
  ctx.services.access.authorizeCache(ctx.principal, ns, m.cache, action);
  return ns;
}

/** Runs a cache service call, its refusals turned into the texts a client is answered with. */
async function serviced<T>(m: CacheName, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw refusal(m, error);
  }
}

/** The answer to a cache service refusal (anything else goes on as it is). */
function refusal(m: CacheName, error: unknown): unknown {
  if (!isQuartetError(error)) return error;
  if (error.code === 'unknown_namespace' || error.code === 'unknown_topic') return new FelixFailure(cacheScopeNotFound(m.tenantId, m.namespace, m.cache));
  if (error.code === 'shutting_down') return new FelixFailure(ErrorText.serverOverloaded);
  return new FelixFailure(error.message);
}

/** Answers a request; one without a request_id gets this one answer and its stream ends. */
function answer(ctx: FelixStreamContext, requestId: bigint | undefined, message: FelixMessage): void {
  ctx.send(message);
  if (requestId === undefined) ctx.finish();
}

/** A refusal of a request without a request_id also ends its stream (one answer). */
async function oneAnswer(requestId: bigint | undefined, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (requestId === undefined && error instanceof FelixFailure && !error.close) throw new FelixFailure(error.message, true);
    throw error;
  }
}

function ttlOf(ttlMs: bigint | null): { ttlMs?: number } {
  if (ttlMs === null) return {};
  return { ttlMs: ttlMs > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(ttlMs) };
}

function put(ctx: FelixStreamContext, m: MessageOf<'cache_put'>): Promise<void> {
  return oneAnswer(m.requestId, async () => {
    const scope = scopeOf(ctx, m, 'send');
    const caches = ctx.services.broker.caches;
    if (m.ttlMs === 0n) await serviced(m, () => caches.delete(scope, m.cache, m.key));
    else await serviced(m, () => caches.put(scope, m.cache, m.key, m.value, ttlOf(m.ttlMs)));
    answer(ctx, m.requestId, m.requestId === undefined ? { type: 'ok' } : { type: 'cache_ok', requestId: m.requestId });
  });
}

function getOrDelete(ctx: FelixStreamContext, m: MessageOf<'cache_get' | 'cache_delete'>): Promise<void> {
  return oneAnswer(m.requestId, async () => {
    const caches = ctx.services.broker.caches;
    const scope = scopeOf(ctx, m, m.type === 'cache_get' ? 'poll' : 'send');
    const value = await serviced(m, () => (m.type === 'cache_get' ? caches.get(scope, m.cache, m.key) : caches.delete(scope, m.cache, m.key)));
    const reply: FelixMessage = { type: 'cache_value', tenantId: m.tenantId, namespace: m.namespace, cache: m.cache, key: m.key, value, ...(m.requestId !== undefined ? { requestId: m.requestId } : {}) };
    answer(ctx, m.requestId, reply);
  });
}

async function counter(ctx: FelixStreamContext, m: MessageOf<'counter_add' | 'counter_get'>): Promise<void> {
  const caches = ctx.services.broker.caches;
  const scope = scopeOf(ctx, m, m.type === 'counter_add' ? 'send' : 'poll');
  const value = await serviced(m, () => (m.type === 'counter_add' ? caches.counterAdd(scope, m.cache, m.key, m.delta) : caches.counterGet(scope, m.cache, m.key)));
  ctx.send({ type: 'counter_value', ...(value !== null ? { value } : {}), requestId: m.requestId });
}

async function watch(ctx: FelixStreamContext, m: MessageOf<'cache_watch'>): Promise<void> {
  const { broker, events, logger } = ctx.services;
  const scope = scopeOf(ctx, m, 'poll');
  if (m.fromOffset !== undefined && m.fromOffset > BigInt(Number.MAX_SAFE_INTEGER)) return cursorInFuture(ctx, m, scope);
  let w: CacheWatch;
  try {
    w = await broker.caches.watch(scope, m.cache, {
      ...(m.key !== undefined ? { key: m.key } : {}),
      ...(m.prefix !== undefined ? { prefix: m.prefix } : {}),
      ...(m.shard !== undefined ? { shard: m.shard } : {}),
      ...(m.fromOffset !== undefined ? { fromOffset: Number(m.fromOffset) } : {}),
      retained: m.retained,
    });
  } catch (error) {
    if (isQuartetError(error) && error.code === 'offset_out_of_range') return cursorInFuture(ctx, m, scope);
    throw refusal(m, error);
  }
  if (!ctx.connection.addSubscription()) {
    w.close();
    throw new FelixFailure(ErrorText.maxSubscriptions);
  }
  const subscriptionId = m.subscriptionId ?? events.subscriptionId();
  let out: Writable;
  try {
    out = ctx.connection.openUni();
  } catch (error) {
    w.close();
    ctx.connection.removeSubscription();
    logger.debug('felix could not open a cache watch stream', { error: String(error) });
    throw new FelixFailure(ErrorText.subscriberLaneFull);
  }
  out.on('error', (error: Error) => logger.debug('felix cache watch stream failed', { error: String(error) }));
  write(out, { type: 'event_stream_hello', subscriptionId });
  ctx.send({
    type: 'cache_watch_started',
    subscriptionId,
    resumeOffset: BigInt(w.resumeOffset),
    resnapshot: w.resnapshot,
    ...(w.retainedCount !== null ? { retainedCount: BigInt(w.retainedCount) } : {}),
  });
  ctx.finish();
  void deliver(ctx, w, out).finally(() => ctx.connection.removeSubscription());
}

/** A from_offset past the shard's end: subscribe_cursor_error in_future, naming the end. */
async function cursorInFuture(ctx: FelixStreamContext, m: MessageOf<'cache_watch'>, scope: NamespaceRef): Promise<void> {
  const caches = ctx.services.broker.caches;
  const shard = m.key !== undefined ? caches.shardOf(scope, m.cache, m.key) : (m.shard ?? 0);
  const end = await serviced(m, () => caches.shardEnd(scope, m.cache, shard));
  ctx.send({ type: 'subscribe_cursor_error', reason: 'in_future', requested: m.fromOffset!, available: BigInt(end ?? 0) });
}

/** Pushes a watch's changes down its event stream until the watch, the stream or the connection ends. */
async function deliver(ctx: FelixStreamContext, w: CacheWatch, out: Writable): Promise<void> {
  const stop = (): void => w.close();
  ctx.connection.closed.addEventListener('abort', stop, { once: true });
  out.once('close', stop);
  try {
    for (;;) {
      const next = await w.next();
      if (next.done === true) break;
      const c = next.value;
      write(out, { type: 'cache_event', key: c.key, ...(c.value !== null ? { value: c.value } : {}), offset: BigInt(c.offset), expiresAtMillis: BigInt(c.expiresAtMillis) });
      if (out.writableLength > ctx.services.settings.subscriberBufferedBytesMax) await drained(out, ctx.connection.closed);
    }
    const end = w.endedBy;
    if (end?.kind === 'lagged') write(out, { type: 'cache_watch_lagged', resumeFrom: BigInt(end.resumeFrom) });
  } catch (error) {
    ctx.services.logger.debug('a felix cache watch ended on an error', { error: String(error) });
  } finally {
    ctx.connection.closed.removeEventListener('abort', stop);
    out.off('close', stop);
    w.close();
    if (!out.destroyed && !out.writableEnded) out.end();
  }
}

function write(out: Writable, message: FelixMessage): void {
  if (out.destroyed || out.writableEnded) return;
  writeChunks(out, encodeMessage(message));
}

/** Until the stream drains, closes, or the connection goes. */
function drained(out: Writable, closed: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      out.off('drain', done);
      out.off('close', done);
      closed.removeEventListener('abort', done);
      resolve();
    };
    out.once('drain', done);
    out.once('close', done);
    closed.addEventListener('abort', done, { once: true });
    if (out.destroyed || closed.aborted) done();
  });
}

export const cacheHandlers: readonly FelixHandler[] = [
  felixHandler(['cache_put'], put),
  felixHandler(['cache_get'], getOrDelete),
  felixHandler(['cache_delete'], getOrDelete, Feature.cacheDelete),
  felixHandler(['cache_watch'], watch, Feature.cacheWatch | Feature.cacheWatchRetained),
  felixHandler(['counter_add', 'counter_get'], counter, Feature.counters),
];
