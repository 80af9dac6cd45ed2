// A scripted Felix peer for the SDK's tests: the real QUIC server (src/protocols/felix/quic.ts,
// 127.0.0.1, UDP port 0, a self-signed localhost certificate) and the codec, answering as the
// notes say (per-stream auth with negotiation, JSON and binary publishes with acks, idempotent
// producers, subscribe with start positions and cursor errors then an event stream of hello and
// event batches, caches with TTL and watches, counters, queue groups with dead letters,
// stream_shards), over the small in-memory model of ./fake-model.ts. Test-only: no durability,
// one node. Hooks let a test see what arrived, script or drop answers, drop events, lag watches
// and drop every connection (a broker restart as a client sees it).

import type { Duplex, Writable } from 'node:stream';
import { silentLogger } from '../../../src/base/logger.js';
import {
  ErrorText,
  EventBatchFrames,
  FelixFramer,
  Flag,
  authReply,
  clientMessageTypes,
  decodeFrame,
  encodeMessage,
  encodePublishAck,
  payloadBytesMaxDefault,
  peekAckedPrefix,
  publishPayloads,
  requestFeature,
  serverFlags as allFlags,
  singleNodeFeatures,
  type BinaryPublishBatch,
  type FelixMessage,
  type MessageOf,
  type PeerCapabilities,
  type PublishRefusalReason,
} from '../../../src/protocols/felix/codec/index.js';
import { startFelixQuicServer, type FelixQuicConnection, type FelixQuicServer } from '../../../src/protocols/felix/quic.js';
import { FakeModel, type Cache } from './fake-model.js';

export interface FakePeerOptions {
  /** tenant → token accepted (default: any token for any tenant). */
  tokens?: Record<string, string>;
  /** What auth_ok advertises (default every flag, every single-node feature). */
  serverFlags?: number;
  serverFeatures?: number;
  /** A broker from before negotiation: `ok` to every auth, whatever it offers. */
  legacy?: boolean;
  /** Event batches as per-subscriber frames (0x0002) instead of shared ones (0x0004). */
  perSubscriberEvents?: boolean;
}

/** One frame as it arrived: its flags and what it was. */
export interface Received {
  flags: number;
  type: string;
}

interface StreamCtx {
  conn: FelixQuicConnection;
  duplex: Duplex;
  peer: PeerCapabilities | null;
}

export class FakeFelixPeer {
  readonly model = new FakeModel();
  readonly received: Received[] = [];
  /** Requests of these types are applied but not answered, as many times as the count says. */
  readonly unanswered = new Map<string, number>();
  private readonly connections = new Set<FelixQuicConnection>();
  /** A test's own answer to a request: frames to write instead, 'close' to end the stream, undefined to answer as usual. */
  script: ((m: FelixMessage) => readonly Buffer[] | 'close' | undefined) | null = null;
  /** Refusals the next publish_idempotent requests get instead of the model's answer. */
  readonly refusals: PublishRefusalReason[] = [];
  private dropBatches = 0;
  private lagNext = false;

  private constructor(
    private server: FelixQuicServer | null,
    private readonly options: FakePeerOptions,
  ) {}

  static async start(options: FakePeerOptions = {}): Promise<FakeFelixPeer> {
    const peer = new FakeFelixPeer(null, options);
    peer.server = await startFelixQuicServer({ host: '127.0.0.1', port: 0, logger: silentLogger, onConnection: (c) => peer.onConnection(c) });
    return peer;
  }

  get addr(): string {
    return `127.0.0.1:${this.server!.port}`;
  }

  get certificate(): string {
    return this.server!.certificate;
  }

  /** The next `n` event batches appended are not delivered (a slow subscriber's drops). */
  dropNextEventBatches(n: number): void {
    this.dropBatches = n;
  }

  /** The next cache change ends every watch with cache_watch_lagged naming it. */
  lagWatchesOnNextChange(): void {
    this.lagNext = true;
  }

  /** The client connections now open. */
  openConnections(): FelixQuicConnection[] {
    return [...this.connections];
  }

