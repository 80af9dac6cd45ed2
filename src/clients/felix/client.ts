// The Felix client (docs/sdk-felix.md): three pools of QUIC connections to one broker (publish,
// cache, event; notes §4), each stream authenticated and negotiated on its own, and the calls
// that are one request and one answer (stream_shards, producer_init). Publishers, subscriptions,
// caches and group consumers are made from it and share its pools.
//
// Negotiation: every stream offers the client's flags and features; what the broker advertises
// on a stream decides what is sent on it. A featured request (capabilities.ts requestFeature) the
// broker did not advertise fails with FelixUnsupportedError before anything is sent: a broker
// closes a stream on a message type it does not know (notes §5).

import { silentLogger, type Logger } from '../../base/logger.js';
import { requestFeature, type FelixMessage, type MessageType, type PeerCapabilities } from '../../protocols/felix/codec/index.js';
import { FelixCache } from './cache.js';
import { FelixClosedError, FelixProtocolError, FelixUnsupportedError } from './errors.js';
import { FelixGroupConsumer, type GroupConsumerOptions } from './group.js';
import { resolveOptions, type FelixClientOptions, type ResolvedOptions } from './options.js';
import { Pool } from './pool.js';
import { FelixPublisher, type PublisherOptions } from './publisher.js';
import { FelixIdempotentPublisher, type IdempotentPublisherOptions } from './idempotent.js';
import type { Answer, AuthOffer, RequestStream } from './request-stream.js';
import type { FelixConnection } from './connection.js';
import { FelixSubscription, type SubscribeOptions } from './subscriber.js';

export type PoolName = 'publish' | 'cache' | 'event';

/** Per-call options. */
export interface CallOptions {
  /** Overrides the client's requestTimeoutMs. */
  timeoutMs?: number;
}

/** Throws FelixUnsupportedError when the broker did not advertise the feature `type` needs. */
export function requireFeature(caps: PeerCapabilities, type: MessageType, extra = 0): void {
  const bit = (requestFeature[type] ?? 0) | extra;
  if ((caps.features & bit) !== bit) throw new FelixUnsupportedError(type, bit & ~caps.features, 'feature');
}

/** The message of an answer, checked to be one of the expected types. */
export function messageOf<T extends MessageType>(answer: Answer, ...types: T[]): Extract<FelixMessage, { type: T }> {
  if (answer.kind !== 'message' || !(types as string[]).includes(answer.message.type)) {
    throw new FelixProtocolError(`expected ${types.join(' or ')}, got ${answer.kind === 'message' ? answer.message.type : 'a publish ack'}`);
  }
  return answer.message as Extract<FelixMessage, { type: T }>;
}

export class FelixClient {
  readonly options: ResolvedOptions;
  readonly logger: Logger;
  /** The auth every stream of this client sends. */
  readonly offer: AuthOffer;
  private readonly pools: Record<PoolName, Pool>;
  private nextRequestId = 1n;
  private closed = false;
  private learned: PeerCapabilities | null = null;
  private readonly closers = new Set<{ close(): Promise<void> }>();

