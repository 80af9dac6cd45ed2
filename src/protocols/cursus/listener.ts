// The Cursus Wire v2 listener: a TCP (or TLS) listener (../tcp-listener.ts) whose connections are
// CursusConnections (or, with cursus.v1Compat, v1 connections: cursus-port.ts) sharing one CursusFrontend. The frontend loads its tables before the socket
// binds and lets go of them after the connections drained. Sockets read into the listener's
// shared buffer (readInto) and stay half-open after a FIN, so that the requests sent before it are
// answered.

import { tcpProtocolListener } from '../tcp-listener.js';
import type { ListenAddress, ListenerContext, ProtocolListener } from '../transport.js';
import { cursusConnectionFactory } from './cursus-port.js';
import { CursusFrontend, type CursusSettings } from './frontend.js';

export const cursusSocketOptions = { readInto: true, allowHalfOpen: true } as const;

/** The Cursus listener; `settings`: over the defaults (the server passes its `cursus` section). */
export function createCursusListener(context: ListenerContext, settings?: Partial<CursusSettings>): ProtocolListener & { frontend: CursusFrontend } {
  const frontend = new CursusFrontend({
    broker: context.broker,
    logger: context.logger,
    advertisedAddr: context.settings.advertisedAddr ?? null,
    ...(settings ? { settings } : {}),
  });
  const tcp = tcpProtocolListener(() => cursusConnectionFactory(frontend), cursusSocketOptions)(context);
  const listener: ProtocolListener = {
    name: tcp.name,
    async start(): Promise<ListenAddress> {
      await frontend.start();
      const address = await tcp.start();
      frontend.setBoundAddress(address);
      return address;
    },
    async stop(drainTimeoutMs: number): Promise<void> {
      await tcp.stop(drainTimeoutMs);
      await frontend.close();
    },
  };
  return Object.assign(listener, { frontend });
}