  /** Closes every client connection (the broker restarting, as a client sees it). */
  async dropConnections(): Promise<void> {
    const all = [...this.connections];
    this.connections.clear();
    await Promise.all(all.map((c) => c.close(0, 'restart').catch(() => {})));
  }

  async close(): Promise<void> {
    await this.dropConnections();
    await this.server?.close();
  }

  private onConnection(conn: FelixQuicConnection): void {
    this.connections.add(conn);
    conn.on('close', () => this.connections.delete(conn));
    conn.on('bidi', (duplex: Duplex) => {
      duplex.on('error', () => {});
      this.serve({ conn, duplex, peer: null });
    });
  }

  private serve(ctx: StreamCtx): void {
    const framer = new FelixFramer();
    ctx.duplex.on('data', (chunk: Buffer) => {
      for (const r of framer.push(chunk)) {
        if (!r.ok) return void ctx.duplex.destroy();
        const d = decodeFrame(r.frame.header.flags, r.frame.payload);
        if (!d.ok) {
          if (d.flagsRefused) this.send(ctx, { type: 'error', message: ErrorText.unsupportedFrameFlags });
          else if ((r.frame.header.flags & Flag.binaryPublishAcked) !== 0) this.malformedAcked(ctx, r.frame.payload);
          else ctx.duplex.destroy();
          continue;
        }
        const f = d.value;
        this.received.push({ flags: r.frame.header.flags, type: f.kind === 'message' ? f.message.type : f.kind });
        if (ctx.peer === null) {
          if (f.kind !== 'message' || f.message.type !== 'auth') return this.fatal(ctx, ErrorText.authRequired);
          if (!this.authenticate(ctx, f.message)) return;
          framer.limits = { payloadBytesMax: payloadBytesMaxDefault };
          continue;
        }
        if (f.kind === 'publish_batch') this.binaryPublish(ctx, f.batch);
        else if (f.kind === 'message') this.onMessage(ctx, f.message);
        else return this.fatal(ctx, ErrorText.unexpectedMessageType);
      }
    });
    ctx.duplex.on('end', () => ctx.duplex.end());
  }

  private authenticate(ctx: StreamCtx, auth: MessageOf<'auth'>): boolean {
    const want = this.options.tokens?.[auth.tenantId];
    if (this.options.tokens !== undefined && want !== auth.token) {
      this.fatal(ctx, ErrorText.authFailed);
      return false;
    }
    const server = { flags: this.options.serverFlags ?? allFlags, features: this.options.serverFeatures ?? singleNodeFeatures };
    const { reply, peer } = authReply(this.options.legacy === true ? { ...auth, clientFlags: undefined, clientFeatures: undefined } : auth, server);
    ctx.peer = peer;
    this.send(ctx, reply);
    return true;
  }

  private send(ctx: StreamCtx, m: FelixMessage): void {
    for (const c of encodeMessage(m)) ctx.duplex.write(c);
  }

  private fatal(ctx: StreamCtx, message: string): void {
    this.send(ctx, { type: 'error', message });
    ctx.duplex.end();
  }

  /** True when this request is to go unanswered (a lost answer). */
  private swallow(type: string): boolean {
    const n = this.unanswered.get(type) ?? 0;
    if (n === 0) return false;
    this.unanswered.set(type, n - 1);
    return true;
  }

  private malformedAcked(ctx: StreamCtx, payload: Buffer): void {
    const p = peekAckedPrefix(payload);
    if (!p.ok) return this.send(ctx, { type: 'error', message: ErrorText.malformedAckedPrefix });
    ctx.duplex.write(encodePublishAck({ requestId: p.value.requestId, error: ErrorText.malformedPublishBatch, owner: null }));
  }

  private binaryPublish(ctx: StreamCtx, b: BinaryPublishBatch): void {
    const r = this.model.append(b.tenantId, b.namespace, b.stream, b.key, publishPayloads(b));
    if (b.acked === null || this.swallow('publish')) return;
    ctx.duplex.write(encodePublishAck({ requestId: b.acked.requestId, error: typeof r === 'string' ? r : null, owner: null }));
  }

