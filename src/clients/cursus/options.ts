// The Cursus client's options and the names it takes for compression algorithms.

import type tls from 'node:tls';
import { Compression } from '../../protocols/cursus/codec/index.js';

export type CompressionName = 'none' | 'gzip' | 'snappy' | 'lz4';

/** The default order of preference offered at negotiation (docs/sdk-cursus.md "Options"). */
export const defaultCompressions: readonly CompressionName[] = ['lz4', 'snappy', 'gzip', 'none'];

export function compressionId(name: CompressionName | Compression): Compression {
  if (typeof name === 'number') return name;
  const id = Compression[name];
  if (id === undefined) throw new RangeError(`unknown compression ${JSON.stringify(name)} (none, gzip, snappy or lz4)`);
  return id;
}

export interface ReconnectOptions {
  /** Connection attempts per (re)connection before the waiting requests fail (default 5). */
  attemptsMax?: number;
  /** First backoff delay (default 100 ms); doubles per attempt up to backoffMaxMs (default 5 s). */
  backoffMinMs?: number;
  backoffMaxMs?: number;
}

export interface CursusCredentials {
  principal: string;
  token: string;
}

export interface CursusClientOptions {
  /** "host:port" (default 127.0.0.1:9000); `host`/`port` override it. */
  addr?: string;
  host?: string;
  port?: number;
  /** TLS 1.2 or later: true for the defaults (servername = host), or node:tls options. */
  tls?: boolean | tls.ConnectionOptions;
  /** Compression ids offered at negotiation, in order of preference (default lz4, snappy, gzip, none). */
  compression?: ReadonlyArray<CompressionName | Compression>;
  /** Sent as AUTH on every new connection before its first request. */
  credentials?: CursusCredentials;
  /** Per request, including the wait in the queue and for a (re)connection (default 30 s). */
  requestTimeoutMs?: number;
  /** Longest wait for the next frame of a STREAM (a batch or a keepalive; default 30 s). */
  streamIdleTimeoutMs?: number;
  /** TCP (and TLS) connect plus negotiation (default 10 s). */
  connectTimeoutMs?: number;
  /** false: one connection attempt per (re)connection, no backoff. */
  reconnect?: false | ReconnectOptions;
  /** Connections per broker address for ordinary requests (default 4). */
  poolSize?: number;
  /** Follow NOT_LEADER and NOT_COORDINATOR redirects, retrying the request once (default true). */
  followRedirects?: boolean;
  /** Largest reply payload accepted (default and ceiling 64 MiB, the protocol's limit). */
  payloadBytesMax?: number;
  /**
   * The socket's read and write stream buffers (Node's high-water marks), in bytes (default 2 MiB,
   * as spec §10 recommends). The kernel's own socket buffers stay the operating system's.
   */
  socketBufferBytes?: number;
  /** Jitter source for the backoff (default Math.random). */
  random?: () => number;
}

export type CursusClientState = 'idle' | 'ready' | 'closed';
