// The Felix client's options, their defaults, and what the client offers at auth.

import type { Logger } from '../../base/logger.js';
import { Feature, knownFeatures, knownFlags } from '../../protocols/felix/codec/index.js';
import type { QuicLimits } from '../../protocols/felix/quic.js';

/** Connections and streams per connection of one pool (notes §4: the reference client's pools). */
export interface PoolSize {
  connections: number;
  streamsPerConnection: number;
}

export interface FelixPools {
  /** Publishes (default 4 connections × 2 streams). */
  publish?: Partial<PoolSize>;
  /** Caches, counters, groups, shards, producer ids (default 8 × 4). */
  cache?: Partial<PoolSize>;
  /** Subscriptions and cache watches: connections only, each subscription on its own event stream (default 8). */
  eventConnections?: number;
}

export interface FelixClientOptions {
  /** "host:port" (default 127.0.0.1:5000); `host`/`port` override it. */
  addr?: string;
  host?: string;
  port?: number;
  /** The name the broker's certificate must carry (default localhost). */
  serverName?: string;
  /** PEM certificates to trust: the broker's own (self-signed) one or its CA. Required. */
  ca: string;
  /** Sent in `auth` on every stream. */
  tenantId?: string;
  token?: string;
  /** Namespace for calls that name none (default "default"). */
  namespace?: string;
  /**
   * Frame flags offered at auth (default: every v0.5.0 flag, 0x00ff). `null`: a legacy auth with
   * no client_flags; the broker answers `ok` and both sides keep to ORIGINAL_V1_FLAGS (JSON publishes).
   */
  clientFlags?: number | null;
  /** Feature bits offered at auth (default: every v0.5.0 feature but TOPOLOGY and REDIRECT). */
  clientFeatures?: number;
  pools?: FelixPools;
  /** Per request, from the call to its answer (default 30 s). */
  requestTimeoutMs?: number;
  /** QUIC handshake (default 5 s). */
  connectTimeoutMs?: number;
  /** Connection attempts before a call fails (default 3), with backoff from backoffMinMs (100) doubling up to backoffMaxMs (2 s). */
  connectAttemptsMax?: number;
  backoffMinMs?: number;
  backoffMaxMs?: number;
  /** Largest frame payload accepted from the broker (default 16 MiB, the broker's own limit). */
  frameBytesMax?: number;
  /** QUIC transport limits (src/protocols/felix/quic.ts). */
  quic?: Partial<QuicLimits>;
  logger?: Logger;
  /** Jitter source for the backoff (default Math.random). */
  random?: () => number;
}

export interface ResolvedOptions {
  host: string;
  port: number;
  serverName: string;
  ca: string;
  tenantId: string;
  token: string;
  namespace: string;
  clientFlags: number | null;
  clientFeatures: number;
  publishPool: PoolSize;
  cachePool: PoolSize;
  eventConnections: number;
  requestTimeoutMs: number;
  connectTimeoutMs: number;
  connectAttemptsMax: number;
  backoffMinMs: number;
  backoffMaxMs: number;
  frameBytesMax: number;
  quic: Partial<QuicLimits>;
  random: () => number;
}

export const defaultClientFeatures = knownFeatures & ~(Feature.topology | Feature.redirect);
export const defaultFelixPort = 5000;

function positive(n: number | undefined, fallback: number, what: string): number {
  const v = n ?? fallback;
  if (!Number.isInteger(v) || v < 1) throw new RangeError(`${what} must be a positive integer, got ${v}`);
  return v;
}

function address(options: FelixClientOptions): { host: string; port: number } {
  let host = '127.0.0.1';
  let port = defaultFelixPort;
  if (options.addr !== undefined) {
    const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):([0-9]{1,5})$/.exec(options.addr);
    if (m === null) throw new RangeError(`addr ${JSON.stringify(options.addr)} is not host:port`);
    host = (m[1] ?? m[2])!;
    port = Number(m[3]);
  }
  return { host: options.host ?? host, port: options.port ?? port };
}

export function resolveOptions(options: FelixClientOptions): ResolvedOptions {
  const { host, port } = address(options);
  const flags = options.clientFlags === undefined ? knownFlags : options.clientFlags;
  if (flags !== null && (flags < 0 || flags > 0xffff || !Number.isInteger(flags))) throw new RangeError(`clientFlags ${flags} is not a u16`);
  return {
    host,
    port,
    serverName: options.serverName ?? 'localhost',
    ca: options.ca,
    tenantId: options.tenantId ?? 'default',
    token: options.token ?? '',
    namespace: options.namespace ?? 'default',
    clientFlags: flags,
    clientFeatures: options.clientFeatures ?? defaultClientFeatures,
    publishPool: {
      connections: positive(options.pools?.publish?.connections, 4, 'pools.publish.connections'),
      streamsPerConnection: positive(options.pools?.publish?.streamsPerConnection, 2, 'pools.publish.streamsPerConnection'),
    },
    cachePool: {
      connections: positive(options.pools?.cache?.connections, 8, 'pools.cache.connections'),
      streamsPerConnection: positive(options.pools?.cache?.streamsPerConnection, 4, 'pools.cache.streamsPerConnection'),
    },
    eventConnections: positive(options.pools?.eventConnections, 8, 'pools.eventConnections'),
    requestTimeoutMs: positive(options.requestTimeoutMs, 30_000, 'requestTimeoutMs'),
    connectTimeoutMs: positive(options.connectTimeoutMs, 5_000, 'connectTimeoutMs'),
    connectAttemptsMax: positive(options.connectAttemptsMax, 3, 'connectAttemptsMax'),
    backoffMinMs: positive(options.backoffMinMs, 100, 'backoffMinMs'),
    backoffMaxMs: positive(options.backoffMaxMs, 2_000, 'backoffMaxMs'),
    frameBytesMax: positive(options.frameBytesMax, 16 << 20, 'frameBytesMax'),
    quic: options.quic ?? {},
    random: options.random ?? Math.random,
  };
}