  private onMessage(ctx: StreamCtx, m: FelixMessage): void {
    if (m.type === 'auth') return this.fatal(ctx, ErrorText.authAlreadyEstablished);
    if (!clientMessageTypes.has(m.type)) return this.fatal(ctx, ErrorText.unexpectedMessageType);
    const feature = requestFeature[m.type];
    // A broker without the feature does not know the type: its control loop ends (notes §5).
    if (feature !== undefined && ((this.options.serverFeatures ?? singleNodeFeatures) & feature) === 0) return void ctx.duplex.destroy();
    if (this.swallow(m.type)) return;
    const scripted = this.script?.(m);
    if (scripted === 'close') return void ctx.duplex.destroy();
    if (scripted !== undefined) return void scripted.forEach((c) => ctx.duplex.write(c));
    switch (m.type) {
      case 'publish':
      case 'publish_batch':
        return this.jsonPublish(ctx, m);
      case 'producer_init':
        return this.send(ctx, { type: 'producer_init_ok', requestId: m.requestId, producerId: this.model.producerInit() });
      case 'publish_idempotent': {
        const refusal = this.refusals.shift();
        if (refusal !== undefined) return this.send(ctx, { type: 'publish_refused', requestId: m.requestId, reason: refusal, message: refusal.kind });
        const r = this.model.publishIdempotent(m);
        if (r === 'ok') return this.send(ctx, { type: 'publish_ok', requestId: m.requestId });
        if (typeof r === 'string') return this.send(ctx, { type: 'publish_error', requestId: m.requestId, message: r });
        return this.send(ctx, { type: 'publish_refused', requestId: m.requestId, reason: r, message: r.kind });
      }
      case 'stream_shards': {
        const shards = this.model.shards(m.tenantId, m.namespace, m.stream);
        return this.send(ctx, { type: 'stream_shards_view', shards: typeof shards === 'string' ? 0 : shards.length, requestId: m.requestId });
      }
      case 'subscribe':
        return this.subscribe(ctx, m);
      case 'cache_put':
      case 'cache_get':
      case 'cache_delete':
      case 'counter_add':
      case 'counter_get':
        return this.cacheRequest(ctx, m);
      case 'cache_watch':
        return this.cacheWatch(ctx, m);
      case 'group_poll':
      case 'group_ack':
      case 'group_nack':
      case 'group_dead_letters':
      case 'group_discard':
      case 'group_redrive':
        return this.groupRequest(ctx, m);
      default:
        return this.fatal(ctx, ErrorText.unexpectedMessageType);
    }
  }

  private jsonPublish(ctx: StreamCtx, m: MessageOf<'publish'> | MessageOf<'publish_batch'>): void {
    const ack = m.ack ?? 'per_message';
    if (ack !== 'none' && m.requestId === undefined) return this.send(ctx, { type: 'error', message: ErrorText.missingRequestId });
    const r = this.model.append(m.tenantId, m.namespace, m.stream, m.key, m.type === 'publish' ? [m.payload] : m.payloads);
    if (ack === 'none') return;
    if (typeof r === 'string') return this.send(ctx, { type: 'publish_error', requestId: m.requestId!, message: r });
    this.send(ctx, { type: 'publish_ok', requestId: m.requestId! });
  }

