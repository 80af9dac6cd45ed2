// The transport contract between the server process and the protocol front-ends: what a listener
// is (ProtocolListener, built by a ListenerFactory from a ListenerContext) and what a connection
// is to the listener that accepted it (ConnectionHandle, ConnectionContext). The server owns the
// process and the configuration; a front-end owns its bytes. ./tcp-listener.ts implements it for
// TCP and TLS; a front-end with another transport (Felix over QUIC) implements ProtocolListener
// itself. Nothing under src/protocols imports src/server: the server maps its configuration onto
// each front-end's settings (src/server/listeners.ts).

import type { Socket } from 'node:net';
import type { DirectReads } from '../base/socket-reads.js';
import type { Logger } from '../base/logger.js';
import type { Broker } from '../core/broker.js';
import type { MetricsRegistry } from '../core/metrics.js';

export interface ListenAddress {
  host: string;
  port: number;
}

/** One listener's settings: where it binds, how many connections it takes, TLS, what it advertises. */
export interface ListenerSettings {
  addr: ListenAddress;
  /** Connections at once; beyond them the oldest unauthenticated one is closed, or, if none, the new one. */
  maxConnections: number;
  /** PEM certificate and key; TLS is on when both are set. */
  tlsCertFile: string | null;
  tlsKeyFile: string | null;
  /** The address given to clients (Kafka metadata); null derives it from the bound address. */
  advertisedAddr: ListenAddress | null;
  /** A TLS handshake not done within this is dropped (default defaultHandshakeTimeoutMs). */
  handshakeTimeoutMs?: number;
  /** A connection not authenticated within this is closed; 0: never (default defaultAuthTimeoutMs). */
  authTimeoutMs?: number;
  /**
   * Connections not yet authenticated (TLS handshakes included) at once; a new one beyond them, or
   * beyond maxConnections, closes the oldest unauthenticated one (default defaultUnauthenticatedConnectionsMax).
   */
  unauthenticatedConnectionsMax?: number;
  /** Connections from one peer address at once; more are refused; 0: no limit (default defaultConnectionsPerPeerMax). */
  connectionsPerPeerMax?: number;
  /** A connection with no request begun or finished for this long, and none in flight, is closed ('idle'); 0 (the default): never. */
  idleTimeoutMs?: number;
}

/** How long a TLS handshake may take. */
export const defaultHandshakeTimeoutMs = 10_000;
/** How long a connection may stay unauthenticated. */
export const defaultAuthTimeoutMs = 10_000;
/**
 * How long a connection may sit idle, per protocol: Kafka's connections.max.idle.ms (10 min;
 * Kafka clients reconnect when they need to); Cursus's client_idle_timeout_ms (60 s); Iggy keeps
 * idle connections, as its reference server does (consumer-group members are evicted by the
 * front-end's own heartbeat rule instead); Felix runs over QUIC, whose own idle timeout applies.
 */
export const defaultIdleTimeoutsMs: Readonly<Record<string, number>> = { kafka: 600_000, iggy: 0, cursus: 60_000, felix: 0 };

/** How many connections may be unauthenticated at once (per listener). */
export const defaultUnauthenticatedConnectionsMax = 1024;

/** How many connections one peer address may hold at once (per listener). */
export const defaultConnectionsPerPeerMax = 256;

/** What a listener is built from: the broker, its own settings and process-wide services. */
export interface ListenerContext {
  /** Metric label and log tag: kafka, iggy, cursus, felix. */
  name: string;
  broker: Broker;
  settings: ListenerSettings;
  /** A logger already tagged with { listener: name }. */
  logger: Logger;
  metrics: MetricsRegistry;
}

export interface ProtocolListener {
  readonly name: string;
  /** Binds and starts accepting; resolves with the bound address (the real port when 0 was asked). */
  start(): Promise<ListenAddress>;
  /**
   * Stops accepting, lets open connections finish their in-flight requests for at most
   * `drainTimeoutMs`, then destroys what is left. Never rejects.
   */
  stop(drainTimeoutMs: number): Promise<void>;
}

export type ListenerFactory = (context: ListenerContext) => ProtocolListener;

export type CloseReason = 'shutdown' | 'protocol_error' | 'idle' | 'auth_failed' | 'server_error';

export interface ConnectionHandle {
  /**
   * Asks the connection to wind down: stop reading new requests and let in-flight ones finish.
   * The listener ends the socket once the connection is idle; the handle may also end it itself.
   * Called at most once per reason; must not throw.
   */
  close(reason: CloseReason): void;
  /**
   * Resolves when no request is in flight. Optional: by default the listener uses the count kept
   * by `context.beginRequest`. Implement it when a connection has work the count does not see.
   */
  whenIdle?(): Promise<void>;
}

export type RequestDone = (outcome?: 'ok' | 'error') => void;

export interface ConnectionContext {
  /** Unique per listener, increasing. */
  readonly id: number;
  readonly listener: string;
  /** "ip:port" of the peer. */
  readonly remote: string;
  readonly tls: boolean;
  /** Tagged with the listener, connection id and peer. */
  readonly logger: Logger;
  /** Marks a request in flight; call the result exactly once when its response is written. */
  beginRequest(operation: string): RequestDone;
  /** Requests begun and not yet done. */
  readonly inFlight: number;
  /**
   * The peer has authenticated (or the protocol asks for no proof): the connection no longer
   * counts against the unauthenticated limit, is no longer closed to make room for new ones, and
   * its authentication deadline is lifted. Once is enough; later calls do nothing.
   */
  authenticated(): void;
  /**
   * The peer is no longer authenticated (an Iggy Logout): it counts as unauthenticated again and
   * must authenticate within the listener's deadline, from now. Does nothing before authenticated().
   */
  unauthenticated(): void;
  /**
   * Present when the socket reads into one reused buffer instead of emitting 'data': the connection
   * hands its chunk handler here (once, when it starts) instead of listening for 'data'. A chunk is
   * only valid during the call: nothing may keep a view of it. With `direct`, reads go straight
   * into the rest of a large frame its framer is assembling (src/base/socket-reads.ts).
   */
  readonly readInto?: ReadInto;
}

export type ConnectionFactory = (socket: Socket, context: ConnectionContext) => ConnectionHandle;

/** See ConnectionContext.readInto. */
export type ReadInto = (onChunk: (chunk: Buffer) => void, direct?: DirectReads) => void;