  constructor(options: FelixClientOptions) {
    this.options = resolveOptions(options);
    this.logger = options.logger ?? silentLogger;
    const o = this.options;
    const offer: AuthOffer = { tenantId: o.tenantId, token: o.token, clientFlags: o.clientFlags, clientFeatures: o.clientFeatures };
    this.offer = offer;
    this.pools = {
      publish: new Pool('publish', o.publishPool, o, offer, this.logger),
      cache: new Pool('cache', o.cachePool, o, offer, this.logger),
      event: new Pool('event', { connections: o.eventConnections, streamsPerConnection: 1 }, o, offer, this.logger),
    };
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** What the broker advertised on the last stream that authenticated (null before any). */
  get capabilities(): PeerCapabilities | null {
    return this.learned;
  }

  /** Opens a cache-pool stream now (connect, auth, negotiation) and returns what the broker advertised. */
  async connect(): Promise<PeerCapabilities> {
    return (await this.stream('cache')).capabilities;
  }

  /** A fresh request_id (u64, from 1, unique per client). */
  requestId(): bigint {
    return this.nextRequestId++;
  }

  /** The next stream of a pool, authenticated. */
  async stream(pool: Exclude<PoolName, 'event'>): Promise<RequestStream> {
    if (this.closed) throw new FelixClosedError();
    const s = await this.pools[pool].stream();
    this.learned = s.capabilities;
    return s;
  }

  /** A stream of its own on the next connection of a pool; the caller closes it. */
  async ownStream(pool: PoolName): Promise<{ connection: FelixConnection; stream: RequestStream }> {
    if (this.closed) throw new FelixClosedError();
    const own = await this.pools[pool].ownStream();
    this.learned = own.stream.capabilities;
    return own;
  }

  /**
   * One request with a request_id and its answer, on the next stream of `pool`; the feature the
   * request type needs is checked first.
   */
  async call<T extends MessageType>(pool: Exclude<PoolName, 'event'>, build: (requestId: bigint) => FelixMessage, accepts: readonly T[], options?: CallOptions): Promise<Extract<FelixMessage, { type: T }>> {
    const stream = await this.stream(pool);
    const requestId = this.requestId();
    const message = build(requestId);
    requireFeature(stream.capabilities, message.type);
    const answer = await stream.request(message, requestId, accepts, options?.timeoutMs ?? this.options.requestTimeoutMs);
    return messageOf(answer, ...accepts);
  }

  /** stream_shards: how many shards a stream has (0: the broker knows no such stream). */
  async streamShards(stream: string, options: CallOptions & { namespace?: string } = {}): Promise<number> {
    const view = await this.call(
      'cache',
      (requestId) => ({ type: 'stream_shards', tenantId: this.options.tenantId, namespace: options.namespace ?? this.options.namespace, stream, requestId }),
      ['stream_shards_view'],
      options,
    );
    return view.shards;
  }

  /** producer_init: a new producer id from the broker (FelixIdempotentPublisher does this itself). */
  async producerInit(options?: CallOptions): Promise<bigint> {
    const ok = await this.call('cache', (requestId) => ({ type: 'producer_init', requestId }), ['producer_init_ok'], options);
    return ok.producerId;
  }

  /** A publisher for one stream: binary acked batches when the broker advertises them, JSON otherwise. */
  publisher(stream: string, options: PublisherOptions = {}): FelixPublisher {
    return this.track(new FelixPublisher(this, stream, options));
  }

  /** An idempotent publisher for one stream and shard route (unkeyed, or one key). */
  idempotentPublisher(stream: string, options: IdempotentPublisherOptions = {}): FelixIdempotentPublisher {
    return this.track(new FelixIdempotentPublisher(this, stream, options));
  }

  /** Subscribes to one shard of a stream; resolves once the broker confirmed it. */
  async subscribe(stream: string, options: SubscribeOptions = {}): Promise<FelixSubscription> {
    const sub = this.track(new FelixSubscription(this, stream, options));
    try {
      await sub.start();
    } catch (err) {
      await sub.close();
      throw err;
    }
    return sub;
  }

  /** A cache scope: values with TTLs, watches and counters. */
  cache(name: string, options: { namespace?: string } = {}): FelixCache {
    return new FelixCache(this, name, options.namespace ?? this.options.namespace);
  }

  /** A queue-group consumer on one shard of a stream. */
  groupConsumer(stream: string, group: string, options: GroupConsumerOptions = {}): FelixGroupConsumer {
    return this.track(new FelixGroupConsumer(this, stream, group, options));
  }

  /** Registers something to close with the client (and forgets it once it closed). */
  track<T extends { close(): Promise<void> }>(thing: T): T {
    this.closers.add(thing);
    return thing;
  }

  untrack(thing: { close(): Promise<void> }): void {
    this.closers.delete(thing);
  }

  /** Closes publishers, subscriptions, watches and consumers, then every connection. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    const things = [...this.closers];
    this.closers.clear();
    await Promise.all(things.map((t) => t.close().catch(() => {})));
    this.closed = true;
    await Promise.all(Object.values(this.pools).map((p) => p.close()));
  }
}