  /** Notes §6 order: event stream and hello, then `subscribed`, then history, then live. */
  private subscribe(ctx: StreamCtx, m: MessageOf<'subscribe'>): void {
    const shards = this.model.shards(m.tenantId, m.namespace, m.stream);
    if (typeof shards === 'string') return this.send(ctx, { type: 'error', message: shards });
    const shard = shards[m.shard ?? 0];
    if (shard === undefined) return this.send(ctx, { type: 'error', message: `shard ${m.shard} not found` });
    const tail = BigInt(shard.records.length);
    const start = m.start ?? 'latest';
    const from = start === 'latest' ? tail : start === 'earliest' ? 0n : start.offset;
    if (from > tail) return this.send(ctx, { type: 'subscribe_cursor_error', reason: 'in_future', requested: from, available: tail });
    const subscriptionId = m.subscriptionId ?? BigInt(Date.now());
    const events = this.eventStream(ctx, subscriptionId);
    const offsets = (ctx.peer!.flags & Flag.eventBatchOffsets) !== 0;
    const write = (base: bigint, payloads: Buffer[]): void => {
      const frames = new EventBatchFrames({ payloads }, base);
      const chunks = this.options.perSubscriberEvents === true ? frames.perSubscriber(subscriptionId, offsets) : frames.shared(offsets);
      for (const c of chunks) events.write(c);
    };
    this.send(ctx, { type: 'subscribed', subscriptionId, startOffset: from, liveOffset: tail });
    if (from < tail) write(from, shard.records.slice(Number(from)));
    const listener = (base: bigint, payloads: Buffer[]): void => {
      if (this.dropBatches > 0) return void this.dropBatches--;
      write(base, payloads);
    };
    shard.listeners.add(listener);
    events.on('close', () => shard.listeners.delete(listener));
  }

  private eventStream(ctx: StreamCtx, subscriptionId: bigint): Writable {
    const events = ctx.conn.openUni();
    events.on('error', () => {});
    for (const c of encodeMessage({ type: 'event_stream_hello', subscriptionId })) events.write(c);
    return events;
  }

  private cacheOf(ctx: StreamCtx, m: { tenantId: string; namespace: string; cache: string }): Cache | null {
    const cache = this.model.cache(m.tenantId, m.namespace, m.cache);
    if (typeof cache !== 'string') return cache;
    this.send(ctx, { type: 'error', message: cache });
    return null;
  }

  private cacheRequest(ctx: StreamCtx, m: MessageOf<'cache_put' | 'cache_get' | 'cache_delete' | 'counter_add' | 'counter_get'>): void {
    const cache = this.cacheOf(ctx, m);
    if (cache === null) return;
    const scope = { tenantId: m.tenantId, namespace: m.namespace, cache: m.cache, key: m.key };
    switch (m.type) {
      case 'cache_put':
        this.model.cachePut(cache, m.key, m.value, m.ttlMs);
        return this.send(ctx, m.requestId !== undefined ? { type: 'cache_ok', requestId: m.requestId } : { type: 'ok' });
      case 'cache_get':
        return this.send(ctx, { type: 'cache_value', ...scope, value: this.model.cacheGet(cache, m.key), requestId: m.requestId });
      case 'cache_delete':
        return this.send(ctx, { type: 'cache_value', ...scope, value: this.model.cacheDelete(cache, m.key), requestId: m.requestId });
      case 'counter_add': {
        const v = (cache.counters.get(m.key) ?? 0n) + m.delta;
        cache.counters.set(m.key, v);
        return this.send(ctx, { type: 'counter_value', value: v, requestId: m.requestId });
      }
      case 'counter_get':
        return this.send(ctx, { type: 'counter_value', value: cache.counters.get(m.key), requestId: m.requestId });
    }
  }

