// A TCP (optionally TLS) listener shared by the protocol front-ends (the transport contract it
// implements is ./transport.ts). It owns what every front-end would otherwise repeat: binding,
// the connection limits, connection tracking and metrics, request counting and latency, the
// deadlines before authentication, and the graceful stop.
//
// Connection limits, checked as a connection is accepted: at most `connectionsPerPeerMax` from one
// peer address (0: no limit; beyond it the new one is refused); at most `maxConnections` in all
// and `unauthenticatedConnectionsMax` not yet authenticated (TLS handshakes included). When either
// of those is reached, the oldest unauthenticated connection is closed to make room for the new
// one, so peers that never authenticate cannot lock out a client that does; only a listener full
// of authenticated connections refuses new ones. The front-end calls `context.authenticated()`
// once its peer has proved who it is (at once for a protocol without authentication).
//
// Before authentication: a TLS handshake must finish within `handshakeTimeoutMs`; a connection
// must authenticate within `authTimeoutMs` of being handed to the front-end, else it is destroyed
// (both counted). The front-end supplies one ConnectionFactory that turns a socket into a
// ConnectionHandle; it reads and writes the socket itself.
//
// Idle connections: a connection with no request in flight and none begun or finished for
// `idleTimeoutMs` is told close('idle') and ended once idle (Kafka's connections.max.idle.ms);
// one sweep per listener checks them, so a request costs no timer. 0 keeps idle connections.
//
// Graceful stop: the listening socket closes (no new connections); every connection is told
// close('shutdown') and should stop reading new requests; as soon as a connection has no request
// in flight its socket is ended; after `drainTimeoutMs` whatever is left is destroyed.
//
// Reads (plain TCP): accepted sockets read into one 64 KiB buffer that they all share (Node's
// `onread` option, adoptWithReadBuffer, src/base/socket-reads.ts) instead of allocating a
// fresh buffer for every read and emitting it as 'data': at 1 GB/s of produce traffic those
// allocations cost the broker about a third of a core. The front-end receives the chunks through
// `context.readInto` and must not keep views of them (its framer copies complete frames out); it
// may offer the rest of a large frame it is assembling, and the reads then land there in place.
// TLS sockets, and any socket that cannot be adopted, keep 'data' events (`readInto` absent).
//
// Request accounting: a front-end calls `context.beginRequest(operation)` when a request has been
// framed and the returned `done()` when its response has been written (or dropped). That counts
// quartet_listener_requests_total, observes quartet_request_duration_seconds and tells the listener
// which connections are idle.

import { readFileSync } from 'node:fs';
import { Socket, createServer as createTcpServer, type AddressInfo, type Server } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import type { Logger } from '../base/logger.js';
import { SocketReads } from '../base/socket-reads.js';
import { ConnectionSlots, peerAddressOf, type Admission, type Slot } from './connection-slots.js';
import type { Counter, Gauge, Histogram, MetricsRegistry } from '../core/metrics.js';
import {
  defaultAuthTimeoutMs,
  defaultConnectionsPerPeerMax,
  defaultHandshakeTimeoutMs,
  defaultUnauthenticatedConnectionsMax,
  type CloseReason,
  type ConnectionContext,
  type ConnectionFactory,
  type ConnectionHandle,
  type ListenAddress,
  type ListenerContext,
  type ListenerFactory,
  type ProtocolListener,
  type ReadInto,
  type RequestDone,
} from './transport.js';

export type { CloseReason, ConnectionContext, ConnectionFactory, ConnectionHandle, ReadInto, RequestDone } from './transport.js';

/** At most one "connection limit reached" log line per this interval; the rest are counted. */
export const REJECT_LOG_INTERVAL_MS = 1_000;

export interface TcpListenerOptions {
  /** Metric label and log tag: kafka, iggy, cursus. */
  name: string;
  addr: ListenAddress;
  maxConnections: number;
  tls?: { certFile: string; keyFile: string } | null;
  logger: Logger;
  metrics: MetricsRegistry;
  connectionFactory: ConnectionFactory;
  /**
   * The front-end's connections take their chunks through `context.readInto` (plain TCP sockets
   * are then adopted with the shared read buffer); otherwise they get 'data' events.
   */
  readInto?: boolean;
  /**
   * The front-end ends its connections itself after the peer's FIN (it answers what the peer sent
   * before it first); otherwise the socket ends as soon as the FIN arrives, with any reply still
   * being worked on lost.
   */
  allowHalfOpen?: boolean;
  /** See ListenerSettings (transport.ts); defaults from there. */
  handshakeTimeoutMs?: number;
  authTimeoutMs?: number;
  unauthenticatedConnectionsMax?: number;
  connectionsPerPeerMax?: number;
  idleTimeoutMs?: number;
}

