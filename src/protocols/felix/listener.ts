// The Felix listener: a QUIC server on UDP (quic.ts) whose connections are FelixConnections
// sharing one FelixFrontend. It keeps the limits every listener keeps (connection-slots.ts: at
// most maxConnections, unauthenticatedConnectionsMax not yet authenticated, connectionsPerPeerMax
// from one address; the oldest unauthenticated connection makes room), the authentication
// deadline (close code 1), the idle timeout (QUIC's own), and the listener metrics (the shared
// ListenerMetrics, label listener="felix"). Stopping closes every connection with code 0. Without a
// configured certificate the one made at start is written to <dataDir>/felix-self-signed-cert.pem.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConnectionSlots, peerAddressOf, type Slot } from '../connection-slots.js';
import { ListenerMetrics } from '../tcp-listener.js';
import { defaultAuthTimeoutMs, defaultConnectionsPerPeerMax, defaultUnauthenticatedConnectionsMax, type ListenAddress, type ListenerContext, type ProtocolListener } from '../transport.js';
import { CloseCode } from './codec/index.js';
import { FelixConnection } from './connection.js';
import { FelixFrontend } from './frontend.js';
import { startFelixQuicServer, type FelixQuicConnection, type FelixQuicServer } from './quic.js';
import type { FelixSettings } from './settings.js';

/** Where, in the data directory, the certificate made at start is written (PEM). */
export const selfSignedCertificateFile = 'felix-self-signed-cert.pem';

/** QUIC's idle timeout when the listener sets none (docs/protocols/felix-wire-v1.md §9). */
export const felixIdleTimeoutMsDefault = 30_000;

export interface FelixListener extends ProtocolListener {
  readonly frontend: FelixFrontend;
  /** The certificate in use (PEM), once started: clients of a self-signed one trust it. */
  readonly certificate: string | null;
}

/** The Felix listener; `settings`: over the defaults (the server passes its `felix` section). */
export function createFelixListener(context: ListenerContext, settings?: Partial<FelixSettings>): FelixListener {
  const frontend = new FelixFrontend({ broker: context.broker, logger: context.logger, ...(settings ? { settings } : {}) });
  const s = context.settings;
  const metrics = new ListenerMetrics(context.metrics, context.name);
  const slots = new ConnectionSlots<FelixConnection | null>({
    connectionsMax: s.maxConnections,
    unauthenticatedMax: s.unauthenticatedConnectionsMax ?? defaultUnauthenticatedConnectionsMax,
    perPeerMax: s.connectionsPerPeerMax ?? defaultConnectionsPerPeerMax,
  });
  const open = new Set<FelixConnection>();
  let server: FelixQuicServer | null = null;
  let stopping = false;

  const accept = (quic: FelixQuicConnection): void => {
    const peer = peerAddressOf(quic.connection.remoteHost);
    const admission = stopping ? ({ refused: 'full' } as const) : slots.admit(peer, null);
    if ('refused' in admission) {
      if (admission.refused === 'peer') metrics.peerRejected();
      else metrics.connectionRejected();
      context.logger.warn('felix connection refused', { peer, reason: admission.refused });
      void quic.close(CloseCode.shutdown, admission.refused === 'peer' ? 'too many connections from this address' : 'connection limit reached').catch(() => {});
      return;
    }
    if (admission.evicted !== null) {
      metrics.unauthenticatedEvicted();
      void admission.evicted.holder?.close(CloseCode.authTimeout, 'evicted: not authenticated');
    }
    const slot: Slot<FelixConnection | null> = admission.admitted;
    const connection = new FelixConnection(frontend, quic, {
      logger: context.logger.child({ peer: quic.remoteAddress }),
      authTimeoutMs: s.authTimeoutMs ?? defaultAuthTimeoutMs,
      onAuthenticated: () => slots.authenticated(slot),
      onAuthTimeout: () => metrics.authTimedOut(),
      beginRequest: (operation) => metrics.beginRequest(operation),
    });
    slot.holder = connection;
    open.add(connection);
    metrics.connectionOpened();
    quic.once('close', () => {
      open.delete(connection);
      slots.release(slot);
      metrics.connectionClosed();
    });
  };

  const listener: FelixListener = {
    name: context.name,
    frontend,
    get certificate() {
      return server?.certificate ?? null;
    },
    async start(): Promise<ListenAddress> {
      const tls = s.tlsCertFile !== null && s.tlsKeyFile !== null ? { cert: readFileSync(s.tlsCertFile, 'utf8'), key: readFileSync(s.tlsKeyFile, 'utf8') } : undefined;
      server = await startFelixQuicServer({
        host: s.addr.host,
        port: s.addr.port,
        ...(tls !== undefined ? { tls } : {}),
        limits: { idleTimeoutMs: s.idleTimeoutMs !== undefined && s.idleTimeoutMs > 0 ? s.idleTimeoutMs : felixIdleTimeoutMsDefault, streamsMax: frontend.settings.streamsPerConnectionMax },
        logger: context.logger,
        onConnection: accept,
      });
      if (tls === undefined) {
        // Clients must trust the certificate made at start: it is written where they can find it.
        const path = join(context.broker.dataDir, selfSignedCertificateFile);
        try {
          writeFileSync(path, server.certificate);
          context.logger.info('felix: the self-signed certificate clients must trust', { path });
        } catch (error) {
          context.logger.warn('felix: could not write the self-signed certificate', { path, error: String(error) });
        }
      }
      return { host: server.host, port: server.port };
    },
    async stop(): Promise<void> {
      stopping = true;
      await Promise.allSettled([...open].map((c) => c.close(CloseCode.shutdown, 'broker shutting down')));
      await frontend.close();
      try {
        await server?.close();
      } catch (error) {
        context.logger.debug('felix server close failed', { error: String(error) });
      }
    },
  };
  return listener;
}