  /** Spec "CacheWatch": hello, cache_watch_started, replay / snapshot / retained, then live changes. */
  private cacheWatch(ctx: StreamCtx, m: MessageOf<'cache_watch'>): void {
    const cache = this.cacheOf(ctx, m);
    if (cache === null) return;
    if ((m.key === undefined) === (m.prefix === undefined) || (m.retained && m.fromOffset !== undefined)) return this.fatal(ctx, 'invalid cache_watch');
    const tail = BigInt(cache.log.length);
    if (m.fromOffset !== undefined && m.fromOffset > tail) return this.send(ctx, { type: 'subscribe_cursor_error', reason: 'in_future', requested: m.fromOffset, available: tail });
    const matches = (key: string): boolean => (m.key !== undefined ? key === m.key : key.startsWith(m.prefix!));
    const subscriptionId = m.subscriptionId ?? BigInt(Date.now());
    const events = this.eventStream(ctx, subscriptionId);
    const emit = (c: { key: string; value: Buffer | null; offset: bigint; expiresAt: bigint }): void => {
      for (const chunk of encodeMessage({ type: 'cache_event', key: c.key, ...(c.value !== null ? { value: c.value } : {}), offset: c.offset, expiresAtMillis: c.expiresAt })) events.write(chunk);
    };
    const resnapshot = m.fromOffset !== undefined && m.fromOffset < cache.compactedBefore;
    const current = [...cache.entries].filter(([k]) => matches(k));
    this.send(ctx, { type: 'cache_watch_started', subscriptionId, resumeOffset: tail, resnapshot, ...(m.retained ? { retainedCount: BigInt(current.length) } : {}) });
    if (m.retained || resnapshot) {
      for (const [key, e] of current) emit({ key, value: e.value, offset: this.lastOffsetOf(cache, key), expiresAt: e.expiresAt });
    } else if (m.fromOffset !== undefined) {
      for (const c of cache.log.slice(Number(m.fromOffset))) if (matches(c.key)) emit(c);
    }
    const listener = (c: { key: string; value: Buffer | null; offset: bigint; expiresAt: bigint }): void => {
      if (!matches(c.key)) return;
      if (this.lagNext) {
        this.lagNext = false;
        for (const chunk of encodeMessage({ type: 'cache_watch_lagged', resumeFrom: c.offset })) events.write(chunk);
        cache.listeners.delete(listener);
        return void events.end();
      }
      emit(c);
    };
    cache.listeners.add(listener);
    events.on('close', () => cache.listeners.delete(listener));
  }

  private lastOffsetOf(cache: Cache, key: string): bigint {
    for (let i = cache.log.length - 1; i >= 0; i--) if (cache.log[i]!.key === key) return cache.log[i]!.offset;
    return 0n;
  }

  private groupRequest(ctx: StreamCtx, m: MessageOf<'group_poll' | 'group_ack' | 'group_nack' | 'group_dead_letters' | 'group_discard' | 'group_redrive'>): void {
    const shards = this.model.shards(m.tenantId, m.namespace, m.stream);
    if (typeof shards === 'string') return this.send(ctx, { type: 'error', message: shards });
    const shard = shards[m.shard];
    if (shard === undefined) return this.send(ctx, { type: 'error', message: `shard ${m.shard} not found` });
    const g = this.model.group(m.tenantId, m.namespace, m.stream, m.shard, m.group);
    const ok = (): void => this.send(ctx, { type: 'cache_ok', requestId: m.requestId });
    switch (m.type) {
      case 'group_poll': {
        const answer = (): void => this.send(ctx, { type: 'group_records', records: this.model.claim(shard.records, g, m.maxRecords), requestId: m.requestId });
        const ready = g.redeliver.length > 0 || g.cursor < shard.records.length;
        if (ready || m.waitMs === 0n) return answer();
        // Long poll: answer on the next append or when the wait ends, whichever is first.
        const timer = setTimeout(() => settle(), Number(m.waitMs));
        const settle = (): void => {
          clearTimeout(timer);
          shard.listeners.delete(settle);
          answer();
        };
        shard.listeners.add(settle);
        return;
      }
      case 'group_ack':
        g.claimed.delete(Number(m.offset));
        return ok();
      case 'group_nack':
        this.model.nack(g, Number(m.offset));
        return ok();
      case 'group_dead_letters':
        return this.send(ctx, { type: 'group_dead_letter_list', offsets: g.dead.map(BigInt), requestId: m.requestId });
      case 'group_discard':
        g.dead = g.dead.filter((o) => o !== Number(m.offset));
        return ok();
      case 'group_redrive':
        if (g.dead.includes(Number(m.offset))) {
          g.dead = g.dead.filter((o) => o !== Number(m.offset));
          g.attempts.set(Number(m.offset), 0);
          g.redeliver.push(Number(m.offset));
        }
        return ok();
    }
  }
}