/** The metrics every listener reports; usable on its own by a front-end with another transport. */
export class ListenerMetrics {
  private readonly connections: Gauge;
  private readonly connectionsTotal: Counter;
  private readonly rejectedTotal: Counter;
  private readonly peerRejectedTotal: Counter;
  private readonly unauthenticatedEvictedTotal: Counter;
  private readonly handshakeTimeoutsTotal: Counter;
  private readonly authTimeoutsTotal: Counter;
  private readonly idleClosedTotal: Counter;
  private readonly requestsTotal: Counter;
  private readonly requestErrorsTotal: Counter;
  private readonly duration: Histogram;
  private readonly labels: { listener: string };
  /** One label object per operation, so that counting a request allocates nothing new. */
  private readonly operationLabels = new Map<string, { listener: string; operation: string }>();

  constructor(
    registry: MetricsRegistry,
    readonly listener: string,
  ) {
    this.labels = { listener };
    this.connections = registry.gauge('quartet_listener_connections', 'Open client connections');
    this.connectionsTotal = registry.counter('quartet_listener_connections_total', 'Client connections accepted');
    this.rejectedTotal = registry.counter('quartet_listener_connections_rejected_total', 'Client connections closed at once because the listener was at its connection limit with every connection authenticated (or was stopping)');
    this.peerRejectedTotal = registry.counter('quartet_listener_peer_rejected_total', 'Client connections closed at once because their peer address had as many connections as the listener allows one peer');
    this.unauthenticatedEvictedTotal = registry.counter('quartet_listener_unauthenticated_evicted_total', 'Unauthenticated client connections closed to make room for a new connection (the listener was full, or had as many unauthenticated connections as it allows)');
    this.handshakeTimeoutsTotal = registry.counter('quartet_listener_handshake_timeouts_total', 'Client connections closed because their TLS handshake did not finish in time');
    this.authTimeoutsTotal = registry.counter('quartet_listener_auth_timeouts_total', 'Client connections closed because they did not authenticate in time');
    this.idleClosedTotal = registry.counter('quartet_listener_idle_closed_total', 'Client connections closed because they were idle for the listener\'s idle timeout');
    this.requestsTotal = registry.counter('quartet_listener_requests_total', 'Requests handled');
    this.requestErrorsTotal = registry.counter('quartet_listener_request_errors_total', 'Requests answered with an error');
    this.duration = registry.histogram('quartet_request_duration_seconds', 'Time from a framed request to its written response');
    this.connections.set(this.labels, 0);
  }

  connectionOpened(): void {
    this.connections.inc(this.labels);
    this.connectionsTotal.inc(this.labels);
  }
  connectionClosed(): void {
    this.connections.dec(this.labels);
  }
  connectionRejected(): void {
    this.rejectedTotal.inc(this.labels);
  }
  peerRejected(): void {
    this.peerRejectedTotal.inc(this.labels);
  }
  unauthenticatedEvicted(): void {
    this.unauthenticatedEvictedTotal.inc(this.labels);
  }
  handshakeTimedOut(): void {
    this.handshakeTimeoutsTotal.inc(this.labels);
  }
  authTimedOut(): void {
    this.authTimeoutsTotal.inc(this.labels);
  }
  idleClosed(): void {
    this.idleClosedTotal.inc(this.labels);
  }

  /** Starts timing a request; the result records it. */
  beginRequest(operation: string): RequestDone {
    const labels = this.labelsFor(operation);
    const start = process.hrtime.bigint();
    return (outcome = 'ok') => {
      this.requestsTotal.inc(labels);
      if (outcome === 'error') this.requestErrorsTotal.inc(labels);
      this.duration.observe(labels, Number(process.hrtime.bigint() - start) / 1e9);
    };
  }

