// The Iggy client's options, its states, and what its calls return.

import type tls from 'node:tls';
import type { IggyCredentials } from './inputs.js';

export interface ReconnectOptions {
  /** Connection attempts per reconnect cycle before requests fail (default 10). */
  attemptsMax?: number;
  /** First backoff delay (default 100 ms); doubles per attempt up to backoffMaxMs (default 5 s). */
  backoffMinMs?: number;
  backoffMaxMs?: number;
}

export interface IggyClientOptions {
  /** "host:port" (default 127.0.0.1:8090); `host`/`port` override it. */
  addr?: string;
  host?: string;
  port?: number;
  tls?: boolean | tls.ConnectionOptions;
  /** Logged in on connect and again after every reconnect. */
  credentials?: IggyCredentials;
  /** Per request, including the wait for a (re)connection (default 30 s). */
  requestTimeoutMs?: number;
  connectTimeoutMs?: number;
  /** false: a dropped connection is not re-established; requests fail until connect(). */
  reconnect?: false | ReconnectOptions;
  /** Ping an idle connection this often (default 5 s, like the reference SDKs; 0 = never). */
  pingIntervalMs?: number;
  /** Requests on the wire at once; later ones wait in order (default 256). */
  inflightRequestsMax?: number;
  /**
   * Largest reply frame accepted (default 256 MiB: a server may answer a poll with as much as
   * its count asks for, 128 MiB by default on Quartet's); a larger declared size closes the
   * connection.
   */
  frameBytesMax?: number;
  /** Stamp request_checksum on metadata requests (default true, as the Rust SDK). */
  requestChecksums?: boolean;
  /** The packed protocol version sent at login (default 0.11.0 = 11264). */
  protocolVersion?: number;
  sdkName?: string;
  sdkVersion?: string;
  /** Jitter source for the backoff (default Math.random). */
  random?: () => number;
}

export interface LoginResult {
  userId: number;
  session: bigint;
  clientId: bigint;
  serverProtocolVersion: number;
  serverVersion: string;
}

export interface RequestOptions {
  timeoutMs?: number;
}

export interface SendResult {
  /** The partition the batch landed on, when the server confirmed it. */
  partitionId: number | null;
  /** Offset of the first message, when the server confirmed it. */
  baseOffset: bigint | null;
}

export type IggyClientState = 'idle' | 'connecting' | 'ready' | 'reconnecting' | 'closed';