  private labelsFor(operation: string): { listener: string; operation: string } {
    let labels = this.operationLabels.get(operation);
    if (!labels) {
      labels = { listener: this.listener, operation };
      this.operationLabels.set(operation, labels);
    }
    return labels;
  }
}

/** One accepted connection, as the listener tracks it. */
class Connection implements ConnectionContext {
  inFlight = 0;
  handle: ConnectionHandle | null = null;
  private idleWaiters: Array<() => void> = [];
  /** Set by the listener: called when the connection becomes authenticated, and when it stops being so. */
  onAuthenticated: (() => void) | null = null;
  onUnauthenticated: (() => void) | null = null;
  private isAuthenticated = false;
  /** Date.now() of the last request begun or finished (or of the connection's start). */
  lastActiveMs = Date.now();
  /** Told close('idle') already. */
  closingIdle = false;

  constructor(
    readonly id: number,
    readonly listener: string,
    readonly remote: string,
    readonly tls: boolean,
    readonly logger: Logger,
    readonly socket: Socket,
    private readonly metrics: ListenerMetrics,
    readonly readInto: ReadInto | undefined,
  ) {}

  beginRequest(operation: string): RequestDone {
    const record = this.metrics.beginRequest(operation);
    this.inFlight++;
    this.lastActiveMs = Date.now();
    let finished = false;
    return (outcome) => {
      if (finished) throw new Error(`request ${operation} on connection ${this.id} finished twice`);
      finished = true;
      record(outcome);
      this.inFlight--;
      this.lastActiveMs = Date.now();
      if (this.inFlight === 0) this.wakeIdle();
    };
  }

  authenticated(): void {
    if (this.isAuthenticated) return;
    this.isAuthenticated = true;
    this.onAuthenticated?.();
  }

  unauthenticated(): void {
    if (!this.isAuthenticated) return;
    this.isAuthenticated = false;
    this.onUnauthenticated?.();
  }

  whenIdle(): Promise<void> {
    const custom = this.handle?.whenIdle?.();
    const counted = this.inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    return custom ? Promise.all([custom, counted]).then(() => undefined) : counted;
  }

  wakeIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }
}

export class TcpListener implements ProtocolListener {
  readonly name: string;
  private readonly server: Server;
  private readonly metrics: ListenerMetrics;
  private readonly logger: Logger;
  /** The slot of every admitted raw socket, including TLS sockets still in their handshake. */
  private readonly sockets = new Map<Socket, Slot<Socket>>();
  private readonly slots: ConnectionSlots<Socket>;
  private readonly connections = new Map<Socket, Connection>();
  private readonly authTimeoutMs: number;
  private readonly idleTimeoutMs: number;
  private idleSweep: NodeJS.Timeout | null = null;
  private nextId = 1;
  private bound: ListenAddress | null = null;
  private stopping: Promise<void> | null = null;
  private lastRejectLogMs = 0;
  private rejectsNotLogged = 0;

  constructor(private readonly options: TcpListenerOptions) {
    this.name = options.name;
    this.logger = options.logger;
    this.metrics = new ListenerMetrics(options.metrics, options.name);
    this.authTimeoutMs = options.authTimeoutMs ?? defaultAuthTimeoutMs;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 0;
    this.slots = new ConnectionSlots({
      connectionsMax: options.maxConnections,
      unauthenticatedMax: options.unauthenticatedConnectionsMax ?? defaultUnauthenticatedConnectionsMax,
      perPeerMax: options.connectionsPerPeerMax ?? defaultConnectionsPerPeerMax,
    });
    if (options.tls) {
      this.server = this.createTls(options.tls);
      this.server.on('connection', (socket: Socket) => {
        const slot = this.admit(socket);
        if (slot !== null) this.track(socket, slot);
      });
    } else {
      // Paused until the front-end has attached: no read happens before the buffer is in place.
      this.server = createTcpServer({ pauseOnConnect: true, allowHalfOpen: options.allowHalfOpen === true });
      this.server.on('connection', (accepted: Socket) => {
        const slot = this.admit(accepted);
        if (slot === null) return;
        const adopted = this.options.readInto === true ? adoptWithReadBuffer(accepted, this.options.allowHalfOpen === true) : null;
        const socket = adopted?.socket ?? accepted;
        this.track(socket, slot);
        this.onReady(socket, socket, adopted?.readInto);
      });
    }
  }

  /** The bound address, once started. */
  address(): ListenAddress | null {
    return this.bound;
  }

  /** Open connections (TLS sockets count once their handshake is done). */
  get connectionCount(): number {
    return this.connections.size;
  }

  start(): Promise<ListenAddress> {
    const { host, port } = this.options.addr;
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(new Error(`cannot listen for ${this.name} on ${host}:${port}: ${err.message}`, { cause: err }));
      this.server.once('error', onError);
      this.server.listen({ host, port }, () => {
        this.server.off('error', onError);
        this.server.on('error', (err) => this.logger.error('listener error', { error: err }));
        const info = this.server.address() as AddressInfo;
        this.bound = { host: info.address, port: info.port };
        this.startIdleSweep();
        resolve(this.bound);
      });
    });
  }

  stop(drainTimeoutMs: number): Promise<void> {
    if (this.idleSweep !== null) clearInterval(this.idleSweep);
    this.idleSweep = null;
    this.stopping ??= this.drainAndClose(drainTimeoutMs);
    return this.stopping;
  }

  private createTls(tls: { certFile: string; keyFile: string }): Server {
    // Half-open only once the handshake is done: a peer that sends its FIN before (a TCP health
    // check) is closed at once rather than holding a connection slot until the handshake times out.
    const server = createTlsServer({ cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile), handshakeTimeout: this.options.handshakeTimeoutMs ?? defaultHandshakeTimeoutMs });
    server.on('secureConnection', (socket: TLSSocket) => {
      if (this.options.allowHalfOpen === true) socket.allowHalfOpen = true;
      // The accepted TCP socket under the TLS one (Node keeps it as _parent); tracking is by it.
      const raw = (socket as TLSSocket & { _parent?: Socket })._parent ?? socket;
      this.onReady(raw, socket, undefined);
    });
    // A failed or timed-out handshake (handshakeTimeout): with this listener set, the socket is ours to destroy.
    server.on('tlsClientError', (err, socket) => {
      if ((err as NodeJS.ErrnoException).code === 'ERR_TLS_HANDSHAKE_TIMEOUT') this.metrics.handshakeTimedOut();
      this.logger.debug('tls handshake failed', { error: err });
      socket.destroy();
    });
    return server;
  }

  /**
   * Admits an accepted socket under the connection limits (connection-slots.ts), closing the
   * oldest unauthenticated connection when it must make room; null: refused and destroyed.
   */
  private admit(socket: Socket): Slot<Socket> | null {
    // The peer's address is read before destroy(), which clears it.
    const peer = peerAddressOf(socket.remoteAddress);
    const admission: Admission<Socket> = this.stopping ? { refused: 'full' } : this.slots.admit(peer, socket);
    if ('refused' in admission) {
      if (!this.stopping) this.logRejected(socket, admission.refused === 'peer' ? 'connections per peer limit reached; connection closed' : 'connection limit reached; connection closed');
      socket.destroy();
      if (admission.refused === 'peer') this.metrics.peerRejected();
      else this.metrics.connectionRejected();
      return null;
    }
    const evicted = admission.evicted;
    if (evicted !== null) {
      this.logRejected(evicted.holder, 'connection limit reached; the oldest unauthenticated connection closed to make room');
      this.metrics.unauthenticatedEvicted();
      evicted.holder.destroy();
    }
    return admission.admitted;
  }

  /** Tracks the admitted socket (an adopted one replaces the accepted one) until it closes. */
  private track(socket: Socket, slot: Slot<Socket>): void {
    slot.holder = socket;
    this.sockets.set(socket, slot);
    socket.on('error', (err) => this.logger.debug('connection error', { error: err, remote: remoteOf(socket) }));
    socket.once('close', () => {
      this.sockets.delete(socket);
      this.slots.release(slot);
    });
  }

  private logRejected(socket: Socket, what: string): void {
    const now = Date.now();
    if (now - this.lastRejectLogMs < REJECT_LOG_INTERVAL_MS) {
      this.rejectsNotLogged++;
      return;
    }
    const { connectionsMax, unauthenticatedMax, perPeerMax } = this.slots.limits;
    this.logger.warn(what, {
      remote: remoteOf(socket),
      maxConnections: connectionsMax,
      unauthenticatedConnectionsMax: unauthenticatedMax,
      connectionsPerPeerMax: perPeerMax,
      alsoClosedSinceLastLine: this.rejectsNotLogged,
    });
    this.lastRejectLogMs = now;
    this.rejectsNotLogged = 0;
  }

  /** A connection is usable (TCP accepted, or TLS handshake done): hand it to the front-end. */
  private onReady(raw: Socket, socket: Socket, readInto: ReadInto | undefined): void {
    const slot = this.sockets.get(raw);
    if (slot === undefined || raw.destroyed) return;
    const id = this.nextId++;
    const remote = remoteOf(raw);
    const logger = this.logger.child({ conn: id, remote });
    const conn = new Connection(id, this.name, remote, socket !== raw, logger, socket, this.metrics, readInto);
    this.connections.set(raw, conn);
    this.metrics.connectionOpened();
    let deadline: NodeJS.Timeout | null = null;
    const arm = (): void => {
      if (this.authTimeoutMs > 0) deadline = setTimeout(() => this.authTimedOut(raw, slot, conn), this.authTimeoutMs).unref();
    };
    const disarm = (): void => {
      if (deadline !== null) clearTimeout(deadline);
      deadline = null;
    };
    arm();
    conn.onAuthenticated = () => {
      disarm();
      if (!raw.destroyed) this.slots.authenticated(slot);
    };
    conn.onUnauthenticated = () => {
      if (raw.destroyed || !slot.authenticated) return;
      this.slots.unauthenticated(slot);
      arm();
    };
    raw.once('close', () => {
      disarm();
      this.connections.delete(raw);
      this.metrics.connectionClosed();
      conn.wakeIdle();
    });
    socket.setNoDelay(true);
    try {
      conn.handle = this.options.connectionFactory(socket, conn);
    } catch (err) {
      logger.error('connection handler failed to start; connection closed', { error: err });
      raw.destroy();
      return;
    }
    // Plain TCP sockets start paused (pauseOnConnect): reading starts once the front-end is attached.
    if (socket === raw) socket.resume();
  }

  /** Checks for idle connections a few times per idle timeout (at least every 30 s). */
  private startIdleSweep(): void {
    if (this.idleTimeoutMs <= 0) return;
    const every = Math.max(50, Math.min(Math.floor(this.idleTimeoutMs / 4), 30_000));
    this.idleSweep = setInterval(() => this.closeIdle(Date.now()), every).unref();
  }

  /** Tells every connection idle since `now - idleTimeoutMs` to close, and ends it once idle. */
  private closeIdle(now: number): void {
    for (const [raw, conn] of this.connections) {
      if (conn.closingIdle || conn.inFlight > 0 || now - conn.lastActiveMs < this.idleTimeoutMs || raw.destroyed) continue;
      conn.closingIdle = true;
      conn.logger.debug('connection closed: idle', { idleTimeoutMs: this.idleTimeoutMs });
      this.metrics.idleClosed();
      void this.windDown(conn, 'idle');
    }
  }

  /** A connection that did not authenticate in time goes: nothing it sent was accepted as anyone's. */
  private authTimedOut(raw: Socket, slot: Slot<Socket>, conn: Connection): void {
    if (raw.destroyed || slot.authenticated) return;
    conn.logger.debug('connection closed: not authenticated in time', { authTimeoutMs: this.authTimeoutMs });
    this.metrics.authTimedOut();
    raw.destroy();
  }

  private async drainAndClose(drainTimeoutMs: number): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const raw of this.sockets.keys()) if (!this.connections.has(raw)) raw.destroy(); // mid-handshake
    const drains = [...this.connections.values()].map((conn) => this.drainOne(conn));
    const deadline = timer(drainTimeoutMs);
    const timedOut = await Promise.race([Promise.all(drains).then(() => false), deadline.promise.then(() => true)]);
    deadline.cancel();
    if (timedOut && this.sockets.size > 0) {
      this.logger.warn('drain timeout; closing connections with requests in flight', { connections: this.sockets.size, drainTimeoutMs });
    }
    for (const raw of this.sockets.keys()) raw.destroy();
    await closed;
  }

  private drainOne(conn: Connection): Promise<void> {
    return this.windDown(conn, 'shutdown');
  }

  /** Tells the connection to close, ends its socket once no request is in flight; resolves when it is gone. */
  private async windDown(conn: Connection, reason: CloseReason): Promise<void> {
    const socket = conn.socket;
    if (socket.destroyed) return;
    const gone = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    try {
      conn.handle?.close(reason);
    } catch (err) {
      conn.logger.error('connection close handler threw', { error: err });
    }
    await Promise.race([conn.whenIdle(), gone]);
    if (!socket.destroyed) {
      socket.once('finish', () => socket.destroy());
      socket.end();
    }
    await gone;
  }
}

interface AdoptedSocket {
  socket: Socket;
  readInto: ReadInto;
}


/**
 * Moves an accepted, not yet reading socket's handle into a new Socket created with Node's
 * `onread` option (documented for client sockets; the server cannot pass it), so that every read
 * lands in one buffer of this connection. Null when the socket cannot be adopted (no handle, or a
 * runtime without user read buffers): the caller keeps the original socket and its 'data' events.
 * The original socket is destroyed without its handle, which only releases its bookkeeping: the
 * net.Server no longer counts the connection (getConnections() leaves it out and server.close()
 * does not wait for it); the listener tracks and closes adopted sockets itself (`sockets`).
 */
function adoptWithReadBuffer(accepted: Socket, allowHalfOpen: boolean): AdoptedSocket | null {
  const holder = accepted as unknown as { _handle?: { useUserBuffer?: unknown } | null };
  const handle = holder._handle;
  if (handle === null || handle === undefined || typeof handle.useUserBuffer !== 'function') return null;
  const reads = new SocketReads();
  holder._handle = null;
  const socket = new Socket({
    handle,
    readable: true,
    writable: true,
    pauseOnCreate: true,
    allowHalfOpen,
    onread: reads.onread,
  } as ConstructorParameters<typeof Socket>[0]);
  accepted.destroy();
  return { socket, readInto: (onChunk, direct) => reads.attach(onChunk, direct) };
}

function remoteOf(socket: Socket): string {
  const host = socket.remoteAddress ?? 'unknown';
  return host.includes(':') ? `[${host}]:${socket.remotePort}` : `${host}:${socket.remotePort}`;
}

function timer(ms: number): { promise: Promise<void>; cancel(): void } {
  let handle: NodeJS.Timeout | undefined;
  const promise = new Promise<void>((resolve) => {
    handle = setTimeout(resolve, ms);
  });
  return { promise, cancel: () => clearTimeout(handle) };
}

/**
 * Builds a ListenerFactory for a TCP front-end from its per-connection part. The front-end's
 * whole registration is then:
 *   export const kafkaListenerFactory = tcpProtocolListener((ctx) => (socket, conn) => new KafkaConnection(socket, conn, ctx.broker));
 */
export function tcpProtocolListener(makeConnectionFactory: (context: ListenerContext) => ConnectionFactory, options: { readInto?: boolean; allowHalfOpen?: boolean } = {}): ListenerFactory {
  return (context) => {
    const s = context.settings;
    return new TcpListener({
      name: context.name,
      addr: s.addr,
      maxConnections: s.maxConnections,
      tls: s.tlsCertFile && s.tlsKeyFile ? { certFile: s.tlsCertFile, keyFile: s.tlsKeyFile } : null,
      logger: context.logger,
      metrics: context.metrics,
      connectionFactory: makeConnectionFactory(context),
      readInto: options.readInto === true,
      allowHalfOpen: options.allowHalfOpen === true,
      ...(s.handshakeTimeoutMs !== undefined ? { handshakeTimeoutMs: s.handshakeTimeoutMs } : {}),
      ...(s.authTimeoutMs !== undefined ? { authTimeoutMs: s.authTimeoutMs } : {}),
      ...(s.unauthenticatedConnectionsMax !== undefined ? { unauthenticatedConnectionsMax: s.unauthenticatedConnectionsMax } : {}),
      ...(s.connectionsPerPeerMax !== undefined ? { connectionsPerPeerMax: s.connectionsPerPeerMax } : {}),
      ...(s.idleTimeoutMs !== undefined ? { idleTimeoutMs: s.idleTimeoutMs } : {}),
    });
  };
}
